"""Readers in other accounts (needs root, as CI runs it: it makes two
accounts). pgmirror runs as one account; a second one, in the group the
README's recipe gives the mirror, reads it with sqlite3 while pgmirror is
stopped (cron mode) and while it runs (service mode), in a directory it
may not write. SQLite gives -wal and -shm the creator's group: pgmirror
gives them the mirror file's group and mode, and keeps them when it stops.
A -wal and -shm that the reader made under its own account (a
group-writable directory, files removed) do not stop the next run: it
replaces them, or, while the reader has the mirror open, says so."""

import grp
import os
import pwd
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

WRITER, READER, GROUP = "pgm_rd_writer", "pgm_rd_reader", "pgm_rd_share"


def ensure_accounts():
    if os.geteuid() != 0:
        fail("test_readers makes two accounts and needs root (CI runs it as root)")
    try:
        grp.getgrnam(GROUP)
    except KeyError:
        subprocess.run(["groupadd", GROUP], check=True)
    for user in (WRITER, READER):
        try:
            pwd.getpwnam(user)
        except KeyError:
            # each with a primary group of its own, as Debian makes them
            subprocess.run(["useradd", "--user-group", "--no-create-home",
                            "--shell", "/usr/sbin/nologin", user], check=True)
        subprocess.run(["usermod", "-a", "-G", GROUP, user], check=True)


def as_user(user, cmd):
    return ["setpriv", "--reuid", user, "--regid", user, "--init-groups", "--"] + cmd


def read(path, what, expect_ok=True):
    p = subprocess.run(as_user(READER, ["sqlite3", path, "SELECT count(*) FROM t"]),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    out, err = p.stdout.decode().strip(), p.stderr.decode().strip()
    harness.log("reader, %s: exit %d, %s %s" % (what, p.returncode, out, err))
    if expect_ok and p.returncode != 0:
        fail("the reader could not read the mirror %s: %s\n%s" % (what, err, listing(path)))
    return int(out) if p.returncode == 0 and out else None


def listing(path):
    d = os.path.dirname(path)
    return subprocess.run(["ls", "-ln", d], stdout=subprocess.PIPE).stdout.decode()


def once(ctx, path, slot, expect=0):
    """pgmirror --once as the writer; not ctx.once, which opens the mirror
    read-write as root afterwards: as the last connection to close, that
    removes -wal and -shm, as any account that may write the mirror does."""
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"))
    harness.log("--once: exit %d: %s" % (rc, err.strip()))
    if rc != expect:
        fail("pgmirror --once exited %d, expected %d\n%s" % (rc, expect, err))
    return err


def test(ctx):
    ensure_accounts()
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1);"
            "CREATE PUBLICATION pub FOR TABLE t")
    ctx.create_marker("pub")
    # the writer runs pgmirror; the directory is its own, 0755
    wrapper = os.path.join(ctx.tmpdir, "as_writer.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(as_user(WRITER, [ctx.binary])))
    os.chmod(wrapper, 0o755)
    ctx.binary = wrapper
    os.chmod(ctx.tmpdir, 0o755)
    d = os.path.join(ctx.tmpdir, "mirrors")
    os.mkdir(d)
    wuid = pwd.getpwnam(WRITER).pw_uid
    os.chown(d, wuid, grp.getgrnam(GROUP).gr_gid)
    os.chmod(d, 0o755)
    path, slot = os.path.join(d, "shop.db"), ctx.slot()

    once(ctx, path, slot)
    # the README's recipe, with pgmirror stopped
    # (the mirror's own files: a glob of the path would also take the
    # directories the replay mode puts beside it, MIRROR.feed)
    files = " ".join(path + s for s in ("", "-wal", "-shm") if os.path.exists(path + s))
    subprocess.run("chgrp %s %s && chmod 0640 %s" % (GROUP, files, files),
                   shell=True, check=True)
    check(read(path, "after the recipe, pgmirror stopped") == 1, "wrong count")

    # service mode: SQLite makes no new files, but a -wal made anew (here:
    # removed while stopped) gets the file's group and mode from pgmirror
    for s in ("-wal", "-shm"):
        os.unlink(path + s)
    p = ctx.start_follow(path, slot, "pub")
    # the harness reads the mirror as root: had it opened the file before
    # pgmirror, root's SQLite would have made -wal and -shm (root's, 0644),
    # which the writer may not write, and the service would exit 1
    deadline = time.time() + 30 * harness.SLOW
    while not all(os.path.exists(path + s) for s in ("-wal", "-shm")):
        if p.poll() is not None:
            fail("the service exited %s before it opened the mirror:\n%s"
                 % (p.poll(), p.stderr()))
        check(time.time() < deadline, "the service made no -wal and -shm in 30 s")
        time.sleep(0.05)
    ctx.sql("INSERT INTO t VALUES (2)")
    ctx.catch_up(path, proc=p)
    check(read(path, "while pgmirror runs") == 2, "the reader does not see row 2")
    for s in ("-wal", "-shm"):
        st = os.stat(path + s)
        check(grp.getgrgid(st.st_gid).gr_name == GROUP and st.st_mode & 0o777 == 0o640,
              "%s%s while pgmirror runs: group %d, mode %o\n%s"
              % (path, s, st.st_gid, st.st_mode & 0o777, listing(path)))
    check(ctx.stop(p) == 0, "the service did not stop with 0:\n" + p.stderr())
    check(read(path, "after the service stopped") == 2, "row 2 missing")

    # cron mode: one --once after another, the reader in between
    ctx.sql("INSERT INTO t VALUES (3)")
    once(ctx, path, slot)
    check(read(path, "after a --once") == 3, "row 3 missing")

    # root's (or the owner's) sqlite3, read-write and the last to close the
    # mirror, removes -wal and -shm: the reader cannot open it then ...
    subprocess.run(["sqlite3", path, "SELECT count(*) FROM t"], check=True,
                   stdout=subprocess.DEVNULL)
    check(not os.path.exists(path + "-shm"), "root's sqlite3 kept -shm: SQLite changed?")
    check(read(path, "after root's sqlite3", expect_ok=False) is None,
          "the reader read the mirror without -wal and -shm: SQLite changed?")
    # ... until pgmirror opens it again, even read-only: --status as the
    # writer (whose own group is not the mirror's) makes them for readers
    rc, _, err = ctx.run(["--status", path])
    check(rc == 0, "--status as the writer: exit %d %s" % (rc, err))
    check(read(path, "after the writer's --status") == 3, "row 3 missing")

    # a reader that may write the directory makes -wal and -shm its own
    os.chmod(d, 0o775)
    for s in ("-wal", "-shm"):
        os.unlink(path + s)
    read(path, "making its own -wal and -shm", expect_ok=False)
    owner = pwd.getpwuid(os.stat(path + "-wal").st_uid).pw_name
    check(owner == READER, "the reader's -wal belongs to %s" % owner)
    # ... and keeps the mirror open: pgmirror says what to do
    holder = subprocess.Popen(
        as_user(READER, ["/usr/bin/python3", "-c",
                         "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                         "c.execute('select count(*) from t').fetchall(); "
                         "print('open', flush=True); sys.stdin.read()", path]),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    check(holder.stdout.readline().strip() == b"open", "the holding reader did not start")
    ctx.sql("INSERT INTO t VALUES (4)")
    err = once(ctx, path, slot, expect=1)
    holder.stdin.close()
    holder.wait(30)
    check(READER in err and "close it" in err,
          "pgmirror did not say which reader to close: %s" % err)
    # closed: the next run replaces them and goes on
    err = once(ctx, path, slot)
    check("removed" in err, "no word of the reader's files: %s" % err)
    check(read(path, "after pgmirror replaced its files") == 4, "row 4 missing")
    for s in ("-wal", "-shm"):
        st = os.stat(path + s)
        check(st.st_uid == wuid, "%s%s still belongs to uid %d" % (path, s, st.st_uid))


harness.main(test)

"""Messages that say what to do (as a new user would meet them):
- a mirror in a directory pgmirror may not write (an existing one, whose
  -wal SQLite cannot make there, and a new one) names the directory and the
  permission needed, not SQLite's "attempt to write a readonly database"
  (runs as the account nobody: needs root, as CI runs it);
- --status and --check with connection options (-d, -h, -p, -U, -w, -S,
  -P), which they would ignore, are usage errors (exit 2);
- --verify and --resync while a service holds the mirror exit 3 saying
  that they need the file to themselves, which process holds it and the
  unit to stop;
- --drop-slot's hints are commands that run as written: with this run's
  -d and mirror file, quoted for the shell (the hint is run here), also
  where a schema change makes the mirror start over."""

import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def as_nobody(ctx, args):
    if os.geteuid() != 0:
        fail("test_messages runs pgmirror as nobody and needs root (CI runs it as root)")
    cmd = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", "--",
           ctx.binary] + [str(a) for a in args]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       cwd="/")
    return p.returncode, p.stderr.decode(errors="replace")


def unwritable_directory(ctx, path, slot):
    os.chmod(ctx.tmpdir, 0o711)
    d = os.path.join(ctx.tmpdir, "ro")
    os.mkdir(d, 0o755)
    mine = os.path.join(d, "mine.db")
    ctx.once(mine, ctx.slot("ro"), "pub")
    for f in os.listdir(d):
        os.chown(os.path.join(d, f), 65534, 65534)
    rc, err = as_nobody(ctx, ctx.mirror_args(mine, ctx.slot("ro"), "pub", "--once"))
    check(rc == 1 and 'directory "%s"' % d in err and "write" in err
          and "readonly database" not in err,
          "an existing mirror in a directory it may not write: exit %d:\n%s" % (rc, err))
    rc, err = as_nobody(ctx, ctx.mirror_args(os.path.join(d, "new.db"), ctx.slot("ro2"),
                                             "pub", "--once"))
    check(rc == 1 and 'directory "%s"' % d in err and "write" in err,
          "a new mirror in a directory it may not write: exit %d:\n%s" % (rc, err))
    check(ctx.slot_info(ctx.slot("ro2")) is None, "a slot was made for the mirror it could "
          "not make")


def status_options(ctx, path, slot):
    for job in ("--status", "--check"):
        for opt in (["-d", ctx.dsn], ["-h", "localhost"], ["-p", "5432"], ["-U", "x"],
                    ["-w"], ["-S", slot], ["-P", "pub"]):
            rc, out, err = ctx.run([job] + opt + [path])
            check(rc == 2 and job in err and opt[0] in err,
                  "%s %s: exit %d, expected a usage error:\n%s%s" % (job, opt[0], rc, out, err))


def in_use(ctx, path, slot):
    proc = ctx.start_follow(path, slot, "pub")
    ctx.catch_up(path, proc=proc)
    for job in (["--verify"], ["--resync", "--once"]):
        rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", *job))
        check(rc == 3 and "process %d" % proc.pid in err and "needs the mirror to itself"
              in err and "systemctl stop pgmirror@" in err,
              "%s while a service runs: exit %d:\n%s" % (job[0], rc, err))
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())


def run_drop_hint(ctx, err, before, after, mirror, slot):
    """The --drop-slot command in err (between before and after), run as
    written: whole (pgmirror, -d, the mirror last), it drops the slot."""
    hint = [ln for ln in err.splitlines() if before in ln]
    check(hint, "no hint %r in:\n%s" % (before, err))
    cmd = hint[0].split(before, 1)[1].split(after, 1)[0]
    words = shlex.split(cmd)
    check(words[0] == "pgmirror" and words[-1] == mirror and "-d" in words,
          "the hint is not a whole command: %r" % cmd)
    rc, out, err = ctx.run(words[1:])
    check(rc == 0 and ctx.slot_info(slot) is None,
          "the hint %r, run as written: exit %d:\n%s" % (cmd, rc, err))


def drop_slot_hint(ctx, path, slot):
    other = ctx.path("other mirror.db")
    rc, out, err = ctx.run(ctx.mirror_args(other, slot, "pub", "--once"))
    check(rc == 1, "a new mirror given a taken slot: exit %d:\n%s" % (rc, err))
    run_drop_hint(ctx, err, "drop it first with ", " (whatever", other, slot)


def start_over_hint(ctx, path, slot):
    """A schema change only a new mirror can take (a column added to a
    keyless table with a default computed row by row): the error gives the
    --drop-slot command to run, which runs as written."""
    ctx.sql("CREATE TABLE k (a int); ALTER TABLE k REPLICA IDENTITY FULL;"
            "INSERT INTO k VALUES (1), (2); CREATE PUBLICATION pub_k FOR TABLE k")
    kpath, kslot = ctx.path("keyless.db"), ctx.slot("k")
    ctx.once(kpath, kslot, "pub_k")
    ctx.sql("ALTER TABLE k ADD COLUMN c float8 DEFAULT random(); INSERT INTO k VALUES (3)")
    rc, out, err = ctx.run(ctx.mirror_args(kpath, kslot, "pub_k", "--once"))
    check(rc == 1, "an unmirrorable change: exit %d:\n%s" % (rc, err))
    run_drop_hint(ctx, err, "to start over: ", ", then remove", kpath, kslot)


def test(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1);"
            "CREATE PUBLICATION pub FOR TABLE t")
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    harness.run_parts(ctx, {"unwritable_directory": unwritable_directory,
                            "status_options": status_options, "in_use": in_use,
                            "drop_slot_hint": drop_slot_hint,
                            "start_over_hint": start_over_hint}, path, slot)


harness.main(test)

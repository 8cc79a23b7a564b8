"""No password is ever shown or kept: a password given in -d (keyword/value
form, URI form, a URI's query, percent-encoded, a malformed URI libpq quotes
whole in its error), in PGPASSWORD or in a service file, on every failure
path (malformed string, bad option value, refused connection, failed
authentication), appears neither on stderr (with -v) nor in the mirror file,
its -wal or -shm, nor in --status or --status --json; a connection string
quoted in a message shows it masked, and so does a word of -d that the
shell split off (a usage error quotes it). A password in -d draws one warning
(without the value) and is gone from /proc/PID/cmdline once pgmirror has
read it. A service that cannot reach its source keeps libpq's message as
last_error on one line. pgmirror refuses core dumps itself, whatever limit
it is started with: its RLIMIT_CORE is 0 and it is not dumpable, so the
other processes of its user cannot read its memory or its environment
(PGPASSWORD) either."""

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROLE = "pgm_secrets_app"
RIGHT = "RightPw-7f3a"
WARNING = "a password in -d"


def leaks(ctx, path, secrets, err):
    """Where any of secrets shows: stderr, the mirror's files, --status."""
    found = []
    rc, status, _ = ctx.run(["--status", path])
    check(rc == 0, "--status exited %d" % rc)
    rc, js, _ = ctx.run(["--status", "--json", path])
    check(rc == 0, "--status --json exited %d" % rc)
    places = [("stderr", err.encode()), ("--status", status.encode()),
              ("--status --json", js.encode())]
    places += harness.mirror_files(path)
    for s in secrets:
        found += ["%r in %s" % (s, where) for where, data in places if s.encode() in data]
    return found, status


def test(ctx):
    host = "127.0.0.1"
    port = os.environ.get("PGPORT") or "5432"
    db = ctx.dbname
    ctx.create_tables("CREATE TABLE t (id int PRIMARY KEY, v text);"
                      "INSERT INTO t VALUES (1, 'one');"
                      "CREATE PUBLICATION pub FOR TABLE t")
    ctx.create_marker("pub")
    if not ctx.sql("SELECT 1 FROM pg_roles WHERE rolname = %s", ROLE):
        ctx.sql("CREATE ROLE %s LOGIN REPLICATION" % ROLE)
    ctx.sql("ALTER ROLE %s PASSWORD '%s'" % (ROLE, RIGHT))
    ctx.sql("GRANT SELECT ON t, pgm_marker TO %s" % ROLE)
    path, slot = ctx.path(), ctx.slot()
    # a mirror whose runs may fail and keep their error
    ctx.once(path, slot, "pub")

    service = ctx.path("pg_service.conf")
    with open(service, "w") as f:
        f.write("[shop]\nhost=%s\nport=%s\ndbname=%s\nuser=%s\npassword=TheSecretJ\n"
                % (host, port, db, ROLE))
    nopass = {"PGPASSWORD": None, "PGPASSFILE": os.devnull}
    tcp = "host=%s port=%s dbname=%s user=%s" % (host, port, db, ROLE)
    uri = "postgresql://%s:%%s@%s:%s/%s" % (ROLE, host, port, db)
    # (what, -d, env, secrets that must not show, text that must show)
    cases = [
        ("a malformed URI", "postgresql://%s:TheSecretA@[%s:%s/%s" % (ROLE, host, port, db),
         nopass, ["TheSecretA"], "postgresql://%s:********@[" % ROLE),
        ("a bad option value", tcp + " password=TheSecretB sslmode=bogus", nopass,
         ["TheSecretB"], "sslmode"),
        ("a bad port, quoted password", tcp + " password='The SecretC' port=abc", nopass,
         ["The SecretC", "SecretC"], "abc"),
        ("a bad option value in a URI", uri % "TheSecretD" + "?sslmode=bogus", nopass,
         ["TheSecretD"], "sslmode"),
        ("a refused connection", "postgresql://%s:TheSecretE@%s:1/%s" % (ROLE, host, db),
         nopass, ["TheSecretE"], "could not connect"),
        ("failed authentication, URI", uri % "TheSecretF", nopass, ["TheSecretF"],
         "password authentication failed"),
        ("failed authentication, keywords", tcp + " password=TheSecretG", nopass,
         ["TheSecretG"], "password authentication failed"),
        ("a password in the URI's query",
         "postgresql://%s@%s:%s/%s?password=TheSecretH&sslmode=bogus" % (ROLE, host, port, db),
         nopass, ["TheSecretH"], "sslmode"),
        ("PGPASSWORD", tcp, {"PGPASSWORD": "TheSecretI", "PGPASSFILE": os.devnull},
         ["TheSecretI"], "password authentication failed"),
        ("a service file", "service=shop",
         {"PGPASSWORD": None, "PGPASSFILE": os.devnull, "PGSERVICEFILE": service},
         ["TheSecretJ"], "password authentication failed"),
        ("a malformed keyword string", tcp + " password=TheSecretK junk", nopass,
         ["TheSecretK"], "junk"),
        ("a percent-encoded password",
         "postgresql://%s:The%%53ecretL@[%s:%s/%s" % (ROLE, host, port, db), nopass,
         ["TheSecretL", "The%53ecretL"], "********@["),
    ]
    soft = harness.Soft()
    for what, dsn, env, secrets, shown in cases:
        rc, out, err = ctx.run(["-v", "-d", dsn, "-S", slot, "--once", path], env=env)
        soft.check(rc == 1, "%s: exit %d, expected 1; stderr:\n%s" % (what, rc, err))
        found, status = leaks(ctx, path, secrets, err + out)
        soft.check(not found, "%s: the password shows: %s" % (what, ", ".join(found)))
        soft.check(shown in err, "%s: stderr does not say %r:\n%s" % (what, shown, err))
        soft.check("last_error: " in status and shown.split("*")[0] in status,
                   "%s: --status does not show the run's error:\n%s" % (what, status))
        harness.log("%s: %s" % (what, err.strip().splitlines()[-1] if err.strip() else ""))
        pw_in_d = "password" in dsn or ":The" in dsn
        soft.check(err.count(WARNING) == (1 if pw_in_d else 0),
                   "%s: %d warnings about a password in -d, expected %d:\n%s"
                   % (what, err.count(WARNING), 1 if pw_in_d else 0, err))

    # -d split by the shell (not quoted): the word left over holds the
    # password, and the usage error quotes it
    rc, _, err = ctx.run(["-d", tcp, "password=TheSecretS", "-S", slot, path], env=nopass)
    soft.check(rc == 2 and "too many arguments" in err and "password=********" in err,
               "a -d split by the shell: exit %d, expected 2 with the leftover word "
               "masked:\n%s" % (rc, err))
    soft.check("TheSecretS" not in err, "a -d split by the shell: the password shows:\n%s"
               % err)

    # a running service: the password is gone from its command line
    ctx.sql("INSERT INTO t VALUES (2, 'two')")
    proc = ctx.start(["--dbname=" + uri % RIGHT, "-S", slot, path], env=nopass)
    ctx.catch_up(path, proc=proc)
    with open("/proc/%d/cmdline" % proc.pid, "rb") as f:
        cmdline = f.read()
    soft.check(RIGHT.encode() not in cmdline,
               "the password is readable in /proc/PID/cmdline: %r" % cmdline)
    soft.check(b"--dbname=postgresql://" + ROLE.encode() + b":*" in cmdline,
               "the rest of -d is gone from the command line: %r" % cmdline)
    rc = ctx.stop(proc)
    soft.check(rc == 0, "the service exited %d: %s" % (rc, proc.stderr()))
    found, _ = leaks(ctx, path, [RIGHT], proc.stderr())
    soft.check(not found, "a working password shows: %s" % ", ".join(found))
    soft.check(proc.stderr().count(WARNING) == 1,
               "a password in -d is not warned about once:\n%s" % proc.stderr())
    soft.check(ctx.mirror_query(path, "SELECT count(*) FROM t")[0][0] == 2,
               "the service with a password in -d did not bring the row")
    retry_error_one_line(ctx, path, slot, soft)
    no_core_dump(ctx, soft)
    soft.done()


def retry_error_one_line(ctx, path, slot, soft):
    """A service that cannot reach its source keeps libpq's message as
    last_error on one line (libpq's runs over two, the second indented
    with a tab), its password masked."""
    dsn = "postgresql://%s:TheSecretR@127.0.0.1:1/%s" % (ROLE, ctx.dbname)
    # an earlier run's error, as a failed run (or a service stopped before
    # it noted that it was in sync) leaves it: the retry's replaces it
    con = ctx.mirror_connect(path)
    con.execute("UPDATE pgmirror_state SET last_error = 'an earlier error', "
                "last_error_time = '2026-01-01 00:00:00'")
    con.commit()
    con.close()
    proc = ctx.start(["-d", dsn, "-S", slot, path], env={"PGPASSWORD": None})
    deadline = time.time() + 30 * harness.SLOW
    err = None
    # until the retry's own error is there
    while not (err and "Connection refused" in err) and time.time() < deadline and \
            proc.poll() is None:
        try:
            err = ctx.mirror_query(path, "SELECT last_error FROM pgmirror_state")[0][0]
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    ctx.stop(proc)
    soft.check(err is not None and "Connection refused" in err,
               "the service's retry left no last_error: %r\n%s" % (err, proc.stderr()))
    soft.check(err is None or not any(ord(c) < 32 for c in err),
               "last_error holds control characters: %r" % err)
    found, _ = leaks(ctx, path, ["TheSecretR"], proc.stderr())
    soft.check(not found, "the retried password shows: %s" % ", ".join(found))


def no_core_dump(ctx, soft):
    """A service started with core dumps allowed (an unlimited RLIMIT_CORE,
    as a shell or cron may give) and PGPASSWORD, run as a user of its own
    (root can read any process): once it waits for its source, its
    RLIMIT_CORE is 0 in /proc/PID/limits, it is not dumpable (the kernel
    then gives its /proc/PID files to root, proc(5)), and another process
    of its user cannot read /proc/PID/environ."""
    uid = 65534 if os.geteuid() == 0 else os.geteuid()
    gid = 65534 if os.geteuid() == 0 else os.getegid()

    def as_user():
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)

    def allow_cores():
        if os.geteuid() == 0:
            resource.setrlimit(resource.RLIMIT_CORE,
                               (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        else:
            hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
            resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        as_user()

    home = tempfile.mkdtemp(prefix="pgm_secrets_core.")
    os.chown(home, uid, gid)
    env = dict(os.environ, PGPASSWORD="TheSecretCore", PGPASSFILE=os.devnull)
    errpath = ctx.path("core.err")
    with open(errpath, "wb") as fe:
        proc = subprocess.Popen(
            [ctx.binary, "-d", "host=127.0.0.1 port=1 dbname=x user=%s" % ROLE,
             "-S", ctx.slot("core"), "-P", "pub", os.path.join(home, "m.db")],
            stdout=subprocess.DEVNULL, stderr=fe, cwd=home, env=env,
            preexec_fn=allow_cores)
    try:
        deadline = time.time() + 30 * harness.SLOW
        err = ""
        while "trying again" not in err:
            check(proc.poll() is None, "the service exited %s:\n%s" % (proc.poll(), err))
            check(time.time() < deadline, "no 'trying again' within 30 s:\n%s" % err)
            time.sleep(0.05)
            with open(errpath) as f:
                err = f.read()
        with open("/proc/%d/limits" % proc.pid) as f:
            core = [ln.split()[4:6] for ln in f if ln.startswith("Max core file size")]
        soft.check(core == [["0", "0"]],
                   "a service started with core dumps allowed keeps them: %r" % core)
        owner = os.stat("/proc/%d/status" % proc.pid).st_uid
        soft.check(owner == 0 and uid != 0,
                   "pgmirror (uid %d) is dumpable: its /proc/PID files belong to uid %d"
                   % (uid, owner))
        read = subprocess.run(
            [sys.executable, "-c", "import sys; open(sys.argv[1], 'rb').read()",
             "/proc/%d/environ" % proc.pid],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=as_user)
        soft.check(read.returncode != 0 and b"Permission denied" in read.stderr,
                   "another process of pgmirror's user reads its environment "
                   "(PGPASSWORD): exit %d %s" % (read.returncode, read.stderr.decode()))
    finally:
        proc.terminate()
        proc.wait(30 * harness.SLOW)
        shutil.rmtree(home, ignore_errors=True)
    soft.check("TheSecretCore" not in err, "PGPASSWORD shows on stderr:\n%s" % err)


harness.main(test)

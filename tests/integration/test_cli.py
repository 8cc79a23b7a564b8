"""Command-line surface: usage errors exit 2 with a message on stderr
(unknown option, no MIRROR.db, a bad --endpos, no -P on the first run);
--help, -? and --version exit 0; an unreachable source with --once exits 1
with a message; nothing here creates a slot or leaves a mirror behind
for a usage error.

The command line of PostgreSQL's own tools: -h, -p and -U override what
-d and the environment say (the way psql and pg_recvlogical are called
from cron works: the issue's line used to print the help and do nothing);
-d takes a bare database name too; -W asks for the password on the
terminal (a pseudo-terminal here) without echoing it, -w never asks; -?
is the help, -V names the libpq and SQLite in use; a leftover argument,
an empty -h and conflicting options are usage errors (exit 2)."""

import os
import pty
import select
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


USER = "pgm_cli_user"
SECRET = "cli-Secret-42"


def expect(ctx, args, code, what, env=None):
    rc, out, err = ctx.run(args, timeout=30, env=env)
    if rc != code:
        fail("%s: pgmirror %s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s"
             % (what, " ".join(args), rc, code, out, err))
    if code != 0:
        check(err.strip(), "%s: exit %d but nothing on stderr" % (what, code))
    return out, err


def run_on_tty(ctx, args, env, answer, timeout=30):
    """Runs pgmirror with a pseudo-terminal as its controlling terminal
    (and stdin, stdout, stderr); answers the first "Password" prompt with
    answer. Returns (exit code, everything the terminal showed)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ctx.tmpdir)
        os.execve(ctx.binary, [ctx.binary] + args, env)
    seen, answered = b"", False
    deadline = time.time() + timeout * harness.SLOW
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"Password for user %s: " % USER.encode() in seen:
            os.write(fd, answer.encode() + b"\n")
            answered = True
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        fail("pgmirror %s did not finish on the terminal; it showed:\n%s"
             % (" ".join(args), seen.decode(errors="replace")))
    if not done:
        _, status = os.waitpid(pid, 0)
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    except OSError:
        pass
    os.close(fd)
    return os.waitstatus_to_exitcode(status), seen.decode(errors="replace")


def test(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY); "
            "CREATE PUBLICATION pub FOR TABLE t")
    path, slot = ctx.path(), ctx.slot()

    out, _ = expect(ctx, ["--help"], 0, "--help")
    check("MIRROR" in out.upper() or "usage" in out.lower(),
          "--help prints no usage on stdout: %r" % out[:200])
    out, _ = expect(ctx, ["-?"], 0, "-?")
    out, _ = expect(ctx, ["--version"], 0, "--version")
    check(out.strip(), "--version prints nothing on stdout")
    expect(ctx, ["-V"], 0, "-V")

    expect(ctx, ["--no-such-option", path], 2, "unknown long option")
    expect(ctx, ["-Z", path], 2, "unknown short option")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--once"], 2,
           "missing MIRROR.db")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--once", path,
                 ctx.path("second.db")], 2, "two mirror files")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--endpos",
                 "not-an-lsn", path], 2, "malformed --endpos")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--once",
                 "--status-interval", "abc", path], 2, "bad --status-interval")
    check(ctx.slot_info(slot) is None, "a usage error created the slot")

    # first run without -P: usage error, no slot created
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "--once", "--no-initial-copy",
                 path], 2, "first run without -P")
    check(ctx.slot_info(slot) is None, "the run without -P created the slot")

    # unreachable / nonexistent source database with --once: error 1
    bad = harness.make_dsn(dbname="pgm_no_such_database_xyz",
                           host=os.environ.get("PGHOST"),
                           port=os.environ.get("PGPORT"))
    expect(ctx, ["-d", bad, "-S", slot, "-P", "pub", "--once",
                 "--no-initial-copy", ctx.path("bad.db")], 1,
           "nonexistent source database")

    # and it still works afterwards with proper arguments
    ctx.once(path, slot, "pub", first=True)
    check(ctx.slot_info(slot) is not None, "first run did not create the slot")
    # a later run may omit -P: the mirror remembers it
    rc, out, err = ctx.run(["-d", ctx.dsn, "-S", slot, "--once", path])
    check(rc == 0, "later run without -P exited %d: %s" % (rc, err))

    pgcli(ctx)


def pgcli(ctx):
    """-h/-p/-U/-d/-w/-W/-?/-V against the server (the old binary: -? refused)."""
    ctx.sql("CREATE TABLE t2 (id int PRIMARY KEY); INSERT INTO t2 VALUES (1);"
            "CREATE PUBLICATION pub2 FOR TABLE t2")
    if not ctx.sql("SELECT 1 FROM pg_roles WHERE rolname = %s", USER):
        ctx.sql("CREATE ROLE %s LOGIN REPLICATION" % USER)
    ctx.sql("ALTER ROLE %s PASSWORD '%s'" % (USER, SECRET))
    ctx.sql("GRANT SELECT ON t2 TO %s" % USER)
    host, port = os.environ.get("PGHOST") or "localhost", os.environ.get("PGPORT") or "5432"
    # no password anywhere but where a case puts it
    nopass = {"PGPASSWORD": None, "PGPASSFILE": os.devnull, "PGUSER": None,
              "PGHOST": None, "PGPORT": None, "PGDATABASE": None}
    path, slot = ctx.path("pgcli.db"), ctx.slot("pgcli")

    # help, version, and the old meaning of -h
    out, _ = expect(ctx, ["-?"], 0, "-?")
    check("--host" in out and "--username" in out and "-W" in out,
          "-? prints no connection options: %r" % out[:300])
    expect(ctx, ["--help"], 0, "--help")
    out, _ = expect(ctx, ["-V"], 0, "-V")
    check("libpq " in out and "SQLite 3." in out,
          "-V does not name libpq and SQLite: %r" % out)
    expect(ctx, ["-h"], 2, "-h without a host")
    expect(ctx, ["-h", "", path], 2, "an empty -h")
    expect(ctx, ["-w", "-W", path], 2, "-w with -W")
    expect(ctx, ["-W", "--status", path], 2, "-W with --status")
    _, err = expect(ctx, ["-h", host, "-p", port, "-U", USER, "-P", "pub2",
                          "--once", path, "shop"], 2, "a leftover argument")
    check('"shop"' in err, "the leftover argument is not named: %s" % err)
    check(not os.path.exists(path) and ctx.slot_info(slot) is None,
          "a usage error made the mirror or the slot")

    # -h/-p/-U win over what -d says; -d a bare name
    wrong = harness.make_dsn(dbname=ctx.dbname, host="/nonexistent", port="1",
                             user="nobody")
    env = dict(nopass, PGPASSWORD=SECRET)
    expect(ctx, ["-d", wrong, "-h", host, "-p", port, "-U", USER, "-S", slot,
                 "-P", "pub2", "--once", path], 0, "-h/-p/-U over -d", env=env)
    check(ctx.mirror_query(path, "SELECT count(*) FROM t2")[0][0] == 1,
          "the mirror made through -h/-p/-U does not hold the row")
    ctx.sql("INSERT INTO t2 VALUES (2)")
    # the line, psql's way: the database from PGDATABASE
    expect(ctx, ["-h", host, "-p", port, "-U", USER, "-S", slot, "-P", "pub2",
                 "--once", path], 0, "psql-style options",
           env=dict(env, PGDATABASE=ctx.dbname))
    ctx.sql("INSERT INTO t2 VALUES (3)")
    expect(ctx, ["-d", ctx.dbname, "-h", host, "-p", port, "-U", USER, "-S",
                 slot, "--once", path], 0, "-d a bare name", env=env)
    check(ctx.mirror_query(path, "SELECT count(*) FROM t2")[0][0] == 3,
          "psql-style runs did not bring the rows")

    # -w: no prompt, a clear error
    ttyenv = {k: v for k, v in os.environ.items() if k not in nopass}
    ttyenv["PGPASSFILE"] = os.devnull
    base = ["-d", ctx.dbname, "-h", host, "-p", port, "-U", USER, "-S", slot,
            "--once", path]
    rc, shown = run_on_tty(ctx, ["-w"] + base, ttyenv, SECRET)
    check(rc == 1 and "Password" not in shown and "password" in shown,
          "-w without a password: exit %d, expected 1 with no prompt; the "
          "terminal showed:\n%s" % (rc, shown))
    # -W: asked on the terminal, not echoed
    ctx.sql("INSERT INTO t2 VALUES (4)")
    rc, shown = run_on_tty(ctx, ["-W"] + base, ttyenv, SECRET)
    check(rc == 0, "-W answered on the terminal: exit %d; it showed:\n%s"
          % (rc, shown))
    check(SECRET not in shown, "-W echoed the password:\n%s" % shown)
    check(ctx.mirror_query(path, "SELECT count(*) FROM t2")[0][0] == 4,
          "the -W run did not bring the row")
    rc, shown = run_on_tty(ctx, ["-W"] + base, ttyenv, "wrong")
    check(rc == 1 and "password authentication failed" in shown,
          "-W with a wrong password: exit %d; it showed:\n%s" % (rc, shown))



harness.main(test, replay=False)  # a terminal of its own (pty)

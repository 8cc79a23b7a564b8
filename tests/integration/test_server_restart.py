"""A real server restart under a running pgmirror (no --once): it says it
lost the connection, reconnects with backoff once the server is back, and
the changes made before, during and after the restart reach the mirror with
the same process; SIGTERM then exits 0. The test restarts the whole
cluster, so it runs alone (exclusive)."""

import os
import signal
import subprocess
import sys
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def restart_cluster():
    """pg_ctlcluster restart of the cluster on PGPORT (pg_virtualenv's), or
    `pg_ctl restart` when PGMIRROR_PGDATA names the cluster's data directory
    (scripts/other-majors.sh; PGMIRROR_PG_CTL names its pg_ctl), run as the
    directory's owner (postgres refuses to run as root)."""
    pgdata = os.environ.get("PGMIRROR_PGDATA")
    if pgdata:
        cmd = [os.environ.get("PGMIRROR_PG_CTL", "pg_ctl"), "-D", pgdata, "-w", "-t", "120",
               "-m", "fast", "-l", os.path.join(pgdata, "server.log"), "restart"]
        owner = os.stat(pgdata).st_uid
        if os.geteuid() == 0 and owner != 0:
            import pwd
            cmd = ["runuser", "-u", pwd.getpwuid(owner).pw_name, "--"] + cmd
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=180)
        return
    port = os.environ.get("PGPORT", "5432")
    out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == port:
            # stop, then start: "restart" skips the stop when its probe of
            # the server's socket fails (seen under load), then fails to start
            for action in ("stop", "start"):
                subprocess.run(["pg_ctlcluster", fields[0], fields[1], action], check=True,
                               capture_output=True, timeout=120)
            return
    fail("no cluster on port %s in pg_lsclusters:\n%s" % (port, out))


def reconnect(ctx):
    """The test's own connections died with the server."""
    deadline = time.time() + 60
    while True:
        try:
            ctx.admin = psycopg2.connect(dbname=os.environ.get("PGDATABASE", "postgres"),
                                         connect_timeout=10)
            ctx.admin.autocommit = True
            ctx.conn = ctx.connect()
            return
        except psycopg2.Error:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        CREATE TABLE nokey (a int, b text);
        ALTER TABLE nokey REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE t, nokey;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    proc = ctx.start_follow(path, slot, "pub", "-s", "1", tag="follow")
    ctx.sql("INSERT INTO t SELECT g, 'a' FROM generate_series(1, 500) g")
    ctx.sql("INSERT INTO nokey SELECT g % 7, 'x' FROM generate_series(1, 300) g")
    ctx.catch_up(path, proc=proc)

    # changes committed just before the restart, maybe not yet applied
    ctx.sql("UPDATE t SET v = 'before restart' WHERE id % 3 = 0")
    ctx.sql("DELETE FROM nokey WHERE a = 1")
    restart_cluster()
    reconnect(ctx)
    ctx.sql("INSERT INTO t SELECT g, 'after' FROM generate_series(501, 600) g")
    ctx.sql("INSERT INTO nokey VALUES (99, 'after')")

    ctx.catch_up(path, proc=proc, timeout=120)
    check(proc.poll() is None, "pgmirror exited after the restart:\n%s" % proc.stderr())
    check("connection to the source lost" in proc.stderr(),
          "pgmirror did not say it lost the connection:\n%s" % proc.stderr())
    ctx.assert_mirror_equals_source(path, "t", "nokey", "pgm_marker")

    rc = ctx.stop(proc, signal.SIGTERM)
    check(rc == 0, "SIGTERM after the restart: exit %s\n%s" % (rc, proc.stderr()))
    ctx.assert_mirror_equals_source(path, "t", "nokey", "pgm_marker")


harness.main(test, exclusive=True)

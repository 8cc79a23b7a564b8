"""A real server restart under a running pgmirror (no --once): it says it
lost the connection, reconnects with backoff once the server is back, and
the changes made before, during and after the restart reach the mirror with
the same process; SIGTERM then exits 0. The test restarts the whole
cluster, so it runs alone (exclusive)."""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


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
    ctx.restart_server(180)
    ctx.reconnect()
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

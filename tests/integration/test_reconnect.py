"""Running for a long time: without --once, a lost connection is retried
with backoff.  The walsender is terminated (pg_terminate_backend, the
server's side of a lost connection) and the database refuses new
connections for a while (ALTER DATABASE ... ALLOW_CONNECTIONS false, a
server that is down, without disturbing the tests running beside this
one); changes made meanwhile reach the mirror once connections are allowed
again, with the same pgmirror process, which still exits 0 on SIGTERM.
With --once, a lost connection is exit 1 with a message, and a later
--once run completes the mirror.

(A real server restart is test_server_restart.py, which runs alone.)"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def terminate_walsender(ctx, slot, timeout=30):
    """Waits for slot to be in use, terminates its walsender; the pid."""
    deadline = time.time() + timeout
    while True:
        info = ctx.slot_info(slot)
        if info is not None and info["active_pid"] is not None:
            ctx.admin.cursor().execute("SELECT pg_terminate_backend(%s)",
                                       (info["active_pid"],))
            return info["active_pid"]
        if time.time() > deadline:
            fail("slot %s did not become active within %ss" % (slot, timeout))
        time.sleep(0.01)


def wait_stderr(proc, text, timeout=30):
    deadline = time.time() + timeout
    while text not in proc.stderr():
        if proc.poll() is not None:
            fail("pgmirror exited %s while waiting for %r\nstderr:\n%s"
                 % (proc.poll(), text, proc.stderr()))
        if time.time() > deadline:
            fail("%r not on stderr within %ss:\n%s" % (text, timeout, proc.stderr()))
        time.sleep(0.05)


def allow_connections(ctx, allow):
    ctx.admin.cursor().execute("ALTER DATABASE %s ALLOW_CONNECTIONS %s"
                               % (harness.qident(ctx.dbname), "true" if allow else "false"))


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    proc = ctx.start_follow(path, slot, "pub", "-s", "1", tag="follow")
    ctx.sql("INSERT INTO t SELECT g, 'a' FROM generate_series(1, 100) g")
    ctx.catch_up(path, proc=proc)

    # 1. the walsender goes away; the next connection works at once
    pid1 = terminate_walsender(ctx, slot)
    ctx.sql("UPDATE t SET v = 'b' WHERE id <= 50")
    wait_stderr(proc, "connection to the source lost")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "t", "pgm_marker")
    check(ctx.slot_info(slot)["active_pid"] not in (None, pid1),
          "the slot is not streaming to a new walsender")

    # 2. lost, and the source refuses connections for a while
    try:
        allow_connections(ctx, False)
        terminate_walsender(ctx, slot)
        wait_stderr(proc, "the source is not available yet")
        ctx.sql("INSERT INTO t SELECT g, 'c' FROM generate_series(101, 200) g")
        ctx.sql("DELETE FROM t WHERE id % 10 = 0")
        check(proc.poll() is None, "pgmirror gave up: %s" % proc.stderr())
    finally:
        allow_connections(ctx, True)
    ctx.catch_up(path, proc=proc, timeout=90)
    ctx.assert_mirror_equals_source(path, "t", "pgm_marker")
    check(proc.poll() is None, "pgmirror exited: %s" % proc.stderr())
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM after reconnecting: exit %s\n%s" % (rc, proc.stderr()))
    ctx.wait_slot_inactive(slot)
    ctx.check_slot_not_ahead(path, slot)

    # 3. --once: a lost connection is an error (exit 1), and the next run
    # completes the mirror.  A large transaction keeps it streaming long
    # enough to be cut off.
    ctx.sql("INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1000, 400000) g")
    p = ctx.start(ctx.mirror_args(path, slot, "pub", "--once"), tag="once")
    terminate_walsender(ctx, slot)
    try:
        rc = p.popen.wait(60)
    except Exception:  # noqa: BLE001
        fail("--once did not exit after losing its connection")
    harness.log("--once, connection lost: exit %d: %s" % (rc, p.stderr().strip()))
    check(rc == 1, "--once with a lost connection exited %d, expected 1\n%s"
          % (rc, p.stderr()))
    check("connection to the source lost; the mirror keeps every transaction "
          "applied so far: run pgmirror again to continue" in p.stderr(),
          "--once lost connection: message %r" % p.stderr())
    ctx.wait_slot_inactive(slot)
    ctx.check_slot_not_ahead(path, slot)
    ctx.once(path, slot, "pub", timeout=120)
    ctx.assert_mirror_equals_source(path, "t")


harness.main(test)

"""Long apply steps keep answering the server (DESIGN.md invariant 10).

The test database sets wal_sender_timeout = 2s. A keyed table gets a
column added with a volatile default (refilled from the source), then a
column retyped USING an expression (rebuilt, then refilled), each while a
pgmirror runs and streams. From the moment the change commits the test
holds an ACCESS EXCLUSIVE lock on the source table, so pgmirror's refill
query waits for it: deterministically longer than the timeout. The
walsender must stay connected (pgmirror answers it while it waits), and
the mirror must then equal the source. Then SIGTERM during such a wait
must exit 0 at once, and the next run must finish the step. Last, a table
joins while t is locked: the catalog look-up that the join needs waits
(on PostgreSQL 18), and the stream's server is answered meanwhile."""

import os
import signal
import sys
import threading
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

ROWS = 100000
TIMEOUT_S = 2   # pgmirror answers every 0.5 s: room for a loaded machine
HOLD_S = 3 * TIMEOUT_S


def walsender_timeout_seen(ctx):
    """The setting reaches a replication connection to the database."""
    c = psycopg2.connect(dbname=ctx.dbname, replication="database", connect_timeout=10)
    try:
        c.autocommit = True
        cur = c.cursor()
        cur.execute("SHOW wal_sender_timeout")
        return cur.fetchone()[0]
    finally:
        c.close()


def pgmirror_waits_on_lock(ctx, table):
    return ctx.sql1(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.relation = %s::regclass AND NOT l.granted "
        "AND a.application_name = 'pgmirror'", table) > 0


def walsender_alive(ctx, slot):
    info = ctx.slot_info(slot)
    return info is not None and info["active"]


def wait_for(what, cond, proc, timeout=60):
    deadline = time.time() + timeout * harness.SLOW
    while not cond():
        if proc is not None and proc.poll() is not None:
            fail("pgmirror exited %s before %s\n%s" % (proc.poll(), what, proc.stderr()))
        if time.time() > deadline:
            fail("%s did not happen within %ss\n%s"
                 % (what, timeout, proc.stderr() if proc else ""))
        time.sleep(0.05)


def change_locked(ctx, path, slot, table, ddl, sigterm=False):
    """A running pgmirror (it streams from slot) meets `ddl` (statements
    run in one source transaction) while the test holds an ACCESS
    EXCLUSIVE lock on table from the moment that transaction commits: the
    lock is asked for while ddl's transaction still holds the table, so it
    is granted first when that commits, and pgmirror's refill then waits
    behind it. (Held from before pgmirror starts, it would also hold up
    the start's catalog look-ups, which on PostgreSQL 18 read the table.)
    Returns the Proc once its refill has waited on the lock for HOLD_S
    seconds (or lost its walsender), the lock released; with sigterm,
    after SIGTERM during that wait, the lock still held until the exit."""
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "-v"))
    wait_for("pgmirror streams", lambda: walsender_alive(ctx, slot), proc)
    writer = ctx.connect(autocommit=False)
    wcur = writer.cursor()
    for q in ddl:
        wcur.execute(q)
    locker = ctx.connect(autocommit=False)
    lcur = locker.cursor()
    lcur.execute("SELECT pg_backend_pid()")
    lpid = lcur.fetchone()[0]
    taken = threading.Event()
    errors = []

    def take():
        try:
            lcur.execute("LOCK TABLE %s IN ACCESS EXCLUSIVE MODE" % table)
            taken.set()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
            taken.set()
    th = threading.Thread(target=take, daemon=True)
    th.start()
    wait_for("the test's lock request queues", lambda: ctx.sql1(
        "SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", lpid) > 0, None)
    writer.commit()
    writer.close()
    th.join(30)
    check(taken.is_set() and not errors, "the test could not take its lock: %r" % errors)
    wait_for("pgmirror's refill waits on the lock of %s" % table,
             lambda: pgmirror_waits_on_lock(ctx, table), proc)
    started = time.time()
    harness.log("pgmirror waits on the lock of %s" % table)
    if sigterm:
        proc.popen.send_signal(signal.SIGTERM)
        try:
            rc = proc.popen.wait(10)
        except Exception:
            locker.rollback()
            fail("pgmirror did not exit within 10 s of SIGTERM during a refill\n%s"
                 % proc.stderr())
        locker.rollback()
        locker.close()
        check(rc == 0, "SIGTERM during a refill: exit %s, expected 0\n%s" % (rc, proc.stderr()))
        return proc
    # hold the lock for several timeouts, or until the walsender is gone
    while time.time() - started < HOLD_S and walsender_alive(ctx, slot):
        time.sleep(0.1)
    alive = walsender_alive(ctx, slot)
    harness.log("held the lock %.1f s; walsender %s" % (time.time() - started,
                                                       "alive" if alive else "gone"))
    locker.rollback()
    locker.close()
    check(alive, "the walsender dropped pgmirror while it refilled a column "
          "(wal_sender_timeout %ss)\n%s" % (TIMEOUT_S, proc.stderr()))
    ctx.catch_up(path, proc=proc)
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %s\n%s" % (rc, proc.stderr()))
    ctx.check_slot_not_ahead(path, slot)
    return proc


def test(ctx):
    ctx.admin.cursor().execute("ALTER DATABASE %s SET wal_sender_timeout = '%ds'"
                               % (harness.qident(ctx.dbname), TIMEOUT_S))
    seen = walsender_timeout_seen(ctx)
    check(seen == "%ds" % TIMEOUT_S, "wal_sender_timeout on a replication connection is "
          "%s, not %ds" % (seen, TIMEOUT_S))
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v int, pad text);
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    ctx.create_marker("pub")
    ctx.sql("INSERT INTO t SELECT g, g, repeat('p', 20) FROM generate_series(1, %d) g" % ROWS)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", timeout=180)
    ctx.assert_mirror_equals_source(path, "t")

    # an added column with a volatile default: every row is read again
    # (more than the socket buffers hold comes after the step)
    change_locked(ctx, path, slot, "t", [
        "ALTER TABLE t ADD COLUMN r float8 DEFAULT random()",
        "UPDATE t SET v = -v WHERE id <= 10",
        "UPDATE t SET pad = 'after' WHERE id % 2 = 0"])
    ctx.assert_mirror_equals_source(path, "t", "pgm_marker")

    # a retyped column: the table is rebuilt, then the column refilled
    change_locked(ctx, path, slot, "t", [
        "ALTER TABLE t ALTER COLUMN v TYPE bigint USING v * 3",
        "INSERT INTO t VALUES (0, 0, 'zero')",
        "UPDATE t SET pad = 'again' WHERE id % 2 = 1"])
    ctx.assert_mirror_equals_source(path, "t", "pgm_marker")

    # SIGTERM during a refill: exit 0 promptly; the next run repeats the step
    before = ctx.mirror_lsn(path)
    change_locked(ctx, path, slot, "t", [
        "ALTER TABLE t ADD COLUMN q float8 DEFAULT random()",
        "UPDATE t SET v = v + 1 WHERE id <= 10"], sigterm=True)
    check(ctx.mirror_lsn(path) >= before, "the mirror went backwards")
    ctx.check_slot_not_ahead(path, slot)
    ctx.wait_slot_inactive(slot)
    ctx.once(path, slot, "pub", timeout=120)
    ctx.assert_mirror_equals_source(path, "t", "pgm_marker")

    # A table that joins while a service runs: the stream meets a change of
    # a relation the mirror lacks and reads the publications' tables between
    # two groups. On PostgreSQL 18 that catalog query reads every published
    # table, so it waits while t is locked: the stream's server must be
    # answered meanwhile. (Before 18 the query does not wait.)
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "-v"))
    wait_for("pgmirror streams", lambda: walsender_alive(ctx, slot), proc)
    locker = ctx.connect(autocommit=False)
    locker.cursor().execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
    ctx.sql("CREATE TABLE j (id int PRIMARY KEY); ALTER PUBLICATION pub ADD TABLE j;"
            "INSERT INTO j SELECT generate_series(1, 10)")
    if ctx.server_version >= 180000:
        wait_for("the look-up of the published tables waits on the lock of t",
                 lambda: pgmirror_waits_on_lock(ctx, "t"), proc)
        started = time.time()
        while time.time() - started < HOLD_S and walsender_alive(ctx, slot):
            time.sleep(0.1)
        alive = walsender_alive(ctx, slot)
        harness.log("held the lock %.1f s during the join's look-up; walsender %s"
                    % (time.time() - started, "alive" if alive else "gone"))
        check(alive, "the walsender dropped pgmirror while a joining table's look-up "
              "waited (wal_sender_timeout %ss)\n%s" % (TIMEOUT_S, proc.stderr()))
    locker.rollback()
    locker.close()
    ctx.catch_up(path, proc=proc)
    check(ctx.stop(proc) == 0, "pgmirror exited non-zero\n%s" % proc.stderr())
    ctx.assert_mirror_equals_source(path, "t", "j", "pgm_marker")


harness.main(test)

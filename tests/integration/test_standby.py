"""A hot standby as the source, on PostgreSQL 16, 17 and 18 (clusters of
their own, from PGMIRROR_PG<MAJOR>_BINDIR; see clusters.py).

For each major (a transaction held open on the primary makes each slot
creation wait, whatever the primary's background writer logs meanwhile):
- a standby with hot_standby_feedback = off gets the warning; a first run
  whose slot creation waits says, after a second, what it waits for and the
  pg_log_standby_snapshot() hint, and SIGTERM then ends it with exit 0 and
  no slot left on the standby;
- with hot_standby_feedback = on (no warning), a first run with the
  initial copy waits the same way and completes once the primary logs a
  snapshot; --once runs then follow inserts, updates and deletes made on
  the primary; a table that joins the publication is synced through a
  temporary slot on the standby, and --verify finds the mirror equal;
  --status shows the mirror; a second mirror's slot is dropped
  with --drop-slot on the standby;
- a running pgmirror (service mode) on the standby follows the primary;
  the primary is stopped and the standby promoted (same system identifier,
  new timeline), and the same pgmirror goes on with changes made on the
  promoted server; a later --once also does. Every step: the mirror equals
  the source, and the slot is never ahead of it.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clusters  # noqa: E402
import harness  # noqa: E402
from harness import check, fail, parse_lsn  # noqa: E402

DB = "pgm_standby_src"
WAIT_NOTE = "waiting for the primary to log a running-transactions record"
HINT = "run SELECT pg_log_standby_snapshot() on the primary"
HSF_WARNING = "the source is a standby with hot_standby_feedback = off"


def source_rows(c):
    return sorted(c.sql("SELECT id, v FROM t", dbname=DB))


def mirror_rows(ctx, path):
    return sorted(tuple(r) for r in ctx.mirror_query(path, "SELECT id, v FROM t"))


def check_equal(ctx, c, path, what):
    src, mir = source_rows(c), mirror_rows(ctx, path)
    check(src == mir, "%s: mirror differs from the source:\nsource %r\nmirror %r"
          % (what, src, mir))


def check_not_ahead(ctx, c, path, slot):
    r = c.sql("SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
              "WHERE slot_name = %s AND NOT active", slot)
    if r and r[0][0]:
        check(parse_lsn(r[0][0]) <= ctx.mirror_lsn(path),
              "slot %s at %s is ahead of the mirror (%s)"
              % (slot, r[0][0], ctx.mirror_state(path)["confirmed_lsn"]))


def timeline(c):
    """The timeline a primary writes on (the first part of its WAL file names)."""
    return int(c.sql1("SELECT pg_walfile_name(pg_current_wal_lsn())")[:8], 16)


def wait_stderr(proc, text, timeout=60):
    deadline = time.time() + timeout
    while text not in proc.stderr():
        if proc.poll() is not None:
            fail("pgmirror exited %s before it said %r:\n%s" % (proc.poll(), text,
                                                                proc.stderr()))
        if time.time() > deadline:
            fail("pgmirror did not say %r within %ds:\n%s" % (text, timeout, proc.stderr()))
        time.sleep(0.05)


def wait_exit(proc, timeout=60):
    try:
        return proc.popen.wait(timeout * harness.SLOW)
    except Exception:  # noqa: BLE001
        fail("pgmirror did not exit within %ds:\n%s" % (timeout, proc.stderr()))


def finish_with_snapshots(pair, proc, what):
    """The primary logs snapshot records until proc (whose temporary or
    new slot on the standby waits for one) exits; its exit code."""
    deadline = time.time() + 60 * harness.SLOW
    while proc.poll() is None:
        if time.time() > deadline:
            fail("%s on the standby did not finish:\n%s" % (what, proc.stderr()))
        pair.log_snapshot()
        time.sleep(0.2)
    return wait_exit(proc)


def first_run_on_standby(ctx, pair, args, tag):
    """A first run against the standby: it waits for a snapshot record and
    says so; once the transaction it waits for ended, the primary logs
    snapshot records until the run completes."""
    hold = pair.hold_xid()
    # the standby past a record that shows the xid held: a slot made from
    # the replay position on then needs a later record, which shows it too
    # (without this, a record logged before the hold, such as the last
    # step's finish_with_snapshots(), not yet replayed, let the slot be made
    # at once)
    pair.wait_replay(target=pair.log_snapshot())
    proc = ctx.start(args, tag=tag)
    wait_stderr(proc, WAIT_NOTE)
    err = proc.stderr()
    check(HINT in err, "the wait message has no hint:\n%s" % err)
    check(proc.poll() is None, "pgmirror did not wait:\n%s" % err)
    hold.rollback()
    hold.close()
    rc = finish_with_snapshots(pair, proc, "the first run")
    check(rc == 0, "first run on the standby: exit %s\n%s" % (rc, proc.stderr()))
    return proc.stderr()


def join_and_verify(ctx, pair, dsn, path, major):
    """A table that joins the publication is synced through a temporary
    slot on the standby (which waits for a snapshot record too), and
    --verify, whose snapshot is one more such slot, finds the mirror equal."""
    p = pair.primary
    p.sql("CREATE TABLE j (id int PRIMARY KEY, v text);"
          "INSERT INTO j SELECT g, 'j' || g FROM generate_series(1, 30) g;"
          "ALTER PUBLICATION pub ADD TABLE j", dbname=DB)
    pair.wait_replay()
    proc = ctx.start(["-d", dsn, "--once", path], tag="join%d" % major)
    rc = finish_with_snapshots(pair, proc, "the run with a joining table")
    check(rc == 0, "--once with a joining table: exit %s\n%s" % (rc, proc.stderr()))
    src = sorted(p.sql("SELECT id, v FROM j", dbname=DB))
    mir = sorted(tuple(r) for r in ctx.mirror_query(path, "SELECT id, v FROM j"))
    check(src == mir, "the joined table differs:\nsource %r\nmirror %r" % (src, mir))
    p.sql("UPDATE j SET v = 'later' WHERE id < 5", dbname=DB)
    pair.wait_replay()
    proc = ctx.start(["-d", dsn, "--verify", path], tag="verify%d" % major)
    rc = finish_with_snapshots(pair, proc, "--verify")
    check(rc == 0 and proc.stdout() == "j: ok\nt: ok\n",
          "--verify on the standby: exit %s\nstdout:\n%s\nstderr:\n%s"
          % (rc, proc.stdout(), proc.stderr()))
    ctx.checked(path)


def one_major(ctx, major):
    harness.log("--- PostgreSQL %d ---" % major)
    pair = clusters.Pair(major, dbname=DB, standby_conf={"hot_standby_feedback": False})
    try:
        p, s = pair.primary, pair.standby
        p.sql("CREATE TABLE t (id int PRIMARY KEY, v text);"
              "INSERT INTO t SELECT g, 'r' || g FROM generate_series(1, 20) g;"
              "CREATE PUBLICATION pub FOR TABLE t", dbname=DB)
        pair.wait_replay()
        dsn = s.dsn(DB)
        path, slot = ctx.path("pg%d.db" % major), "standby_s"

        # hot_standby_feedback = off: the warning; SIGTERM while the slot waits
        hold = pair.hold_xid()
        proc = ctx.start(["-d", dsn, "-S", slot, "-P", "pub", "--once", path],
                         tag="stop%d" % major)
        wait_stderr(proc, WAIT_NOTE)
        err = proc.stderr()
        harness.log("waiting: %s" % err.strip())
        check(HSF_WARNING in err and "set hot_standby_feedback = on" in err,
              "no warning about hot_standby_feedback = off:\n%s" % err)
        check(HINT in err, "the wait message has no hint:\n%s" % err)
        t0 = time.time()
        rc = ctx.stop(proc, signal.SIGTERM, timeout=10)
        harness.log("SIGTERM while waiting: exit %s after %.1fs" % (rc, time.time() - t0))
        check(rc == 0, "SIGTERM while the slot waits: exit %s\n%s" % (rc, proc.stderr()))
        check(not s.sql("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", slot),
              "the stopped slot creation left a slot on the standby")
        hold.rollback()
        hold.close()

        s.sql("ALTER SYSTEM SET hot_standby_feedback = on")
        s.sql("SELECT pg_reload_conf()")
        s.wait(lambda: s.sql1("SHOW hot_standby_feedback") == "on", "the reload")

        # the first run, with its copy at the standby's snapshot
        err = first_run_on_standby(ctx, pair, ["-d", dsn, "-S", slot, "-P", "pub",
                                               "--once", path], "first%d" % major)
        check(HSF_WARNING not in err, "warning with hot_standby_feedback = on:\n%s" % err)
        check_equal(ctx, p, path, "after the first run")
        check_not_ahead(ctx, s, path, slot)
        st = ctx.mirror_state(path)
        check(st["system_identifier"] == str(p.sql1(
            "SELECT system_identifier FROM pg_control_system()")),
            "system identifier %r is not the primary's" % st["system_identifier"])

        # --once runs follow the primary through the standby
        p.sql("INSERT INTO t SELECT g, 'n' || g FROM generate_series(21, 40) g;"
              "UPDATE t SET v = 'u' WHERE id % 3 = 0; DELETE FROM t WHERE id % 7 = 0",
              dbname=DB)
        pair.wait_replay()
        rc, out, err = ctx.run(["-d", dsn, "--once", path])
        check(rc == 0, "--once on the standby: exit %d\n%s" % (rc, err))
        check_equal(ctx, p, path, "after --once")
        check_not_ahead(ctx, s, path, slot)

        join_and_verify(ctx, pair, dsn, path, major)

        rc, out, err = ctx.run(["--status", path])
        check(rc == 0 and slot in out, "--status: exit %d\n%s%s" % (rc, out, err))

        # --drop-slot on the standby (a second mirror's slot)
        path2, slot2 = ctx.path("pg%d_2.db" % major), "standby_s2"
        first_run_on_standby(ctx, pair, ["-d", dsn, "-S", slot2, "-P", "pub", "--once",
                                         "--no-initial-copy", path2], "second%d" % major)
        check(s.sql("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", slot2),
              "no slot %s on the standby" % slot2)
        rc, out, err = ctx.run(["-d", dsn, "--drop-slot", path2])
        check(rc == 0, "--drop-slot on the standby: exit %d\n%s" % (rc, err))
        check(not s.sql("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", slot2),
              "--drop-slot left slot %s on the standby" % slot2)

        # service mode, then the standby is promoted under it
        follow = ctx.start(["-d", dsn, "-s", "1", path], tag="follow%d" % major)
        p.sql("INSERT INTO t VALUES (100, 'follow')", dbname=DB)
        lsn = parse_lsn(p.sql1("SELECT pg_current_wal_lsn()::text"))
        ctx.wait_for_mirror(path, lsn, proc=follow)
        check_equal(ctx, p, path, "service mode")
        tli = timeline(p)
        p.stop()
        s.promote()
        check(timeline(s) > tli, "the promotion did not start a new timeline")
        harness.log("promoted: timeline %d -> %d" % (tli, timeline(s)))
        s.sql("INSERT INTO t VALUES (101, 'promoted'); UPDATE t SET v = 'p' WHERE id = 1",
              dbname=DB)
        lsn = parse_lsn(s.sql1("SELECT pg_current_wal_lsn()::text"))
        ctx.wait_for_mirror(path, lsn, timeout=120, proc=follow)
        check_equal(ctx, s, path, "after the promotion, service mode")
        rc = ctx.stop(follow)
        check(rc == 0, "service mode after the promotion: exit %s\n%s" % (rc, follow.stderr()))
        harness.log("service mode across the promotion:\n%s" % follow.stderr().strip())

        s.sql("DELETE FROM t WHERE id = 2; INSERT INTO t VALUES (102, 'once')", dbname=DB)
        rc, out, err = ctx.run(["-d", dsn, "--once", path])
        check(rc == 0, "--once on the promoted standby: exit %d\n%s" % (rc, err))
        check_equal(ctx, s, path, "after the promotion, --once")
        check_not_ahead(ctx, s, path, slot)
    finally:
        pair.close()


def test(ctx):
    for major in (16, 17, 18):
        one_major(ctx, major)


harness.main(test)

"""--failover, end to end, on PostgreSQL 17 and 18 (clusters of their own,
from PGMIRROR_PG<MAJOR>_BINDIR; see clusters.py), and its refusal on 16.

A primary with synchronized_standby_slots = the standby's physical slot; a
standby with sync_replication_slots = on, hot_standby_feedback = on,
primary_slot_name and a primary_conninfo with dbname. pgmirror runs with a
multi-host -d (both ports, target_session_attrs=read-write):
- the first run with --failover makes a failover slot on the primary (and a
  later run with --failover makes a slot made without it one); the
  standby's slot sync worker then keeps a synced copy of it, which follows
  the slot's confirmed position;
- more changes are committed on the primary (and replayed on the standby)
  but not mirrored; the primary is stopped and the standby promoted; more
  changes are made there;
- the next --once, with the same -d, goes on from the promoted standby's
  synced slot (no rebuild): the mirror then equals the source, a keyless
  table (REPLICA IDENTITY FULL) row for row, so that nothing is lost and
  nothing doubled.
--failover against a standby, and against a PostgreSQL 16 primary, exits 1
with a message and leaves no slot and no mirror file.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clusters  # noqa: E402
import harness  # noqa: E402
from harness import check, make_dsn, parse_lsn  # noqa: E402

DB = "pgm_failover_src"


def check_equal(ctx, c, path, what):
    for q in ("SELECT id, v FROM t", "SELECT n, w FROM ev"):
        src = sorted(c.sql(q, dbname=DB))
        mir = sorted(tuple(r) for r in ctx.mirror_query(path, q))
        check(src == mir, "%s: %s: mirror differs from the source:\nsource %r\nmirror %r"
              % (what, q, src, mir))
    ctx.checked(path)


def changes(c, lo, hi):
    c.sql("INSERT INTO t SELECT g, 'r' || g FROM generate_series(%d, %d) g;"
          "INSERT INTO ev SELECT g, 'e' || g FROM generate_series(%d, %d) g;"
          "UPDATE t SET v = v || 'u' WHERE id %% 5 = 0;"
          "DELETE FROM ev WHERE n %% 7 = 0" % (lo, hi, lo, hi), dbname=DB)


def one_major(ctx, major):
    harness.log("--- PostgreSQL %d ---" % major)
    pair = clusters.Pair(major, dbname=DB,
                         primary_conf={"synchronized_standby_slots": "phys"},
                         standby_conf={"sync_replication_slots": True,
                                       "hot_standby_feedback": True})
    try:
        p, s = pair.primary, pair.standby
        p.sql("CREATE TABLE t (id int PRIMARY KEY, v text);"
              "CREATE TABLE ev (n int, w text); ALTER TABLE ev REPLICA IDENTITY FULL;"
              "CREATE PUBLICATION pub FOR TABLE t, ev", dbname=DB)
        changes(p, 1, 30)
        dsn = make_dsn(host="127.0.0.1,127.0.0.1", port="%d,%d" % (p.port, s.port),
                       user="postgres", dbname=DB, target_session_attrs="read-write")
        path, slot = ctx.path("pg%d.db" % major), "fo"

        # --failover against the standby itself is refused
        bad = ctx.path("standby%d.db" % major)
        rc, out, err = ctx.run(["-d", s.dsn(DB), "-S", "fo_bad", "-P", "pub", "--failover",
                                "--once", bad])
        harness.log("--failover on a standby: exit %d: %s" % (rc, err.strip()))
        check(rc == 1 and "--failover makes the slot on the primary" in err,
              "--failover on a standby: exit %d\n%s" % (rc, err))
        check(not os.path.exists(bad), "--failover on a standby made a mirror file")

        rc, out, err = ctx.run(["-d", dsn, "-S", slot, "-P", "pub", "--failover", "--once",
                                path])
        check(rc == 0, "first run with --failover: exit %d\n%s" % (rc, err))
        check(p.sql1("SELECT failover FROM pg_replication_slots WHERE slot_name = %s", slot),
              "the slot on the primary is not a failover slot")
        check_equal(ctx, p, path, "first run")
        changes(p, 31, 60)
        rc, out, err = ctx.run(["-d", dsn, "--failover", "--once", path])
        check(rc == 0, "--once: exit %d\n%s" % (rc, err))
        check_equal(ctx, p, path, "--once")

        # a later run with --failover makes a plain slot a failover slot
        path2 = ctx.path("plain%d.db" % major)
        rc, out, err = ctx.run(["-d", dsn, "-S", "plain", "-P", "pub", "--once", path2])
        check(rc == 0, "first run without --failover: exit %d\n%s" % (rc, err))
        check(p.sql1("SELECT NOT failover FROM pg_replication_slots WHERE slot_name = "
                     "'plain'"), "without --failover the slot is a failover slot")
        rc, out, err = ctx.run(["-d", dsn, "--failover", "--once", path2])
        check(rc == 0 and 'replication slot "plain" is now a failover slot' in err,
              "a later run with --failover: exit %d\n%s" % (rc, err))
        check(p.sql1("SELECT failover FROM pg_replication_slots WHERE slot_name = 'plain'"),
              "a later run with --failover left the slot a plain one")
        # the standby's synced copy of the slot catches up with the mirror;
        # the slot's catalog xmin, which the copy must be able to hold, moves
        # on with each run that decodes a running-transactions record, as it
        # would with a device's cron runs
        def another_run():
            pair.log_snapshot()
            rc, out, err = ctx.run(["-d", dsn, "--once", path])
            check(rc == 0, "--once: exit %d\n%s" % (rc, err))

        mlsn = 0

        def synced():
            nonlocal mlsn
            mlsn = ctx.mirror_lsn(path)
            r = s.sql("SELECT synced, temporary, confirmed_flush_lsn::text "
                      "FROM pg_replication_slots WHERE slot_name = %s", slot)
            return (r and r[0][0] and not r[0][1] and r[0][2] is not None
                    and parse_lsn(r[0][2]) >= mlsn)
        s.wait(synced, "the sync of slot %s up to the mirror" % slot, timeout=120,
               every=another_run)

        # committed on the primary, replayed on the standby, not mirrored yet
        changes(p, 61, 90)
        pair.wait_replay()
        p.stop()
        s.promote()
        changes(s, 91, 120)

        rc, out, err = ctx.run(["-d", dsn, "--failover", "--once", path])
        harness.log("after the promotion: exit %d: %s" % (rc, err.strip()))
        check(rc == 0, "--once after the promotion: exit %d\n%s" % (rc, err))
        check("rebuild" not in err and "warning" not in err,
              "--once after the promotion did not go on from the synced slot:\n%s" % err)
        check_equal(ctx, s, path, "after the promotion")
        check(ctx.mirror_lsn(path) > mlsn, "the mirror did not move after the promotion")
        r = s.sql("SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                  "WHERE slot_name = %s AND NOT active", slot)
        check(r and parse_lsn(r[0][0]) <= ctx.mirror_lsn(path),
              "slot %s on the promoted standby is ahead of the mirror" % slot)
    finally:
        pair.close()


def refused_on_16(ctx):
    import tempfile
    top = tempfile.mkdtemp(prefix="pgm_pg16.")
    os.chmod(top, 0o755)
    c = clusters.Cluster(clusters.bindir(16), top, "primary")
    try:
        c.initdb()
        c.configure(port=c.port, unix_socket_directories=c.dir, listen_addresses="127.0.0.1",
                    wal_level="logical", fsync=False)
        c.start()
        c.sql("CREATE TABLE t (id int PRIMARY KEY); CREATE PUBLICATION pub FOR TABLE t")
        path = ctx.path("pg16.db")
        rc, out, err = ctx.run(["-d", c.dsn(), "-S", "fo16", "-P", "pub", "--failover",
                                "--once", path])
        harness.log("--failover on 16: exit %d: %s" % (rc, err.strip()))
        check(rc == 1 and "--failover needs PostgreSQL 17 or later, but the source is "
              "PostgreSQL 16" in err, "--failover on 16: exit %d\n%s" % (rc, err))
        check(not c.sql("SELECT 1 FROM pg_replication_slots"), "--failover on 16 made a slot")
        check(not os.path.exists(path), "--failover on 16 made a mirror file")
    finally:
        c.destroy()
        os.rmdir(top) if os.path.isdir(top) else None


def test(ctx):
    refused_on_16(ctx)
    for major in (17, 18):
        one_major(ctx, major)


harness.main(test)

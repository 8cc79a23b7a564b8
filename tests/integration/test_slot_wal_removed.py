"""A slot whose WAL is gone although the server still calls it usable:
START_REPLICATION then fails on every run with "requested WAL segment ...
has already been removed" (seen once in CI after many kill -9s of a
following pgmirror: the server let the slot's restart_lsn move back past
WAL a checkpoint had already removed). Such a slot can never stream again,
so it is treated like an invalidated one: pgmirror warns, creates it again
and rebuilds the mirror from a fresh copy in one SQLite transaction; a
reader keeps the old rows until it ends its read transaction, and the
mirror equals the source and follows changes again. A service meets it
twice in one run (the second time after the new slot has streamed) and
mends it both times. The test removes the segment file itself (the
server's own bug cannot be triggered at will), so it runs alone."""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def wal_file(admin, lsn):
    admin.execute("SELECT pg_walfile_name(%s)", (lsn,))
    return admin.fetchone()[0]


def remove_slot_wal(ctx, admin, slot, wal_dir, first, key):
    """Changes rows first..first+10 of r, moves the server three WAL
    segments on, and removes the segment of the slot's restart_lsn."""
    admin.execute("SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = %s",
                  (slot,))
    segment = wal_file(admin, admin.fetchone()[0])
    ctx.sql("UPDATE r SET v = 'lost %d' WHERE id BETWEEN %d AND %d" % (first, first, first + 10))
    for _ in range(3):
        admin.execute("SELECT pg_switch_wal()")
        ctx.sql("INSERT INTO r VALUES (%d, 'later')  ON CONFLICT (id) DO UPDATE "
                "SET v = r.v || '+'" % key)
    os.unlink(os.path.join(wal_dir, segment))


def test(ctx):
    ctx.sql("""
        CREATE TABLE r (id int PRIMARY KEY, v text);
        INSERT INTO r SELECT g, 'v' || g FROM generate_series(1, 1000) g;
        CREATE TABLE k (a int, b text);
        ALTER TABLE k REPLICA IDENTITY FULL;
        INSERT INTO k VALUES (1, 'x'), (1, 'x'), (2, NULL);
        CREATE PUBLICATION pub FOR TABLE r, k;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")

    # Changes the mirror has not seen yet, in WAL past the slot's segment.
    ctx.sql("""
        DELETE FROM r WHERE id > 900;
        UPDATE r SET v = 'changed' WHERE id < 10;
        DELETE FROM k WHERE ctid = (SELECT ctid FROM k WHERE a = 1 LIMIT 1);
    """)
    admin = ctx.admin.cursor()
    admin.execute("SELECT restart_lsn FROM pg_replication_slots WHERE slot_name = %s",
                  (slot,))
    restart = admin.fetchone()[0]
    segment = wal_file(admin, restart)
    for _ in range(3):
        admin.execute("SELECT pg_switch_wal()")
        ctx.sql("INSERT INTO r VALUES (5000, 'later') ON CONFLICT (id) DO UPDATE "
                "SET v = r.v || '+'")
    check(wal_file(admin, harness.format_lsn(ctx.source_lsn())) != segment,
          "the server's current WAL segment is still %s" % segment)
    admin.execute("SHOW data_directory")
    seg_path = os.path.join(admin.fetchone()[0], "pg_wal", segment)
    check(os.path.exists(seg_path), "no WAL segment file %s" % seg_path)
    os.unlink(seg_path)
    admin.execute("SELECT wal_status FROM pg_replication_slots WHERE slot_name = %s",
                  (slot,))
    status = admin.fetchone()[0]
    check(status != "lost", "the server already calls the slot lost")

    reader = ctx.mirror_connect(path, isolation_level=None)
    reader.execute("BEGIN")
    old = reader.execute("SELECT count(*), sum(id) FROM r").fetchall()
    check(old == [(1000, 500500)], "reader's first look: %r" % old)

    rc, out, err = ctx.once(path, slot, "pub", timeout=120)
    check("rebuilding" in err and "WAL" in err,
          "no warning that the slot's WAL is gone and the mirror is rebuilt:\n%s" % err)
    now = reader.execute("SELECT count(*), sum(id) FROM r").fetchall()
    check(now == old, "a reader in its read transaction saw the rebuild: %r, "
          "then %r" % (old, now))
    reader.execute("COMMIT")
    ctx.assert_mirror_equals_source(path, "r", "k")

    ctx.sql("DELETE FROM r WHERE id < 500; INSERT INTO k VALUES (3, 'y')")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "r", "k")

    # A service meets the same: it rebuilds instead of retrying for ever.
    remove_slot_wal(ctx, admin, slot, os.path.dirname(seg_path), 600, 5001)
    proc = ctx.start_follow(path, slot, "pub", tag="service")
    try:
        ctx.catch_up(path, proc=proc, timeout=120)
        ctx.assert_mirror_equals_source(path, "r", "k")
        check("rebuilding" in proc.stderr(), "the service did not rebuild:\n%s"
              % proc.stderr())

        # A second loss in the same service run, once the new slot has
        # streamed: mended the same way (not "cannot be read either"). The
        # service is held while its connection is cut and the WAL removed.
        ctx.sql("UPDATE r SET v = 'streamed' WHERE id = 800")
        ctx.catch_up(path, proc=proc)
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            admin.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                          "WHERE slot_name = %s", (slot,))
            ctx.wait_slot_inactive(slot)
            remove_slot_wal(ctx, admin, slot, os.path.dirname(seg_path), 700, 5002)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        ctx.catch_up(path, proc=proc, timeout=120)
        ctx.assert_mirror_equals_source(path, "r", "k")
        n = proc.stderr().count("rebuilding")
        check(n == 2, "the service rebuilt %d times, want 2:\n%s" % (n, proc.stderr()))
    finally:
        ctx.stop(proc)


harness.main(test, exclusive=True)

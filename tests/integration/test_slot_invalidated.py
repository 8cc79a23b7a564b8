"""A slot invalidated by max_slot_wal_keep_size (wal_status = 'lost') while
pgmirror was not running: the next run warns, drops it, creates it again and
rebuilds the mirror from a fresh copy; the mirror equals the source and
follows changes again. The same while a run with --endpos streams from the
slot: the server ends that stream as it invalidates the slot, and the run
rebuilds and goes on to its end position instead of failing (the stream's
error does not say why; the slot's state does). Changes a server-wide
setting, so runs alone."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def invalidate(ctx, admin, slot):
    """Makes the server invalidate slot: WAL past max_slot_wal_keep_size."""
    admin.execute("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'")
    admin.execute("SELECT pg_reload_conf()")
    try:
        status = None
        for i in range(20):
            ctx.sql("INSERT INTO r VALUES (%s, 'lost from the stream') ON CONFLICT (id) "
                    "DO UPDATE SET v = r.v || '+'", 2000 + i)
            ctx.sql("UPDATE r SET v = 'changed' WHERE id = %s", i + 1)
            ctx.sql("INSERT INTO filler SELECT repeat('f', 1000) "
                    "FROM generate_series(1, 2000)")
            admin.execute("SELECT pg_switch_wal()")
            admin.execute("CHECKPOINT")
            admin.execute("SELECT wal_status FROM pg_replication_slots "
                          "WHERE slot_name = %s", (slot,))
            status = admin.fetchone()[0]
            if status == "lost":
                break
        check(status == "lost", "could not invalidate the slot (wal_status %s)" % status)
    finally:
        admin.execute("ALTER SYSTEM RESET max_slot_wal_keep_size")
        admin.execute("SELECT pg_reload_conf()")


def test(ctx):
    ctx.sql("""
        CREATE TABLE r (id int PRIMARY KEY, v text);
        INSERT INTO r SELECT g, 'v' || g FROM generate_series(1, 1000) g;
        CREATE TABLE filler (x text);
        CREATE PUBLICATION pub FOR TABLE r;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")

    admin = ctx.admin.cursor()
    invalidate(ctx, admin, slot)

    rc, out, err = ctx.once(path, slot, "pub")
    check("was invalidated" in err and "rebuilding" in err,
          "no warning about the invalidated slot:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "r")
    ctx.sql("DELETE FROM r WHERE id < 500")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "r")

    # A run streaming from the slot when the server invalidates it.
    end = ctx.source_lsn() + 48 * 1024 * 1024
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "--endpos", harness.fmt(end)),
                     tag="endpos")
    deadline = time.time() + 30 * harness.SLOW
    while not ctx.slot_info(slot)["active"]:
        check(proc.poll() is None, "the --endpos run exited %s:\n%s"
              % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "the --endpos run does not stream from the slot")
        time.sleep(0.05)
    invalidate(ctx, admin, slot)
    while ctx.source_lsn() <= end:
        ctx.sql("INSERT INTO filler SELECT repeat('g', 1000) FROM generate_series(1, 2000)")
        admin.execute("SELECT pg_switch_wal()")
    rc = proc.popen.wait(120 * harness.SLOW)
    check(rc == 0 and "rebuilding" in proc.stderr(),
          "the --endpos run whose slot was invalidated exited %d:\n%s" % (rc, proc.stderr()))
    ctx.assert_mirror_equals_source(path, "r")


harness.main(test, exclusive=True)

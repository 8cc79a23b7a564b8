"""A slot invalidated by max_slot_wal_keep_size (wal_status = 'lost') while
pgmirror was not running: the next run warns, drops it, creates it again and
rebuilds the mirror from a fresh copy; the mirror equals the source and
follows changes again. The same while a run with --endpos streams from the
slot: the server ends that stream as it invalidates the slot, and the run
rebuilds and goes on to its end position instead of failing (the stream's
error does not say why; the slot's state does). The warning names the
setting to change, and so does last_rebuild_reason from PostgreSQL 17 on
(invalidation_reason); on 18, a slot left unused longer than
idle_replication_slot_timeout is said to be so. Changes server-wide
settings, so runs alone."""

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
    check("max_slot_wal_keep_size" in err, "the warning does not name the setting that "
          "invalidated the slot, max_slot_wal_keep_size:\n%s" % err)
    reason = ctx.mirror_state(path)["last_rebuild_reason"]
    if ctx.server_version >= 170000:
        check("max_slot_wal_keep_size" in reason,
              "last_rebuild_reason does not say why: %r" % reason)
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

    if ctx.server_version >= 180000:
        idle_timeout(ctx, admin, path, slot)


def idle_timeout(ctx, admin, path, slot):
    """PostgreSQL 18 invalidates a slot left unused for longer than
    idle_replication_slot_timeout (at a checkpoint): what a device run from
    cron meets when it runs less often than that. The warning and
    last_rebuild_reason say so, and what to change."""
    admin.execute("ALTER SYSTEM SET idle_replication_slot_timeout = 1")
    admin.execute("SELECT pg_reload_conf()")
    try:
        deadline = time.time() + 30 * harness.SLOW
        while True:
            admin.execute("CHECKPOINT")
            admin.execute("SELECT invalidation_reason FROM pg_replication_slots "
                          "WHERE slot_name = %s", (slot,))
            if admin.fetchone()[0] == "idle_timeout":
                break
            check(time.time() < deadline, "the slot was not invalidated as idle")
            time.sleep(0.2)
    finally:
        admin.execute("ALTER SYSTEM RESET idle_replication_slot_timeout")
        admin.execute("SELECT pg_reload_conf()")
    ctx.sql("UPDATE r SET v = 'after idle' WHERE id = 600")
    rc, out, err = ctx.once(path, slot, "pub")
    check("idle_replication_slot_timeout" in err and "rebuilding" in err,
          "the warning does not say the slot was invalidated as idle:\n%s" % err)
    reason = ctx.mirror_state(path)["last_rebuild_reason"]
    check("idle_replication_slot_timeout" in reason,
          "last_rebuild_reason does not say why: %r" % reason)
    ctx.assert_mirror_equals_source(path, "r")


harness.main(test, exclusive=True)

"""A table sync that takes long keeps the stream answered (DESIGN.md
invariant 10). The database sets wal_sender_timeout = 4s; a table joins a
running mirror while an older transaction is open on the source, so the
sync's temporary slot waits for it, deterministically longer than the
timeout. The main walsender must stay connected meanwhile, and the sync
must finish once the transaction ends. Then SIGTERM during such a wait
exits 0 at once, leaves the table out, and the next run syncs it."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

TIMEOUT_S = 4  # 2 s was missed once on a loaded machine (1 full run of 13)
HOLD_S = 3 * TIMEOUT_S


def walsender_pid(ctx, slot):
    info = ctx.slot_info(slot)
    return info["active_pid"] if info is not None and info["active"] else None


def join_waiting(ctx, proc, table):
    """Adds table to the publication with a row changed after, while an
    older transaction is open; returns that transaction's connection once
    the sync's slot creation waits for it."""
    holder = ctx.hold_xid()
    ctx.sql("ALTER PUBLICATION pub ADD TABLE %s" % table)
    ctx.sql("INSERT INTO %s VALUES (-1, 'after')" % table)
    deadline = time.time() + 60 * harness.SLOW
    while True:  # the sync's temporary slot, the only one of this database
        rows = ctx.sql("SELECT slot_name FROM pg_replication_slots "
                       "WHERE temporary AND database = current_database()")
        if rows:
            break
        check(proc.poll() is None and time.time() < deadline,
              "no table sync began:\n%s" % proc.stderr())
        time.sleep(0.05)
    ctx.wait_slot_creation_waiting(rows[0][0], proc=proc)
    return holder


def test(ctx):
    ctx.admin.cursor().execute("ALTER DATABASE %s SET wal_sender_timeout = '%ds'"
                               % (harness.qident(ctx.dbname), TIMEOUT_S))
    ctx.sql("""
        CREATE TABLE a (id int PRIMARY KEY);
        CREATE TABLE j (id int PRIMARY KEY, v text);
        CREATE TABLE k (id int PRIMARY KEY, v text);
        INSERT INTO j SELECT g, 'j' FROM generate_series(1, 50000) g;
        INSERT INTO k SELECT g, 'k' FROM generate_series(1, 1000) g;
        CREATE PUBLICATION pub FOR TABLE a;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    proc = ctx.start_follow(path, slot, "pub", "-v")
    ctx.catch_up(path, proc=proc)
    pid = walsender_pid(ctx, slot)

    holder = join_waiting(ctx, proc, "j")
    started = time.time()
    while time.time() - started < HOLD_S and walsender_pid(ctx, slot) == pid:
        time.sleep(0.1)
    same = walsender_pid(ctx, slot) == pid
    harness.log("the sync waited %.1f s; main walsender %s" % (
        time.time() - started, "the same" if same else "gone"))
    holder.rollback()
    holder.close()
    check(same, "the main walsender dropped pgmirror while a table sync waited "
          "(wal_sender_timeout %ss)\n%s" % (TIMEOUT_S, proc.stderr()))
    deadline = time.time() + 60
    while "j" not in ctx.mirror_tables(path):
        check(proc.poll() is None, "pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
        if time.time() > deadline:
            fail("j did not join:\n%s" % proc.stderr())
        time.sleep(0.1)
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "a", "j")
    check(walsender_pid(ctx, slot) == pid and "lost" not in proc.stderr(),
          "the stream was connected again:\n%s" % proc.stderr())

    # SIGTERM while a sync waits: exit 0 at once, the table left out
    holder = join_waiting(ctx, proc, "k")
    t0 = time.time()
    rc = ctx.stop(proc, signal.SIGTERM, timeout=10)
    took = time.time() - t0
    holder.rollback()
    holder.close()
    check(rc == 0 and took < 5, "SIGTERM during a sync: exit %s after %.1f s\n%s"
          % (rc, took, proc.stderr()))
    check("k" not in ctx.mirror_tables(path), "a stopped sync left table k")
    ctx.wait_slot_inactive(slot)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "a", "j", "k")


harness.main(test)

"""kill -9 in the middle of table syncs, many times: a keyless table
(REPLICA IDENTITY FULL, duplicate rows) joins a running mirror while a
workload keeps inserting into it and deleting from it; pgmirror is killed
while the sync's temporary slot exists (the copy under way), restarted, and
each later start resyncs the table (--resync) and is killed again; a kill
after a copy again's commit leaves it complete, set aside, and the next
run puts it in the old table's place without a sync. The
mirror always converges to the source with nothing doubled or lost."""

import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

KILLS = 6


def workload(conn, i):
    cur = conn.cursor()
    cur.execute("INSERT INTO k VALUES (%s, 'w'), (%s, 'w')", (i % 13, i % 13))
    if i % 3 == 0:
        cur.execute("DELETE FROM k WHERE ctid = (SELECT ctid FROM k WHERE n = %s LIMIT 1)",
                    (i % 13,))
    conn.commit()


def wait_sync_slot(ctx, proc, timeout=60):
    """Waits until a table sync's temporary slot exists (a sync is under way)."""
    deadline = time.time() + timeout * harness.SLOW
    while not ctx.sql("SELECT 1 FROM pg_replication_slots WHERE temporary "
                      "AND database = current_database()"):
        if proc.poll() is not None:
            return False  # it finished (or failed) before: seen by the caller
        if time.time() > deadline:
            fail("no table sync began within %ss\n%s" % (timeout, proc.stderr()))
        time.sleep(0.01)
    return True


COMPLETE = ("SELECT count(*) FROM pgmirror_staged s JOIN pgmirror_tables t USING "
            "(relation_oid) WHERE t.copy_state IS NULL")


def wait_swap(ctx, path, proc, timeout=60):
    """Waits until the complete copy of k set aside takes the old table's
    place: at start, without a sync."""
    deadline = time.time() + timeout * harness.SLOW
    while ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_staged")[0][0]:
        if time.time() > deadline or proc.poll() is not None:
            fail("the complete copy of k set aside did not take the old table's place "
                 "within %ss:\n%s" % (timeout, proc.stderr()))
        time.sleep(0.01)
    harness.log("the complete copy again of k took the old table's place")


def test(ctx):
    random.seed(int(os.environ.get("PGMIRROR_SEED", time.time())))
    ctx.sql("""
        CREATE TABLE a (id int PRIMARY KEY);
        CREATE TABLE k (n int, v text);
        ALTER TABLE k REPLICA IDENTITY FULL;
        INSERT INTO k SELECT g % 13, repeat('p', 50) FROM generate_series(1, 300000) g;
        CREATE PUBLICATION pub FOR TABLE a;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    w = harness.Workload(ctx, workload)
    w.start()
    try:
        ctx.sql("ALTER PUBLICATION pub ADD TABLE k")
        w.wait_count(5)
        for i in range(KILLS):
            joined = bool(ctx.mirror_query(path, "SELECT 1 FROM pgmirror_tables "
                                           "WHERE table_name = 'k'"))
            # a --resync killed after its copy's commit, before the swap
            complete = ctx.mirror_query(path, COMPLETE)[0][0]
            # else it joins at start, or its copy again goes on
            extra = ["--resync=k"] if joined else []
            proc = ctx.start_follow(path, slot, "pub", *extra, tag="run%d" % i)
            if complete:
                wait_swap(ctx, path, proc)
            elif not wait_sync_slot(ctx, proc):
                fail("run %d exited %s before its sync:\n%s" % (i, proc.poll(), proc.stderr()))
            time.sleep(random.uniform(0, 1.0))   # a random moment in the copy, not a wait
            os.kill(proc.pid, signal.SIGKILL)
            proc.popen.wait()
            ctx.wait_slot_inactive(slot)
            ctx.check_slot_not_ahead(path, slot)
            synced = ctx.mirror_query(path, "SELECT sync_lsn FROM pgmirror_tables "
                                      "WHERE table_name = 'k'")
            harness.log("kill %d: k %s" % (i + 1, "synced at %s" % synced[0][0]
                                             if synced else "not in the mirror"))
    finally:
        w.stop()
    ctx.once(path, slot, "pub", timeout=120)
    ctx.assert_mirror_equals_source(path, "a", "k")
    proc = ctx.start_follow(path, slot, "pub", tag="last")
    ctx.sql("INSERT INTO k VALUES (1, 'end')")
    ctx.catch_up(path, proc=proc)
    ctx.stop(proc)
    ctx.assert_mirror_equals_source(path, "a", "k")


harness.main(test)

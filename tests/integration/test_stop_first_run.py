"""SIGTERM during a first run. (1) While CREATE_REPLICATION_SLOT waits for
an older transaction on the source: pgmirror exits 0 within 5 s, leaves no
slot behind, and the next run works. (2) During the initial copy of many
small tables: pgmirror stops at once (exit 0 within 5 s, the copy not
finished, initial_copy_done = 0) and the next run copies the rest."""

import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

NTABLES = 1000


def timed_stop(ctx, proc, what):
    t0 = time.time()
    rc = ctx.stop(proc, signal.SIGTERM, timeout=5)
    took = time.time() - t0
    harness.log("%s: exit %s after %.2f s\n%s" % (what, rc, took, proc.stderr()))
    check(rc == 0, "%s: exit %s\n%s" % (what, rc, proc.stderr()))
    return took


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    path, slot = ctx.path(), ctx.slot()

    # (1) SIGTERM while the slot's creation waits
    blocker = ctx.hold_xid()
    try:
        proc = ctx.start_follow(path, slot, "pub", tag="waiting")
        ctx.wait_slot_creation_waiting(slot, proc)
        timed_stop(ctx, proc, "SIGTERM while the slot creation waits")
        ctx.wait_slot_inactive(slot)
        check(ctx.slot_info(slot) is None, "a stopped slot creation left slot %s" % slot)
    finally:
        blocker.rollback()
        blocker.close()
    ctx.sql("INSERT INTO t VALUES (1000, 'after the stop')")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "t")

    # (2) SIGTERM during the copy of many small tables
    ctx.sql("""
        CREATE SCHEMA many;
        DO $$ BEGIN
          FOR i IN 1..%d LOOP
            EXECUTE format('CREATE TABLE many.t%%s (id int PRIMARY KEY, v text)', i);
            EXECUTE format('INSERT INTO many.t%%s VALUES (1, ''x'')', i);
          END LOOP;
        END $$;
        CREATE PUBLICATION pmany FOR ALL TABLES;
    """ % NTABLES)
    path2, slot2 = ctx.path("many.db"), ctx.slot("many")
    proc = ctx.start_follow(path2, slot2, "pmany", tag="copying")
    deadline = time.time() + 120
    while not re.search(r'copied \d+ rows? of "many\.', proc.stderr()):
        check(proc.poll() is None, "pgmirror exited %s before copying:\n%s"
              % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "the copy did not start:\n%s" % proc.stderr())
        time.sleep(0.01)
    timed_stop(ctx, proc, "SIGTERM during the copy of many tables")
    err = proc.stderr()
    ncopied = len(re.findall(r'copied \d+ rows? of', err))
    check(ctx.mirror_state(path2)["initial_copy_done"] == 0,
          "SIGTERM during the copy: the copy went on to the end (%d tables copied, "
          "initial_copy_done = 1)" % ncopied)
    check("the next run keeps the tables copied and copies the others" in err,
          "SIGTERM during the copy did not say what happens next:\n%s" % err)
    ctx.wait_slot_inactive(slot2)
    ctx.once(path2, slot2, "pmany", timeout=300)
    check(len(ctx.mirror_tables(path2)) == NTABLES + 1,
          "the next run mirrored %d tables" % len(ctx.mirror_tables(path2)))
    ctx.assert_mirror_equals_source(path2, "t", "many.t1", "many.t%d" % NTABLES)


harness.main(test)

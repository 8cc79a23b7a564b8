"""A first run killed (kill -9) in the middle of its copy keeps the tables it
finished: the next run copies only the others (each at a snapshot of its own,
consistent with the stream by its sync LSN), keeps the slot, and streams
from the slot's start; changes made meanwhile to kept and to missing tables
(keyless ones too) arrive exactly once."""

import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

NTABLES = 10
ROWS = 30000


def test(ctx):
    ctx.make_keyless_tables("t", NTABLES, ROWS, 11, "repeat('v', 40)")
    ctx.sql("CREATE PUBLICATION pub FOR ALL TABLES")
    tables = ["t%d" % i for i in range(1, NTABLES + 1)]
    path, slot = ctx.path(), ctx.slot()
    proc = ctx.start_follow(path, slot, "pub", tag="killed")

    def copied():
        check(proc.poll() is None, "pgmirror exited %s during the copy:\n%s"
              % (proc.poll(), proc.stderr()))
        try:
            n = len(ctx.mirror_query(path, "SELECT table_name FROM pgmirror_tables"))
        except Exception:  # noqa: BLE001 - the file is being created
            n = 0
        return (True if n >= NTABLES // 2 else None), n

    # (a table copied is a step: the copy stands still for 120 s at most)
    harness.wait_moving("the copy to get to table %d" % (NTABLES // 2), copied, quiet=120,
                        interval=0.005, detail=lambda: "\n" + proc.stderr())
    os.kill(proc.pid, signal.SIGKILL)
    proc.popen.wait()
    kept = [r[0] for r in ctx.mirror_query(path, "SELECT table_name FROM pgmirror_tables")]
    st = ctx.mirror_state(path)
    check(st["initial_copy_done"] == 0, "killed in the copy, yet initial_copy_done = 1")
    check(NTABLES // 2 <= len(kept) < NTABLES, "kept %s" % kept)
    harness.log("killed with %d tables copied: %s" % (len(kept), kept))

    # changes meanwhile, to a kept table and to a missing one
    missing = [t for t in tables if t not in kept]
    ctx.sql("INSERT INTO %s VALUES (1, 'meanwhile'); INSERT INTO %s VALUES (2, 'meanwhile'); "
            "DELETE FROM %s WHERE ctid = (SELECT ctid FROM %s WHERE n = 3 LIMIT 1)"
            % (kept[0], missing[-1], missing[-1], kept[0]))
    ctx.wait_slot_inactive(slot)
    rc, out, err = ctx.once(path, slot, "pub", timeout=180)
    copied = re.findall(r'copied (\d+) rows of "public\.(t\d+)"', err)
    harness.log("the second run copied %s" % copied)
    check(sorted(t for _, t in copied) == sorted(missing),
          "the second run copied %s, the missing tables are %s" % (copied, missing))
    check("did not finish; keeping the %d tables it copied" % len(kept) in err,
          "the second run did not say what it kept:\n%s" % err)
    check(ctx.mirror_state(path)["initial_copy_done"] == 1, "initial_copy_done not 1")
    check(ctx.mirror_state(path)["confirmed_lsn"] != "0/0", "no position")
    ctx.assert_mirror_equals_source(path, *tables)
    ctx.sql("INSERT INTO t1 VALUES (5, 'later'); INSERT INTO %s VALUES (5, 'later')"
            % missing[0])
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *tables)
    if not copied:
        fail("nothing copied")


harness.main(test)

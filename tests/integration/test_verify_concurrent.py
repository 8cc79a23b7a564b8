"""--verify while the source changes all the time: the mirror is brought to
exactly the snapshot's point, so every run says "ok" for a table with a key
and for a keyless one, though transactions commit before, during and after
the snapshot is taken.  (A catch-up that stopped anywhere else, e.g. at the
source's position when pgmirror connected, would show rows missing or
unexpected.)  Then, the workload stopped, a plain --once leaves the mirror
equal to the source by the harness's own comparison."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import fail  # noqa: E402

RUNS = 5


def change(conn, i):
    cur = conn.cursor()
    cur.execute("INSERT INTO w VALUES (%s, 0)", (i,))
    cur.execute("UPDATE w SET n = n + 1 WHERE id = %s", (i // 2,))
    cur.execute("DELETE FROM w WHERE id = %s", (i - 50,))
    cur.execute("INSERT INTO wf VALUES (%s, 'x'), (%s, 'x')", (i % 7, i % 7))
    cur.execute("DELETE FROM wf WHERE ctid = (SELECT min(ctid) FROM wf "
                "WHERE a = %s)", ((i + 3) % 7,))
    conn.commit()


def test(ctx):
    ctx.sql("""
        CREATE TABLE w (id int PRIMARY KEY, n int);
        CREATE TABLE wf (a int, b text);
        ALTER TABLE wf REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE w, wf;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    work = harness.Workload(ctx, change)
    work.start()
    try:
        work.wait_count(20)
        for run in range(RUNS):
            rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--verify"),
                                   timeout=120)
            if rc != 0 or out != "w: ok\nwf: ok\n":
                fail("--verify run %d during changes exited %d\nstdout:\n%s\n"
                     "stderr:\n%s" % (run + 1, rc, out, err))
            ctx.check_slot_not_ahead(path, slot)
            # the workload must have gone on meanwhile
            work.wait_count(work.count + 5)
    finally:
        work.stop()
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "w", "wf")


harness.main(test)

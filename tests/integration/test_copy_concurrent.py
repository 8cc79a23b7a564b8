"""Changes committed while the initial copy runs: the copy reads the slot's
snapshot and the stream continues exactly at its consistent point, so after
the first run and a --once the mirror equals the source, nothing lost and
nothing doubled."""

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROWS = 200000


def test(ctx):
    ctx.sql("""
        CREATE TABLE big (id int PRIMARY KEY, n int, v text);
        INSERT INTO big SELECT g, 0, md5(g::text) FROM generate_series(1, %d) g;
        CREATE TABLE dup (a int, b text);
        ALTER TABLE dup REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE big, dup;
    """ % ROWS)
    path, slot = ctx.path(), ctx.slot()

    def change(conn, i):
        rnd = random.Random(i)
        cur = conn.cursor()
        cur.execute("UPDATE big SET n = n + 1, v = 'u' || %s WHERE id = %s",
                    (i, rnd.randint(1, ROWS)))
        cur.execute("INSERT INTO big VALUES (%s, %s, 'new')", (ROWS + 1 + i, i))
        cur.execute("DELETE FROM big WHERE id = %s", (rnd.randint(1, ROWS),))
        cur.execute("INSERT INTO dup VALUES (%s, 'd'), (%s, 'd')", (i % 5, i % 5))
        if i % 3 == 0:
            cur.execute("DELETE FROM dup WHERE ctid = (SELECT ctid FROM dup "
                        "WHERE a = %s LIMIT 1)", (i % 5,))
        conn.commit()

    work = harness.Workload(ctx, change)
    work.start()
    work.wait_count(20)  # changes are flowing before pgmirror starts
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "--once", "-v"), tag="copy")
    before = work.count
    deadline = time.time() + 180
    while proc.poll() is None:
        check(time.time() < deadline, "first run did not finish:\n%s"
              % proc.stderr())
        time.sleep(0.05)
    during = work.count - before
    check(proc.poll() == 0, "first run exited %s:\n%s" % (proc.poll(), proc.stderr()))
    work.wait_count(work.count + 10)  # and some more changes after the copy
    total = work.stop()
    harness.log("%d transactions, %d while pgmirror copied" % (total, during))
    check(during > 0, "no transaction committed while pgmirror copied")
    ctx.once(path, slot, "pub", timeout=120)
    ctx.assert_mirror_equals_source(path, "big", "dup")


harness.main(test)

"""A quiet publication: after a --once run during which only unpublished
tables changed, the mirror's confirmed_lsn and the slot's
confirmed_flush_lsn advance past those changes (so the server can recycle
WAL), and the slot is never ahead of the mirror.  --once also stops while
the server keeps producing unrelated WAL the whole time.

Timing: nothing here depends on how fast things run.  The slot is read
once its walsender has exited (so it has processed pgmirror's last
feedback), the target is the source's flushed position (which --once
promises to reach; the write position may be ahead by WAL nobody has
committed yet), and the noise is flowing before --once starts."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fmt  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE pubd (id int PRIMARY KEY);
        CREATE TABLE noise (id bigserial PRIMARY KEY, pad text);
        CREATE PUBLICATION pub FOR TABLE pubd;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    ctx.sql("INSERT INTO pubd VALUES (1)")
    ctx.once(path, slot, "pub")
    m0 = ctx.mirror_lsn(path)
    s0 = ctx.slot_final_lsn(slot)

    # only unrelated changes, plenty of WAL
    for _ in range(20):
        ctx.sql("INSERT INTO noise (pad) SELECT repeat('x', 200) "
                "FROM generate_series(1, 500)")
    target = ctx.source_flush_lsn()
    check(target - m0 > 1000000, "test setup: not enough unrelated WAL")
    ctx.once(path, slot, "pub", timeout=120)
    m1 = ctx.mirror_lsn(path)
    s1 = ctx.slot_final_lsn(slot)
    check(m1 > m0, "mirror confirmed_lsn did not advance (%s)" % fmt(m1))
    check(s1 > s0, "slot confirmed_flush_lsn did not advance (%s)" % fmt(s1))
    check(m1 >= target, "mirror confirmed_lsn %s did not reach %s, the "
          "position before the run (unrelated WAL only)" % (fmt(m1), fmt(target)))
    check(s1 >= target, "slot confirmed_flush_lsn %s did not reach %s: the "
          "server keeps WAL it could recycle" % (fmt(s1), fmt(target)))
    check(s1 <= m1, "slot %s ahead of mirror %s" % (fmt(s1), fmt(m1)))
    ctx.assert_mirror_equals_source(path, "pubd")

    # --once must stop even though unrelated WAL keeps coming
    def noise(conn, i):
        conn.cursor().execute("INSERT INTO noise (pad) VALUES (repeat('y', 100))")

    # (a --once that chased the moving end would never stop: the run's
    # timeout is only there to catch that)
    w = harness.Workload(ctx, noise, autocommit=True)
    w.start()
    try:
        w.wait_count(20)  # the noise is flowing before pgmirror starts
        ctx.sql("INSERT INTO pubd VALUES (2)")
        ctx.once(path, slot, "pub", timeout=120)
        ctx.sql("INSERT INTO pubd VALUES (3)")
        ctx.once(path, slot, "pub", timeout=120)
        w.wait_count(w.count + 1)  # and still flowing after
    finally:
        w.stop()
    ctx.assert_mirror_equals_source(path, "pubd")


harness.main(test)

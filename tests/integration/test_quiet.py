"""A quiet publication: after a --once run during which only unpublished
tables changed, the mirror's confirmed_lsn and the slot's
confirmed_flush_lsn advance past those changes (so the server can recycle
WAL), and the slot is never ahead of the mirror.  --once also stops while
the server keeps producing unrelated WAL the whole time."""

import os
import sys
import time

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
    s0 = harness.parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])

    # only unrelated changes, plenty of WAL
    for _ in range(20):
        ctx.sql("INSERT INTO noise (pad) SELECT repeat('x', 200) "
                "FROM generate_series(1, 500)")
    target = ctx.source_lsn()
    check(target - m0 > 1000000, "test setup: not enough unrelated WAL")
    ctx.once(path, slot, "pub", timeout=60)
    m1 = ctx.mirror_lsn(path)
    s1 = harness.parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])
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

    w = harness.Workload(ctx, noise, autocommit=True)
    w.start()
    try:
        ctx.sql("INSERT INTO pubd VALUES (2)")
        t0 = time.time()
        ctx.once(path, slot, "pub", timeout=60)
        took = time.time() - t0
        ctx.sql("INSERT INTO pubd VALUES (3)")
        ctx.once(path, slot, "pub", timeout=60)
    finally:
        n = w.stop()
    check(n > 10, "noise workload did not run (%d)" % n)
    check(took < 30, "--once under unrelated load took %.1fs" % took)
    ctx.assert_mirror_equals_source(path, "pubd")


harness.main(test)

"""Several --once rounds (the cron mode) with changes in between; a round
with no changes exits 0 quickly and changes no data; confirmed_lsn never
goes backwards; the slot is never ahead of the mirror."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE r (id int PRIMARY KEY, n int, v text);
        CREATE TABLE log (round int, msg text);
        CREATE PUBLICATION pub FOR TABLE r, log;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    last = ctx.mirror_lsn(path)

    for rnd in range(1, 6):
        ctx.sql("""
            INSERT INTO r SELECT g, %(r)s, 'r%(r)s' FROM generate_series(%(lo)s, %(hi)s) g;
            UPDATE r SET n = n + 1 WHERE id %% 3 = %(m)s;
            DELETE FROM r WHERE id %% 7 = %(m)s AND n < %(r)s;
            INSERT INTO log VALUES (%(r)s, 'round'), (%(r)s, 'round');
        """ % dict(r=rnd, lo=rnd * 100, hi=rnd * 100 + 49, m=rnd % 3))
        ctx.once(path, slot, "pub")
        ctx.assert_mirror_equals_source(path, "r", "log")
        lsn = ctx.mirror_lsn(path)
        check(lsn >= last, "confirmed_lsn went backwards: %s -> %s"
              % (harness.format_lsn(last), harness.format_lsn(lsn)))
        last = lsn

    # a round with nothing new: exit 0, nothing changes
    snap = ctx.mirror_snapshot(path)
    ctx.once(path, slot, "pub", timeout=120)
    check(ctx.mirror_snapshot(path) == snap, "a round without changes changed data")
    check(ctx.mirror_lsn(path) >= last, "confirmed_lsn went backwards")
    ctx.once(path, slot, "pub", timeout=120)
    check(ctx.mirror_snapshot(path) == snap, "a second empty round changed data")
    ctx.assert_mirror_equals_source(path, "r", "log")


harness.main(test)

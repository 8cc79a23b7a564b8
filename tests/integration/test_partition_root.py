"""Switching publish_via_partition_root on a publication of a partitioned
table: with it off the mirror has the partitions' tables; switched on, they
leave (with a warning) and the root's table joins with a fresh copy of all
rows, and follows later changes; switched off again, the root's table
leaves and the partitions' tables join again. Changes made around each
switch, also while a service runs, reach the mirror exactly once."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE p (id int PRIMARY KEY, v text) PARTITION BY RANGE (id);
        CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100);
        CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (100) TO (200);
        INSERT INTO p SELECT g, 'v' || g FROM generate_series(1, 150) g;
        CREATE PUBLICATION pub FOR TABLE p;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    check(ctx.mirror_tables(path) == ["p1", "p2", "pgm_marker"],
          "partitions: mirror has %r" % ctx.mirror_tables(path))
    ctx.assert_mirror_equals_source(path, "p1", "p2")

    # on: the root instead of its partitions (changes before and after)
    ctx.sql("UPDATE p SET v = 'before' WHERE id IN (5, 105)")
    ctx.sql("ALTER PUBLICATION pub SET (publish_via_partition_root = true)")
    ctx.sql("UPDATE p SET v = 'after' WHERE id IN (6, 106); DELETE FROM p WHERE id = 7;"
            "INSERT INTO p VALUES (160, 'new')")
    rc, out, err = ctx.once(path, slot, "pub")
    check(ctx.mirror_tables(path) == ["p", "pgm_marker"],
          "root: mirror has %r\n%s" % (ctx.mirror_tables(path), err))
    check("p1" in err and "p2" in err, "no warning about the partitions leaving:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "p")

    # followed while a service runs; then off again
    proc = ctx.start_follow(path, slot, "pub", tag="service")
    try:
        ctx.sql("UPDATE p SET v = 'service' WHERE id IN (8, 108)")
        ctx.catch_up(path, proc=proc)
        ctx.assert_mirror_equals_source(path, "p")
    finally:
        ctx.stop(proc)
    ctx.sql("ALTER PUBLICATION pub SET (publish_via_partition_root = false)")
    ctx.sql("UPDATE p SET v = 'off' WHERE id IN (9, 109); DELETE FROM p WHERE id = 110")
    ctx.once(path, slot, "pub")
    check(ctx.mirror_tables(path) == ["p1", "p2", "pgm_marker"],
          "partitions again: mirror has %r" % ctx.mirror_tables(path))
    ctx.assert_mirror_equals_source(path, "p1", "p2")
    ctx.sql("INSERT INTO p VALUES (0, 'x'), (199, 'y')")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "p1", "p2")


harness.main(test)

"""TOASTed values (over 8 kB, incompressible, STORAGE EXTERNAL) survive
updates of other columns (the server sends them as "unchanged"): plain
update, a key-changing update, a REPLICA IDENTITY FULL table, several
updates in one transaction; then the big value itself changes, goes NULL,
comes back; a row inserted and updated in the same transaction."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BIG = "(SELECT string_agg(md5(%s || ':' || g), '') FROM generate_series(1, 400) g)"


def big(seed):
    return BIG % ("'%s'" % seed)  # 12800 characters of hex, incompressible


def test(ctx):
    ctx.sql("""
        CREATE TABLE tt (id int PRIMARY KEY, small int, big text, blob bytea);
        ALTER TABLE tt ALTER COLUMN big SET STORAGE EXTERNAL;
        ALTER TABLE tt ALTER COLUMN blob SET STORAGE EXTERNAL;
        CREATE TABLE tf (small int, big text);
        ALTER TABLE tf ALTER COLUMN big SET STORAGE EXTERNAL;
        ALTER TABLE tf REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE tt, tf;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    for i in range(1, 6):
        ctx.sql("INSERT INTO tt VALUES (%s, 0, %s, decode(%s, 'hex'))"
                % (i, big("t%d" % i), big("b%d" % i)))
    ctx.sql("INSERT INTO tf VALUES (0, %s), (0, %s)" % (big("f"), big("g")))
    toasted = ctx.sql1("SELECT pg_column_size(big) FROM tt WHERE id = 1")
    check(ctx.sql1("SELECT length(big) FROM tt WHERE id = 1") > 8000 and
          toasted > 8000, "test setup: value not big/uncompressed (%s)" % toasted)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "tt", "tf")

    # updates that leave the TOASTed columns alone
    ctx.sql("""
        UPDATE tt SET small = 1 WHERE id = 1;
        UPDATE tt SET id = 100, small = 2 WHERE id = 2;         -- key change
        BEGIN;
          UPDATE tt SET small = 3 WHERE id = 3;
          UPDATE tt SET small = 4 WHERE id = 3;
          UPDATE tt SET id = 300 WHERE id = 3;
        COMMIT;
        UPDATE tf SET small = 5 WHERE big LIKE md5('f:1') || '%';
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "tt", "tf")
    r = ctx.mirror_query(path, "SELECT id, length(big), length(blob) FROM tt "
                               "WHERE id IN (1, 100, 300) ORDER BY id")
    check(r == [(1, 12800, 6400), (100, 12800, 6400), (300, 12800, 6400)],
          "TOASTed values lost on update: %r" % (r,))

    # the big value itself changes, goes NULL, comes back
    ctx.sql("""
        UPDATE tt SET big = %s WHERE id = 1;
        UPDATE tt SET big = NULL, small = 9 WHERE id = 4;
        UPDATE tt SET blob = NULL WHERE id = 5;
        BEGIN;
          INSERT INTO tt VALUES (6, 0, %s, NULL);
          UPDATE tt SET small = 6 WHERE id = 6;
        COMMIT;
    """ % (big("new1"), big("t6")))
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "tt", "tf")
    ctx.sql("UPDATE tt SET big = %s WHERE id = 4; UPDATE tt SET small = 10 WHERE id = 4"
            % big("back"))
    ctx.sql("DELETE FROM tt WHERE id = 100; DELETE FROM tf WHERE small = 5")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "tt", "tf")


harness.main(test)

"""Updates that change the key: single-column and composite keys, a key
moved to a value a deleted row had, two keys swapped in one transaction via
a temporary value, a chain rotation of three keys, a key changed twice in
one transaction, and a key change back and forth across --once rounds.
The row must move, not be duplicated or lost."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["k1", "k2"]


def test(ctx):
    ctx.sql("""
        CREATE TABLE k1 (id int PRIMARY KEY, v text);
        CREATE TABLE k2 (a int, b text, v int, PRIMARY KEY (a, b));
        CREATE PUBLICATION pub FOR TABLE k1, k2;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql("""
        INSERT INTO k1 SELECT g, 'v' || g FROM generate_series(1, 20) g;
        INSERT INTO k2 SELECT g % 4, 'b' || g, g FROM generate_series(1, 20) g;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)

    ctx.sql("""
        UPDATE k1 SET id = 101 WHERE id = 1;                 -- simple move
        DELETE FROM k1 WHERE id = 2;
        UPDATE k1 SET id = 2, v = 'took 2' WHERE id = 3;     -- reuse a deleted key
        BEGIN;                                               -- swap 4 and 5
          UPDATE k1 SET id = -1 WHERE id = 4;
          UPDATE k1 SET id = 4 WHERE id = 5;
          UPDATE k1 SET id = 5 WHERE id = -1;
        COMMIT;
        BEGIN;                                               -- rotate 6 -> 7 -> 8 -> 6
          UPDATE k1 SET id = -6 WHERE id = 6;
          UPDATE k1 SET id = 6 WHERE id = 8;
          UPDATE k1 SET id = 8 WHERE id = 7;
          UPDATE k1 SET id = 7 WHERE id = -6;
        COMMIT;
        BEGIN;                                               -- moved twice
          UPDATE k1 SET id = 200 WHERE id = 9;
          UPDATE k1 SET id = 201, v = 'twice' WHERE id = 200;
          INSERT INTO k1 VALUES (9, 'new 9');
        COMMIT;
        UPDATE k1 SET id = id + 1000 WHERE id BETWEEN 10 AND 15;  -- many rows
        UPDATE k2 SET b = b || 'x' WHERE a = 1;                   -- part of composite key
        UPDATE k2 SET a = a + 10, b = 'bb' || v WHERE a = 2;      -- both parts
        BEGIN;                                                    -- swap composite keys
          UPDATE k2 SET a = -1 WHERE a = 3 AND b = 'b3';
          UPDATE k2 SET a = 3, b = 'b3' WHERE a = 0 AND b = 'b4';
          UPDATE k2 SET a = 0, b = 'b4' WHERE a = -1;
        COMMIT;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    r = ctx.mirror_query(path, "SELECT id, v FROM k1 WHERE id IN (4, 5, 6, 7, 8) ORDER BY id")
    check(r == [(4, "v5"), (5, "v4"), (6, "v8"), (7, "v6"), (8, "v7")],
          "swapped / rotated keys: %r" % (r,))

    # back and forth across rounds
    ctx.sql("UPDATE k1 SET id = 3000 WHERE id = 101")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    ctx.sql("UPDATE k1 SET id = 1 WHERE id = 3000")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)


harness.main(test)

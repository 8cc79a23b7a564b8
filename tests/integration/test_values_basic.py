"""Basic value types: int2/4/8, text, bool, float4/8 (NaN, +-Infinity,
extremes), NULLs.  Inserted, updated and deleted after the slot exists;
the mirror must hold each value in the contract's form and storage class
(1 is an integer, not the text '1')."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE basic (
            id int PRIMARY KEY, s int2, i int4, b int8, t text, f bool,
            r float4, d float8, v varchar(20));
        CREATE PUBLICATION pub FOR TABLE basic;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql(r"""
        INSERT INTO basic VALUES
          (1, 0, 0, 0, '', false, 0, 0, ''),
          (2, 32767, 2147483647, 9223372036854775807, 'hello', true,
           3.4028235e38, 1.7976931348623157e308, 'v'),
          (3, -32768, -2147483648, -9223372036854775808, 'tab	nl
quote'' "dq" \ backslash', true, 'NaN', 'NaN', 'NULL'),
          (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          (5, 1, 1, 1, '1', true, 'Infinity', '-Infinity', '1'),
          (6, -1, -1, -1, 'ünïcödé ✓ 𝄞', false, '-Infinity', 'Infinity', 'x'),
          (7, 7, 7, 7, '0.1', false, 0.1, 0.1, '1e3'),
          (8, 8, 8, 8, 'tiny', false, 1.4e-45, 4.9e-324, '-0'),
          (9, 9, 9, 9, 'neg zero', false, '-0', '-0', ''),
          (10, 10, 10, 10, 'pi', true, pi(), pi(), 'pi'),
          (11, 11, 11, 4611686018427387905, 'big', true, 16777217, 9007199254740993, '');
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "basic")

    # storage classes, spelled out for the cases users trip over
    rows = ctx.mirror_query(path, "SELECT id, typeof(i), typeof(t), typeof(f), "
                                  "typeof(d), d FROM basic WHERE id IN (4, 5, 3) "
                                  "ORDER BY id")
    check(rows[0][1:5] == ("integer", "text", "integer", "text")
          and rows[0][5] == "NaN", "id 3: %r" % (rows[0],))
    check(rows[1][1:5] == ("null", "null", "null", "null"), "id 4: %r" % (rows[1],))
    check(rows[2][1:5] == ("integer", "text", "integer", "real")
          and rows[2][5] == float("-inf"), "id 5: %r" % (rows[2],))

    # updates to and from NULL and special values; deletes
    ctx.sql("""
        UPDATE basic SET s = 5, t = NULL, d = 'NaN', f = NULL WHERE id = 2;
        UPDATE basic SET s = NULL, i = 4, t = 'was null', r = 'Infinity' WHERE id = 4;
        UPDATE basic SET d = 2.5, r = 'NaN' WHERE id = 5;
        DELETE FROM basic WHERE id IN (1, 6);
        INSERT INTO basic (id) VALUES (12);
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "basic")


harness.main(test)

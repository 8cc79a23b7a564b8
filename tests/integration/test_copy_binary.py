"""The initial copy reads a table in COPY's binary format when every column
has a type whose binary form pgmirror reads (bool, bytea, int2/4/8, oid,
float4, float8, numeric, text, varchar, char(n), name, json, jsonb, uuid,
date, time, timetz, timestamp, timestamptz, interval, inet, cidr, and
arrays of those), and in text format otherwise. Both must store
exactly what the stream stores for the same values, which pgoutput sends as
text.

Edge values of each of those types (ranges' ends, BC, infinity, NaN, -0,
subnormals, fractions of 1 to 6 digits, numerics of every scale, empty and
non-ASCII text, every byte value) are copied in binary (the debug log says
which format each table took), then inserted again under other ids and
streamed. Each copied row must equal its streamed twin value for value,
with the same storage class, and the mirror must equal the source row by
row. A table with one column of another type (macaddr) is copied in text,
and equal too; so is a parent table, read without its inheritance
children's rows (a child is a table of its own). The session settings that shape text output are made odd
for pgmirror's connections (PGOPTIONS): binary output does not depend on
them, and pgmirror sets its own for text.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

COLS = """
    id int PRIMARY KEY, b bool, i2 int2, i4 int4, i8 int8, o oid, f8 float8,
    n10 numeric(10,2), n15 numeric(15,0), n16 numeric(16,2), n numeric,
    by bytea, d date, ts timestamp, ts3 timestamp(3), tz timestamptz,
    j json, jb jsonb, u uuid, ch char(5), vc varchar(10), tx text, nm name
"""

# (b, i2, i4, i8, o, f8, n10, n15, n16, n, by, d, ts, ts3, tz, j, jb, u, ch,
# vc, tx, nm) for ids 2.., id 1 is NULL everywhere
ROWS = r"""
(true, 32767, 2147483647, 9223372036854775807, 4294967295, 'NaN',
 99999999.99, 999999999999999, 99999999999999.99,
 '123456789012345678901234567890', '\x00', '5874897-12-31',
 '294276-12-31 23:59:59.999999', '10000-01-01 00:00:00.5',
 '294276-12-31 23:59:59.999999+00', '{"a": 1, "c": {"d": "é"}}',
 '{"emoji": "☕", "n": 1.5e300, "arr": [1, 2.50]}',
 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'é', '', 'Unicode ☕ 𝄞 back\slash', 'pg_class'),
(false, -32768, -2147483648, -9223372036854775808, 0, 'Infinity',
 -0.01, -999999999999999, 0.01, 'NaN', '\xff00fe7f80', '4713-01-01 BC',
 '4713-01-01 00:00:00.1 BC', '0044-03-15 12:00:00.123 BC',
 '4713-01-01 00:00:00.12+00 BC', '[]', '{}',
 '00000000-0000-0000-0000-000000000000', '', 'x', '', ''),
(NULL, 0, 0, 0, 1, '-Infinity', 0, 0, 0.00,
 '-0.000000000000000000000000000001', '', 'infinity', '-infinity',
 'infinity', 'infinity', 'null', 'null', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
 'abcde', 'abcdefghij', repeat('x', 3000), repeat('n', 63)),
(true, 1, 1, 1, 2, '-0', 0.1, 1, 12345678901234.50, 'Infinity',
 '\x', '-infinity', 'infinity', '-infinity', '-infinity', '"s"', '"s"',
 NULL, 'a b', 'é☕', E'tab\there\nnewline', 'x y'),
(false, 2, 2, 2, 3, '1e308', 12.3, 10, 1.00, '-Infinity', NULL,
 '0001-01-01', '0001-01-01 00:00:00', '0001-12-31 23:59:59.999 BC',
 '0001-01-01 00:00:00+00', '1.5', '1.5', NULL, NULL, NULL, NULL, NULL),
(NULL, NULL, NULL, NULL, NULL, '5e-324', 5.5, 123456789012345,
 -99999999999999.99, '-123456789012345678901234567890',
 decode(repeat('00', 0), 'hex'), '2000-02-29', '2000-02-29 23:59:59.5',
 '2000-01-01', '1999-12-31 23:59:59.999999+00', '0', '0', NULL, NULL,
 NULL, NULL, NULL),
(NULL, NULL, NULL, NULL, NULL, '2.2250738585072014e-308', -5.5, -1,
 0.10, '0.000000000000000000000000000001', NULL, '1999-12-31',
 '1999-12-31 23:59:59.000001', NULL, '1970-01-01 00:00:00+00', NULL,
 NULL, NULL, NULL, NULL, NULL, NULL),
(NULL, NULL, NULL, NULL, NULL, '0.1', NULL, NULL, NULL, '10000', NULL,
 NULL, '2024-02-29 12:34:56.12', NULL, '2024-03-31 01:30:00.000001+02',
 NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(NULL, NULL, NULL, NULL, NULL, '123456789.125', NULL, NULL, NULL,
 '0.00', NULL, NULL, '2024-02-29 12:34:56.123', NULL,
 '2024-02-29 12:34:56.1234-05:30', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(NULL, NULL, NULL, NULL, NULL, '-1.5e-300', NULL, NULL, NULL, '7.1',
 NULL, NULL, '2024-02-29 12:34:56.12345', NULL,
 '2024-02-29 12:34:56.123456+14', NULL, NULL, NULL, NULL, NULL, NULL, NULL)
"""

def rows():
    """ROWS, one "(...)" per row."""
    out, depth, start, quote = [], 0, None, False
    for i, ch in enumerate(ROWS):
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
            if depth == 1:
                start = i
        elif not quote and ch == ")":
            depth -= 1
            if depth == 0:
                out.append(ROWS[start:i + 1])
    return out


STREAMED = 1000   # a copied row's id + STREAMED is its streamed twin

# what shapes text output, made odd for pgmirror's sessions
ODD = {"PGOPTIONS": "-c TimeZone=Asia/Kolkata -c DateStyle=SQL,DMY "
                    "-c extra_float_digits=-15 -c bytea_output=escape"}


def insert_rows(ctx, table, base):
    ctx.sql("INSERT INTO %s (id) VALUES (%d)" % (table, base + 1))
    ctx.sql("INSERT INTO %s VALUES %s" % (table, ", ".join(
        "(%d, %s" % (base + 2 + k, r.strip()[1:]) for k, r in enumerate(rows()))))
    # every byte value, and many rows in batches
    ctx.sql("INSERT INTO %s (id, by, n, tz) VALUES (%d, "
            "(SELECT string_agg(set_byte('\\x00'::bytea, 0, g), ''::bytea) "
            "FROM generate_series(0, 255) g), 1, '2026-12-01 12:00:00.5+00')" % (table, base + 50))
    ctx.sql("INSERT INTO %s (id, i8, n16, n, ts, tz, tx) SELECT %d + g, g * 7919, "
            "g / 100.0, g / 7.0, '2000-01-01'::timestamp + g * interval '1.000001 s', "
            "'1900-01-01'::timestamptz + g * interval '1 day 1 s', md5(g::text) "
            "FROM generate_series(100, 900) g" % (table, base))


def rows_by_id(ctx, path, table):
    cols = ctx.mirror_columns(path, table)
    sel = ", ".join("quote(%s), typeof(%s)" % (harness.qident(c), harness.qident(c))
                    for c in cols if c != "id")
    return {r[0]: r[1:] for r in ctx.mirror_query(
        path, "SELECT id, %s FROM %s" % (sel, harness.qident(table)))}


def copied_equal_streamed(ctx, path, table):
    rows = rows_by_id(ctx, path, table)
    copied = [i for i in rows if i < STREAMED]
    check(len(copied) > 800, "%s: only %d rows were copied" % (table, len(copied)))
    for i in sorted(copied):
        check(i + STREAMED in rows, "%s: row %d has no streamed twin" % (table, i))
        check(rows[i] == rows[i + STREAMED],
              "%s: copied row %d differs from its streamed twin:\n  %r\n  %r"
              % (table, i, rows[i], rows[i + STREAMED]))


def test(ctx):
    ctx.sql("CREATE TABLE bin_t (%s)" % COLS)
    ctx.sql("CREATE TABLE text_t (%s, mac macaddr)" % COLS)
    ctx.sql("CREATE PUBLICATION pub FOR TABLE bin_t, text_t")
    for t in ("bin_t", "text_t"):
        insert_rows(ctx, t, 0)
    ctx.sql("UPDATE text_t SET mac = '08:00:2b:01:02:03' WHERE id % 3 = 0")

    path, slot = ctx.path(), ctx.slot()
    _, _, err = ctx.once(path, slot, "pub", "-v", "-v", env=ODD)
    check('copying "public.bin_t" in binary format' in err,
          "bin_t was not copied in binary format:\n%s" % err)
    check('copying "public.text_t" in text format' in err,
          "text_t was not copied in text format:\n%s" % err)
    # where each copy's time went, for -v -v: both threads' CPU and waits
    for t in ("bin_t", "text_t"):
        check(re.search(r'copy of "public\.%s": the writer used \d+\.\d{3} s of CPU and '
                        r'waited \d+\.\d{3} s for rows, the reader used \d+\.\d{3} s of CPU '
                        r'and waited \d+\.\d{3} s for room' % t, err),
              "no CPU and waiting times for the copy of %s:\n%s" % (t, err))
    ctx.assert_mirror_equals_source(path, "bin_t", "text_t")

    for t in ("bin_t", "text_t"):
        insert_rows(ctx, t, STREAMED)
    ctx.sql("UPDATE text_t SET mac = '08:00:2b:01:02:03' "
            "WHERE id > %d AND (id - %d) %% 3 = 0" % (STREAMED, STREAMED))
    ctx.once(path, slot, "pub", env=ODD)
    ctx.assert_mirror_equals_source(path, "bin_t", "text_t")
    copied_equal_streamed(ctx, path, "bin_t")
    copied_equal_streamed(ctx, path, "text_t")

    # a table read straight (no row filter) holds only its own rows, not
    # its inheritance children's, which are tables of their own
    ctx.sql("CREATE TABLE parent (id int PRIMARY KEY, v text);"
            "CREATE TABLE child (w int) INHERITS (parent);"
            "INSERT INTO parent VALUES (1, 'a'), (2, 'b'), (3, 'c');"
            "INSERT INTO child VALUES (10, 'x', 1), (11, 'y', 2);"
            "CREATE PUBLICATION pinh FOR TABLE parent")
    path = ctx.path("inh.db")
    ctx.once(path, ctx.slot("inh"), "pinh")
    for table, want in (("parent", [(1, "a"), (2, "b"), (3, "c")]),
                        ("child", [(10, "x"), (11, "y")])):
        got = ctx.mirror_query(path, "SELECT id, v FROM %s ORDER BY id" % table)
        check(got == want, "mirror table %s holds %r, want %r" % (table, got, want))


harness.main(test)

"""Changes streamed in pgoutput's binary format (binary 'true', PostgreSQL
14+) store exactly what the text format stores.

A table with a column of each type pgmirror reads in binary (BINARY_TYPES:
keep it equal to the set values_binary_supported() accepts, so that a type
added there is tested here) gets edge values of each type (ranges' ends, BC,
infinity, NaN, -0, subnormals, numerics of every scale, empty and
non-ASCII text, every byte value), inserted after the first run, so that
they are streamed, not copied. Two mirrors of it stream the same changes:
one as pgmirror chooses (-v must say binary), one with --no-binary (-v:
text). The two files must hold the same rows byte for byte (SQLite's
quote() and typeof() of every value) and equal the source. A keyless twin
with REPLICA IDENTITY FULL then gets UPDATEs and DELETEs: its old rows are
found by every value, as streamed in binary, so a value that differs by a
byte from the text path's leaves a row unchanged or undeleted.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

# (column, type) for each type read in binary; numeric at each of its
# storage forms, timestamp at a lower precision
BINARY_TYPES = [
    ("b", "bool"), ("i2", "int2"), ("i4", "int4"), ("i8", "int8"), ("o", "oid"),
    ("f8", "float8"), ("n10", "numeric(10,2)"), ("n15", "numeric(15,0)"),
    ("n16", "numeric(16,2)"), ("n", "numeric"), ("by", "bytea"), ("d", "date"),
    ("ts", "timestamp"), ("ts3", "timestamp(3)"), ("tz", "timestamptz"),
    ("j", "json"), ("jb", "jsonb"), ("u", "uuid"), ("ch", "char(5)"),
    ("vc", "varchar(10)"), ("tx", "text"), ("nm", "name"),
    ("f4", "float4"), ("tm", "time"), ("tm2", "time(2)"), ("ttz", "timetz"),
    ("iv", "interval"), ("ip", "inet"), ("cd", "cidr"),
    ("ai4", "int4[]"), ("atx", "text[]"), ("af4", "float4[]"), ("af8", "float8[]"),
    ("an", "numeric[]"), ("aiv", "interval[]"), ("aip", "inet[]"), ("ai2", "int2[][]"),
]

# values per column name; each list's k-th value goes into row k (NULL past
# its end), every column also gets a row of NULLs
VALUES = {
    "b": ["true", "false"],
    "i2": ["32767", "-32768", "0"],
    "i4": ["2147483647", "-2147483648", "0"],
    "i8": ["9223372036854775807", "-9223372036854775808", "0"],
    "o": ["4294967295", "0", "1"],
    "f8": ["'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "'1e308'", "'5e-324'",
           "'2.2250738585072014e-308'", "'0.1'", "'123456789.125'", "'-1.5e-300'"],
    "n10": ["99999999.99", "-0.01", "0", "0.1", "12.3", "5.5", "-5.5"],
    "n15": ["999999999999999", "-999999999999999", "0", "1", "10", "123456789012345", "-1"],
    "n16": ["99999999999999.99", "0.01", "0.00", "12345678901234.50", "1.00",
            "-99999999999999.99", "0.10"],
    "n": ["'123456789012345678901234567890'", "'NaN'", "'-0.000000000000000000000000000001'",
          "'Infinity'", "'-Infinity'", "'-123456789012345678901234567890'",
          "'0.000000000000000000000000000001'", "'10000'", "'0.00'", "'7.1'"],
    "by": ["'\\x00'", "'\\xff00fe7f80'", "''",
           "(SELECT string_agg(set_byte('\\x00'::bytea, 0, g), ''::bytea) "
           "FROM generate_series(0, 255) g)"],
    "d": ["'5874897-12-31'", "'4713-01-01 BC'", "'infinity'", "'-infinity'",
          "'0001-01-01'", "'2000-02-29'", "'1999-12-31'"],
    "ts": ["'294276-12-31 23:59:59.999999'", "'4713-01-01 00:00:00.1 BC'", "'-infinity'",
           "'infinity'", "'0001-01-01 00:00:00'", "'2000-02-29 23:59:59.5'",
           "'1999-12-31 23:59:59.000001'", "'2024-02-29 12:34:56.12'",
           "'2024-02-29 12:34:56.123'", "'2024-02-29 12:34:56.12345'"],
    "ts3": ["'10000-01-01 00:00:00.5'", "'0044-03-15 12:00:00.123 BC'", "'infinity'",
            "'-infinity'", "'0001-12-31 23:59:59.999 BC'", "'2000-01-01'"],
    "tz": ["'294276-12-31 23:59:59.999999+00'", "'4713-01-01 00:00:00.12+00 BC'",
           "'infinity'", "'-infinity'", "'0001-01-01 00:00:00+00'",
           "'1999-12-31 23:59:59.999999+00'", "'1970-01-01 00:00:00+00'",
           "'2024-03-31 01:30:00.000001+02'", "'2024-02-29 12:34:56.1234-05:30'",
           "'2024-02-29 12:34:56.123456+14'"],
    "j": ["'{\"a\": 1, \"c\": {\"d\": \"é\"}}'", "'[]'", "'null'", "'\"s\"'", "'1.5'", "'0'",
          "'  {\"sp\" : [1,2 ] }'"],
    "jb": ["'{\"emoji\": \"☕\", \"n\": 1.5e300, \"arr\": [1, 2.50]}'", "'{}'", "'null'",
           "'\"s\"'", "'1.5'", "'0'", "'{\"b\": 1, \"a\": [true, null, -0.0]}'"],
    "u": ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'",
          "'ffffffff-ffff-ffff-ffff-ffffffffffff'"],
    "ch": ["'é'", "''", "'abcde'", "'a b'"],
    "vc": ["''", "'x'", "'abcdefghij'", "'é☕'"],
    "tx": ["'Unicode ☕ 𝄞 back\\slash'", "''", "repeat('x', 3000)", "E'tab\\there\\nnewline'",
           "'''quoted'''"],
    "nm": ["'pg_class'", "''", "repeat('n', 63)", "'x y'"],
    "f4": ["'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "'0.1'", "'3.4028235e38'",
           "'1e-45'", "'1.17549435e-38'", "'123456.7'", "'-1.5'", "'1.17760704e+08'"],
    "tm": ["'00:00:00'", "'23:59:59.999999'", "'24:00:00'", "'12:34:56.5'",
           "'01:02:03.000001'"],
    "tm2": ["'23:59:59.994'", "'00:00:00.01'", "'12:00:00'"],
    "ttz": ["'00:00:00+00'", "'23:59:59.999999-15:59'", "'24:00:00+15:59'",
            "'12:34:56.5+05:30'", "'01:02:03+01:02:03'", "'10:00:00-00:00:01'"],
    "iv": ["'0'", "'1 year 2 mons 3 days 04:05:06.789'", "'-1 year -2 mons +3 days -04:05:06'",
           "'178000000 years'", "'-178000000 years'", "'1 microsecond'",
           "'-00:00:00.000001'", "'25 hours'", "'2147483647 days'", "'-2147483648 mons'"],
    "ip": ["'192.168.0.1'", "'10.0.0.0/8'", "'::1'", "'2001:db8::ff00:42:8329/64'",
           "'::ffff:1.2.3.4'", "'0.0.0.0/0'", "'1:0:0:1::/128'", "'10.1.2.3/32'"],
    "cd": ["'10.0.0.0/8'", "'192.168.1.0/24'", "'2001:db8::/32'", "'::/0'", "'1.2.3.4/32'",
           "'::ffff:0.0.0.0/96'"],
    "ai4": ["'{1,2,3}'", "'{}'", "'{NULL,1}'", "'[0:2]={1,2,3}'", "'{-2147483648}'"],
    "atx": ["ARRAY['a b', '', NULL, 'q\"uote', 'back\\slash', 'é☕', 'NULL', '{x}']",
            "'{}'::text[]"],
    "af4": ["ARRAY[0.1, 'NaN', '-Infinity', 3.4028235e38, '-0', 1e-45]::float4[]"],
    "af8": ["ARRAY[0.1, 'NaN', 'Infinity', 1e308, '-0', 5e-324]::float8[]"],
    "an": ["ARRAY[1.50, 'NaN', -0.001, NULL, 12345678901234567890.5]::numeric[]"],
    "aiv": ["ARRAY['1 day'::interval, '-00:00:01', NULL, '1 year 1 microsecond']"],
    "aip": ["ARRAY['::1'::inet, '10.0.0.1/8', NULL, '2001:db8::/48']"],
    "ai2": ["'{{1,2},{3,4}}'", "'{{NULL,NULL}}'", "'[1:1][-1:0]={{7,8}}'"],
}

NROWS = max(len(v) for v in VALUES.values())


def cols_ddl(key):
    return ", ".join(["id int%s" % (" PRIMARY KEY" if key else " NOT NULL")] +
                     ["%s %s" % (c, t) for c, t in BINARY_TYPES])


def insert(ctx, table, base):
    """The edge values as rows base+1.., one transaction per row, then a
    row of NULLs and a few hundred ordinary rows in one transaction."""
    names = [c for c, _ in BINARY_TYPES]
    for k in range(NROWS):
        vals = [VALUES[c][k] if k < len(VALUES[c]) else "NULL" for c in names]
        ctx.sql("INSERT INTO %s (id, %s) VALUES (%d, %s)"
                % (table, ", ".join(names), base + k + 1, ", ".join(vals)))
    ctx.sql("INSERT INTO %s (id) VALUES (%d)" % (table, base + NROWS + 1))
    ctx.sql("INSERT INTO %s (id, b, i8, n16, n, ts, tz, tx, u, jb) SELECT %d + g, g %% 2 = 0, "
            "g * 7919, g / 100.0, g / 7.0, '2000-01-01'::timestamp + g * interval '1.000001 s', "
            "'1900-01-01'::timestamptz + g * interval '1 day 1 s', md5(g::text), "
            "md5(g::text)::uuid, jsonb_build_object('g', g, 'r', g / 3.0) "
            "FROM generate_series(100, 400) g" % (table, base))


def rows(ctx, path, table):
    """Every row as (id, quote(v), typeof(v), ...), sorted: the bytes."""
    sel = ", ".join("quote(%s), typeof(%s)" % (harness.qident(c), harness.qident(c))
                    for c, _ in BINARY_TYPES)
    return sorted(ctx.mirror_query(path, "SELECT id, %s FROM %s" % (sel, harness.qident(table))))


def same_bytes(ctx, a, b, table, what):
    ra, rb = rows(ctx, a, table), rows(ctx, b, table)
    check(len(ra) == len(rb), "%s, %s: %d rows streamed in binary, %d in text"
          % (what, table, len(ra), len(rb)))
    for x, y in zip(ra, rb):
        check(x == y, "%s, %s: a row differs between the binary and the text stream:\n"
              "  binary: %r\n  text:   %r" % (what, table, x, y))
    return len(ra)


def test(ctx):
    rc, out, _ = ctx.run(["--help"])
    check(rc == 0 and "--no-binary" in out, "--help does not name --no-binary:\n%s" % out)
    check(sorted(VALUES) == sorted(c for c, _ in BINARY_TYPES),
          "VALUES and BINARY_TYPES name different columns")
    ctx.sql("CREATE TABLE bk (%s)" % cols_ddl(True))
    ctx.sql("CREATE TABLE bf (%s)" % cols_ddl(False))
    ctx.sql("ALTER TABLE bf REPLICA IDENTITY FULL")
    ctx.sql("CREATE PUBLICATION pub FOR TABLE bk, bf")
    binp, textp = ctx.path("binary.db"), ctx.path("text.db")
    bins, texts = ctx.slot("bin"), ctx.slot("text")
    ctx.once(binp, bins, "pub")
    ctx.once(textp, texts, "pub", "--no-binary")

    for t in ("bk", "bf"):
        insert(ctx, t, 0)
    _, _, err = ctx.once(binp, bins, "pub", "-v")
    check("streaming in binary" in err and ", in binary" in err,
          "-v does not say that the stream is in binary:\n%s" % err)
    _, _, err = ctx.once(textp, texts, "pub", "--no-binary", "-v")
    check("streaming in text: --no-binary" in err and ", in text" in err,
          "-v does not say that the stream is in text because of --no-binary:\n%s" % err)
    for t in ("bk", "bf"):
        n = same_bytes(ctx, binp, textp, t, "inserts")
        check(n == NROWS + 1 + 301, "%s: %d rows in the mirrors, want %d" % (t, n, NROWS + 302))
    ctx.assert_mirror_equals_source(binp, "bk", "bf")
    ctx.assert_mirror_equals_source(textp, "bk", "bf")

    # the old rows of bf are matched by all their values as streamed
    ctx.sql("UPDATE bf SET id = id + 1000 WHERE id <= %d" % (NROWS + 1))
    ctx.sql("UPDATE bf SET tx = 'changed ' || id WHERE id BETWEEN 100 AND 150")
    ctx.sql("DELETE FROM bf WHERE id BETWEEN 1005 AND 1008 OR id BETWEEN 300 AND 320")
    ctx.sql("UPDATE bk SET i4 = i4 / 2, tx = tx || 'x' WHERE id <= %d" % (NROWS + 1))
    ctx.sql("DELETE FROM bk WHERE id BETWEEN 2 AND 4")
    for path, slot, extra in ((binp, bins, ()), (textp, texts, ("--no-binary",))):
        ctx.once(path, slot, "pub", *extra)
    for t in ("bk", "bf"):
        same_bytes(ctx, binp, textp, t, "updates and deletes")
    ctx.assert_mirror_equals_source(binp, "bk", "bf")
    ctx.assert_mirror_equals_source(textp, "bk", "bf")
    got = ctx.mirror_query(binp, "SELECT count(*) FROM bf WHERE id > 1000")
    check(got == [(NROWS + 1 - 4,)], "bf: %r rows were moved, want %d" % (got, NROWS - 3))


harness.main(test)

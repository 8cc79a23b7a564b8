"""A value read in binary is stored byte for byte as the same value read as
text (issue 25): for a table with a column of every type pgmirror reads in
binary (values_binary_supported()), arrays of each included, holding the
edges of each type (NULLs, ranges' ends, infinities, NaN, -0, float4s
whose shortest decimal is not their exact value, subnormals, negative and
mixed-sign intervals, times at 24:00:00, zones with seconds, IPv6
shortening and embedded IPv4, empty, multi-dimensional and offset arrays
with NULLs) and thousands of random floats, intervals, times and
addresses, the initial copy of one mirror goes through COPY's binary
format and that of a second mirror through the text path
(PGMIRROR_TEST_COPY_FORMAT=text, a test-only knob). Every cell must be
identical in both files (SQLite's quote() and typeof()), and equal to the
same rows streamed afterwards (pgoutput's text). (That the text path
stores what the contract says is test_values_*'s business; the harness's
comparison with the source reads arrays through to_json(), which writes
timestamps in another form.)
"""

import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

COLS = [
    ("b", "bool"), ("i2", "int2"), ("i4", "int4"), ("i8", "int8"), ("o", "oid"),
    ("f4", "float4"), ("f8", "float8"), ("n", "numeric"), ("n10", "numeric(10,2)"),
    ("by", "bytea"), ("tx", "text"), ("vc", "varchar(20)"), ("ch", "char(4)"),
    ("nm", "name"), ("j", "json"), ("jb", "jsonb"), ("u", "uuid"), ("d", "date"),
    ("ts", "timestamp"), ("tz", "timestamptz"), ("t", "time"), ("ttz", "timetz"),
    ("iv", "interval"), ("ip", "inet"), ("cn", "cidr"),
    ("ab", "bool[]"), ("ai2", "int2[]"), ("ai4", "int4[]"), ("ai8", "int8[]"),
    ("ao", "oid[]"), ("af4", "float4[]"), ("af8", "float8[]"), ("an", "numeric[]"),
    ("an10", "numeric(10,2)[]"), ("aby", "bytea[]"), ("atx", "text[]"),
    ("avc", "varchar[]"), ("ach", "char(3)[]"), ("anm", "name[]"), ("aj", "json[]"),
    ("ajb", "jsonb[]"), ("au", "uuid[]"), ("ad", "date[]"), ("ats", "timestamp[]"),
    ("atz", "timestamptz[]"), ("at", "time[]"), ("attz", "timetz[]"),
    ("aiv", "interval[]"), ("aip", "inet[]"), ("acn", "cidr[]"),
]

# per column, the values of rows 1.. (a row past a column's list has NULL)
VALUES = {
    "b": ["t", "f"],
    "i2": ["32767", "-32768", "0"],
    "i4": ["2147483647", "-2147483648"],
    "i8": ["9223372036854775807", "-9223372036854775808"],
    "o": ["4294967295", "0"],
    "f4": ["0.1", "1e-45", "3.4028235e38", "-3.4028235e38", "NaN", "-0", "0",
           "Infinity", "-Infinity", "1.17760704e8", "16777216", "1e6", "100000",
           "0.0001", "1.5e-5", "3.1415927", "-1.1754944e-38", "1.1754942e-38",
           "123456.79", "0.3", "2.7182817", "1e-10", "9.999999e-5", "999999.94"],
    "f8": ["0.1", "5e-324", "1.7976931348623157e308", "NaN", "-0", "Infinity",
           "-Infinity", "3.0892612233637952e16", "1e15", "1e14", "123456789012345.6",
           "2.2250738585072014e-308", "0.30000000000000004", "1e-5", "0.0001"],
    "n": ["NaN", "Infinity", "-Infinity", "0", "-0.000000000000000000000000000001",
          "123456789012345678901234567890.123456789", "1e-20", "10000", "0.00"],
    "n10": ["99999999.99", "-0.01", "0", "12.30", "NaN", "0.10"],
    "by": ["\\x", "\\x00ff7f80", "\\xdeadbeef"],
    "tx": ["", "é☕𝄞", "a\tb\nc\\d\"e'", "NULL", " lead and trail "],
    "vc": ["", "x", "abcdefghijklmnopqrst"],
    "ch": ["", "ab", "abcd", "é☕"],
    "nm": ["", "pg_class", "n" * 63],
    "j": ["null", "{\"a\": [1, 2.50, \"x\"]}", "[]", "\"s\"", "1.5e300"],
    "jb": ["null", "{\"b\": {\"c\": \"é\"}, \"a\": 1}", "[1, 2.50]", "\"s\"", "1.5e300"],
    "u": ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "00000000-0000-0000-0000-000000000000",
          "ffffffff-ffff-ffff-ffff-ffffffffffff"],
    "d": ["infinity", "-infinity", "4714-11-24 BC", "5874897-12-31", "2000-02-29",
          "0001-01-01", "0001-12-31 BC"],
    "ts": ["infinity", "-infinity", "4714-11-24 00:00:00 BC",
           "294276-12-31 23:59:59.999999", "2024-02-29 12:34:56.12", "2000-01-01"],
    "tz": ["infinity", "-infinity", "2024-03-31 01:30:00.000001+02",
           "1900-01-01 00:00:00+00:34:39", "0044-03-15 12:00:00.123 BC"],
    "t": ["00:00:00", "24:00:00", "23:59:59.999999", "12:34:56.789", "00:00:00.000001",
          "13:00:00.5"],
    "ttz": ["00:00:00+00", "24:00:00-15:59", "12:00:00+05:30", "00:00:00.5-14",
            "10:00:00+00:34:39", "23:59:59.999999+15:59:59", "12:00:00-08"],
    "iv": ["0", "1 mon", "12 mons", "1 year 2 mons", "-1 years -2 mons", "1 day", "-1 days",
           "-1 years -2 mons +3 days -01:02:03.000001", "-1 days +01:00:00",
           "1 day -01:00:00", "100:00:00", "2 years 1 mon 00:00:00.5", "-00:00:00.000001",
           "-2147483648 days", "2147483647 mons", "-2147483648 mons"],
    "ip": ["192.168.0.1", "192.168.0.1/24", "0.0.0.0/0", "::1", "::", "2001:db8::1/64",
           "::ffff:1.2.3.4", "::1.2.3.4", "1:0:0:2::3", "1::2:0:0:3:0", "1:0:2:0:3:0:4:0",
           "fe80::1234:0:0:abcd/128", "::fffe:102:304", "1::", "::2", "::1.2.0.0/120",
           "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "255.255.255.255/32", "::/0"],
    "cn": ["10.0.0.0/8", "10.1.2.3/32", "0.0.0.0/0", "2001:db8::/32", "::/0",
           "::ffff:1.2.3.4/128", "fe80::/10", "::1.2.3.0/120"],
    "ab": ["{t,f,NULL}", "{}", "{{t},{f}}"],
    "ai2": ["{32767,-32768}", "[0:1]={1,2}"],
    "ai4": ["{1,NULL,-2147483648}", "{}", "{{1,2},{3,4}}", "[-3:-2][5:6]={{1,2},{3,4}}",
            "{{{1,2}},{{3,NULL}}}", "{NULL}", "{{NULL,NULL}}"],
    "ai8": ["{9223372036854775807,-9223372036854775808}"],
    "ao": ["{0,4294967295}"],
    "af4": ["{0.1,1e-45,3.4028235e38,NaN,-0,Infinity,-Infinity,NULL}",
            "{{1.17760704e8,16777216},{1e6,100000}}", "{}"],
    "af8": ["{0.1,5e-324,1.7976931348623157e308,NaN,-0,-Infinity,NULL}",
            "{3.0892612233637952e16,1e15,1e14,123456789012345.6,1e-5}"],
    "an": ["{NaN,Infinity,-Infinity,0.00,-1.5,NULL}", "{{1},{2.000}}"],
    "an10": ["{1.5,-0.01,NULL}"],
    "aby": ["{\"\\\\x\",\"\\\\x00ff\",NULL}"],
    "atx": ["{\"\",\"NULL\",NULL,\"a \\\"q\\\" \\\\\",\"é☕\",\" sp \",\"{}\"}",
            "{{a,b},{c,d}}", "{}"],
    "avc": ["{x,\"\",NULL}"],
    "ach": ["{a,\"\",abc,NULL}"],
    "anm": ["{pg_class,\"\"}"],
    "aj": ["{\"{\\\"a\\\": [1, 2]}\",null,\"1.5\",NULL}"],
    "ajb": ["{\"{\\\"a\\\": [1, 2]}\",\"null\",\"\\\"s\\\"\",NULL}"],
    "au": ["{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}"],
    "ad": ["{infinity,-infinity,\"4714-11-24 BC\",2000-02-29,NULL}"],
    "ats": ["{infinity,\"2024-02-29 12:34:56.12\",\"4714-11-24 00:00:00 BC\",NULL}"],
    "atz": ["{-infinity,\"2024-03-31 01:30:00.000001+02\",\"0044-03-15 12:00:00 BC\",NULL}"],
    "at": ["{00:00:00,24:00:00,12:34:56.789,NULL}"],
    "attz": ["{00:00:00+00,\"12:00:00+05:30\",10:00:00+00:34:39,NULL}"],
    "aiv": ["{0,\"-1 years -2 mons +3 days -01:02:03.000001\",\"1 day -01:00:00\",NULL}",
            "{{\"1 mon\"},{\"-1 days\"}}"],
    "aip": ["{192.168.0.1,192.168.0.1/24,::1,::ffff:1.2.3.4,2001:db8::1/64,NULL}"],
    "acn": ["{10.0.0.0/8,2001:db8::/32,::/0,NULL}"],
}

STREAMED = 1000000   # a copied row's id + STREAMED is its streamed twin


def random_rows(ctx, base, count):
    """Random floats, intervals, times and addresses, ids base + 1..."""
    rnd = random.Random(25)
    f4, f8, af4, af8 = [], [], [], []
    while len(f4) < count:
        (x,) = struct.unpack("<f", rnd.getrandbits(32).to_bytes(4, "little"))
        (y,) = struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))
        if x != x or y != y or x in (float("inf"), float("-inf")) or \
           y in (float("inf"), float("-inf")):
            continue
        f4.append("%.9g" % x)   # 9 digits read back as the same float4
        f8.append(repr(y))
    for k in range(0, count):
        af4.append("{%s}" % ",".join(f4[k:k + 4]))
        af8.append("{%s}" % ",".join(f8[k:k + 3]))
    ctx.sql("INSERT INTO t (id, f4, f8, af4, af8) "
            "SELECT %s + g.i, g.x::float4, g.y::float8, g.ax::float4[], g.ay::float8[] "
            "FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::text[]) "
            "AS g(i, x, y, ax, ay)",
            base, list(range(1, count + 1)), f4, f8, af4, af8)
    # SQL's own random values for the rest, each row also in an array
    ctx.sql("SELECT setseed(0.25)")
    ctx.sql("""
        INSERT INTO t (id, iv, t, ttz, ip, cn, n, ts, tz)
        SELECT %(b)s + g,
               (random() * 4000 - 2000)::int * interval '1 mon'
                 + (random() * 4000 - 2000)::int * interval '1 day'
                 + (random() * 2e12 - 1e12)::bigint * interval '1 microsecond',
               '00:00'::time + (random() * 86400e6)::bigint * interval '1 microsecond',
               (('00:00'::time + (random() * 86400e6)::bigint * interval '1 microsecond')::text
                 || (ARRAY['+00', '+05:30', '-08', '+14', '-12:45', '+00:34:39',
                           '-15:59:59'])[1 + g %% 7])::timetz,
               CASE WHEN g %% 2 = 0
                    THEN set_masklen('0.0.0.0'::inet + (random() * 4294967295)::bigint,
                                     (random() * 32)::int)
                    ELSE set_masklen(('::'::inet + (random() * 9e18)::bigint)
                                     + ((random() * 9e18)::bigint), (random() * 128)::int)
               END,
               CASE WHEN g %% 2 = 0
                    THEN network(set_masklen('0.0.0.0'::inet
                                 + (random() * 4294967295)::bigint, (random() * 32)::int))
                    ELSE network(set_masklen('ffff::'::inet + (random() * 9e18)::bigint,
                                 (random() * 128)::int))
               END,
               round((random() * 2e6 - 1e6)::numeric, (random() * 12)::int),
               '2000-01-01'::timestamp + (random() * 2e16 - 1e16)::bigint
                 * interval '1 microsecond',
               '2000-01-01'::timestamptz + (random() * 2e16 - 1e16)::bigint
                 * interval '1 microsecond'
        FROM generate_series(1, %(n)s) g""" % {"b": base + count, "n": count})
    ctx.sql("UPDATE t SET aiv = ARRAY[iv, -iv], at = ARRAY[t, NULL], attz = ARRAY[ttz],"
            " aip = ARRAY[ip, NULL], acn = ARRAY[[cn], [cn]], an = ARRAY[n],"
            " ats = ARRAY[ts], atz = ARRAY[tz] WHERE id > %s" % (base + count))


def insert_rows(ctx):
    values = dict(VALUES)
    nrows = max(len(v) for v in values.values())
    names = [c for c, _ in COLS]
    for k in range(nrows):
        row = [values.get(c, [])[k] if k < len(values.get(c, [])) else None for c in names]
        ctx.sql("INSERT INTO t (id, %s) VALUES (%%s, %s)"
                % (", ".join(names), ", ".join(["%s"] * len(names))), k + 1, *row)
    ctx.sql("INSERT INTO t (id) VALUES (%s)" % (nrows + 1))
    random_rows(ctx, 100, 1500)
    # every field at its end: infinite from PostgreSQL 17, finite before
    # (the least only by arithmetic); and next to them. Before 15 such
    # hours do not fit interval_out's int (it fails)
    if ctx.server_version < 150000:
        return
    ctx.sql("INSERT INTO t (id, iv, aiv) VALUES (%d, %s, ARRAY[%s])"
            % (nrows + 4,
               "'178956970 years 7 mons 2147483647 days 2562047788:00:54.775806'",
               "'-178956970 years -8 mons -2147483648 days -2562047788:00:54.775807'::interval"))
    if ctx.server_version >= 170000:
        top, bottom = "'infinity'::interval", "'-infinity'::interval"
    else:
        top = "'178956970 years 7 mons 2147483647 days 2562047788:00:54.775807'::interval"
        bottom = ("'-178956970 years -8 mons -2147483648 days'::interval "
                  "+ '-2562047788:00:54.775807' - '0.000001 s'")
    ctx.sql("INSERT INTO t (id, iv, aiv) VALUES (%d, %s, ARRAY[%s, %s]), (%d, %s, NULL)"
            % (nrows + 2, top, bottom, top, nrows + 3, bottom))


def cells(ctx, path):
    names = ["id"] + [c for c, _ in COLS]
    sel = ", ".join("quote(%s), typeof(%s)" % (harness.qident(c), harness.qident(c))
                    for c in names[1:])
    return {r[0]: r[1:] for r in ctx.mirror_query(path, "SELECT id, %s FROM t" % sel)}


def compare(what, a, b, ids):
    names = [c for c, _ in COLS]
    bad = []
    for i in ids:
        ra, rb = a[i[0]], b[i[1]]
        for k, name in enumerate(names):
            if ra[2 * k:2 * k + 2] != rb[2 * k:2 * k + 2]:
                bad.append("row %d, %s: %r against %r" % (i[0], name, ra[2 * k:2 * k + 2],
                                                          rb[2 * k:2 * k + 2]))
    check(not bad, "%s: %d cells differ:\n  %s" % (what, len(bad), "\n  ".join(bad[:40])))


def test(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, %s)"
            % ", ".join("%s %s" % (c, ty) for c, ty in COLS))
    ctx.sql("CREATE PUBLICATION pub FOR TABLE t")
    insert_rows(ctx)
    nrows = ctx.sql1("SELECT count(*) FROM t")

    bin_path, bin_slot = ctx.path("bin.db"), ctx.slot("bin")
    _, _, err = ctx.once(bin_path, bin_slot, "pub", "-v", "-v")
    check('copying "public.t" in binary format' in err,
          "t was not copied in binary format:\n%s" % err)
    text_path, text_slot = ctx.path("text.db"), ctx.slot("text")
    _, _, err = ctx.once(text_path, text_slot, "pub", "-v", "-v",
                         env={"PGMIRROR_TEST_COPY_FORMAT": "text"})
    check('copying "public.t" in text format' in err,
          "PGMIRROR_TEST_COPY_FORMAT=text did not copy t in text format:\n%s" % err)

    binary, text = cells(ctx, bin_path), cells(ctx, text_path)
    check(len(binary) == nrows and sorted(binary) == sorted(text),
          "the mirrors hold %d and %d rows, the source %d" % (len(binary), len(text), nrows))
    compare("binary copy against text copy", binary, text, [(i, i) for i in sorted(binary)])

    # the same rows streamed (pgoutput's text) into the binary copy's mirror
    ctx.sql("INSERT INTO t SELECT id + %d, %s FROM t"
            % (STREAMED, ", ".join(c for c, _ in COLS)))
    ctx.once(bin_path, bin_slot, "pub")
    both = cells(ctx, bin_path)
    compare("binary copy against the stream", both, both,
            [(i, i + STREAMED) for i in sorted(binary)])
    ctx.checked(bin_path)
    ctx.checked(text_path)


harness.main(test)

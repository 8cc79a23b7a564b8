"""A key of numeric, date, timestamp, timestamptz, char(n), bool, float8,
float4, time, interval, bytea or a domain (over float8 here) orders in
pgmirror as the source orders it: the server sorts random and edge values
of each type (ORDER BY, as the copy in parts reads them: char(n) COLLATE
"C"), and tests/unit/key_order makes of each value the Value pgmirror
makes of it, from its text and from its binary form (the two must be
equal), and the key a copy in parts keeps of it (through copy_state's
text), and compares every value with every key: each comparison must
agree with the server's order, equal values included (1.0 = 1.00; 'a' =
'a  ' in char(n); -0 = 0 and NaN = NaN in float; '1 mon' = '30 days'). The literal a copy goes on after must then be that
value on the server, and the copy's own condition "key > literal" must
leave exactly the values the server sorts after it.
"""

import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

N = 1200          # random values per type
SAMPLES = 40      # values whose "key > literal" the server counts


def numeric_text(rng, idigits, fdigits):
    i = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, idigits))) or "0"
    f = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, fdigits)))
    return "%s%s%s" % (rng.choice(["", "-"]), i, "." + f if f else "")


def numeric_values(rng, version, typmod):
    if typmod is None:
        vals = [numeric_text(rng, 25, 25) for _ in range(N)]
        vals += ["%s%de%d" % (rng.choice(["", "-"]), rng.randint(1, 999), rng.randint(-120, 120))
                 for _ in range(N // 4)]
        vals += ["0", "0.0", "0.000", "-0", "1", "1.0", "1.00", "-1", "-1.000", "0.5", "-0.5",
                 "9.9999999999999999999", "10", "1e100", "-1e100", "1e-100", "-1e-100",
                 "123456789012345678901234567890.123456789", "NaN"]
        if version >= 140000:
            vals += ["Infinity", "-Infinity"]
        return vals
    p, s = typmod
    if s < 0:
        vals = [str(rng.randint(-10 ** p + 1, 10 ** p - 1) * 10 ** -s) for _ in range(N)]
    elif s > p:  # 0.000ddd: s - p zeros after the point
        vals = ["%s0.%s%0*d" % (rng.choice(["", "-"]), "0" * (s - p), p, rng.randint(0, 10 ** p - 1))
                for _ in range(N)]
    else:
        vals = [numeric_text(rng, p - s, s) for _ in range(N)]
    vals += ["0", "NaN", "1", "-1"] if s <= 0 or p > s else ["0", "NaN"]
    return vals


def time_values(rng, typ):
    """Random times over the whole range, the eras, the edges."""
    days = [rng.randint(-2451545, 106000000 if typ != "date" else 2145031948) for _ in range(N)]
    days += [rng.randint(-800000, 3000000) for _ in range(N // 2)]  # 190 BC to 10213 AD
    edges = ["infinity", "-infinity", "0001-01-01", "0001-12-31 BC", "0002-01-01 BC",
             "9999-12-31", "10000-01-01", "2000-02-29", "4713-01-01 BC"]
    if typ != "date":
        edges += ["2000-01-01 00:00:00.5", "2000-01-01 00:00:00.000001", "1999-12-31 23:59:59.999999",
                  "0044-03-15 12:00:00 BC", "294276-12-31 23:59:59.999999", "10000-01-01 00:00:01",
                  "0001-01-01 00:00:00.25 BC"]
    if typ == "timestamptz":
        edges += ["2020-06-01 12:00:00+05:45", "1900-01-01 00:00:00 Europe/Amsterdam",
                  "1850-06-01 12:00:00 Asia/Kolkata", "2020-06-01 06:15:00+00"]
    return days, edges


def bpchar_values(rng, n):
    alphabet = ["a", "b", "Z", "~", "0", " ", " ", "\u00e9", "\u00a0", "\u4e2d"]
    vals = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, n))) for _ in range(N)]
    return vals + ["", " ", "a", "a ", "a  ", "ab", "ab "]


def float_values(rng, single):
    """Random floats over every exponent, and the edges."""
    top = 37 if single else 307
    vals = ["%s%.*fe%d" % (rng.choice(["", "-"]), rng.randint(0, 17), rng.uniform(1, 10),
                           rng.randint(-top, top)) for _ in range(N)]
    vals += [repr(rng.uniform(-1000, 1000)) for _ in range(N // 4)]
    vals += ["%d" % rng.randint(-20, 20) for _ in range(N // 10)]
    vals += ["NaN", "NaN", "Infinity", "-Infinity", "0", "-0", "0.1", "0.3", "1", "-1"]
    if single:
        vals += ["1.4e-45", "-1.4e-45", "3.4028235e38", "-3.4028235e38", "1.17549435e-38",
                 "0.100000001", "16777216", "16777217"]
    else:
        vals += ["5e-324", "-5e-324", "1.7976931348623157e308", "-1.7976931348623157e308",
                 "2.2250738585072014e-308", "0.30000000000000004", "9007199254740993"]
    return vals


def interval_values(rng, version):
    """Random intervals of mixed signs, spans written several ways, edges."""
    def usecs(u):
        """u microseconds; before 15 a field of an interval's input is an
        int, so past 2^31 they are written as seconds there."""
        if version >= 150000:
            return "%d microseconds" % u
        return "%s%d.%06d seconds" % ("-" if u < 0 else "", abs(u) // 10 ** 6, abs(u) % 10 ** 6)

    vals = ["%d mons %d days %s" % (rng.randint(-30, 30), rng.randint(-400, 400),
                                    usecs(rng.randint(-10 ** 11, 10 ** 11)))
            for _ in range(N)]
    vals += ["%d years %d days" % (rng.randint(-5, 5), rng.randint(-5, 5)) for _ in range(N // 10)]
    vals += ["1 mon", "30 days", "720 hours", "1 year", "12 mons", "360 days", "8640 hours",
             "0", "-0.000001 seconds", "0.000001 seconds", "1 day", "24 hours", "-1 day",
             "-24 hours", "1 mon -30 days", "1 mon -29 days", "29 days 24 hours",
             "178000000 years", "-178000000 years", "2147483647 days", "-2147483648 days",
             "2147483647 mons", "-2147483648 mons",
             "1 year 2 mons -3 days 04:05:06.5", "-1 year -2 mons +3 days -04:05:06.5"]
    if version >= 150000:
        vals += ["9223372036854775807 microseconds", "-9223372036854775807 microseconds"]
    if version >= 170000:
        vals += ["infinity", "-infinity"]
    return vals


def fill(ctx, table, typ, rng, version):
    """Makes table (v typ) with values of typ; returns the type's base name."""
    base = typ.split("(")[0]
    ctx.sql("CREATE TABLE %s (v %s)" % (table, typ))
    if base == "numeric":
        typmod = tuple(int(x) for x in typ[8:-1].split(",")) if "(" in typ else None
        vals = numeric_values(rng, version, typmod)
        ctx.sql("INSERT INTO %s SELECT x::%s FROM unnest(%%s::text[]) x" % (table, typ), vals)
    elif base in ("date", "timestamp", "timestamptz"):
        days, edges = time_values(rng, base)
        micros = [rng.randint(0, 86400 * 10 ** 6 - 1) for _ in days]
        start = "timestamptz '2000-01-01 00:00:00+00'" if base == "timestamptz" else \
            "timestamp '2000-01-01'"
        if base == "date":
            ctx.sql("INSERT INTO %s SELECT date '2000-01-01' + d FROM unnest(%%s::int[]) d"
                    % table, days)
        else:
            ctx.sql("INSERT INTO %s SELECT %s + d * interval '1 day' + u * interval '1 microsecond' "
                    "FROM unnest(%%s::int[], %%s::int8[]) AS x(d, u)" % (table, start),
                    days, micros)
        ctx.sql("INSERT INTO %s SELECT x::%s FROM unnest(%%s::text[]) x" % (table, typ), edges)
    elif base in ("bpchar", "char", "character"):
        n = int(typ.split("(")[1][:-1]) if "(" in typ else 12
        ctx.sql("INSERT INTO %s SELECT x FROM unnest(%%s::text[]) x" % table,
                bpchar_values(rng, n))
        base = "bpchar"
    elif base in ("float8", "float4", "dfloat8"):
        vals = float_values(rng, base == "float4")
        ctx.sql("INSERT INTO %s SELECT x::%s FROM unnest(%%s::text[]) x" % (table, typ), vals)
        base = "float8" if base == "dfloat8" else base
    elif base == "time":
        micros = [rng.randint(0, 86400 * 10 ** 6) for _ in range(N)]
        ctx.sql("INSERT INTO %s SELECT time '00:00' + u * interval '1 microsecond' "
                "FROM unnest(%%s::int8[]) u" % table, micros)
        ctx.sql("INSERT INTO %s SELECT x::time FROM unnest(%%s::text[]) x" % table,
                ["00:00:00", "24:00:00", "23:59:59.999999", "12:00:00", "12:00:00.5",
                 "00:00:00.000001"])
    elif base == "interval":
        ctx.sql("INSERT INTO %s SELECT x::interval FROM unnest(%%s::text[]) x" % table,
                interval_values(rng, version))
    elif base == "bytea":
        alphabet = ["00", "01", "0a", "5c", "61", "7f", "80", "fe", "ff"]
        vals = ["\\x" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
                for _ in range(N)]
        vals += ["\\x", "\\x00", "\\x0000", "\\xff", "\\xffff", "\\x80"]
        ctx.sql("INSERT INTO %s SELECT x::bytea FROM unnest(%%s::text[]) x" % table, vals)
    elif base == "bool":
        ctx.sql("INSERT INTO %s SELECT random() < 0.5 FROM generate_series(1, 50)" % table)
    return base


def check_type(ctx, idx, typ, rng, version, tool):
    table = "k%d" % idx
    base = fill(ctx, table, typ, rng, version)
    collate = ' COLLATE "C"' if base == "bpchar" else ""
    send = {"numeric": "numeric_send", "date": "date_send", "timestamp": "timestamp_send",
            "timestamptz": "timestamptz_send", "bpchar": "bpcharsend", "bool": "boolsend",
            "float8": "float8send", "float4": "float4send", "time": "time_send",
            "interval": "interval_send", "bytea": "byteasend"}[base]
    out = {"numeric": "numeric_out", "date": "date_out", "timestamp": "timestamp_out",
           "timestamptz": "timestamptz_out", "bpchar": "bpcharout", "bool": "boolout",
           "float8": "float8out", "float4": "float4out", "time": "time_out",
           "interval": "interval_out", "bytea": "byteaout"}[base]
    # a domain's values are its base type's (the mirror's and the copy's)
    oid, typmod = ctx.sql("SELECT CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, "
                          "CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END "
                          "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                          "WHERE a.attrelid = %s::regclass AND a.attname = 'v'", table)[0]
    rows = ctx.sql("SELECT dense_rank() OVER (ORDER BY v%s), %s(v)::text, "
                   "encode(convert_to(%s(v)::text, 'UTF8'), 'hex'), encode(%s(v), 'hex') "
                   "FROM %s ORDER BY v%s" % (collate, out, out, send, table, collate))
    # before 12 pgmirror reads a float4 as text only (its binary value has
    # no shortest decimal there)
    binary = base != "float4" or version >= 120000
    feed = "".join("%d %d %d x%s %s\n" % (oid, typmod, r, h, "x" + b if binary else "-")
                   for r, _, h, b in rows)
    p = subprocess.run([tool, str(version)], input=feed.encode(), capture_output=True,
                       timeout=300)
    err = p.stderr.decode(errors="replace")
    harness.log("%s: %s" % (typ, err.strip().splitlines()[-1] if err.strip() else "(nothing)"))
    check(p.returncode == 0, "%s: pgmirror's key order is not the server's:\n%s" % (typ, err))
    lits = [bytes.fromhex(x[1:]).decode() for x in p.stdout.decode().split()]
    check(len(lits) == len(rows), "%s: %d literals for %d values" % (typ, len(lits), len(rows)))
    texts = [t for _, t, _, _ in rows]
    bad = ctx.sql("SELECT v, l FROM unnest(%%s::text[], %%s::text[]) AS x(v, l) "
                  "WHERE NOT (v::%s = l::%s)" % (base, base), texts, lits)
    check(not bad, "%s: literals that are not their value on the server: %s" % (typ, bad[:10]))
    # the copy's condition, as it goes on after a value (session_copy.c)
    for i in rng.sample(range(len(rows)), min(SAMPLES, len(rows))):
        rank = rows[i][0]
        after = sum(1 for r in rows if r[0] > rank)
        n = ctx.sql1("SELECT count(*) FROM %s WHERE (v%s) > (%%s)" % (table, collate), lits[i])
        check(n == after, "%s: after %r the copy would read %d rows; %d sort after it"
              % (typ, lits[i], n, after))
    return len(rows)


def test(ctx):
    tool = os.environ.get("PGMIRROR_KEY_ORDER")
    check(tool and os.access(tool, os.X_OK),
          "PGMIRROR_KEY_ORDER=%r: no key_order program (make check builds it)" % tool)
    seed = int(os.environ.get("SEED", "0")) or random.randrange(1, 10 ** 9)
    harness.log("SEED=%d" % seed)
    rng = random.Random(seed)
    version = int(ctx.sql1("SHOW server_version_num"))
    # pgmirror's own session settings (session.c), under which it reads text
    ctx.sql("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET extra_float_digits = 3; "
            "SET IntervalStyle = 'postgres'; SET bytea_output = 'hex'")
    ctx.sql("DROP DOMAIN IF EXISTS dfloat8; CREATE DOMAIN dfloat8 AS float8")
    types = ["numeric", "numeric(15,5)", "numeric(15,0)", "numeric(7,2)", "numeric(15,15)",
             "numeric(30,10)", "date", "timestamp", "timestamptz", "char(8)", "bpchar", "bool",
             "float8", "float4", "dfloat8", "time", "interval", "bytea"]
    if version >= 150000:  # a scale past the precision, or below 0
        types += ["numeric(6,300)", "numeric(12,-3)", "numeric(4,6)"]
    total = 0
    for idx, typ in enumerate(types):
        total += check_type(ctx, idx, typ, rng, version, tool)
    harness.log("%d values of %d types in the server's order" % (total, len(types)))


harness.main(test)

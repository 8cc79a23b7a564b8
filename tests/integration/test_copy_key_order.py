"""A key of numeric, date, timestamp, timestamptz, char(n) or bool orders in
pgmirror as the source orders it: the server sorts random and edge values
of each type (ORDER BY, as the copy in parts reads them: char(n) COLLATE
"C"), and tests/unit/key_order makes of each value the Value pgmirror
makes of it, from its text and from its binary form (the two must be
equal), and the key a copy in parts keeps of it (through copy_state's
text), and compares every value with every key: each comparison must
agree with the server's order, equal values included (1.0 = 1.00; 'a' =
'a  ' in char(n)). The literal a copy goes on after must then be that
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
    elif base == "bool":
        ctx.sql("INSERT INTO %s SELECT random() < 0.5 FROM generate_series(1, 50)" % table)
    return base


def check_type(ctx, idx, typ, rng, version, tool):
    table = "k%d" % idx
    base = fill(ctx, table, typ, rng, version)
    collate = ' COLLATE "C"' if base == "bpchar" else ""
    send = {"numeric": "numeric_send", "date": "date_send", "timestamp": "timestamp_send",
            "timestamptz": "timestamptz_send", "bpchar": "bpcharsend", "bool": "boolsend"}[base]
    out = {"numeric": "numeric_out", "date": "date_out", "timestamp": "timestamp_out",
           "timestamptz": "timestamptz_out", "bpchar": "bpcharout", "bool": "boolout"}[base]
    oid, typmod = ctx.sql("SELECT atttypid, atttypmod FROM pg_attribute WHERE attrelid = %s::regclass "
                          "AND attname = 'v'", table)[0]
    rows = ctx.sql("SELECT dense_rank() OVER (ORDER BY v%s), %s(v)::text, "
                   "encode(convert_to(%s(v)::text, 'UTF8'), 'hex'), encode(%s(v), 'hex') "
                   "FROM %s ORDER BY v%s" % (collate, out, out, send, table, collate))
    feed = "".join("%d %d %d x%s x%s\n" % (oid, typmod, r, h, b) for r, _, h, b in rows)
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
    ctx.sql("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET extra_float_digits = 3")
    types = ["numeric", "numeric(15,5)", "numeric(15,0)", "numeric(7,2)", "numeric(15,15)",
             "numeric(30,10)", "date", "timestamp", "timestamptz", "char(8)", "bpchar", "bool"]
    if version >= 150000:  # a scale past the precision, or below 0
        types += ["numeric(6,300)", "numeric(12,-3)", "numeric(4,6)"]
    total = 0
    for idx, typ in enumerate(types):
        total += check_type(ctx, idx, typ, rng, version, tool)
    harness.log("%d values of %d types in the server's order" % (total, len(types)))


harness.main(test)

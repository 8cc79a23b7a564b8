"""A first sync cut again and again goes on inside a table whose key is not
integers or text: a numeric key (NaN and the infinities at its ends, scales
with trailing zeros), a timestamptz key (BC, years past 9999, the
infinities), a composite key of date, char(n), bool and numeric(p,s), a
float8 key (NaN and the infinities at its ends, 17-digit values), a key
of a domain over a domain over text (which, between tries, is made to
refuse the last key with a constraint NOT VALID), and a composite key of time (24:00:00
last), interval (of mixed signs) and bytea (each a prefix of the next).
Each table is copied through a slow link (linkproxy.py) that the test cuts
in the middle of the copy, three times, in cron mode (--once, exit 1, run
again), and the composite one also in service mode (it tries again by
itself); after each cut the rows the copy stored are in the mirror (the
progress inside the table survives the cut: a copy made whole would leave
nothing), and the source changes before the next try: updates, deletes,
inserts, key changes inside the copied part, across its last key and
beyond it. At the end the mirror equals the source row by row (exactly
once), the tries read the table about once in all, and the stream goes on
from the parts' positions.

Each row has g, its place in the key order: the key is a function of g
that rises with it, so the test can name rows before and after the copy's
last key, and make new keys between them (odd g).
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check  # noqa: E402
import copyparts  # noqa: E402
from copyparts import link_args  # noqa: E402

ROWS = 30000
PART_ROWS = 1000
CUTS = 3
ENV = {"PGMIRROR_TEST_PART_ROWS": str(PART_ROWS)}
RATE = 500000

# name: (key columns and types, key expressions of {g}, first g, specials)
# specials: (key values, g) of rows at the ends of the order
TABLES = {
    "r_num": ([("id", "numeric")], ["({g}) * 0.0137"], -ROWS,
              [("'NaN'", 10 ** 9)]),
    "r_tstz": ([("ts", "timestamptz")],
               ["timestamptz '2000-01-01 00:00:00+00' + ({g}) * interval '53 days 0.000123 seconds'"],
               -ROWS, [("'infinity'", 10 ** 9), ("'-infinity'", -10 ** 9),
                       (None, 70000), (None, 70002)]),
    "r_comp": ([("d", "date"), ("c", "char(3)"), ("b", "bool"), ("n", "numeric(9,2)")],
               ["date '0100-01-01 BC' + (({g}) / 16)::int * 37",
                "(ARRAY['a', 'ab', 'b', 'b z'])[(({g}) / 4) % 4 + 1]",
                "(({g}) / 2) % 2 = 1", "(({g}) % 2) * 1.25 - 3.5"], 0, []),
}
TABLES.update({
    "r_f8": ([("f", "float8")], ["({g})::float8 / 7"], -ROWS,
             [("'NaN'", 10 ** 9), ("'Infinity'", 10 ** 9 - 2), ("'-Infinity'", -10 ** 9)]),
    # a domain over a domain over text (test() makes them)
    "r_dom": ([("c", "dcode2")], ["lpad((({g}) + 100000)::text, 8, '0')"], 0, []),
    "r_tvx": ([("t", "time"), ("v", "interval"), ("x", "bytea")],
              ["time '00:00' + (({g}) / 16) * interval '1.5 seconds'",
               "make_interval(months => (({g}) / 4) % 4) - make_interval(days => (({g}) / 4) % 4)",
               "decode(repeat('ab', (({g}) % 4)::int), 'hex')"], 0,
              [("'24:00:00', '1 year', '\\xff'", 10 ** 9)]),
})
CRON = list(TABLES)
TABLES["r_svc"] = TABLES["r_comp"]  # the same, for a service


def key_sql(table, g):
    return ", ".join(e.format(g=g) for e in TABLES[table][1])


def keys(table):
    return ", ".join(n for n, _ in TABLES[table][0])


def setup(ctx, table, version):
    cols, exprs, first, specials = TABLES[table]
    ctx.sql("CREATE TABLE %s (%s, g int8 NOT NULL, payload text, PRIMARY KEY (%s))"
            % (table, ", ".join("%s %s" % c for c in cols), keys(table)))
    ctx.sql("INSERT INTO %s SELECT %s, g, 'p' || g FROM generate_series(%d, %d, 2) g"
            % (table, key_sql(table, "g"), first, first + 2 * ROWS - 2))
    if table == "r_num" and version >= 140000:
        specials = specials + [("'Infinity'", 10 ** 9 - 2), ("'-Infinity'", -10 ** 9)]
    for vals, g in specials:
        ctx.sql("INSERT INTO %s VALUES (%s, %d, 'special')"
                % (table, vals if vals is not None else key_sql(table, g), g))
    ctx.sql("VACUUM ANALYZE %s" % table)


def wait_progress(ctx, path, table, more_than, proc):
    rows, key = copyparts.wait_progress(ctx, path, table, more_than, proc)
    check(key is not None, "pgmirror ended before it stored %d rows of %s in parts (%d "
          "stored; a table copied whole stores none before its end):\n%s"
          % (more_than, table, rows, proc.stderr()))
    return rows, key


def boundary(ctx, table, key):
    """g of the last row at or before the copy's last key (the source's
    order, the copy's collation)."""
    cols = TABLES[table][0]
    lhs = ", ".join(n + (' COLLATE "C"' if t.startswith("char") else "") for n, t in cols)
    rhs = ", ".join("%%s::%s" % t.split("(")[0].replace("char", "bpchar") for _, t in cols)
    return ctx.sql1("SELECT max(g) FROM %s WHERE (%s) <= (%s) AND g > -1000000000"
                    % (table, lhs, rhs), *key)


def pick(ctx, table, lo, hi, n):
    rows = ctx.sql("SELECT g FROM %s WHERE g > %d AND g < %d AND g %% 2 = 0 ORDER BY g "
                   "LIMIT 1 OFFSET %d" % (table, lo, hi, n))
    return rows[0][0] if rows else None


def move(ctx, table, old, new):
    """The row at g old gets the key of g new (unless it is taken)."""
    if old is not None:
        ctx.sql("UPDATE %s SET (%s, g) = (%s, %d) WHERE g = %d AND NOT EXISTS "
                "(SELECT 1 FROM %s WHERE g = %d)"
                % (table, keys(table), key_sql(table, new), new, old, table, new))


def changes(ctx, table, b, r):
    """Changes around g b (the copy's last row), round r."""
    first = TABLES[table][2]
    lo, hi = (b + first) // 2, b + 1000
    for g in (pick(ctx, table, first, b, r), pick(ctx, table, lo, b, 3),
              pick(ctx, table, hi, 10 ** 8, 3)):
        if g is not None:
            ctx.sql("UPDATE %s SET payload = payload || '-u' WHERE g = %d" % (table, g))
    for g in (pick(ctx, table, lo, b, 7), pick(ctx, table, hi, 10 ** 8, 7)):
        if g is not None:
            ctx.sql("DELETE FROM %s WHERE g = %d" % (table, g))
    # new rows: inside the copied part, right after its last key, beyond
    for g in (b - 2 * r - 1, b + 1, b + 2 * r + 1001):
        ctx.sql("INSERT INTO %s SELECT %s, %d, 'new' WHERE NOT EXISTS "
                "(SELECT 1 FROM %s WHERE g = %d)" % (table, key_sql(table, g), g, table, g))
    # key changes: inside to inside, inside to beyond, beyond to inside,
    # beyond onto the last key's neighbour
    move(ctx, table, pick(ctx, table, lo, b, 11), b - 4 * r - 3)
    move(ctx, table, pick(ctx, table, lo, b, 13), b + 4 * r + 2003)
    move(ctx, table, pick(ctx, table, hi, 10 ** 8, 17), b - 4 * r - 5)
    move(ctx, table, pick(ctx, table, hi, 10 ** 8, 19), b + 3)
    # several at once
    a, z = pick(ctx, table, lo, b, 29), pick(ctx, table, hi, 10 ** 8, 29)
    if a is not None and z is not None:
        ctx.sql("BEGIN; UPDATE %s SET payload = 'multi' WHERE g IN (%d, %d); "
                "DELETE FROM %s WHERE g = %d; COMMIT" % (table, a, z, table, a + 2))


def resume(ctx, link, table, version):
    setup(ctx, table, version)
    pub = "pub_" + table
    ctx.sql("CREATE PUBLICATION %s FOR TABLE %s" % (pub, table))
    path, slot = ctx.path(table + ".db"), ctx.slot(table[2:])
    total = ctx.sql1("SELECT count(*) FROM %s" % table)
    stored = 0
    args = link_args(ctx, link, path, slot, pub, "--once", "-v")
    for r in range(1, CUTS + 1):
        rows, key = copyparts.cut_try(
            ctx, link, args, "%s%d" % (table, r), ENV, table, stored, r,
            lambda proc: wait_progress(ctx, path, table, stored + 3 * PART_ROWS, proc))
        after, key = copyparts.progress(ctx, path, table)
        n = ctx.mirror_query(path, "SELECT count(*) FROM %s" % table)[0][0]
        check(after >= rows and n == after and 0 < n < total,
              "try %d: after the cut the mirror holds %d rows of %s (of %d), its copy "
              "stored %d, then %d" % (r, n, table, total, rows, after))
        b = boundary(ctx, table, key)
        harness.log("%s: try %d cut with %d rows stored, last key %s (g %s)"
                    % (table, r, after, key, b))
        stored = after
        changes(ctx, table, b, r)
        # the domain now refuses the last key: the copy's literal beside the
        # key column is read as the base type, without the domain's checks
        if table == "r_dom":
            ctx.sql("ALTER DOMAIN dcode2 ADD CONSTRAINT not_%d CHECK (VALUE <> %%s) NOT VALID"
                    % r, key[0])
        ctx.wait_slot_inactive(slot)
    copyparts.last_try(ctx, args, ENV, table, stored)
    ctx.assert_mirror_equals_source(path, table)
    read = ctx.mirror_query(path, "SELECT copy_rows FROM pgmirror_tables")[0][0]
    check(read < total * 1.1, "the tries stored %d rows in all for a table of %d: a try "
          "started over" % (read, total))
    harness.log("%s: %d tries, %d rows stored in all, %d bytes from the server"
                % (table, CUTS + 1, read, link.bytes_down))
    # the stream goes on from the parts' positions
    changes(ctx, table, ctx.sql1("SELECT max(g) FROM %s WHERE g < 10000000" % table) // 2, 9)
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, table)


def service(ctx, link, version):
    """The same in service mode: it tries again by itself after each cut."""
    table = "r_svc"
    setup(ctx, table, version)
    pub = "pub_" + table
    ctx.sql("CREATE PUBLICATION %s FOR TABLE %s" % (pub, table))
    ctx.create_marker(pub)
    path, slot = ctx.path(table + ".db"), ctx.slot("svc")
    proc = ctx.start(link_args(ctx, link, path, slot, pub, "-v"), tag="service", env=ENV)
    stored = 0
    for r in range(1, CUTS + 1):
        rows, key = wait_progress(ctx, path, table, stored + 3 * PART_ROWS, proc)
        link.cut()
        b = boundary(ctx, table, key)
        changes(ctx, table, b, r)
        stored, _ = copyparts.progress(ctx, path, table)
        check(stored >= rows, "the service lost parts at cut %d (%d rows stored, then %d)"
              % (r, rows, stored))
        harness.log("%s: cut %d with %d rows stored, last key %s (g %s)"
                    % (table, r, rows, key, b))
    ctx.catch_up(path, "pgm_marker", timeout=240, proc=proc)
    ctx.assert_mirror_equals_source(path, table)
    err = proc.stderr()
    check(len(re.findall(r'copy of "public\.%s" goes on after' % table, err)) >= CUTS,
          "the service did not go on after each cut:\n%s" % err)
    changes(ctx, table, ctx.sql1("SELECT max(g) FROM %s" % table) // 2, 9)
    ctx.catch_up(path, "pgm_marker", proc=proc)
    ctx.assert_mirror_equals_source(path, table)
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())


def test(ctx):
    version = int(ctx.sql1("SHOW server_version_num"))
    ctx.sql("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'")
    ctx.sql("CREATE DOMAIN dcode AS text CHECK (VALUE <> ''); "
            "CREATE DOMAIN dcode2 AS dcode CHECK (length(VALUE) < 20)")
    with linkproxy.LinkProxy(rate=RATE, down_only=True) as link:
        parts = {t: (lambda c, lk, t=t: resume(c, lk, t, version)) for t in CRON}
        parts["service"] = lambda c, lk: service(c, lk, version)
        harness.run_parts(ctx, parts, link)


harness.main(test)

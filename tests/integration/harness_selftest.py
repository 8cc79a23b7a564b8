"""Self-test of harness.py, runnable without pgmirror:

    pg_virtualenv -o wal_level=logical /usr/bin/python3 tests/integration/harness_selftest.py

Builds a source table with many types and, by hand, the SQLite table the
contract says pgmirror must produce for it; checks that the comparison
accepts it and rejects each of a series of one-value corruptions (text '1'
for integer 1, a lost duplicate, a timestamp with 3 fraction digits, ...).
Not named test_*.py: it tests the tests, not pgmirror.
"""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PGMIRROR", "/bin/true")
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

SOURCE = r"""
CREATE SCHEMA s;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE s.v (
  id int PRIMARY KEY, b bool, i2 int2, i8 int8, f4 float4, f8 float8,
  n52 numeric(5,2), n numeric(30,1), nu numeric, by bytea, d date, ts timestamp,
  tz timestamptz, j json, jb jsonb, ai int[], at text[], m mood, u uuid,
  iv interval, t text, ch char(5), ip inet);
"""

ROWS = r"""
INSERT INTO s.v VALUES
 (1, true, 32767, 9007199254740993, 1.5, 0.1, 123.45, 12345678901234567890.5,
  'NaN', '\x00ff10', '2024-02-29', '2024-01-02 03:04:05.12',
  '2024-01-02 03:04:05+02', '{"a": [1, 2.50]}', '{"b": null, "a": 1}',
  '{1,2,NULL}', '{"a,b","c\"d",NULL,"NULL",""}', 'happy',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 day 02:03:04', 'x', 'ab', '::1'),
 (2, false, -1, -2, 'NaN', 'Infinity', 5.00, 1, 0.10, '', 'infinity',
  '2024-01-02 03:04:05', '2024-06-30 23:59:59.999999+00', '[]', '{}',
  '{{1,2},{3,4}}', '{}', 'sad', '00000000-0000-0000-0000-000000000000',
  '-1 mons', '', NULL, '10.0.0.1/8'),
 (3, NULL, NULL, NULL, NULL, '-Infinity', NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, NULL, NULL, NULL, NULL, '-Infinity', NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
"""
# row 4 duplicates row 3 except the key; the copy below has both.

MIRROR = r"""
CREATE TABLE s_v (id INTEGER PRIMARY KEY, b INTEGER, i2 INTEGER, i8 INTEGER,
  f4 REAL, f8 REAL, n52 NUMERIC, n TEXT, nu TEXT, by BLOB, d TEXT, ts TEXT,
  tz TEXT, j TEXT, jb TEXT, ai TEXT, at TEXT, m TEXT, u TEXT, iv TEXT, t TEXT, ch TEXT, ip TEXT);
INSERT INTO s_v VALUES
 (1, 1, 32767, 9007199254740993, 1.5, 0.1, 123.45, '12345678901234567890.5',
  'NaN', x'00ff10', '2024-02-29', '2024-01-02 03:04:05.120000',
  '2024-01-02 01:04:05', '{"a":[1,2.5]}', '{"a":1,"b":null}', '[1,2,null]',
  '["a,b","c\"d",null,"NULL",""]', 'happy',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 day 02:03:04', 'x', 'ab   ', '::1'),
 (2, 0, -1, -2, 'NaN', 9e999, 5, '1.0', '0.10', x'', 'infinity',
  '2024-01-02 03:04:05', '2024-06-30 23:59:59.999999', '[]', '{}',
  '[[1,2],[3,4]]', '[]', 'sad', '00000000-0000-0000-0000-000000000000',
  '-1 mons', '', NULL, '10.0.0.1/8'),
 (3, NULL, NULL, NULL, NULL, -9e999, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, NULL, NULL, NULL, NULL, -9e999, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
"""

# (description, SQL applied to the good mirror) -> must be reported
CORRUPTIONS = [
    ("integer stored as text (column declared TEXT)",
     ("i2 INTEGER", "i2 TEXT", "1, 32767, 9007199254740993", "1, '32767', 9007199254740993")),
    ("integer stored as real (column declared REAL)",
     ("i8 INTEGER", "i8 REAL")),
    ("real 1.5 vs integer (column declared BLOB, integer stored)",
     ("f4 REAL", "f4 BLOB", "32767, 9007199254740993, 1.5", "32767, 9007199254740993, 2")),
    ("bool stored as text 't'", "UPDATE s_v SET b = 't' WHERE id = 1"),
    ("real stored as text", "UPDATE s_v SET f4 = '1.5x' WHERE id = 1"),
    ("NaN stored as NULL", "UPDATE s_v SET f4 = NULL WHERE id = 2"),
    ("Infinity stored as text", "UPDATE s_v SET f8 = 'Infinity' WHERE id = 2"),
    ("numeric(5,2) as text", "UPDATE s_v SET n52 = CAST('123.45' AS BLOB) WHERE id = 1"),
    ("big numeric lost precision", "UPDATE s_v SET n = 12345678901234567890.5 WHERE id = 1"),
    ("numeric trailing zero lost", "UPDATE s_v SET nu = '0.1' WHERE id = 2"),
    ("bytea as hex text", "UPDATE s_v SET by = '\\x00ff10' WHERE id = 1"),
    ("timestamp 3 fraction digits", "UPDATE s_v SET ts = '2024-01-02 03:04:05.120' WHERE id = 1"),
    ("timestamptz not in UTC", "UPDATE s_v SET tz = '2024-01-02 03:04:05' WHERE id = 1"),
    ("json differs", "UPDATE s_v SET jb = '{\"a\":2,\"b\":null}' WHERE id = 1"),
    ("array as PG text", "UPDATE s_v SET ai = '{1,2,NULL}' WHERE id = 1"),
    ("array element NULL vs 'NULL'", "UPDATE s_v SET at = '[\"a,b\",\"c\\\"d\",null,null,\"\"]' WHERE id = 1"),
    ("empty string vs NULL", "UPDATE s_v SET t = NULL WHERE id = 2"),
    ("char(n) padding stripped", "UPDATE s_v SET ch = 'ab' WHERE id = 1"),
    ("inet in ::text form", "UPDATE s_v SET ip = '::1/128' WHERE id = 1"),
    ("row missing", "DELETE FROM s_v WHERE id = 4"),
    ("extra row", "INSERT INTO s_v (id, f8) VALUES (5, 1)"),
]


def build_mirror(path, replace=()):
    if os.path.exists(path):
        os.unlink(path)
    script = MIRROR
    for old, new in zip(replace[::2], replace[1::2]):
        check(old in script, "selftest: %r not in MIRROR" % old)
        script = script.replace(old, new, 1)
    con = sqlite3.connect(path)
    con.executescript(script)
    con.commit()
    con.close()


def test(ctx):
    ctx.sql(SOURCE)
    ctx.sql(ROWS)
    path = ctx.path("hand.db")
    build_mirror(path)
    ctx.assert_mirror_equals_source(path, "s.v")
    print("ok: hand-made mirror equals source")

    for desc, q in CORRUPTIONS:
        if isinstance(q, tuple):
            build_mirror(path, q)
        else:
            build_mirror(path)
            con = sqlite3.connect(path)
            con.execute(q)
            con.commit()
            con.close()
        try:
            ctx.assert_mirror_equals_source(path, "s.v")
        except harness.Failure as e:
            print("ok: detected %s: %s" % (desc, str(e).splitlines()[-1].strip()))
            continue
        fail("corruption not detected: %s (%s)" % (desc, q))

    # duplicates matter (REPLICA IDENTITY FULL tables)
    ctx.sql("CREATE TABLE dup (a int, b text)")
    ctx.sql("INSERT INTO dup VALUES (1, 'x'), (1, 'x'), (NULL, NULL)")
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE dup (a INTEGER, b TEXT);"
                      "INSERT INTO dup VALUES (1, 'x'), (NULL, NULL), (NULL, NULL);")
    con.close()
    try:
        ctx.assert_mirror_equals_source(path, "dup")
        fail("duplicate difference not detected")
    except harness.Failure as e:
        print("ok: detected duplicate difference:\n" + str(e))

    # column order
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE co (b TEXT, a INTEGER);")
    con.close()
    ctx.sql("CREATE TABLE co (a int, b text)")
    try:
        ctx.assert_mirror_equals_source(path, "public.co")
        fail("column order difference not detected")
    except harness.Failure as e:
        print("ok: detected column order: %s" % e)

    # LSN helpers
    check(harness.parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848, "parse")
    check(harness.format_lsn(harness.parse_lsn("0/1A")) == "0/1A", "format")
    check(ctx.source_lsn() > 0, "source_lsn")
    check(harness.mirror_table_name("public.t") == "t", "naming public")
    check(harness.mirror_table_name("s.t") == "s_t", "naming schema")
    print("ok: LSN and naming helpers; dsn = %s" % ctx.dsn.replace(
        os.environ.get("PGPASSWORD", "\0"), "***"))


# replay=False: the mirrors here are made by hand, not by pgmirror (no feed
# to replay); the test is about the harness's comparisons
harness.main(test, name="harness_selftest", replay=False)

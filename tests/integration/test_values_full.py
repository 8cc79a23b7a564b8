"""The fuller value table of the contract: numeric (constrained p <= 15 as
integer/real, otherwise exact text, NaN), bytea (raw bytes), date,
timestamp, timestamptz (UTC, 6-digit fraction when non-zero, infinity),
json/jsonb (JSON text), arrays (JSON arrays, NULL elements, quoting,
2-D), enum, uuid, interval, time, timetz, inet, cidr, macaddr, char(n),
oid, money, point, tsvector, bit, xml-free text forms, a domain; all
after the slot exists, then updated."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
        CREATE SCHEMA s;
        CREATE TABLE s.vals (
            id int PRIMARY KEY,
            n_10_2 numeric(10,2), n_15_0 numeric(15), n_15_5 numeric(15,5),
            n_20_4 numeric(20,4), n numeric,
            by bytea, d date, ts timestamp, ts3 timestamp(3), tz timestamptz,
            j json, jb jsonb,
            ai int4[], al int8[], at text[], a2 int[][], af float8[],
            m mood, u uuid, iv interval, ti time, ttz timetz,
            ip inet, net cidr, mac macaddr, ch char(5), o oid, bt bit(4),
            vb varbit, pt point, tsv tsvector, oi oid);
        CREATE PUBLICATION pub FOR TABLE s.vals;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql(r"""
        SET TIME ZONE 'America/New_York';
        INSERT INTO s.vals VALUES
        (1, 12345678.91, 999999999999999, 1234567890.12345,
         1234567890123456.7891, 3.14159265358979323846264338327950288419716939937510,
         '\xdeadbeef00', '2024-02-29', '2024-01-02 03:04:05.123456',
         '2024-01-02 03:04:05.1', '2024-07-01 12:00:00.5-04',
         '{"k": [1, "two", null, true, 2.50], "nested": {"x": {}}}',
         '{"b": 1, "a": [false, "é"], "c": 1e3}',
         '{1,2,NULL,-3}', '{9223372036854775807}',
         '{"plain","with space","a,b","q\"uote","back\\slash",NULL,"NULL",""}',
         '{{1,2,3},{4,NULL,6}}', '{1.5,-0.25}',
         'happy', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
         '1 year 2 mons 3 days 04:05:06.789', '23:59:59.999999', '12:00:00+05:30',
         '192.168.1.1/24', '10.0.0.0/8', '08:00:2b:01:02:03', 'ab', 4294967295,
         B'1010', B'110', '(1.5,-2)', 'fat:2 cat:1', 0),
        (2, 5.00, -1, 0.00001, 0.0000, 'NaN',
         '', 'infinity', '-infinity', 'infinity', '-infinity',
         '[]', '"scalar"',
         '{}', '{}', '{}', '{}', '{}',
         'sad', '00000000-0000-0000-0000-000000000000',
         '-1 days', '00:00:00', '00:00:00-00',
         '::1', '::/0', 'ff:ff:ff:ff:ff:ff', '     ', 0,
         B'0000', B'', '(0,0)', '', 1),
        (3, -0.01, 0, -99999.99999, -1, -0.000000000000000000001,
         '\x00', '1970-01-01', '1970-01-01 00:00:00', '2000-01-01 00:00:00.001',
         '1970-01-01 00:00:00+00',
         'null', 'null',
         '{NULL}', NULL, '{""}', '{{NULL}}', '{0}',
         'ok', NULL, '0', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL),
        (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        RESET TIME ZONE;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "s.vals")

    # spelled-out expectations for the trickiest forms
    r = ctx.mirror_query(path, "SELECT n_10_2, typeof(n_10_2), n_15_0, "
                               "typeof(n_15_0), n_20_4, typeof(n_20_4), "
                               "typeof(by), tz, ts3, ai, a2 "
                               "FROM s_vals WHERE id = 1")[0]
    check(r[0] == 12345678.91 and r[1] == "real", "numeric(10,2): %r" % (r,))
    check(r[2] == 999999999999999 and r[3] == "integer", "numeric(15): %r" % (r,))
    check(r[4] == "1234567890123456.7891" and r[5] == "text",
          "numeric(20,4) must be exact text: %r" % (r,))
    check(r[6] == "blob", "bytea must be a blob: %r" % (r,))
    check(r[7] == "2024-07-01 16:00:00.500000", "timestamptz in UTC: %r" % (r,))
    check(r[8] == "2024-01-02 03:04:05.100000", "timestamp(3): %r" % (r,))
    check(r[9].replace(" ", "") == "[1,2,null,-3]", "int[]: %r" % (r,))
    check(r[10].replace(" ", "") == "[[1,2,3],[4,null,6]]", "int[][]: %r" % (r,))
    r = ctx.mirror_query(path, "SELECT n_10_2, typeof(n_10_2), n, d, tz, "
                               "json_extract(jb, '$') FROM s_vals WHERE id = 2")[0]
    check(r[0] == 5 and r[1] == "integer", "numeric 5.00 -> integer 5: %r" % (r,))
    check(r[2] == "NaN" and r[3] == "infinity" and r[4] == "-infinity",
          "NaN / infinity: %r" % (r,))
    check(r[5] == "scalar", "jsonb usable with json_extract: %r" % (r,))

    ctx.sql(r"""
        UPDATE s.vals SET n = n * 2, jb = jb || '{"added": [1]}',
               at = array_append(at, 'new'), by = by || '\x01'::bytea,
               tz = tz + interval '1 microsecond', ts = ts + interval '0.5 s'
        WHERE id = 1;
        UPDATE s.vals SET n_10_2 = 0.5, d = '2000-02-29', a2 = '{{7}}' WHERE id = 4;
        UPDATE s.vals SET m = 'ok', ai = NULL, j = NULL WHERE id = 2;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "s.vals")


harness.main(test)

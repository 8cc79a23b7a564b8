"""The initial copy: existing rows of several tables (many types, NULLs,
awkward text, a table in another schema, a REPLICA IDENTITY FULL table with
duplicate rows, an enum and a domain, a table published with a column list
and a row filter, a generated column) are copied on the first run; changes made after the copy
follow, nothing doubled. The tables the copy makes are exactly those the
stream makes (same SQLite DDL, pgmirror_columns and pgmirror_tables as a
mirror that saw the tables only through the stream). Column lists and row
filters are PostgreSQL 15+: before 15, cl is not published."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["t", "s.t2", "f"]


def meta(ctx, path):
    out = {}
    for q in ("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
              "AND name NOT LIKE 'pgmirror\\_%' ESCAPE '\\' ORDER BY 1",
              "SELECT * FROM pgmirror_columns ORDER BY table_name, position",
              # (sync_lsn: the copy's consistent point, NULL for tables
              # made empty by --no-initial-copy)
              "SELECT table_name, source_schema, source_table, relation_oid, "
              "replica_identity FROM pgmirror_tables ORDER BY table_name"):
        out[q] = ctx.mirror_query(path, q)
    return out


def check_cl(ctx, path):
    if ctx.server_version < 150000:
        return
    src = sorted(ctx.sql("SELECT id, a, b FROM cl WHERE id > 10"))
    mir = sorted(ctx.mirror_query(path, "SELECT id, a, b FROM cl"))
    check(src == mir, "cl (column list, row filter): source %r, mirror %r"
          % (src, mir))
    cols = [r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(cl)")]
    check(cols == ["id", "a", "b"], "cl has columns %r, expected the "
          "publication's column list [id, a, b]" % cols)


def test(ctx):
    ctx.sql(r"""
        CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
        CREATE DOMAIN posint AS int CHECK (VALUE > 0);
        CREATE TABLE t (id int PRIMARY KEY, name text, flag bool,
                        amount numeric(10,2), big numeric, r float8,
                        code varchar(10), at timestamptz, d date, data bytea,
                        tags int8[], doc jsonb, m mood,
                        gone int);
        ALTER TABLE t DROP COLUMN gone;
        INSERT INTO t (id, name, flag, amount, big, r, code, at, d, data, tags,
                       doc, m)
        SELECT g, 'name ' || g, g % 2 = 0, g * 1.25, g * 1000000000000.5,
               g / 3.0, 'c' || g, '2024-01-02 03:04:05.123+02'::timestamptz
               + g * interval '1 hour', date '2024-02-29' + g,
               decode(lpad(to_hex(g), 8, '0'), 'hex'), ARRAY[g, NULL, -g],
               jsonb_build_object('g', g, 'l', jsonb_build_array(1, 'x')),
               (ARRAY['sad', 'ok', 'happy']::mood[])[g % 3 + 1]
        FROM generate_series(1, 500) g;
        INSERT INTO t (id) VALUES (1000);  -- NULLs everywhere
        INSERT INTO t (id, name, data, r) VALUES
            (1001, E'tab\there, newline\nthere, back\\slash, cr\r', '\x00ff5c0a09', 'NaN'),
            (1002, '\N', '\x', '-Infinity'),
            (1003, E'\\N', NULL, 'Infinity'),
            (1004, '', NULL, 0),
            (1005, 'ünïcødé ✓ 日本', NULL, -0.0);
        CREATE SCHEMA s;
        CREATE TABLE s.t2 (a int, b text, c timestamp, PRIMARY KEY (b, a));
        INSERT INTO s.t2 SELECT g, 'k' || (g % 7), '2000-01-01'::timestamp
                                + g * interval '1 second'
        FROM generate_series(1, 300) g;
        CREATE TABLE f (a int, b text);
        ALTER TABLE f REPLICA IDENTITY FULL;
        INSERT INTO f VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, NULL), (2, NULL),
                             (NULL, NULL);
        CREATE TABLE cl (id int PRIMARY KEY, a int, b text, secret text);
        INSERT INTO cl SELECT g, g, 'b' || g, 'secret' FROM generate_series(1, 30) g;
        CREATE PUBLICATION pub FOR TABLE t, s.t2, f;
        CREATE TABLE gen (id int PRIMARY KEY, v int,
                          g int GENERATED ALWAYS AS (v * 2) STORED);
        INSERT INTO gen (id, v) VALUES (1, 1), (2, NULL);
    """)
    if ctx.server_version >= 150000:
        ctx.sql("CREATE PUBLICATION pubcl FOR TABLE cl (id, a, b) WHERE (id > 10), gen")
    else:
        ctx.sql("CREATE PUBLICATION pubcl FOR TABLE gen")
    pubs = ["pub", "pubcl"]

    # A mirror that learns the tables from the stream only, to compare with.
    spath, sslot = ctx.path("stream.db"), ctx.slot("stream")
    ctx.once(spath, sslot, pubs, first=True)

    path, slot = ctx.path(), ctx.slot()
    rc, out, err = ctx.once(path, slot, pubs)
    check(ctx.mirror_state(path)["initial_copy_done"] == 1,
          "initial_copy_done is not 1 after the first run")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check_cl(ctx, path)
    check(ctx.mirror_query(path, "SELECT * FROM gen ORDER BY id") == [(1, 1), (2, None)],
          "gen (generated column left out): %r"
          % ctx.mirror_query(path, "SELECT * FROM gen ORDER BY id"))
    copied = [("public.t", 506), ("s.t2", 300), ("public.f", 6)]
    if ctx.server_version >= 150000:
        copied.append(("public.cl", 20))
    for name, n in copied:
        check("copied %d rows of \"%s\"" % (n, name) in err,
              "no line \"copied %d rows of \"%s\"\" on stderr:\n%s" % (n, name, err))
    check(ctx.mirror_lsn(path) == ctx.slot_final_lsn(slot),
        "the mirror's position is not the slot's consistent point")

    # Changes after the copy: applied once, on top of the copied rows.
    ctx.sql(r"""
        INSERT INTO t (id, name, m) VALUES (2000, 'new', 'ok');
        UPDATE t SET name = 'upd ' || id, tags = '{}' WHERE id % 10 = 0;
        UPDATE t SET id = id + 10000 WHERE id BETWEEN 100 AND 110;
        DELETE FROM t WHERE id % 7 = 0;
        UPDATE s.t2 SET c = NULL WHERE a < 50;
        DELETE FROM s.t2 WHERE b = 'k3';
        DELETE FROM f WHERE a = 1 AND b = 'x';
        UPDATE f SET b = 'y' WHERE a = 2;
        INSERT INTO f VALUES (1, 'x');
        UPDATE cl SET a = a + 5 WHERE id BETWEEN 6 AND 15;
        DELETE FROM cl WHERE id = 20;
        INSERT INTO cl VALUES (100, 100, 'b100', 's'), (101, 1, 'low', 's'), (-2, 1, 'out', 's');
    """)
    ctx.once(path, slot, pubs)
    ctx.once(spath, sslot, pubs)
    ctx.assert_mirror_equals_source(path, *TABLES)
    check_cl(ctx, path)

    # The copied tables are the ones the stream makes.
    ctx.sql("INSERT INTO s.t2 VALUES (-1, 'x', NULL); INSERT INTO f VALUES (9, 'z');"
            "INSERT INTO cl VALUES (-1, 50, 'x', 's'); INSERT INTO gen (id, v) VALUES (3, 3)")
    ctx.once(path, slot, pubs)
    ctx.once(spath, sslot, pubs)
    a, b = meta(ctx, path), meta(ctx, spath)
    for q in a:
        check(a[q] == b[q], "copy and stream made different tables:\n%s\n"
              "copy:   %r\nstream: %r" % (q, a[q], b[q]))


harness.main(test)

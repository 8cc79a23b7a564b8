"""A type dropped since: while the mirror lags (no run), columns of an enum,
of a domain over int and of an array of the enum are added to a keyed table
and to a REPLICA IDENTITY FULL one, used, dropped (or, for one domain
column of the keyed table, retyped to int), and the types dropped. Replaying
that history must not need the source's catalog to still know the types:
--once succeeds, the mirror equals the source, and pgmirror_columns
describes the tables as they are now."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE k (id int PRIMARY KEY, v text);
        CREATE TABLE f (a int, b text);
        ALTER TABLE f REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE k, f;
        INSERT INTO k SELECT g, 'k' || g FROM generate_series(1, 20) g;
        INSERT INTO f SELECT g, 'f' || g FROM generate_series(1, 20) g;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "k", "f")

    # the mirror lags from here on
    ctx.sql("""
        CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
        CREATE DOMAIN posint AS int CHECK (VALUE > 0);
        ALTER TABLE k ADD COLUMN m mood, ADD COLUMN d posint, ADD COLUMN ma mood[],
            ADD COLUMN d2 posint;
        ALTER TABLE f ADD COLUMN m mood, ADD COLUMN d posint, ADD COLUMN ma mood[];
        INSERT INTO k VALUES (100, 'new', 'happy', 7, '{sad,happy}', 3);
        UPDATE k SET m = 'ok', d = id, ma = ARRAY['ok'::mood], d2 = id + 1 WHERE id <= 5;
        INSERT INTO f VALUES (100, 'new', 'happy', 7, '{sad,happy}');
        UPDATE f SET m = 'sad', d = a, ma = '{}' WHERE a <= 5;
        DELETE FROM f WHERE a = 3;
        DELETE FROM k WHERE id = 4;
    """)
    ctx.sql("""
        ALTER TABLE k DROP COLUMN m, DROP COLUMN d, DROP COLUMN ma;
        ALTER TABLE k ALTER COLUMN d2 TYPE int;
        ALTER TABLE f DROP COLUMN m, DROP COLUMN d, DROP COLUMN ma;
        INSERT INTO k VALUES (101, 'after', 9);
        UPDATE k SET v = 'upd' WHERE id = 2;
        INSERT INTO f VALUES (101, 'after');
        DELETE FROM f WHERE a = 2;
        DROP TYPE mood;
        DROP DOMAIN posint;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "k", "f")
    cols = ctx.mirror_query(path, "SELECT table_name, column_name, pg_type FROM "
                            "pgmirror_columns WHERE table_name IN ('k', 'f') "
                            "ORDER BY table_name, position")
    check(cols == [("f", "a", "int4"), ("f", "b", "text"), ("k", "id", "int4"),
                   ("k", "v", "text"), ("k", "d2", "int4")],
          "pgmirror_columns does not describe the tables as they are: %s" % cols)

    # and later runs do not need the dead types either
    ctx.sql("UPDATE k SET d2 = 42 WHERE id = 1; INSERT INTO f VALUES (102, 'later')")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "k", "f", "pgm_marker")


harness.main(test)

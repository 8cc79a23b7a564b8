"""Tables that join the publications after the first run get their existing
rows, exactly once, with --once: a table added with ALTER PUBLICATION ... ADD
TABLE (with rows from before, and with changes made after it joined but
before pgmirror ran, which the sync's snapshot holds: a keyless table would
show them twice); a table moved into a FOR TABLES IN SCHEMA schema; a table
made under FOR ALL TABLES; a partition attached later. Tables that leave (DROP
TABLE from the publication, DROP TABLE on the source) are removed with a
warning, and one dropped and made again under its name comes back with the
new table's rows."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    # FOR TABLES IN SCHEMA is PostgreSQL 15+; before, the test adds each
    # table that comes into s2 to the publication itself
    v15 = ctx.server_version >= 150000

    def into_s2(table):
        if not v15:
            ctx.sql("ALTER PUBLICATION pub ADD TABLE s2.%s" % table)

    ctx.sql("""
        CREATE SCHEMA s2;
        CREATE TABLE a (id int PRIMARY KEY, v text);
        CREATE TABLE b (id int PRIMARY KEY, v text);
        CREATE TABLE logs (n int, note text);               -- no key
        ALTER TABLE logs REPLICA IDENTITY FULL;
        CREATE TABLE moved (id int PRIMARY KEY, v text);
        CREATE TABLE parts (id int PRIMARY KEY, v text) PARTITION BY RANGE (id);
        CREATE TABLE parts1 PARTITION OF parts FOR VALUES FROM (0) TO (100);
        CREATE TABLE parts2 (id int PRIMARY KEY, v text);
        INSERT INTO parts SELECT g, 'p' FROM generate_series(1, 99) g;
        INSERT INTO parts2 SELECT g, 'p2' FROM generate_series(100, 150) g;
        CREATE PUBLICATION pub FOR TABLE a, parts%s;
        INSERT INTO a VALUES (1, 'a1');
        INSERT INTO b SELECT g, 'b' || g FROM generate_series(1, 1000) g;
        INSERT INTO logs SELECT g %% 7, 'old' FROM generate_series(1, 500) g;
        INSERT INTO moved SELECT g, 'm' FROM generate_series(1, 50) g;
    """ % (", TABLES IN SCHEMA s2" if v15 else ""))
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    check(ctx.mirror_tables(path) == ["a", "parts1"],
          "first run: tables %s" % ctx.mirror_tables(path))

    # b joins with its rows; logs joins, then gets changes before pgmirror
    # runs (in the stream before the sync's LSN: the snapshot has them)
    ctx.sql("ALTER PUBLICATION pub ADD TABLE b")
    ctx.sql("ALTER PUBLICATION pub ADD TABLE logs")
    ctx.sql("INSERT INTO logs SELECT g % 7, 'after join' FROM generate_series(1, 300) g")
    ctx.sql("DELETE FROM logs WHERE ctid IN (SELECT ctid FROM logs WHERE n = 3 LIMIT 20)")
    ctx.sql("UPDATE b SET v = 'changed' WHERE id <= 10")
    ctx.sql("ALTER TABLE moved SET SCHEMA s2")
    into_s2("moved")
    ctx.sql("ALTER TABLE parts ATTACH PARTITION parts2 FOR VALUES FROM (100) TO (200)")
    ctx.sql("INSERT INTO a VALUES (2, 'a2')")
    rc, out, err = ctx.once(path, slot, "pub", "-v")
    harness.log(err)
    ctx.assert_mirror_equals_source(path, "a", "b", "logs", "s2.moved", "parts1", "parts2")
    lsn = ctx.mirror_query(path, "SELECT sync_lsn FROM pgmirror_tables WHERE table_name = 'b'")
    check(lsn and lsn[0][0] is not None, "b has no sync_lsn: %r" % lsn)
    st = ctx.mirror_state(path)
    check(st["format_version"] == 5, "format_version %r" % st["format_version"])

    # later changes to the joined tables arrive once
    ctx.sql("INSERT INTO logs VALUES (99, 'later'); UPDATE b SET v = 'again' WHERE id < 5; "
            "DELETE FROM b WHERE id > 990; INSERT INTO s2.moved VALUES (1000, 'new')")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "a", "b", "logs", "s2.moved")

    # a table that joins with no change at all after it joined
    ctx.sql("CREATE TABLE s2.fresh (id int PRIMARY KEY); "
            "INSERT INTO s2.fresh SELECT generate_series(1, 77)")
    into_s2("fresh")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "s2.fresh")

    # leaves: dropped from the publication, dropped on the source
    ctx.sql("ALTER PUBLICATION pub DROP TABLE b")
    ctx.sql("DROP TABLE s2.fresh")
    ctx.sql("INSERT INTO a VALUES (3, 'a3')")
    rc, out, err = ctx.once(path, slot, "pub")
    tables = ctx.mirror_tables(path)
    check("b" not in tables and "s2_fresh" not in tables, "left tables kept: %s" % tables)
    check("\"public.b\"" in err and "warning" in err.lower(), "no warning for b:\n%s" % err)
    check("\"s2.fresh\"" in err, "no warning for s2.fresh:\n%s" % err)
    left = ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_columns WHERE "
                            "table_name IN ('b', 's2_fresh')")[0][0]
    check(left == 0, "pgmirror_columns keeps %d rows of left tables" % left)
    ctx.assert_mirror_equals_source(path, "a", "logs", "s2.moved")

    # dropped and made again under the same name: a new OID, its own rows
    ctx.sql("DROP TABLE logs; CREATE TABLE logs (n int, note text, extra int); "
            "ALTER TABLE logs REPLICA IDENTITY FULL; "
            "INSERT INTO logs VALUES (1, 'new table', 5); "
            "ALTER PUBLICATION pub ADD TABLE logs")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "a", "logs", "s2.moved")

    # FOR ALL TABLES: a table made later joins
    ctx.sql("CREATE PUBLICATION puball FOR ALL TABLES")
    path2, slot2 = ctx.path("all.db"), ctx.slot("all")
    ctx.once(path2, slot2, "puball")
    ctx.sql("CREATE TABLE later (id int PRIMARY KEY, v text); "
            "INSERT INTO later SELECT g, 'l' FROM generate_series(1, 300) g")
    ctx.sql("UPDATE later SET v = 'x' WHERE id = 1")
    ctx.once(path2, slot2, "puball")
    ctx.assert_mirror_equals_source(path2, "a", "logs", "s2.moved", "later")

    # FOR ALL TABLES publishes permanent tables only: a temporary table
    # (in a session that stays open) leaves the next run quiet, and an
    # unlogged table with rows, unpublished, joins once made logged, though
    # the stream brings no change of it: only the check can find it
    held = ctx.connect()
    held.cursor().execute("CREATE TEMP TABLE scratch (id int PRIMARY KEY)")
    ctx.sql("CREATE UNLOGGED TABLE unl (id int PRIMARY KEY, v text); "
            "INSERT INTO unl SELECT g, 'u' FROM generate_series(1, 50) g")
    _, _, err = ctx.once(path2, slot2, "puball", "-v")
    check("the publications are as the mirror follows them" in err,
          "a run after a temporary and an unlogged table were made was not quiet:\n%s" % err)
    check("unl" not in ctx.mirror_tables(path2) and "scratch" not in ctx.mirror_tables(path2),
          "mirror has tables %s" % ctx.mirror_tables(path2))
    ctx.sql("ALTER TABLE unl SET LOGGED")
    ctx.once(path2, slot2, "puball")
    ctx.assert_mirror_equals_source(path2, "a", "logs", "s2.moved", "later", "unl")
    held.close()


harness.main(test)

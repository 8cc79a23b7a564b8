"""Generated columns. pgoutput never sends a virtual generated column, and
a stored one only where a publication says so (PostgreSQL 18 and later:
publish_generated_columns = stored, or a column list that names it; never
before 18). The mirror holds exactly the published columns, from its first
copy on: the first copy reads a published generated column too (COPY
cannot list one: a query reads it), so the stream's first change finds
the table as it is and does not make pgmirror copy it again. --verify
compares it, and a publication that stops publishing it makes pgmirror
copy the table again without it.

Before, the first copy left every generated column out, and the first
change's Relation message, which has it, made pgmirror rebuild the table:
until a change came, the mirror lacked a column the publication
publishes."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def expect_table(ctx, path, table, cols):
    """The mirror table has exactly cols (source order) and their rows."""
    got = ctx.mirror_columns(path, table)
    check(got == cols, "mirror table %s has columns %s, want the published %s"
          % (table, got, cols))
    q = "SELECT %s FROM %s ORDER BY 1" % (", ".join(cols), table)
    src = [tuple(r) for r in ctx.sql(q)]
    mir = [tuple(r) for r in ctx.mirror_query(path, q)]
    check(src == mir, "mirror table %s differs from the source:\nsource %s\nmirror %s"
          % (table, src[:10], mir[:10]))


def generations(ctx, path):
    return dict(ctx.mirror_query(path, "SELECT table_name, generation FROM pgmirror_tables"))


def test(ctx):
    v18 = ctx.server_version >= 180000
    ctx.sql("""
        CREATE TABLE g_none (id int PRIMARY KEY, a int,
                             s int GENERATED ALWAYS AS (a * 2) STORED);
        INSERT INTO g_none (id, a) SELECT g, g FROM generate_series(1, 50) g;
        CREATE PUBLICATION p_gen FOR TABLE g_none;
    """)
    tables = {"g_none": ["id", "a"]}
    pubs = ["p_gen"]
    if v18:
        ctx.sql("""
            CREATE TABLE g_pub (id int PRIMARY KEY, a int,
                                s int GENERATED ALWAYS AS (a * 2) STORED,
                                v int GENERATED ALWAYS AS (a * 3) VIRTUAL);
            CREATE TABLE g_list (id int PRIMARY KEY, a int, b text,
                                 s int GENERATED ALWAYS AS (a + 1) STORED);
            INSERT INTO g_pub (id, a) SELECT g, 10 * g FROM generate_series(1, 50) g;
            INSERT INTO g_list (id, a, b) SELECT g, g, 'b' || g FROM generate_series(1, 50) g;
            CREATE PUBLICATION p_gen18 FOR TABLE g_pub
                WITH (publish_generated_columns = stored);
            CREATE PUBLICATION p_list18 FOR TABLE g_list (id, s);
        """)
        tables.update({"g_pub": ["id", "a", "s"], "g_list": ["id", "s"]})
        pubs += ["p_gen18", "p_list18"]
    else:
        harness.log("PostgreSQL %d publishes no generated column: only the table "
                    "whose generated column stays out is tried" % ctx.server_version)

    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, pubs)
    for table, cols in tables.items():
        expect_table(ctx, path, table, cols)
    first = generations(ctx, path)

    for table in tables:
        ctx.sql("INSERT INTO %s (id, a) VALUES (100, 7)" % table)
        ctx.sql("UPDATE %s SET a = a + 1 WHERE id <= 10" % table)
        ctx.sql("DELETE FROM %s WHERE id BETWEEN 20 AND 25" % table)
    rc, out, err = ctx.once(path, slot, pubs)
    for table, cols in tables.items():
        expect_table(ctx, path, table, cols)
    check(generations(ctx, path) == first,
          "the first changes made pgmirror copy a table again (generations %s, then %s):"
          "\n%s" % (first, generations(ctx, path), err))

    rc, out, err = ctx.run(ctx.mirror_args(path, slot, pubs, "--verify"))
    check(rc == 0, "--verify exited %d:\n%s\n%s" % (rc, out, err))
    for table in tables:
        check("%s: ok" % table in out, "--verify did not find %s ok:\n%s" % (table, out))

    if v18:
        ctx.sql("ALTER PUBLICATION p_gen18 SET (publish_generated_columns = none)")
        ctx.sql("INSERT INTO g_pub (id, a) VALUES (101, 8)")
        ctx.once(path, slot, pubs)
        expect_table(ctx, path, "g_pub", ["id", "a"])
        ctx.sql("ALTER PUBLICATION p_list18 SET TABLE g_list (id, a, b)")
        ctx.sql("UPDATE g_list SET b = 'changed' WHERE id = 1")
        ctx.once(path, slot, pubs)
        expect_table(ctx, path, "g_list", ["id", "a", "b"])
        ctx.sql("ALTER PUBLICATION p_gen18 SET (publish_generated_columns = stored)")
        ctx.once(path, slot, pubs)
        expect_table(ctx, path, "g_pub", ["id", "a", "s"])


harness.main(test)

"""Stored generated columns are mirrored exactly when the publications
publish them.

Before PostgreSQL 18 none is published: the mirror leaves them out.

From 18 on a publication publishes them with publish_generated_columns =
stored, or by naming them in its column list. The initial copy must then
copy them too (COPY refuses a generated column in its column list: a
query reads them), or the stream's first Relation message brings a column
the mirror lacks: a keyed table was filled by look-ups, and a keyless one
(REPLICA IDENTITY FULL) stopped the mirror for good ("start this mirror
over", which met the same again). Switching publish_generated_columns on
later (and off and on again) syncs the table again with the column. After each step the mirror
equals the source's published columns, and --verify says ok.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def published(ctx, path, table, cols):
    """The mirror table has exactly columns cols, and the source's rows."""
    mcols = [r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(%s)" % table)]
    check(mcols == cols, "%s: mirror columns %s, want %s" % (table, mcols, cols))
    src = sorted(ctx.sql("SELECT %s FROM %s" % (", ".join(cols), table)))
    mir = sorted(tuple(r) for r in ctx.mirror_query(
        path, "SELECT %s FROM %s" % (", ".join(cols), table)))
    check(src == mir, "%s: source %r, mirror %r" % (table, src, mir))


def change(ctx, table, base):
    ctx.sql("INSERT INTO %s (id, a) VALUES (%d, %d), (%d, %d); "
            "UPDATE %s SET a = a + 100 WHERE id = 1; DELETE FROM %s WHERE id = 2"
            % (table, base, base, base + 1, base + 1, table, table))


def test(ctx):
    v18 = ctx.server_version >= 180000
    for t in ("g", "gf", "h", "gs"):
        ctx.sql("CREATE TABLE %s (id int%s, a int, d int GENERATED ALWAYS AS (a * 2) STORED); "
                "INSERT INTO %s (id, a) SELECT x, x FROM generate_series(1, 5) x"
                % (t, " PRIMARY KEY" if t != "gs" else "", t))
    ctx.sql("ALTER TABLE gs REPLICA IDENTITY FULL; "
            "CREATE PUBLICATION gb FOR TABLE g; CREATE PUBLICATION ge FOR TABLE gf")
    pubs = ["gb", "ge", "gd"]
    if v18:
        ctx.sql("CREATE PUBLICATION gc FOR TABLE h (id, d); "
                "CREATE PUBLICATION gd FOR TABLE gs WITH (publish_generated_columns = stored)")
        pubs.append("gc")
    else:
        ctx.sql("CREATE PUBLICATION gd FOR TABLE gs")
    path, slot = ctx.path(), ctx.slot()

    def once_and_check(what, gf_cols):
        ctx.once(path, slot, pubs)
        published(ctx, path, "g", ["id", "a"])
        published(ctx, path, "gf", gf_cols)
        published(ctx, path, "gs", ["id", "a", "d"] if v18 else ["id", "a"])
        if v18:
            published(ctx, path, "h", ["id", "d"])
        rc, out, err = ctx.run(ctx.mirror_args(path, slot, pubs, "--verify"))
        check(rc == 0, "%s: --verify exited %d:\n%s\n%s" % (what, rc, out, err))

    once_and_check("the first run", ["id", "a"])
    for t in ("g", "gf", "gs") + (("h",) if v18 else ()):
        change(ctx, t, 100)
    once_and_check("changes", ["id", "a"])
    if v18:
        ctx.sql("ALTER PUBLICATION ge SET (publish_generated_columns = stored)")
        change(ctx, "gf", 200)
        ctx.sql("ALTER PUBLICATION ge SET (publish_generated_columns = none)")
        ctx.sql("ALTER PUBLICATION ge SET (publish_generated_columns = stored)")
        change(ctx, "gf", 300)
        once_and_check("publish_generated_columns set", ["id", "a", "d"])
        for t in ("gf", "gs", "h"):
            change(ctx, t, 400)
        once_and_check("changes with it", ["id", "a", "d"])


harness.main(test)

"""A source database that is not UTF-8 (here LATIN1): text, array
elements, table and column names reach the mirror as UTF-8, in the initial
copy and in the stream, whatever the client encoding pgmirror's
environment (PGCLIENTENCODING), its -d string, the role or the database
would otherwise give its connections.  (Issue 8, item 1.)"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLE = "café"
COLS = '"naïve"'


def check_bytes(ctx, path, n_rows):
    """The mirror's text is UTF-8 (é is C3 A9), names included."""
    check(TABLE in ctx.mirror_tables(path),
          "mirror tables %r lack %r" % (ctx.mirror_tables(path), TABLE))
    rows = ctx.mirror_query(
        path, 'SELECT hex(%s), hex(tags) FROM "%s" WHERE id = 1' % (COLS, TABLE))
    check(rows == [("636166C3A9", "5B22C3A9222C2278225D")],
          "row 1 holds %r, expected UTF-8 café and [\"é\",\"x\"]" % (rows,))
    check(len(ctx.mirror_query(path, 'SELECT 1 FROM "%s"' % TABLE)) == n_rows,
          "mirror has the wrong number of rows")
    ctx.assert_mirror_equals_source(path, TABLE)


def test(ctx):
    check(ctx.sql1("SHOW server_encoding") == "LATIN1", "not a LATIN1 database")
    ctx.sql('CREATE TABLE "%s" (id int PRIMARY KEY, %s text, tags text[]);'
            'CREATE PUBLICATION pub FOR TABLE "%s"' % (TABLE, COLS, TABLE))
    ctx.sql('INSERT INTO "%s" VALUES (1, %%s, %%s), (2, %%s, NULL)' % TABLE,
            "café", ["é", "x"], "Ærø ½ ÿ")

    # 1. PGCLIENTENCODING=LATIN1 in pgmirror's environment: copy, then stream
    env = {"PGCLIENTENCODING": "LATIN1"}
    path, slot = ctx.path("env.db"), ctx.slot("env")
    ctx.once(path, slot, "pub", env=env)
    check_bytes(ctx, path, 2)
    ctx.sql('INSERT INTO "%s" VALUES (3, %%s, %%s)' % TABLE, "naïve ñ", ["ü", "ß", None])
    ctx.sql('UPDATE "%s" SET %s = %%s WHERE id = 2' % (TABLE, COLS), "déjà vu")
    ctx.once(path, slot, "pub", env=env)
    check_bytes(ctx, path, 3)

    # 2. the database and the role (in it) say LATIN1, and so does -d
    db = harness.qident(ctx.dbname)
    ctx.sql("ALTER DATABASE %s SET client_encoding = 'LATIN1'" % db)
    ctx.sql("ALTER ROLE CURRENT_USER IN DATABASE %s SET client_encoding = 'LATIN1'" % db)
    try:
        path2, slot2 = ctx.path("role.db"), ctx.slot("role")
        dsn = ctx.dsn + " client_encoding=LATIN1"
        args = ["-d", dsn, "-S", slot2, "-P", "pub", "--once", path2]
        rc, out, err = ctx.run(args, env={"PGCLIENTENCODING": None})
        check(rc == 0, "first run with LATIN1 settings exited %d:\n%s" % (rc, err))
        check_bytes(ctx, path2, 3)
        ctx.sql('INSERT INTO "%s" VALUES (4, %%s, %%s)' % TABLE, "çà", ["¤", "é"])
        ctx.sql('ALTER TABLE "%s" ADD COLUMN "größe" text' % TABLE)
        ctx.sql('UPDATE "%s" SET "größe" = %%s WHERE id = 1' % TABLE, "groß")
        rc, out, err = ctx.run(args, env={"PGCLIENTENCODING": None})
        check(rc == 0, "second run with LATIN1 settings exited %d:\n%s" % (rc, err))
        check("größe" in ctx.mirror_columns(path2, TABLE),
              "mirror columns %r lack größe" % ctx.mirror_columns(path2, TABLE))
        check_bytes(ctx, path2, 4)
        # and the first mirror, which streams the same changes
        ctx.once(path, slot, "pub", env=env)
        check_bytes(ctx, path, 4)
    finally:
        ctx.sql("ALTER ROLE CURRENT_USER IN DATABASE %s RESET client_encoding" % db)


harness.main(test, encoding="LATIN1")

"""Names that bite.

- Table and column names with double quotes, spaces, dots, mixed case,
  Unicode ("Café ☕"), SQL keywords (select, order, group), columns named
  rowid / _rowid_ / oid (SQLite's row id aliases), columns named like
  pgmirror's own tables and columns, keys on such columns, a table in a
  schema with a space: all mirrored (inserts, updates incl. key changes,
  deletes), compared row by row, the SQLite table queried by its exact
  name, pgmirror_columns naming the exact column names.
- Two source tables whose mirror names collide (public.a_b and a.b, both
  a_b) cannot both be mirrored: the first is, the other waits (exit 1 from
  --once, naming it; the mirror's data otherwise unchanged), on a fresh
  mirror and when the second table joins the publication later.
- Names equal but for case ("MixedCase"/"mixedcase" columns, "Case"/"case"
  tables) are one name in SQLite: such a table waits the same way.
- A source table whose mirror name starts with pgmirror_ (public.pgmirror_x,
  or pgmirror.state which would become pgmirror_state) waits likewise,
  and so does one whose mirror name starts with sqlite_ (SQLite's own, any
  case). A publication with no table that can be mirrored is refused
  before anything is made (the file stays absent).
"""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Soft, qident  # noqa: E402


# (qualified name for the harness, SQL name, mirror name)
TABLES = [
    ('public.Odd "quoted" table', '"Odd ""quoted"" table"',
     'Odd "quoted" table'),
    ("public.select", '"select"', "select"),
    ("public.Order Items", '"Order Items"', "Order Items"),
    ("public.dot.ted", '"dot.ted"', "dot.ted"),
    ("public.Café ☕", '"Café ☕"', "Café ☕"),
    ("public.MixedCase", '"MixedCase"', "MixedCase"),
    ("My Schema.T.x", '"My Schema"."T.x"', "My Schema_T.x"),
    ("public.rowid", '"rowid"', "rowid"),
]

COLS = '''
    "col ""q""" int PRIMARY KEY,
    "with space" text, "dot.ted" text, "MixedCase" text, "x" text,
    "Café ☕" text, "select" int, "order" text, "group" text,
    rowid int, _rowid_ text, oid bigint, "table_name" text,
    "column_name" text, "confirmed_lsn" text, "pgmirror_state" text,
    "is_key" bool, "'single'" text, "[br]" text, "a`b" text
'''


def refused(ctx, soft, what, path, slot, pubs, name, first, before):
    """Run pgmirror; it must exit 1 naming `name`.  before None: nothing
    can be mirrored, and the mirror must stay absent; else (snapshot, _):
    the table waits, the mirror's data stays as it was, and the table is
    in pgmirror_waiting and last_error."""
    extra = ["--once"] + (["--no-initial-copy"] if first else [])
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, pubs, *extra))
    harness.log("%s: exit %d: %s" % (what, rc, err.strip()[-300:]))
    soft.check(rc == 1, "%s: pgmirror exit %d, expected 1 (refused)\n"
               "stderr:\n%s" % (what, rc, err))
    soft.check(name in err, "%s: the message does not name %r:\n%s"
               % (what, name, err))
    if before is None:
        soft.check(not os.path.exists(path),
                   "%s: the mirror %s was created (tables %s)" %
                   (what, path, ctx.mirror_tables(path)
                    if os.path.exists(path) else ""))
    else:
        snap, _ = before
        soft.check(ctx.mirror_snapshot(path) == snap,
                   "%s: the mirror's data changed: %s" %
                   (what, ctx.mirror_snapshot(path)))
        try:
            waiting = [r[0] for r in ctx.mirror_query(path, "SELECT reason FROM "
                                                      "pgmirror_waiting")]
        except sqlite3.Error as e:
            waiting = ["(%s)" % e]
        soft.check(any(name in r for r in waiting),
                   "%s: pgmirror_waiting does not name %r: %s" % (what, name, waiting))
        # the refusal is kept for --status
        soft.check(name in (ctx.mirror_state(path).get("last_error") or ""),
                   "%s: last_error does not name %r: %s"
                   % (what, name, ctx.mirror_state(path)))
    return rc


def waits(ctx, soft, what, path, slot, pubs, name, taken):
    """A fresh mirror of pubs: the tables `taken` are mirrored, and the one
    named `name` waits (exit 1, named)."""
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, pubs, "--once"))
    harness.log("%s: exit %d: %s" % (what, rc, err.strip()[-300:]))
    soft.check(rc == 1 and name in err, "%s: exit %d, expected 1 naming %r:\n%s"
               % (what, rc, name, err))
    soft.check(os.path.exists(path) and sorted(ctx.mirror_tables(path)) == sorted(taken),
               "%s: mirror tables %s, expected %s" % (
                   what, ctx.mirror_tables(path) if os.path.exists(path) else None, taken))


def state_of(ctx, path):
    """pgmirror_state but for the last error, which a refusal records."""
    return dict((k, v) for k, v in ctx.mirror_state(path).items()
                if k not in ("last_error", "last_error_time"))


def before_of(ctx, path):
    return (ctx.mirror_snapshot(path), state_of(ctx, path))


def test(ctx):
    soft = Soft()
    ctx.sql('CREATE SCHEMA "My Schema"')
    for _, sqlname, _ in TABLES:
        ctx.sql("CREATE TABLE %s (%s)" % (sqlname, COLS))
    ctx.sql("CREATE PUBLICATION pub FOR TABLE %s"
            % ", ".join(t[1] for t in TABLES))
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    for _, sqlname, _ in TABLES:
        ctx.sql('''
            INSERT INTO %(t)s VALUES
              (1, 'a b', 'x.y', 'Mixed', 'x', 'café ☕', 1, 'asc',
               'g', 10, 'r1', 100, 'tn', 'cn', '0/0', 'st', true,
               's"q', '[x]', '`'),
              (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
              (3, '', '', '', '', '', 3, '', '', 30, '', 300, '', '', '', '',
               false, '', '', '');
            UPDATE %(t)s SET "Café ☕" = 'thé', rowid = 11, oid = 101,
                "order" = 'desc' WHERE %(k)s = 1;
            UPDATE %(t)s SET %(k)s = 20, _rowid_ = 'moved'
                WHERE %(k)s = 2;
            DELETE FROM %(t)s WHERE %(k)s = 3;
            INSERT INTO %(t)s (%(k)s, "select") VALUES (4, 4);
        ''' % dict(t=sqlname, k=qident('col "q"')))
    ctx.once(path, slot, "pub")

    soft("compare", ctx.assert_mirror_equals_source, path,
         *[t[0] for t in TABLES])
    soft.check(sorted(ctx.mirror_tables(path)) ==
               sorted(t[2] for t in TABLES),
               "mirror tables %s, expected %s" %
               (sorted(ctx.mirror_tables(path)), sorted(t[2] for t in TABLES)))
    colnames = [c["name"] for c in ctx.source_columns(TABLES[0][0])]
    for _, _, mname in TABLES:
        try:
            r = ctx.mirror_query(
                path, 'SELECT "col ""q""", "Café ☕", rowid, _rowid_, oid, '
                      '"order", "select" FROM %s ORDER BY 1' % qident(mname))
        except Exception as e:  # noqa: BLE001
            soft.check(False, "query of mirror table %r failed: %s"
                       % (mname, e))
            continue
        soft.check(r == [(1, "thé", 11, "r1", 101, "desc", 1),
                         (4, None, None, None, None, None, 4),
                         (20, None, None, "moved", None, None, None)],
                   "mirror table %r by its exact name: %r" % (mname, r))
        meta = ctx.mirror_query(
            path, "SELECT column_name, is_key FROM pgmirror_columns WHERE "
                  "table_name = ? ORDER BY position", (mname,))
        soft.check([m[0] for m in meta] == colnames,
                   "pgmirror_columns for %r: %s, expected %s"
                   % (mname, [m[0] for m in meta], colnames))
        soft.check([bool(m[1]) for m in meta] ==
                   [c == 'col "q"' for c in colnames],
                   "pgmirror_columns.is_key for %r: %s" % (mname, meta))
        pk = [r[1] for r in ctx.mirror_query(
            path, "PRAGMA table_info(%s)" % qident(mname)) if r[5]]
        soft.check(pk == ['col "q"'], "PRIMARY KEY of %r: %s" % (mname, pk))

    # ---- collisions and reserved names -----------------------------------
    ctx.sql("""
        CREATE SCHEMA a;
        CREATE TABLE a_b (id int PRIMARY KEY, v text);
        CREATE TABLE a.b (id int PRIMARY KEY, w text);
        CREATE PUBLICATION p_coll FOR TABLE a_b, a.b;

        CREATE SCHEMA c;
        CREATE TABLE c_d (id int PRIMARY KEY, v text);
        CREATE TABLE c.d (id int PRIMARY KEY, v text);
        CREATE PUBLICATION p_late FOR TABLE c_d;

        CREATE TABLE pgmirror_x (id int PRIMARY KEY);
        CREATE PUBLICATION p_res FOR TABLE pgmirror_x;
        CREATE SCHEMA "SQLite";
        CREATE TABLE "SQLite".t (id int PRIMARY KEY);
        CREATE PUBLICATION p_sqlite FOR TABLE "SQLite".t;

        CREATE SCHEMA pgmirror;
        CREATE TABLE pgmirror.state (id int PRIMARY KEY, slot text);
        CREATE TABLE ok1 (id int PRIMARY KEY);
        CREATE PUBLICATION p_res_late FOR TABLE ok1;

        CREATE TABLE ccol (id int PRIMARY KEY, "MixedCase" text,
                           "mixedcase" text);
        CREATE PUBLICATION p_ccol FOR TABLE ccol;
        CREATE TABLE "Case" (id int PRIMARY KEY);
        CREATE TABLE "case" (id int PRIMARY KEY);
        CREATE PUBLICATION p_ctab FOR TABLE "Case", "case";
    """)

    # SQLite names are case-insensitive: "MixedCase" and "mixedcase" are
    # one name there.  Two such columns (the only table: nothing can be
    # mirrored) are refused up front; of tables "Case" and "case", one is
    # mirrored and the other waits.
    refused(ctx, soft, "columns MixedCase / mixedcase on a fresh mirror",
            ctx.path("p_ccol.db"), ctx.slot("p_ccol"), "p_ccol", "ixed", True, None)
    waits(ctx, soft, "tables Case / case on a fresh mirror", ctx.path("p_ctab.db"),
          ctx.slot("p_ctab"), "p_ctab", "ase", ["Case"])

    # fresh mirror, both colliding tables in the publication: one waits
    waits(ctx, soft, "collision a_b / a.b on a fresh mirror", ctx.path("coll.db"),
          ctx.slot("coll"), "p_coll", "a_b", ["a_b"])

    # existing mirror, the colliding table joins later
    p2, s2 = ctx.path("late.db"), ctx.slot("late")
    ctx.once(p2, s2, "p_late", first=True)
    ctx.sql("INSERT INTO c_d VALUES (1, 'public')")
    ctx.once(p2, s2, "p_late")
    soft("c_d mirrored", ctx.assert_mirror_equals_source, p2, "c_d")
    before = before_of(ctx, p2)
    ctx.sql("ALTER PUBLICATION p_late ADD TABLE c.d")
    ctx.sql("INSERT INTO c.d VALUES (1, 'schema c')")
    refused(ctx, soft, "collision c_d / c.d added later", p2, s2, "p_late",
            "c_d", False, before)
    refused(ctx, soft, "collision c_d / c.d, second try", p2, s2, "p_late",
            "c_d", False, before)

    # reserved names: fresh mirror (nothing else to mirror: refused)
    p3, s3 = ctx.path("res.db"), ctx.slot("res")
    refused(ctx, soft, "table pgmirror_x on a fresh mirror", p3, s3,
            "p_res", "pgmirror_x", True, None)

    # SQLite's own names (sqlite_*, any case): refused up front too
    p5, s5 = ctx.path("sqlite.db"), ctx.slot("sqlite")
    refused(ctx, soft, "table SQLite.t (SQLite_t) on a fresh mirror", p5, s5,
            "p_sqlite", "SQLite_t", True, None)

    # reserved names: joining later (public.pgmirror_x; pgmirror.state ->
    # pgmirror_state, pgmirror's own table)
    p4, s4 = ctx.path("reslate.db"), ctx.slot("reslate")
    ctx.once(p4, s4, "p_res_late", first=True)
    ctx.sql("INSERT INTO ok1 VALUES (1)")
    ctx.once(p4, s4, "p_res_late")
    before = before_of(ctx, p4)
    ctx.sql("ALTER PUBLICATION p_res_late ADD TABLE pgmirror.state")
    ctx.sql("INSERT INTO pgmirror.state VALUES (1, 'evil')")
    refused(ctx, soft, "table pgmirror.state (-> pgmirror_state) added later",
            p4, s4, "p_res_late", "pgmirror_state", False, before)
    st = ctx.mirror_state(p4)
    soft.check(st.get("slot") == s4 and state_of(ctx, p4)["publications"] == "p_res_late",
               "pgmirror_state after pgmirror.state was published: %r" % st)

    p5, s5 = ctx.path("reslate2.db"), ctx.slot("reslate2")
    ctx.sql("CREATE TABLE ok2 (id int PRIMARY KEY); "
            "CREATE PUBLICATION p_res_late2 FOR TABLE ok2")
    ctx.once(p5, s5, "p_res_late2", first=True)
    ctx.sql("INSERT INTO ok2 VALUES (1)")
    ctx.once(p5, s5, "p_res_late2")
    before = before_of(ctx, p5)
    ctx.sql("ALTER PUBLICATION p_res_late2 ADD TABLE pgmirror_x")
    ctx.sql("INSERT INTO pgmirror_x VALUES (2)")
    refused(ctx, soft, "table pgmirror_x added later", p5, s5, "p_res_late2",
            "pgmirror_x", False, before)
    soft.done()


harness.main(test)

"""A mirror table belongs to its source table (by OID), not to its name.

Each case has its own tables, publication, slot and mirror. A keyed table
(id PRIMARY KEY) and a keyless one (REPLICA IDENTITY FULL, with duplicate
rows) are mirrored with an initial copy; the user then adds to the mirror
file, on each, an index, a view and a trigger (which logs inserts into a
table of the user's own). Then, while pgmirror is down:

- rename / set schema, "later": changes to old rows, the rename (or SET
  SCHEMA), then updates and deletes of OLD rows and inserts under the new
  name: one run (the stream reveals the rename);
- rename / set schema, "quiet": changes to old rows, then the rename and
  nothing after it: one run (the start renames; the stream then replays
  changes described under the old name, which must not rename it back),
  then updates and deletes of old rows in a second run;
- swap: a -> tmp, b -> a, tmp -> b in one transaction, with and without
  later changes;
- onto a dropped table's name: DROP TABLE x; ALTER TABLE y RENAME TO x,
  with and without later changes;
- gone: a table that joined, got rows and was dropped, whose name a
  renamed table took; a table renamed, changed and dropped, whose new name
  another renamed table took: the backlog of the gone table must not take
  the other's name or rows;
- clash: a table renamed so that its mirror name is another published
  table's: it waits (its mirror table goes; exit 1, a message naming the
  name), the other table as it was; renamed again, it is copied back;
- refill: a column added with a default to the keyed table, a row
  inserted (its Relation names the old name), then the rename: the refill
  of the added column must find the table by OID;
- follow: the rename with later changes while pgmirror runs as a service.

After every run: the mirror has exactly the source's tables under their
current names (no table under an old name, none under a temporary name),
each equal to its source row by row, pgmirror_tables and pgmirror_columns
name the new table, and the user's index, view and trigger are on the
renamed table (the view reads it, the trigger fires on the inserts
pgmirror applies after the rename).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Soft, check, qident, qtable  # noqa: E402


def all_tables(ctx, path):
    """Every table of the mirror file but SQLite's own, pgmirror's own
    state tables included: a temporary name must not remain."""
    return sorted(r[0] for r in ctx.mirror_query(
        path, "SELECT name FROM sqlite_schema WHERE type = 'table' AND "
              "name NOT IN ('pgmirror_state', 'pgmirror_columns', "
              "'pgmirror_tables', 'pgmirror_waiting', 'pgmirror_pending', 'pgmirror_staged', "
              "'pgmirror_feed') "
              "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"))


def make_tables(ctx, p):
    """Keyed p_k and keyless p_f with rows; returns their qualified names."""
    k, f = p + "_k", p + "_f"
    ctx.sql("CREATE TABLE %s (id int PRIMARY KEY, v text)" % qident(k))
    ctx.sql("CREATE TABLE %s (a int, b text)" % qident(f))
    ctx.sql("ALTER TABLE %s REPLICA IDENTITY FULL" % qident(f))
    ctx.sql("INSERT INTO %s SELECT g, 'v' || g FROM generate_series(1, 6) g"
            % qident(k))
    ctx.sql("INSERT INTO %s SELECT g %% 3, 'b' || (g %% 3) "
            "FROM generate_series(1, 6) g" % qident(f))
    return k, f


def add_user_objects(ctx, path, table, col):
    """An index, a view and a trigger of the user's own on mirror table
    `table`; the trigger logs inserts into the user's table audit."""
    con = ctx.mirror_connect(path)
    try:
        con.execute("CREATE TABLE IF NOT EXISTS audit (tag TEXT, id INTEGER)")
        con.execute("CREATE INDEX %s ON %s (%s)" % (qident("ix_" + table),
                                                    qident(table), qident(col)))
        con.execute("CREATE VIEW %s AS SELECT * FROM %s" % (qident("v_" + table),
                                                             qident(table)))
        con.execute("CREATE TRIGGER %s AFTER INSERT ON %s BEGIN INSERT INTO "
                    "audit VALUES ('%s', new.%s); END"
                    % (qident("tr_" + table), qident(table), table, qident(col)))
        con.commit()
    finally:
        con.close()


def check_user_objects(ctx, path, orig, qualified, col, inserted=()):
    """The user's objects made on mirror table `orig` are on the table of
    source table `qualified` now; `inserted`: values of col inserted since
    (the trigger logged them)."""
    mt = harness.mirror_table_name(qualified)
    objs = dict(((r[0], r[1]), r[2]) for r in ctx.mirror_query(
        path, "SELECT type, name, tbl_name FROM sqlite_schema "
              "WHERE type IN ('index', 'trigger')"))
    for kind, name in (("index", "ix_" + orig), ("trigger", "tr_" + orig)):
        check(objs.get((kind, name)) == mt, "%s %s of mirror table %s is on %r, "
              "expected %r (the table's new name)" % (kind, name, orig,
                                                      objs.get((kind, name)), mt))
    n_view = ctx.mirror_query(path, "SELECT count(*) FROM %s"
                              % qident("v_" + orig))[0][0]
    n_src = ctx.sql1("SELECT count(*) FROM %s" % qtable(qualified))
    check(n_view == n_src, "view v_%s has %d rows, source %s has %d"
          % (orig, n_view, qualified, n_src))
    logged = sorted(r[0] for r in ctx.mirror_query(
        path, "SELECT id FROM audit WHERE tag = ?", (orig,)))
    check(logged == sorted(inserted), "trigger tr_%s logged %s, expected %s"
          % (orig, logged, sorted(inserted)))


def check_meta(ctx, path, qualified):
    """pgmirror_tables and pgmirror_columns know the table by its new name
    and its OID."""
    mt = harness.mirror_table_name(qualified)
    schema, rel = (qualified.split(".", 1) if "." in qualified
                   else ("public", qualified))
    oid = ctx.sql1("SELECT c.oid FROM pg_class c JOIN pg_namespace n ON "
                   "n.oid = c.relnamespace WHERE n.nspname = %s AND "
                   "c.relname = %s", schema, rel)
    rows = ctx.mirror_query(path, "SELECT table_name, source_schema, source_table "
                            "FROM pgmirror_tables WHERE relation_oid = ?", (oid,))
    check(rows == [(mt, schema, rel)], "pgmirror_tables for OID %s: %s, expected "
          "%s" % (oid, rows, [(mt, schema, rel)]))
    cols = [r[0] for r in ctx.mirror_query(
        path, "SELECT column_name FROM pgmirror_columns WHERE table_name = ? "
              "ORDER BY position", (mt,))]
    check(cols == ctx.mirror_columns(path, mt), "pgmirror_columns for %s: %s, "
          "table has %s" % (mt, cols, ctx.mirror_columns(path, mt)))


def expect(ctx, path, tables, user=None):
    """The mirror has exactly `tables` (qualified source names), each equal
    to its source, plus the user's audit table."""
    want = sorted([harness.mirror_table_name(t) for t in tables] +
                  (["audit"] if user else []))
    got = all_tables(ctx, path)
    check(got == want, "mirror tables %s, expected %s" % (got, want))
    ctx.assert_mirror_equals_source(path, *tables)
    for t in tables:
        check_meta(ctx, path, t)


def setup(ctx, p, objects=True):
    k, f = make_tables(ctx, p)
    ctx.sql("CREATE SCHEMA IF NOT EXISTS s")
    pub = "pub_" + p
    ctx.sql("CREATE PUBLICATION %s FOR TABLE %s, %s" % (pub, qident(k), qident(f)))
    path, slot = ctx.path(p + ".db"), ctx.slot(p)
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, k, f)
    if objects:
        add_user_objects(ctx, path, k, "id")
        add_user_objects(ctx, path, f, "a")
    return k, f, pub, path, slot


def old_row_changes(ctx, k, f):
    """Updates and deletes of rows the mirror holds already."""
    ctx.sql("UPDATE %s SET v = 'changed' WHERE id = 1" % qtable(k))
    ctx.sql("DELETE FROM %s WHERE id = 2" % qtable(k))
    ctx.sql("UPDATE %s SET id = 60 WHERE id = 6" % qtable(k))
    ctx.sql("UPDATE %s SET b = 'changed' WHERE a = 1" % qtable(f))
    ctx.sql("DELETE FROM %s WHERE a = 2" % qtable(f))


def move(kind, name):
    """(SQL clause, new qualified name) for a rename or a schema move."""
    if kind == "rename":
        return "RENAME TO %s" % qident(name + "_new"), name + "_new"
    return "SET SCHEMA s", "s." + name


def case_move(ctx, kind, later):
    p = "%s_%s" % (kind[:3], "later" if later else "quiet")
    k, f, pub, path, slot = setup(ctx, p)
    # changes described under the old name, in the backlog of the next run
    ctx.sql("INSERT INTO %s VALUES (7, 'before')" % qident(k))
    ctx.sql("UPDATE %s SET v = 'before' WHERE id = 3" % qident(k))
    ctx.sql("INSERT INTO %s VALUES (7, 'before')" % qident(f))
    ctx.sql("DELETE FROM %s WHERE a = 0" % qident(f))
    (ck, k2), (cf, f2) = move(kind, k), move(kind, f)
    ctx.sql("BEGIN; ALTER TABLE %s %s; ALTER TABLE %s %s; COMMIT"
            % (qident(k), ck, qident(f), cf))
    ins_k, ins_f = [7], [7]
    if later:
        old_row_changes(ctx, k2, f2)
        ctx.sql("INSERT INTO %s VALUES (8, 'after')" % qtable(k2))
        ctx.sql("INSERT INTO %s VALUES (8, 'after')" % qtable(f2))
        ins_k.append(8)
        ins_f.append(8)
    ctx.once(path, slot, pub)
    expect(ctx, path, [k2, f2], user=True)
    check_user_objects(ctx, path, k, k2, "id", ins_k)
    check_user_objects(ctx, path, f, f2, "a", ins_f)
    # old rows changed after the rename reach the renamed table
    old_row_changes(ctx, k2, f2)
    ctx.sql("INSERT INTO %s VALUES (9, 'last')" % qtable(k2))
    ctx.sql("INSERT INTO %s VALUES (9, 'last')" % qtable(f2))
    ctx.once(path, slot, pub)
    expect(ctx, path, [k2, f2], user=True)
    check_user_objects(ctx, path, k, k2, "id", ins_k + [9])
    check_user_objects(ctx, path, f, f2, "a", ins_f + [9])


def case_swap(ctx, later):
    p = "swap_" + ("later" if later else "quiet")
    k, f, pub, path, slot = setup(ctx, p)
    ctx.sql("INSERT INTO %s VALUES (7, 'before')" % qident(k))
    ctx.sql("BEGIN; ALTER TABLE %s RENAME TO tmp_%s; ALTER TABLE %s RENAME TO %s;"
            "ALTER TABLE tmp_%s RENAME TO %s; COMMIT"
            % (qident(k), p, qident(f), qident(k), p, qident(f)))
    # k is now the keyless table and f the keyed one
    if later:
        ctx.sql("UPDATE %s SET v = 'after' WHERE id = 1" % qident(f))
        ctx.sql("DELETE FROM %s WHERE a = 1" % qident(k))
        ctx.sql("INSERT INTO %s VALUES (8, 'after')" % qident(k))
    ctx.once(path, slot, pub)
    expect(ctx, path, [k, f], user=True)
    check_user_objects(ctx, path, k, f, "id", [7])
    check_user_objects(ctx, path, f, k, "a", [8] if later else [])
    ctx.sql("UPDATE %s SET v = 'last' WHERE id = 3" % qident(f))
    ctx.sql("DELETE FROM %s WHERE a = 2" % qident(k))
    ctx.once(path, slot, pub)
    expect(ctx, path, [k, f], user=True)


def case_dropped_name(ctx, later):
    """f is dropped and k takes its name."""
    p = "drop_" + ("later" if later else "quiet")
    k, f, pub, path, slot = setup(ctx, p, objects=False)
    ctx.sql("BEGIN; DROP TABLE %s; ALTER TABLE %s RENAME TO %s; COMMIT"
            % (qident(f), qident(k), qident(f)))
    if later:
        ctx.sql("UPDATE %s SET v = 'after' WHERE id = 1" % qident(f))
    ctx.once(path, slot, pub)
    expect(ctx, path, [f])
    ctx.sql("DELETE FROM %s WHERE id = 2" % qident(f))
    ctx.once(path, slot, pub)
    expect(ctx, path, [f])


def case_gone_joined(ctx):
    """x joins, gets rows and is dropped; then k is renamed x: x's changes
    in the backlog are of a table gone, and must not take k's rows."""
    k, f, pub, path, slot = setup(ctx, "gonej", objects=False)
    ctx.sql("CREATE TABLE gonej_x (id int PRIMARY KEY, v text)")
    ctx.sql("ALTER PUBLICATION %s ADD TABLE gonej_x" % pub)
    ctx.sql("INSERT INTO gonej_x VALUES (100, 'x')")
    ctx.sql("DROP TABLE gonej_x")
    ctx.sql("ALTER TABLE %s RENAME TO gonej_x" % qident(k))
    ctx.sql("INSERT INTO gonej_x VALUES (7, 'after')")
    ctx.once(path, slot, pub)
    expect(ctx, path, ["gonej_x", f])


def case_gone_renamed(ctx):
    """k is renamed k2, changed, dropped; f is renamed k2: k's changes in
    the backlog name k2, which is f's now."""
    k, f, pub, path, slot = setup(ctx, "goner", objects=False)
    k2 = k + "2"
    ctx.sql("ALTER TABLE %s RENAME TO %s" % (qident(k), qident(k2)))
    ctx.sql("INSERT INTO %s VALUES (7, 'after')" % qident(k2))
    ctx.sql("DROP TABLE %s" % qident(k2))
    ctx.sql("ALTER TABLE %s RENAME TO %s" % (qident(f), qident(k2)))
    ctx.once(path, slot, pub)
    # k's mirror table stays until the start removes tables that left
    ctx.assert_mirror_equals_source(path, k2)
    check_meta(ctx, path, k2)
    ctx.sql("INSERT INTO %s VALUES (8, 'later')" % qident(k2))
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, k2)


def case_clash(ctx):
    """cl.z renamed cl.x_y, whose mirror name public.cl_x_y has: cl.x_y
    waits (its mirror table removed, exit 1 naming the clash), cl_x_y is
    as it was; renamed again, it is copied back."""
    ctx.sql("CREATE SCHEMA cl")
    ctx.sql("CREATE TABLE cl_x_y (id int PRIMARY KEY)")
    ctx.sql("CREATE TABLE cl.z (id int PRIMARY KEY)")
    ctx.sql("INSERT INTO cl_x_y VALUES (1); INSERT INTO cl.z VALUES (2)")
    ctx.sql("CREATE PUBLICATION pub_cl FOR TABLE cl_x_y, cl.z")
    path, slot = ctx.path("cl.db"), ctx.slot("cl")
    ctx.once(path, slot, "pub_cl")
    ctx.sql("ALTER TABLE cl.z RENAME TO x_y")
    for _ in range(2):
        rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub_cl", "--once"))
        check(rc == 1 and 'would both be mirrored as "cl_x_y"' in err,
              "a clash: exit %d, expected 1 with a message:\n%s" % (rc, err))
        check(all_tables(ctx, path) == ["cl_x_y"],
              "a clash: mirror tables %s" % all_tables(ctx, path))
        ctx.assert_mirror_equals_source(path, "public.cl_x_y")
        check([r[0] for r in ctx.mirror_query(path, "SELECT source_table FROM "
                                              "pgmirror_waiting")] == ["x_y"],
              "a clash: cl.x_y does not wait")
    ctx.sql("ALTER TABLE cl.x_y RENAME TO w")
    ctx.once(path, slot, "pub_cl")
    expect(ctx, path, ["cl_x_y", "cl.w"])


def case_refill(ctx):
    """The refill of an added column after a later rename."""
    k, f, pub, path, slot = setup(ctx, "refill", objects=False)
    ctx.sql("ALTER TABLE %s ADD COLUMN c int DEFAULT 5" % qident(k))
    ctx.sql("INSERT INTO %s VALUES (7, 'x', 70)" % qident(k))
    ctx.sql("ALTER TABLE %s RENAME TO %s" % (qident(k), qident(k + "_new")))
    ctx.once(path, slot, pub)
    expect(ctx, path, [k + "_new", f])


def case_follow(ctx):
    k, f, pub, path, slot = setup(ctx, "follow")
    ctx.create_marker(pub)
    proc = ctx.start_follow(path, slot, pub)
    ctx.sql("ALTER TABLE %s RENAME TO %s" % (qident(k), qident(k + "_new")))
    ctx.sql("ALTER TABLE %s SET SCHEMA s" % qident(f))
    old_row_changes(ctx, k + "_new", "s." + f)
    ctx.sql("INSERT INTO %s VALUES (8, 'after')" % qident(k + "_new"))
    ctx.sql("INSERT INTO s.%s VALUES (8, 'after')" % qident(f))
    ctx.catch_up(path, proc=proc)
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %d\n%s" % (rc, proc.stderr()))
    expect(ctx, path, [k + "_new", "s." + f, "pgm_marker"], user=True)
    check_user_objects(ctx, path, k, k + "_new", "id", [8])
    check_user_objects(ctx, path, f, "s." + f, "a", [8])


def test(ctx):
    soft = Soft()
    for kind in ("rename", "schema"):
        for later in (True, False):
            soft("%s, later changes %s" % (kind, later), case_move, ctx, kind, later)
    for later in (True, False):
        soft("swap, later changes %s" % later, case_swap, ctx, later)
        soft("onto a dropped name, later changes %s" % later, case_dropped_name,
             ctx, later)
    soft("a table gone, its name taken", case_gone_joined, ctx)
    soft("a table renamed, then gone, its name taken", case_gone_renamed, ctx)
    soft("a rename onto a name another published table has", case_clash, ctx)
    soft("refill after a rename", case_refill, ctx)
    soft("follow", case_follow, ctx)
    soft.done()


harness.main(test)

"""Schema changes that reach the stream as a new Relation message, each
followed by row changes, then pgmirror --once, comparing the mirror with the
source row by row (the SQLite table's columns with the source's, in order),
pgmirror_columns (names, positions, pg_type, type_modifier, is_key) and the
SQLite PRIMARY KEY with the replica identity.

Each case has its own table, publication, slot and mirror, so a refusal in
one does not hide the others.  Cases marked "or a clear error" may instead
exit 1 with a message naming the table, leaving the mirror as it was (and
refusing again on the next run); a wrong mirror after exit 0 is always a
failure.

Cases: ADD COLUMN nullable; ADD COLUMN DEFAULT 42 / NOT NULL DEFAULT 'd'
(old rows get the default); ADD COLUMN DEFAULT now() and DEFAULT random()
and serial (or a clear error); DROP COLUMN; DROP then ADD of a column with
the same name; DROP a then ADD z of the same type at the same position (or
a clear error); RENAME COLUMN; swapping two column names in one transaction
(or a clear error); ALTER TYPE int4 -> int8, int4 -> int8 USING a * 10,
int4 -> text, varchar(10) -> varchar(20), int4 -> numeric(10,2) (or a clear
error, except varchar widening and int8 which must work); REPLICA IDENTITY
DEFAULT -> FULL -> DEFAULT; primary key moved to another column, dropped,
added on two columns; several changes in one transaction; several changes
while pgmirror is down between rounds (incl. a column added with a default
then dropped or renamed before pgmirror runs); a change while pgmirror
follows.
"""

import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Soft, Failure, check, fail, qident  # noqa: E402

DECLARED = {"bool": "INTEGER", "int2": "INTEGER", "int4": "INTEGER",
            "int8": "INTEGER", "oid": "INTEGER", "float4": "REAL",
            "float8": "REAL", "bytea": "BLOB"}


def check_meta(ctx, path, table):
    """pgmirror_columns and the SQLite table's declared types and primary
    key agree with the source catalog."""
    src = ctx.sql(
        "SELECT a.attname, t.typname, a.atttypmod, "
        "  coalesce(a.attnum = ANY(i.indkey), false) "
        "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "JOIN pg_class c ON c.oid = a.attrelid "
        "LEFT JOIN pg_index i ON i.indrelid = c.oid AND "
        "  ((c.relreplident = 'd' AND i.indisprimary) OR "
        "   (c.relreplident = 'i' AND i.indisreplident)) "
        "WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
        "AND NOT a.attisdropped ORDER BY a.attnum", qident(table))
    ident = ctx.sql1("SELECT relreplident FROM pg_class WHERE oid = %s::regclass",
                     qident(table))
    meta = ctx.mirror_query(
        path, "SELECT column_name, pg_type, type_modifier, is_key, position "
              "FROM pgmirror_columns WHERE table_name = ? ORDER BY position",
        (table,))
    got = [(m[0], m[1], m[2]) for m in meta]
    want = [(s[0], s[1], s[2]) for s in src]
    check(got == want, "pgmirror_columns for %s: %s, source %s"
          % (table, got, want))
    check(len(set(m[4] for m in meta)) == len(meta),
          "pgmirror_columns positions for %s not distinct: %s" % (table, meta))
    info = ctx.mirror_query(path, "PRAGMA table_info(%s)" % qident(table))
    pk = [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5]]
    if ident == "f":
        check(pk == [], "%s has REPLICA IDENTITY FULL but the mirror table "
              "has PRIMARY KEY %s" % (table, pk))
    else:
        want_pk = [s[0] for s in src if s[3]]
        check(sorted(pk) == sorted(want_pk), "%s: mirror PRIMARY KEY %s, "
              "source replica identity %s" % (table, pk, want_pk))
        keys = [m[0] for m in meta if m[3]]
        check(sorted(keys) == sorted(want_pk), "%s: pgmirror_columns.is_key "
              "%s, source replica identity %s" % (table, keys, want_pk))
    for s in src:
        name, typname, typmod = s[0], s[1], s[2]
        if typname == "numeric":
            p, _ = harness.numeric_precision(typmod)
            want_t = "NUMERIC" if p is not None and p <= 15 else "TEXT"
        elif typname.startswith("_"):
            want_t = "TEXT"
        else:
            want_t = DECLARED.get(typname, "TEXT")
        got_t = [(r[2] or "").upper() for r in info if r[1] == name]
        check(got_t == [want_t], "%s.%s (%s): declared SQLite type %s, "
              "expected %s" % (table, name, typname, got_t, want_t))


def scenario(ctx, soft, name, create, steps, tolerate=False):
    """create: CREATE TABLE ... for table `name`; steps: SQL strings (or
    (sql, False) for a step not followed by a run)."""
    ctx.sql(create)
    ctx.sql("CREATE PUBLICATION %s FOR TABLE %s" % (qident("p_" + name),
                                                    qident(name)))
    path, slot = ctx.path(name + ".db"), ctx.slot(name)
    ctx.once(path, slot, "p_" + name, first=True)
    for i, step in enumerate(steps):
        sql, run = (step, True) if isinstance(step, str) else step
        before = (ctx.mirror_snapshot(path), ctx.mirror_state(path))
        ctx.sql(sql)
        if not run:
            continue
        what = "%s step %d" % (name, i)
        rc, out, err = ctx.run(ctx.mirror_args(path, slot, "p_" + name,
                                               "--once"))
        if rc == 0:
            ok = soft(what + ": compare", ctx.assert_mirror_equals_source,
                      path, name)
            ok = soft(what + ": columns", check_meta, ctx, path, name) and ok
            if not ok:
                harness.log("%s: the SQL was:\n%s" % (what, sql))
                return
            continue
        if rc == 1 and tolerate:
            harness.log("%s: refused (exit 1): %s" % (what, err.strip()))
            soft.notes.append("%s: refused: %s" % (what, err.strip()))
            soft.check(name in err, "%s: exit 1 but the message does not "
                       "name the table %r:\n%s" % (what, name, err))
            soft.check(ctx.mirror_snapshot(path) == before[0] and
                       ctx.mirror_state(path) == before[1],
                       "%s: refused, but the mirror changed" % what)
            rc2, _, err2 = ctx.run(ctx.mirror_args(path, slot, "p_" + name,
                                                   "--once"))
            if rc2 == 0:
                soft(what + ": compare after a refusal then exit 0",
                     ctx.assert_mirror_equals_source, path, name)
            else:
                soft.check(rc2 == 1, "%s: second run exit %d:\n%s"
                           % (what, rc2, err2))
            return
        soft.check(False, "%s: pgmirror --once exit %d%s\nSQL:%s\nstderr:\n%s"
                   % (what, rc, "" if tolerate else
                      " (this change must be mirrored)", sql, err))
        return


BASE = ("CREATE TABLE %s (id int PRIMARY KEY, a int, b text, "
        "v varchar(10))")
ROWS = ("INSERT INTO %s SELECT g, g * 10, 'b' || g, 'v' || g "
        "FROM generate_series(1, 5) g")


def test(ctx):
    soft = Soft()

    def base(name, steps, tolerate=False):
        scenario(ctx, soft, name, BASE % name,
                 [ROWS % name] + [s if isinstance(s, str) else s
                                  for s in steps], tolerate)

    base("add_null", ["""
        ALTER TABLE add_null ADD COLUMN c text;
        INSERT INTO add_null VALUES (6, 60, 'b6', 'v6', 'c6');
        UPDATE add_null SET c = 'one' WHERE id = 1;
        UPDATE add_null SET a = 22 WHERE id = 2;
    """])
    base("add_const", ["""
        ALTER TABLE add_const ADD COLUMN c int DEFAULT 42;
        ALTER TABLE add_const ADD COLUMN d text NOT NULL DEFAULT 'dflt';
        INSERT INTO add_const (id, a) VALUES (6, 60);
        INSERT INTO add_const VALUES (7, 70, 'b7', 'v7', 7, 'seven');
    """, "UPDATE add_const SET a = a + 1 WHERE id = 2",
        "UPDATE add_const SET c = NULL WHERE id = 3"])
    base("add_now", ["""
        ALTER TABLE add_now ADD COLUMN c timestamptz DEFAULT now();
        INSERT INTO add_now (id, a) VALUES (6, 60);
    """], tolerate=True)
    base("add_random", ["""
        ALTER TABLE add_random ADD COLUMN c float8 DEFAULT random();
        INSERT INTO add_random (id, a) VALUES (6, 60);
    """], tolerate=True)
    base("add_serial", ["""
        ALTER TABLE add_serial ADD COLUMN s serial;
        INSERT INTO add_serial (id, a) VALUES (6, 60);
    """], tolerate=True)
    base("drop_col", ["""
        ALTER TABLE drop_col DROP COLUMN b;
        UPDATE drop_col SET a = 100 WHERE id = 1;
        INSERT INTO drop_col VALUES (6, 60, 'v6');
    """, "DELETE FROM drop_col WHERE id = 2; "
         "UPDATE drop_col SET v = 'x' WHERE id = 3"])
    base("drop_readd", ["""
        ALTER TABLE drop_readd DROP COLUMN b;
        ALTER TABLE drop_readd ADD COLUMN b text;
        INSERT INTO drop_readd VALUES (6, 60, 'v6', 'new b');
    """])
    scenario(ctx, soft, "drop_add_same",
             "CREATE TABLE drop_add_same (id int PRIMARY KEY, a int)",
             ["INSERT INTO drop_add_same SELECT g, g FROM "
              "generate_series(1, 3) g",
              "ALTER TABLE drop_add_same DROP COLUMN a; "
              "ALTER TABLE drop_add_same ADD COLUMN z int; "
              "INSERT INTO drop_add_same VALUES (4, 40)"], tolerate=True)
    base("rename_col", ["""
        ALTER TABLE rename_col RENAME COLUMN a TO "a renamed";
        UPDATE rename_col SET "a renamed" = 99 WHERE id = 1;
        INSERT INTO rename_col VALUES (6, 60, 'b6', 'v6');
    """, "ALTER TABLE rename_col RENAME COLUMN id TO ident; "
         "UPDATE rename_col SET b = 'bb' WHERE ident = 2; "
         "DELETE FROM rename_col WHERE ident = 3"])
    scenario(ctx, soft, "rename_swap",
             "CREATE TABLE rename_swap (id int PRIMARY KEY, x int, y int)",
             ["INSERT INTO rename_swap SELECT g, g, -g FROM "
              "generate_series(1, 3) g",
              "BEGIN; ALTER TABLE rename_swap RENAME x TO tmp; "
              "ALTER TABLE rename_swap RENAME y TO x; "
              "ALTER TABLE rename_swap RENAME tmp TO y; COMMIT; "
              "INSERT INTO rename_swap VALUES (4, 4, -4)"], tolerate=True)
    base("type_int8", ["""
        ALTER TABLE type_int8 ALTER COLUMN a TYPE int8;
        INSERT INTO type_int8 VALUES (6, 9000000000, 'b6', 'v6');
        UPDATE type_int8 SET a = -9000000000 WHERE id = 1;
    """])
    base("type_using", ["""
        ALTER TABLE type_using ALTER COLUMN a TYPE int8 USING a * 10;
        INSERT INTO type_using VALUES (6, 600, 'b6', 'v6');
    """], tolerate=True)
    base("type_text", ["""
        ALTER TABLE type_text ALTER COLUMN a TYPE text;
        INSERT INTO type_text VALUES (6, 'six', 'b6', 'v6');
        UPDATE type_text SET a = a || '!' WHERE id = 1;
    """], tolerate=True)
    base("type_varchar", ["""
        ALTER TABLE type_varchar ALTER COLUMN v TYPE varchar(20);
        INSERT INTO type_varchar VALUES (6, 60, 'b6', '12345678901234567890');
    """])
    base("type_numeric", ["""
        ALTER TABLE type_numeric ALTER COLUMN a TYPE numeric(10,2);
        INSERT INTO type_numeric VALUES (6, 1.5, 'b6', 'v6');
        UPDATE type_numeric SET a = a + 0.25 WHERE id = 1;
    """], tolerate=True)
    base("ident", ["""
        ALTER TABLE ident REPLICA IDENTITY FULL;
        UPDATE ident SET b = 'full' WHERE id = 1;
        DELETE FROM ident WHERE id = 2;
        INSERT INTO ident VALUES (6, 60, 'b6', 'v6');
    """, """
        ALTER TABLE ident REPLICA IDENTITY DEFAULT;
        UPDATE ident SET b = 'default again' WHERE id = 3;
        UPDATE ident SET id = 30 WHERE id = 4;
        DELETE FROM ident WHERE id = 5;
    """])
    scenario(ctx, soft, "pk_move",
             "CREATE TABLE pk_move (id int, code text NOT NULL, v text, "
             "CONSTRAINT pk_move_pkey PRIMARY KEY (id))",
             ["INSERT INTO pk_move SELECT g, 'c' || g, 'v' || g FROM "
              "generate_series(1, 5) g", """
        ALTER TABLE pk_move DROP CONSTRAINT pk_move_pkey,
                            ADD CONSTRAINT pk_move_pkey PRIMARY KEY (code);
        UPDATE pk_move SET v = 'by code' WHERE code = 'c1';
        UPDATE pk_move SET code = 'c2x' WHERE code = 'c2';
        DELETE FROM pk_move WHERE code = 'c3';
        INSERT INTO pk_move VALUES (1, 'c9', 'duplicate id');
    """, """
        ALTER TABLE pk_move DROP CONSTRAINT pk_move_pkey;
        INSERT INTO pk_move VALUES (11, 'c11', 'no key');
    """, """
        ALTER TABLE pk_move ADD CONSTRAINT pk_move_pkey2 PRIMARY KEY (id, code);
        UPDATE pk_move SET v = 'two-column key' WHERE id = 1 AND code = 'c9';
        UPDATE pk_move SET code = 'c4x' WHERE id = 4;
        DELETE FROM pk_move WHERE id = 11;
    """])
    base("multi_tx", ["""
        BEGIN;
        ALTER TABLE multi_tx ADD COLUMN c int;
        INSERT INTO multi_tx VALUES (6, 60, 'b6', 'v6', 6);
        ALTER TABLE multi_tx DROP COLUMN b;
        INSERT INTO multi_tx VALUES (7, 70, 'v7', 7);
        ALTER TABLE multi_tx RENAME COLUMN a TO aa;
        UPDATE multi_tx SET aa = -1 WHERE id = 1;
        ALTER TABLE multi_tx ALTER COLUMN v TYPE varchar(30);
        INSERT INTO multi_tx VALUES (8, 80, 'a long value over ten', 8);
        DELETE FROM multi_tx WHERE id = 2;
        COMMIT;
    """])
    base("while_down", [("""
        ALTER TABLE while_down ADD COLUMN c int;
        INSERT INTO while_down VALUES (6, 60, 'b6', 'v6', 6);
    """, False), ("""
        ALTER TABLE while_down DROP COLUMN c;
        ALTER TABLE while_down ADD COLUMN d text;
        INSERT INTO while_down VALUES (7, 70, 'b7', 'v7', 'd7');
        UPDATE while_down SET d = 'one' WHERE id = 1;
    """, False), ("""
        ALTER TABLE while_down RENAME COLUMN d TO e;
    """, False), """
        UPDATE while_down SET e = 'two' WHERE id = 2;
        ALTER TABLE while_down ALTER COLUMN v TYPE varchar(40);
        INSERT INTO while_down VALUES (8, 80, 'b8', 'v8 is a longer one', 'e8');
    """])

    # a column added with a default, then renamed before pgmirror runs
    base("add_then_rename", [("""
        ALTER TABLE add_then_rename ADD COLUMN c int DEFAULT 42;
        INSERT INTO add_then_rename (id, a) VALUES (6, 60);
    """, False), """
        ALTER TABLE add_then_rename RENAME COLUMN c TO c2;
        INSERT INTO add_then_rename (id, a, c2) VALUES (7, 70, 7);
    """])

    # a change while pgmirror follows the stream
    ctx.sql(BASE % "follow")
    ctx.sql("CREATE PUBLICATION p_follow FOR TABLE follow")
    ctx.create_marker("p_follow")
    path, slot = ctx.path("follow.db"), ctx.slot("follow")
    ctx.once(path, slot, "p_follow", first=True)
    proc = ctx.start_follow(path, slot, "p_follow")
    try:
        ctx.sql(ROWS % "follow")
        ctx.catch_up(path, proc=proc)
        ctx.sql("ALTER TABLE follow ADD COLUMN c int DEFAULT 7; "
                "INSERT INTO follow (id, a) VALUES (6, 60); "
                "ALTER TABLE follow DROP COLUMN b; "
                "UPDATE follow SET c = 8 WHERE id = 1")
        ctx.catch_up(path, proc=proc)
        soft("follow: compare", ctx.assert_mirror_equals_source, path,
             "follow")
        soft("follow: columns", check_meta, ctx, path, "follow")
    except Failure as e:
        soft.check(False, "follow: %s" % e)
    finally:
        rc = ctx.stop(proc)
        soft.check(rc == 0, "follow: pgmirror exit %d after SIGTERM:\n%s"
                   % (rc, proc.stderr()))
    soft.done()


harness.main(test)

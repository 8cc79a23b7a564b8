"""Columns named rowid, _rowid_ or oid (SQLite's names for its row id).

Under REPLICA IDENTITY FULL a delete or update changes exactly one of
several equal rows; a source column with one of these names must not be
taken for the row id (it used to be: a delete of one of three equal rows
removed every row whose "rowid" column held the same value).  Each name
alone, all three together, and keyed tables with them (inserts, updates,
deletes, key changes, unchanged TOASTed values, schema changes that
rebuild the table) end equal to the source."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

FULL = {
    "f_rowid": '"rowid" int, v text',
    "f_rowid2": '"_rowid_" int, v text',
    "f_oid": '"oid" int, v text',
    "f_all": '"rowid" int, "_rowid_" int, "oid" int, v text',
    "f_mixed": '"ROWID" int, "_RowId_" int, v text',
}
KEYED = {
    # a key column named rowid becomes SQLite's INTEGER PRIMARY KEY
    "k_rowid": '"rowid" int PRIMARY KEY, v text, big text',
    "k_all": 'id int PRIMARY KEY, "rowid" int, "_rowid_" int, "oid" int, '
             'v text, big text',
    "k_text": '"oid" text, "rowid" text, v text, big text, '
              'PRIMARY KEY ("oid", "rowid")',
}
TABLES = list(FULL) + list(KEYED)


def idcols(t):
    """The non-v columns of a FULL table."""
    return [c.split()[0] for c in FULL[t].split(", ") if not c.startswith("v ")]


def delete_one(ctx, t, where):
    ctx.sql("DELETE FROM %s WHERE ctid = (SELECT ctid FROM %s WHERE %s LIMIT 1)"
            % (t, t, where))


def update_one(ctx, t, setv, where):
    ctx.sql("UPDATE %s SET %s WHERE ctid = (SELECT ctid FROM %s WHERE %s "
            "LIMIT 1)" % (t, setv, t, where))


def fill_full(ctx, t, start):
    cols = idcols(t)
    # rows 1..6 whose "row id" columns hold 7, and three equal rows of 7:
    # SQLite's row ids 1..9 collide with the column values
    for i in range(start, start + 6):
        ctx.sql("INSERT INTO %s VALUES (%s, 'r%d')"
                % (t, ", ".join(["%d" % i] * len(cols)), i))
    for _ in range(3):
        ctx.sql("INSERT INTO %s VALUES (%s, 'dup')"
                % (t, ", ".join(["7"] * len(cols))))
    ctx.sql("INSERT INTO %s VALUES (%s, 'other')"
            % (t, ", ".join(["7"] * len(cols))))


def changes_full(ctx, t):
    c0 = idcols(t)[0]
    delete_one(ctx, t, "v = 'dup'")
    update_one(ctx, t, "v = 'dup2'", "v = 'dup'")
    delete_one(ctx, t, "%s = 3" % c0)
    update_one(ctx, t, "%s = 1" % c0, "%s = 2" % c0)  # now two rows with 1
    delete_one(ctx, t, "%s = 1" % c0)


def test(ctx):
    ddl = []
    for t, cols in FULL.items():
        ddl.append("CREATE TABLE %s (%s); ALTER TABLE %s REPLICA IDENTITY FULL;"
                   % (t, cols, t))
    for t, cols in KEYED.items():
        ddl.append("CREATE TABLE %s (%s); ALTER TABLE %s ALTER big SET "
                   "STORAGE EXTERNAL;" % (t, cols, t))
    ctx.sql("\n".join(ddl) + "CREATE PUBLICATION pub FOR ALL TABLES;")
    path, slot = ctx.path(), ctx.slot()
    big = "x" * 20000

    # rows present at the initial copy
    for t in FULL:
        fill_full(ctx, t, 1)
    ctx.sql("INSERT INTO k_rowid SELECT i, 'v' || i, %s FROM generate_series(1, 9) i",
            big)
    ctx.sql("INSERT INTO k_all SELECT i, 7, 7, 7, 'v' || i, %s "
            "FROM generate_series(1, 9) i", big)
    ctx.sql("INSERT INTO k_text SELECT i::text, (i %% 3)::text, 'v', %s "
            "FROM generate_series(1, 9) i", big)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)

    # streamed changes
    for t in FULL:
        changes_full(ctx, t)
        fill_full(ctx, t, 11)
        changes_full(ctx, t)
    for t, k in (("k_rowid", '"rowid"'), ("k_all", "id")):
        ctx.sql("UPDATE %s SET v = 'u' WHERE %s = 2" % (t, k))        # TOAST 'u'
        ctx.sql("UPDATE %s SET %s = 100 WHERE %s = 3" % (t, k, k))    # key change
        ctx.sql("DELETE FROM %s WHERE %s = 4" % (t, k))
        ctx.sql("INSERT INTO %s (%s, v) VALUES (5000, 'new')" % (t, k))
    ctx.sql('UPDATE k_all SET "rowid" = 1, "_rowid_" = 2, "oid" = 3 WHERE id = 5')
    ctx.sql("UPDATE k_text SET v = 'u' WHERE \"oid\" = '2'")
    ctx.sql("UPDATE k_text SET \"rowid\" = 'x' WHERE \"oid\" = '3'")
    ctx.sql("DELETE FROM k_text WHERE \"oid\" = '4'")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)

    # schema changes that rebuild the tables, then more changes (a keyless
    # table cannot take an added column: every column is part of its key)
    for t in KEYED:
        ctx.sql("ALTER TABLE %s ADD COLUMN w int DEFAULT 1" % t)
        ctx.sql("ALTER TABLE %s DROP COLUMN v" % t)
    for t in FULL:
        cols = idcols(t)
        ctx.sql("ALTER TABLE %s DROP COLUMN v" % t)
        ctx.sql("INSERT INTO %s VALUES (%s), (%s), (%s)"
                % ((t,) + (", ".join(["8"] * len(cols)),) * 3))
        delete_one(ctx, t, "%s = 8" % cols[0])
        update_one(ctx, t, "%s = 9" % cols[0], "%s = 8" % cols[0])
        delete_one(ctx, t, "%s = 7" % cols[0])
    for t, k in (("k_rowid", '"rowid"'), ("k_all", "id")):
        ctx.sql("UPDATE %s SET w = 5 WHERE %s = 6" % (t, k))
        ctx.sql("UPDATE %s SET %s = 200 WHERE %s = 7" % (t, k, k))
        ctx.sql("DELETE FROM %s WHERE %s = 8" % (t, k))
    ctx.sql("UPDATE k_text SET w = 5 WHERE \"oid\" = '6'")
    ctx.sql("DELETE FROM k_text WHERE \"oid\" = '7'")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)


harness.main(test)

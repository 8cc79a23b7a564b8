"""REPLICA IDENTITY FULL: no primary key in the mirror; rows are matched on
all columns, NULL-safely; with duplicate rows, a DELETE removes exactly one
and an UPDATE changes exactly one; also a FULL table that has a primary key
in the source (still matched on all columns) and updates setting values to
and from NULL. A table made REPLICA IDENTITY FULL, and DEFAULT again, with
no row change after it: a quiet --once gives the mirror the source's key
(pgmirror_tables.replica_identity, pgmirror_columns.is_key, the PRIMARY
KEY or the match index); it kept the old one until the next row change."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["dups", "withpk"]


def one(ctx, where):
    """ctid of one row matching where (to touch exactly one duplicate)."""
    return "(SELECT ctid FROM dups WHERE %s LIMIT 1)" % where


def count(ctx, path, where):
    return ctx.mirror_query(path, "SELECT count(*) FROM dups WHERE " + where)[0][0]


def test(ctx):
    ctx.sql("""
        CREATE TABLE dups (a int, b text, c float8);
        ALTER TABLE dups REPLICA IDENTITY FULL;
        CREATE TABLE withpk (id int PRIMARY KEY, v text);
        ALTER TABLE withpk REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE dups, withpk;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql("""
        INSERT INTO dups VALUES
          (1, 'x', 1.5), (1, 'x', 1.5), (1, 'x', 1.5),
          (2, NULL, NULL), (2, NULL, NULL),
          (NULL, NULL, NULL), (NULL, NULL, NULL),
          (3, 'y', 'NaN'), (3, 'y', 'NaN'),
          (4, '', 0);
        INSERT INTO withpk SELECT g, CASE WHEN g % 2 = 0 THEN NULL ELSE 'v' END
          FROM generate_series(1, 10) g;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    pk = [r for r in ctx.mirror_query(path, "PRAGMA table_info(dups)") if r[5]]
    check(not pk, "REPLICA IDENTITY FULL table got a primary key: %r" % (pk,))

    # delete exactly one of three identical rows; of two all-NULL rows; of
    # two rows holding NULLs; of two NaN rows
    ctx.sql("DELETE FROM dups WHERE ctid = " + one(ctx, "a = 1"))
    ctx.sql("DELETE FROM dups WHERE ctid = " + one(ctx, "a IS NULL"))
    ctx.sql("DELETE FROM dups WHERE ctid = " + one(ctx, "a = 2"))
    ctx.sql("DELETE FROM dups WHERE ctid = " + one(ctx, "a = 3"))
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check(count(ctx, path, "a = 1") == 2, "one of three duplicates must remain 2")
    check(count(ctx, path, "a IS NULL AND b IS NULL") == 1,
          "exactly one all-NULL row must remain")

    # update exactly one of duplicates; update rows with NULLs
    ctx.sql("UPDATE dups SET b = 'changed' WHERE ctid = " + one(ctx, "a = 1"))
    ctx.sql("UPDATE dups SET c = 2 WHERE a = 2")
    ctx.sql("UPDATE dups SET a = 9 WHERE a IS NULL")
    ctx.sql("UPDATE dups SET b = NULL WHERE a = 4")
    ctx.sql("UPDATE dups SET c = 'Infinity' WHERE a = 3")
    ctx.sql("INSERT INTO dups SELECT * FROM dups")  # double everything
    ctx.sql("DELETE FROM dups WHERE ctid = " + one(ctx, "b = 'changed'"))
    ctx.sql("UPDATE withpk SET v = 'was null' WHERE id = 2")
    ctx.sql("UPDATE withpk SET v = NULL WHERE id = 3")
    ctx.sql("UPDATE withpk SET id = id + 100 WHERE id > 8")
    ctx.sql("DELETE FROM withpk WHERE id IN (4, 5)")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)

    # delete all duplicates of one value in one statement
    ctx.sql("DELETE FROM dups WHERE a = 1")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)

    quiet_change(ctx, path, slot)


def key_of(ctx, path, table):
    """What the mirror says of table's key: replica_identity, is_key per
    column, the PRIMARY KEY's columns, and whether it has the match index
    of a keyless table (docs/mirror-file.md)."""
    oid = ctx.sql1("SELECT %s::regclass::oid", table)
    ri = ctx.mirror_query(path, "SELECT replica_identity FROM pgmirror_tables "
                          "WHERE table_name = ?", (table,))
    keys = dict(ctx.mirror_query(path, "SELECT column_name, is_key FROM pgmirror_columns "
                                 "WHERE table_name = ?", (table,)))
    pk = sorted(r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(%s)" % table) if r[5])
    match = bool(ctx.mirror_query(path, "SELECT 1 FROM sqlite_master WHERE type = 'index' "
                                  "AND name = ?", ("pgmirror_match_%d" % oid,)))
    return (ri[0][0] if ri else None, keys, pk, match)


def quiet_change(ctx, path, slot):
    """The replica identity changed, and no row after it: a quiet --once
    gives the mirror table the source's key (the fingerprint compared
    nothing of it, and the check compared no key)."""
    ctx.sql("""
        CREATE TABLE became (id int PRIMARY KEY, v text);
        INSERT INTO became SELECT g, 'v' || g FROM generate_series(1, 5) g;
        ALTER PUBLICATION pub ADD TABLE became;
    """)
    ctx.once(path, slot, "pub")
    ctx.once(path, slot, "pub")  # the fingerprint is stored
    check(key_of(ctx, path, "became") == ("d", {"id": 1, "v": 0}, ["id"], False),
          "the mirror's key of became: %r" % (key_of(ctx, path, "became"),))
    for ident, want in (("FULL", ("f", {"id": 1, "v": 1}, [], True)),
                        ("DEFAULT", ("d", {"id": 1, "v": 0}, ["id"], False))):
        ctx.sql("ALTER TABLE became REPLICA IDENTITY %s" % ident)
        ctx.once(path, slot, "pub")
        got = key_of(ctx, path, "became")
        check(got == want, "after REPLICA IDENTITY %s and a quiet --once the mirror's key of "
              "became (replica_identity, is_key, PRIMARY KEY, match index) is %r, not %r"
              % (ident, got, want))
        ctx.assert_mirror_equals_source(path, "became")
        ctx.sql("UPDATE became SET v = v || '%s' WHERE id = 2; DELETE FROM became WHERE id = "
                "(SELECT min(id) FROM became)" % ident)
        ctx.once(path, slot, "pub")
        ctx.assert_mirror_equals_source(path, "became")


harness.main(test)

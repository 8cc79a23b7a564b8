"""REPLICA IDENTITY FULL: no primary key in the mirror; rows are matched on
all columns, NULL-safely; with duplicate rows, a DELETE removes exactly one
and an UPDATE changes exactly one; also a FULL table that has a primary key
in the source (still matched on all columns) and updates setting values to
and from NULL."""

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


harness.main(test)

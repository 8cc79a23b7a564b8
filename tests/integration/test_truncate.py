"""TRUNCATE: several tables in one statement; truncate followed by inserts
in the same transaction; truncate of a published together with an
unpublished table; TRUNCATE ... CASCADE through a foreign key; a truncated
table refilled in a later round."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["t1", "t2", "t3", "parent", "child"]


def fill(ctx):
    ctx.sql("""
        INSERT INTO t1 SELECT g, 'a' FROM generate_series(1, 30) g;
        INSERT INTO t2 SELECT g FROM generate_series(1, 30) g;
        INSERT INTO t3 SELECT g, g FROM generate_series(1, 30) g;
        INSERT INTO parent SELECT g FROM generate_series(1, 5) g;
        INSERT INTO child SELECT g, g % 5 + 1 FROM generate_series(1, 20) g;
        INSERT INTO other SELECT g FROM generate_series(1, 5) g;
    """)


def counts(ctx, path):
    return {t: ctx.mirror_query(path, "SELECT count(*) FROM %s" % t)[0][0]
            for t in TABLES}


def test(ctx):
    ctx.sql("""
        CREATE TABLE t1 (id int PRIMARY KEY, v text);
        CREATE TABLE t2 (n int);                 -- no key: insert/truncate only
        CREATE TABLE t3 (id int PRIMARY KEY, n int);
        CREATE TABLE parent (id int PRIMARY KEY);
        CREATE TABLE child (id int PRIMARY KEY, pid int REFERENCES parent);
        CREATE TABLE other (id int PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE t1, t2, t3, parent, child;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    fill(ctx)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)

    ctx.sql("TRUNCATE t1, t2")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    c = counts(ctx, path)
    check(c["t1"] == 0 and c["t2"] == 0 and c["t3"] == 30,
          "after TRUNCATE t1, t2: %r" % (c,))

    # truncate then insert in one transaction; plus a mixed statement
    ctx.sql("""
        BEGIN;
          INSERT INTO t3 VALUES (100, 100);
          TRUNCATE t3;
          INSERT INTO t3 SELECT g, -g FROM generate_series(1, 7) g;
          UPDATE t3 SET n = 0 WHERE id = 1;
          INSERT INTO t1 VALUES (1, 'refilled');
        COMMIT;
        TRUNCATE t2, other;
        INSERT INTO t2 VALUES (1), (1);
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    c = counts(ctx, path)
    check(c["t3"] == 7 and c["t1"] == 1 and c["t2"] == 2, "counts %r" % (c,))

    # cascade through a foreign key, and RESTART IDENTITY
    ctx.sql("TRUNCATE parent CASCADE")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check(counts(ctx, path)["child"] == 0, "TRUNCATE CASCADE did not empty child")

    # twice in one transaction, with rows in between
    ctx.sql("""
        BEGIN;
          INSERT INTO parent VALUES (1), (2);
          TRUNCATE parent, child, t1, t2, t3;
          INSERT INTO parent VALUES (3);
          INSERT INTO child VALUES (1, 3);
          TRUNCATE t3;
          INSERT INTO t3 VALUES (42, 42);
        COMMIT;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)


harness.main(test)

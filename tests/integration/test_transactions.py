"""Several tables (one in another schema: s.t -> s_t) changed in one
transaction; interleaved concurrent transactions committed in an order
different from their start; a rolled-back transaction and a rolled-back
savepoint are not applied; a transaction touching only unpublished tables
changes nothing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["public.a", "public.b", "s.t"]


def test(ctx):
    ctx.sql("""
        CREATE SCHEMA s;
        CREATE TABLE a (id int PRIMARY KEY, v text);
        CREATE TABLE b (k1 int, k2 text, n int, PRIMARY KEY (k1, k2));
        CREATE TABLE s.t (id bigint PRIMARY KEY, a_id int, note text);
        CREATE TABLE unpublished (id int PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE a, b, s.t;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    # one transaction over three tables
    ctx.sql("""
        BEGIN;
        INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 50) g;
        INSERT INTO b SELECT g % 7, 'k' || g, g FROM generate_series(1, 50) g;
        INSERT INTO s.t SELECT g, g % 50 + 1, NULL FROM generate_series(1, 50) g;
        UPDATE a SET v = v || '!' WHERE id % 3 = 0;
        DELETE FROM b WHERE n % 5 = 0;
        UPDATE s.t SET note = 'n' || id WHERE id < 10;
        INSERT INTO unpublished VALUES (1);
        COMMIT;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check(ctx.mirror_query(path, "SELECT count(*) FROM s_t")[0][0] == 50,
          "s.t must be mirrored as s_t")
    check("unpublished" not in ctx.mirror_tables(path),
          "an unpublished table appeared in the mirror")

    # interleaved transactions: c1 starts first, commits last
    c1, c2 = ctx.connect(autocommit=False), ctx.connect(autocommit=False)
    x1, x2 = c1.cursor(), c2.cursor()
    x1.execute("INSERT INTO a VALUES (100, 'c1 first')")
    x2.execute("INSERT INTO a VALUES (200, 'c2 first')")
    x1.execute("UPDATE b SET n = n + 1000 WHERE k1 = 1")
    x2.execute("UPDATE s.t SET note = 'c2' WHERE id = 20")
    x2.execute("DELETE FROM a WHERE id = 2")
    c2.commit()
    x1.execute("UPDATE a SET v = 'c1 saw' WHERE id = 200")  # sees c2's row
    x1.execute("DELETE FROM s.t WHERE id = 20")
    c1.commit()
    # rolled back: nothing of it may appear
    x1.execute("INSERT INTO a VALUES (300, 'rolled back')")
    x1.execute("DELETE FROM b")
    c1.rollback()
    # savepoint: the part rolled back must not appear, the rest must
    x1.execute("INSERT INTO a VALUES (400, 'kept')")
    x1.execute("SAVEPOINT sp")
    x1.execute("INSERT INTO a VALUES (401, 'undone')")
    x1.execute("DELETE FROM a WHERE id = 1")
    x1.execute("ROLLBACK TO SAVEPOINT sp")
    x1.execute("UPDATE a SET v = 'after sp' WHERE id = 3")
    c1.commit()
    c1.close()
    c2.close()

    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    r = ctx.mirror_query(path, "SELECT id, v FROM a WHERE id IN (1, 2, 200, 300, 400, 401) ORDER BY id")
    check(r == [(1, "a1"), (200, "c1 saw"), (400, "kept")],
          "interleaved / rolled back rows: %r" % (r,))

    # only unpublished changes: mirror data unchanged
    before = ctx.mirror_snapshot(path)
    ctx.sql("INSERT INTO unpublished SELECT generate_series(2, 100)")
    ctx.once(path, slot, "pub")
    check(ctx.mirror_snapshot(path) == before,
          "unpublished changes changed the mirror")


harness.main(test)

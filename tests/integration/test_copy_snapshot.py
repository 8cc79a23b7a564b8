"""The initial copy reads the publication's tables, row filters and column
lists inside the slot's snapshot. While the slot's creation waits for an
older transaction, a table is created with rows and added to the
publication, and (PostgreSQL 15+) another table's row filter and a third
one's column list are dropped: the first run copies the new table and the
tables as they are published at the snapshot, and later runs keep the
mirror equal to the source."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    v15 = ctx.server_version >= 150000
    ctx.sql("""
        CREATE TABLE a (id int PRIMARY KEY, v text);
        INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 100) g;
        CREATE TABLE b (id int PRIMARY KEY, v text);
        INSERT INTO b SELECT g, 'b' || g FROM generate_series(1, 100) g;
        CREATE TABLE c (id int PRIMARY KEY, x text, y text);
        INSERT INTO c SELECT g, 'x' || g, 'y' || g FROM generate_series(1, 100) g;
    """)
    if v15:
        ctx.sql("CREATE PUBLICATION pub FOR TABLE a, b WHERE (id <= 10), c (id, x)")
    else:
        ctx.sql("CREATE PUBLICATION pub FOR TABLE a, b, c")
    tables = ["a", "b", "c", "n"]
    path, slot = ctx.path(), ctx.slot()

    blocker = ctx.hold_xid()
    proc = ctx.start_follow(path, slot, "pub", "--once", tag="first")
    try:
        ctx.wait_slot_creation_waiting(slot, proc)
        ctx.sql("""
            CREATE TABLE n (id int PRIMARY KEY, v text);
            INSERT INTO n SELECT g, 'n' || g FROM generate_series(1, 50) g;
            ALTER PUBLICATION pub ADD TABLE n;
        """)
        if v15:
            ctx.sql("ALTER PUBLICATION pub SET TABLE a, b, c, n")
    finally:
        blocker.rollback()
        blocker.close()
    rc = proc.popen.wait(60)
    err = proc.stderr()
    harness.log("first run: exit %s\n%s" % (rc, err))
    check(rc == 0, "the first run exited %s:\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path, *tables)

    ctx.sql("""
        INSERT INTO n VALUES (1000, 'later');
        UPDATE b SET v = 'changed' WHERE id % 7 = 0;
        UPDATE c SET y = 'changed' WHERE id % 5 = 0;
        DELETE FROM a WHERE id > 90;
    """)
    ctx.wait_slot_inactive(slot)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *tables)


harness.main(test)

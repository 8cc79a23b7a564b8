"""Large and two-phase transactions are applied only when, and if, they
commit on the source: a transaction far larger than the server's
logical_decoding_work_mem (so the server spills it), a prepared transaction
that is not in the mirror until COMMIT PREPARED, and one rolled back with
ROLLBACK PREPARED that never is."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def count(ctx, path, where):
    return ctx.mirror_query(path, "SELECT count(*) FROM big WHERE " + where)[0][0]


def test(ctx):
    ctx.sql("""
        CREATE TABLE big (id int PRIMARY KEY, v text, n int);
        CREATE PUBLICATION pub FOR TABLE big;
    """)
    # the walsender of this database spills anything above 64 kB
    ctx.sql("ALTER DATABASE %s SET logical_decoding_work_mem = '64kB'" % ctx.dbname)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql("""
        BEGIN;
        INSERT INTO big SELECT g, md5(g::text), g FROM generate_series(1, 60000) g;
        UPDATE big SET n = -n WHERE id % 2 = 0;
        DELETE FROM big WHERE id % 5 = 0;
        COMMIT;
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "big")

    ctx.sql("""
        BEGIN;
        INSERT INTO big VALUES (100001, 'prepared', 1);
        UPDATE big SET v = 'changed by p1' WHERE id = 1;
        PREPARE TRANSACTION 'pgm_p1';
    """)
    ctx.sql("""
        BEGIN;
        INSERT INTO big VALUES (100002, 'rolled back', 2);
        DELETE FROM big WHERE id = 2;
        PREPARE TRANSACTION 'pgm_p2';
    """)
    ctx.sql("INSERT INTO big VALUES (100003, 'plain', 3)")
    try:
        ctx.once(path, slot, "pub")
        check(count(ctx, path, "id = 100003") == 1, "a plain commit after PREPARE is missing")
        check(count(ctx, path, "id IN (100001, 100002)") == 0,
              "a prepared, uncommitted transaction is in the mirror")
        check(count(ctx, path, "id = 1 AND v = 'changed by p1'") == 0,
              "a prepared transaction's update is in the mirror")
        check(count(ctx, path, "id = 2") == 1, "a prepared transaction's delete is in the mirror")

        ctx.sql("COMMIT PREPARED 'pgm_p1'")
        ctx.sql("ROLLBACK PREPARED 'pgm_p2'")
    finally:
        for gid in ("pgm_p1", "pgm_p2"):
            if ctx.sql("SELECT 1 FROM pg_prepared_xacts WHERE gid = %s", gid):
                ctx.sql("ROLLBACK PREPARED '%s'" % gid)
    ctx.once(path, slot, "pub")
    check(count(ctx, path, "id = 100001") == 1, "COMMIT PREPARED did not reach the mirror")
    check(count(ctx, path, "id = 100002") == 0, "ROLLBACK PREPARED reached the mirror")
    ctx.assert_mirror_equals_source(path, "big")


harness.main(test)

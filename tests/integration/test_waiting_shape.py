"""A mirrored table that can no longer be held waits; the others flow.

Tables the mirror takes at first, then changed on the source so that
SQLite cannot hold them: every column dropped (a table that holds only a
count of rows), a column added that differs from another only in case,
and a table renamed to a reserved name (pgmirror_...) while pgmirror is
down. Each time: the run goes on (the other tables' changes are applied,
the slot moves on), --once ends with exit 1 naming the table and its fix,
--status --json shows it waiting; after the fix (a column added back, the
column or the table renamed) it is copied again and equals the source.
A table with no columns from the start waits on the first run likewise,
and a rebuild after the slot was lost keeps the same tables waiting.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, parse_lsn  # noqa: E402
from waiting import waiting_json  # noqa: E402


def waiting(ctx, path):
    """{source name: reason} of the waiting tables."""
    return dict((k, t["reason"]) for k, t in waiting_json(ctx, path)[0].items())

def once_waits(ctx, path, slot, names, what):
    """A --once run: exit 1 naming each of names, the others applied, the
    slot at the source's position of before the run."""
    end = ctx.source_lsn()
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"))
    harness.log("%s: exit %d: %s" % (what, rc, err.strip()[-400:]))
    check(rc == 1, "%s: exit %d, expected 1\n%s" % (what, rc, err))
    for n in names:
        check(n in err, "%s: the error does not name %s:\n%s" % (what, n, err))
    check(ctx.slot_info(slot) is not None and os.path.exists(path),
          "%s: no slot or no mirror was made:\n%s" % (what, err))
    ctx.check_slot_not_ahead(path, slot)
    got = parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])
    check(got >= end, "%s: the slot did not move on: %s < %s"
          % (what, harness.format_lsn(got), harness.format_lsn(end)))
    check(sorted(waiting(ctx, path)) == sorted("public." + n for n in names),
          "%s: waiting tables %s, expected %s" % (what, waiting(ctx, path), names))
    ctx.assert_mirror_equals_source(path, "public.ok")
    return err


def test(ctx):
    ctx.sql("""
        CREATE TABLE ok (id int PRIMARY KEY, v text);
        INSERT INTO ok VALUES (1, 'one');
        CREATE TABLE z0 (a int); INSERT INTO z0 VALUES (1), (2);
        ALTER TABLE z0 DROP COLUMN a;
        CREATE TABLE z (id int PRIMARY KEY, v text);
        INSERT INTO z VALUES (1, 'a'), (2, 'b');
        ALTER TABLE z REPLICA IDENTITY FULL;
        CREATE TABLE cc (id int PRIMARY KEY, v text);
        INSERT INTO cc VALUES (1, 'x');
        CREATE TABLE rn (id int PRIMARY KEY, v text);
        INSERT INTO rn VALUES (1, 'r');
        CREATE PUBLICATION pub FOR ALL TABLES;
    """)
    path, slot = ctx.path(), ctx.slot()

    # a table without columns from the start: it waits, the others are copied
    err = once_waits(ctx, path, slot, ["z0"], "first run with a table without columns")
    check("count of rows" in err, "the reason does not say what z0 holds:\n%s" % err)
    check(sorted(ctx.mirror_tables(path)) == ["cc", "ok", "rn", "z"],
          "mirror tables: %s" % ctx.mirror_tables(path))

    # every column of z dropped, and rows changed; a column of cc that
    # differs from another only in case; the other tables flow
    ctx.sql("ALTER TABLE z DROP COLUMN id, DROP COLUMN v; INSERT INTO z DEFAULT VALUES; "
            "ALTER TABLE cc ADD COLUMN \"V\" text; UPDATE cc SET \"V\" = 'y'; "
            "INSERT INTO ok VALUES (2, 'two'); INSERT INTO z0 DEFAULT VALUES")
    once_waits(ctx, path, slot, ["z", "z0", "cc"], "columns dropped, a case clash added")
    check(sorted(ctx.mirror_tables(path)) == ["ok", "rn"],
          "mirror tables: %s" % ctx.mirror_tables(path))

    # renamed to a reserved name while pgmirror is down
    ctx.sql("ALTER TABLE rn RENAME TO pgmirror_rn; INSERT INTO pgmirror_rn VALUES (2, 's'); "
            "UPDATE ok SET v = 'changed'")
    once_waits(ctx, path, slot, ["z", "z0", "cc", "pgmirror_rn"], "a rename to a reserved name")

    # the slot lost: the rebuild from a fresh copy (one SQLite transaction)
    # sorts the tables again, and the same ones wait
    ctx.sql("SELECT pg_drop_replication_slot(%s)", slot)
    ctx.sql("UPDATE ok SET v = 'rebuilt' WHERE id = 1")
    err = once_waits(ctx, path, slot, ["z", "z0", "cc", "pgmirror_rn"], "a rebuild")
    check("rebuilt from a fresh copy" in err, "no rebuild:\n%s" % err)
    check(sorted(ctx.mirror_tables(path)) == ["ok"], "mirror tables after the rebuild: %s"
          % ctx.mirror_tables(path))

    # the fixes: each is copied again and equals the source
    ctx.sql("ALTER TABLE z ADD COLUMN n int DEFAULT 5; ALTER TABLE z0 ADD COLUMN b text; "
            "INSERT INTO z0 VALUES ('new'); ALTER TABLE cc RENAME COLUMN \"V\" TO v2; "
            "ALTER TABLE pgmirror_rn RENAME TO rn2; INSERT INTO ok VALUES (3, 'three')")
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"))
    check(rc == 0, "the run after the fixes: exit %d\n%s" % (rc, err))
    check(waiting(ctx, path) == {}, "tables still wait: %s" % waiting(ctx, path))
    ctx.assert_mirror_equals_source(path, "public.ok", "public.z", "public.z0", "public.cc",
                                    "public.rn2")
    ctx.sql("INSERT INTO z VALUES (6); UPDATE cc SET v2 = 'w'; DELETE FROM rn2 WHERE id = 1")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "public.z", "public.cc", "public.rn2")

    # a waiting row left for a table the mirror has (an older pgmirror,
    # which knew nothing of waiting, synced it): the next run forgets it
    oid = ctx.sql1("SELECT 'public.ok'::regclass::oid")
    con = ctx.mirror_connect(path)
    con.execute("INSERT INTO pgmirror_waiting (relation_oid, source_schema, source_table, "
                "reason, since) VALUES (?, 'public', 'ok', 'stale', 'then')", (oid,))
    con.commit()
    con.close()
    ctx.once(path, slot, "pub")
    check(waiting(ctx, path) == {}, "a stale waiting row stays: %s" % waiting(ctx, path))


harness.main(test)

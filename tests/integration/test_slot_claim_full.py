"""A first run whose slot creation fails because every replication slot of
the server is in use must not claim the slot: after a slot is freed and
another mirror creates a slot of that name, the first mirror's next run
refuses with the --drop-slot advice instead of dropping it. The failed
first run leaves no mirror file behind. Fills the
server's max_replication_slots, so runs alone."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    slot = ctx.slot()
    first, other = ctx.path("first.db"), ctx.path("other.db")
    cur = ctx.admin.cursor()
    cur.execute("SELECT current_setting('max_replication_slots')::int - "
                "(SELECT count(*) FROM pg_replication_slots)")
    free = cur.fetchone()[0]
    dummies = [ctx.slot("dummy%d" % i) for i in range(free)]
    try:
        for d in dummies:
            cur.execute("SELECT pg_create_physical_replication_slot(%s)", (d,))
        rc, out, err = ctx.once(first, slot, "pub", expect=1)
        harness.log("all slots in use: %s" % err.strip())
        check("all replication slots are in use" in err, "unexpected error:\n%s" % err)
        check(not os.path.exists(first) and not os.path.exists(first + "-wal"),
              "the failed first run left mirror file %s behind" % first)
        cur.execute("SELECT pg_drop_replication_slot(%s)", (dummies.pop(),))
        ctx.once(other, slot, "pub")
    finally:
        for d in dummies:
            cur.execute("SELECT pg_drop_replication_slot(%s)", (d,))
    taken = ctx.slot_info(slot)
    check(taken is not None, "the other mirror made no slot")

    ctx.sql("INSERT INTO t VALUES (1000, 'after')")
    rc, out, err = ctx.run(ctx.mirror_args(first, slot, "pub", "--once"))
    harness.log("first mirror's next run: exit %s\n%s" % (rc, err))
    after = ctx.slot_info(slot)
    check(after is not None and after["confirmed_flush_lsn"] == taken["confirmed_flush_lsn"],
          "the first mirror's next run (exit %s) took the other mirror's slot: before %r, "
          "after %r\n%s" % (rc, taken, after, err))
    check(rc == 1 and "--drop-slot" in err,
          "the first mirror's next run: exit %s, expected 1 with the --drop-slot advice\n%s"
          % (rc, err))
    ctx.once(other, slot, "pub")
    ctx.assert_mirror_equals_source(other, "t")


harness.main(test, exclusive=True)

"""--endpos LSN (taken between two transactions): the first transaction is
in the mirror, the second is not, exit 0; the mirror's confirmed_lsn is
not past the second transaction; then --once brings the rest.  Also an
--endpos at the current position with nothing after it returns."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE e (id int PRIMARY KEY, tx int);
        CREATE PUBLICATION pub FOR TABLE e;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql("INSERT INTO e SELECT g, 1 FROM generate_series(1, 10) g")
    ctx.sql("UPDATE e SET tx = 11 WHERE id = 1")
    mid = ctx.source_lsn()
    ctx.sql("INSERT INTO e SELECT g, 2 FROM generate_series(11, 20) g; "
            "UPDATE e SET tx = 22 WHERE id = 2")
    ctx.sql("DELETE FROM e WHERE id = 3")
    end = ctx.source_lsn()

    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--endpos",
                                           harness.format_lsn(mid)), timeout=60)
    if rc != 0:
        fail("--endpos exited %d\nstderr:\n%s" % (rc, err))
    ctx.check_slot_not_ahead(path, slot)
    r = ctx.mirror_query(path, "SELECT id, tx FROM e ORDER BY id")
    check(r == [(1, 11)] + [(i, 1) for i in range(2, 11)],
          "after --endpos %s the mirror should hold exactly the first two "
          "transactions, has %r" % (harness.format_lsn(mid), r))
    lsn = ctx.mirror_lsn(path)
    check(lsn < end, "confirmed_lsn %s is past transactions not applied (%s)"
          % (harness.format_lsn(lsn), harness.format_lsn(end)))

    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "e")

    # endpos at the current position, nothing after it: must return
    ctx.sql("INSERT INTO e VALUES (100, 3)")
    now = ctx.source_lsn()
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--endpos",
                                           harness.format_lsn(now)), timeout=60)
    check(rc == 0, "--endpos at the current LSN exited %d: %s" % (rc, err))
    ctx.assert_mirror_equals_source(path, "e")


harness.main(test)

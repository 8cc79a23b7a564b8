"""--drop-slot with a mirror path that does not exist (a typo) and no -S
does not fall back to the default slot name: it exits 2 with a message
that asks for -S, drops nothing and creates no file. With -S it drops the
named slot."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    before = ctx.slot_info(slot)
    check(before is not None, "setup: no slot")

    typo = ctx.path("mirorr.db")
    rc, out, err = ctx.run(["-d", ctx.dsn, "--drop-slot", typo])
    harness.log("mistyped path: exit %d: %s" % (rc, err.strip()))
    check(rc == 2, "--drop-slot with a missing mirror and no -S exited %d, expected 2\n%s"
          % (rc, err))
    check('mirror "%s" does not exist' % typo in err and "-S" in err,
          "--drop-slot with a missing mirror: the message does not ask for -S: %r" % err)
    check(not os.path.exists(typo), "--drop-slot created %s" % typo)
    check(ctx.slot_info(slot) == before, "the mirror's slot changed")

    rc, out, err = ctx.run(["-d", ctx.dsn, "-S", slot, "--drop-slot", typo])
    check(rc == 0, "--drop-slot -S with a missing mirror: exit %d\n%s" % (rc, err))
    check(ctx.slot_info(slot) is None, "--drop-slot -S did not drop %s" % slot)
    check(not os.path.exists(typo), "--drop-slot -S created %s" % typo)


harness.main(test)

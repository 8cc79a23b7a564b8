"""Publications: -P a -P b on the first run and -P a,b (or b,a) later name
the same set (exit 0); only tables of those publications are mirrored; a
different set on a later run (fewer, more, other) is an error: exit 1 with
a message, and the mirror is left as it was; a later run without -P uses
the remembered set."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE ta (id int PRIMARY KEY);
        CREATE TABLE tb (id int PRIMARY KEY);
        CREATE TABLE tc (id int PRIMARY KEY);
        CREATE PUBLICATION pa FOR TABLE ta;
        CREATE PUBLICATION pb FOR TABLE tb;
        CREATE PUBLICATION pc FOR TABLE tc;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, ["pa", "pb"], first=True)
    st = ctx.mirror_state(path)
    check(sorted(st["publications"].split(",")) == ["pa", "pb"],
          "pgmirror_state.publications = %r" % st["publications"])
    check(st["slot"] == slot, "pgmirror_state.slot = %r" % st["slot"])

    ctx.sql("INSERT INTO ta VALUES (1), (2); INSERT INTO tb VALUES (3); "
            "INSERT INTO tc VALUES (4)")
    ctx.once(path, slot, "pa,pb")
    ctx.assert_mirror_equals_source(path, "ta", "tb")
    check("tc" not in ctx.mirror_tables(path), "tc (not published in pa, pb) mirrored")

    ctx.sql("INSERT INTO ta VALUES (5)")
    ctx.once(path, slot, "pb,pa")
    ctx.once(path, slot, ["pb", "pa"])
    ctx.assert_mirror_equals_source(path, "ta", "tb")

    snap = ctx.mirror_snapshot(path)
    lsn = ctx.mirror_state(path)["confirmed_lsn"]
    ctx.sql("INSERT INTO ta VALUES (6); INSERT INTO tb VALUES (7)")
    for pubs in (["pa"], ["pa,pb,pc"], ["pc"], ["pa", "pc"]):
        rc, out, err = ctx.run(ctx.mirror_args(path, slot, pubs, "--once"))
        if rc != 1:
            fail("publications %s after pa,pb: exit %d, expected 1\nstderr:\n%s"
                 % (pubs, rc, err))
        check(err.strip(), "exit 1 without a message for publications %s" % pubs)
        harness.log("-P %s: %s" % (" -P ".join(pubs), err.strip().splitlines()[-1]))
        check(ctx.mirror_snapshot(path) == snap, "refused run changed the data")
        st = ctx.mirror_state(path)
        check(st["confirmed_lsn"] == lsn and
              sorted(st["publications"].split(",")) == ["pa", "pb"],
              "refused run changed pgmirror_state: %r" % st)

    rc, out, err = ctx.run(["-d", ctx.dsn, "-S", slot, "--once", path])
    check(rc == 0, "run without -P: exit %d\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path, "ta", "tb")


harness.main(test)

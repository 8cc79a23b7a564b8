"""A rebuild (the mirror's slot was dropped on the source) on a run that has
--no-initial-copy on its command line (left in a cron line) still copies:
the option applies to a mirror's first run only, and the run says it was
ignored. The mirror equals the source afterwards and keeps following."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE r (id int PRIMARY KEY, v text);
        INSERT INTO r SELECT g, 'v' || g FROM generate_series(1, 500) g;
        CREATE PUBLICATION pub FOR TABLE r;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.sql("UPDATE r SET v = 'x' WHERE id < 10")
    ctx.once(path, slot, "pub", "--no-initial-copy")
    ctx.assert_mirror_equals_source(path, "r")

    ctx.admin.cursor().execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    ctx.sql("DELETE FROM r WHERE id > 400; INSERT INTO r VALUES (9000, 'new')")
    rc, out, err = ctx.once(path, slot, "pub", "--no-initial-copy")
    harness.log("rebuild with --no-initial-copy:\n%s" % err)
    check("rebuilding" in err, "no rebuild warning:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "r")
    check("ignoring --no-initial-copy" in err,
          "the run did not say that --no-initial-copy was ignored:\n%s" % err)
    ctx.sql("DELETE FROM r WHERE id < 100")
    ctx.once(path, slot, "pub", "--no-initial-copy")
    ctx.assert_mirror_equals_source(path, "r")


harness.main(test)

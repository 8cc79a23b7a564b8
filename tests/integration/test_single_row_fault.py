"""A catalog look-up whose PQsetSingleRowMode() fails (made to fail by the
LD_PRELOAD shim tests/fault/fail_single_row.so) must not leave the
connection with an unread result: the look-up is tried again and the
later ones work, so the run completes and the mirror is equal.  The
look-up is the refill of a column added with a volatile default, which
reads the column row by row.  (Issue 8, item 15.)"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    shim = harness.fault_shim("fail_single_row")
    ctx.sql("CREATE TABLE a (id int PRIMARY KEY, v int);"
            "CREATE TABLE b (id int PRIMARY KEY, v int);"
            "INSERT INTO a SELECT g, g FROM generate_series(1, 100) g;"
            "INSERT INTO b SELECT g, g FROM generate_series(1, 100) g;"
            "CREATE PUBLICATION pub FOR TABLE a, b")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.sql("ALTER TABLE a ADD COLUMN r float8 DEFAULT random();"
            "UPDATE a SET v = v + 1 WHERE id = 1;"
            "ALTER TABLE b ADD COLUMN r float8 DEFAULT random();"
            "UPDATE b SET v = v + 1 WHERE id = 1")
    env = {"LD_PRELOAD": shim, "PGMIRROR_FAIL_SINGLE_ROW": "1",
           "ASAN_OPTIONS": "verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", "")}
    rc, out, err = ctx.once(path, slot, "pub", env=env)
    check("PQsetSingleRowMode call 1 fails" in err,
          "the fault shim did not fail a call (not loaded?):\n%s" % err)
    ctx.assert_mirror_equals_source(path, "a", "b")


harness.main(test)

"""A transaction that writes many rows has its pages' disk writes started
while it is written (a helper thread asks the kernel to write back the WAL
and the database file every few milliseconds), so that its commit and the
checkpoint after it do not write the whole transaction while pgmirror
waits. -v -v says, at such a transaction's end, how many times the disk was
asked. This test checks that each kind of big transaction starts the
helper and that small ones do not, and that the mirror equals its source
after each: an initial copy (30,000 rows), a streamed source transaction
of 30,000 rows, a column added with a default (the mirror table is rebuilt
and the column refilled row by row), a column dropped (the table is
rebuilt by one long statement), and 50 small transactions. How much time
it saves is for bench/bench.sh (-w copy) to show, not for a test.

A copy commits its rows in parts of about a second each (copy_parts.c),
so on a slow machine (an emulated arm64 build, a loaded one) the 30,000
rows would be several transactions of fewer rows than the helper waits
for, and none would start it: the copy here is one part whatever the
machine's speed (PGMIRROR_TEST_PART_ROWS past the table's rows)."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROWS = 30000
ASKED = re.compile(r'mirror ".*": the disk was asked (\d+) times to start writing '
                   r"the transaction's pages before its commit")


def asked(err):
    """The counts the helper gave, one per big transaction."""
    return [int(n) for n in ASKED.findall(err)]


def run_expecting(ctx, path, slot, what, big, env=None):
    """A --once run with -v -v; its big transaction (big) started the helper,
    or no transaction did; then the mirror equals the source."""
    rc, out, err = ctx.once(path, slot, "pub", "-v", "-v", timeout=120, env=env)
    counts = asked(err)
    if big:
        check(len(counts) == 1 and counts[0] >= 1,
              "%s did not start its disk writes early: %s\n%s" % (what, counts, err))
    else:
        check(counts == [], "%s started the disk writes' helper: %s\n%s" % (what, counts, err))
    ctx.assert_mirror_equals_source(path, "big")


def test(ctx):
    ctx.sql("CREATE TABLE big (id int PRIMARY KEY, t text, n numeric(10,2));"
            "INSERT INTO big SELECT g, md5(g::text), g / 7.0 "
            "FROM generate_series(1, %d) g;"
            "CREATE PUBLICATION pub FOR TABLE big" % ROWS)
    path, slot = ctx.path(), ctx.slot()
    run_expecting(ctx, path, slot, "the copy of %d rows" % ROWS, True,
                  env={"PGMIRROR_TEST_PART_ROWS": str(2 * ROWS)})

    ctx.sql("INSERT INTO big SELECT g, md5(g::text), 1 FROM generate_series(%d, %d) g"
            % (ROWS + 1, 2 * ROWS))
    run_expecting(ctx, path, slot, "a streamed transaction of %d rows" % ROWS, True)

    # rebuilds: an added column is refilled row by row; a dropped one
    # takes one long statement (its progress calls count), no row statement
    for change in ("ADD COLUMN k int DEFAULT 7", "DROP COLUMN n"):
        ctx.sql("ALTER TABLE big %s; UPDATE big SET t = 'x' WHERE id = 1" % change)
        run_expecting(ctx, path, slot, "the rebuild of %d rows for %s" % (2 * ROWS, change),
                      True)

    for i in range(50):
        ctx.sql("UPDATE big SET t = 'small %d' WHERE id = %d" % (i, i + 1))
    run_expecting(ctx, path, slot, "50 small transactions", False)


harness.main(test)

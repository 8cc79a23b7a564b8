"""--no-initial-copy: the first run copies none of the existing rows (its
tables are made empty), and later changes are followed; a table that joins
later is still copied."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, 'old' FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    path, slot = ctx.path(), ctx.slot()
    rc, out, err = ctx.once(path, slot, "pub", "--no-initial-copy")
    check(ctx.mirror_tables(path) == ["t"], "--no-initial-copy made tables %r"
          % ctx.mirror_tables(path))
    check(ctx.mirror_query(path, "SELECT count(*) FROM t")[0][0] == 0,
          "--no-initial-copy copied rows")
    check("copied" not in err, "--no-initial-copy copied:\n%s" % err)
    check(ctx.mirror_state(path)["initial_copy_done"] == 1,
          "initial_copy_done is not 1 after a first run without copy")
    ctx.sql("INSERT INTO t VALUES (101, 'new'), (102, 'new'); "
            "UPDATE t SET v = 'newer' WHERE id = 102")
    ctx.once(path, slot, "pub")
    rows = ctx.mirror_query(path, "SELECT id, v FROM t ORDER BY id")
    check(rows == [(101, "new"), (102, "newer")],
          "mirror should hold only the rows inserted after the first run: %r" % rows)

    # a table that joins later gets its rows: the option is the first run's
    ctx.sql("CREATE TABLE j (id int PRIMARY KEY); INSERT INTO j SELECT generate_series(1, 20); "
            "ALTER PUBLICATION pub ADD TABLE j")
    ctx.once(path, slot, "pub", "--no-initial-copy")
    ctx.assert_mirror_equals_source(path, "j")


harness.main(test)

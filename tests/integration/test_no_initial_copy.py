"""--no-initial-copy: the first run copies none of the existing rows (its
tables are made empty), and later changes are followed; a table that joins
later is still copied. An UPDATE of a row older than the first run that
carries the whole new row inserts it; other changes to such rows draw one
warning per table, saying why and what to run."""

import os
import shlex
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

    old_rows(ctx)


def old_rows(ctx):
    """Changes to rows older than a first run without copy: an UPDATE that
    carries the whole new row inserts it (the row is then as on the
    source); one that cannot (a large value left out as unchanged) and
    DELETEs of such rows draw one warning per table, which says why and
    what to run, not one per row."""
    ctx.sql("""
        CREATE TABLE o (id int PRIMARY KEY, n int, big text);
        ALTER TABLE o ALTER COLUMN big SET STORAGE EXTERNAL;
        INSERT INTO o SELECT g, 0, NULL FROM generate_series(1, 10) g;
        INSERT INTO o SELECT g, 0, repeat(md5(g::text), 300) FROM generate_series(11, 20) g;
        CREATE PUBLICATION pub_o FOR TABLE o;
    """)
    path, slot = ctx.path("old.db"), ctx.slot("old")
    ctx.once(path, slot, "pub_o", "--no-initial-copy")
    ctx.sql("UPDATE o SET n = 1 WHERE id <= 3")       # whole rows: inserted
    ctx.sql("UPDATE o SET n = 2 WHERE id > 15")       # big left out: cannot
    ctx.sql("DELETE FROM o WHERE id BETWEEN 4 AND 8")  # nothing to delete
    _, _, err = ctx.once(path, slot, "pub_o")
    rows = ctx.mirror_query(path, "SELECT id, n, big FROM o ORDER BY id")
    check(rows == [(1, 1, None), (2, 1, None), (3, 1, None)],
          "the UPDATEs of old rows did not insert them: %r\n%s" % (rows, err))
    warnings = [ln for ln in err.splitlines() if "found no matching row" in ln]
    check(len(warnings) == 1, "%d warnings for rows the mirror lacks, expected one for "
          "the table:\n%s" % (len(warnings), err))
    check("--no-initial-copy" in warnings[0] and "--resync=o" in warnings[0],
          "the warning does not say why and what to run: %s" % warnings[0])
    # the command runs as written: it copies the table
    cmd = warnings[0].split("to copy the table, run ", 1)[1].split(" (said once", 1)[0]
    words = shlex.split(cmd)
    check(words[0] == "pgmirror" and words[-1] == path, "not a whole command: %r" % cmd)
    rc, out, err = ctx.run(words[1:] + ["--once"])
    check(rc == 0, "%r --once: exit %d:\n%s" % (cmd, rc, err))
    ctx.assert_mirror_equals_source(path, "o")


harness.main(test)

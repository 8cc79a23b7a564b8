"""A table in two of the mirror's publications with different column lists
(PostgreSQL 15+) cannot be streamed: pgoutput ends the stream at its first
change with "cannot use different column lists for table ... in different
publications", and it does so for that change on every later try. Such a
table is refused where the publications are read, with a message that
names it and the publications and says what to do; equal lists, and a
list of every column beside a publication without one, are not refused.

1. A first run of publications c1 (id, a) and c2 (id, b) exits 1 with that
   message, before it makes a slot; made equal, the next run mirrors them.
2. A mirror running fine, then c2's list widened: the next --once exits 1
   with the message (before: the server's error, then "connection to the
   source lost ... run pgmirror again", which could never help).
3. c4 (id, a, b) (every column) and c5 (no list) on one table: mirrored
   and streamed. A list of every column but a stored generated one beside
   no list: the same from PostgreSQL 16 on, different on 15 (as pgoutput
   counts them).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def refused(ctx, err, table):
    check("source table \"%s\" has different column lists in publications \"c1\", \"c2\""
          % table in err and "same column list" in err,
          "the refusal does not name the table and the publications:\n%s" % err)
    check("connection to the source lost" not in err,
          "a refusal is reported as a lost connection:\n%s" % err)


def test(ctx):
    check(ctx.server_version >= 150000, "column lists need PostgreSQL 15")
    ctx.sql("CREATE TABLE cl (id int PRIMARY KEY, a int, b int); "
            "CREATE TABLE ok (id int PRIMARY KEY, v text); "
            "INSERT INTO cl VALUES (1, 10, 100); INSERT INTO ok VALUES (1, 'x'); "
            "CREATE PUBLICATION c1 FOR TABLE cl (id, a), ok; "
            "CREATE PUBLICATION c2 FOR TABLE cl (id, b)")
    path, slot = ctx.path(), ctx.slot()
    rc, _, err = ctx.once(path, slot, ["c1", "c2"], expect=1)
    refused(ctx, err, "public.cl")
    check(ctx.slot_info(slot) is None, "the refused first run left slot %s" % slot)

    ctx.sql("ALTER PUBLICATION c2 SET TABLE cl (id, a)")
    ctx.once(path, slot, ["c1", "c2"])
    ctx.sql("INSERT INTO cl VALUES (2, 20, 200); UPDATE ok SET v = 'y'")
    ctx.once(path, slot, ["c1", "c2"])
    got = ctx.mirror_query(path, "SELECT * FROM cl ORDER BY id")
    check(got == [(1, 10), (2, 20)], "cl: %r" % (got,))
    ctx.assert_mirror_equals_source(path, "ok")

    # the lists differ again, and the table changes
    ctx.sql("ALTER PUBLICATION c2 SET TABLE cl (id, a, b)")
    ctx.sql("INSERT INTO cl VALUES (3, 30, 300)")
    rc, _, err = ctx.once(path, slot, ["c1", "c2"], expect=1)
    refused(ctx, err, "public.cl")

    # every column in one list, no list in the other: the same columns
    ctx.sql("CREATE TABLE full_t (id int PRIMARY KEY, a int, b int); "
            "INSERT INTO full_t VALUES (1, 1, 1); "
            "CREATE PUBLICATION c4 FOR TABLE full_t (id, a, b); "
            "CREATE PUBLICATION c5 FOR TABLE full_t")
    p2, s2 = ctx.path("full.db"), ctx.slot("full")
    ctx.once(p2, s2, ["c4", "c5"])
    ctx.sql("INSERT INTO full_t VALUES (2, 2, 2); UPDATE full_t SET b = 9 WHERE id = 1")
    ctx.once(p2, s2, ["c4", "c5"])
    ctx.assert_mirror_equals_source(p2, "full_t")

    # a list of every column but a stored generated one, beside no list:
    # the same columns to pgoutput 16 and later (neither publishes it), but
    # not to 15's, which counts the generated column in "no list"
    ctx.sql("CREATE TABLE gen (id int PRIMARY KEY, a int, d int GENERATED ALWAYS AS (a) STORED); "
            "INSERT INTO gen (id, a) VALUES (1, 1); "
            "CREATE PUBLICATION c6 FOR TABLE gen (id, a); "
            "CREATE PUBLICATION c7 FOR TABLE gen")
    p3, s3 = ctx.path("gen.db"), ctx.slot("gen")
    v16 = ctx.server_version >= 160000
    rc, _, err = ctx.once(p3, s3, ["c6", "c7"], expect=0 if v16 else 1)
    if v16:
        ctx.sql("INSERT INTO gen (id, a) VALUES (2, 2)")
        ctx.once(p3, s3, ["c6", "c7"])
        got = ctx.mirror_query(p3, "SELECT * FROM gen ORDER BY id")
        check(got == [(1, 1), (2, 2)], "gen: %r" % (got,))
    else:
        check("source table \"public.gen\" has different column lists in publications "
              "\"c6\", \"c7\"" in err, "gen is not refused:\n%s" % err)


harness.main(test)

"""The initial copy passes rows from its reader thread to its writer in
reused batches (512 rows or about 256 kB each). Each shape a batch can take
is copied exactly: a first table whose only row holds empty text and an
empty bytea (a batch with no bytes at all: the empty text must stay '', not
become NULL), a table of many more columns than the one before, rows far
bigger than a batch and huge values among small rows, and a table whose
rows fill many batches with NULLs here and there. The copy's first
version lost the first: the empty text came out NULL. A batch holds fewer
rows of a wide table: copying 500 columns takes little more memory than
copying one (its version of 8 batches of 512 rows took 47 MB more)."""

import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

WIDE = 40
MB = 1024 * 1024


def peak_rss():
    """The most memory any pgmirror run of this test has held (bytes)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def memory_of_wide_copy(ctx):
    """Peak RSS of copying 3000 rows of 500 integer columns, less that of
    copying 3000 rows of one column (the narrow copy runs first)."""
    cols = ", ".join("c%d int" % i for i in range(500))
    vals = ", ".join("g" for _ in range(500))
    ctx.sql("CREATE TABLE narrow (id int PRIMARY KEY);"
            "INSERT INTO narrow SELECT g FROM generate_series(1, 3000) g;"
            "CREATE PUBLICATION pnarrow FOR TABLE narrow;"
            "CREATE TABLE wide500 (id int PRIMARY KEY, %s);"
            "INSERT INTO wide500 SELECT g, %s FROM generate_series(1, 3000) g;"
            "CREATE PUBLICATION pwide FOR TABLE wide500;" % (cols, vals))
    ctx.once(ctx.path("narrow.db"), ctx.slot("narrow"), "pnarrow")
    narrow = peak_rss()
    path = ctx.path("wide.db")
    ctx.once(path, ctx.slot("wide"), "pwide")
    # taken before the comparison: a child started once this process holds
    # the rows it compares (the replay mode's device) counts its memory too
    more = peak_rss() - narrow
    ctx.assert_mirror_equals_source(path, "wide500")
    return more


def test(ctx):
    # in a sanitizer build, freed memory would wait in ASan's quarantine
    opts = os.environ.get("ASAN_OPTIONS", "")
    os.environ["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "quarantine_size_mb=0"
    more = memory_of_wide_copy(ctx)
    harness.log("a 500-column copy took %.1f MB more than a 1-column one" % (more / MB))
    check(more < 30 * MB, "copying 500 columns took %.1f MB more than one column"
          % (more / MB))
    ctx.sql("""
        CREATE TABLE a_empty (id int PRIMARY KEY, t text, b bytea);
        INSERT INTO a_empty VALUES (1, '', '');
        CREATE TABLE b_huge (id int PRIMARY KEY, t text, b bytea);
        INSERT INTO b_huge
        SELECT g, CASE WHEN g % 50 = 0 THEN repeat(md5(g::text), 200000) ELSE md5(g::text) END,
               CASE WHEN g % 70 = 0 THEN decode(repeat('ab', 3000000), 'hex') ELSE '\\x01' END
        FROM generate_series(1, 400) g;
        CREATE TABLE d_many (id int PRIMARY KEY, t text, n numeric(10,2), at timestamptz);
        INSERT INTO d_many
        SELECT g, CASE WHEN g % 7 = 0 THEN NULL WHEN g % 11 = 0 THEN '' ELSE 'r' || g END,
               CASE WHEN g % 5 = 0 THEN NULL ELSE g / 3.0 END,
               '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 minute'
        FROM generate_series(1, 20000) g;
    """)
    cols = ", ".join("c%d text" % i for i in range(WIDE))
    vals = ", ".join("CASE WHEN g %% %d = 0 THEN NULL ELSE '%d-' || g END" % (i + 2, i)
                     for i in range(WIDE))
    ctx.sql("CREATE TABLE c_wide (id int PRIMARY KEY, %s);"
            "INSERT INTO c_wide SELECT g, %s FROM generate_series(1, 1500) g;"
            % (cols, vals))
    ctx.sql("CREATE PUBLICATION pub FOR TABLE a_empty, b_huge, c_wide, d_many")
    path, slot = ctx.path(), ctx.slot()
    rc, out, err = ctx.once(path, slot, "pub", "-v", timeout=180)

    got = ctx.mirror_query(path, "SELECT quote(t), quote(b) FROM a_empty")
    check(got == [("''", "X''")], "a row of empty values was mirrored as %r" % got)
    ctx.assert_mirror_equals_source(path, "a_empty", "b_huge", "c_wide", "d_many")
    for t, n in (("b_huge", 400), ("c_wide", 1500), ("d_many", 20000)):
        check('copied %d rows of "public.%s"' % (n, t) in err,
              "no line for the copy of %s:\n%s" % (t, err))


harness.main(test)

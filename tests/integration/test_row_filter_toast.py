"""An UPDATE that moves a row into a publication's row filter reaches the
stream as an INSERT (PostgreSQL 15+). When the update changed the key
but left a TOASTed column alone, that INSERT carries the "unchanged"
marker for the column instead of its value: the server has only the new
key and the changed columns (the old tuple holds just the key). The
mirror cannot know the value from the stream, so it copies the table
again at a consistent point (as for a changed row filter) rather than
stop (every run met the same change: the mirror was stuck) or store
NULL.

A keyed table with a row filter on its key gets such updates, in a
transaction with other changes to it and to a second table, with more
changes after; a --once run (binary stream) and a --no-binary one must
end equal to the filtered source, and say why the table was copied
again; a service must do the same within seconds. A REPLICA IDENTITY
FULL twin, whose old tuple has every value, must need no copy. A run
killed (kill -9) after it committed the transaction it skipped and before
the copy leaves the next run to copy the table."""

import hashlib
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BIG = "(SELECT string_agg(md5(%s || ':' || g), '') FROM generate_series(1, 400) g)"
WHERE = {"t": "id > 100", "f": "v > 100", "o": "true"}


def rows(ctx, path, table):
    """(id, v, md5 of big) of the published rows, in the source and the
    mirror, sorted."""
    def digest(r):
        return (r[0], r[1], None if r[2] is None else hashlib.md5(r[2].encode()).hexdigest())
    src = sorted(ctx.sql("SELECT id, v, md5(big) FROM %s WHERE %s" % (table, WHERE[table])))
    mir = sorted(digest(r) for r in ctx.mirror_query(path, "SELECT id, v, big FROM %s" % table))
    return src, mir


def assert_filtered(ctx, path, what):
    for t in WHERE:
        src, mir = rows(ctx, path, t)
        check(src == mir, "%s, %s: mirror differs from the filtered source:\n"
              "  source: %r\n  mirror: %r" % (what, t, src, mir))
    ctx.checked(path)


def changes(ctx, base):
    """In one transaction: rows moved into the filter by key changes (big
    unchanged), a row updated in it, one moved out, rows of o; then more."""
    ctx.sql("BEGIN; "
            "INSERT INTO o VALUES (%(b)d, 1, 'o'); "
            "UPDATE t SET v = v + 1 WHERE id = %(in)d; "
            "UPDATE t SET id = id + %(b)d WHERE id BETWEEN %(lo)d AND %(lo)d + 2; "
            "UPDATE t SET id = -id WHERE id = %(in)d + 1; "
            "UPDATE f SET v = v + 100 WHERE id BETWEEN %(lo)d AND %(lo)d + 2; "
            "INSERT INTO o VALUES (%(b)d + 1, 2, 'o'); "
            "UPDATE t SET v = -1 WHERE id = %(b)d + %(lo)d; "
            "COMMIT"
            % {"b": base, "lo": base // 200, "in": 100 + base // 200})
    ctx.sql("INSERT INTO t VALUES (%d, 7, 'after'); UPDATE o SET v = 3 WHERE id = %d"
            % (base + 500, base))


def test(ctx):
    check(ctx.server_version >= 150000, "row filters need PostgreSQL 15")
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, v int, big text); "
            "ALTER TABLE t ALTER COLUMN big SET STORAGE EXTERNAL; "
            "CREATE TABLE f (id int, v int, big text); "
            "ALTER TABLE f ALTER COLUMN big SET STORAGE EXTERNAL; "
            "ALTER TABLE f REPLICA IDENTITY FULL; "
            "CREATE TABLE o (id int PRIMARY KEY, v int, big text); "
            "CREATE PUBLICATION pub FOR TABLE t WHERE (id > 100), f WHERE (v > 100), o")
    ctx.create_marker("pub")
    for t in ("t", "f"):
        ctx.sql("INSERT INTO %s SELECT x, x, %s FROM generate_series(1, 120) x"
                % (t, BIG % "x::text"))
    check(ctx.sql1("SELECT pg_column_size(big) FROM t WHERE id = 1") > 8000,
          "test setup: big is not TOASTed")
    binp, textp = ctx.path("binary.db"), ctx.path("text.db")
    bins, texts = ctx.slot("bin"), ctx.slot("text")
    ctx.once(binp, bins, "pub")
    ctx.once(textp, texts, "pub", "--no-binary")

    changes(ctx, 1000)
    for path, slot, extra in ((binp, bins, ()), (textp, texts, ("--no-binary",))):
        _, _, err = ctx.once(path, slot, "pub", *extra)
        check("\"public.t\"" in err and "synced again" in err,
              "%s: the run does not say that t is copied again:\n%s" % (path, err))
        check("\"public.f\"" not in err,
              "%s: f (REPLICA IDENTITY FULL) needed no copy:\n%s" % (path, err))
        assert_filtered(ctx, path, "--once " + " ".join(extra))
        ctx.once(path, slot, "pub", *extra)
        assert_filtered(ctx, path, "a second --once " + " ".join(extra))

    # kill -9 after the run has committed the transaction it skipped and
    # before its copy: the next run must still copy the table again
    changes(ctx, 3000)
    shim = {"LD_PRELOAD": harness.fault_shim("kill_at_query"),
            "PGMIRROR_KILL_QUERY": " TEMPORARY "}
    rc, _, err = ctx.run(ctx.mirror_args(textp, texts, "pub", "--no-binary", "--once"),
                         env=shim)
    check(rc == -signal.SIGKILL and "kill_at_query: SIGKILL" in err,
          "the run was not killed before its copy (%d):\n%s" % (rc, err))
    _, _, err = ctx.once(textp, texts, "pub", "--no-binary")
    assert_filtered(ctx, textp, "the run after kill -9")

    # a service: the copy comes within seconds, not at the minute's check
    proc = ctx.start_follow(binp, bins, "pub")
    changes(ctx, 2000)
    ctx.catch_up(binp, proc=proc)
    assert_filtered(ctx, binp, "a service")
    check("synced again" in proc.stderr(), "the service does not say that t is copied "
          "again:\n%s" % proc.stderr())
    check(proc.poll() is None, "the service ended:\n%s" % proc.stderr())
    check(ctx.stop(proc) == 0, "the service did not exit 0:\n%s" % proc.stderr())


harness.main(test)

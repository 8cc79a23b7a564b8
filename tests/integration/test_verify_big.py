"""--verify on a table of a million rows: "ok", then, with one row deleted
from the mirror, "1 missing"; --resync of that table mends it, and
--verify says "ok" again; the peak RSS of each run, the --resync's too,
stays small (the table is never held in memory: it is compared on disk,
and copied as a stream).  Logs the speed of
--verify (its own rows/s on stderr, and the whole run) next to a plain
COPY ... TO STDOUT of the same rows, one run each (a figure, not a
benchmark: every build of the suite runs this test)."""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

ROWS = 1000000
# above what a run that reads no rows takes (pgmirror --status: pgmirror
# itself with libpq and SQLite, a few MB; more in a sanitizer build); the
# table as text is about 60 MB, as SQLite rows more
MAX_RSS_KB = 40 * 1024
TIME = "/usr/bin/time"


def run_measured(ctx, args):
    """(rc, stdout, stderr, peak RSS in kB, seconds) of one pgmirror run.
    The peak is GNU time's (package time): the rusage of a child that
    Python forks itself would count Python's own memory too."""
    out_path = os.path.join(ctx.tmpdir, "v.out")
    err_path = os.path.join(ctx.tmpdir, "v.err")
    rss_path = os.path.join(ctx.tmpdir, "v.rss")
    check(os.access(TIME, os.X_OK), "%s is needed to measure the peak RSS "
          "(Debian package time; scripts/install-deps.sh installs it)" % TIME)
    start = time.monotonic()
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        rc = subprocess.call([TIME, "-f", "%M", "-o", rss_path] + ctx.argv(args),
                             stdout=fo, stderr=fe, cwd=ctx.tmpdir, timeout=600)
    secs = time.monotonic() - start
    with open(out_path) as f:
        out = f.read()
    with open(err_path) as f:
        err = f.read()
    with open(rss_path) as f:
        lines = f.read().split()
    # GNU time notes "Command exited with non-zero status N" first
    return rc, out, err, int(lines[-1]), secs


def verify_rate(err, table="big"):
    m = re.search(r"compared (\d+) rows of \"public.%s\" in [0-9.]+ s " % table +
                  r"\((\d+) rows/s\)", err)
    check(m is not None, "no speed line on stderr: %s" % err)
    return int(m.group(2))


def copy_secs(ctx):
    """A plain COPY of the same rows to a sink, as a client reads it."""
    class Sink:
        def write(self, b):
            return len(b)
    cur = ctx.conn.cursor()
    start = time.monotonic()
    cur.copy_expert("COPY (SELECT id, a, b, c FROM ONLY public.big) TO STDOUT",
                    Sink())
    return time.monotonic() - start


def test(ctx):
    ctx.sql("""
        CREATE TABLE big (id int PRIMARY KEY, a text, b float8, c timestamptz);
        INSERT INTO big SELECT g, md5(g::text), g / 7.0,
            timestamptz '2024-01-01 00:00:00+00' + g * interval '1.5 s'
        FROM generate_series(1, %d) g;
        CREATE PUBLICATION pub FOR TABLE big;
    """ % ROWS)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", timeout=600)
    args = ctx.mirror_args(path, slot, "pub", "--verify")
    # in a sanitizer build, freed memory would wait in ASan's quarantine
    opts = os.environ.get("ASAN_OPTIONS", "")
    os.environ["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "quarantine_size_mb=0"
    # the daily integrity check (due on a new mirror) reads with a cache of
    # its own, a fixed 64 MB whatever the mirror's size: checked here first,
    # so that the runs below measure what the rows cost
    rc = run_measured(ctx, ["--check", path])[0]
    check(rc == 0, "--check of the new mirror exited %d" % rc)
    base = run_measured(ctx, ["--status", path])[3]
    limit = base + MAX_RSS_KB
    harness.log("pgmirror --status peaks at %d kB; the runs below may take %d kB"
                % (base, limit))

    rc, out, err, rss, secs = run_measured(ctx, args)
    if rc != 0 or out != "big: ok\n":
        fail("--verify exited %d\nstdout:\n%s\nstderr:\n%s" % (rc, out, err))
    check(rss <= limit, "--verify of %d rows peaked at %d kB of RSS "
          "(at most %d expected)" % (ROWS, rss, limit))
    copy = copy_secs(ctx)
    harness.log("--verify of %d rows: %d rows/s comparing, whole run %.2f s = "
                "%.0f rows/s; peak RSS %d kB" % (ROWS, verify_rate(err), secs,
                                                  ROWS / secs, rss))
    harness.log("plain COPY TO STDOUT of the same rows: %.2f s = %.0f rows/s"
                % (copy, ROWS / copy))

    con = ctx.mirror_connect(path)
    con.execute("DELETE FROM big WHERE id = 500000")
    con.commit()
    con.close()
    rc, out, err, rss, secs = run_measured(ctx, args)
    check(rc == 4 and out == "big: differs (1 missing, 0 unexpected, 0 changed)\n",
          "after a row deleted from the mirror: exit %d\nstdout:\n%s\nstderr:\n%s"
          % (rc, out, err))
    check(rss <= limit, "peak RSS %d kB" % rss)
    rc, out, err, rss, secs = run_measured(ctx, ctx.mirror_args(path, slot, "pub",
                                                               "--resync=big", "--once"))
    check(rc == 0, "--resync=big exited %d\nstderr:\n%s" % (rc, err))
    check(rss <= limit, "--resync of %d rows peaked at %d kB of RSS" % (ROWS, rss))
    harness.log("--resync of %d rows: %.2f s, peak RSS %d kB" % (ROWS, secs, rss))
    rc, out, err, rss, secs = run_measured(ctx, args)
    check(rc == 0 and out == "big: ok\n",
          "--verify after --resync: exit %d\nstdout:\n%s\nstderr:\n%s" % (rc, out, err))

    # the same rows in a table without a key: compared as a bag of rows
    ctx.sql("""
        CREATE TABLE bigf AS SELECT * FROM big;
        ALTER TABLE bigf REPLICA IDENTITY FULL;
        INSERT INTO bigf SELECT * FROM big WHERE id <= 10;
        CREATE PUBLICATION pubf FOR TABLE bigf;
    """)
    pathf, slotf = ctx.path("f.db"), ctx.slot("f")
    ctx.once(pathf, slotf, "pubf", timeout=600)
    con = ctx.mirror_connect(pathf)
    con.execute("DELETE FROM bigf WHERE rowid = (SELECT max(rowid) FROM bigf "
                "WHERE id = 3)")
    con.commit()
    con.close()
    # the daily check first, as above
    rc = run_measured(ctx, ["--check", pathf])[0]
    check(rc == 0, "--check of the keyless mirror exited %d" % rc)
    rc, out, err, rss, secs = run_measured(ctx, ctx.mirror_args(pathf, slotf, "pubf",
                                                                "--verify"))
    check(rc == 4 and out == "bigf: differs (1 missing, 0 unexpected, 0 changed)\n",
          "keyless, one of two equal rows deleted from the mirror: exit %d\n"
          "stdout:\n%s\nstderr:\n%s" % (rc, out, err))
    check(rss <= limit, "keyless: peak RSS %d kB" % rss)
    harness.log("--verify of %d keyless rows: %d rows/s comparing, whole run %.2f s; "
                "peak RSS %d kB" % (ROWS + 10, verify_rate(err, "bigf"), secs, rss))
    argsf = ctx.mirror_args(pathf, slotf, "pubf", "--resync", "--once")
    rc, out, err, rss, secs = run_measured(ctx, argsf)
    check(rc == 0 and rss <= limit, "keyless --resync: exit %d, peak RSS %d kB\n%s"
          % (rc, rss, err))
    rc, out, err, rss, secs = run_measured(ctx, ctx.mirror_args(pathf, slotf, "pubf",
                                                                "--verify"))
    check(rc == 0 and out == "bigf: ok\n", "keyless --verify after --resync: exit %d\n"
          "stdout:\n%s\nstderr:\n%s" % (rc, out, err))


harness.main(test)

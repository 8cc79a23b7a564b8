"""Errors in the middle of an initial copy, whose rows a reader thread takes
from the source while the writer inserts those before them: (1) the
source's COPY fails after many rows (a row filter dividing by zero at a
late row; PostgreSQL 15+, which has row filters); (2) the walsender doing
the COPY is terminated. Each run exits 1 at once, naming the table, leaves
nothing that looks complete (initial_copy_done = 0, no mirrored table),
and the next run copies everything."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
from copyparts import check_parts_left  # noqa: E402

ROWS = 300000


def copy_pid(ctx, proc):
    """The walsender running the COPY, once rows have gone out."""
    deadline = time.time() + 60 * harness.SLOW
    while True:
        r = ctx.sql("SELECT pid FROM pg_stat_progress_copy WHERE "
                    "datname = current_database() AND tuples_processed > 0")
        if r:
            return r[0][0]
        check(proc.poll() is None, "pgmirror exited %s before the copy was seen:\n%s"
              % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "the copy did not start:\n%s" % proc.stderr())
        time.sleep(0.01)


def test(ctx):
    ctx.sql("""
        CREATE TABLE big (id int PRIMARY KEY, v text, at timestamptz, n numeric(12,2));
        INSERT INTO big SELECT g, md5(g::text), '2024-01-01'::timestamptz + g * interval '1 s',
                               g / 7.0
        FROM generate_series(1, %d) g;
        CREATE TABLE small (id int PRIMARY KEY);
        INSERT INTO small VALUES (1), (2);
        CREATE PUBLICATION pub FOR TABLE big, small;
    """ % ROWS)
    path, slot = ctx.path(), ctx.slot()

    if ctx.server_version >= 150000:
        # (1) the COPY itself fails at row ROWS - 10
        ctx.sql("""
            CREATE TABLE late (id int PRIMARY KEY, v text);
            INSERT INTO late SELECT g, md5(g::text) FROM generate_series(1, %d) g;
            CREATE PUBLICATION plate FOR TABLE late WHERE (1 / (id - %d) <> 7);
        """ % (ROWS, ROWS - 10))
        lpath, lslot = ctx.path("late.db"), ctx.slot("late")
        rc, out, err = ctx.once(lpath, lslot, "plate", "-v", expect=1, timeout=120)
        check('the copy of "public.late" from the source failed' in err and
              "division by zero" in err,
              "a COPY failing late: no message naming the table and the cause:\n%s" % err)
        check("copied" not in err, "a failed COPY was reported as copied:\n%s" % err)
        check_parts_left(ctx, lpath, "a COPY that failed")
        ctx.sql("DROP PUBLICATION plate")

    # (2) the walsender doing the COPY goes away
    # (--once: a service tries again, and goes on from the parts stored)
    proc = ctx.start_follow(path, slot, "pub", "-v", "--once", tag="terminated")
    pid = copy_pid(ctx, proc)
    ctx.sql("SELECT pg_terminate_backend(%s)", pid)
    try:
        rc = proc.popen.wait(30 * harness.SLOW)
    except Exception:
        ctx.stop(proc, signal.SIGKILL)
        check(False, "pgmirror did not end after its walsender was terminated:\n%s"
              % proc.stderr())
    err = proc.stderr()
    harness.log("walsender terminated during the copy: exit %s\n%s" % (rc, err))
    check('copied %d rows of "public.big"' % ROWS not in err,
          "the copy finished before the walsender was terminated; make it bigger:\n%s" % err)
    check(rc == 1, "walsender terminated during the copy: exit %s, expected 1\n%s" % (rc, err))
    check('copy of "public.big"' in err,
          "walsender terminated during the copy: no message naming the table:\n%s" % err)
    check_parts_left(ctx, path, "a copy whose walsender was terminated")

    ctx.wait_slot_inactive(slot)
    ctx.once(path, slot, "pub", timeout=180)
    check(ctx.mirror_state(path)["initial_copy_done"] == 1, "initial_copy_done not 1")
    ctx.assert_mirror_equals_source(path, "big", "small")


harness.main(test)

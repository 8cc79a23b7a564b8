"""A first run killed (kill -9) in the middle of its initial copy leaves
nothing that looks complete (initial_copy_done = 0; the small table, copied
first, whole, and of the big one the parts its copy committed); so does one
stopped by SIGTERM, which exits 0 at once and says the next run copies the
tables still missing; the next run says it keeps the tables copied and
copies the others, and the mirror equals the source."""

import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
from copyparts import check_parts_left  # noqa: E402

ROWS = 300000


def wait_copy(ctx, proc):
    """Waits until the COPY is under way on the source."""
    deadline = time.time() + 60
    while True:
        n = ctx.sql("SELECT coalesce(max(tuples_processed), 0) FROM "
                    "pg_stat_progress_copy WHERE datname = current_database()")[0][0]
        if n > 0:
            return
        check(proc.poll() is None, "pgmirror exited %s before the copy was seen:\n%s"
              % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "the copy did not start:\n%s" % proc.stderr())
        time.sleep(0.01)


def test(ctx):
    ctx.sql("""
        CREATE TABLE big (id int PRIMARY KEY, v text, w text);
        INSERT INTO big SELECT g, md5(g::text), repeat('x', g %% 50)
        FROM generate_series(1, %d) g;
        CREATE TABLE small (id int PRIMARY KEY);
        INSERT INTO small VALUES (1), (2);
        CREATE PUBLICATION pub FOR TABLE big, small;
    """ % ROWS)
    path, slot = ctx.path(), ctx.slot()
    proc = ctx.start_follow(path, slot, "pub", "-v", tag="killed")
    wait_copy(ctx, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.popen.wait()
    check("copied %d rows of \"public.big\"" % ROWS not in proc.stderr(),
          "the copy finished before the kill; make it bigger:\n%s" % proc.stderr())

    check_parts_left(ctx, path, "an interrupted copy")
    rc, out, err = ctx.run(["--status", path])
    check(rc == 0 and "initial_copy: incomplete" in out, "--status: %d %s %s"
          % (rc, out, err))

    # SIGTERM during the copy of a run that starts over: exit 0, still incomplete
    ctx.wait_slot_inactive(slot)
    proc = ctx.start_follow(path, slot, "pub", "-v", tag="termed")
    wait_copy(ctx, proc)
    rc = ctx.stop(proc, signal.SIGTERM, timeout=30)
    err = proc.stderr()
    harness.log("SIGTERM during the copy: exit %s, stderr:\n%s" % (rc, err))
    if "copied %d rows of \"public.big\"" % ROWS not in err:  # stopped mid-copy
        check(rc == 0, "SIGTERM during the copy: exit %s\n%s" % (rc, err))
        check("the next run copies the tables still missing" in err,
              "SIGTERM during the copy did not say what happens next:\n%s" % err)
        check_parts_left(ctx, path, "a copy stopped by SIGTERM")

    ctx.sql("UPDATE big SET v = 'changed' WHERE id % 1000 = 0; DELETE FROM small")
    ctx.wait_slot_inactive(slot)
    rc, out, err = ctx.once(path, slot, "pub", timeout=180)
    check(re.search(r"did not finish; keeping the \d+ tables? it copied", err),
          "the second run did not say it goes on:\n%s" % err)
    check(ctx.mirror_state(path)["initial_copy_done"] == 1, "initial_copy_done not 1")
    ctx.assert_mirror_equals_source(path, "big", "small")
    ctx.sql("INSERT INTO small VALUES (3); DELETE FROM big WHERE id < 100")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "big", "small")


harness.main(test)

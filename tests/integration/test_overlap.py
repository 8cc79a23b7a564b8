"""Exit status 3: a second run on a mirror file that a running pgmirror
holds exits 3 at once with a message (the overlapping cron job); a
second mirror file given the same slot while the slot is in use exits 3;
neither disturbs the running pgmirror, which then stops with exit 0 on
SIGTERM and leaves a mirror equal to the source."""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def expect3(ctx, args, what):
    """The holder runs all along: a run that waited for it instead of
    exiting 3 at once would run into the timeout (a hang detector, not a
    guess at how fast a run is)."""
    rc, out, err = ctx.run(args, timeout=120)
    if rc != 3:
        fail("%s: exited %d, expected 3\nstderr:\n%s" % (what, rc, err))
    check(err.strip(), "%s: exit 3 without a message on stderr" % what)
    harness.log("%s: exit 3: %s" % (what, err.strip().splitlines()[-1]))


def test(ctx):
    ctx.sql("""
        CREATE TABLE o (id int PRIMARY KEY, v text);
        CREATE PUBLICATION pub FOR TABLE o;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    proc = ctx.start_follow(path, slot, "pub", tag="holder")
    ctx.sql("INSERT INTO o SELECT g, 'v' FROM generate_series(1, 100) g")
    ctx.catch_up(path, proc=proc)
    snap = ctx.mirror_snapshot(path)

    expect3(ctx, ctx.mirror_args(path, slot, "pub", "--once"),
            "second run on the same mirror file")
    expect3(ctx, ctx.mirror_args(path, slot, "pub", "--endpos", "0/1"),
            "second run (--endpos) on the same mirror file")
    other = ctx.path("other.db")
    expect3(ctx, ctx.mirror_args(other, slot, "pub", "--once"),
            "another mirror file with the slot in use")
    check(proc.poll() is None, "the running pgmirror died: %s" % proc.stderr())
    check(ctx.mirror_snapshot(path) == snap, "the refused runs changed the mirror")

    # the holder still works
    ctx.sql("UPDATE o SET v = 'after' WHERE id <= 10")
    ctx.catch_up(path, proc=proc)
    rc = ctx.stop(proc, signal.SIGTERM)
    check(rc == 0, "SIGTERM: exit %s\n%s" % (rc, proc.stderr()))
    ctx.wait_slot_inactive(slot)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "o", "pgm_marker")


harness.main(test)

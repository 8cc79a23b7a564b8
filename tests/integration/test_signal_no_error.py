"""A signal that stops a run while it waits for the source ends it with
exit 0, as the contract says, and then nothing is logged as an error: an
"error:" line (priority <3> under systemd) for a normal stop would page
whoever watches `journalctl -p err`. Here the catalog query of a first
run (the published tables) and of a rebuild after a lost slot waits on
a lock another session holds, and SIGTERM comes meanwhile; each said
"pgmirror: error: stopped by a signal while waiting to read the published
tables" while exiting 0."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def stopped_while_waiting(ctx, args, what):
    locker = ctx.connect(autocommit=False)
    locker.cursor().execute("LOCK pg_publication_rel IN ACCESS EXCLUSIVE MODE")
    try:
        proc = ctx.start(args, tag=what)
        deadline = time.time() + 30 * harness.SLOW
        while not ctx.sql("SELECT 1 FROM pg_locks WHERE NOT granted AND "
                          "relation = 'pg_publication_rel'::regclass"):
            check(proc.poll() is None, "%s: pgmirror exited %s before it waited:\n%s"
                  % (what, proc.poll(), proc.stderr()))
            check(time.time() < deadline, "%s: pgmirror did not wait on the lock" % what)
            time.sleep(0.05)
        rc = ctx.stop(proc, signal.SIGTERM, timeout=5)
    finally:
        locker.rollback()
        locker.close()
    err = proc.stderr()
    harness.log("%s: exit %s\n%s" % (what, rc, err))
    check(rc == 0, "%s: SIGTERM while waiting: exit %s\n%s" % (what, rc, err))
    check("stopped by a signal" in err, "%s: no word of the signal:\n%s" % (what, err))
    check("error:" not in err, "%s: a stop by a signal is logged as an error:\n%s" % (what, err))


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    path, slot = ctx.path(), ctx.slot()
    stopped_while_waiting(ctx, ctx.mirror_args(path, slot, "pub", "--once"), "first run")
    ctx.once(path, slot, "pub")

    ctx.wait_slot_inactive(slot)
    ctx.sql("SELECT pg_drop_replication_slot(%s)", slot)
    stopped_while_waiting(ctx, ctx.mirror_args(path, slot, "pub", "--once"), "rebuild")
    check(ctx.mirror_state(path)["last_error"] is None, "the stop left a last_error")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "t")


harness.main(test)

"""A publication of the mirror dropped and made again while the source
changes.

Before PostgreSQL 18, pgoutput reads each change with the catalog of its
time: a change made while the publication did not exist ends the stream
with 'publication "p2" does not exist', on every try, even once the
publication exists again. pgmirror used to call that a lost connection
("run pgmirror again to continue"; a service retried for ever). It must
say what happened and that the mirror must start over, and stop with
exit 1, --once and service alike; the advice must then work.

From 18 on pgoutput skips a publication it cannot find: the mirror goes
on, and once the publication is back it equals the source.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    v18 = ctx.server_version >= 180000
    ctx.sql("CREATE TABLE k (id int PRIMARY KEY); CREATE TABLE k2 (id int PRIMARY KEY); "
            "CREATE PUBLICATION p1 FOR TABLE k; CREATE PUBLICATION p2 FOR TABLE k2")
    ctx.create_marker("p1")
    path, slot = ctx.path(), ctx.slot()
    pubs = ["p1", "p2"]
    ctx.once(path, slot, pubs)
    proc = ctx.start_follow(path, slot, pubs)
    ctx.catch_up(path, proc=proc)
    ctx.sql("DROP PUBLICATION p2")
    ctx.sql("INSERT INTO k VALUES (1); INSERT INTO k2 VALUES (1)")
    ctx.sql("CREATE PUBLICATION p2 FOR TABLE k2")
    ctx.sql("INSERT INTO k VALUES (2); INSERT INTO k2 VALUES (2)")
    if v18:
        ctx.catch_up(path, proc=proc)
        check(ctx.stop(proc) == 0, "the service did not exit 0:\n%s" % proc.stderr())
        ctx.once(path, slot, pubs)
        ctx.assert_mirror_equals_source(path, "k", "k2")
        return

    deadline = time.time() + 30 * harness.SLOW
    while proc.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    check(proc.poll() == 1, "the service did not stop with exit 1 (%s):\n%s"
          % (proc.poll(), proc.stderr()))
    for err in (proc.stderr(), ctx.once(path, slot, pubs, expect=1)[2]):
        check('publication "p2" does not exist' in err and
              "start this mirror over: pgmirror -d " in err and " --drop-slot " in err,
              "the stop does not say what happened and what to do:\n%s" % err)
        check("connection to the source lost" not in err,
              "the stop is reported as a lost connection:\n%s" % err)

    # the advice works
    rc, _, err = ctx.run(ctx.mirror_args(path, slot, pubs, "--drop-slot"))
    check(rc == 0, "--drop-slot exited %d:\n%s" % (rc, err))
    for f in (path, path + "-wal", path + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    ctx.once(path, slot, pubs)
    ctx.sql("INSERT INTO k VALUES (3); INSERT INTO k2 VALUES (3)")
    ctx.once(path, slot, pubs)
    ctx.assert_mirror_equals_source(path, "k", "k2")


harness.main(test)

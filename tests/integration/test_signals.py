"""SIGTERM and SIGINT on a running pgmirror (no --once), both while a
workload is running and while idle: exit 0 promptly; what was applied is
a consistent prefix of the source's transactions (every transaction
inserts a batch into two tables and bumps a counter: the mirror holds
batches 1..n complete in both tables, n = counter); the slot is not ahead
of the mirror; a final --once makes the mirror equal to the source."""

import collections
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["ba", "bb", "counter", "pgm_marker"]
PER = 10


def batch(conn, i):
    cur = conn.cursor()
    cur.execute("INSERT INTO ba SELECT %s, g FROM generate_series(1, %s) g", (i + 1, PER))
    cur.execute("INSERT INTO bb SELECT %s, g, repeat('z', 50) FROM generate_series(1, %s) g",
                (i + 1, PER))
    cur.execute("UPDATE counter SET n = %s", (i + 1,))
    conn.commit()


def consistent(ctx, path, what):
    n = ctx.mirror_query(path, "SELECT n FROM counter")
    n = n[0][0] if n else 0
    for t in ("ba", "bb"):
        c = collections.Counter(r[0] for r in ctx.mirror_query(
            path, "SELECT batch FROM %s" % t))
        want = {b: PER for b in range(1, n + 1)}
        if dict(c) != want:
            missing = sorted(set(want) - set(c))[:10]
            extra = sorted(set(c) - set(want))[:10]
            partial = sorted(b for b in c if c[b] != PER)[:10]
            check(False, "%s: %s is not batches 1..%d: missing %s, extra %s, "
                  "partial %s" % (what, t, n, missing, extra, partial))
    harness.log("%s: consistent at batch %d" % (what, n))
    return n


def test(ctx):
    ctx.sql("""
        CREATE TABLE ba (batch int, i int, PRIMARY KEY (batch, i));
        CREATE TABLE bb (batch int, i int, pad text);  -- no key
        CREATE TABLE counter (id int PRIMARY KEY, n int);
        CREATE PUBLICATION pub FOR TABLE ba, bb, counter;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    ctx.sql("INSERT INTO counter VALUES (1, 0)")

    w = harness.Workload(ctx, batch)
    w.start()
    try:
        prev = 0
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM):
            proc = ctx.start_follow(path, slot, "pub", tag="sig%d" % sig)
            ctx.catch_up(path, proc=proc)
            rc = ctx.stop(proc, sig, timeout=30)
            check(rc == 0, "signal %d during a workload: exit %s\n%s"
                  % (sig, rc, proc.stderr()))
            ctx.check_slot_not_ahead(path, slot)
            n = consistent(ctx, path, "after signal %d" % sig)
            check(n >= prev, "counter went backwards")
            prev = n
            ctx.wait_slot_inactive(slot)
    finally:
        total = w.stop()
    check(total > 10, "workload ran only %d transactions" % total)

    # idle
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = ctx.start_follow(path, slot, "pub", tag="idle%d" % sig)
        ctx.catch_up(path, proc=proc)
        rc = ctx.stop(proc, sig, timeout=30)
        check(rc == 0, "signal %d while idle: exit %s\n%s" % (sig, rc, proc.stderr()))
        ctx.wait_slot_inactive(slot)
        consistent(ctx, path, "idle, signal %d" % sig)

    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check(consistent(ctx, path, "final") == total, "final counter")


harness.main(test)

"""A continuous pgmirror with -v -s 1: a progress line per status interval
("progress: T transactions, R rows; lag B bytes, S s; confirmed X/Y") whose
counts add up exactly to what was applied, with lag 0 once caught up.  A
quiet publication while unpublished tables are busy: the slot's
confirmed_flush_lsn keeps moving forward past the unrelated WAL, and is
never ahead of the mirror's confirmed_lsn."""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail, fmt, parse_lsn  # noqa: E402

PROGRESS = re.compile(r"^pgmirror: progress: (\d+) transactions, (\d+) rows; "
                      r"lag (\d+) bytes, (\d+\.\d) s; confirmed ([0-9A-F]+/[0-9A-F]+)$")


def progress(proc):
    lines = [l for l in proc.stderr().splitlines() if "progress:" in l]
    out = []
    for l in lines:
        m = PROGRESS.match(l)
        check(m, "progress line not in the documented form: %r" % l)
        out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)),
                    float(m.group(4)), parse_lsn(m.group(5))))
    return out


def wait_progress(proc, txns, rows, timeout=120):
    """Waits until the progress lines add up to txns and rows, and one
    line after that reports no lag."""
    deadline = time.time() + timeout
    while True:
        p = progress(proc)
        t, r = sum(x[0] for x in p), sum(x[1] for x in p)
        check(t <= txns and r <= rows, "progress lines add up to %d transactions, "
              "%d rows: more than the %d, %d applied" % (t, r, txns, rows))
        if t == txns and r == rows and p[-1][2] == 0:
            return p
        if proc.poll() is not None or time.time() > deadline:
            fail("progress lines add up to %d transactions, %d rows (want %d, %d)"
                 "\nstderr:\n%s" % (t, r, txns, rows, proc.stderr()))
        time.sleep(0.1)


def test(ctx):
    ctx.sql("""
        CREATE TABLE pubd (id int PRIMARY KEY, v text);
        CREATE TABLE noise (id bigserial PRIMARY KEY, pad text);
        CREATE PUBLICATION pub FOR TABLE pubd;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    proc = ctx.start_follow(path, slot, "pub", "-v", "-s", "1", tag="follow")
    # 10 transactions of 10 rows, 5 of 2 updates
    for i in range(10):
        ctx.sql("INSERT INTO pubd SELECT g, 'a' FROM generate_series(%d, %d) g"
                % (i * 10, i * 10 + 9))
    for i in range(5):
        ctx.sql("UPDATE pubd SET v = 'b' WHERE id IN (%d, %d)" % (i, i + 50))
    ctx.catch_up(path, proc=proc)  # one marker row: 1 transaction, 1 row
    lines = wait_progress(proc, 16, 111)
    check(all(x[4] <= ctx.mirror_lsn(path) for x in lines),
          "a progress line reports a position past the mirror's")
    ctx.assert_mirror_equals_source(path, "pubd", "pgm_marker")

    # quiet publication, busy unpublished table
    m0 = ctx.mirror_lsn(path)
    s0 = parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])

    def noise(conn, i):
        conn.cursor().execute("INSERT INTO noise (pad) SELECT repeat('n', 200) "
                              "FROM generate_series(1, 50)")

    w = harness.Workload(ctx, noise, autocommit=True)
    w.start()
    try:
        seen = []
        for round_ in range(3):
            # let the noise move the source's position before each target;
            # the flushed position: the write position may be ahead by WAL
            # of open transactions, which keepalives do not report
            w.wait_count(3 * (round_ + 1))
            target = ctx.source_flush_lsn()
            deadline = time.time() + 120
            while True:
                # the slot first, then the mirror: the mirror only moves on
                slot_lsn = parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])
                mirror_lsn = ctx.mirror_lsn(path)
                check(slot_lsn <= mirror_lsn, "slot confirmed_flush_lsn %s is ahead of "
                      "the mirror's confirmed_lsn %s" % (fmt(slot_lsn), fmt(mirror_lsn)))
                if slot_lsn >= target:
                    break
                if proc.poll() is not None:
                    fail("pgmirror exited: %s" % proc.stderr())
                if time.time() > deadline:
                    fail("round %d: slot confirmed_flush_lsn %s did not reach %s (the "
                         "source's position) within 120s while only unpublished tables "
                         "changed" % (round_, fmt(slot_lsn), fmt(target)))
                time.sleep(0.1)
            seen.append(slot_lsn)
    finally:
        n = w.stop()
    check(n > 5, "noise workload did not run (%d)" % n)
    # the first target may lie at or before s0 when the noise had not begun
    check(seen[-1] > seen[0] and seen[-1] > s0, "slot did not keep moving: %s -> %s"
          % (fmt(s0), ", ".join(fmt(x) for x in seen)))
    check(ctx.mirror_lsn(path) > m0, "mirror confirmed_lsn did not move")
    check(ctx.mirror_snapshot(path)["pubd"] is not None, "pubd vanished")
    ctx.assert_mirror_equals_source(path, "pubd", "pgm_marker")
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM: exit %s\n%s" % (rc, proc.stderr()))
    ctx.check_slot_not_ahead(path, slot)
    # no transactions were applied while only noise changed
    p = progress(proc)
    check(sum(x[0] for x in p) == 16, "transactions counted for unpublished "
          "changes: %d" % sum(x[0] for x in p))


harness.main(test)

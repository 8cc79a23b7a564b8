"""When the mirror was last known to be in sync (pgmirror_state's
last_sync_time) and its lag then, as a service and --once write them.

busy: a service whose published table changes all the time stores
last_sync_time at most once per interval and at least once per interval
(and a status interval), each time a moment when the mirror held all the
server had, not older. The interval is a minute; PGMIRROR_TEST_SYNC_SECS
makes it 2 s here.

once: a --once run ends at the server's position when it started: a
change committed after that (while it applies a big backlog) is not in
the mirror after that run, and its lag then (last_sync_lag_bytes) counts
it; the next --once brings it. A quiet --once moves last_sync_time on.

PARTS=busy,once runs only those."""

import datetime
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

INTERVAL = 2


def utc(text):
    """pgmirror_state's UTC text as seconds since the epoch."""
    t = datetime.datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S")
    frac = float("0" + text[19:]) if len(text) > 19 else 0.0
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() + frac


def setup(ctx):
    ctx.sql("""
        CREATE TABLE pubd (id int PRIMARY KEY, pad text);
        CREATE PUBLICATION pub FOR TABLE pubd;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    return path, slot


def part_busy(ctx, path, slot):
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "-s", "1"), tag="busy",
                     env={"PGMIRROR_TEST_SYNC_SECS": str(INTERVAL)})
    ctx.catch_up(path, proc=proc)
    base = 1000000

    def writer(conn, i):
        conn.cursor().execute("INSERT INTO pubd VALUES (%s, 'w')", (base + i,))
        time.sleep(0.02)

    w = harness.Workload(ctx, writer, autocommit=True)
    w.start()
    seen = []  # (when read, last_sync_time) for each new value
    t0 = time.time()
    try:
        while time.time() - t0 < 10:
            v = ctx.mirror_state(path)["last_sync_time"]
            if v is not None and (not seen or v != seen[-1][1]):
                seen.append((time.time(), v))
            if proc.poll() is not None:
                fail("the service exited %s:\n%s" % (proc.poll(), proc.stderr()))
            time.sleep(0.1)
    finally:
        n = w.stop()
    check(n > 50, "the writer ran %d transactions" % n)
    new = seen[1:]  # the first one may predate the busy time
    harness.log("busy: %d transactions; last_sync_time written at %s"
                % (n, ", ".join("%.1f s (%s)" % (r - t0, v) for r, v in new)))
    slack = 3 * harness.SLOW
    check(len(new) >= 10 / (INTERVAL + slack) - 1 and len(new) >= 2,
          "in 10 s of a busy service with a %d s sync interval, last_sync_time was "
          "written %d times: %s" % (INTERVAL, len(new), [v for _, v in seen]))
    # the service's writes are spaced (seen when read, every 0.1 s; the
    # first value seen may be the setup's --once's, another process); the
    # values are the moments the server was asked, which can lie closer
    # together when a busy mirror reaches two answers between two writes
    reads = [r for r, _ in new]
    for a, b in zip(reads, reads[1:]):
        check(b - a >= INTERVAL - 0.5, "last_sync_time written twice within %d s: %s"
              % (INTERVAL, ["%.2f s: %s" % (r - t0, v) for r, v in seen]))
    for read, v in new:
        check(utc(v) <= read and read - utc(v) <= INTERVAL + slack,
              "last_sync_time %s read at %s: not a recent moment"
              % (v, datetime.datetime.utcfromtimestamp(read)))
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "pubd")
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM: exit %d\n%s" % (rc, proc.stderr()))


def part_once(ctx, path, slot):
    ctx.sql("INSERT INTO pubd SELECT g, repeat('b', 50) FROM generate_series(1, 200000) g")
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "--once"), tag="once")
    deadline = time.time() + 30 * harness.SLOW
    while not (ctx.slot_info(slot) or {}).get("active"):
        if proc.poll() is not None or time.time() > deadline:
            fail("--once did not start streaming (exit %s):\n%s" % (proc.poll(), proc.stderr()))
        time.sleep(0.02)
    # the run has its end position now: this change comes after it
    ctx.sql("INSERT INTO pubd VALUES (-1, 'after')")
    after = ctx.source_flush_lsn()
    try:
        rc = proc.popen.wait(60 * harness.SLOW)
    except Exception:  # noqa: BLE001
        fail("--once did not end:\n%s" % proc.stderr())
    check(rc == 0, "--once: exit %d\n%s" % (rc, proc.stderr()))
    st = ctx.mirror_state(path)
    rows = ctx.mirror_query(path, "SELECT count(*), min(id) FROM pubd")[0]
    want = (ctx.sql1("SELECT count(*) FROM pubd WHERE id <> -1"), 1)
    check(rows == want, "after a --once that started before the change at -1: "
          "%d rows, lowest id %s (expected %d, %d)" % (rows + want))
    check(harness.parse_lsn(st["confirmed_lsn"]) < after,
          "confirmed_lsn %s is past the change after the end position" % st["confirmed_lsn"])
    check(st["last_sync_lag_bytes"] is not None and st["last_sync_lag_bytes"] > 0,
          "the --once run ended behind the server (a change came after its end position), "
          "but its lag then says %s bytes" % st["last_sync_lag_bytes"])
    # the next run brings it
    ctx.once(path, slot, "pub")
    check(ctx.mirror_query(path, "SELECT pad FROM pubd WHERE id = -1") == [("after",)],
          "the next --once did not bring the change after the first one's end")
    ctx.assert_mirror_equals_source(path, "pubd")
    # a quiet --once: in sync now, and says so
    before = ctx.mirror_state(path)["last_sync_time"]
    time.sleep(0.01)
    ctx.once(path, slot, "pub")
    quiet = ctx.mirror_state(path)
    check(quiet["last_sync_time"] > before, "a quiet --once left last_sync_time at %s"
          % before)


KNOWN = {"busy": part_busy, "once": part_once}


def test(ctx):
    path, slot = setup(ctx)
    harness.run_parts(ctx, KNOWN, path, slot)


harness.main(test)

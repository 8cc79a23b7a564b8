"""A hub and its devices killed at any moment (docs/feed.md, "When the hub
writes what"): a hub service (--feed, a segment a second) is killed with
kill -9 at random moments under a workload of small and large
transactions on tables with and without a key (duplicates, so that a row
applied twice or lost shows), and started again each time; after each
kill its slot is never ahead of what its manifest lists, and the manifest
never lists a group its mirror does not hold. Meanwhile a device reads the
feed and is killed with kill -9 during its catch-up, again and again. At
the end the device equals the hub, and the hub the source."""

import json
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["acc", "logs", "fullt", "big", "pgm_marker"]
KILLS = 5


def workload(conn, i):
    rnd = random.Random(i)
    cur = conn.cursor()
    if i % 25 == 7:  # a large transaction (small enough that the sanitizer
        # build's device and the comparisons keep up with the workload)
        cur.execute("INSERT INTO big SELECT %s * 100000 + g, repeat(md5(g::text), 4) "
                    "FROM generate_series(1, 1000) g", (i,))
        cur.execute("INSERT INTO logs SELECT %s, g, 'bulk' FROM generate_series(1, 400) g", (i,))
        cur.execute("DELETE FROM big WHERE id / 100000 < %s - 100", (i,))
        cur.execute("UPDATE acc SET n = n + 1")
    else:
        cur.execute("INSERT INTO logs VALUES (%s, 0, 'small'), (%s, 0, 'small')", (i, i))
        cur.execute("UPDATE acc SET n = n + 1, v = %s WHERE id = %s", (str(i), i % 50))
        cur.execute("INSERT INTO fullt VALUES (%s, 'x')", (i % 10,))
        if rnd.random() < 0.4:
            cur.execute("DELETE FROM fullt WHERE ctid = (SELECT ctid FROM fullt "
                        "WHERE a = %s LIMIT 1)", (rnd.randrange(10),))
    conn.commit()


def manifest(feed):
    with open(os.path.join(feed, "manifest.json")) as f:
        return json.load(f)


def check_listed(ctx, hub, feed, slot):
    """The slot no further than the manifest's end, the manifest no further
    than the hub's mirror (its group and position)."""
    m = manifest(feed)
    end = harness.parse_lsn(m["end"]["lsn"])
    confirmed = ctx.slot_info(slot)["confirmed_flush_lsn"]
    check(confirmed is None or harness.parse_lsn(confirmed) <= end,
          "the slot (%s) is ahead of the manifest's end (%s)" % (confirmed, m["end"]["lsn"]))
    st = ctx.mirror_query(hub, "SELECT feed_group FROM pgmirror_feed")[0][0]
    check(m["end"]["group"] <= st, "the manifest lists group %d, the mirror holds %d"
          % (m["end"]["group"], st))
    check(end <= ctx.mirror_lsn(hub), "the manifest's end %s is past the mirror's %s"
          % (m["end"]["lsn"], harness.format_lsn(ctx.mirror_lsn(hub))))


def test(ctx):
    random.seed(int(os.environ.get("PGMIRROR_SEED", time.time())))
    ctx.sql("""
        CREATE TABLE acc (id int PRIMARY KEY, n int, v text);
        CREATE TABLE logs (tx int, i int, note text);         -- no key
        CREATE TABLE fullt (a int, b text);                   -- duplicates
        ALTER TABLE fullt REPLICA IDENTITY FULL;
        CREATE TABLE big (id bigint PRIMARY KEY, pad text);
        CREATE PUBLICATION pub FOR TABLE acc, logs, fullt, big;
        INSERT INTO acc SELECT g, 0, '' FROM generate_series(0, 49) g;
    """)
    ctx.create_marker("pub")
    hub, dev, slot, feed = ctx.path("hub.db"), ctx.path("dev.db"), ctx.slot(), ctx.path("feed")
    args = ["--feed=" + feed, "--feed-interval=1"]
    ctx.once(hub, slot, "pub", *args)
    w = harness.Workload(ctx, workload, n=4000)  # bounded: the sanitizer build keeps up
    w.start()
    dev_kills = 0
    try:
        proc = ctx.start_follow(hub, slot, "pub", *args, tag="hub0")
        ctx.catch_up(hub, proc=proc)
        for k in range(KILLS):
            time.sleep(random.uniform(0.2, 1.5))  # a random moment, not a wait
            check(proc.poll() is None, "the hub exited %s before kill %d:\n%s"
                  % (proc.poll(), k, proc.stderr()))
            os.kill(proc.pid, signal.SIGKILL)
            proc.popen.wait()
            ctx.wait_slot_inactive(slot)
            check_listed(ctx, hub, feed, slot)
            at = ctx.mirror_lsn(hub)
            # a device catching up, killed in the middle of it
            dproc = ctx.start(["--from=" + feed, dev], tag="dev%d" % k)
            time.sleep(random.uniform(0.05, 0.8))
            check(dproc.poll() is None, "the device exited %s by itself:\n%s"
                  % (dproc.poll(), dproc.stderr()))
            os.kill(dproc.pid, signal.SIGKILL)
            dev_kills += 1
            dproc.popen.wait()
            harness.log("kill %d: hub at %s, workload at tx %d"
                        % (k + 1, harness.format_lsn(at), w.count))
            proc = ctx.start_follow(hub, slot, "pub", *args, tag="hub%d" % (k + 1))
            ctx.wait_for_mirror(hub, at + 1, proc=proc)
        ctx.catch_up(hub, proc=proc)
    finally:
        n = w.stop()
    check(n > 50, "workload only ran %d transactions" % n)
    ctx.stop(proc)
    ctx.wait_slot_inactive(slot)
    ctx.once(hub, slot, "pub", *args, timeout=120)
    check_listed(ctx, hub, feed, slot)
    ctx.assert_mirror_equals_source(hub, *TABLES)
    rows = ctx.assert_device_equals_hub(dev, hub, feed=feed)
    harness.log("%d transactions, %d kills of the hub, %d of the device during its catch-up; "
                "the device equals the hub (%d rows)" % (n, KILLS, dev_kills, rows))


harness.main(test)

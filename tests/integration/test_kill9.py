"""Crash safety: a running pgmirror (no --once) is killed with kill -9 at
random moments while a concurrent workload of many small and some large
transactions runs (held back while the mirror is far behind), and
restarted each time; the last run catches up once the workload stopped;
then --once, and the mirror equals the source:
nothing lost, nothing applied twice (tables without a key would show
doubled rows).  After each kill the slot is not ahead of the mirror."""

import os
import random
import signal
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["acc", "logs", "fullt", "big", "pgm_marker"]
KILLS = 5
AHEAD = 32 << 20  # bytes of WAL the workload may be ahead of the mirror


def workload(conn, i):
    rnd = random.Random(i)
    cur = conn.cursor()
    if i % 30 == 7:  # a large transaction
        cur.execute("INSERT INTO big SELECT %s * 100000 + g, repeat(md5(g::text), 4) "
                    "FROM generate_series(1, 10000) g", (i,))
        cur.execute("INSERT INTO logs SELECT %s, g, 'bulk' FROM generate_series(1, 3000) g", (i,))
        cur.execute("UPDATE acc SET n = n + 1")
        cur.execute("DELETE FROM big WHERE id %% 100000 %% 3 = 0 AND id / 100000 < %s", (i,))
    else:            # a small one
        cur.execute("INSERT INTO logs VALUES (%s, 0, 'small'), (%s, 1, NULL)", (i, i))
        cur.execute("UPDATE acc SET n = n + 1, v = %s WHERE id = %s", (str(i), i % 50))
        cur.execute("INSERT INTO fullt VALUES (%s, 'x')", (i % 10,))
        if rnd.random() < 0.4:
            cur.execute("DELETE FROM fullt WHERE ctid = (SELECT ctid FROM fullt "
                        "WHERE a = %s LIMIT 1)", (rnd.randrange(10),))
        if rnd.random() < 0.2:
            cur.execute("UPDATE fullt SET b = b || 'y' WHERE ctid = (SELECT ctid "
                        "FROM fullt WHERE a = %s LIMIT 1)", (rnd.randrange(10),))
    conn.commit()


def paced(ctx, path, halt):
    """The workload, held back before each large transaction while the
    mirror is more than AHEAD bytes of WAL behind the source: a mirror
    slower than the workload (a sanitizer build on a loaded machine) has a
    bounded backlog at each kill and at the end, whatever the machine's
    speed. A pace, not a wait: halt ends it."""
    def fn(conn, i):
        while i % 30 == 7 and not halt.is_set():
            cur = conn.cursor()
            cur.execute("SELECT pg_current_wal_lsn()::text")
            source = harness.parse_lsn(cur.fetchone()[0])
            conn.commit()
            try:
                behind = source - ctx.mirror_lsn(path)
            except (sqlite3.Error, harness.Failure):
                behind = 0
            if behind <= AHEAD:
                break
            halt.wait(0.05)
        workload(conn, i)
    return fn


def test(ctx):
    random.seed(int(os.environ.get("PGMIRROR_SEED", time.time())))
    ctx.sql("""
        CREATE TABLE acc (id int PRIMARY KEY, n int, v text);
        CREATE TABLE logs (tx int, i int, note text);         -- no key
        CREATE TABLE fullt (a int, b text);                   -- duplicates
        ALTER TABLE fullt REPLICA IDENTITY FULL;
        CREATE TABLE big (id bigint PRIMARY KEY, pad text);
        CREATE PUBLICATION pub FOR TABLE acc, logs, fullt, big;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    ctx.sql("INSERT INTO acc SELECT g, 0, '' FROM generate_series(0, 49) g")

    halt = threading.Event()
    w = harness.Workload(ctx, paced(ctx, path, halt))
    w.start()
    applied = []
    try:
        proc = ctx.start_follow(path, slot, "pub", tag="run0")
        ctx.catch_up(path, proc=proc)
        for k in range(KILLS):
            time.sleep(random.uniform(0.2, 1.5))   # a random moment, not a wait
            check(proc.poll() is None, "pgmirror exited %s before kill %d:\n%s"
                  % (proc.poll(), k, proc.stderr()))
            os.kill(proc.pid, signal.SIGKILL)
            proc.popen.wait()
            ctx.wait_slot_inactive(slot)
            ctx.check_slot_not_ahead(path, slot)
            applied.append(ctx.mirror_lsn(path))
            harness.log("kill %d: mirror at %s, workload at tx %d"
                        % (k + 1, harness.fmt(applied[-1]), w.count))
            proc = ctx.start_follow(path, slot, "pub", tag="run%d" % (k + 1))
            # the next kill lands while it applies: wait for some progress
            ctx.wait_for_mirror(path, applied[-1] + 1, proc=proc)
    finally:
        halt.set()
        n = w.stop()
    # the last run catches up with all the workload did, once it stopped
    ctx.catch_up(path, proc=proc)
    check(n > 50, "workload only ran %d transactions" % n)
    check(applied[-1] > applied[0], "the mirror did not advance between kills")
    os.kill(proc.pid, signal.SIGKILL)
    proc.popen.wait()
    ctx.wait_slot_inactive(slot)

    rc, out, err = ctx.once(path, slot, "pub", timeout=120)
    if "rebuilding" in err:  # the server lost WAL the slot needed (see README)
        harness.log("the closing run rebuilt the mirror:\n" + err)
    ctx.assert_mirror_equals_source(path, *TABLES)
    harness.log("%d transactions, %d kills, mirror equals source" % (n, KILLS))


harness.main(test)

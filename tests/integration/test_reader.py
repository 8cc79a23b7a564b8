"""Concurrent readers of the mirror file (WAL mode):
1. a reader holding an open read transaction does not block a --once
   round, and keeps seeing its old snapshot until it ends its
   transaction, then sees the new data;
2. a reader polling while a running pgmirror applies transfers between
   accounts (and a ledger row plus a counter per transfer, across tables)
   never sees half of a source transaction: the sum of balances is
   constant and the ledger count equals the counter in every read."""

import os
import random
import sqlite3
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

TOTAL = 10 * 1000


def transfer(conn, i):
    rnd = random.Random(i)
    cur = conn.cursor()
    if i % 40 == 39:   # one transaction touching every row
        cur.execute("UPDATE accounts SET balance = balance + "
                    "CASE WHEN id = 0 THEN -9 ELSE 1 END")
    else:
        a, b = rnd.sample(range(10), 2)
        amt = rnd.randint(1, 50)
        cur.execute("UPDATE accounts SET balance = balance - %s WHERE id = %s", (amt, a))
        cur.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s", (amt, b))
    cur.execute("INSERT INTO ledger VALUES (%s, %s)", (i, "t"))
    cur.execute("UPDATE counter SET n = n + 1")
    conn.commit()


def test(ctx):
    ctx.sql("""
        CREATE TABLE accounts (id int PRIMARY KEY, balance int);
        CREATE TABLE ledger (i int PRIMARY KEY, note text);
        CREATE TABLE counter (id int PRIMARY KEY, n int);
        CREATE PUBLICATION pub FOR TABLE accounts, ledger, counter;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    ctx.sql("INSERT INTO accounts SELECT g, 1000 FROM generate_series(0, 9) g; "
            "INSERT INTO counter VALUES (1, 0); "
            "INSERT INTO ledger VALUES (-2, 'x'); DELETE FROM ledger")
    ctx.once(path, slot, "pub")
    check(ctx.mirror_query(path, "PRAGMA journal_mode")[0][0].lower() == "wal",
          "mirror is not in WAL mode")

    # --- 1. an open read transaction and a --once round ---------------
    reader = sqlite3.connect(path, timeout=5, isolation_level=None)
    reader.execute("BEGIN")
    old = reader.execute("SELECT sum(balance), count(*) FROM accounts").fetchone()
    check(old == (TOTAL, 10), "initial mirror state %r" % (old,))
    ctx.sql("UPDATE accounts SET balance = balance + 1; "
            "INSERT INTO ledger VALUES (-1, 'extra')")
    # the reader stays open until after the run: a run blocked by it would
    # never finish (the timeout catches that)
    ctx.once(path, slot, "pub", timeout=120)
    again = reader.execute("SELECT sum(balance), count(*) FROM accounts").fetchone()
    led = reader.execute("SELECT count(*) FROM ledger").fetchone()[0]
    check(again == old and led == 0,
          "reader inside its transaction saw new data: %r, ledger %d" % (again, led))
    reader.execute("COMMIT")
    new = reader.execute("SELECT sum(balance), count(*) FROM accounts").fetchone()
    check(new == (TOTAL + 10, 10), "after COMMIT the reader sees %r" % (new,))
    reader.close()
    ctx.assert_mirror_equals_source(path, "accounts", "ledger", "counter")
    ctx.sql("UPDATE accounts SET balance = balance - 1; DELETE FROM ledger")
    ctx.once(path, slot, "pub")

    # --- 2. a reader polling during continuous apply ------------------
    seen = []
    bad = []
    stop = threading.Event()

    def poll():
        con = sqlite3.connect(path, timeout=60)
        while not stop.is_set():
            try:
                r = con.execute(
                    "SELECT (SELECT sum(balance) FROM accounts), "
                    "(SELECT count(*) FROM accounts), "
                    "(SELECT count(*) FROM ledger), "
                    "(SELECT n FROM counter)").fetchone()
            except sqlite3.OperationalError as e:
                bad.append("reader error: %s" % e)
                continue
            if r[0] != TOTAL or r[1] != 10 or r[2] != r[3]:
                bad.append("half a transaction visible: sum %s rows %s ledger %s "
                           "counter %s" % r)
            seen.append(r[3])
        con.close()

    proc = ctx.start_follow(path, slot, "pub", tag="follow")
    t = threading.Thread(target=poll, daemon=True)
    t.start()
    w = harness.Workload(ctx, transfer, n=400)
    w.start()
    try:
        w.join(120)
        ctx.catch_up(path, proc=proc)
    finally:
        stop.set()
        t.join(10)
        w.stop()
    check(ctx.stop(proc) == 0, "SIGTERM did not exit 0:\n%s" % proc.stderr())
    if bad:
        fail("%d bad reads out of %d, e.g.:\n%s" % (len(bad), len(seen) + len(bad),
                                                    "\n".join(bad[:10])))
    distinct = len(set(seen))
    harness.log("%d reads, %d distinct states seen" % (len(seen), distinct))
    check(len(seen) > 20, "the reader barely ran (%d reads)" % len(seen))
    if distinct < 3:
        harness.log("note: few intermediate states seen; pgmirror batches")
    ctx.assert_mirror_equals_source(path, "accounts", "ledger", "counter")


harness.main(test)

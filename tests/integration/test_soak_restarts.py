"""A bounded soak: a service (no --once) under a write workload is killed
with SIGKILL and started again many times, and the server is restarted
(fast mode) every few kills: right after the service connected with a
backlog of schema changes to catch up on (Relation messages whose catalog
look-ups meet a server shutting down), and while schema changes stream.
The service must keep going through every server restart, each restart
must finish quickly (the walsender must not wait for pgmirror's
confirmation), the slot is never ahead of the mirror, and in the end the
mirror equals the source. It restarts the whole cluster: exclusive."""

import os
import random
import signal
import sys
import threading
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

SOAK_SECS = 35          # kill / restart cycles for this long
RESTART_EVERY = 5       # server restarts every this many kills
RESTART_MAX_SECS = 20   # a fast-mode restart must finish within this
BULK_ROWS = 100000      # a backlog that takes a while to apply
TABLES = ["w", "nk", "sc", "pgm_marker"]


def retry(ctx, fn):
    """Runs fn() on the test's connection, across a server restart."""
    deadline = time.time() + 60
    while True:
        try:
            return fn()
        except (psycopg2.OperationalError, psycopg2.InterfaceError):
            if time.time() > deadline:
                raise
            time.sleep(0.1)
            try:
                ctx.reconnect()
            except psycopg2.Error:
                pass


class Writer(threading.Thread):
    """Small transactions on w and nk until stopped; rides out restarts."""

    def __init__(self, ctx):
        super().__init__(daemon=True)
        self.ctx = ctx
        self.halt = threading.Event()
        self.commits = 0
        self.error = None

    def run(self):
        conn = None
        i = 0
        while not self.halt.is_set():
            try:
                if conn is None:
                    conn = self.ctx.connect(autocommit=False)
                cur = conn.cursor()
                cur.execute("INSERT INTO w (n, pad) SELECT %s, repeat('x', 30) "
                            "FROM generate_series(1, 5)", (i,))
                cur.execute("UPDATE w SET n = n + 1 WHERE id = (SELECT max(id) - 7 FROM w)")
                cur.execute("INSERT INTO nk VALUES (%s, 'r')", (i % 50,))
                if i % 4 == 0:
                    cur.execute("DELETE FROM nk WHERE ctid = (SELECT min(ctid) FROM nk "
                                "WHERE a = %s)", ((i + 25) % 50,))
                conn.commit()
                self.commits += 1
                i += 1
            except psycopg2.Error:
                try:
                    if conn is not None:
                        conn.close()
                except psycopg2.Error:
                    pass
                conn = None
                time.sleep(0.05)
            except Exception as e:  # noqa: BLE001
                self.error = repr(e)
                return
            time.sleep(0.005)
        if conn is not None:
            conn.close()


def wait_streaming(ctx, slot, proc, timeout=60):
    """The service's walsender is streaming from the slot."""
    deadline = time.time() + timeout
    while True:
        if proc.poll() is not None:
            fail("the service exited %s\n%s" % (proc.poll(), proc.stderr()[-3000:]))
        info = retry(ctx, lambda: ctx.slot_info(slot))
        if info is not None and info["active"]:
            return
        if time.time() > deadline:
            fail("the service did not start streaming within %ds\n%s"
                 % (timeout, proc.stderr()[-3000:]))
        time.sleep(0.02)


def schema_change(ctx, k):
    """A column added to (or dropped from) the keyed table sc, with a change:
    a Relation message whose catalog look-ups (and refill) pgmirror makes."""
    if k % 3 == 2:
        cols = retry(ctx, lambda: ctx.sql(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'sc'::regclass "
            "AND attnum > 2 AND NOT attisdropped ORDER BY attnum LIMIT 1"))
        if cols:
            retry(ctx, lambda: ctx.sql("ALTER TABLE sc DROP COLUMN %s" % cols[0][0]))
    else:
        retry(ctx, lambda: ctx.sql("ALTER TABLE sc ADD COLUMN c%d int DEFAULT %d" % (k, k)))
    retry(ctx, lambda: ctx.sql("UPDATE sc SET v = v + 1 WHERE id %% 10 = %d" % (k % 10)))


def test(ctx):
    random.seed(8)
    ctx.sql("""
        CREATE TABLE w (id bigserial PRIMARY KEY, n int, pad text);
        CREATE TABLE nk (a int, b text);
        ALTER TABLE nk REPLICA IDENTITY FULL;
        CREATE TABLE sc (id int PRIMARY KEY, v int);
        INSERT INTO sc SELECT g, 0 FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE w, nk, sc;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")

    writer = Writer(ctx)
    writer.start()
    kills = restarts = schema = 0
    restart_times = []
    lost_logs = []
    t0 = time.time()
    proc = None
    try:
        while time.time() - t0 < SOAK_SECS:
            restart_now = kills % RESTART_EVERY == RESTART_EVERY - 1
            if restart_now:
                # a long backlog, schema changes last: the service meets
                # them while the server shuts down
                retry(ctx, lambda: ctx.sql(
                    "INSERT INTO w (n, pad) SELECT -1, 'bulk' "
                    "FROM generate_series(1, %d)" % BULK_ROWS))
            # a backlog of schema changes for the next service to catch up on
            for _ in range(2):
                schema_change(ctx, schema)
                schema += 1
            proc = ctx.start_follow(path, slot, "pub", "-s", "1", tag="svc%d" % kills)
            wait_streaming(ctx, slot, proc)
            if restart_now:
                # right after it connected, while it catches up
                restart_times.append(ctx.restart_server(RESTART_MAX_SECS * 3))
                restarts += 1
                ctx.reconnect()
                wait_streaming(ctx, slot, proc)
                # and while schema changes stream to it
                schema_change(ctx, schema)
                schema += 1
                restart_times.append(ctx.restart_server(RESTART_MAX_SECS * 3))
                restarts += 1
                ctx.reconnect()
                wait_streaming(ctx, slot, proc)
                check(proc.poll() is None, "the service exited %s after a server restart\n%s"
                      % (proc.poll(), proc.stderr()[-3000:]))
            time.sleep(random.uniform(0, 0.4))  # a kill at any moment
            proc.popen.send_signal(signal.SIGKILL)
            proc.popen.wait(30)
            kills += 1
            retry(ctx, lambda: ctx.wait_slot_inactive(slot))
            retry(ctx, lambda: ctx.check_slot_not_ahead(path, slot))
            # the log of a killed service is kept only if it met a restart
            if "connection to the source lost" in proc.stderr():
                lost_logs.append(proc.stderr())
            else:
                for p in (proc.out_path, proc.err_path):
                    os.unlink(p)
    finally:
        writer.halt.set()
        writer.join(60)
    harness.log("%d kills, %d server restarts (%s s), %d schema changes, %d commits"
                % (kills, restarts, ", ".join("%.1f" % t for t in restart_times), schema,
                   writer.commits))
    lookups = sum(1 for e in lost_logs for line in e.splitlines()
                  if "could not look up" in line or "could not read column" in line)
    harness.log("%d catalog look-ups met a server going away, and were retried" % lookups)
    check(writer.error is None, "the writer failed: %s" % writer.error)
    check(restarts >= 2, "only %d server restarts in %d s" % (restarts, SOAK_SECS))
    slow = [t for t in restart_times if t > RESTART_MAX_SECS]
    check(not slow, "server restarts took %s s (more than %d s): the walsender waited for "
          "pgmirror" % (", ".join("%.1f" % t for t in slow), RESTART_MAX_SECS))

    proc = ctx.start_follow(path, slot, "pub", "-s", "1", tag="final")
    ctx.catch_up(path, proc=proc, timeout=120)
    ctx.assert_mirror_equals_source(path, *TABLES)
    rc = ctx.stop(proc, signal.SIGTERM)
    check(rc == 0, "SIGTERM: exit %s\n%s" % (rc, proc.stderr()[-3000:]))
    ctx.check_slot_not_ahead(path, slot)


harness.main(test, exclusive=True)

"""Tables that join or leave while pgmirror runs as a service: a table added
to the publication with a change afterwards is synced at once (its first
change names a relation the mirror lacks); a table added with no change at
all, and a table dropped from the publication, are found by the check the
service makes at least once a minute (the test waits for the mirror, up to
two minutes). Each joined table equals its source, rows exactly once.
The minute's check reads the publications on the connection pgmirror
already has for catalog look-ups: the only walsender it starts is the
joining table's own (one every minute per service adds up over a fleet)."""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def wait_tables(ctx, path, proc, want, absent=(), timeout=150):
    deadline = time.time() + timeout * harness.SLOW
    while True:
        check(proc.poll() is None, "pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
        have = ctx.mirror_tables(path)
        if all(t in have for t in want) and not any(t in have for t in absent):
            return
        if time.time() > deadline:
            fail("mirror tables %s, want %s and not %s within %ss\nstderr:\n%s"
                 % (have, want, list(absent), timeout, proc.stderr()))
        time.sleep(0.2)


class WalsenderWatch:
    """Every walsender that shows in pg_stat_activity while it runs, polled
    on a connection of its own (a check's walsender lives a few
    milliseconds: connecting, one query)."""

    def __init__(self, ctx):
        self.conn = ctx.connect()
        self.conn.autocommit = True  # a fresh view of the activity each time
        self.seen = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        cur = self.conn.cursor()
        while not self.done.is_set():
            cur.execute("SELECT pid, backend_start FROM pg_stat_activity "
                        "WHERE backend_type = 'walsender' AND datname = current_database()")
            self.seen.update(cur.fetchall())
            time.sleep(0.0005)

    def stop(self):
        self.done.set()
        self.thread.join()
        self.conn.close()
        return self.seen


def test(ctx):
    ctx.sql("""
        CREATE TABLE a (id int PRIMARY KEY);
        CREATE TABLE j1 (id int PRIMARY KEY, v text);
        CREATE TABLE j2 (n int, v text);                       -- no key
        ALTER TABLE j2 REPLICA IDENTITY FULL;
        CREATE TABLE j3 (id int PRIMARY KEY, v text);
        INSERT INTO j1 SELECT g, 'one' FROM generate_series(1, 2000) g;
        INSERT INTO j2 SELECT g % 5, 'two' FROM generate_series(1, 2000) g;
        INSERT INTO j3 SELECT g, 'three' FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE a, j3;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    proc = ctx.start_follow(path, slot, "pub", "-v")
    ctx.catch_up(path, proc=proc)

    # a join followed by changes: synced when its first change arrives
    ctx.sql("ALTER PUBLICATION pub ADD TABLE j2")
    ctx.sql("INSERT INTO j2 VALUES (7, 'after'); "
            "DELETE FROM j2 WHERE ctid = (SELECT ctid FROM j2 WHERE n = 1 LIMIT 1)")
    started = time.time()
    wait_tables(ctx, path, proc, ["j2"], timeout=30)
    harness.log("j2 (changed after joining) joined in %.1f s" % (time.time() - started))
    ctx.sql("INSERT INTO j2 VALUES (8, 'later')")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "a", "j2", "j3")

    # a join without any change after it, and a leave: the minute's check
    watch = WalsenderWatch(ctx)
    ctx.sql("ALTER PUBLICATION pub ADD TABLE j1")
    ctx.sql("ALTER PUBLICATION pub DROP TABLE j3")
    started = time.time()
    wait_tables(ctx, path, proc, ["j1"], absent=["j3"])
    harness.log("j1 joined and j3 left in %.1f s" % (time.time() - started))
    seen = watch.stop()
    # the stream's own and the sync's of j1 (its temporary slot), no other
    check(len(seen) == 2, "%d walsenders while the minute's check ran, want 2 (the "
          "stream's and j1's sync): %s" % (len(seen), sorted(seen)))
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "a", "j1", "j2")
    ctx.sql("UPDATE j1 SET v = 'changed' WHERE id < 100; INSERT INTO j2 VALUES (9, 'x')")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "a", "j1", "j2")
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %d:\n%s" % (rc, proc.stderr()))
    check("\"public.j3\"" in proc.stderr() and "warning" in proc.stderr(),
          "no warning for j3 leaving:\n%s" % proc.stderr())


harness.main(test)

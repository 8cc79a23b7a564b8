"""A table that joins a running service's publication while the server has
no replication slot free for the sync's temporary slot (a fleet of
devices syncing the same new table at once): the service warns once, goes
on mirroring the other tables, does not retry with every change of the new
table, and copies it with its check a minute later, once a slot is free;
the table then equals its source, every change exactly once. Fills the
server's max_replication_slots, so runs alone."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

WARNING = 'could not copy table "public.j", which joined the publications, now'


def wait_for(what, cond, proc, timeout):
    deadline = time.time() + timeout * harness.SLOW
    while not cond():
        check(proc.poll() is None, "pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
        if time.time() > deadline:
            fail("no %s within %ss\nstderr:\n%s" % (what, timeout, proc.stderr()))
        time.sleep(0.2)


def test(ctx):
    ctx.sql("""
        CREATE TABLE a (id int PRIMARY KEY, v text);
        CREATE TABLE j (id int PRIMARY KEY, v text);
        INSERT INTO a SELECT g, 'a' FROM generate_series(1, 100) g;
        INSERT INTO j SELECT g, 'j' FROM generate_series(1, 1000) g;
        CREATE PUBLICATION pub FOR TABLE a;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    proc = ctx.start_follow(path, slot, "pub", "-v")
    ctx.catch_up(path, proc=proc)

    cur = ctx.admin.cursor()
    cur.execute("SELECT current_setting('max_replication_slots')::int - "
                "(SELECT count(*) FROM pg_replication_slots)")
    dummies = [ctx.slot("dummy%d" % i) for i in range(cur.fetchone()[0])]
    try:
        for d in dummies:
            cur.execute("SELECT pg_create_physical_replication_slot(%s)", (d,))
        ctx.sql("ALTER PUBLICATION pub ADD TABLE j")
        ctx.sql("UPDATE j SET v = 'first' WHERE id = 1")
        wait_for("warning", lambda: WARNING in proc.stderr(), proc, 30)
        harness.log("no slot free: %s" % [ln for ln in proc.stderr().splitlines()
                                          if WARNING in ln][0])
        # the other tables go on; the new one's changes wait for its copy
        for i in range(20):
            ctx.sql("UPDATE j SET v = 'change %d' WHERE id = %d" % (i, i + 2))
            ctx.sql("INSERT INTO a VALUES (%d, 'more')" % (1000 + i))
        ctx.catch_up(path, proc=proc)
        # counted at once: the deferred sync is tried again a second later
        # (tablesync.c), and the replay mode's check below takes longer
        n = proc.stderr().count(WARNING)
        check(n == 1, "%d warnings, want 1 (a retry with every change of j):\n%s"
              % (n, proc.stderr()))
        ctx.assert_mirror_equals_source(path, "a")
        check("j" not in ctx.mirror_tables(path), "j in the mirror with no slot free")
        cur.execute("SELECT pg_drop_replication_slot(%s)", (dummies.pop(),))
        started = time.time()
        ctx.sql("UPDATE j SET v = 'while a slot is free' WHERE id = 500")
        wait_for("table j", lambda: "j" in ctx.mirror_tables(path), proc, 90)
        harness.log("j joined %.1f s after a slot was freed" % (time.time() - started))
    finally:
        for d in dummies:
            cur.execute("SELECT pg_drop_replication_slot(%s)", (d,))
    ctx.sql("DELETE FROM j WHERE id = 3; INSERT INTO j VALUES (5000, 'after')")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "a", "j")
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %d:\n%s" % (rc, proc.stderr()))


harness.main(test, exclusive=True)

"""Table syncs in a running service, and SIGHUP. One service runs through:
(1) SIGHUP makes it check the publications at once: a table added to the
publication (with no change that the stream would show) joins within
seconds, not at the minute's check, and the process keeps running; (2)
each sync's temporary slot is named after the mirror's slot with random
bits, never after the pid, and two syncs get two names; (3) a sync that
fails for a reason a later try may not meet (its slot creation cancelled
on the server) is retried later with a warning, not an exit; (4) a table
renamed while streaming onto the mirror name of a table that just left
the publication takes that name (the other table is removed), as a start
would do; (5) many tables that join at once are synced in one snapshot
(one sync LSN), and a kill -9 in the middle keeps the tables finished,
syncs the others in one more snapshot, and doubles nothing in a keyless
table; (6) SIGHUP to a --once run does not end it. CASES=sighup,names,...
runs some of them only."""

import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

NMANY = 40
T0 = time.time()
CASES = [c for c in os.environ.get("CASES", "").split(",") if c]
KNOWN = {"sighup", "names", "transient", "rename", "once_hup", "kill9"}


def wait_for(what, cond, proc, timeout):
    deadline = time.time() + timeout * harness.SLOW
    while not cond():
        check(proc.poll() is None, "pgmirror exited %s while waiting for %s:\n%s"
              % (proc.poll(), what, proc.stderr()))
        if time.time() > deadline:
            fail("no %s within %ss\nstderr:\n%s" % (what, timeout, proc.stderr()))
        time.sleep(0.05)


def hup_join(ctx, path, proc, table, timeout=15):
    """Adds table (its rows made before) to the publication, sends SIGHUP
    and waits for it in the mirror: far sooner than the minute's check."""
    ctx.sql("ALTER PUBLICATION pub ADD TABLE %s" % table)
    started = time.time()
    os.kill(proc.pid, signal.SIGHUP)
    wait_for("table %s after SIGHUP" % table,
             lambda: table in ctx.mirror_tables(path), proc, timeout)
    harness.log("%s joined %.1f s after SIGHUP" % (table, time.time() - started))


def case_sighup(ctx, path, proc):
    ctx.sql("CREATE TABLE h1 (id int PRIMARY KEY, v text); "
            "INSERT INTO h1 SELECT g, 'h' FROM generate_series(1, 50) g")
    hup_join(ctx, path, proc, "h1")
    for _ in range(3):  # more SIGHUPs with nothing to do: still running
        os.kill(proc.pid, signal.SIGHUP)
    ctx.sql("UPDATE h1 SET v = 'after' WHERE id < 5")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "h1")
    check(proc.poll() is None, "pgmirror exited %s after SIGHUP" % proc.poll())


def case_names(ctx, path, proc, slot):
    for t in ("n1", "n2"):
        ctx.sql("CREATE TABLE %s (id int PRIMARY KEY); INSERT INTO %s VALUES (1)" % (t, t))
        hup_join(ctx, path, proc, t)
    names = re.findall(r'\(temporary slot "([^"]+)"\)', proc.stderr())
    harness.log("temporary slots: %s" % names)
    check(len(names) >= 2, "no temporary slot names in the -v -v output:\n%s"
          % proc.stderr())
    for n in names:
        check(n.startswith(slot + "_sync_") and str(proc.pid) not in n and len(n) <= 63,
              "temporary slot %r: not the mirror's slot %r, _sync_ and random bits "
              "(pid %d)" % (n, slot, proc.pid))
    check(len(set(names)) == len(names), "two syncs had one name: %s" % names)


def case_transient(ctx, path, proc):
    ctx.sql("CREATE TABLE c1 (id int PRIMARY KEY); INSERT INTO c1 VALUES (1), (2)")
    holder = ctx.hold_xid()
    try:
        ctx.sql("ALTER PUBLICATION pub ADD TABLE c1")
        os.kill(proc.pid, signal.SIGHUP)
        deadline = time.time() + 30 * harness.SLOW
        while True:  # the sync's slot creation waits for holder: cancel it
            rows = ctx.sql("SELECT s.active_pid FROM pg_replication_slots s JOIN pg_locks l "
                           "ON l.pid = s.active_pid AND NOT l.granted "
                           "WHERE s.temporary AND s.database = current_database()")
            if rows:
                break
            check(proc.poll() is None and time.time() < deadline,
                  "no sync waited (exit %s):\n%s" % (proc.poll(), proc.stderr()))
            time.sleep(0.05)
        ctx.sql("SELECT pg_cancel_backend(%s)", rows[0][0])
        wait_for("warning", lambda: 'could not copy table "public.c1"' in proc.stderr(),
                 proc, 30)
    finally:
        holder.rollback()
        holder.close()
    ctx.catch_up(path, proc=proc)
    check("c1" not in ctx.mirror_tables(path), "c1 in the mirror after a failed sync")
    os.kill(proc.pid, signal.SIGHUP)
    wait_for("table c1 on the retry", lambda: "c1" in ctx.mirror_tables(path), proc, 15)
    ctx.sql("INSERT INTO c1 VALUES (3)")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "c1")


def case_rename(ctx, path, proc):
    ctx.sql("ALTER PUBLICATION pub DROP TABLE x.y")
    ctx.sql("ALTER TABLE r RENAME TO x_y")
    ctx.sql("INSERT INTO x_y VALUES (100, 'after the rename')")
    ctx.catch_up(path, proc=proc)
    tables = ctx.mirror_tables(path)
    check("x_y" in tables and "r" not in tables,
          "after the rename onto a left table's name the mirror has %s" % tables)
    ctx.assert_mirror_equals_source(path, "x_y")


def case_once_hup(ctx):
    """SIGHUP to a --once first run that waits for its slot: it goes on."""
    path, slot = ctx.path("once.db"), ctx.slot("once")
    holder = ctx.hold_xid()
    try:
        proc = ctx.start(ctx.mirror_args(path, slot, "pub", "--once"), tag="once")
        ctx.wait_slot_creation_waiting(slot, proc)
        os.kill(proc.pid, signal.SIGHUP)
        time.sleep(0.2)
    finally:
        holder.rollback()
        holder.close()
    rc = ctx.stop(proc, sig=0, timeout=60)
    check(rc == 0, "--once after SIGHUP exited %d:\n%s" % (rc, proc.stderr()))
    ctx.assert_mirror_equals_source(path, "pgm_marker")


def case_kill9(ctx, path, slot):
    ctx.make_keyless_tables("m", NMANY, 1000, 100, "'dup'")
    harness.log("tables made at %.1f s" % (time.time() - T0))
    proc = ctx.start_follow(path, slot, "pub", "-v", tag="kill9")
    ctx.catch_up(path, proc=proc)
    ctx.sql("ALTER PUBLICATION pub ADD TABLE %s"
            % ", ".join("m%d" % i for i in range(1, NMANY + 1)))
    os.kill(proc.pid, signal.SIGHUP)
    deadline = time.time() + 60 * harness.SLOW
    while len(re.findall(r'table "public\.m\d+" joined', proc.stderr())) < 3:
        check(proc.poll() is None and time.time() < deadline,
              "no tables synced (exit %s):\n%s" % (proc.poll(), proc.stderr()))
        time.sleep(0.002)
    proc.popen.kill()
    proc.popen.wait()
    done = len(re.findall(r'table "public\.m\d+" joined', proc.stderr()))
    harness.log("killed after %d of %d tables" % (done, NMANY))
    check(done < NMANY, "all %d tables were synced before the kill" % NMANY)
    # what was finished before the kill is kept, not copied again
    kept = dict(ctx.mirror_query(path, "SELECT table_name, sync_lsn FROM pgmirror_tables "
                                       "WHERE table_name LIKE 'm%' AND sync_lsn IS NOT NULL"))
    check(kept, "no table synced before the kill was kept")
    for i in range(1, NMANY + 1, 7):
        ctx.sql("DELETE FROM m%d WHERE ctid = (SELECT ctid FROM m%d WHERE n = 1 LIMIT 1); "
                "INSERT INTO m%d VALUES (1, 'dup')" % (i, i, i))
    proc = ctx.start_follow(path, slot, "pub", "-v", tag="after")
    ctx.catch_up(path, proc=proc, timeout=120)
    harness.log("caught up at %.1f s" % (time.time() - T0))
    ctx.assert_mirror_equals_source(path, *["m%d" % i for i in range(1, NMANY + 1)])
    lsns = {r[0] for r in ctx.mirror_query(
        path, "SELECT sync_lsn FROM pgmirror_tables WHERE table_name LIKE 'm%'")}
    check(len(lsns) <= 2, "%d tables joined in two syncs have %d sync LSNs: one "
          "snapshot each, not one for all" % (NMANY, len(lsns)))
    now = dict(ctx.mirror_query(path, "SELECT table_name, sync_lsn FROM pgmirror_tables "
                                      "WHERE table_name LIKE 'm%'"))
    again = sorted(t for t in kept if now.get(t) != kept[t])
    check(not again, "tables finished before the kill were copied again: %s" % again)
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %d:\n%s" % (rc, proc.stderr()))


def test(ctx):
    check(set(CASES) <= KNOWN, "unknown CASES %s (known: %s)" % (sorted(set(CASES) - KNOWN),
                                                              sorted(KNOWN)))
    ctx.sql("""
        CREATE SCHEMA x;
        CREATE TABLE x.y (id int PRIMARY KEY, v text);
        CREATE TABLE r (id int PRIMARY KEY, v text);
        INSERT INTO x.y VALUES (1, 'x.y');
        INSERT INTO r SELECT g, 'r' FROM generate_series(1, 10) g;
        CREATE PUBLICATION pub FOR TABLE x.y, r;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    proc = ctx.start_follow(path, slot, "pub", "-v", "-v")
    ctx.catch_up(path, proc=proc)
    for name in ("sighup", "names", "transient", "rename"):
        if CASES and name not in CASES:
            continue
        harness.log("case %s at %.1f s" % (name, time.time() - T0))
        if name == "names":
            case_names(ctx, path, proc, slot)
        else:
            globals()["case_" + name](ctx, path, proc)
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %d:\n%s" % (rc, proc.stderr()))
    if not CASES or "once_hup" in CASES:
        harness.log("case once_hup at %.1f s" % (time.time() - T0))
        case_once_hup(ctx)
    if not CASES or "kill9" in CASES:
        harness.log("case kill9 at %.1f s" % (time.time() - T0))
        case_kill9(ctx, path, slot)


harness.main(test)

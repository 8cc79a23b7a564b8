"""A table that joins and cannot be taken waits; the service goes on.

Under FOR ALL TABLES, as a role with REPLICATION that is not a superuser,
a mirror of t1 runs as a service. Tables join: one the role may not read,
one with a reserved name (pgmirror_late), one with two columns that differ
only in case, one whose mirror name is t1's but for case ("T1"), and one
the privilege check passes but whose COPY is refused (a row security
policy calls a function the role may not execute). Each waits, with a
warning that gives the fix, while the service goes on: other changes
flow, the slot moves on, --status --json shows them waiting. After the
fixes (the GRANTs, the renames) and a SIGHUP, all arrive and equal the
source row by row, and nothing waits. A mirrored table then renamed to a
reserved name while the service runs waits the same way (its mirror table
removed), and comes back when renamed again.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, qident  # noqa: E402
from waiting import slot_lsn, waiting_json, with_role  # noqa: E402


def wait_until(what, cond, proc, timeout=60):
    deadline = time.time() + timeout * harness.SLOW
    while not cond():
        check(proc.poll() is None, "the service exited %s while waiting for %s:\n%s"
              % (proc.poll(), what, proc.stderr()))
        check(time.time() < deadline, "%s did not happen within %ss:\n%s"
              % (what, timeout, proc.stderr()))
        time.sleep(0.1)


def run_all(ctx, role):
    dsn = ctx.dsn + " user=%s password=pw" % role
    q = qident(role)
    ctx.sql("""
        CREATE TABLE t1 (id int PRIMARY KEY, v text);
        INSERT INTO t1 SELECT g, 'v' || g FROM generate_series(1, 50) g;
        CREATE TABLE pgm_marker (id bigserial PRIMARY KEY);
        CREATE PUBLICATION pub FOR ALL TABLES;
    """)
    ctx.sql("GRANT SELECT ON t1, pgm_marker TO %s" % q)
    path, slot = ctx.path(), ctx.slot()
    args = ["-d", dsn, "-S", slot, "-P", "pub"]
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 0, "the first run: exit %d\n%s" % (rc, err))

    # ---- joining later, in service mode -----------------------------------
    proc = ctx.start(args + ["-s", "1", path], tag="service")
    ctx.catch_up(path, proc=proc)
    ctx.sql("CREATE TABLE late (id int PRIMARY KEY, v text); "
            "INSERT INTO late SELECT g, 'l' || g FROM generate_series(1, 30) g; "
            "CREATE TABLE pgmirror_late (id int PRIMARY KEY); "
            "INSERT INTO pgmirror_late VALUES (1), (2); "
            'CREATE TABLE late3 (id int PRIMARY KEY, "X" int, x int); '
            "INSERT INTO late3 VALUES (1, 2, 3); "
            # the name of mirror table t1, but for case
            'CREATE TABLE "T1" (id int PRIMARY KEY); INSERT INTO "T1" VALUES (7); '
            'GRANT SELECT ON pgmirror_late, late3, "T1" TO %s' % q)
    # readable by the privilege check, refused by its COPY: a row security
    # policy calls a function the role may not execute
    ctx.sql("CREATE FUNCTION guard() RETURNS bool LANGUAGE sql AS 'SELECT true'; "
            "REVOKE EXECUTE ON FUNCTION guard() FROM PUBLIC; "
            "CREATE TABLE guarded (id int PRIMARY KEY); INSERT INTO guarded VALUES (1); "
            "ALTER TABLE guarded ENABLE ROW LEVEL SECURITY; "
            "CREATE POLICY p ON guarded FOR SELECT USING (guard()); "
            "GRANT SELECT ON guarded TO %s" % q)
    ctx.sql("UPDATE late SET v = 'upd' WHERE id < 5; INSERT INTO t1 VALUES (52, 'flows')")
    ctx.catch_up(path, proc=proc)
    wait_until("the late tables waiting",
               lambda: sorted(waiting_json(ctx, path)[0]) == [
                   "public.T1", "public.guarded", "public.late", "public.late3",
                   "public.pgmirror_late"], proc)
    check("permission denied for function guard" in
          waiting_json(ctx, path)[0]["public.guarded"]["reason"],
          "guarded's reason: %r" % waiting_json(ctx, path)[0]["public.guarded"])
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "public.t1")
    moved = ctx.source_lsn()
    wait_until("the slot moving on while tables wait", lambda: slot_lsn(ctx, slot) >= moved, proc)
    ctx.check_slot_not_ahead(path, slot)
    check(proc.poll() is None, "the service ended:\n%s" % proc.stderr())
    check("GRANT SELECT ON public.late TO %s" % role in proc.stderr(),
          "the service's warning does not give the GRANT:\n%s" % proc.stderr())
    ctx.sql("GRANT SELECT ON late TO %s; ALTER TABLE pgmirror_late RENAME TO late2; "
            'ALTER TABLE late3 RENAME COLUMN x TO y; ALTER TABLE "T1" RENAME TO t1b; '
            "GRANT EXECUTE ON FUNCTION guard() TO %s" % (q, q))
    ctx.sql("INSERT INTO late VALUES (31, 'after'); INSERT INTO late2 VALUES (3); "
            "UPDATE late3 SET y = 4")
    proc.popen.send_signal(signal.SIGHUP)
    wait_until("the late tables joining",
               lambda: {"late", "late2", "late3", "t1b", "guarded"} <=
               set(ctx.mirror_tables(path)) and
               waiting_json(ctx, path)[0] == {}, proc)
    ctx.sql("UPDATE late SET v = 'joined' WHERE id = 31; INSERT INTO t1b VALUES (8)")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "public.t1", "public.late", "public.late2",
                                    "public.late3", "public.t1b", "public.guarded")

    # a mirrored table renamed, while the service runs, to a reserved name:
    # its mirror table goes and it waits; renamed again, it comes back
    ctx.sql("ALTER TABLE late2 RENAME TO pgmirror_late2; INSERT INTO pgmirror_late2 VALUES (9); "
            "INSERT INTO t1 VALUES (53, 'still flows')")
    wait_until("late2 waiting under its reserved name",
               lambda: list(waiting_json(ctx, path)[0]) == ["public.pgmirror_late2"] and
               "late2" not in ctx.mirror_tables(path), proc)
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "public.t1")
    ctx.sql("ALTER TABLE pgmirror_late2 RENAME TO late4; INSERT INTO late4 VALUES (10)")
    proc.popen.send_signal(signal.SIGHUP)
    wait_until("late4 joining", lambda: "late4" in ctx.mirror_tables(path) and
               waiting_json(ctx, path)[0] == {}, proc)
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "public.t1", "public.late4")
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())


def test(ctx):
    with_role(ctx, run_all)


harness.main(test)

"""A published table that cannot be taken waits; the others flow.

Under FOR ALL TABLES, as a role with REPLICATION that is not a superuser:
a table the role may not read (secret), one whose mirror name is reserved
(pgmirror_x) and one with two columns that differ only in case (ccol).

- First run (--once): the others are copied and followed (also after the
  COPY of one of them is refused for want of a privilege the check cannot
  see: a row security policy calls a function the role may not run), the run ends
  with exit 1 naming each waiting table and its fix (the GRANT, the
  rename); the slot exists and moves on with later runs (its
  confirmed_flush_lsn advances past the waiting table's changes);
  --status and --status --json show each table as waiting, why and since
  when; --verify compares the others and says "NAME: waiting" (exit 4).
- After the fixes (GRANT, the renames), the next run copies them at a
  consistent point: each equals the source row by row, and nothing waits.
- Joining later, in service mode: a new table the role may not read, one
  with a reserved name, one with a case clash in its columns, one whose
  name is a mirror table's but for case, and one the privilege check
  passes but whose COPY is refused (a row security policy calls a function
  the role may not execute) wait while the service goes on (other changes
  flow, the slot moves on); after the fixes and a SIGHUP, all arrive and
  equal the source.
- When no published table can be taken, a first run refuses before it
  makes the slot or the file.
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, parse_lsn, qident  # noqa: E402


def status(ctx, path, *extra):
    rc, out, err = ctx.run(["--status"] + list(extra) + [path])
    check(rc == 0, "--status %s exited %d: %s" % (" ".join(extra), rc, err))
    return out


def waiting_json(ctx, path):
    doc = json.loads(status(ctx, path, "--json"))
    return dict((t["source"], t) for t in doc["tables"] if t.get("state") == "waiting"), doc


def slot_lsn(ctx, slot):
    return parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])


def wait_until(what, cond, proc, timeout=60):
    deadline = time.time() + timeout * harness.SLOW
    while not cond():
        check(proc.poll() is None, "the service exited %s while waiting for %s:\n%s"
              % (proc.poll(), what, proc.stderr()))
        check(time.time() < deadline, "%s did not happen within %ss:\n%s"
              % (what, timeout, proc.stderr()))
        time.sleep(0.1)


def test(ctx):
    role = ctx.dbname + "_dev"
    admin = ctx.admin.cursor()
    admin.execute("DROP ROLE IF EXISTS %s" % qident(role))
    admin.execute("CREATE ROLE %s LOGIN REPLICATION PASSWORD 'pw'" % qident(role))
    try:
        run_all(ctx, role)
    finally:
        ctx.sql("DROP OWNED BY %s" % qident(role))
        admin.execute("DROP ROLE IF EXISTS %s" % qident(role))


def run_all(ctx, role):
    dsn = ctx.dsn + " user=%s password=pw" % role
    q = qident(role)
    ctx.sql("""
        CREATE TABLE t1 (id int PRIMARY KEY, v text);
        INSERT INTO t1 SELECT g, 'v' || g FROM generate_series(1, 50) g;
        CREATE TABLE secret (id int PRIMARY KEY, v text);
        INSERT INTO secret SELECT g, 's' || g FROM generate_series(1, 20) g;
        CREATE TABLE pgmirror_x (id int PRIMARY KEY, v text);
        INSERT INTO pgmirror_x VALUES (1, 'reserved');
        CREATE TABLE ccol (id int PRIMARY KEY, "Ab" text, "ab" text);
        INSERT INTO ccol VALUES (1, 'upper', 'lower');
        CREATE SCHEMA hid;
        CREATE TABLE hid.t (id int PRIMARY KEY);
        INSERT INTO hid.t VALUES (1), (2);
        CREATE TABLE pgm_marker (id bigserial PRIMARY KEY);
        CREATE FUNCTION guard0() RETURNS bool LANGUAGE sql AS 'SELECT true';
        REVOKE EXECUTE ON FUNCTION guard0() FROM PUBLIC;
        CREATE TABLE guarded0 (id int PRIMARY KEY);
        INSERT INTO guarded0 VALUES (1), (2);
        ALTER TABLE guarded0 ENABLE ROW LEVEL SECURITY;
        CREATE POLICY p ON guarded0 FOR SELECT USING (guard0());
        CREATE PUBLICATION pub FOR ALL TABLES;
    """)
    # hid.t may be read, but not its schema used
    ctx.sql("GRANT SELECT ON t1, pgmirror_x, ccol, pgm_marker, hid.t, guarded0 TO %s" % q)
    path, slot = ctx.path(), ctx.slot()
    args = ["-d", dsn, "-S", slot, "-P", "pub"]

    # ---- first run: the others are copied, the run says what waits -------
    rc, out, err = ctx.run(args + ["--once", path])
    harness.log("first run: exit %d: %s" % (rc, err.strip()[-600:]))
    check(rc == 1, "first run with tables that wait: exit %d, expected 1\n%s" % (rc, err))
    check(ctx.slot_info(slot) is not None and os.path.exists(path),
          "the first run made no slot or no mirror:\n%s" % err)
    check("GRANT SELECT ON public.secret TO %s" % role in err,
          "the first run's error does not give the GRANT:\n%s" % err)
    check("pgmirror_x" in err and "rename" in err,
          "the first run's error does not name pgmirror_x and the rename:\n%s" % err)
    check('"ccol"' in err and '"Ab"' in err,
          "the first run's error does not name ccol's columns:\n%s" % err)
    check(ctx.slot_info(slot) is not None, "the first run made no slot")
    ctx.check_slot_not_ahead(path, slot)
    check(sorted(ctx.mirror_tables(path)) == ["pgm_marker", "t1"],
          "mirror tables after the first run: %s" % ctx.mirror_tables(path))
    check(ctx.mirror_state(path)["initial_copy_done"] == 1, "the first run did not finish")
    ctx.assert_mirror_equals_source(path, "public.t1")

    # status: each waiting table, why, since when
    waiting, doc = waiting_json(ctx, path)
    check(sorted(waiting) == ["hid.t", "public.ccol", "public.guarded0", "public.pgmirror_x",
                              "public.secret"],
          "--status --json waiting tables: %s" % sorted(waiting))
    check("permission denied for function guard0" in waiting["public.guarded0"]["reason"],
          "--json guarded0: %r" % waiting["public.guarded0"])
    check("GRANT USAGE ON SCHEMA hid TO %s" % role in waiting["hid.t"]["reason"],
          "--json hid.t: %r" % waiting["hid.t"])
    check("GRANT SELECT ON public.secret" in waiting["public.secret"]["reason"]
          and waiting["public.secret"]["since"], "--json secret: %r" % waiting["public.secret"])
    check(waiting["public.secret"]["name"] == "secret" and
          waiting["public.secret"]["rows"] is None, "--json secret: %r" % waiting["public.secret"])
    ready = [t["name"] for t in doc["tables"] if t.get("state") == "ready"]
    check(sorted(ready) == ["pgm_marker", "t1"], "--json ready tables: %s" % ready)
    text = status(ctx, path)
    check("tables_waiting: 5\n" in text and "waiting: public.secret\nwaiting_since: " in text
          and "waiting_reason: permission denied" in text,
          "--status does not show the waiting tables:\n%s" % text)
    harness.log("--status --json with waiting tables:\n%s" % status(ctx, path, "--json"))
    # --verify compares the others, and says which wait (it cannot read secret)
    rc, out, err = ctx.run(args + ["--verify", path])
    check(rc == 4 and "t1: ok\n" in out and "secret: waiting\n" in out and
          "pgmirror_x: waiting\n" in out,
          "--verify with waiting tables: exit %d\n%s\n%s" % (rc, out, err))

    # ---- the waiting tables' changes are skipped, the slot moves on ------
    before = slot_lsn(ctx, slot)
    ctx.sql("INSERT INTO secret SELECT g, 'later' FROM generate_series(21, 30) g; "
            "UPDATE secret SET v = 'changed' WHERE id <= 5; DELETE FROM secret WHERE id = 6; "
            "INSERT INTO pgmirror_x VALUES (2, 'two'); UPDATE ccol SET ab = 'x'; "
            "UPDATE t1 SET v = 'new' WHERE id < 10; INSERT INTO t1 VALUES (51, 'added')")
    end = ctx.source_lsn()
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 1 and "GRANT SELECT ON public.secret" in err,
          "second run: exit %d, expected 1 naming the GRANT:\n%s" % (rc, err))
    ctx.check_slot_not_ahead(path, slot)
    check(slot_lsn(ctx, slot) >= end > before,
          "the slot did not move on past the waiting tables' changes: %s -> %s (source %s)"
          % (harness.format_lsn(before), ctx.slot_info(slot)["confirmed_flush_lsn"],
             harness.format_lsn(end)))
    ctx.assert_mirror_equals_source(path, "public.t1")
    check("secret" in (ctx.mirror_state(path)["last_error"] or ""),
          "last_error does not name the waiting table: %r" % ctx.mirror_state(path))

    # ---- the fixes: each arrives, equal to the source --------------------
    ctx.sql("GRANT SELECT ON secret TO %s; GRANT USAGE ON SCHEMA hid TO %s; "
            "GRANT EXECUTE ON FUNCTION guard0() TO %s; "
            "ALTER TABLE pgmirror_x RENAME TO x_renamed; "
            'ALTER TABLE ccol RENAME COLUMN "ab" TO ab2' % (q, q, q))
    ctx.sql("INSERT INTO secret VALUES (31, 'after the grant'); UPDATE x_renamed SET v = 'r'")
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 0, "the run after the fixes: exit %d\n%s" % (rc, err))
    ctx.check_slot_not_ahead(path, slot)
    check(sorted(ctx.mirror_tables(path)) == ["ccol", "guarded0", "hid_t", "pgm_marker",
                                              "secret", "t1", "x_renamed"],
          "mirror tables after the fixes: %s" % ctx.mirror_tables(path))
    ctx.assert_mirror_equals_source(path, "public.t1", "public.secret", "public.x_renamed",
                                    "public.ccol", "hid.t", "public.guarded0")
    waiting, _ = waiting_json(ctx, path)
    check(waiting == {}, "tables still wait after the fixes: %s" % waiting)
    check("tables_waiting: 0" in status(ctx, path), "--status still shows waiting tables")
    # and they follow from then on
    ctx.sql("UPDATE secret SET v = 'followed' WHERE id = 1; DELETE FROM x_renamed WHERE id = 1")
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 0, "a run after the join: exit %d\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path, "public.secret", "public.x_renamed")

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
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())

    # ---- nothing can be taken: refused before the slot --------------------
    ctx.sql("CREATE TABLE hidden (id int PRIMARY KEY); CREATE PUBLICATION p_none FOR TABLE hidden")
    p2, s2 = ctx.path("none.db"), ctx.slot("none")
    rc, out, err = ctx.run(["-d", dsn, "-S", s2, "-P", "p_none", "--once", p2])
    check(rc == 1 and "GRANT SELECT ON public.hidden TO %s" % role in err,
          "no table can be taken: exit %d\n%s" % (rc, err))
    check(ctx.slot_info(s2) is None and not os.path.exists(p2),
          "no table can be taken: the slot or the file was made")


harness.main(test)

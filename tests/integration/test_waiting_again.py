"""A table the mirror has, copied again or changed in a way the mirror
cannot take, waits like a joining table; a service's minute check takes it.

As a role with REPLICATION that is not a superuser, a mirror of t1, r1,
r2 and deep (id, j json[]) is made. Then, while no pgmirror runs: the
role loses SELECT on r1, and r2 gets a row security policy that calls a
function the role may not execute, and its row filter changes (so r2 is
copied again); one source transaction inserts into t1, then into deep a
good row and a json element nested 7,000 deep (PostgreSQL takes it; the
mirror cannot store it), then into t1 again.

A run with --once --resync=r1: r1's copy is refused (REVOKE), r2's too
(the policy's function), and deep's row cannot be stored in the stream.
Each waits with its reason, its mirror table removed; t1 has both rows of
the transaction (applied whole for it), the slot moves past it, and the
run exits 1 naming the three after all else is confirmed. The next --once
tries deep's copy, which meets the same value: it waits again (exit 1),
the run is not stopped.

Then a service runs (no SIGHUP): the GRANTs come and the bad row goes, and
within its minute check r1, r2 and deep arrive, equal to the source, and
nothing waits.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, qident  # noqa: E402
from waiting import DEEP_JSON as DEEP, slot_lsn, status, waiting_json, with_role  # noqa: E402

def run_all(ctx, role):
    dsn = ctx.dsn + " user=%s password=pw" % role
    q = qident(role)
    ctx.sql("""
        CREATE TABLE t1 (id int PRIMARY KEY, v text);
        INSERT INTO t1 SELECT g, 'v' || g FROM generate_series(1, 20) g;
        CREATE TABLE r1 (id int PRIMARY KEY, v text);
        INSERT INTO r1 SELECT g, 'r' || g FROM generate_series(1, 10) g;
        CREATE TABLE r2 (id int PRIMARY KEY, v text);
        INSERT INTO r2 SELECT g, 's' || g FROM generate_series(1, 10) g;
        CREATE TABLE deep (id int PRIMARY KEY, j json[]);
        INSERT INTO deep VALUES (1, ARRAY['{"a": [1, 2]}']::json[]);
        CREATE TABLE pgm_marker (id bigserial PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE t1, r1, r2, deep, pgm_marker;
        CREATE FUNCTION guard() RETURNS bool LANGUAGE sql AS 'SELECT true';
        REVOKE EXECUTE ON FUNCTION guard() FROM PUBLIC;
    """)
    ctx.sql("GRANT SELECT ON t1, r1, r2, deep, pgm_marker TO %s" % q)
    path, slot = ctx.path(), ctx.slot()
    args = ["-d", dsn, "-S", slot, "-P", "pub"]
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 0, "the first run: exit %d\n%s" % (rc, err))
    check({"t1", "r1", "r2", "deep"} <= set(ctx.mirror_tables(path)),
          "the first run's tables: %s" % ctx.mirror_tables(path))

    ctx.sql("REVOKE SELECT ON r1 FROM %s" % q)
    ctx.sql("ALTER TABLE r2 ENABLE ROW LEVEL SECURITY; "
            "CREATE POLICY p ON r2 FOR SELECT USING (guard()); "
            "ALTER PUBLICATION pub SET TABLE t1, r1, r2 WHERE (id > 2), deep, pgm_marker")
    conn = ctx.connect(autocommit=False)
    cur = conn.cursor()
    cur.execute("INSERT INTO t1 VALUES (100, 'before')")
    cur.execute("INSERT INTO deep VALUES (2, ARRAY['[1]']::json[])")
    cur.execute("INSERT INTO deep VALUES (3, %s)" % DEEP)
    cur.execute("INSERT INTO t1 VALUES (101, 'after')")
    conn.commit()
    conn.close()
    past = ctx.source_lsn()

    rc, out, err = ctx.run(args + ["--once", "--resync=r1", path])
    check(rc == 1, "--once --resync=r1 with r1, r2 refused and a bad value in deep: exit %d, "
          "expected 1\n%s" % (rc, err))
    waiting, _ = waiting_json(ctx, path)
    print("--status --json after --resync:\n" + status(ctx, path, "--json"))
    check(sorted(waiting) == ["public.deep", "public.r1", "public.r2"],
          "waiting after --resync: %s\n%s" % (sorted(waiting), err))
    check("GRANT SELECT ON public.r1 TO %s" % role in waiting["public.r1"]["reason"],
          "r1's reason: %r" % waiting["public.r1"]["reason"])
    check("permission denied for function guard" in waiting["public.r2"]["reason"] and
          "cannot store" not in waiting["public.r2"]["reason"],
          "r2's reason: %r" % waiting["public.r2"]["reason"])
    check('column "j"' in waiting["public.deep"]["reason"] and
          "cannot store" in waiting["public.deep"]["reason"],
          "deep's reason: %r" % waiting["public.deep"]["reason"])
    have = set(ctx.mirror_tables(path))
    check(not ({"r1", "r2", "deep"} & have), "mirror tables of waiting tables kept: %s" % have)
    ctx.assert_mirror_equals_source(path, "public.t1")
    check(slot_lsn(ctx, slot) >= past, "the slot did not move past the transaction")
    ctx.check_slot_not_ahead(path, slot)
    for name in ("public.r1", "public.r2", "public.deep"):
        check(name in err, "the run's error does not name %s:\n%s" % (name, err))

    # the next start copies deep again: the value is still there, so it waits
    ctx.sql("INSERT INTO t1 VALUES (102, 'next')")
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 1, "--once with deep's bad value still there: exit %d, expected 1\n%s"
          % (rc, err))
    waiting, _ = waiting_json(ctx, path)
    check("public.deep" in waiting and "deep" not in ctx.mirror_tables(path),
          "deep does not wait after its copy met the value: %s\n%s" % (sorted(waiting), err))
    ctx.assert_mirror_equals_source(path, "public.t1")

    # ---- a service's minute check takes them, without SIGHUP --------------
    proc = ctx.start(args + ["-s", "1", path], tag="service")
    ctx.catch_up(path, proc=proc)
    ctx.sql("GRANT SELECT ON r1 TO %s; GRANT EXECUTE ON FUNCTION guard() TO %s" % (q, q))
    ctx.sql("DELETE FROM deep WHERE id = 3; INSERT INTO r1 VALUES (11, 'later')")
    started = time.time()
    deadline = started + 150 * harness.SLOW
    while not ({"r1", "r2", "deep"} <= set(ctx.mirror_tables(path)) and
               waiting_json(ctx, path)[0] == {}):
        check(proc.poll() is None, "the service exited %s:\n%s" % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "r1, r2, deep did not arrive within 150 s of the "
              "GRANT: %s\n%s" % (sorted(waiting_json(ctx, path)[0]), proc.stderr()))
        time.sleep(0.5)
    print("arrived %.1f s after the GRANT" % (time.time() - started))
    ctx.sql("UPDATE r2 SET v = 'x' WHERE id = 5; INSERT INTO deep VALUES (4, NULL)")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "public.t1", "public.r1", "public.deep")
    want = ctx.sql("SELECT id, v FROM r2 WHERE id > 2 ORDER BY id")
    have = ctx.mirror_query(path, "SELECT id, v FROM r2 ORDER BY id")
    check([tuple(r) for r in want] == [tuple(r) for r in have],
          "r2 (row filter id > 2): mirror %s, source %s" % (have, want))
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())


def test(ctx):
    with_role(ctx, run_all)


harness.main(test)

"""A published table that cannot be taken waits; the others flow.

Under FOR ALL TABLES, as a role with REPLICATION that is not a superuser:
a table the role may not read (secret), one whose mirror name is reserved
(pgmirror_x) and one with two columns that differ only in case (ccol).

- First run (--once): the others are copied and followed (also after the
  COPY of one of them is refused for want of a privilege the check cannot
  see: a row security policy calls a function the role may not run), the run ends
  with exit 1 naming each waiting table and its fix (the GRANT, the
  rename), and so does an --endpos run; the slot exists and moves on with
  later runs (its
  confirmed_flush_lsn advances past the waiting table's changes);
  --status and --status --json show each table as waiting, why and since
  when; --verify compares the others and says "NAME: waiting" (exit 4).
- After the fixes (GRANT, the renames), the next run copies them at a
  consistent point: each equals the source row by row, and nothing waits.
- Joining later, in service mode: test_waiting_join.
- A role granted only a table's published columns (a column list) may
  copy it: it does not wait; one granted only some of them waits.
- A table that waits for its privilege does not hold its mirror name:
  another table with that name is mirrored.
- When no published table can be taken, a first run refuses before it
  makes the slot or the file.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, qident  # noqa: E402
from waiting import slot_lsn, status, waiting_json, with_role  # noqa: E402



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
    synced = [t["name"] for t in doc["tables"] if t.get("state") == "synced"]
    check(sorted(synced) == ["pgm_marker", "t1"], "--json synced tables: %s" % synced)
    prom = status(ctx, path, "--prometheus")
    check(re.search(r'^pgmirror_tables\{[^}]*state="waiting"[^}]*\} 5$', prom, re.M) and
          re.search(r'^pgmirror_tables\{[^}]*state="synced"[^}]*\} 2$', prom, re.M) and
          'table="secret"' not in prom,
          "--status --prometheus does not count the waiting tables:\n%s" % prom)
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
    # --endpos ends the same way, once all else up to it is applied
    ctx.sql("UPDATE t1 SET v = 'endpos' WHERE id = 1; INSERT INTO secret VALUES (40, 'e')")
    endpos = harness.format_lsn(ctx.source_lsn())
    rc, out, err = ctx.run(args + ["-E", endpos, path])
    check(rc == 1 and "GRANT SELECT ON public.secret" in err,
          "--endpos run: exit %d, expected 1 naming the GRANT:\n%s" % (rc, err))
    ctx.check_slot_not_ahead(path, slot)
    ctx.assert_mirror_equals_source(path, "public.t1")

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

    # ---- a grant of the published columns alone is enough ----------------
    # (with a column name holding a quote, a backslash and a colon: the one
    # column of colpub2 not granted, which the check must find by name)
    ctx.sql("CREATE TABLE colpub (id int PRIMARY KEY, pub text, priv text, "
            '"q""b\\:c" int); '
            "INSERT INTO colpub VALUES (1, 'shown', 'hidden', 5), (2, 'too', 'no', 6); "
            'CREATE TABLE colpub2 (id int PRIMARY KEY, "q""b\\:c" int, priv text); '
            'CREATE PUBLICATION p_cols FOR TABLE colpub (id, pub, "q""b\\:c"), '
            'colpub2 (id, "q""b\\:c"); '
            'GRANT SELECT (id, pub, "q""b\\:c") ON colpub TO %s; '
            "GRANT SELECT (id) ON colpub2 TO %s" % (q, q))
    p3, s3 = ctx.path("cols.db"), ctx.slot("cols")
    rc, out, err = ctx.run(["-d", dsn, "-S", s3, "-P", "p_cols", "--once", p3])
    check(rc == 1 and "GRANT SELECT ON public.colpub2 TO %s" % role in err,
          "a grant of some published columns: exit %d, expected 1 naming the GRANT\n%s"
          % (rc, err))
    check(ctx.mirror_query(p3, 'SELECT id, pub, "q""b\\:c" FROM colpub ORDER BY id') ==
          [(1, "shown", 5), (2, "too", 6)],
          "colpub: %s" % ctx.mirror_query(p3, "SELECT * FROM colpub"))

    # ---- a table that waits for its privilege holds no name --------------
    # public.o_b (unreadable) and o.b (readable) would both be "o_b": o.b
    # is mirrored under it, o_b waits for its GRANT, not for the name
    ctx.sql("CREATE TABLE o_b (id int PRIMARY KEY); CREATE SCHEMA o; "
            "CREATE TABLE o.b (id int PRIMARY KEY); INSERT INTO o.b VALUES (3); "
            "CREATE PUBLICATION p_order FOR TABLE o_b, o.b; "
            "GRANT USAGE ON SCHEMA o TO %s; GRANT SELECT ON o.b TO %s" % (q, q))
    p4, s4 = ctx.path("order.db"), ctx.slot("order")
    rc, out, err = ctx.run(["-d", dsn, "-S", s4, "-P", "p_order", "--once", p4])
    check(rc == 1 and "GRANT SELECT ON public.o_b TO %s" % role in err and
          os.path.exists(p4) and ctx.mirror_query(p4, "SELECT id FROM o_b") == [(3,)],
          "o_b / o.b: exit %d (o.b not mirrored as o_b?)\n%s" % (rc, err))

    # ---- nothing can be taken: refused before the slot --------------------
    ctx.sql("CREATE TABLE hidden (id int PRIMARY KEY); CREATE PUBLICATION p_none FOR TABLE hidden")
    p2, s2 = ctx.path("none.db"), ctx.slot("none")
    rc, out, err = ctx.run(["-d", dsn, "-S", s2, "-P", "p_none", "--once", p2])
    check(rc == 1 and "GRANT SELECT ON public.hidden TO %s" % role in err,
          "no table can be taken: exit %d\n%s" % (rc, err))
    check(ctx.slot_info(s2) is None and not os.path.exists(p2),
          "no table can be taken: the slot or the file was made")


def test(ctx):
    with_role(ctx, run_all)


harness.main(test)

"""A rebuild after the slot was lost completes without the tables it
cannot copy; they wait.

As a role with REPLICATION that is not a superuser, a mirror of t1, g (a
row security policy calls guard()) and deep (id, j json[]) is made. While
no pgmirror runs, the role loses EXECUTE on guard() (the privilege check
passes, the COPY is refused), deep gets a json element nested 7,000 deep
(PostgreSQL takes it; the mirror cannot store it), and the slot is
dropped. The next --once rebuilds the mirror from a fresh copy, all in
one transaction: it completes with t1 (equal to the source), g and deep
wait with their reasons, the slot is made again, and the run exits 1
naming them. The run after that is no rebuild (the mirror is whole). A
first run of a second mirror meets the same in its copy: it is made, g and
deep wait. After the fixes, both arrive in both mirrors equal to the
source and nothing waits.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, qident  # noqa: E402
from waiting import DEEP_JSON as DEEP, waiting_json, with_role  # noqa: E402

def run_all(ctx, role):
    dsn = ctx.dsn + " user=%s password=pw" % role
    q = qident(role)
    ctx.sql("""
        CREATE TABLE t1 (id int PRIMARY KEY, v text);
        INSERT INTO t1 SELECT g, 'v' || g FROM generate_series(1, 20) g;
        CREATE FUNCTION guard() RETURNS bool LANGUAGE sql AS 'SELECT true';
        REVOKE EXECUTE ON FUNCTION guard() FROM PUBLIC;
        CREATE TABLE g (id int PRIMARY KEY, v text);
        INSERT INTO g SELECT g, 'g' || g FROM generate_series(1, 10) g;
        ALTER TABLE g ENABLE ROW LEVEL SECURITY;
        CREATE POLICY p ON g FOR SELECT USING (guard());
        CREATE TABLE deep (id int PRIMARY KEY, j json[]);
        INSERT INTO deep VALUES (1, ARRAY['{"a": [1, 2]}']::json[]);
        CREATE TABLE pgm_marker (id bigserial PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE t1, g, deep, pgm_marker;
    """)
    ctx.sql("GRANT SELECT ON t1, g, deep, pgm_marker TO %s; "
            "GRANT EXECUTE ON FUNCTION guard() TO %s" % (q, q))
    path, slot = ctx.path(), ctx.slot()
    args = ["-d", dsn, "-S", slot, "-P", "pub"]
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 0, "the first run: exit %d\n%s" % (rc, err))
    check({"t1", "g", "deep"} <= set(ctx.mirror_tables(path)),
          "the first run's tables: %s" % ctx.mirror_tables(path))

    ctx.sql("REVOKE EXECUTE ON FUNCTION guard() FROM %s" % q)
    ctx.sql("INSERT INTO deep VALUES (2, %s); INSERT INTO t1 VALUES (21, 'new')" % DEEP)
    ctx.sql("SELECT pg_drop_replication_slot(%s)", slot)

    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 1, "the rebuild with g and deep refused: exit %d, expected 1\n%s" % (rc, err))
    check("rebuilt from a fresh copy" in err, "no rebuild:\n%s" % err)
    print("the rebuild's stderr:\n" + err)
    waiting, _ = waiting_json(ctx, path)
    check(sorted(waiting) == ["public.deep", "public.g"],
          "waiting after the rebuild: %s\n%s" % (sorted(waiting), err))
    check("permission denied for function guard" in waiting["public.g"]["reason"] and
          "cannot store" not in waiting["public.g"]["reason"],
          "g's reason: %r" % waiting["public.g"]["reason"])
    check("cannot store" in waiting["public.deep"]["reason"],
          "deep's reason: %r" % waiting["public.deep"]["reason"])
    have = set(ctx.mirror_tables(path))
    check("t1" in have and not ({"g", "deep"} & have), "mirror tables after the rebuild: %s"
          % sorted(have))
    ctx.assert_mirror_equals_source(path, "public.t1")
    check(ctx.slot_info(slot) is not None, "the rebuild made no slot")
    ctx.check_slot_not_ahead(path, slot)
    for name in ("public.g", "public.deep"):
        check(name in err, "the run's error does not name %s:\n%s" % (name, err))

    ctx.sql("INSERT INTO t1 VALUES (22, 'again')")
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 1 and "rebuilt" not in err,
          "the run after the rebuild: exit %d (expected 1, no rebuild)\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path, "public.t1")

    # a first run of another mirror meets the same in its copy (one
    # transaction per table): it is made, deep and g wait
    path2, slot2 = ctx.path("first.db"), ctx.slot("f")
    args2 = ["-d", dsn, "-S", slot2, "-P", "pub"]
    rc, out, err = ctx.run(args2 + ["--once", path2])
    check(rc == 1, "a first run with g and deep refused: exit %d, expected 1\n%s" % (rc, err))
    check(sorted(waiting_json(ctx, path2)[0]) == ["public.deep", "public.g"],
          "waiting after the first run: %s\n%s" % (sorted(waiting_json(ctx, path2)[0]), err))
    ctx.assert_mirror_equals_source(path2, "public.t1")

    ctx.sql("GRANT EXECUTE ON FUNCTION guard() TO %s; DELETE FROM deep WHERE id = 2" % q)
    rc, out, err = ctx.run(args + ["--once", path])
    check(rc == 0, "the run after the fixes: exit %d\n%s" % (rc, err))
    check(waiting_json(ctx, path)[0] == {}, "tables still wait after the fixes")
    ctx.assert_mirror_equals_source(path, "public.t1", "public.g", "public.deep")
    rc, out, err = ctx.run(args2 + ["--once", path2])
    check(rc == 0, "the first mirror's run after the fixes: exit %d\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path2, "public.t1", "public.g", "public.deep")


def test(ctx):
    with_role(ctx, run_all)


harness.main(test)

"""A mirrored table that loses its last column, with no change of its rows
after, waits without a mirror table, and stays so quietly.

Tables ok, z1 (a int, one row) and z3 (two columns of a domain, two rows)
are mirrored. ALTER TABLE z1 DROP COLUMN a, no row changed after: the
--once run exits 1 naming z1, and z1 is no longer in the mirror (as when
a row change follows the drop); --status --json lists it once, as
waiting. The next --once exits 1 again without syncing z1 again, and z1
waits since the same time. --verify exits 4 with a line for every table,
z1's "waiting", and never sends COPY of no column: also for z3, whose
domain is dropped with CASCADE (both columns go, as in PostgreSQL's
domain.sql) right before the --verify, with no run between. Once each
gets a column again, the next --once copies them, equal to the source.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
from waiting import status  # noqa: E402


def entries(ctx, path, source):
    doc = json.loads(status(ctx, path, "--json"))
    return [t for t in doc["tables"] if t.get("source") == source or
            (t.get("source") is None and t["name"] == source.split(".", 1)[1])]


def waits_once(ctx, path, name, what):
    got = entries(ctx, path, "public." + name)
    check([t.get("state") for t in got] == ["waiting"],
          "%s: --status --json lists public.%s as %s, expected once, as waiting: %s"
          % (what, name, [t.get("state") for t in got], got))
    if name in ctx.mirror_tables(path):
        check(False, "%s: mirror table %s is kept (columns %s, %d rows)"
              % (what, name, ctx.mirror_columns(path, name),
                 ctx.mirror_query(path, "SELECT count(*) FROM %s" % name)[0][0]))
    return got[0]


def z3_rows(ctx, path):
    """z3's rows in the mirror (the harness compares a domain as text)."""
    return ctx.mirror_query(path, "SELECT a, b FROM z3 ORDER BY a")


def run_once(ctx, path, slot, what, expect):
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"))
    harness.log("%s: exit %d\n%s" % (what, rc, err.strip()[-1500:]))
    check(rc == expect, "%s: exit %d, expected %d\n%s" % (what, rc, expect, err))
    return err


def verify(ctx, path, slot, what):
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--verify"))
    harness.log("%s: exit %d\nstdout:\n%s\nstderr:\n%s" % (what, rc, out, err))
    check("COPY" not in err and "syntax error" not in err,
          "%s: --verify sent a COPY the source refused:\n%s" % (what, err))
    lines = dict(l.split(": ", 1) for l in out.splitlines())
    check(rc == 4, "%s: --verify exited %d, expected 4 (a table waits)\nstdout:\n%s\n%s"
          % (what, rc, out, err))
    return lines


def test(ctx):
    ctx.sql("""
        CREATE TABLE ok (id int PRIMARY KEY, v text);
        INSERT INTO ok VALUES (1, 'one');
        CREATE TABLE z1 (a int);
        INSERT INTO z1 VALUES (1);
        CREATE DOMAIN dz AS int NOT NULL;
        CREATE TABLE z3 (a dz, b dz);
        INSERT INTO z3 VALUES (1, 2), (3, 4);
        CREATE TABLE pgm_marker (id bigserial PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE ok, z1, z3, pgm_marker;
    """)
    path, slot = ctx.path(), ctx.slot()
    run_once(ctx, path, slot, "the first run", 0)
    ctx.assert_mirror_equals_source(path, "public.ok", "public.z1")
    check(z3_rows(ctx, path) == [(1, 2), (3, 4)], "z3: %s" % z3_rows(ctx, path))

    # its last column dropped, no row changed after
    ctx.sql("ALTER TABLE z1 DROP COLUMN a; INSERT INTO ok VALUES (2, 'two')")
    soft = harness.Soft()  # the old symptoms, all of them
    err = run_once(ctx, path, slot, "z1 without columns", 1)
    check("public.z1" in err, "the run does not name z1:\n%s" % err)
    soft("z1 without columns", waits_once, ctx, path, "z1", "z1 without columns")
    first = entries(ctx, path, "public.z1")[-1]
    ctx.assert_mirror_equals_source(path, "public.ok")
    check(z3_rows(ctx, path) == [(1, 2), (3, 4)], "z3: %s" % z3_rows(ctx, path))

    # the next run: no sync again, the same waiting_since
    ctx.sql("INSERT INTO ok VALUES (3, 'three')")
    err = run_once(ctx, path, slot, "the run after", 1)
    soft.check("synced again" not in err and "columns of source table" not in err,
               "the run after syncs z1 again:\n%s" % err)
    soft("the run after", waits_once, ctx, path, "z1", "the run after")
    again = entries(ctx, path, "public.z1")[-1]
    soft.check(again["since"] == first["since"], "z1's waiting since changed: %s, then %s"
               % (first["since"], again["since"]))
    ctx.assert_mirror_equals_source(path, "public.ok")
    check(z3_rows(ctx, path) == [(1, 2), (3, 4)], "z3: %s" % z3_rows(ctx, path))

    def verify_waiting():
        lines = verify(ctx, path, slot, "--verify with z1 waiting")
        check(lines == {"ok": "ok", "z1": "waiting", "z3": "ok", "pgm_marker": "ok"},
              "--verify's lines: %s" % lines)
    soft("--verify with z1 waiting", verify_waiting)

    # z3 loses both columns (the domain dropped), and --verify comes next
    ctx.sql("DROP DOMAIN dz CASCADE")
    check(ctx.sql1("SELECT count(*) FROM pg_attribute WHERE attrelid = 'z3'::regclass AND "
                   "attnum > 0 AND NOT attisdropped") == 0, "z3 still has columns")
    def verify_z3():
        lines = verify(ctx, path, slot, "--verify after z3 lost its columns")
        check(lines.get("z3") == "waiting" and lines.get("z1") == "waiting" and
              lines.get("ok") == "ok", "--verify's lines: %s" % lines)
    soft("--verify after z3 lost its columns", verify_z3)

    # columns again: both are copied
    ctx.sql("ALTER TABLE z1 ADD COLUMN b int; INSERT INTO z1 VALUES (7); "
            "ALTER TABLE z3 ADD COLUMN c text DEFAULT 'c'")
    run_once(ctx, path, slot, "the run after the fix", 0)
    doc = json.loads(status(ctx, path, "--json"))
    check([t for t in doc["tables"] if t.get("state") == "waiting"] == [],
          "tables still wait: %s" % doc["tables"])
    ctx.assert_mirror_equals_source(path, "public.ok", "public.z1", "public.z3")
    soft.done()


harness.main(test)

"""A table whose copy meets, some parts in, a value the mirror cannot
store waits whole: readers never see the parts of a copy that failed, and
the copy is not repeated until something that could change its outcome
changed.

Tables ok, big (6,000 rows, a key, row 4,321's value one the mirror
cannot store: numeric(15,-400) 1e400 on PostgreSQL 15+, which a REAL
cannot hold; a json[] element nested 7,000 deep before) and old (6,000
good rows), copied in parts of 500 rows.

(1) The first run stores parts of big, meets the value, and exits 1
naming it: big is not in the mirror (no table, no staged table),
--status --json lists it once, as waiting, ok and old are whole.
(2) Nothing changed: the next --once does not copy big again (no part of
it stored, no new reason), exits 1 again, and big still waits, since the
same time. (3) A change of big's rows that leaves the value (a row added)
is seen in the stream: the next --once copies big again, which meets the
value again and waits, still not in the mirror.

(4) old, mirrored whole, gets a column whose default (volatile: the
table is rewritten, nothing goes through the stream) holds the value in
row 4,321: the run's check copies old again (its columns changed), in
parts into its staged table, and meets the value. Readers keep old's
whole old rows (6,000, its two old columns), no staged table is left,
--status lists old once, as waiting, and the run exits 1 naming it; the
next --once does not copy it again.

(5) A service: its check (SIGHUP) copies neither again while nothing
changed. Then the bad values are set right by changes in the stream;
after a SIGHUP (or the minute's check) big and old arrive, equal to the
source, and nothing waits.
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
from waiting import DEEP_JSON, status  # noqa: E402

# the bad value lies past what the copy's reader thread may convert ahead
# of the rows stored (src/copy: 32 batches of at most 512 rows), so that
# parts are stored before the copy meets it however the threads run
ROWS = 30000
BAD = 24321
ENV = {"PGMIRROR_TEST_PART_ROWS": "500"}


def bad_type(ctx):
    """(column type, the bad value, a good value) for this server."""
    if ctx.server_version >= 150000:
        return "numeric(15,-400)", "1e400", "1e20"
    return "json[]", DEEP_JSON, "ARRAY['[1]']::json[]"


def entries(ctx, path, source):
    """The entries of --status --json's tables for source table source."""
    doc = json.loads(status(ctx, path, "--json"))
    return [t for t in doc["tables"] if t.get("source") == source or
            (t.get("source") is None and t["name"] == source.split(".", 1)[1])]


def staged_tables(ctx, path):
    return [r[0] for r in ctx.mirror_query(
        path, "SELECT name FROM sqlite_master WHERE type = 'table' AND "
              "name LIKE 'pgmirror\\_stage\\_%' ESCAPE '\\'")]


def count(ctx, path, table):
    return ctx.mirror_query(path, "SELECT count(*) FROM \"%s\"" % table)[0][0]


def waits_whole(ctx, path, name, what):
    """name waits: listed once by --status --json, as waiting; returns its
    entry."""
    got = entries(ctx, path, "public." + name)
    check([t.get("state") for t in got] == ["waiting"],
          "%s: --status --json lists public.%s as %s, expected once, as waiting: %s"
          % (what, name, [t.get("state") for t in got], got))
    check(staged_tables(ctx, path) == [], "%s: staged tables left: %s"
          % (what, staged_tables(ctx, path)))
    return got[0]


def run_once(ctx, path, slot, what, expect):
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "-v", "--once"), env=ENV,
                           timeout=120)
    harness.log("%s: exit %d\n%s" % (what, rc, "\n".join(
        l for l in err.splitlines() if "big" in l or "old" in l or "error" in l)[-3000:]))
    check(rc == expect, "%s: exit %d, expected %d\n%s" % (what, rc, expect, err))
    if rc == 0:
        ctx.check_slot_not_ahead(path, slot)
    return err


def test(ctx):
    typ, bad, good = bad_type(ctx)
    ctx.sql("""
        CREATE TABLE ok (id int PRIMARY KEY, v text);
        INSERT INTO ok VALUES (1, 'one'), (2, 'two');
        CREATE TABLE big (id int PRIMARY KEY, v text, n %s);
        INSERT INTO big SELECT g, md5(g::text), NULL FROM generate_series(1, %d) g;
        UPDATE big SET n = %s WHERE id = %d;
        CREATE TABLE old (id int PRIMARY KEY, v text);
        INSERT INTO old SELECT g, 'o' || g FROM generate_series(1, %d) g;
        CREATE TABLE pgm_marker (id bigserial PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE ok, big, old, pgm_marker;
        ANALYZE big, old;
    """ % (typ, ROWS, bad, BAD, ROWS))
    path, slot = ctx.path(), ctx.slot()

    soft = harness.Soft()  # the old symptoms, all of them

    # (1) the first run: parts of big stored, then the value
    err = run_once(ctx, path, slot, "the first run", 1)
    check('copying "public.big"' in err and "rows stored" in err,
          "the first run stored no part of big before its value; the test shows nothing:\n%s"
          % err)
    check("public.big" in err and "cannot store" in err,
          "the first run's error does not name big and its value:\n%s" % err)
    have = ctx.mirror_tables(path)
    soft.check("big" not in have, "readers see %d of big's %d rows after its copy failed "
               "(mirror tables %s)" % (count(ctx, path, "big") if "big" in have else 0, ROWS,
                                       have))
    soft("the first run", waits_whole, ctx, path, "big", "the first run")
    first = entries(ctx, path, "public.big")[-1]
    ctx.assert_mirror_equals_source(path, "public.ok", "public.old")

    # (2) nothing changed: big is not copied again
    err = run_once(ctx, path, slot, "a run with nothing changed", 1)
    soft.check('copying "public.big"' not in err,
               "a run with nothing changed copied big again:\n%s" % err)
    check("public.big" in err, "the run does not name big, which waits:\n%s" % err)
    soft("a run with nothing changed", waits_whole, ctx, path, "big",
         "a run with nothing changed")
    again = entries(ctx, path, "public.big")[-1]
    soft.check(again["since"] == first["since"], "big's waiting since changed: %s, then %s"
               % (first["since"], again["since"]))
    soft.check("big" not in ctx.mirror_tables(path), "big is in the mirror")

    # (3) a change of its rows, the value still there: copied again, waits
    ctx.sql("INSERT INTO big VALUES (%d, 'new', NULL)" % (ROWS + 1))
    err = run_once(ctx, path, slot, "a run after a change of big", 1)
    check('copying "public.big"' in err,
          "a change of big in the stream did not make it copied again:\n%s" % err)
    soft.check("big" not in ctx.mirror_tables(path), "big is in the mirror after its copy "
               "failed again: %s" % ctx.mirror_tables(path))
    soft("a run after a change of big", waits_whole, ctx, path, "big",
         "a run after a change of big")

    # (4) old, mirrored whole, copied again (a column added), meets the value
    ctx.sql("""
        CREATE SEQUENCE seq;
        ALTER TABLE old ADD COLUMN n %s DEFAULT (CASE WHEN nextval('seq') = %d THEN %s END);
        INSERT INTO ok VALUES (3, 'three');
    """ % (typ, BAD, bad))
    check(ctx.sql1("SELECT count(*) FROM old WHERE n IS NOT NULL") == 1,
          "the rewrite did not put the value in one row of old")
    err = run_once(ctx, path, slot, "old copied again", 1)
    check('copying "public.old"' in err and "rows stored" in err,
          "old's copy again stored no part before its value; the test shows nothing:\n%s"
          % err)
    check("public.old" in err, "the run's error does not name old:\n%s" % err)
    if soft.check("old" in ctx.mirror_tables(path), "old's whole old rows are gone from "
                  "the mirror (mirror tables %s)" % ctx.mirror_tables(path)):
        soft.check(count(ctx, path, "old") == ROWS and
                   ctx.mirror_columns(path, "old") == ["id", "v"],
                   "readers see %d rows of old, columns %s; expected its %d old rows, id "
                   "and v" % (count(ctx, path, "old"), ctx.mirror_columns(path, "old"), ROWS))
    soft("old copied again", waits_whole, ctx, path, "old", "old copied again")
    ctx.assert_mirror_equals_source(path, "public.ok")
    err = run_once(ctx, path, slot, "a run with old waiting, nothing changed", 1)
    soft.check('copying "public.old"' not in err and 'copying "public.big"' not in err,
               "a run with nothing changed copied old or big again:\n%s" % err)
    soft.check("old" not in ctx.mirror_tables(path) or count(ctx, path, "old") == ROWS,
               "old's old rows changed")

    # (5) a service: its check (SIGHUP) copies neither again while nothing
    # changed; the values set right in the stream bring both
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "-v", "-s", "1"), tag="service",
                     env=ENV)
    ctx.catch_up(path, proc=proc)
    seen = len(proc.stderr())
    proc.popen.send_signal(signal.SIGHUP)
    deadline = time.time() + 60 * harness.SLOW
    while "checking the publications now (SIGHUP)" not in proc.stderr()[seen:]:
        check(proc.poll() is None, "the service exited %s:\n%s" % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "the service did not begin a check within 60 s of "
              "SIGHUP:\n%s" % proc.stderr()[seen:])
        time.sleep(0.05)
    # the check runs between transactions: a marker after it is applied after
    ctx.catch_up(path, proc=proc)
    log = proc.stderr()[seen:]
    soft.check('copying "public.big"' not in log and 'copying "public.old"' not in log,
               "the service's check copied big or old again with nothing changed:\n%s"
               % log)
    ctx.sql("UPDATE big SET n = %s WHERE id = %d; UPDATE old SET n = NULL WHERE id = %d"
            % (good, BAD, BAD))
    ctx.catch_up(path, proc=proc)
    proc.popen.send_signal(signal.SIGHUP)
    deadline = time.time() + 150 * harness.SLOW
    while True:
        doc = json.loads(status(ctx, path, "--json"))
        waiting = [t["source"] for t in doc["tables"] if t.get("state") == "waiting"]
        if not waiting and "big" in ctx.mirror_tables(path) and \
                ctx.mirror_columns(path, "old") == ["id", "v", "n"]:
            break
        check(proc.poll() is None, "the service exited %s:\n%s" % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "big and old did not arrive within 150 s of the fix "
              "(waiting: %s):\n%s" % (waiting, proc.stderr()))
        time.sleep(0.2)
    ctx.sql("UPDATE big SET v = 'x' WHERE id = 7; DELETE FROM old WHERE id = 9")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "public.ok", "public.big", "public.old")
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())
    soft.done()


harness.main(test)

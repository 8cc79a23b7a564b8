"""How far a copy in parts got (pgmirror_tables.copy_state) is read by
parsing it, never by what its text ends with, and with the key shape its
ranges were written with. Three copies are killed (kill -9) after some
parts were committed, on a slow disk (slow_sync.so), so that the kill
falls inside the copy:

- first_copy: a first run's copy of a table whose text key ends in ' *'
  (the copy's last key stored, 'item 010240 *', makes the text end as a
  finished copy's does). --status shows the table copying; the next
  --once goes on after the rows stored, and the mirror equals the source,
  also after later changes past the cut.
- resync: the same table, complete in the mirror, copied again
  (--resync) and killed: the next plain run does not put the partial copy
  in the old table's place, readers keep the old rows until the copy again
  is complete, and then see the source's.
- key_changed: a table joins, gets a change (its Relation message says
  its key is (a)), then its key gains a column (a, b), and its copy is
  killed; the next runs finish the copy and skip that change by position
  (its transaction commits before the copy's snapshot) instead of
  reading the copy's ranges with the older key shape: they exit 0, and
  the mirror equals the source, changes after the cut included.
- key_between: a change between two tries of a copy, made while the key
  had one column of the copy's two: its key cannot be placed in the
  copy's ranges, and the table is copied again (a line says so); the
  mirror then equals the source.
"""

import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
import copyparts  # noqa: E402

ROWS = 60000
PART_ROWS = 2048
CUT_AFTER = 5 * PART_ROWS  # 10240 rows: the kill comes after this many are stored
ENV = {"PGMIRROR_TEST_PART_ROWS": str(PART_ROWS)}
STAGED = ("SELECT copy_rows FROM pgmirror_tables WHERE table_name LIKE "
          "'pgmirror\\_stage\\_%' ESCAPE '\\' AND source_table = ?")


def stored(ctx, path, query, table):
    try:
        got = ctx.mirror_query(path, query, (table,))
    except Exception:  # noqa: BLE001 - the file is being made
        return 0
    return got[0][0] if got else 0


def kill_in_copy(ctx, path, slot, pub, table, *extra, query=None):
    """Runs --once extra on a slow disk, in parts of PART_ROWS rows, and
    kills it (SIGKILL) once the copy of table stored CUT_AFTER rows;
    returns the rows then stored. query: how to read them (default: the
    table's own row in pgmirror_tables)."""
    query = query or "SELECT copy_rows FROM pgmirror_tables WHERE table_name = ?"
    env = dict(ENV, LD_PRELOAD=harness.fault_shim("slow_sync"),  # the sanitizer build too
               ASAN_OPTIONS="verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", ""))
    proc = ctx.start(ctx.mirror_args(path, slot, pub, "--once", "-v", *extra), env=env)
    deadline = time.time() + 120 * harness.SLOW
    while stored(ctx, path, query, table) < CUT_AFTER:
        check(proc.poll() is None and time.time() < deadline,
              "the copy of %s did not store %d rows in parts before the run ended "
              "(exit %s):\n%s" % (table, CUT_AFTER, proc.poll(), proc.stderr()))
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.popen.wait()
    ctx.wait_slot_inactive(slot)
    n = stored(ctx, path, query, table)
    check(CUT_AFTER <= n < ROWS, "the kill did not fall inside the copy of %s: %d rows "
          "stored of %d" % (table, n, ROWS))
    harness.log("killed with %d rows of %s stored" % (n, table))
    return n


def check_copying(ctx, path, table, n):
    rc, out, err = ctx.run(["--status", path])
    check(rc == 0, "--status exited %d: %s" % (rc, err))
    check(re.search(r"^copying: %d \d+ %s$" % (n, table), out, re.M),
          "--status does not show %s copying with its %d rows stored:\n%s" % (table, n, out))


def went_on(err, table, n):
    check(re.search(r'copy of "public\.%s" goes on after the %d rows stored' % (table, n),
                    err), "the run after the kill did not go on after the %d rows stored "
          "of %s:\n%s" % (n, table, err))


def make_items(ctx, table, pub):
    ctx.sql("""
        CREATE TABLE %s (k text PRIMARY KEY, v int);
        INSERT INTO %s SELECT 'item ' || lpad(g::text, 6, '0') || ' *', g
        FROM generate_series(1, %d) g;
        ANALYZE %s;
        CREATE PUBLICATION %s FOR TABLE %s;
    """ % (table, table, ROWS, table, pub, table))


def later_changes(ctx, table, r):
    """Changes inside the part copied, and past it (round r)."""
    ctx.sql("UPDATE %s SET v = -v WHERE k IN ('item 00000%d *', 'item 05000%d *')"
            % (table, r, r))
    ctx.sql("INSERT INTO %s VALUES ('item 05555%d **', 1), ('item 00000%d **', 2)"
            % (table, r, r))
    ctx.sql("DELETE FROM %s WHERE k = 'item 04000%d *'" % (table, r))


def first_copy(ctx):
    t, pub = "items", "pub_items"
    make_items(ctx, t, pub)
    path, slot = ctx.path("first.db"), ctx.slot("f")
    n = kill_in_copy(ctx, path, slot, pub, t)
    state = ctx.mirror_query(path, "SELECT copy_state FROM pgmirror_tables WHERE "
                             "table_name = ?", (t,))[0][0]
    check(state.endswith(" *\n") and not copyparts.copy_done(state),
          "the case is not there: a copy_state of a cut copy that ends in ' *\\n':\n%r"
          % state[-60:])
    soft = harness.Soft()  # the old binary's every symptom, in one run
    soft("--status", check_copying, ctx, path, t, n)
    later_changes(ctx, t, 1)
    _, _, err = ctx.once(path, slot, pub, "-v", env=ENV)
    soft("the next run", went_on, err, t, n)
    soft("the mirror after it", ctx.assert_mirror_equals_source, path, t)
    later_changes(ctx, t, 2)
    ctx.once(path, slot, pub)
    soft("the mirror after later changes", ctx.assert_mirror_equals_source, path, t)
    soft.done()


def resync(ctx):
    t, pub = "again", "pub_again"
    make_items(ctx, t, pub)
    path, slot = ctx.path("resync.db"), ctx.slot("r")
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, t)
    old = ctx.mirror_query(path, "SELECT count(*) FROM %s" % t)[0][0]
    n = kill_in_copy(ctx, path, slot, pub, t, "--resync=" + t, query=STAGED)
    got = ctx.mirror_query(path, "SELECT count(*) FROM %s" % t)[0][0]
    check(got == old, "readers see %d rows of %s after the kill, not its %d old ones"
          % (got, t, old))
    soft = harness.Soft()  # the old binary's every symptom, in one run
    soft("--status", check_copying, ctx, path, t, n)
    later_changes(ctx, t, 1)
    _, _, err = ctx.once(path, slot, pub, "-v", env=ENV)
    soft.check("took the old table's place" not in err,
               "a partial copy again took the old table's place:\n%s" % err)
    soft("the next run", went_on, err, t, n)
    soft("the mirror after it", ctx.assert_mirror_equals_source, path, t)
    soft.done()
    check(not ctx.mirror_query(path, "SELECT 1 FROM pgmirror_staged"),
          "a staged copy is left")
    later_changes(ctx, t, 2)
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, t)


def key_changed(ctx):
    t, pub = "x", "pub_x"
    ctx.sql("""
        CREATE TABLE first (id int PRIMARY KEY);
        INSERT INTO first VALUES (1);
        CREATE PUBLICATION %s FOR TABLE first;
        CREATE TABLE x (a int NOT NULL, b int NOT NULL, v text, PRIMARY KEY (a));
        INSERT INTO x SELECT g, g %% 7, 'v' || g FROM generate_series(1, %d) g;
    """ % (pub, ROWS))
    path, slot = ctx.path("key.db"), ctx.slot("k")
    ctx.once(path, slot, pub)
    # it joins, gets a change while its key is (a), then the key is (a, b)
    ctx.sql("ALTER PUBLICATION %s ADD TABLE x" % pub)
    ctx.sql("UPDATE x SET v = 'before' WHERE a = 1")
    ctx.sql("ALTER TABLE x DROP CONSTRAINT x_pkey; ALTER TABLE x ADD PRIMARY KEY (a, b)")
    kill_in_copy(ctx, path, slot, pub, t)
    # changes under the new key, in the part copied and past it
    ctx.sql("UPDATE x SET v = 'after' WHERE a IN (2, 50000)")
    ctx.sql("INSERT INTO x VALUES (%d, 1, 'new')" % (ROWS + 1))
    ctx.once(path, slot, pub, "-v", env=ENV)
    ctx.assert_mirror_equals_source(path, "first", t)
    ctx.sql("UPDATE x SET v = 'later' WHERE a IN (3, 50001)")
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, "first", t)


def key_between(ctx):
    """A change between two tries of a copy, under a key of another shape
    than the copy's (the key lost a column and got it back): its key
    cannot be placed in the copy's ranges, and the table is copied again."""
    t, pub = "y", "pub_y"
    ctx.sql("""
        CREATE TABLE y (a int NOT NULL, b int NOT NULL, v text, PRIMARY KEY (a, b));
        INSERT INTO y SELECT g, g %% 7, 'v' || g FROM generate_series(1, %d) g;
        CREATE PUBLICATION %s FOR TABLE y;
    """ % (ROWS, pub))
    path, slot = ctx.path("between.db"), ctx.slot("b")
    kill_in_copy(ctx, path, slot, pub, t)
    ctx.sql("ALTER TABLE y DROP CONSTRAINT y_pkey; ALTER TABLE y ADD PRIMARY KEY (a)")
    ctx.sql("UPDATE y SET v = 'one key' WHERE a IN (2, 50000)")
    ctx.sql("ALTER TABLE y DROP CONSTRAINT y_pkey; ALTER TABLE y ADD PRIMARY KEY (a, b)")
    _, _, err = ctx.once(path, slot, pub, "-v", env=ENV)
    check(re.search(r'the key of "public\.y" in the transaction committed at \S+ is not '
                    r'the one its copy in parts was made with \(key columns: 1, the '
                    r"copy's: 2\)", err),
          "no line says that a change's key had another shape than the copy's:\n%s" % err)
    harness.log("".join(l for l in err.splitlines(True) if "copying" not in l))
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, t)
    ctx.sql("UPDATE y SET v = 'later' WHERE a IN (3, 50001)")
    ctx.once(path, slot, pub)
    ctx.assert_mirror_equals_source(path, t)


def test(ctx):
    harness.run_parts(ctx, {"first_copy": first_copy, "resync": resync,
                            "key_changed": key_changed, "key_between": key_between})


harness.main(test)

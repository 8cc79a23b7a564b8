"""A big table copied again goes on inside the table after a cut, as a
first sync does: a --resync (cron mode, the same command run again after
each cut), a row filter set on the publication (a column added, before
PostgreSQL 15) in service mode, asked to check by SIGHUP, trying again by
itself after each cut, the rebuild
after the mirror's slot was dropped (cron mode), and the heal of a damaged
mirror file (cron mode; its new file, MIRROR.db.rebuild, is filled in
parts too and goes on). pgmirror reaches the
source through a slow link (linkproxy.py) that the test cuts while the
table is copied; between the tries the source changes (updates, deletes,
inserts, key changes inside, across and beyond the part copied, an update
that leaves a TOASTed value unchanged, rows moving in and out of the row
filter). Meanwhile readers keep the table's old rows, frozen (they are
replaced only once the new copy is complete, in one transaction), and
--status shows the table copying under its name; each try goes on after
the rows stored (the table is read about once in all), and at the end
the mirror equals the source row by row, and stays so as the stream goes
on."""

import collections
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check  # noqa: E402
import copyparts  # noqa: E402
from copyparts import link_args  # noqa: E402

ROWS = 60000         # ids 2, 4, ..., 2 * ROWS
PART_ROWS = 2000
CUTS = 2
ENV = {"PGMIRROR_TEST_PART_ROWS": str(PART_ROWS)}
STAGED = "SELECT copy_rows, copy_state FROM pgmirror_tables WHERE table_name LIKE " \
         "'pgmirror\\_stage\\_%' ESCAPE '\\' AND source_table = ?"


def make(ctx, t, pub, where=""):
    # a key of two columns, the row filter's column in it: a row moves in
    # and out of the filter by a key change
    ctx.sql("""
        CREATE TABLE %s (id int8, grp int, payload text, doc text, PRIMARY KEY (id, grp));
        ALTER TABLE %s ALTER doc SET STORAGE EXTERNAL;
        INSERT INTO %s SELECT 2 * g, g %% 5, 'p' || g,
          CASE WHEN g %% 400 = 0 THEN repeat(md5(g::text), 150) ELSE 'd' || g END
        FROM generate_series(1, %d) g;
        ANALYZE %s;
        CREATE TABLE %s_small (id int PRIMARY KEY);
        INSERT INTO %s_small VALUES (1);
        CREATE PUBLICATION %s FOR TABLE %s %s, %s_small;
    """ % (t, t, t, ROWS, t, t, t, pub, t, where, t))


def rows(ctx, path, t):
    return collections.Counter(ctx.mirror_query(
        path, "SELECT id, grp, payload, length(doc) FROM %s" % t))


def source_rows(ctx, t, where="true"):
    return collections.Counter(ctx.sql(
        "SELECT id, grp, payload, length(doc) FROM %s WHERE %s" % (t, where)))


def assert_equal(ctx, path, t, where="true"):
    src, mir = source_rows(ctx, t, where), rows(ctx, path, t)
    check(src == mir, "mirror table %s differs from the source: %d rows, %d; only in the "
          "source: %s; only in the mirror: %s"
          % (t, sum(mir.values()), sum(src.values()), sorted((src - mir).elements())[:5],
             sorted((mir - src).elements())[:5]))


def staged(ctx, path, t):
    """(rows stored, last key) of the staged copy of t, (0, None) when none."""
    try:
        got = ctx.mirror_query(path, STAGED, (t,))
    except Exception:  # noqa: BLE001 - a commit in progress
        return 0, None
    if not got or got[0][1] is None:
        return 0, None
    m = re.search(r" i(-?\d+);i-?\d+;\n$", got[0][1])
    return got[0][0], int(m.group(1)) if m else None


def wait_stored(ctx, path, t, more_than, proc):
    """Until the copy again stored more_than rows (it stands still for
    120 s at most)."""
    def step():
        n, key = staged(ctx, path, t)
        if n > more_than and key is not None:
            return (n, key), n
        check(proc.poll() is None,
              "the copy again ended before it passed %d rows:\n%s" % (more_than, proc.stderr()))
        return None, n

    return harness.wait_moving("the copy again to pass %d rows" % more_than, step, quiet=120,
                               interval=0.005, detail=lambda: "\n" + proc.stderr())


def changes(ctx, t, k, r):
    """Changes around key k (the copy's last), round r."""
    def one(where):
        got = ctx.sql("SELECT id FROM %s WHERE %s AND grp <> 3 AND length(doc) < 100 "
                      "ORDER BY id LIMIT 1 OFFSET %d" % (t, where, r))
        return got[0][0] if got else None

    inside, beyond = "id < %d AND id > %d" % (k, k // 2), "id > %d" % (k + 1000)
    for where in ("id < 1000", inside, beyond):
        for sql in ("UPDATE {t} SET payload = payload || '-u' WHERE id = %d",
                    "DELETE FROM {t} WHERE id = %d",
                    "UPDATE {t} SET grp = 3 WHERE id = %d",  # out of the filter
                    "UPDATE {t} SET grp = 4 WHERE id = %d AND grp = 3"):
            i = one(where) if "grp = 3" not in sql else ctx.sql1(
                "SELECT min(id) FROM %s WHERE %s AND grp = 3" % (t, where))
            if i is not None:
                ctx.sql(sql.format(t=t) % i)
    for new in (k - 2 * r - 1, k + 1, k + 2 * r + 3001):
        ctx.sql("INSERT INTO %s VALUES (%d, 1, 'new', 'n') ON CONFLICT DO NOTHING" % (t, new))
    for old, new in ((one(inside), k + 4 * r + 2003), (one(beyond), k - 4 * r - 5)):
        if old is not None:
            ctx.sql("UPDATE %s SET id = %d WHERE id = %d AND NOT EXISTS "
                    "(SELECT 1 FROM %s WHERE id = %d)" % (t, new, old, t, new))
    big = ctx.sql1("SELECT min(id) FROM %s WHERE length(doc) > 1000 AND id > %d" % (t, k))
    if big is not None:  # the TOASTed value is sent as unchanged
        ctx.sql("UPDATE %s SET payload = payload || '-t' WHERE id = %d" % (t, big))


def check_frozen(ctx, path, t, old, r):
    """Readers see the table's old rows, all of them, unchanged."""
    now = rows(ctx, path, t)
    check(now == old, "try %d: the old rows of %s changed before the new copy was complete "
          "(%d rows, were %d)" % (r, t, sum(now.values()), sum(old.values())))
    ctx.run(["--status", path])
    rc, out, err = ctx.run(["--status", path])
    n, _ = staged(ctx, path, t)
    check(re.search(r"^table: %d %s$" % (sum(old.values()), t), out, re.M) and
          re.search(r"^copying: %d \d+ %s$" % (n, t), out, re.M) and "pgmirror_stage" not in out,
          "try %d: --status does not show %s copying under its name:\n%s" % (r, t, out))


def cron_tries(ctx, link, path, slot, pub, t, extra, where, old):
    """CUTS tries of pgmirror --once extra through link, each cut inside
    the copy; then one that finishes."""
    stored = 0
    args = link_args(ctx, link, path, slot, pub, "--once", "-v", *extra)
    for r in range(1, CUTS + 1):
        n, key = copyparts.cut_try(
            ctx, link, args, "%s%d" % (t, r), ENV, t, stored, r,
            lambda proc: wait_stored(ctx, path, t, stored + 3 * PART_ROWS, proc))
        stored, key = staged(ctx, path, t)
        check(stored >= n, "try %d lost parts at the cut (%d rows, then %d)" % (r, n, stored))
        check_frozen(ctx, path, t, old, r)
        changes(ctx, t, key, r)
        ctx.wait_slot_inactive(slot)
    return copyparts.last_try(ctx, args, ENV, t, stored)


def after(ctx, path, slot, pub, t, where):
    assert_equal(ctx, path, t, where)
    total = ctx.mirror_query(path, "SELECT copy_rows FROM pgmirror_tables WHERE "
                             "table_name = ?", (t,))[0][0]
    check(total < ROWS * 1.1, "the tries stored %d rows in all for a table of %d: a try "
          "started over" % (total, ROWS))
    check(not [n for n in ctx.mirror_tables(path) if n.startswith("pgmirror_stage")] and
          ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_staged")[0][0] == 0,
          "a staged table is left: %r" % ctx.mirror_tables(path))
    changes(ctx, t, ROWS, CUTS + 1)
    ctx.once(path, slot, pub)
    assert_equal(ctx, path, t, where)


def resync(ctx, link):
    t, pub = "bigr", "pubr"
    make(ctx, t, pub)
    path, slot = ctx.path("resync.db"), ctx.slot("r")
    ctx.once(path, slot, pub)
    con = ctx.mirror_connect(path)  # the user's view and index stay
    con.executescript("CREATE VIEW app_v AS SELECT id FROM bigr WHERE grp = 1; "
                      "CREATE INDEX app_i ON bigr (payload)")
    con.close()
    cron_tries(ctx, link, path, slot, pub, t, ["--resync=" + t], "true", rows(ctx, path, t))
    check(ctx.mirror_query(path, "SELECT count(*) FROM sqlite_master WHERE name IN "
                           "('app_v', 'app_i')")[0][0] == 2, "the user's objects are gone")
    after(ctx, path, slot, pub, t, "true")


def keyless(ctx, link):
    """A keyless table's --resync killed (kill -9) once its old table is
    set aside: it is copied whole, so nothing of its copy is stored before
    its end, and the next run, without --resync, must still see that its
    copy is to be made (its publications unchanged)."""
    t, pub = "bigk", "pubk"
    ctx.sql("""
        CREATE TABLE bigk (n int, v text);
        ALTER TABLE bigk REPLICA IDENTITY FULL;
        INSERT INTO bigk SELECT g %% 97, repeat('k', 40) FROM generate_series(1, %d) g;
        CREATE PUBLICATION pubk FOR TABLE bigk;
    """ % ROWS)
    path, slot = ctx.path("keyless.db"), ctx.slot("k")
    ctx.once(path, slot, pub)
    proc = ctx.start(link_args(ctx, link, path, slot, pub, "--once", "-v", "--resync=" + t),
                     tag="keyless", env=ENV)
    deadline = time.time() + 60 * harness.SLOW
    while not ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_staged")[0][0]:
        check(proc.poll() is None and time.time() < deadline,
              "the --resync did not set bigk aside:\n%s" % proc.stderr())
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.popen.wait()
    ctx.wait_slot_inactive(slot)
    harness.log("killed with %r" % ctx.mirror_query(
        path, "SELECT table_name, copy_state, copy_rows, sync_lsn, (SELECT count(*) FROM "
        "pgmirror_staged) FROM pgmirror_tables WHERE source_table = 'bigk'"))
    ctx.sql("DELETE FROM bigk WHERE n = 5")
    rc, _, err = ctx.run(link_args(ctx, link, path, slot, pub, "--once", "-v"), env=ENV,
                         timeout=180)
    harness.log("the next run:\n" + err)
    check(rc == 0, "the next run exited %d:\n%s" % (rc, err))
    check(not ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_staged")[0][0],
          "the next run left bigk set aside:\n%s" % err)
    check("a copy again that a stop left complete took the old table's place" in err
          or 'table "public.bigk" synced again' in err,
          "the next run did not say how it ended bigk's copy again:\n%s" % err)
    ctx.assert_mirror_equals_source(path, t)


def rebuild(ctx, link):
    t, pub = "bigb", "pubb"
    make(ctx, t, pub)
    path, slot = ctx.path("rebuild.db"), ctx.slot("b")
    ctx.once(path, slot, pub)
    ctx.admin.cursor().execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    ctx.sql("UPDATE bigb SET payload = 'while the slot was gone' WHERE id < 100")
    err = cron_tries(ctx, link, path, slot, pub, t, [], "true", rows(ctx, path, t))
    check("rebuild" in err, "the last try did not finish the rebuild:\n%s" % err)
    st = ctx.mirror_state(path)
    check(st["initial_copy_done"] == 1 and st["last_rebuild_reason"],
          "the rebuild is not recorded: %r" % st)
    after(ctx, path, slot, pub, t, "true")


def heal(ctx, link):
    """A damaged mirror is healed into MIRROR.db.rebuild, a new file no
    reader sees, table by table in parts: a cut heal goes on there."""
    t, pub = "bigh", "pubh"
    make(ctx, t, pub)
    path, slot = ctx.path("heal.db"), ctx.slot("h")
    ctx.once(path, slot, pub)
    con = ctx.mirror_connect(path)
    ps = con.execute("PRAGMA page_size").fetchone()[0]
    leaf = con.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' "
                       "ORDER BY pageno", (t,)).fetchall()[5][0]
    con.execute("UPDATE pgmirror_state SET last_check_time = '2000-01-01 00:00:00'")
    con.commit()
    con.close()
    with open(path, "r+b") as f:  # the daily check, due, finds it
        f.seek((leaf - 1) * ps)
        f.write(b"\xff" * ps)
    fresh, stored = path + ".rebuild", 0
    for r in range(1, CUTS + 1):
        proc = ctx.start(link_args(ctx, link, path, slot, pub, "--once", "-v"),
                         tag="heal%d" % r, env=ENV)
        def heal_step():
            try:
                n = ctx.mirror_query(fresh, "SELECT copy_rows FROM pgmirror_tables WHERE "
                                     "table_name = ? AND copy_state IS NOT NULL", (t,))
            except Exception:  # noqa: BLE001 - being made
                n = []
            n = n[0][0] if n else 0
            if n > stored + 3 * PART_ROWS:
                return True, n
            check(proc.poll() is None,
                  "the heal's copy ended before it passed %d rows:\n%s" % (stored, proc.stderr()))
            return None, n

        harness.wait_moving("the heal's copy to pass %d rows" % (stored + 3 * PART_ROWS),
                            heal_step, quiet=120, interval=0.005,
                            detail=lambda: "\n" + proc.stderr())
        link.cut()
        rc = proc.popen.wait(60 * harness.SLOW)
        err = proc.stderr()
        check(rc == 1, "heal try %d exited %d after the cut:\n%s" % (r, rc, err))
        if r > 1:
            check(re.search(r'copy of "public\.%s" goes on after the %d rows stored'
                            % (t, stored), err),
                  "heal try %d did not go on after the %d rows stored:\n%s" % (r, stored, err))
        stored = ctx.mirror_query(fresh, "SELECT copy_rows FROM pgmirror_tables WHERE "
                                  "table_name = ?", (t,))[0][0]
        ctx.sql("UPDATE %s SET payload = payload || '-h' WHERE id %% 997 = 0" % t)
        ctx.wait_slot_inactive(slot)
    rc, out, err = ctx.run(link_args(ctx, link, path, slot, pub, "--once", "-v"), env=ENV,
                           timeout=180)
    check(rc == 0 and "goes on in" in err and re.search(
        r'copy of "public\.%s" goes on after the %d rows stored' % (t, stored), err),
          "the last heal try did not go on with the %d rows stored (exit %d):\n%s"
          % (stored, rc, err))
    check(os.path.exists(path + ".damaged") and not os.path.exists(fresh),
          "the heal did not put the new file in place")
    assert_equal(ctx, path, t)
    ctx.sql("UPDATE %s SET payload = 'after' WHERE id < 50" % t)
    ctx.once(path, slot, pub)
    assert_equal(ctx, path, t)


def service(ctx, link):
    t, pub = "bigs", "pubs"
    make(ctx, t, pub)
    ctx.create_marker(pub)
    path, slot = ctx.path("service.db"), ctx.slot("s")
    ctx.once(path, slot, pub)
    old = rows(ctx, path, t)
    proc = ctx.start(link_args(ctx, link, path, slot, pub, "-v"), tag="service", env=ENV)
    ctx.catch_up(path, proc=proc)
    if ctx.server_version >= 150000:
        ctx.sql("ALTER PUBLICATION %s SET TABLE %s WHERE (grp <> 3), %s_small, pgm_marker"
                % (pub, t, t))
        where = "grp <> 3"
    else:
        # no row filters before 15: a column added with no row change, which
        # the check finds and syncs the table again for
        ctx.sql("ALTER TABLE %s ADD COLUMN extra int DEFAULT 7" % t)
        where = "true"
    proc.popen.send_signal(signal.SIGHUP)  # a check at once
    stored = 0
    for r in range(1, CUTS + 1):
        n, key = wait_stored(ctx, path, t, stored + 3 * PART_ROWS, proc)
        link.cut()
        stored, _ = staged(ctx, path, t)
        check(stored >= n, "the service lost parts at cut %d" % r)
        check(rows(ctx, path, t) == old, "cut %d: the old rows changed before the new copy "
              "was complete" % r)
        changes(ctx, t, key, r)
    ctx.catch_up(path, timeout=240, proc=proc)
    assert_equal(ctx, path, t, where)
    check(len(re.findall(r'copy of "public\.%s" goes on after' % t, proc.stderr())) >= CUTS,
          "the service did not go on after each cut:\n%s" % proc.stderr())
    changes(ctx, t, ROWS, CUTS + 1)
    ctx.catch_up(path, proc=proc)
    assert_equal(ctx, path, t, where)
    if where == "true":  # every column, the one added too
        ctx.assert_mirror_equals_source(path, t)
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())


def test(ctx):
    with linkproxy.LinkProxy(rate=1000000, down_only=True) as link:
        harness.run_parts(ctx, {"resync": resync, "keyless": keyless, "rebuild": rebuild,
                                "heal": heal, "service": service}, link)


harness.main(test)

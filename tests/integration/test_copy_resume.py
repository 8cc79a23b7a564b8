"""A first sync cut again and again goes on inside its table: the copy of a
table with a key is committed in parts, each with its last key and its
snapshot's position, and each try goes on after the last key under a new
snapshot. pgmirror reaches the source through a slow link (linkproxy.py)
that the test cuts in the middle of a part, several times, in cron mode
(--once, which exits 1 and is run again) and in service mode (which tries
again by itself), and at random moments (cron mode, until a try gets
through); between the tries the source changes: updates, deletes, inserts,
key changes inside the copied part, across it and beyond it, an update that
leaves a large (TOASTed) value unchanged, rows moving in and out of the row
filter. At the end the mirror equals the source (exactly once), the table
was read about once in all (each try went on, none started over), and
--status showed the table copying with its rows and the source's estimate.
"""

import collections
import hashlib
import json
import os
import random
import re
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check  # noqa: E402
import copyparts  # noqa: E402
from copyparts import link_args  # noqa: E402

ROWS = 120000        # ids 2, 4, ..., 2 * ROWS
PART_ROWS = 2000     # a part every PART_ROWS rows (test knob)
CUTS = 3
ENV = {"PGMIRROR_TEST_PART_ROWS": str(PART_ROWS)}
RATE = 1000000       # bytes/s from the server: a full copy takes seconds


def setup(ctx, table):
    # a key of two columns, in the row filter's column: a row moves in and
    # out of the filter by a key change
    ctx.sql("""
        CREATE TABLE %s (id int8, grp int, payload text, doc text,
                         PRIMARY KEY (id, grp));
        ALTER TABLE %s ALTER doc SET STORAGE EXTERNAL;
        INSERT INTO %s SELECT 2 * g, g %% 5, 'p' || g,
          CASE WHEN g %% 500 = 0 THEN repeat(md5(g::text), 150) ELSE 'd' || g END
        FROM generate_series(1, %d) g;
    """ % (table, table, table, ROWS))
    ctx.sql("VACUUM ANALYZE %s" % table)


def copy_progress(ctx, path, table):
    """(rows stored, last key id or None) of the copy of table in the mirror."""
    rows, key = copyparts.progress(ctx, path, table)
    return rows, (int(key[0]) if key else None)


def wait_progress(ctx, path, table, more_than, proc):
    rows, key = copyparts.wait_progress(ctx, path, table, more_than, proc)
    return rows, (int(key[0]) if key else None)


def pick(ctx, table, cond, n=0, big=False):
    """The id of the n-th row (by id) that matches cond, or None."""
    rows = ctx.sql("SELECT id FROM %s WHERE %s AND length(doc) %s ORDER BY id "
                   "LIMIT 1 OFFSET %d" % (table, cond, "> 1000" if big else "< 100", n))
    return rows[0][0] if rows else None


def do(ctx, sql, *ids):
    """sql % ids, unless a row was not found (None)."""
    if None not in ids:
        ctx.sql(sql % ids)


def changes(ctx, table, k, r):
    """Changes around key k (the copy's last), round r (rows differ by round)."""
    inside = "id < %d AND id > %d" % (k, k // 2)
    beyond = "id > %d" % (k + 1000)
    t = table
    # first range, inside, beyond: updates and deletes
    do(ctx, "UPDATE " + t + " SET payload = payload || '-u' WHERE id = %d",
       pick(ctx, t, "id < 1000 AND grp <> 3", r))
    for where in (inside, beyond):
        do(ctx, "UPDATE " + t + " SET payload = payload || '-u' WHERE id = %d",
           pick(ctx, t, where + " AND grp <> 3", 3))
        do(ctx, "DELETE FROM " + t + " WHERE id = %d", pick(ctx, t, where + " AND grp <> 3", 7))
    # inserts with odd ids, inside, right after the last key, and beyond
    for new in (k - 2 * r - 1, k + 1, k + 2 * r + 1001):
        do(ctx, "INSERT INTO " + t + " VALUES (%d, 1, 'new', 'n') ON CONFLICT DO NOTHING", new)
    # key changes: inside to inside, inside to beyond, beyond to inside, and
    # one onto the last key's neighbour
    moves = [(pick(ctx, t, inside + " AND grp <> 3", 11), k - 4 * r - 3),
             (pick(ctx, t, inside + " AND grp <> 3", 13), k + 4 * r + 2003),
             (pick(ctx, t, beyond + " AND grp <> 3", 17), k - 4 * r - 5),
             (pick(ctx, t, beyond + " AND grp <> 3", 19), k + 3)]
    for old, new in moves:
        do(ctx, "UPDATE " + t + " SET id = %d WHERE id = %d AND NOT EXISTS "
           "(SELECT 1 FROM " + t + " WHERE id = %d)", new, old, new)
    # an update that leaves the large value as it is (sent as unchanged)
    for where in ("id < %d" % k, beyond):
        do(ctx, "UPDATE " + t + " SET payload = payload || '-t' WHERE id = %d",
           pick(ctx, t, where + " AND grp <> 3", r, big=True))
    # out of the row filter, and into it
    for where in (inside, beyond):
        do(ctx, "UPDATE " + t + " SET grp = 3 WHERE id = %d",
           pick(ctx, t, where + " AND grp <> 3", 23))
        do(ctx, "UPDATE " + t + " SET grp = 4 WHERE id = %d",
           pick(ctx, t, where + " AND grp = 3", 2))
    # and a transaction that does several of these at once
    do(ctx, "BEGIN; UPDATE " + t + " SET payload = 'multi' WHERE id IN (%d, %d); "
       "DELETE FROM " + t + " WHERE id = %d; COMMIT",
       pick(ctx, t, inside, 29), pick(ctx, t, beyond, 29), pick(ctx, t, "id < %d" % k, 31))


def assert_equal(ctx, path, table):
    """The mirror holds exactly the source's rows that the row filter lets
    through, each once, with its current values."""
    src = collections.Counter(ctx.sql("SELECT id, grp, payload, md5(doc) FROM %s "
                                      "WHERE grp <> 3" % table))
    mir = collections.Counter(
        (i, g, p, hashlib.md5(d.encode()).hexdigest())
        for i, g, p, d in ctx.mirror_query(path, "SELECT id, grp, payload, doc FROM %s" % table))
    if src != mir:
        check(False, "mirror table %s differs from the source: %d rows, %d; only in the "
              "source: %s; only in the mirror: %s"
              % (table, sum(mir.values()), sum(src.values()),
                 sorted((src - mir).elements())[:10], sorted((mir - src).elements())[:10]))
    ctx.checked(path)


def check_status(ctx, path, table, rows):
    rc, out, err = ctx.run(["--status", "--json", path])
    check(rc == 0, "--status --json exited %d: %s" % (rc, err))
    tabs = {t["name"]: t for t in json.loads(out)["tables"]}
    copy = (tabs.get(table) or {}).get("copy")
    check(copy is not None and copy["rows"] == rows
          and abs(copy["estimated_rows"] - ROWS) <= ROWS // 10,
          "--status --json shows %s as %s, the mirror stored %d rows of %d"
          % (table, tabs.get(table), rows, ROWS))
    rc, out, err = ctx.run(["--status", path])
    check(re.search(r"^copying: %d %d %s$" % (rows, copy["estimated_rows"], table), out, re.M),
          "--status does not show the copy's progress (%d rows):\n%s" % (rows, out))
    rc, out, err = ctx.run(["--status", "--prometheus", path])
    check(re.search(r'^pgmirror_tables\{[^}]*state="copying"[^}]*\} 1$', out, re.M),
          "--status --prometheus does not count the table copying:\n%s" % out)


def cron(ctx, link):
    table = "bigc"
    setup(ctx, table)
    ctx.sql("CREATE PUBLICATION pubc FOR TABLE %s WHERE (grp <> 3)" % table)
    path, slot = ctx.path("cron.db"), ctx.slot("c")
    stored = 0
    for r in range(1, CUTS + 1):
        proc = ctx.start(link_args(ctx, link, path, slot, "pubc", "--once", "-v"),
                         tag="cron%d" % r, env=ENV)
        rows, key = wait_progress(ctx, path, table, stored + 3 * PART_ROWS, proc)
        check(key is not None and proc.poll() is None,
              "try %d ended before the test cut it:\n%s" % (r, proc.stderr()))
        link.cut()
        rc = proc.popen.wait(60 * harness.SLOW)
        err = proc.stderr()
        check(rc == 1, "try %d exited %d after the cut, expected 1:\n%s" % (r, rc, err))
        check("error: " in err, "try %d did not say why it failed:\n%s" % (r, err))
        check(re.search(r'copying "public\.%s": \d+ of about \d+ rows stored' % table, err),
              "-v did not show the copy's progress:\n%s" % err)
        if r > 1:
            check(re.search(r'copy of "public\.%s" goes on after the %d rows stored'
                            % (table, stored), err),
                  "try %d did not go on after the %d rows stored:\n%s" % (r, stored, err))
        after, key = copy_progress(ctx, path, table)
        check(after >= rows, "try %d: the mirror lost parts at the cut (%d rows stored, "
              "then %d)" % (r, rows, after))
        n = ctx.mirror_query(path, "SELECT count(*) FROM %s" % table)[0][0]
        check(n == after, "try %d: the mirror holds %d rows, its copy says %d" % (r, n, after))
        harness.log("try %d cut with %d rows stored, last key %d" % (r, after, key))
        check_status(ctx, path, table, after)
        stored = after
        changes(ctx, table, key, r)
        ctx.wait_slot_inactive(slot)
    rc, out, err = ctx.run(link_args(ctx, link, path, slot, "pubc", "--once", "-v"),
                           env=ENV, timeout=180)
    check(rc == 0, "the last try exited %d:\n%s" % (rc, err))
    check(re.search(r'copy of "public\.%s" goes on after the %d rows stored' % (table, stored),
                    err), "the last try did not go on:\n%s" % err)
    assert_equal(ctx, path, table)
    total = ctx.mirror_query(path, "SELECT copy_rows FROM pgmirror_tables")[0][0]
    check(total < ROWS * 1.1, "the tries stored %d rows in all for a table of %d: a try "
          "started over" % (total, ROWS))
    harness.log("%d tries, %d rows stored in all, %d bytes from the server"
                % (CUTS + 1, total, link.bytes_down))
    # the stream goes on from the ranges' positions
    changes(ctx, table, ROWS, CUTS + 1)
    ctx.once(path, slot, "pubc")
    assert_equal(ctx, path, table)


def service(ctx, link):
    table = "bigs"
    setup(ctx, table)
    ctx.sql("CREATE PUBLICATION pubs FOR TABLE %s WHERE (grp <> 3)" % table)
    ctx.create_marker("pubs")
    path, slot = ctx.path("service.db"), ctx.slot("s")
    proc = ctx.start(link_args(ctx, link, path, slot, "pubs", "-v"), tag="service", env=ENV)
    stored = 0
    for r in range(1, CUTS + 1):
        rows, key = wait_progress(ctx, path, table, stored + 3 * PART_ROWS, proc)
        check(key is not None and proc.poll() is None,
              "the service's copy ended before the test cut it:\n%s" % proc.stderr())
        link.cut()
        changes(ctx, table, key, r)
        stored, _ = copy_progress(ctx, path, table)
        check(stored >= rows, "the service lost parts at cut %d" % r)
    ctx.catch_up(path, "pgm_marker", timeout=240, proc=proc)
    assert_equal(ctx, path, table)
    err = proc.stderr()
    check(len(re.findall(r'copy of "public\.%s" goes on after' % table, err)) >= CUTS,
          "the service did not go on after each cut:\n%s" % err)
    changes(ctx, table, ROWS, CUTS + 1)
    ctx.catch_up(path, "pgm_marker", proc=proc)
    assert_equal(ctx, path, table)
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())


def random_cuts(ctx, link):
    """Cuts at random moments (after the slot is claimed: a cut in the
    instant between its creation and the claim leaves a slot the mirror
    cannot prove its own, which the next run refuses), --once again and
    again, with changes between the tries."""
    table = "bigr"
    setup(ctx, table)
    ctx.sql("CREATE PUBLICATION pubr FOR TABLE %s WHERE (grp <> 3)" % table)
    path, slot = ctx.path("random.db"), ctx.slot("r")
    rng = random.Random(int(os.environ.get("SEED", "0")) or None)
    stop = threading.Event()
    claimed = threading.Event()
    # the gaps between cuts are drawn anew each time; after a try that
    # stored nothing (on a loaded machine a try's start, its snapshot and
    # first part can take longer than the gap) they grow, up to 8 times,
    # so that each try gets a fair chance to store a part; a try that
    # stored one brings them back
    grace = [1.0]

    def cutter():
        while not stop.is_set():
            if not claimed.is_set():
                try:
                    if ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_state")[0][0]:
                        claimed.set()
                except Exception:  # noqa: BLE001 - not made yet
                    pass
                stop.wait(0.005)
                continue
            stop.wait(rng.uniform(0.3, 2.0) * grace[0])
            link.cut()

    th = threading.Thread(target=cutter, daemon=True)
    th.start()
    tries, rc, err, rows_stored = 0, 1, "", 0
    try:
        while rc != 0:
            tries += 1
            check(tries <= 60, "the first sync did not finish in 60 tries:\n%s" % err)
            rc, out, err = ctx.run(link_args(ctx, link, path, slot, "pubr", "--once", "-v"),
                                   env=ENV, timeout=120)
            check(rc in (0, 1), "try %d exited %d:\n%s" % (tries, rc, err))
            before = rows_stored
            rows_stored, key = copy_progress(ctx, path, table)
            rows_stored = rows_stored or 0
            grace[0] = 1.0 if rows_stored > before else min(grace[0] * 2, 8.0)
            if rc == 1 and key is not None:
                changes(ctx, table, key, tries)
            ctx.wait_slot_inactive(slot)
    finally:
        stop.set()
        th.join()
    assert_equal(ctx, path, table)
    total = ctx.mirror_query(path, "SELECT copy_rows FROM pgmirror_tables")[0][0]
    harness.log("random cuts: %d tries, %d rows stored in all, %d cuts" % (tries, total, len(link.cut_times)))
    check(total < ROWS * 1.1, "the tries stored %d rows in all for a table of %d: a try "
          "started over" % (total, ROWS))
    ctx.once(path, slot, "pubr")
    assert_equal(ctx, path, table)


def test(ctx):
    with linkproxy.LinkProxy(rate=RATE, down_only=True) as link:
        harness.run_parts(ctx, {"cron": cron, "service": service, "random": random_cuts},
                          link)


harness.main(test)

"""The first copy over a slow link: the small tables first, a keyless one
that fits in one part (4 MB) among them by its size, a bigger keyless one
(nothing to resume by; its values stored apart, TOAST, count) after every
table with a key, and a copy in parts
that is killed (kill -9) or stopped (SIGTERM) in the middle of a part keeps
the parts it committed; the next run goes on from there, exactly once.
Before, every keyless table came last: a 300-row one waited behind a big
keyed table, which a weak link may take many tries to bring.
"""

import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check  # noqa: E402
from copyparts import link_args  # noqa: E402

PART_ROWS = 1000
ENV = {"PGMIRROR_TEST_PART_ROWS": str(PART_ROWS)}
RATE = 1000000


def stored(ctx, path, table):
    try:
        rows = ctx.mirror_query(path, "SELECT copy_rows, copy_state IS NOT NULL FROM "
                                "pgmirror_tables WHERE table_name = ?", (table,))
    except Exception:  # noqa: BLE001 - the file is being made
        return 0
    return rows[0][0] if rows and rows[0][1] else 0


def wait_stored(ctx, path, table, more_than, proc):
    """Until the copy of table stored more_than rows (it stands still for
    120 s at most)."""
    def step():
        n = stored(ctx, path, table)
        if n > more_than:
            return n, n
        check(proc.poll() is None, "pgmirror ended before %d rows of %s were stored:\n%s"
              % (more_than, table, proc.stderr()))
        return None, n

    return harness.wait_moving("the copy of %s to pass %d rows" % (table, more_than), step,
                               quiet=120, interval=0.002, detail=lambda: "\n" + proc.stderr())


def order(ctx, link):
    """Smallest first, a small keyless table among them, a big keyless one
    last; a cut in the big table keeps the small ones, and the next run
    brings the rest."""
    # o_keyless_big: 5 MB on the source (more than a part), smaller than
    # o_big (7 MB), but two rows to send: its place is what is checked;
    # o_keyless_toast: one page, but 7 MB of values stored apart (TOAST),
    # one row of them left to send
    ctx.sql("""
        CREATE TABLE o_big (id int PRIMARY KEY, v text);
        INSERT INTO o_big SELECT g, repeat('b', 40) FROM generate_series(1, 100000) g;
        CREATE TABLE o_mid (id uuid PRIMARY KEY, v text);
        INSERT INTO o_mid SELECT md5(g::text)::uuid, 'm' || g FROM generate_series(1, 3000) g;
        CREATE TABLE o_small (k text PRIMARY KEY, v int);
        INSERT INTO o_small SELECT 'k' || g, g FROM generate_series(1, 50) g;
        CREATE TABLE o_keyless (n int, v text);
        ALTER TABLE o_keyless REPLICA IDENTITY FULL;
        INSERT INTO o_keyless SELECT g % 7, 'x' FROM generate_series(1, 300) g;
        CREATE TABLE o_keyless_big (n int, v text) WITH (autovacuum_enabled = off);
        ALTER TABLE o_keyless_big REPLICA IDENTITY FULL;
        INSERT INTO o_keyless_big SELECT g, repeat('k', 60) FROM generate_series(1, 50000) g;
        DELETE FROM o_keyless_big WHERE n BETWEEN 2 AND 49999;
        CREATE TABLE o_keyless_toast (n int, b bytea) WITH (autovacuum_enabled = off,
            toast.autovacuum_enabled = off);
        ALTER TABLE o_keyless_toast REPLICA IDENTITY FULL;
        ALTER TABLE o_keyless_toast ALTER b SET STORAGE EXTERNAL;
        INSERT INTO o_keyless_toast SELECT g, (SELECT decode(string_agg(md5(g || '.' || h),
            ''), 'hex') FROM generate_series(1, 40000) h) FROM generate_series(1, 12) g;
        DELETE FROM o_keyless_toast WHERE n < 12;
        CREATE PUBLICATION pubo FOR TABLE o_big, o_keyless, o_keyless_big, o_keyless_toast,
            o_mid, o_small;
    """)
    tables = ("o_big", "o_mid", "o_small", "o_keyless", "o_keyless_big", "o_keyless_toast")
    for t in tables:
        ctx.sql("VACUUM ANALYZE %s" % t)
    sizes = dict(ctx.sql("SELECT relname::text, pg_relation_size(oid) + "
                         "coalesce(pg_relation_size(nullif(reltoastrelid, 0)), 0) "
                         "FROM pg_class WHERE relname IN %s", tables))
    check(sizes["o_small"] < sizes["o_keyless"] < sizes["o_mid"] < 4 << 20
          < sizes["o_keyless_big"] < sizes["o_big"] < sizes["o_keyless_toast"],
          "the tables' sizes on the source are not in the order the test needs: %r" % sizes)
    path, slot = ctx.path("order.db"), ctx.slot("o")
    proc = ctx.start(link_args(ctx, link, path, slot, "pubo", "--once", "-v"), tag="order1",
                     env=ENV)
    wait_stored(ctx, path, "o_big", 3 * PART_ROWS, proc)
    link.cut()
    rc = proc.popen.wait(60 * harness.SLOW)
    err = proc.stderr()
    check(rc == 1, "the run cut in its copy exited %d, expected 1:\n%s" % (rc, err))
    copied = re.findall(r'copied \d+ rows? of "public\.(\w+)"', err)
    check(copied == ["o_small", "o_keyless", "o_mid"], "before the big table, the run "
          "copied %s:\n%s" % (copied, err))
    have = sorted(r[0] for r in ctx.mirror_query(path, "SELECT table_name FROM pgmirror_tables"))
    check(have == ["o_big", "o_keyless", "o_mid", "o_small"], "after the cut the mirror has %s"
          % have)
    ctx.assert_mirror_equals_source(path, "o_small", "o_keyless", "o_mid")
    ctx.sql("INSERT INTO o_keyless VALUES (100, 'meanwhile'); "
            "INSERT INTO o_keyless_big VALUES (100, 'meanwhile'); "
            "UPDATE o_small SET v = -v WHERE k = 'k7'")
    ctx.wait_slot_inactive(slot)
    rc, out, err = ctx.run(link_args(ctx, link, path, slot, "pubo", "--once", "-v"), env=ENV,
                           timeout=120)
    check(rc == 0, "the second run exited %d:\n%s" % (rc, err))
    copied = re.findall(r'copied \d+ rows? of "public\.(\w+)"', err)
    check(copied == ["o_big", "o_keyless_big", "o_keyless_toast"], "the second run copied "
          "%s:\n%s" % (copied, err))
    ctx.assert_mirror_equals_source(path, *tables)


def interrupted(ctx, link, sig):
    """kill -9 or SIGTERM in the middle of a part: the parts committed stay,
    the next run goes on after them."""
    name = "k_%s" % ("kill" if sig == signal.SIGKILL else "term")
    ctx.sql("CREATE TABLE %s (a int, b text, v text, PRIMARY KEY (a, b)); "
            "INSERT INTO %s SELECT g / 10, 'b' || (g %% 10), repeat('v', 30) "
            "FROM generate_series(1, 60000) g; "
            "CREATE PUBLICATION pub_%s FOR TABLE %s" % (name, name, name, name))
    path, slot = ctx.path(name + ".db"), ctx.slot(name[2:])
    proc = ctx.start(link_args(ctx, link, path, slot, "pub_" + name, "--once"), tag=name,
                     env=ENV)
    before = wait_stored(ctx, path, name, 3 * PART_ROWS, proc)
    os.kill(proc.pid, sig)
    rc = proc.popen.wait(30 * harness.SLOW)
    err = proc.stderr()
    if sig == signal.SIGKILL:
        check(rc == -signal.SIGKILL, "pgmirror exited %d, not killed:\n%s" % (rc, err))
    else:
        check(rc == 0, "pgmirror exited %d after SIGTERM, expected 0:\n%s" % (rc, err))
        check("stopped by a signal" in err, "SIGTERM: no word of the stop:\n%s" % err)
    kept = stored(ctx, path, name)
    n = ctx.mirror_query(path, "SELECT count(*) FROM %s" % name)[0][0]
    check(kept >= before and n == kept, "after the signal the mirror holds %d rows, its copy "
          "says %d, %d were stored before" % (n, kept, before))
    harness.log("%s: %d rows kept" % (name, kept))
    # changes inside the part copied and beyond it
    last = ctx.mirror_query(path, "SELECT max(a) FROM %s" % name)[0][0]
    ctx.sql("UPDATE {t} SET v = 'in' WHERE a = {i}; DELETE FROM {t} WHERE a = {i} + 1; "
            "UPDATE {t} SET a = a + 100000 WHERE a = {i} + 2; "
            "UPDATE {t} SET a = {i} - 1, b = b || 'x' WHERE a = {i} + 4000; "
            "INSERT INTO {t} VALUES ({i}, 'new', 'n'), ({j}, 'new', 'n')"
            .format(t=name, i=last // 2, j=last + 100))
    ctx.wait_slot_inactive(slot)
    rc, out, err = ctx.run(link_args(ctx, link, path, slot, "pub_" + name, "--once", "-v"),
                           env=ENV, timeout=120)
    check(rc == 0, "the next run exited %d:\n%s" % (rc, err))
    check(re.search(r'copy of "public\.%s" goes on after the %d rows stored' % (name, kept), err),
          "the next run did not go on after the %d rows kept:\n%s" % (kept, err))
    ctx.assert_mirror_equals_source(path, name)


def test(ctx):
    with linkproxy.LinkProxy(rate=RATE, down_only=True) as link:
        harness.run_parts(ctx, {
            "order": order,
            "kill9": lambda c, lk: interrupted(c, lk, signal.SIGKILL),
            "sigterm": lambda c, lk: interrupted(c, lk, signal.SIGTERM),
        }, link)


harness.main(test)

"""What is left of a copy: --status lists every table still to copy, not
only the one copying, and --verify says which are still copying. A
first sync of three tables (a small one, then two big ones, smallest
first) over a slow link is cut while the first big table copies: --status
(text, --json, --prometheus) shows the small table synced, the first big
one copying with its rows and the source's estimate, and the second big
one, not begun, as pending with the source's estimate. The next run
finishes: nothing is pending any more. The same for two tables that join
the publication and are cut in their sync. A --verify that goes on with a
cut first sync and is cut in turn compares nothing: it exits 1 (an error,
not a difference, 4), names the table still copying with its rows and the
source's estimate and the table still to copy, and prints no line on
stdout; once the copy is done, --verify finds every table ok."""

import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check  # noqa: E402
from copyparts import link_args  # noqa: E402

ENV = {"PGMIRROR_TEST_PART_ROWS": "2000"}
ROWS = 60000


def make(ctx, *names):
    for i, name in enumerate(names):
        rows = ROWS + 10000 * i  # the second is bigger: copied last
        ctx.sql("CREATE TABLE %s (id int8 PRIMARY KEY, payload text);"
                "INSERT INTO %s SELECT g, repeat('p', 40) || g FROM generate_series(1, %d) g;"
                "ANALYZE %s" % (name, name, rows, name))


def stored(ctx, path, table):
    try:
        got = ctx.mirror_query(path, "SELECT copy_rows FROM pgmirror_tables WHERE "
                               "table_name = ?", (table,))
    except Exception:  # noqa: BLE001 - the file is being made
        got = []
    return got[0][0] if got else 0


def cut_in_first(ctx, link, path, slot, pub, first, *extra):
    """Runs --once (or extra) through link and cuts it once first has
    stored more rows; returns its stdout and stderr."""
    before = stored(ctx, path, first)
    proc = ctx.start(link_args(ctx, link, path, slot, pub, *(extra or ("--once",)), "-v"),
                     env=ENV)
    deadline = time.time() + 60 * harness.SLOW
    while True:
        if stored(ctx, path, first) > before:
            break
        check(proc.poll() is None and time.time() < deadline,
              "the copy of %s stored nothing before the run ended:\n%s" % (first, proc.stderr()))
        time.sleep(0.01)
    link.cut()
    rc = proc.popen.wait(60 * harness.SLOW)
    check(rc == 1, "the cut run exited %d, expected 1:\n%s" % (rc, proc.stderr()))
    ctx.wait_slot_inactive(slot)
    return proc.stdout(), proc.stderr()


def check_pending(ctx, path, copying, pending):
    """--status in its three forms: copying shows its progress, pending
    (not begun) shows state pending with the source's estimate."""
    est = ctx.sql1("SELECT reltuples::int8 FROM pg_class WHERE relname = %s", pending)
    rc, out, err = ctx.run(["--status", path])
    check(rc == 0, "--status exited %d: %s" % (rc, err))
    check(re.search(r"^tables_pending: 1$", out, re.M) and
          re.search(r"^pending: %d %s$" % (est, pending), out, re.M) and
          re.search(r"^copying: \d+ \d+ %s$" % copying, out, re.M),
          "--status does not show %s copying and %s pending (estimate %d):\n%s"
          % (copying, pending, est, out))
    rc, out, err = ctx.run(["--status", "--json", path])
    check(rc == 0, "--status --json exited %d: %s" % (rc, err))
    tabs = {t["name"]: t for t in json.loads(out)["tables"]}
    check(tabs.get(copying, {}).get("state") == "copying",
          "--status --json: %s is %r" % (copying, tabs.get(copying)))
    p = tabs.get(pending)
    check(p is not None and p["state"] == "pending" and p["rows"] is None and
          p["source"] == "public." + pending and
          p["copy"] == {"rows": 0, "estimated_rows": est},
          "--status --json shows pending table %s as %r" % (pending, p))
    rc, out, err = ctx.run(["--status", "--prometheus", path])
    check(re.search(r'^pgmirror_tables\{[^}]*state="pending"[^}]*\} 1$', out, re.M),
          "--status --prometheus does not count the pending table:\n%s" % out)


def check_none_pending(ctx, path):
    rc, out, err = ctx.run(["--status", path])
    check(re.search(r"^tables_pending: 0$", out, re.M) and "pending:" not in
          out.replace("tables_pending:", ""),
          "a finished sync leaves tables pending:\n%s" % out)
    rc, out, err = ctx.run(["--status", "--json", path])
    states = [t["state"] for t in json.loads(out)["tables"]]
    check(states and all(s == "synced" for s in states), "states after the sync: %r" % states)


def first_sync(ctx, link):
    ctx.sql("CREATE TABLE small (id int PRIMARY KEY); INSERT INTO small VALUES (1)")
    make(ctx, "big1", "big2")
    ctx.sql("CREATE PUBLICATION pubf FOR TABLE small, big1, big2")
    path, slot = ctx.path("first.db"), ctx.slot("f")
    cut_in_first(ctx, link, path, slot, "pubf", "big1")
    check_pending(ctx, path, "big1", "big2")
    # --verify goes on with the copy, and is cut in turn
    out, err = cut_in_first(ctx, link, path, slot, "pubf", "big1", "--verify")
    rows = stored(ctx, path, "big1")
    est = ctx.sql1("SELECT reltuples::int8 FROM pg_class WHERE relname = 'big1'")
    check(out == "" and re.search(r'nothing was compared: mirror table "big1" is still copying '
                                  r'\(%d of about %d rows stored\)' % (rows, est), err) and
          'nothing was compared: source table "public.big2" is still to copy' in err,
          "a cut --verify does not say which tables are still copying (%d of %d rows of "
          "big1 stored):\nstdout:\n%s\nstderr:\n%s" % (rows, est, out, err))
    check_pending(ctx, path, "big1", "big2")
    rc, out, err = ctx.run(link_args(ctx, link, path, slot, "pubf", "--once"), env=ENV,
                           timeout=120)
    check(rc == 0, "the next run exited %d:\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path, "small", "big1", "big2")
    check_none_pending(ctx, path)
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pubf", "--verify"))
    check(rc == 0 and out == "big1: ok\nbig2: ok\nsmall: ok\n",
          "--verify after the copy: exit %d\n%s%s" % (rc, out, err))


def joining(ctx, link):
    ctx.sql("CREATE TABLE base (id int PRIMARY KEY); INSERT INTO base VALUES (1);"
            "CREATE PUBLICATION pubj FOR TABLE base")
    path, slot = ctx.path("join.db"), ctx.slot("j")
    ctx.once(path, slot, "pubj")
    make(ctx, "join1", "join2")
    ctx.sql("ALTER PUBLICATION pubj ADD TABLE join1, join2")
    cut_in_first(ctx, link, path, slot, "pubj", "join1")
    check_pending(ctx, path, "join1", "join2")
    ctx.once(path, slot, "pubj")
    ctx.assert_mirror_equals_source(path, "base", "join1", "join2")
    check_none_pending(ctx, path)


def test(ctx):
    with linkproxy.LinkProxy(rate=1000000, down_only=True) as link:
        harness.run_parts(ctx, {"first": first_sync, "joining": joining}, link)


harness.main(test)

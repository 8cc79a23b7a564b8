"""A heal killed between its renames. A heal sets the damaged file aside
(its -wal, then the file, as MIRROR.db.damaged) and then renames the new
mirror MIRROR.db.rebuild to MIRROR.db (then its -wal). kill -9 in between
(the fault shim kill_at_rename) leaves no MIRROR.db at all: the next cron
run, with -S and -P as the cron line gives them or without them, must
put the rebuilt mirror in place (a warning says so), exit 0 and go on:
the mirror equal to the source, the user's objects there, the rebuild
recorded, nothing left under .rebuild. It must not take the missing file
for a new mirror (whose first run would find the slot taken and exit 1
on every run, or ask for -P). A kill after the new file's rename, before
its -wal's, leaves a .rebuild-wal that the next run removes.

A heal of damage that a statement met (the daily check not due) killed
once it had made the slot again (at its COPY, kill_at_query): the slot is
now ahead of the damaged file, which reads as sound until a change
touches the damage. The next run must heal again at once (the heal's new
file left beside it says so), not refuse the file as a restored old copy
whose slot has moved past it."""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

USER_SQL = """
CREATE TABLE app_log (n INTEGER PRIMARY KEY, id INTEGER);
INSERT INTO app_log (id) VALUES (-1);
CREATE VIEW app_view AS SELECT id FROM orders WHERE id < 10;
"""


def damaged_mirror(ctx, name):
    """A mirror of orders with the user's objects and a smashed leaf page
    that the next run's change reads; its daily check not due."""
    path, slot = ctx.path(name + ".db"), ctx.slot(name)
    ctx.once(path, slot, "pub")
    con = sqlite3.connect(path)
    con.executescript(USER_SQL)
    con.execute("UPDATE pgmirror_state SET last_check_time = datetime('now'), "
                "last_check_result = 'ok'")
    ps = con.execute("PRAGMA page_size").fetchone()[0]
    leaf = con.execute("SELECT pageno FROM dbstat WHERE name = 'orders' AND "
                       "pagetype = 'leaf' ORDER BY pageno").fetchall()[3][0]
    con.commit()
    con.close()
    with open(path, "r+b") as f:
        f.seek((leaf - 1) * ps)
        f.write(b"\xff" * ps)
    ctx.sql("UPDATE orders SET v = v || 'x' WHERE id % 10 = 3")
    return path, slot


def killed_heal(ctx, path, slot, tail, after=False):
    env = {"LD_PRELOAD": harness.fault_shim("kill_at_rename"),
           "PGMIRROR_KILL_RENAME": os.path.basename(path) + tail,
           "ASAN_OPTIONS": "verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", "")}
    if after:
        env["PGMIRROR_KILL_AFTER"] = "1"
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"), env=env, timeout=120)
    check(rc == -9 and "kill_at_rename: SIGKILL" in err,
          "the heal was not killed at the rename of %s: exit %d\n%s" % (tail, rc, err))
    ctx.wait_slot_inactive(slot)


def leftovers(path):
    d, base = os.path.split(path)
    return sorted(n for n in os.listdir(d) if n.startswith(base + ".rebuild"))


def healed(ctx, path, slot, args, what):
    rc, out, run_err = ctx.run(args, timeout=120)
    harness.log("%s: next run exit %d\n%s" % (what, rc, run_err))
    err = run_err
    check(rc == 0, "%s: the next run exited %d, expected 0\n%s" % (what, rc, err))
    check(os.path.exists(path + ".damaged"), "%s: no .damaged" % what)
    check(not leftovers(path), "%s: left behind: %s" % (what, leftovers(path)))
    ctx.assert_mirror_equals_source(path, "orders")
    st = ctx.mirror_state(path)
    check((st["last_rebuild_reason"] or "").startswith("mirror damaged"),
          "%s: last_rebuild_reason is %r" % (what, st["last_rebuild_reason"]))
    check(st["last_error"] is None, "%s: last_error is %r" % (what, st["last_error"]))
    got = ctx.mirror_query(path, "SELECT name FROM sqlite_master WHERE name LIKE 'app\\_%' "
                                 "ESCAPE '\\' ORDER BY name")
    check(got == [("app_log",), ("app_view",)], "%s: the user's objects are %r" % (what, got))
    rc, out, err = ctx.run(["--check", path])
    check(rc == 0, "%s: --check exited %d: %s%s" % (what, rc, out, err))
    ctx.check_slot_not_ahead(path, slot)
    return run_err


def test(ctx):
    ctx.sql("""
        CREATE TABLE orders (id int PRIMARY KEY, v text);
        INSERT INTO orders SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
        CREATE PUBLICATION pub FOR TABLE orders;
    """)

    # killed before the new file takes the name: no MIRROR.db at all
    for name, with_settings in (("cron", True), ("bare", False)):
        path, slot = damaged_mirror(ctx, name)
        killed_heal(ctx, path, slot, ".rebuild")
        check(not os.path.exists(path) and os.path.exists(path + ".damaged") and
              os.path.exists(path + ".rebuild"),
              "%s: the kill did not land between the renames: %s" % (name, sorted(
                  os.listdir(ctx.tmpdir))))
        ctx.sql("INSERT INTO orders SELECT g, 'late' FROM generate_series(6001, 6010) g"
                if name == "cron" else "DELETE FROM orders WHERE id BETWEEN 6001 AND 6005")
        args = (ctx.mirror_args(path, slot, "pub", "--once") if with_settings
                else ["-d", ctx.dsn, "--once", path])
        err = healed(ctx, path, slot, args, name)
        check("before the new one took its name" in err,
              "%s: no warning that the heal was finished:\n%s" % (name, err))

    # killed after the new file took the name, before its -wal did
    path, slot = damaged_mirror(ctx, "wal")
    killed_heal(ctx, path, slot, ".rebuild", after=True)
    check(os.path.exists(path) and leftovers(path) == [os.path.basename(path) + ".rebuild-wal"],
          "wal: the kill did not land between the renames: %s" % sorted(os.listdir(ctx.tmpdir)))
    ctx.sql("UPDATE orders SET v = 'after' WHERE id < 100")
    healed(ctx, path, slot, ctx.mirror_args(path, slot, "pub", "--once"), "wal")

    # killed in the heal's copy, after the slot was made again
    path, slot = damaged_mirror(ctx, "copy")
    env = {"LD_PRELOAD": harness.fault_shim("kill_at_query"), "PGMIRROR_KILL_QUERY": ") TO STDOUT",
           "ASAN_OPTIONS": "verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", "")}
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"), env=env, timeout=120)
    check(rc == -9 and "SQLite reported" in err and "kill_at_query" in err,
          "copy: the heal was not killed at its COPY: exit %d\n%s" % (rc, err))
    ctx.wait_slot_inactive(slot)
    check(ctx.slot_final_lsn(slot) > ctx.mirror_lsn(path),
          "copy: the slot made again is not ahead of the damaged file: the case is not made")
    ctx.sql("INSERT INTO orders SELECT g, 'copy' FROM generate_series(7001, 7010) g")
    err = healed(ctx, path, slot, ctx.mirror_args(path, slot, "pub", "--once"), "copy")
    check("did not finish rebuilding" in err, "copy: no word of the heal that did not "
          "finish:\n%s" % err)


harness.main(test)

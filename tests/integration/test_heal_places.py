"""Damage in places that test_heal does not reach, each healed by the
next cron run (with its -S and -P) or reported by --check with exit 5:

- pgmirror_state's own page overwritten: the write that opening the file
  makes meets the damage, and its ROLLBACK must not hide it (the run
  exited 1 with "could not update mirror ... malformed" on every run);
- the file truncated, in a mirror whose catalog has
  grown past its first page (several tables, indexes, the user's
  objects), so that the page with the catalog entry of pgmirror_state is
  gone: the file must still be known as a mirror by pgmirror's
  application ID in its header (it was taken for someone else's file:
  --check exit 1 "not a pgmirror mirror", every run exit 1).

- the header's schema format number (bytes 44-47) changed: SQLite says
  "unsupported file format", a plain SQLITE_ERROR, which was not taken
  for damage (--check exit 1 "could not check", every run exit 1); it is
  a header that cannot be read, so the settings and the user's objects
  are read through a copy with a header made anew (no -S or -P needed).

- the header's page count (bytes 28-31) changed: "malformed", with the
  settings unreadable, so a run without -S and -P exited 2 and the user's
  objects were lost; the pages are sound, and are read through the same
  copy with a header made anew.

A new mirror has the application ID; one made before it gets it at its
next run."""

import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

APP_ID = 0x70674d72
USER_SQL = """
CREATE TABLE app_log (n INTEGER PRIMARY KEY, id INTEGER);
CREATE INDEX app_v ON orders (v);
CREATE VIEW app_view AS SELECT id FROM orders WHERE id < 10;
CREATE TRIGGER app_trg AFTER INSERT ON orders
  BEGIN INSERT INTO app_log (id) VALUES (new.id); END;
"""
TABLES = ["orders", "items", "notes"]


def mirror(ctx, name):
    path, slot = ctx.path(name + ".db"), ctx.slot(name)
    ctx.once(path, slot, "pub")
    con = sqlite3.connect(path)
    con.executescript(USER_SQL)
    # the daily check is not due: the damage is met by the run itself
    con.execute("UPDATE pgmirror_state SET last_check_time = datetime('now'), "
                "last_check_result = 'ok'")
    con.commit()
    con.close()
    return path, slot


def check_exit(ctx, path, want, what):
    rc, out, err = ctx.run(["--check", path])
    check(rc == want, "%s: --check exited %d, expected %d\n%s%s" % (what, rc, want, out, err))


def healed(ctx, path, slot, what, args=None):
    ctx.sql("UPDATE orders SET v = v || 'h' WHERE id % 50 = 7")
    rc, out, err = ctx.run(args or ctx.mirror_args(path, slot, "pub", "--once"), timeout=120)
    harness.log("%s: exit %d\n%s" % (what, rc, err))
    check(rc == 0, "%s: the run after the damage exited %d\n%s" % (what, rc, err))
    check("is damaged" in err and os.path.exists(path + ".damaged"),
          "%s: not healed:\n%s" % (what, err))
    ctx.assert_mirror_equals_source(path, *TABLES)
    check_exit(ctx, path, 0, what + ", after the heal")
    st = ctx.mirror_state(path)
    check((st["last_rebuild_reason"] or "").startswith("mirror damaged"),
          "%s: last_rebuild_reason is %r" % (what, st["last_rebuild_reason"]))
    ctx.check_slot_not_ahead(path, slot)


def test(ctx):
    ctx.sql("""
        CREATE TABLE orders (id int PRIMARY KEY, v text);
        CREATE INDEX orders_v ON orders (v);
        INSERT INTO orders SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
        CREATE TABLE items (id int PRIMARY KEY, order_id int, qty int);
        CREATE INDEX items_order ON items (order_id);
        INSERT INTO items SELECT g, g % 5000, g % 7 FROM generate_series(1, 5000) g;
        CREATE TABLE notes (id int PRIMARY KEY, body text);
        INSERT INTO notes SELECT g, repeat('n', 200) FROM generate_series(1, 500) g;
        CREATE PUBLICATION pub FOR TABLE orders, items, notes;
    """)

    # pgmirror_state's page overwritten
    path, slot = mirror(ctx, "state")
    con = sqlite3.connect(path)
    ps = con.execute("PRAGMA page_size").fetchone()[0]
    page = con.execute("SELECT pageno FROM dbstat WHERE name = 'pgmirror_state'").fetchone()[0]
    con.close()
    with open(path, "r+b") as f:
        f.seek((page - 1) * ps + 8)
        f.write(b"\xa5" * 40)
    check_exit(ctx, path, 5, "state page")
    healed(ctx, path, slot, "state page")

    # truncated just before the page with the catalog entry of pgmirror_state
    path, slot = mirror(ctx, "truncated")
    size = os.path.getsize(path)
    con = sqlite3.connect(path)
    ps = con.execute("PRAGMA page_size").fetchone()[0]
    app_id = con.execute("PRAGMA application_id").fetchone()[0]
    con.close()
    check(app_id == APP_ID, "a new mirror's application_id is %#x, not %#x" % (app_id, APP_ID))
    with open(path, "rb") as f:
        mark_at = f.read().find(b"tablepgmirror_statepgmirror_state")
    check(mark_at >= ps, "the catalog entry of pgmirror_state is on the first page "
          "(byte %d): the case is not made" % mark_at)
    os.truncate(path, (mark_at // ps) * ps)
    check(mark_at >= os.path.getsize(path) and os.path.getsize(path) < size,
          "the catalog entry of pgmirror_state (at byte %d) is still in the truncated file "
          "(%d bytes): the case is not made" % (mark_at, os.path.getsize(path)))
    check_exit(ctx, path, 5, "truncated")
    healed(ctx, path, slot, "truncated")

    # a header field changed: the schema format number, the page count;
    # healed without -S and -P (read from the pages), the user's objects kept
    for what, name, offset, data in (("schema format", "format", 44, b"\xa5\xa5\xa5\xa1"),
                                     ("page count", "pages", 28, b"\x7f\xa5\xa5\xa5")):
        path, slot = mirror(ctx, name)
        with open(path, "r+b") as f:
            f.seek(offset)
            f.write(data)
        check_exit(ctx, path, 5, what)
        healed(ctx, path, slot, what, ["-d", ctx.dsn, "--once", path])
        got = [r[0] for r in ctx.mirror_query(path, "SELECT name FROM sqlite_master WHERE name "
                                                    "LIKE 'app\\_%' ESCAPE '\\' ORDER BY 1")]
        check(got == ["app_log", "app_trg", "app_v", "app_view"],
              "%s: the user's objects are %s" % (what, got))

    # a mirror from before the application ID gets it at its next run
    path, slot = mirror(ctx, "older")
    con = sqlite3.connect(path)
    con.execute("PRAGMA application_id = 0")
    con.commit()
    con.close()
    ctx.once(path, slot, "pub")
    got = ctx.mirror_query(path, "PRAGMA application_id")[0][0]
    check(got == APP_ID, "an older mirror's application_id is %#x after a run" % got)


harness.main(test)

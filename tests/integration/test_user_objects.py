"""The user's own objects in the mirror file. An index, views and triggers
that the user adds to a mirror table, a trigger on a table of the user's
own that reads the mirror table, and that table itself, are kept through an
added column, a retyped column (refilled from the source), a dropped column,
a renamed table, a rebuild from a fresh copy after a lost slot and a
--resync. A view on
the dropped column no longer applies, nor one on a table that left the
publication when another took its name: each is dropped, with a warning
naming it. The user's triggers see every change pgmirror applies from the stream,
exactly once, and nothing of a rebuild, a refill or a fresh copy."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

USER_SQL = """
CREATE TABLE app_log (n INTEGER PRIMARY KEY, op TEXT, id INTEGER, qty INTEGER);
CREATE INDEX app_orders_qty ON orders (qty);
CREATE VIEW app_big AS SELECT id, qty FROM orders WHERE qty > 10;
CREATE VIEW app_notes AS SELECT id, note FROM orders;
CREATE TRIGGER app_ins AFTER INSERT ON orders
  BEGIN INSERT INTO app_log (op, id, qty) VALUES ('ins', new.id, new.qty); END;
CREATE TRIGGER app_upd AFTER UPDATE ON orders
  BEGIN INSERT INTO app_log (op, id, qty) VALUES ('upd', new.id, new.qty); END;
CREATE TRIGGER app_del AFTER DELETE ON orders
  BEGIN INSERT INTO app_log (op, id, qty) VALUES ('del', old.id, old.qty); END;
CREATE VIEW app_stock AS SELECT id, place FROM stock;
CREATE TABLE app_ask (id INTEGER);
CREATE TRIGGER app_ask_ins AFTER INSERT ON app_ask
  BEGIN INSERT INTO app_log (op, id, qty)
        SELECT 'ask', id, qty FROM orders WHERE id = new.id; END;
"""

KEPT = ["app_ask", "app_ask_ins", "app_big", "app_del", "app_ins", "app_log",
        "app_orders_qty", "app_upd"]


def user_objects(ctx, path):
    return ctx.mirror_query(
        path, "SELECT name, type, tbl_name FROM sqlite_schema "
              "WHERE name LIKE 'app\\_%' ESCAPE '\\' ORDER BY name")


def check_kept(ctx, path, table, extra=(), when=""):
    got = user_objects(ctx, path)
    names = [r[0] for r in got]
    want = sorted(KEPT + list(extra))
    check(names == want, "%s: the user's objects are %r, expected %r"
          % (when, names, want))
    on = {r[0]: r[2] for r in got}
    for name in ("app_orders_qty", "app_ins", "app_upd", "app_del"):
        check(on[name] == table, "%s: %s is on %r, not on %r"
              % (when, name, on[name], table))
    plan = ctx.mirror_query(
        path, "EXPLAIN QUERY PLAN SELECT id FROM \"%s\" WHERE qty = 3" % table)
    check(any("app_orders_qty" in r[-1] for r in plan),
          "%s: the user's index is not used: %r" % (when, plan))
    big = ctx.mirror_query(path, "SELECT id, qty FROM app_big ORDER BY id")
    src = [tuple(r) for r in ctx.sql(
        "SELECT id, qty FROM %s WHERE qty > 10 ORDER BY id" % table)]
    check(big == src, "%s: view app_big gives %r, the source %r"
          % (when, big, src))


def log_since(ctx, path, n):
    return ctx.mirror_query(
        path, "SELECT op, id, qty FROM app_log WHERE n > ? ORDER BY n", (n,))


def log_end(ctx, path):
    return ctx.mirror_query(path, "SELECT coalesce(max(n), 0) FROM app_log")[0][0]


def test(ctx):
    ctx.sql("""
        CREATE TABLE orders (id int PRIMARY KEY, qty int, note text);
        INSERT INTO orders SELECT g, g % 20, 'n' || g FROM generate_series(1, 200) g;
        CREATE TABLE stock (id int PRIMARY KEY, place text);
        INSERT INTO stock VALUES (1, 'shelf');
        CREATE PUBLICATION pub FOR TABLE orders, stock;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    con = ctx.mirror_connect(path)
    con.executescript(USER_SQL)
    con.close()
    check_kept(ctx, path, "orders", ["app_notes", "app_stock"], "at first")

    # Changes from the stream fire the user's triggers, once each.
    ctx.sql("INSERT INTO orders VALUES (201, 15, 'x'); "
            "UPDATE orders SET qty = 16 WHERE id = 201; DELETE FROM orders WHERE id = 1")
    ctx.once(path, slot, "pub")
    got = log_since(ctx, path, 0)
    check(got == [("ins", 201, 15), ("upd", 201, 16), ("del", 1, 1)],
          "the triggers saw %r" % got)

    # An added column rebuilds the table.
    n = log_end(ctx, path)
    ctx.sql("ALTER TABLE orders ADD COLUMN extra int DEFAULT 7; "
            "INSERT INTO orders VALUES (202, 12, 'y', 8)")
    rc, out, err = ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "orders")
    check_kept(ctx, path, "orders", ["app_notes", "app_stock"], "after an added column")
    got = log_since(ctx, path, n)
    check(got == [("ins", 202, 12)], "after an added column the triggers saw %r"
          % got)
    check("app_" not in err, "a warning about the user's objects:\n%s" % err)

    # A retyped column: the table is rebuilt and the column refilled.
    n = log_end(ctx, path)
    ctx.sql("ALTER TABLE orders ALTER COLUMN qty TYPE bigint; "
            "UPDATE orders SET qty = 30 WHERE id = 202")
    rc, out, err = ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "orders")
    check_kept(ctx, path, "orders", ["app_notes", "app_stock"], "after a retype")
    got = log_since(ctx, path, n)
    check(got == [("upd", 202, 30)], "after a retype the triggers saw %r" % got)

    # A renamed column: the view on it follows.
    n = log_end(ctx, path)
    ctx.sql("ALTER TABLE orders RENAME COLUMN note TO remark; "
            "UPDATE orders SET remark = 'z' WHERE id = 202")
    rc, out, err = ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "orders")
    check_kept(ctx, path, "orders", ["app_notes", "app_stock"], "after a renamed column")
    notes = ctx.mirror_query(path, "SELECT * FROM app_notes ORDER BY id")
    src = [tuple(r) for r in ctx.sql("SELECT id, remark FROM orders ORDER BY id")]
    check(notes == src, "view app_notes on the renamed column gives %r..., the "
          "source %r..." % (notes[:3], src[:3]))
    check("app_" not in err, "a warning about the user's objects:\n%s" % err)
    got = log_since(ctx, path, n)
    check(got == [("upd", 202, 30)], "after a renamed column the triggers saw %r"
          % got)

    # A dropped column: the view on it no longer applies.
    n = log_end(ctx, path)
    ctx.sql("ALTER TABLE orders DROP COLUMN remark; DELETE FROM orders WHERE id = 2")
    rc, out, err = ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "orders")
    check_kept(ctx, path, "orders", ["app_stock"], "after a dropped column")
    check("app_notes" in err and "no such column: remark" in err and "WARNING" in err.upper(),
          "no warning naming the view dropped with its column:\n%s" % err)
    check("app_big" not in err and "app_ins" not in err,
          "a warning about objects that still apply:\n%s" % err)
    got = log_since(ctx, path, n)
    check(got == [("del", 2, 2)], "after a dropped column the triggers saw %r" % got)

    # A renamed table: its index and triggers, and the views and the
    # trigger that name it, follow.
    n = log_end(ctx, path)
    ctx.sql("ALTER TABLE orders RENAME TO purchases; "
            "UPDATE purchases SET qty = 31 WHERE id = 202")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "purchases")
    check_kept(ctx, path, "purchases", ["app_stock"], "after a rename")
    got = log_since(ctx, path, n)
    check(got == [("upd", 202, 31)], "after a rename the triggers saw %r" % got)

    # The slot is lost: a fresh copy in one transaction, the user's objects
    # kept, and none of the copied rows seen by the triggers.
    n = log_end(ctx, path)
    ctx.admin.cursor().execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    ctx.sql("INSERT INTO purchases VALUES (203, 40, 1); DELETE FROM purchases WHERE id = 3")
    rc, out, err = ctx.once(path, slot, "pub")
    check("rebuilding" in err, "no rebuild:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "purchases")
    check_kept(ctx, path, "purchases", ["app_stock"], "after a fresh copy")
    got = log_since(ctx, path, n)
    check(got == [], "the triggers saw the fresh copy: %d rows, first %r"
          % (len(got), got[:3]))
    check(log_end(ctx, path) == n, "the user's table lost rows")

    # And the triggers still work after it.
    ctx.sql("INSERT INTO purchases VALUES (204, 41, 1)")
    ctx.once(path, slot, "pub")
    con = ctx.mirror_connect(path)
    con.execute("INSERT INTO app_ask VALUES (204)")
    con.commit()
    con.close()
    got = log_since(ctx, path, n)
    check(got == [("ins", 204, 41), ("ask", 204, 41)],
          "after the fresh copy the triggers saw %r" % got)

    # A table leaves the publication and another one takes its name: the
    # view on the one that left goes with it (a view naming a table that is
    # not there would make SQLite refuse the rename).
    n = log_end(ctx, path)
    ctx.sql("ALTER PUBLICATION pub DROP TABLE stock; ALTER TABLE stock RENAME TO stock_old; "
            "ALTER TABLE purchases RENAME TO stock; UPDATE stock SET qty = 42 WHERE id = 204")
    rc, out, err = ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "stock")
    check_kept(ctx, path, "stock", [], "after a table took the name of one that left")
    check("app_stock" in err and "no such table: main.stock" in err,
          "no warning naming the view dropped with its table:\n%s" % err)
    got = log_since(ctx, path, n)
    check(got == [("upd", 204, 42)], "after the rename the triggers saw %r" % got)

    # --resync copies the table again: the user's objects are kept, and
    # its triggers see nothing of the copy.
    n = log_end(ctx, path)
    ctx.sql("UPDATE stock SET qty = 43 WHERE id = 204")
    rc, out, err = ctx.once(path, slot, "pub", "--resync=stock")
    check("synced again" in err, "no resync:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "stock")
    check_kept(ctx, path, "stock", [], "after --resync")
    check("app_" not in err, "a warning about the user's objects:\n%s" % err)
    got = log_since(ctx, path, n)
    check(got in ([], [("upd", 204, 43)]), "the triggers saw the resync's copy: %d rows, "
          "first %r" % (len(got), got[:3]))
    ctx.sql("INSERT INTO stock VALUES (205, 44, 1)")
    ctx.once(path, slot, "pub")
    got = log_since(ctx, path, n)
    check(got[-1:] == [("ins", 205, 44)], "after --resync the triggers saw %r" % got)


harness.main(test)

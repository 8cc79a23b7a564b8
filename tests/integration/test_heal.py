"""A damaged mirror heals itself. Damage made with dd (as a failing card
does) to a table's leaf page, an index page, the -wal file and the header,
and an EIO from a fault shim, is found by a run that reads the page, by the
daily integrity check (--once, and a service in the background) and by
--check (exit 5; 0 on a sound file); the run sets the file aside as
MIRROR.db.damaged (with its -wal), rebuilds the mirror from a fresh copy in
the same run and exits 0: nothing lost or doubled, the user's table (with
its rows), index, view and trigger back (after a damaged header too: read
from a copy with a header made anew, with the mirror's settings, so that no
-S or -P is needed), the check and the rebuild shown by --status, and a
service goes on. A first
run that cannot read a published table fails before the slot is made,
naming the table and the GRANT, and leaves neither slot nor file."""

import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

USER_SQL = """
CREATE TABLE app_log (n INTEGER PRIMARY KEY, id INTEGER, qty INTEGER);
INSERT INTO app_log (id, qty) VALUES (-1, -1);
CREATE INDEX app_qty ON orders (qty);
CREATE VIEW app_big AS SELECT id, qty FROM orders WHERE qty > 10;
CREATE TRIGGER app_ins AFTER INSERT ON orders
  BEGIN INSERT INTO app_log (id, qty) VALUES (new.id, new.qty); END;
"""
USER_OBJECTS = [("app_big", "view"), ("app_ins", "trigger"), ("app_log", "table"),
                ("app_qty", "index")]


def mirror(ctx, name, check_age="0 seconds"):
    """A mirror of orders with the user's objects; its last check
    check_age old ('0 seconds': the daily check is not due)."""
    path, slot = ctx.path(name + ".db"), ctx.slot(name)
    ctx.once(path, slot, "pub")
    con = sqlite3.connect(path)
    con.executescript(USER_SQL)
    con.execute("UPDATE pgmirror_state SET last_check_time = datetime('now', '-' || ?)",
                (check_age,))
    con.commit()
    con.close()
    os.chmod(path, 0o640)  # for readers of the group: the new file keeps it
    return path, slot


def pages(ctx, path, name, kind="leaf"):
    return [r[0] for r in ctx.mirror_query(
        path, "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ? ORDER BY pageno",
        (name, kind))]


def page_size(ctx, path):
    return ctx.mirror_query(path, "PRAGMA page_size")[0][0]


def smash(path, offset, length):
    """dd conv=notrunc: length bytes of 0xff at offset."""
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(b"\xff" * length)


def check_exit(ctx, path, want):
    rc, out, err = ctx.run(["--check", path])
    check(rc == want, "--check exited %d, expected %d\nstdout:\n%s\nstderr:\n%s"
          % (rc, want, out, err))
    return out, err


def healed(ctx, path, slot, err, what):
    """After a run that healed: the file set aside, the mirror equal to the
    source, the user's objects back and working, the rebuild recorded."""
    harness.log("%s: %s" % (what, err.strip()))
    check("is damaged" in err and "rebuilt from a fresh copy" in err,
          "%s: no message about the damage and the rebuild:\n%s" % (what, err))
    check(os.path.exists(path + ".damaged"), "%s: no %s.damaged" % (what, path))
    left = sorted(n for n in os.listdir(os.path.dirname(path))
                  if n.startswith(os.path.basename(path) + ".rebuild"))
    check(not left, "%s: the rebuild left %s behind" % (what, left))
    mode = os.stat(path).st_mode & 0o777
    check(mode == 0o640, "%s: the new file's mode is %o, not the old one's 640" % (what, mode))
    ctx.assert_mirror_equals_source(path, "orders")
    st = ctx.mirror_state(path)
    check((st["last_rebuild_reason"] or "").startswith("mirror damaged"),
          "%s: last_rebuild_reason is %r" % (what, st["last_rebuild_reason"]))
    check(st["last_rebuild_time"], "%s: no last_rebuild_time" % what)
    check_exit(ctx, path, 0)
    # plain --status shows the check and the rebuild
    rc, out, err = ctx.run(["--status", path])
    shown = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    check(rc == 0 and shown.get("last_check_result") == "ok" and
          shown.get("last_check_time") and shown.get("last_rebuild_time") and
          shown.get("last_rebuild_reason", "").startswith("mirror damaged"),
          "%s: --status does not show the check and the rebuild:\n%s%s" % (what, out, err))
    got = ctx.mirror_query(path, "SELECT name, type FROM sqlite_master "
                                 "WHERE name LIKE 'app\\_%' ESCAPE '\\' ORDER BY name")
    check(got == USER_OBJECTS, "%s: the user's objects are %r" % (what, got))
    log = ctx.mirror_query(path, "SELECT id, qty FROM app_log ORDER BY n")
    check(log[:1] == [(-1, -1)], "%s: the user's table lost its rows: %r" % (what, log))
    new_id = ctx.sql1("SELECT max(id) + 1 FROM orders")
    ctx.sql("INSERT INTO orders VALUES (%d, 77, 'after')" % new_id)
    ctx.once(path, slot, "pub")
    check(ctx.mirror_query(path, "SELECT id, qty FROM app_log WHERE id = ?", (new_id,))
          == [(new_id, 77)], "%s: the user's trigger did not fire after the heal" % what)
    check(ctx.mirror_query(path, "SELECT count(*) FROM app_big WHERE id = ?", (new_id,))
          == [(1,)], "%s: the user's view does not work after the heal" % what)


def test(ctx):
    ctx.sql("""
        CREATE TABLE orders (id int PRIMARY KEY, qty int, note text);
        CREATE INDEX orders_qty ON orders (qty);
        INSERT INTO orders SELECT g, g % 20, repeat('n', 60) || g
          FROM generate_series(1, 3000) g;
        CREATE PUBLICATION pub FOR TABLE orders;
    """)
    ctx.create_marker("pub")

    # --check on a sound mirror: 0, "ok", recorded
    path, slot = mirror(ctx, "leaf")
    out, err = check_exit(ctx, path, 0)
    check(out.strip() == "ok", "--check printed %r" % out)
    check(ctx.mirror_state(path)["last_check_result"] == "ok", "--check did not record")

    # --check on what is not a mirror: exit 1, the file left as it was
    empty = ctx.path("empty.db")
    open(empty, "wb").close()
    other = ctx.path("other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    before = open(other, "rb").read()
    for p in (empty, other):
        out, err = check_exit(ctx, p, 1)
        check("not a pgmirror mirror" in err, "--check on %s: %s" % (p, err))
        check(not os.path.exists(p + "-wal"), "--check made %s-wal" % p)
    check(os.path.getsize(empty) == 0, "--check wrote into an empty file")
    check(open(other, "rb").read() == before, "--check changed another database")
    out, err = check_exit(ctx, ctx.path("missing.db"), 1)
    check("No such file" in err, "--check on a missing file: %s" % err)

    # a table's leaf page: --check says 5; a run whose change reads it heals
    leaf = pages(ctx, path, "orders")[5]
    smash(path, (leaf - 1) * page_size(ctx, path), page_size(ctx, path))
    out, err = check_exit(ctx, path, 5)
    check("damaged" in err, "--check's message: %s" % err)
    ctx.sql("UPDATE orders SET qty = qty + 1 WHERE id % 7 = 0")
    rc, out, err = ctx.once(path, slot, "pub")
    healed(ctx, path, slot, err, "leaf page")

    # --check found the damage: the next run heals though no change reads
    # the page (the check was recorded as just made, so not due again)
    path, slot = mirror(ctx, "checked")
    leaf = pages(ctx, path, "orders")[-2]
    smash(path, (leaf - 1) * page_size(ctx, path), page_size(ctx, path))
    out, err = check_exit(ctx, path, 5)
    check("next run" in err, "--check's message: %s" % err)
    rc, out, err = ctx.once(path, slot, "pub")
    healed(ctx, path, slot, err, "a damage --check found")

    # an index page, found by the daily check of a --once run
    path, slot = mirror(ctx, "index", check_age="2 days")
    idx = ctx.mirror_query(path, "SELECT name FROM sqlite_master WHERE type = 'index' "
                                 "AND tbl_name = 'orders' AND name NOT LIKE 'app%'")[0][0]
    leaf = pages(ctx, path, idx)[2]
    smash(path, (leaf - 1) * page_size(ctx, path), page_size(ctx, path))
    rc, out, err = ctx.once(path, slot, "pub")
    check("integrity check" in err, "index page: the check did not say so:\n%s" % err)
    healed(ctx, path, slot, err, "index page")

    # the -wal: its frames overwritten while a reader keeps it open
    path, slot = mirror(ctx, "wal")
    reader = sqlite3.connect(path)
    reader.execute("SELECT count(*) FROM orders").fetchall()
    ctx.sql("UPDATE orders SET note = note || 'w' WHERE id % 3 = 0")
    ctx.once(path, slot, "pub")
    wal = path + "-wal"
    size = os.path.getsize(wal)
    ps = page_size(ctx, path)
    leaves = set(pages(ctx, path, "orders"))
    smashed = 0
    with open(wal, "rb") as f:
        frames = f.read()
    for off in range(32, size - ps - 24 + 1, ps + 24):
        if int.from_bytes(frames[off:off + 4], "big") in leaves:
            smash(wal, off + 24, ps)
            smashed += 1
    check(smashed > 0, "the -wal holds no page of orders (%d bytes)" % size)
    ctx.sql("UPDATE orders SET qty = qty + 1 WHERE id % 5 = 0")
    rc, out, err = ctx.once(path, slot, "pub")
    reader.close()
    check(os.path.exists(path + ".damaged-wal"), "the -wal was not set aside with the file")
    healed(ctx, path, slot, err, "-wal")

    # the header: its pages are read through a copy with a header made anew
    path, slot = mirror(ctx, "header")
    smash(path, 0, 100)
    out, err = check_exit(ctx, path, 5)
    rc, out, err = ctx.run(["-d", ctx.dsn, "--once", path])
    check(rc == 0, "header: exit %d without -S and -P\n%s" % (rc, err))
    check(not os.path.exists(path + ".rebuild-src"), "header: the repaired copy was left")
    healed(ctx, path, slot, err, "header")

    # an EIO reading a page (a failing card), found by the daily check
    path, slot = mirror(ctx, "eio", check_age="2 days")
    ps = page_size(ctx, path)
    leaf = pages(ctx, path, "orders")[3]
    env = {"LD_PRELOAD": harness.fault_shim("eio_read"), "PGMIRROR_EIO_FILE": path,
           "PGMIRROR_EIO_OFFSET": str((leaf - 1) * ps), "PGMIRROR_EIO_LEN": str(ps),
           "ASAN_OPTIONS": "verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", "")}
    rc, out, err = ctx.once(path, slot, "pub", env=env)
    healed(ctx, path, slot, err, "EIO")

    # a service: its background check finds a damaged leaf; it heals and
    # goes on
    path, slot = mirror(ctx, "service", check_age="2 days")
    leaf = pages(ctx, path, "orders")[7]
    smash(path, (leaf - 1) * page_size(ctx, path), page_size(ctx, path))
    proc = ctx.start_follow(path, slot, "pub")
    deadline = time.time() + 60 * harness.SLOW
    while "rebuilt from a fresh copy" not in proc.stderr():
        check(proc.poll() is None, "the service exited %s:\n%s" % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "the service did not heal:\n%s" % proc.stderr())
        time.sleep(0.1)
    ctx.sql("INSERT INTO orders SELECT g, 3, 'late' FROM generate_series(5001, 5100) g")
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "orders")
    check(proc.poll() is None, "the service ended after the heal")
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())
    # the last check describes the file in place, the finding stays in
    # the rebuild's reason
    st = ctx.mirror_state(path)
    check(st["last_check_result"] == "ok" and st["last_check_time"] >= st["last_rebuild_time"],
          "after the heal, the last check is %r at %s (rebuilt at %s)"
          % (st["last_check_result"], st["last_check_time"], st["last_rebuild_time"]))
    check(st["last_rebuild_reason"].startswith("mirror damaged: ") and
          st["last_rebuild_reason"] != "mirror damaged: ok",
          "the check's finding was not recorded: %r" % st["last_rebuild_reason"])

    # a first run without the SELECT grant on every published table: fails
    # before the slot, says which GRANT, leaves neither slot nor file (with
    # a table it can read, the others would wait: test_waiting_tables)
    role = ctx.dbname + "_nosel"
    ctx.admin.cursor().execute("DROP ROLE IF EXISTS %s" % harness.qident(role))
    ctx.admin.cursor().execute("CREATE ROLE %s LOGIN REPLICATION PASSWORD 'pw'"
                               % harness.qident(role))
    try:
        ctx.sql("CREATE TABLE secret (id int PRIMARY KEY); "
                "CREATE PUBLICATION pub2 FOR TABLE secret")
        path, slot = ctx.path("nogrant.db"), ctx.slot("nogrant")
        rc, out, err = ctx.run(["-d", ctx.dsn + " user=%s password=pw" % role, "-S", slot,
                                "-P", "pub2", "--once", path])
        check(rc == 1, "no grant: exit %d\n%s" % (rc, err))
        check("GRANT SELECT ON public.secret TO %s" % role in err,
              "no grant: the message does not give the GRANT:\n%s" % err)
        check(ctx.slot_info(slot) is None, "no grant: the slot was left behind")
        check(not os.path.exists(path), "no grant: the mirror file was left behind")
    finally:
        ctx.sql("DROP PUBLICATION IF EXISTS pub2; REVOKE ALL ON orders FROM %s"
                % harness.qident(role))
        ctx.admin.cursor().execute("DROP ROLE IF EXISTS %s" % harness.qident(role))


harness.main(test)

"""--resync[=TABLE,...]: the named mirror tables are copied again from the
source (each at a snapshot of its own, with its sync LSN), the rest of the
mirror is left as it is, and the run goes on as usual (--once: stops); with
no name every table is copied again. An unknown name is a usage error (exit
2) that names it, and changes nothing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE SCHEMA s;
        CREATE TABLE x (id int PRIMARY KEY, v text);
        CREATE TABLE s.y (n int, v text);                      -- no key
        ALTER TABLE s.y REPLICA IDENTITY FULL;
        INSERT INTO x SELECT g, 'x' FROM generate_series(1, 500) g;
        INSERT INTO s.y SELECT g % 3, 'y' FROM generate_series(1, 500) g;
        CREATE PUBLICATION pub FOR TABLE x, s.y;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "x", "s.y")

    def tamper():
        con = ctx.mirror_connect(path)
        con.execute("DELETE FROM x WHERE id <= 100")
        con.execute("UPDATE s_y SET v = 'tampered' WHERE rowid IN "
                    "(SELECT rowid FROM s_y LIMIT 50)")
        con.commit()
        con.close()

    before = dict(ctx.mirror_query(path, "SELECT table_name, sync_lsn FROM pgmirror_tables"))
    tamper()
    snap = ctx.mirror_snapshot(path)
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once", "--resync=x,nosuch"))
    check(rc == 2 and '"nosuch"' in err, "unknown table: exit %d\n%s" % (rc, err))
    check(ctx.mirror_snapshot(path) == snap, "a refused --resync changed the mirror")

    # x again, with changes since; s_y untouched (still tampered)
    ctx.sql("INSERT INTO x VALUES (1000, 'new'); UPDATE x SET v = 'upd' WHERE id = 200; "
            "INSERT INTO s.y VALUES (9, 'new')")
    ctx.once(path, slot, "pub", "--resync=x")
    ctx.assert_mirror_equals_source(path, "x")
    tampered = ctx.mirror_query(path, "SELECT count(*) FROM s_y WHERE v = 'tampered'")[0][0]
    check(tampered == 50, "--resync=x changed s_y: %d tampered rows left" % tampered)
    check(ctx.mirror_query(path, "SELECT count(*) FROM s_y WHERE n = 9")[0][0] == 1,
          "the stream did not go on after --resync=x")
    sync = dict(ctx.mirror_query(path, "SELECT table_name, sync_lsn FROM pgmirror_tables"))
    check(harness.parse_lsn(sync["x"]) > harness.parse_lsn(before["x"]) and
          sync["s_y"] == before["s_y"],
          "sync_lsn before --resync=x: %r, after: %r" % (before, sync))

    # every table
    tamper()
    ctx.sql("DELETE FROM s.y WHERE ctid = (SELECT ctid FROM s.y WHERE n = 1 LIMIT 1)")
    ctx.once(path, slot, "pub", "--resync")
    ctx.assert_mirror_equals_source(path, "x", "s.y")
    # and the stream after it applies each change once
    ctx.sql("INSERT INTO s.y VALUES (9, 'new'); UPDATE x SET v = 'later' WHERE id < 5")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "x", "s.y")


harness.main(test)

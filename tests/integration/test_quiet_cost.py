"""A quiet --once asks the source one question about the publications, a
fingerprint the server computes in one statement, and reads them in detail
only when it changed: at 2 published tables and at 300 it sends the same
7 statements and receives the same bytes, give or take a few (counted
through a forwarder on loopback, linkproxy.py). Before, a quiet run sent
10 statements and read the published tables twice, one row per column:
300 tables moved some 190 kB. The run after a table joins reads the detail
(and syncs the table), and the run after that is quiet again."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check  # noqa: E402

STATEMENTS = 7
MORE_BYTES = 100  # positions and OIDs written with more digits


def quiet(ctx, proxy, path, *extra):
    proxy.reset_counts()
    dsn = harness.make_dsn(dbname=ctx.dbname, host="127.0.0.1", port=proxy.port,
                           user=os.environ.get("PGUSER"),
                           password=os.environ.get("PGPASSWORD"),
                           sslmode="disable", gssencmode="disable")
    rc, out, err = ctx.run(["-d", dsn, "--once"] + list(extra) + [path])
    check(rc == 0, "pgmirror --once exited %d:\n%s" % (rc, err))
    c = proxy.stats()
    harness.log("quiet run: %d statements, %d bytes from the source, %d to it"
                % (c["statements"], c["bytes_down"], c["bytes_up"]))
    return c, err


def settle_catalogs(ctx):
    """The catalogs that 298 new tables changed, analyzed now. Else
    autovacuum may analyze them during the runs measured: each ANALYZE is
    a transaction of this database, and before PostgreSQL 15 pgoutput
    sends every transaction, even one without a published change, as a
    Begin and a Commit (107 bytes each): the byte count would measure
    autovacuum (seen on 14: 749 bytes more, 7 such transactions)."""
    ctx.sql("ANALYZE")
    deadline = time.time() + 30 * harness.SLOW
    while ctx.sql1("SELECT count(*) FROM pg_stat_activity WHERE backend_type = "
                   "'autovacuum worker' AND datname = current_database()") > 0:
        check(time.time() < deadline, "autovacuum still busy in the test database after 30 s")
        time.sleep(0.1)


def test(ctx):
    ctx.sql("CREATE TABLE t0 (id int PRIMARY KEY, a int, b text, c timestamptz);"
            "CREATE TABLE t1 (id int PRIMARY KEY, a int, b text, c timestamptz);"
            "INSERT INTO t0 VALUES (1, 1, 'x', now()); INSERT INTO t1 VALUES (1, 1, 'x', now());"
            "CREATE PUBLICATION pub FOR TABLE t0, t1")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    proxy = linkproxy.LinkProxy().start()
    small, _ = quiet(ctx, proxy, path)
    check(small["statements"] == STATEMENTS, "a quiet run at 2 tables sent %d statements, not %d"
          % (small["statements"], STATEMENTS))

    ctx.sql("DO $$ BEGIN FOR i IN 2..299 LOOP EXECUTE format('CREATE TABLE t%s (id int "
            "PRIMARY KEY, a int, b text, c timestamptz)', i); EXECUTE format('ALTER "
            "PUBLICATION pub ADD TABLE t%s', i); END LOOP; END $$")
    settle_catalogs(ctx)
    _, err = quiet(ctx, proxy, path, "-v")
    check("joined the mirror" in err and "reading them" in err,
          "the run after 298 tables joined did not read the publications:\n%s" % err)
    check(len(ctx.mirror_tables(path)) == 300, "mirror has %d tables, not 300"
          % len(ctx.mirror_tables(path)))
    big, err = quiet(ctx, proxy, path, "-v")
    check("the publications are as the mirror follows them" in err,
          "a quiet run at 300 tables read the publications:\n%s" % err)
    check(big["statements"] == STATEMENTS, "a quiet run at 300 tables sent %d statements, not %d"
          % (big["statements"], STATEMENTS))
    check(big["bytes_down"] <= small["bytes_down"] + MORE_BYTES,
          "a quiet run received %d bytes at 300 tables, %d at 2: more than %d bytes more"
          % (big["bytes_down"], small["bytes_down"], MORE_BYTES))
    check(big["bytes_up"] <= small["bytes_up"] + MORE_BYTES,
          "a quiet run sent %d bytes at 300 tables, %d at 2: more than %d bytes more"
          % (big["bytes_up"], small["bytes_up"], MORE_BYTES))


harness.main(test)

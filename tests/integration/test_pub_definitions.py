"""The mirror follows what the publications publish of a table, not just
which tables: a table that leaves and joins again (by ALTER PUBLICATION,
by moving it out of a FOR TABLES IN SCHEMA schema and back, by switching
publish_via_partition_root off and on) with changes made while it was out,
a row filter added, replaced and removed, a column list widened and
narrowed (on a keyed and a keyless table), partitions attached to and
detached from a root published with publish_via_partition_root: each is
seen by the check at start (--once) and the table synced again, and in a
service by the check SIGHUP starts (a change with no later change to the
table; the periodic check is the same check, on a timer:
test_table_join_service.py) and by the one a change of a relation the
mirror lacks starts, each within seconds, not the minute's check.
--resync with the name a table had before a rename resyncs the renamed
table. Row filters, column lists and schema publications need
PostgreSQL 15; on an older server those cases are left out."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def published(ctx, path, table, cols, where="true"):
    """The mirror table holds exactly the source rows matching where, with
    only the columns cols (ints); a list of differences."""
    src = sorted(ctx.sql("SELECT %s FROM %s WHERE %s" % (", ".join(cols), table, where)))
    mcols = [r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(%s)" % table)]
    if mcols != cols:
        return ["%s: mirror columns %s, want %s" % (table, mcols, cols)]
    mir = sorted(tuple(r) for r in ctx.mirror_query(
        path, "SELECT %s FROM %s" % (", ".join(cols), table)))
    if src != mir:
        return ["%s: source %s, mirror %s" % (table, src[:20], mir[:20])]
    return []


def assert_published(ctx, path, *specs):
    problems = []
    for spec in specs:
        problems += published(ctx, path, *spec)
    check(not problems, "\n".join(problems))


def change(ctx, table, base):
    """An insert, an update and a delete on table (store, v ints)."""
    ctx.sql("INSERT INTO %s (store, v) VALUES (1, %d), (2, %d); "
            "UPDATE %s SET v = v + 1000 WHERE v = (SELECT min(v) FROM %s); "
            "DELETE FROM %s WHERE v = (SELECT max(v) FROM %s WHERE v < %d)"
            % (table, base, base + 1, table, table, table, table, base))


def schema_table(ctx, schema, other):
    """Table schema.m, published by a new publication FOR TABLES IN SCHEMA
    schema (its name returned), and schema other to move it to."""
    ctx.sql("""
        CREATE SCHEMA %s; CREATE SCHEMA %s;
        CREATE TABLE %s.m (id serial PRIMARY KEY, store int, v int);
        INSERT INTO %s.m (store, v) SELECT g %% 3, g FROM generate_series(1, 20) g;
        CREATE PUBLICATION p%s FOR TABLES IN SCHEMA %s;
    """ % (schema, other, schema, schema, schema, schema))
    return "p" + schema


def test_once(ctx, v15):
    ctx.sql("""
        CREATE TABLE k (id serial, store int, v int, PRIMARY KEY (id, store));
        CREATE TABLE f (store int, v int);
        ALTER TABLE f REPLICA IDENTITY FULL;
        CREATE TABLE r (id int PRIMARY KEY, store int, v int) PARTITION BY RANGE (id);
        CREATE TABLE r1 PARTITION OF r FOR VALUES FROM (0) TO (100);
        CREATE TABLE r2 PARTITION OF r FOR VALUES FROM (100) TO (200);
        CREATE TABLE r3 (id int NOT NULL, store int, v int);
        CREATE TABLE k2 (id serial PRIMARY KEY, store int, v int);
        INSERT INTO k (store, v) SELECT g % 3, g FROM generate_series(1, 30) g;
        INSERT INTO f (store, v) SELECT g % 3, g FROM generate_series(1, 30) g;
        INSERT INTO k2 (store, v) SELECT g % 3, g FROM generate_series(1, 30) g;
        INSERT INTO r SELECT g, g % 3, g FROM generate_series(1, 199, 7) g;
        INSERT INTO r3 SELECT g, g % 3, g FROM generate_series(200, 299, 9) g;
        CREATE PUBLICATION pub FOR TABLE k, r, k2 WITH (publish_via_partition_root = true);
        CREATE PUBLICATION pf FOR TABLE f;
    """)
    ctx.create_marker("pub")
    pubs = ["pub", "pf"]
    if v15:
        pubs.append(schema_table(ctx, "s", "elsewhere"))
    path, slot = ctx.path(), ctx.slot()

    def once(*extra):
        started = time.time()
        rc, out, err = ctx.once(path, slot, pubs, *extra)
        harness.log("--once %s: %.1f s\n%s" % (" ".join(extra), time.time() - started, err))
        return err
    once()
    all_k = ("k", ["id", "store", "v"])
    all_f = ("f", ["store", "v"])
    all_r = ("r", ["id", "store", "v"])

    # leave, change, join again
    ctx.sql("ALTER PUBLICATION pub DROP TABLE k")
    change(ctx, "k", 100)
    ctx.sql("ALTER PUBLICATION pub ADD TABLE k")
    ctx.sql("ALTER PUBLICATION pf DROP TABLE f")
    change(ctx, "f", 100)
    ctx.sql("ALTER PUBLICATION pf ADD TABLE f")
    # publish_via_partition_root off (the root leaves), changes, on again
    ctx.sql("ALTER PUBLICATION pub SET (publish_via_partition_root = false)")
    ctx.sql("UPDATE r SET v = v + 1 WHERE id < 50; DELETE FROM r WHERE id > 150")
    ctx.sql("ALTER PUBLICATION pub SET (publish_via_partition_root = true)")
    # partitions attached and detached under the published root
    ctx.sql("ALTER TABLE r DETACH PARTITION r2")
    ctx.sql("ALTER TABLE r ATTACH PARTITION r3 FOR VALUES FROM (200) TO (300)")
    tables = ["k", "f", "r"]
    if v15:
        # moved out of a FOR TABLES IN SCHEMA schema, changed, moved back
        ctx.sql("ALTER TABLE s.m SET SCHEMA elsewhere")
        change(ctx, "elsewhere.m", 100)
        ctx.sql("ALTER TABLE elsewhere.m SET SCHEMA s")
        tables.append("s.m")
    once()
    ctx.assert_mirror_equals_source(path, *tables)
    # ... and detached and attached again between two runs, changed meanwhile
    ctx.sql("ALTER TABLE r DETACH PARTITION r3")
    ctx.sql("UPDATE r3 SET v = -v WHERE id < 250; DELETE FROM r3 WHERE id > 280")
    ctx.sql("ALTER TABLE r ATTACH PARTITION r3 FOR VALUES FROM (200) TO (300)")
    once()
    ctx.assert_mirror_equals_source(path, "r")

    # a mirror of an older pgmirror, without definitions: filled in, no copy
    con = ctx.mirror_connect(path)
    con.execute("UPDATE pgmirror_tables SET definition = NULL")
    con.commit()
    con.close()
    err = once()
    check("synced again" not in err, "tables synced for a missing definition:\n" + err)
    nulls = ctx.mirror_query(path, "SELECT table_name FROM pgmirror_tables "
                             "WHERE definition IS NULL")
    check(not nulls, "tables without a definition: %s" % nulls)

    # --resync with the name the table had before its rename
    con = ctx.mirror_connect(path)
    con.execute("UPDATE k2 SET v = -1 WHERE id = 5")
    con.commit()
    con.close()
    ctx.sql("ALTER TABLE k2 RENAME TO k2new")
    once("--resync=k2")
    check("k2new" in ctx.mirror_tables(path), "no k2new: %s" % ctx.mirror_tables(path))
    ctx.assert_mirror_equals_source(path, "k2new")

    if not v15:
        return

    # row filters added, replaced, removed on a keyed (its key holds the
    # filter's column, as an UPDATE's needs) and a keyless table
    ctx.sql("ALTER PUBLICATION pub DROP TABLE k; ALTER PUBLICATION pf ADD TABLE k")
    for where in ("store = 1", "store = 2", None):
        clause = " WHERE (%s)" % where if where else ""
        ctx.sql("ALTER PUBLICATION pf SET TABLE k%s, f%s" % (clause, clause))
        change(ctx, "k", 200)
        change(ctx, "f", 200)
        once()
        assert_published(ctx, path, all_k + (where or "true",), all_f + (where or "true",))

    # column lists narrowed and widened (a keyless table's only while no
    # UPDATE or DELETE: its replica identity is every column)
    ctx.sql("ALTER PUBLICATION pf SET TABLE k (id, store), f (v)")
    change(ctx, "k", 300)
    ctx.sql("INSERT INTO f VALUES (1, 301), (2, 302)")
    once()
    assert_published(ctx, path, ("k", ["id", "store"]), ("f", ["v"]))
    ctx.sql("ALTER PUBLICATION pf SET TABLE k (id, store, v), f (store, v)")
    change(ctx, "k", 400)
    ctx.sql("INSERT INTO f VALUES (1, 401)")
    once()
    ctx.assert_mirror_equals_source(path, "k", "f")


# How long a service may take to follow a change: far less than its
# periodic check's minute, so that a check SIGHUP or the stream started
# is what found it.
FAST = 20


def wait_equal(ctx, path, proc, tables):
    """Waits until the mirror equals the source in tables, for at most
    FAST seconds."""
    started = time.time()
    deadline = started + FAST * harness.SLOW
    while True:
        try:
            ctx.assert_mirror_equals_source(path, *tables)
            break
        except harness.Failure as e:
            check(proc.poll() is None, "pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
            if time.time() > deadline:
                fail("not equal within %.0f s: %s\nstderr:\n%s"
                     % (time.time() - started, e, proc.stderr()))
            time.sleep(0.5)
    harness.log("service: %s equal after %.1f s" % (tables, time.time() - started))


def wait_equal_published(ctx, path, proc, spec):
    deadline = time.time() + FAST * harness.SLOW
    while published(ctx, path, *spec):
        check(proc.poll() is None, "pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
        check(time.time() < deadline, "%s\nstderr:\n%s"
              % (published(ctx, path, *spec), proc.stderr()))
        time.sleep(0.5)


def test_service(ctx, v15):
    """Changes to the definitions while a service runs, with no later
    change to the tables: the check SIGHUP starts finds them."""
    ctx.sql("""
        CREATE TABLE sk (id serial PRIMARY KEY, store int, v int);
        CREATE TABLE sf (store int, v int);
        ALTER TABLE sf REPLICA IDENTITY FULL;
        CREATE TABLE sr (id int PRIMARY KEY, store int, v int) PARTITION BY RANGE (id);
        CREATE TABLE sr1 PARTITION OF sr FOR VALUES FROM (0) TO (100);
        INSERT INTO sk (store, v) SELECT g % 3, g FROM generate_series(1, 30) g;
        INSERT INTO sf (store, v) SELECT g % 3, g FROM generate_series(1, 30) g;
        INSERT INTO sr SELECT g, g % 3, g FROM generate_series(1, 99, 3) g;
        CREATE PUBLICATION spub FOR TABLE sk, sr WITH (publish_via_partition_root = true);
        CREATE PUBLICATION spf FOR TABLE sf;
    """)
    ctx.create_marker("spub", "smarker")
    pubs = ["spub", "spf"]
    if v15:
        pubs.append(schema_table(ctx, "ss", "ssout"))
        ctx.sql("ALTER PUBLICATION spf SET TABLE sf (v)")
    path, slot = ctx.path("service.db"), ctx.slot("svc")
    ctx.once(path, slot, pubs)
    proc = ctx.start_follow(path, slot, pubs, "-v")
    ctx.catch_up(path, "smarker", proc=proc)

    # no change reaches the stream: the check SIGHUP starts finds these
    ctx.sql("ALTER PUBLICATION spub DROP TABLE sk")
    change(ctx, "sk", 100)
    ctx.sql("ALTER PUBLICATION spub ADD TABLE sk")
    tables = ["sk"]
    if v15:
        ctx.sql("ALTER TABLE ss.m SET SCHEMA ssout")
        change(ctx, "ssout.m", 100)
        ctx.sql("ALTER TABLE ssout.m SET SCHEMA ss")
        ctx.sql("ALTER PUBLICATION spf SET TABLE sf (store, v)")
        tables += ["ss.m", "sf"]
    os.kill(proc.pid, signal.SIGHUP)
    wait_equal(ctx, path, proc, tables)
    # the partitions' changes while the root was not published come as
    # changes of tables the mirror lacks, which start a check at once
    ctx.sql("ALTER PUBLICATION spub SET (publish_via_partition_root = false)")
    ctx.sql("UPDATE sr SET v = v + 1 WHERE id < 50")
    ctx.sql("ALTER PUBLICATION spub SET (publish_via_partition_root = true)")
    wait_equal(ctx, path, proc, tables + ["sr"])
    if v15:
        # a keyless table's column list widened, and a change after it: the
        # stream's Relation message brings the column first, which the
        # existing rows cannot be matched for: never NULL, synced at once
        ctx.sql("ALTER PUBLICATION spf SET TABLE sf (v)")
        ctx.sql("INSERT INTO sf VALUES (1, 500)")
        wait_equal_published(ctx, path, proc, ("sf", ["v"]))
        ctx.sql("ALTER PUBLICATION spf SET TABLE sf (store, v)")
        ctx.sql("INSERT INTO sf VALUES (1, 501)")
        ctx.catch_up(path, "smarker", proc=proc)
        nulls = ctx.mirror_query(path, "SELECT count(*) FROM sf WHERE store IS NULL")[0][0]
        check(nulls == 0, "%d rows of sf with a NULL store in the mirror" % nulls)
        wait_equal(ctx, path, proc, ["sf"])
    rc = ctx.stop(proc)
    check(rc == 0, "pgmirror exited %d:\n%s" % (rc, proc.stderr()))


def test(ctx):
    v15 = ctx.server_version >= 150000
    test_once(ctx, v15)
    test_service(ctx, v15)


harness.main(test)

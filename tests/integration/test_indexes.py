"""The source's indexes on the mirror: each plain btree index on published
columns (no expression, no predicate) becomes a non-unique SQLite index on
the same columns in the same order, named pgmirror_index_OID_NAME; the
primary key (the mirror's PRIMARY KEY already), hash, expression and
partial indexes, and indexes on a column left out of the publication's
column list are not copied; a partitioned table published through its root
gets the root's index. Indexes made or dropped later are followed by a
running pgmirror (with the table's next change) and at each start (a table
that gets no change); a rebuild keeps them, a renamed column keeps its
index, a dropped column takes its index along. A REPLICA IDENTITY FULL
table gets pgmirror_match_OID on its short columns, and a delete among
equal rows still takes exactly one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, qident  # noqa: E402


def mirror_indexes(ctx, path, table):
    """{index name: ([(column, desc)], unique)} of pgmirror's own indexes."""
    out = {}
    for row in ctx.mirror_query(path, "PRAGMA index_list(%s)" % qident(table)):
        name, unique = row[1], row[2]
        if not name.startswith("pgmirror_"):
            continue
        cols = [(r[2], r[3]) for r in ctx.mirror_query(
            path, "PRAGMA index_xinfo(%s)" % qident(name)) if r[5]]
        out[name] = (cols, unique)
    return out


def source_oid(ctx, name):
    return ctx.sql1("SELECT %s::regclass::oid", qident(name))


def expect(ctx, path, table, want):
    """want: {source index name: [(column, desc)]}, plus "match": [...] for
    the match index of a keyless table."""
    got = mirror_indexes(ctx, path, table)
    exp = {}
    for name, cols in want.items():
        if name == "match":
            exp["pgmirror_match_%s" % source_oid(ctx, table)] = (cols, 0)
        else:
            exp["pgmirror_index_%s_%s" % (source_oid(ctx, name), name)] = (cols, 0)
    check(got == exp, "indexes of mirror table %s:\n got %r\nwant %r" % (table, got, exp))


def plan(ctx, path, q):
    return " | ".join(r[3] for r in ctx.mirror_query(path, "EXPLAIN QUERY PLAN " + q))


def test(ctx):
    v15 = ctx.server_version >= 150000   # publication column lists
    ctx.sql("""
        CREATE TABLE it (id int PRIMARY KEY, a int, b text, c int, d text, e int);
        CREATE INDEX it_a ON it (a);
        CREATE UNIQUE INDEX it_cb ON it (c, b DESC);
        CREATE INDEX it_expr ON it (lower(b));
        CREATE INDEX it_part ON it (c) WHERE c > 0;
        CREATE INDEX it_hash ON it USING hash (a);
        CREATE INDEX it_inc ON it (e) INCLUDE (d);
        CREATE INDEX "It odd""name" ON it (d, a);
        INSERT INTO it SELECT g, g % 50, 'b' || g, g, 'd' || (g % 7), g % 3
          FROM generate_series(1, 2000) g;

        CREATE TABLE kl (x int, y text, z bytea);
        ALTER TABLE kl REPLICA IDENTITY FULL;
        CREATE INDEX kl_y ON kl (y);
        INSERT INTO kl SELECT g, 'y' || g, '\\x00' FROM generate_series(1, 500) g;
        INSERT INTO kl VALUES (7, 'dup', NULL), (7, 'dup', NULL), (7, 'dup', NULL);

        CREATE TABLE cl (id int PRIMARY KEY, p int, q int);
        CREATE INDEX cl_q ON cl (q);
        CREATE INDEX cl_pq ON cl (p, q);
        CREATE INDEX cl_p ON cl (p);

        CREATE TABLE pt (id int, k int, v int) PARTITION BY RANGE (id);
        CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (1000);
        CREATE INDEX pt_k ON pt (k);
        INSERT INTO pt SELECT g, g % 10, g FROM generate_series(1, 100) g;

        CREATE TABLE pgm_marker (id serial PRIMARY KEY);
        CREATE PUBLICATION pubroot FOR TABLE pt WITH (publish_via_partition_root);
    """)
    ctx.sql("CREATE PUBLICATION pub FOR TABLE it, kl, %s, pgm_marker"
            % ("cl (id, p)" if v15 else "cl"))
    # an index on a column the column list leaves out is not copied
    cl_want = {"cl_p": [("p", 0)]}
    if not v15:
        cl_want.update({"cl_q": [("q", 0)], "cl_pq": [("p", 0), ("q", 0)]})
    path, slot = ctx.path(), ctx.slot()
    pubs = ["pub", "pubroot"]
    ctx.once(path, slot, pubs)   # the first run, with its initial copy

    expect(ctx, path, "it", {"it_a": [("a", 0)], "it_cb": [("c", 0), ("b", 1)],
                             "it_inc": [("e", 0)],
                             'It odd"name': [("d", 0), ("a", 0)]})
    expect(ctx, path, "kl", {"kl_y": [("y", 0)], "match": [("x", 0)]})
    expect(ctx, path, "cl", cl_want)
    expect(ctx, path, "pt", {"pt_k": [("k", 0)]})
    p = plan(ctx, path, "SELECT * FROM it WHERE a = 5")
    check("USING INDEX pgmirror_index_" in p and "_it_a" in p,
          "a lookup by it.a should use the mirror's index: %s" % p)
    p = plan(ctx, path, "SELECT * FROM pt WHERE k = 5")
    check("USING INDEX pgmirror_index_" in p, "a lookup by pt.k: %s" % p)
    # never UNIQUE: the mirror may hold what the source's unique index
    # forbids in between (here, by hand)
    con = ctx.mirror_connect(path)
    con.execute("INSERT INTO it (id, c, b) VALUES (-1, 1, 'b1')")
    con.rollback()
    con.close()

    # a running pgmirror follows CREATE INDEX and DROP INDEX with the
    # table's next change
    proc = ctx.start_follow(path, slot, pubs)
    ctx.catch_up(path, proc=proc)
    ctx.sql("""
        CREATE INDEX it_b_e ON it (b, e DESC);
        DROP INDEX it_a;
        UPDATE it SET a = -a WHERE id = 1;
        CREATE INDEX cl_id_p ON cl (p DESC, id);
        INSERT INTO cl VALUES (1, 1, 1);
    """)
    ctx.catch_up(path, proc=proc)
    expect(ctx, path, "it", {"it_b_e": [("b", 0), ("e", 1)], "it_cb": [("c", 0), ("b", 1)],
                             "it_inc": [("e", 0)],
                             'It odd"name': [("d", 0), ("a", 0)]})
    cl_want["cl_id_p"] = [("p", 1), ("id", 0)]
    expect(ctx, path, "cl", cl_want)
    p = plan(ctx, path, "SELECT * FROM it WHERE b = 'b5'")
    check("_it_b_e" in p, "a lookup by it.b should use the new index: %s" % p)

    # table rebuilds keep them: an added column, a renamed one (its index
    # follows), a dropped one (its index goes, as on the source)
    ctx.sql("""
        ALTER TABLE it ADD COLUMN f int DEFAULT 7;
        UPDATE it SET a = 1 WHERE id = 2;
    """)
    ctx.catch_up(path, proc=proc)
    ctx.sql("""
        ALTER TABLE it RENAME COLUMN b TO bb;
        ALTER TABLE it DROP COLUMN e;
        UPDATE it SET a = 2 WHERE id = 3;
    """)
    ctx.catch_up(path, proc=proc)
    expect(ctx, path, "it", {"it_cb": [("c", 0), ("bb", 1)],
                             'It odd"name': [("d", 0), ("a", 0)]})
    ctx.assert_mirror_equals_source(path, "it")

    # keyless: a delete among equal rows takes one, found by an index
    ctx.sql("DELETE FROM kl WHERE ctid = (SELECT ctid FROM kl WHERE y = 'dup' LIMIT 1);"
            "UPDATE kl SET y = 'changed' WHERE x = 3")
    ctx.catch_up(path, proc=proc)
    check(ctx.mirror_query(path, "SELECT count(*) FROM kl WHERE y = 'dup'")[0][0] == 2,
          "one of three equal rows should be deleted")
    ctx.assert_mirror_equals_source(path, "kl")
    p = plan(ctx, path, "SELECT rowid FROM kl WHERE x IS 7 AND y IS 'dup' AND z IS NULL")
    check("USING INDEX" in p, "a keyless row should be found by an index: %s" % p)
    check(ctx.stop(proc) == 0, "pgmirror should exit 0:\n%s" % proc.stderr())

    # at start: an index made or dropped on a quiet table, while pgmirror
    # was not running
    ctx.sql("CREATE INDEX kl_x_y ON kl (x, y); DROP INDEX kl_y; DROP INDEX pt_k;"
            "CREATE INDEX pt_v ON pt (v)")
    ctx.once(path, slot, pubs)
    expect(ctx, path, "kl", {"kl_x_y": [("x", 0), ("y", 0)], "match": [("x", 0)]})
    expect(ctx, path, "pt", {"pt_v": [("v", 0)]})
    # the user's own index is left alone
    con = ctx.mirror_connect(path)
    con.execute("CREATE INDEX my_own ON kl (y)")
    con.commit()
    con.close()
    ctx.sql("DROP INDEX kl_x_y")
    ctx.once(path, slot, pubs)
    expect(ctx, path, "kl", {"match": [("x", 0)]})
    names = [r[1] for r in ctx.mirror_query(path, "PRAGMA index_list(kl)")]
    check("my_own" in names, "the user's index should stay: %r" % names)


harness.main(test)

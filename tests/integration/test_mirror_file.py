"""The mirror file itself: WAL journal mode; pgmirror_state (one row; slot,
publications, system_identifier, confirmed_lsn as text X/Y,
last_commit_time as UTC text close to the source commit time);
pgmirror_columns (a row per column: position, pg_type, type_modifier,
is_key); key columns form the SQLite PRIMARY KEY (none for REPLICA
IDENTITY FULL); s.t is named s_t; --status reads the file without a
server. A mirror path is always a path: one that starts with "file:" is not
taken for an SQLite URI."""

import datetime
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

EXPECTED_COLS = [
    # name, pg_type (accepted spellings), type_modifier, is_key
    ("id", ("int4",), -1, 1),
    ("name", ("text",), -1, 0),
    ("flag", ("bool",), -1, 0),
    ("amount", ("numeric",), (10 << 16 | 2) + 4, 0),
    ("code", ("varchar",), 10 + 4, 0),
    ("at", ("timestamptz",), -1, 0),
    ("tags", ("_int8", "int8[]"), -1, 0),
    ("k2", ("int8",), -1, 1),
]


def test(ctx):
    ctx.sql("""
        CREATE SCHEMA s;
        CREATE TABLE s.t (id int, name text, flag bool, amount numeric(10,2),
                          code varchar(10), at timestamptz, tags int8[],
                          k2 bigint, PRIMARY KEY (k2, id));
        CREATE TABLE f (a int, b text);
        ALTER TABLE f REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE s.t, f;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    ctx.sql("INSERT INTO f VALUES (1, 'x')")
    ctx.sql("INSERT INTO s.t VALUES (1, 'n', true, 1.25, 'c', now(), '{1}', 7)")
    commit_time = ctx.sql1("SELECT (at AT TIME ZONE 'UTC') FROM s.t")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "s.t", "f")

    check(ctx.mirror_query(path, "PRAGMA journal_mode")[0][0].lower() == "wal",
          "journal_mode is not wal")

    cols = [r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(pgmirror_state)")]
    for c in ("slot", "publications", "system_identifier", "confirmed_lsn",
              "last_commit_time"):
        check(c in cols, "pgmirror_state has no column %s (has %s)" % (c, cols))
    check(ctx.mirror_query(path, "SELECT count(*) FROM pgmirror_state")[0][0] == 1,
          "pgmirror_state must have one row")
    st = ctx.mirror_state(path)
    check(st["slot"] == slot, "slot %r" % st["slot"])
    check(st["publications"] == "pub", "publications %r" % st["publications"])
    check(str(st["system_identifier"]) == ctx.system_identifier(),
          "system_identifier %r, server says %s" % (st["system_identifier"],
                                                    ctx.system_identifier()))
    t = ctx.mirror_query(path, "SELECT typeof(confirmed_lsn), confirmed_lsn, "
                               "typeof(last_commit_time), last_commit_time "
                               "FROM pgmirror_state")[0]
    check(t[0] == "text" and re.match(r"^[0-9A-F]{1,8}/[0-9A-F]{1,8}$", t[1]),
          "confirmed_lsn must be text X/Y (upper-case hex as PostgreSQL "
          "prints it): %r" % (t[:2],))
    check(harness.parse_lsn(t[1]) <= ctx.source_lsn(), "confirmed_lsn in the future")
    check(t[2] == "text" and re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$", t[3]),
          "last_commit_time must be text YYYY-MM-DD HH:MM:SS[.f]: %r" % (t[2:],))
    lct = datetime.datetime.strptime(t[3][:19], "%Y-%m-%d %H:%M:%S")
    delta = (lct - commit_time.replace(microsecond=0)).total_seconds()
    check(-1 <= delta <= 30, "last_commit_time %s is not the source commit time "
          "(transaction start %s UTC)" % (t[3], commit_time))

    rows = ctx.mirror_query(path, "SELECT column_name, position, pg_type, "
                                  "type_modifier, is_key FROM pgmirror_columns "
                                  "WHERE table_name = 's_t' ORDER BY position")
    check(len(rows) == len(EXPECTED_COLS),
          "pgmirror_columns for s_t: %r" % (rows,))
    for i, (r, (name, types, mod, key)) in enumerate(zip(rows, EXPECTED_COLS)):
        check(r[0] == name and r[1] == i + 1 and r[2] in types and r[3] == mod
              and bool(r[4]) == bool(key),
              "pgmirror_columns row %d: %r, expected (%s, %d, %s, %d, %d)"
              % (i + 1, r, name, i + 1, "/".join(types), mod, key))
    pk = sorted(r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(s_t)") if r[5])
    check(pk == ["id", "k2"], "PRIMARY KEY of s_t: %r" % pk)
    pk = [r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(f)") if r[5]]
    check(pk == [], "REPLICA IDENTITY FULL table f has a PRIMARY KEY %r" % pk)
    fcols = ctx.mirror_query(path, "SELECT column_name, position FROM pgmirror_columns "
                                   "WHERE table_name = 'f' ORDER BY position")
    check(fcols == [("a", 1), ("b", 2)], "pgmirror_columns for f: %r" % (fcols,))

    # --status: from the file alone (a DSN to nowhere would not matter)
    rc, out, err = ctx.run(["--status", path], timeout=30)
    check(rc == 0, "--status exit %d: %s" % (rc, err))
    for word in (slot, "pub", st["confirmed_lsn"], "s_t"):
        check(word in out, "--status output lacks %r:\n%s" % (word, out))
    rc, out, err = ctx.run(["--status", ctx.path("missing.db")], timeout=30)
    check(rc == 1 and err.strip(), "--status of a missing file: exit %d %r" % (rc, err))
    check(not os.path.exists(ctx.path("missing.db")), "--status created the file")

    uri_like_path(ctx, slot)


def uri_like_path(ctx, slot):
    """A mirror path is a path, whatever it starts with: 'file:...' once
    made SQLite open a database in memory (mode=memory), and the file of
    that name stayed empty; --check and --status read that same file."""
    name = "file:u.db?mode=memory"
    ctx.sql("CREATE TABLE u (id int PRIMARY KEY); INSERT INTO u VALUES (1), (2);"
            "CREATE PUBLICATION pub_u FOR TABLE u")
    uslot = slot + "_u"
    ctx.once(name, uslot, "pub_u")
    path = os.path.join(ctx.tmpdir, name)
    check(os.path.getsize(path) > 0, "the mirror %r is empty: opened as a URI" % name)
    check(ctx.mirror_query(path, "SELECT count(*) FROM u") == [(2,)],
          "the mirror %r does not hold the rows" % name)
    for args in (["--check", name], ["--status", name]):
        rc, out, err = ctx.run(args, timeout=30)
        check(rc == 0, "%s of %r: exit %d: %s%s" % (args[0], name, rc, out, err))
    check(not os.path.exists(os.path.join(ctx.tmpdir, "u.db")),
          "a file u.db was made beside %r" % name)


harness.main(test)

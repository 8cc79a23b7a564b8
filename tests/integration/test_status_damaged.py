"""pgmirror's own tables are read as untrusted input. A mirror made by a
real run is damaged as a hand edit with sqlite3, or a flipped bit that
SQLite cannot see, would damage it: a NULL where pgmirror always writes a
value (each own table: pgmirror_state, pgmirror_tables, pgmirror_columns,
pgmirror_waiting, pgmirror_pending, pgmirror_staged; the tables are first
made again without their NOT NULLs, as in an older or hand-edited file), an
OID or a count out of range, an LSN that is not one. Then:

- --status, --status --json and --status --prometheus never crash (they
  once died with SIGSEGV on a NULL table_name): where they read the damaged
  value they exit 1, print nothing on stdout, and say on stderr that the
  mirror is damaged, naming the table and column; where they do not read
  it (pgmirror_columns) they print the sound output, exit 0;
- --check says what is damaged, naming the table, column and rowid, and
  exits 5 (it once said "ok", exit 0);
- a lag of 1e999 seconds (or a lag in bytes that is text) is a figure
  that cannot be right, not damage: --status shows it as not known (empty;
  null in --json, which json.loads takes strictly, with no inf or nan;
  NaN in --prometheus, which promtool checks), with a warning that names
  it, exit 0, and --check says ok (the next sync writes it again);
- a new mirror's pgmirror_tables.table_name is NOT NULL in its schema;
- a run on a mirror with a NULL table_name heals it as other damage: it
  sets the file aside, rebuilds it from a fresh copy, exits 0, and keeps
  the user's own table with its rows (once lost: the user's tables are
  found by NOT IN the mirror tables' names, which a NULL made empty)."""

import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

OWN = ["pgmirror_state", "pgmirror_tables", "pgmirror_columns", "pgmirror_waiting",
       "pgmirror_pending", "pgmirror_staged"]

# (case, SQL on the mirror, what --status says is damaged, or None when
# --status does not read it, what --check names)
DAMAGE = [
    ("tables_name", "UPDATE pgmirror_tables SET table_name = NULL WHERE table_name = 'items'",
     "pgmirror_tables.table_name", "pgmirror_tables.table_name"),
    ("tables_schema", "UPDATE pgmirror_tables SET source_schema = NULL "
     "WHERE table_name = 'items'", "pgmirror_tables.source_schema",
     "pgmirror_tables.source_schema"),
    ("tables_oid_null", "UPDATE pgmirror_tables SET relation_oid = NULL "
     "WHERE table_name = 'items'", "pgmirror_tables.relation_oid",
     "pgmirror_tables.relation_oid"),
    ("tables_oid_range", "UPDATE pgmirror_tables SET relation_oid = 99999999999 "
     "WHERE table_name = 'items'", "pgmirror_tables.relation_oid",
     "pgmirror_tables.relation_oid"),
    ("tables_lsn", "UPDATE pgmirror_tables SET sync_lsn = 'not/an/lsn' "
     "WHERE table_name = 'items'", "pgmirror_tables.sync_lsn", "pgmirror_tables.sync_lsn"),
    ("tables_copy_rows", "UPDATE pgmirror_tables SET copy_rows = 'many' "
     "WHERE table_name = 'items'", "pgmirror_tables.copy_rows", "pgmirror_tables.copy_rows"),
    ("tables_generation", "UPDATE pgmirror_tables SET generation = NULL "
     "WHERE table_name = 'items'", "pgmirror_tables.generation",
     "pgmirror_tables.generation"),
    ("state_slot", "UPDATE pgmirror_state SET slot = NULL", "pgmirror_state.slot",
     "pgmirror_state.slot"),
    ("state_sysid", "UPDATE pgmirror_state SET system_identifier = NULL",
     "pgmirror_state.system_identifier", "pgmirror_state.system_identifier"),
    ("state_database", "UPDATE pgmirror_state SET database = NULL",
     "pgmirror_state.database", "pgmirror_state.database"),
    ("state_lsn", "UPDATE pgmirror_state SET confirmed_lsn = NULL",
     "pgmirror_state.confirmed_lsn", "pgmirror_state.confirmed_lsn"),
    ("columns_name", "UPDATE pgmirror_columns SET column_name = NULL "
     "WHERE table_name = 'items' AND position = 2", None, "pgmirror_columns.column_name"),
    ("columns_type", "UPDATE pgmirror_columns SET type_oid = -7 "
     "WHERE table_name = 'items' AND position = 2", None, "pgmirror_columns.type_oid"),
    ("waiting_schema", "UPDATE pgmirror_waiting SET source_schema = NULL",
     "pgmirror_waiting.source_schema", "pgmirror_waiting.source_schema"),
    ("waiting_table", "UPDATE pgmirror_waiting SET source_table = NULL",
     "pgmirror_waiting.source_table", "pgmirror_waiting.source_table"),
    ("waiting_reason", "UPDATE pgmirror_waiting SET reason = NULL",
     "pgmirror_waiting.reason", "pgmirror_waiting.reason"),
    ("waiting_since", "UPDATE pgmirror_waiting SET since = NULL",
     "pgmirror_waiting.since", "pgmirror_waiting.since"),
    ("waiting_oid", "UPDATE pgmirror_waiting SET relation_oid = -1",
     "pgmirror_waiting.relation_oid", "pgmirror_waiting.relation_oid"),
    ("pending_schema", "INSERT INTO pgmirror_pending VALUES (4242, NULL, 'later', 10)",
     "pgmirror_pending.source_schema", "pgmirror_pending.source_schema"),
    ("pending_table", "INSERT INTO pgmirror_pending VALUES (4242, 'public', NULL, 10)",
     "pgmirror_pending.source_table", "pgmirror_pending.source_table"),
    ("pending_estimate", "INSERT INTO pgmirror_pending VALUES (4242, 'public', 'later', "
     "'lots')", "pgmirror_pending.estimate", "pgmirror_pending.estimate"),
    ("staged_name", "INSERT INTO pgmirror_staged SELECT relation_oid, NULL "
     "FROM pgmirror_tables WHERE table_name = 'items'", "pgmirror_staged.old_name",
     "pgmirror_staged.old_name"),
    ("staged_oid", "INSERT INTO pgmirror_staged VALUES (-5, 'items')",
     "pgmirror_staged.relation_oid", "pgmirror_staged.relation_oid"),
]


def loosen(path):
    """pgmirror's own tables made again without their NOT NULLs (as SQLite
    documents for a schema change that leaves the stored rows as they
    are: the text of the CREATE TABLE changed, the schema version moved
    on), so that a NULL can be written where pgmirror never writes one,
    as in a file an older pgmirror made or someone edited. The file stays
    sound: SQLite's integrity check finds nothing."""
    con = sqlite3.connect(path)
    version = con.execute("PRAGMA schema_version").fetchone()[0]
    con.execute("PRAGMA writable_schema = ON")
    for t in OWN:
        con.execute("UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') "
                    "WHERE type = 'table' AND name = ?", (t,))
    con.execute("PRAGMA schema_version = %d" % (version + 1))
    con.execute("PRAGMA writable_schema = OFF")
    con.commit()
    con.close()
    got = query(path, "PRAGMA integrity_check")
    check(got == [("ok",)], "loosening the schema damaged the file: %r" % got)


def query(path, q, params=()):
    con = sqlite3.connect(path)
    try:
        return con.execute(q, params).fetchall()
    finally:
        con.close()


def copy(src, dst):
    """A copy of the mirror src at dst, whole (its -wal's commits too)."""
    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    a.backup(b)
    a.close()
    b.close()


def damaged_copy(ctx, base, case, sql):
    path = ctx.path("%s.db" % case)
    copy(base, path)
    con = sqlite3.connect(path)
    con.execute(sql)
    con.commit()
    con.close()
    return path


def strict_json(text, what):
    """json.loads that refuses what Python takes beyond JSON (NaN,
    Infinity); a failure names what and shows the text."""
    def constant(c):
        fail("%s: %s is not JSON:\n%s" % (what, c, text))
    try:
        return json.loads(text, parse_constant=constant)
    except ValueError as e:
        fail("%s: not JSON (%s):\n%s" % (what, e, text))


def promtool(text, what):
    p = subprocess.run(["promtool", "check", "metrics"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(p.returncode == 0, "%s: promtool check metrics refused it:\n%s\n%s"
          % (what, p.stdout.decode(), text))


FORMS = [("--status",), ("--status", "--json"), ("--status", "--prometheus")]


def sound_status(ctx, path, what):
    """Every form of --status exits 0 with output that parses; returns
    (text lines as a dict, the JSON, the Prometheus text, stderr of each)."""
    outs, errs = [], []
    for form in FORMS:
        rc, out, err = ctx.run(list(form) + [path])
        check(rc == 0, "%s: %s exited %d\nstdout:\n%s\nstderr:\n%s"
              % (what, " ".join(form), rc, out, err))
        outs.append(out)
        errs.append(err)
    text = dict(line.split(": ", 1) for line in outs[0].splitlines()
                if ": " in line and not line.startswith(("table: ", "waiting")))
    js = strict_json(outs[1], what + ": --status --json")
    promtool(outs[2], what + ": --status --prometheus")
    return text, js, outs[2], errs


def test(ctx):
    ctx.sql("""
        CREATE TABLE orders (id int PRIMARY KEY, qty int);
        CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(8,2));
        INSERT INTO orders SELECT g, g FROM generate_series(1, 20) g;
        INSERT INTO items SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 30) g;
        CREATE TABLE pgmirror_x (id int PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE orders, items;
        CREATE PUBLICATION pub_w FOR TABLE pgmirror_x;
    """)
    # a mirror made by a real run, with a table that waits (its name is
    # reserved): the run ends with exit 1 naming it
    base, slot = ctx.path("base.db"), ctx.slot("base")
    ctx.once(base, slot, ["pub", "pub_w"], expect=1)
    check(query(base, "SELECT count(*) FROM pgmirror_waiting") == [(1,)],
          "pgmirror_x does not wait in the mirror")
    text, js, _, _ = sound_status(ctx, base, "the sound mirror")
    check(text.get("tables") == "2" and text.get("tables_waiting") == "1",
          "--status of the sound mirror: %r" % text)
    rc, out, err = ctx.run(["--check", base])
    check(rc == 0 and out.strip() == "ok", "--check of the sound mirror: exit %d %r %r"
          % (rc, out, err))

    loose = ctx.path("loose.db")
    copy(base, loose)
    loosen(loose)
    sound_status(ctx, loose, "the mirror without NOT NULLs")

    for case, sql, status_names, check_names in DAMAGE:
        path = damaged_copy(ctx, loose, case, sql)
        harness.log("case %s: %s" % (case, sql))
        for form in FORMS:
            rc, out, err = ctx.run(list(form) + [path])
            what = "%s: %s" % (case, " ".join(form))
            check(rc >= 0, "%s died by signal %d\nstderr:\n%s" % (what, -rc, err))
            if status_names is None:
                check(rc == 0, "%s exited %d\nstderr:\n%s" % (what, rc, err))
                continue
            check(rc == 1 and out == "" and 'mirror "%s" is damaged' % path in err and
                  status_names in err,
                  "%s: exit %d, expected 1 with nothing on stdout and a message that "
                  "mirror \"%s\" is damaged, naming %s\nstdout:\n%s\nstderr:\n%s"
                  % (what, rc, path, status_names, out, err))
        if status_names is None:
            sound_status(ctx, path, case)
        rc, out, err = ctx.run(["--check", path])
        check(rc == 5 and check_names in out and "rowid" in out,
              "%s: --check exited %d, expected 5 naming %s and the row\nstdout:\n%s\n"
              "stderr:\n%s" % (case, rc, check_names, out, err))
        harness.log("  --status: %s\n  --check: %s" % (
            ctx.run(["--status", path])[2].strip(), out.strip()))

    # figures of the last sync that cannot be right: not known, and said
    for case, sql, name in (
            ("lag_inf", "UPDATE pgmirror_state SET last_sync_lag_seconds = 1e999",
             "last_sync_lag_seconds"),
            ("lag_minf", "UPDATE pgmirror_state SET last_sync_lag_seconds = -1e999",
             "last_sync_lag_seconds"),
            ("lag_bytes", "UPDATE pgmirror_state SET last_sync_lag_bytes = 'x'",
             "last_sync_lag_bytes")):
        path = damaged_copy(ctx, base, case, sql)
        text, js, prom, errs = sound_status(ctx, path, case)
        check(text.get("last_sync_lag_seconds") == "" and text.get("last_sync_lag_bytes") == "",
              "%s: --status shows the lag as %r, %r" % (
                  case, text.get("last_sync_lag_bytes"), text.get("last_sync_lag_seconds")))
        check(js["last_sync_lag_seconds"] is None and js["last_sync_lag_bytes"] is None,
              "%s: --json shows the lag as %r, %r" % (
                  case, js["last_sync_lag_bytes"], js["last_sync_lag_seconds"]))
        for metric in ("pgmirror_lag_seconds", "pgmirror_lag_bytes"):
            line = [ln for ln in prom.splitlines() if ln.startswith(metric + "{")]
            check(len(line) == 1 and line[0].endswith(" NaN"),
                  "%s: --prometheus shows %s as %r" % (case, metric, line))
        for form, err in zip(FORMS, errs):
            check("pgmirror_state.%s" % name in err,
                  "%s: %s gives no warning that names %s:\n%s"
                  % (case, " ".join(form), name, err))
        rc, out, err = ctx.run(["--check", path])
        check(rc == 0 and out.strip() == "ok", "%s: --check exited %d: %r %r"
              % (case, rc, out, err))

    notnull = [r[3] for r in query(base, "PRAGMA table_info(pgmirror_tables)")
               if r[1] == "table_name"]
    check(notnull == [1], "a new mirror's pgmirror_tables.table_name is not NOT NULL "
          "(notnull %r)" % notnull)

    # a run heals a NULL table_name as other damage, the user's table kept:
    # found by the integrity check at its start (due: never run), or by
    # the run's reading of pgmirror_tables (the check done a moment ago)
    for n, (case, checked) in enumerate((("heal_check", "NULL"),
                                          ("heal_read", "datetime('now')"))):
        heal(ctx, case, checked, 31 + n)


def heal(ctx, case, checked, new_id):
    path, slot = ctx.path(case + ".db"), ctx.slot(case)
    ctx.once(path, slot, "pub")
    loosen(path)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE app_notes (n INTEGER PRIMARY KEY, note TEXT);
        INSERT INTO app_notes (note) VALUES ('mine'), ('also mine');
        UPDATE pgmirror_tables SET table_name = NULL WHERE table_name = 'items';
        UPDATE pgmirror_state SET last_check_time = %s, last_check_result = 'ok';
    """ % checked)
    con.close()
    ctx.sql("INSERT INTO items VALUES (%d, 'item %d', 46.5)" % (new_id, new_id))
    rc, out, err = ctx.once(path, slot, "pub")
    harness.log("%s: the run on a NULL table_name:\n%s" % (case, err))
    check("is damaged" in err and "pgmirror_tables.table_name is NULL" in err and
          "rebuilt from a fresh copy" in err,
          "%s: the run said nothing of the damage and the rebuild:\n%s" % (case, err))
    check(os.path.exists(path + ".damaged"), "%s: no %s.damaged" % (case, path))
    ctx.assert_mirror_equals_source(path, "orders", "items")
    check(query(path, "SELECT count(*) FROM sqlite_master WHERE name = 'app_notes'")
          == [(1,)], "%s: the heal lost the user's table app_notes" % case)
    notes = query(path, "SELECT note FROM app_notes ORDER BY n")
    check(notes == [("mine",), ("also mine",)],
          "%s: the user's table after the heal: %r" % (case, notes))
    rc, out, err = ctx.run(["--check", path])
    check(rc == 0 and out.strip() == "ok", "%s: --check after the heal: %d %r %r"
          % (case, rc, out, err))
    sound_status(ctx, path, case + ": after the heal")


harness.main(test)

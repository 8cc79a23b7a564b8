"""--status: reads the mirror file alone.  With no server reachable at all
(PGHOST naming a directory without a socket, no -d) it exits 0 and prints
the documented lines in the documented order: mirror, slot, publications,
system_identifier, database, confirmed_lsn, last_commit_time,
initial_copy, the health keys (last_sync_time ... last_error_time), tables,
tables_waiting, tables_pending, then "table: ROWS NAME" per table, sorted by name (a name
with a space comes last on its line, whole), then for each table that waits
"waiting: NAME", "waiting_since: TIME", "waiting_reason: TEXT"
(test_waiting_tables).  While a continuous
pgmirror holds the mirror, --status still exits 0 at once (it opens the
file read-only, without the writer lock) and shows the running mirror's
position and row counts.  A missing file is exit 1 with a message.  A
control character in a value (a quoted source table name may hold a
newline) is escaped (\\n, \\t, \\xNN; a backslash as \\\\), so no line is
forged."""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

KEYS = ["mirror", "slot", "publications", "system_identifier", "database",
        "confirmed_lsn", "last_commit_time", "initial_copy", "last_sync_time",
        "last_sync_lag_bytes", "last_sync_lag_seconds", "last_check_time",
        "last_check_result", "last_rebuild_time", "last_rebuild_reason",
        "last_error", "last_error_time", "tables", "tables_waiting", "tables_pending"]


def status(ctx, path, env=None):
    """Runs pgmirror --status; returns (keys in order, {key: value},
    [(rows, name)])."""
    e = dict(os.environ)
    e.update(env or {})
    # without a server, and beside a running pgmirror: a --status that
    # tried to connect or waited for the writer would not finish (the
    # timeout is a hang detector)
    p = subprocess.run([ctx.binary, "--status", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=e, timeout=120, cwd=ctx.tmpdir)
    out = p.stdout.decode()
    err = p.stderr.decode()
    if p.returncode != 0:
        fail("--status exited %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, out, err))
    keys, vals, tables = [], {}, []
    for line in out.splitlines():
        key, sep, value = line.partition(": ")
        check(sep, "--status line is not 'key: value': %r" % line)
        if key == "table":
            rows, _, name = value.partition(" ")
            check(rows.isdigit() and name, "bad table line %r" % line)
            tables.append((int(rows), name))
        elif key in ("waiting", "waiting_since", "waiting_reason"):
            check(tables or vals.get("tables") == "0", "--status %r before the table lines" % key)
        elif harness.REPLAY and key.startswith("feed"):
            pass  # the replay mode's hub shows its feed (test_feed checks it)
        else:
            check(key not in vals, "--status repeats %r" % key)
            check(not tables, "--status key %r after the table lines" % key)
            keys.append(key)
            vals[key] = value
    return keys, vals, tables


def test(ctx):
    ctx.sql("""
        CREATE SCHEMA s;
        CREATE TABLE b (id int PRIMARY KEY, v text);
        CREATE TABLE s.a (id int PRIMARY KEY);
        CREATE TABLE "my table" (id int PRIMARY KEY);
        CREATE PUBLICATION pub1 FOR TABLE b, s.a;
        CREATE PUBLICATION pub2 FOR TABLE "my table";
    """)
    ctx.create_marker("pub1")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, ["pub2", "pub1"], first=True)
    ctx.sql("""
        INSERT INTO b SELECT g, 'v' FROM generate_series(1, 3) g;
        INSERT INTO s.a VALUES (1), (2);
        INSERT INTO "my table" VALUES (7);
    """)
    ctx.once(path, slot, ["pub1", "pub2"])
    st = ctx.mirror_state(path)

    # no server anywhere: PGHOST is a directory without a socket
    nowhere = {"PGHOST": os.path.join(ctx.tmpdir, "no-server"), "PGPORT": "1",
               "PGDATABASE": "nothing", "PGSERVICE": ""}
    keys, vals, tables = status(ctx, path, env=nowhere)
    check(keys == KEYS, "--status keys %s, expected %s" % (keys, KEYS))
    expect = {
        "mirror": path,
        "slot": slot,
        "publications": "pub1,pub2",
        "system_identifier": ctx.system_identifier(),
        "database": ctx.dbname,
        "confirmed_lsn": st["confirmed_lsn"],
        "last_commit_time": st["last_commit_time"],
        "initial_copy": "done",
        "tables": "4",  # every published table, pgm_marker (no change yet) too
    }
    for k, v in expect.items():
        check(vals[k] == v, "--status %s: %r, expected %r" % (k, vals[k], v))
    check(harness.parse_lsn(vals["confirmed_lsn"]) == ctx.mirror_lsn(path),
          "confirmed_lsn differs from the mirror's")
    check(vals["last_commit_time"][:4].isdigit(),
          "last_commit_time %r is not a time" % vals["last_commit_time"])
    want = [(3, "b"), (1, "my table"), (0, "pgm_marker"), (2, "s_a")]
    check(sorted(tables, key=lambda t: t[1]) == sorted(want, key=lambda t: t[1]),
          "--status tables %s, expected %s" % (tables, want))
    check([t[1] for t in tables] == sorted(t[1] for t in tables),
          "--status tables are not sorted by name: %s" % tables)

    # while a continuous pgmirror runs: read-only, no lock, current numbers
    proc = ctx.start_follow(path, slot, ["pub1", "pub2"], tag="follow")
    ctx.sql("INSERT INTO b VALUES (4, 'w'), (5, 'w')")
    lsn = ctx.catch_up(path, proc=proc)
    keys, vals, tables = status(ctx, path)
    check(proc.poll() is None, "the running pgmirror died: %s" % proc.stderr())
    check(keys == KEYS, "--status keys while running: %s" % keys)
    check(harness.parse_lsn(vals["confirmed_lsn"]) >= lsn,
          "--status while running shows %s, the mirror is at %s"
          % (vals["confirmed_lsn"], harness.format_lsn(lsn)))
    got = dict((n, r) for r, n in tables)
    check(got.get("b") == 5 and got.get("pgm_marker") == 1,
          "--status while running: tables %s" % tables)
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM: exit %s\n%s" % (rc, proc.stderr()))

    # a missing mirror file
    rc, out, err = ctx.run(["--status", ctx.path("missing.db")])
    check(rc == 1 and 'mirror "%s" does not exist' % ctx.path("missing.db") in err,
          "--status of a missing file: exit %d, %r" % (rc, err))
    check(not os.path.exists(ctx.path("missing.db")), "--status created the file")

    one_snapshot(ctx, path)
    forged_names(ctx)


def one_snapshot(ctx, path):
    """--status reads the whole mirror as of one moment. It once read each
    table in a snapshot of its own: a table that left while it read (its
    mirror table dropped, as pgmirror does) made it fail with 'no such
    table' (a full run's test_waiting_join), and a count could be newer
    than the list. Held still (tests/fault/pause_at_prepare.so) before it
    counts the first table's rows, while the test drops s_a and adds rows
    to b as pgmirror would, each in one transaction."""
    flag = ctx.path("pause.flag")
    proc = ctx.start(["--status", "--json", path], tag="paused",
                     env={"LD_PRELOAD": harness.fault_shim("pause_at_prepare"),
                          "PGMIRROR_PAUSE_SQL": 'SELECT count(*) FROM "b"',
                          "PGMIRROR_PAUSE_FLAG": flag})
    deadline = time.time() + 30 * harness.SLOW
    while not os.path.exists(flag):
        check(proc.poll() is None and time.time() < deadline,
              "--status did not reach its count of b (exit %s):\n%s" % (proc.poll(), proc.stderr()))
        time.sleep(0.05)
    con = ctx.mirror_connect(path)
    con.execute("BEGIN IMMEDIATE")
    con.execute("DROP TABLE s_a")
    con.execute("DELETE FROM pgmirror_columns WHERE table_name = 's_a'")
    con.execute("DELETE FROM pgmirror_tables WHERE table_name = 's_a'")
    con.execute("INSERT INTO b VALUES (100, 'later')")
    con.commit()
    os.unlink(flag)
    deadline = time.time() + 30 * harness.SLOW
    while proc.poll() is None:
        check(time.time() < deadline, "--status did not end after the pause")
        time.sleep(0.05)
    check(proc.poll() == 0, "--status while the mirror changed: exit %s\n%s"
          % (proc.poll(), proc.stderr()))
    rows = dict((t["name"], t["rows"]) for t in json.loads(proc.stdout())["tables"])
    check(rows.get("s_a") == 2 and rows.get("b") == 5,
          "--status mixed two moments of the mirror: %s" % rows)
    con.close()


def forged_names(ctx):
    """A control character in a name is escaped in --status's text: a
    newline in a quoted source table name once forged a line of its own."""
    name = 'x\nlast_error: forged\ty\\z\x01'
    ctx.sql('CREATE TABLE "%s" (id int PRIMARY KEY);'
            'CREATE PUBLICATION pub3 FOR TABLE "%s"' % (name, name))
    path, slot = ctx.path("forged.db"), ctx.slot("forged")
    ctx.once(path, slot, "pub3")
    rc, out, err = ctx.run(["--status", path])
    check(rc == 0, "--status exited %d: %s" % (rc, err))
    lines = [ln for ln in out.splitlines()
             if not (harness.REPLAY and ln.startswith("feed"))]  # the replay mode's hub
    check([ln for ln in lines if ln.startswith("last_error:")] == ["last_error: "],
          "a table name forged a line of --status:\n%s" % out)
    check(lines[-1] == "table: 0 x\\nlast_error: forged\\ty\\\\z\\x01",
          "the table's line is %r" % lines[-1])
    check(len(lines) == len(KEYS) + 1, "--status printed %d lines:\n%s" % (len(lines), out))


harness.main(test)

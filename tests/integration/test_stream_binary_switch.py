"""A binary stream meets a column it cannot read in binary, and goes back
to text from its last committed transaction: nothing lost, nothing twice.

Switch: a service streams in binary (-v says so) a keyed table and a
keyless REPLICA IDENTITY FULL one (where a transaction applied twice shows
as doubled rows). In a burst of transactions that the service groups into
one SQLite commit, one transaction inserts rows, adds a column of an enum
type (not read in binary) to the keyless table, and inserts, updates and
deletes with it; more transactions follow. The service must say that it
goes back to text for that column, stream on in text, and end up equal to
the source.

kill -9 during the switch, twice, on a second mirror whose tables start
with binary columns only: (1) at the new START_REPLICATION after the
switch (the fault shim kill_at_query kills the process before its second
START_REPLICATION is sent; the binary round's group was rolled back), and
(2) as soon as -v says it goes back to text, in the middle of the
transaction with the new column (tsvector). After each, a restart streams
in text (-v names the column) and the mirror equals the source. A --once
run switches the same way (int4range).
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def burst(ctx, base, table, switch_sql, after):
    """Ten small transactions, one with switch_sql in the middle of changes
    to table, then ten with `after` (a format of the id)."""
    for i in range(10):
        ctx.sql("INSERT INTO k VALUES (%d, 'k%d', %d.25)" % (base + i, i, i))
        ctx.sql("INSERT INTO %s (id, v) VALUES (%d, 'dup'), (%d, 'dup')" % (table, base + i, base + i))
    ctx.sql("BEGIN; INSERT INTO k VALUES (%d, 'in switch', 1); "
            "INSERT INTO %s (id, v) VALUES (%d, 'before the column'); %s; "
            "UPDATE k SET v = v || '!' WHERE id BETWEEN %d AND %d; "
            "DELETE FROM %s WHERE id = %d; COMMIT"
            % (base + 50, table, base + 50, switch_sql, base, base + 4, table, base + 3))
    for i in range(10):
        ctx.sql(after % {"id": base + 60 + i, "t": table})
        ctx.sql("UPDATE k SET n = n + 1 WHERE id = %d" % (base + i))


def wait_stderr(proc, text, timeout=30):
    deadline = time.time() + timeout * harness.SLOW
    while text not in proc.stderr():
        if proc.poll() is not None or time.time() > deadline:
            harness.fail("pgmirror (exit %s) did not say %r:\n%s"
                         % (proc.poll(), text, proc.stderr()))
        time.sleep(0.005)


def test(ctx):
    ctx.sql("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
    ctx.sql("CREATE TABLE k (id int PRIMARY KEY, v text, n numeric(10,2))")
    ctx.sql("CREATE TABLE f (id int NOT NULL, v text)")
    ctx.sql("ALTER TABLE f REPLICA IDENTITY FULL")
    ctx.sql("CREATE PUBLICATION pub FOR TABLE k, f")
    ctx.create_marker("pub")
    ctx.sql("INSERT INTO k SELECT g, 'c' || g, g FROM generate_series(1, 50) g")
    ctx.sql("INSERT INTO f SELECT g, 'c' FROM generate_series(1, 50) g")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")

    # --- the switch, in a service ---
    proc = ctx.start_follow(path, slot, "pub", "-v", "-s", "1", tag="switch")
    ctx.catch_up(path, proc=proc)
    check("streaming in binary" in proc.stderr(),
          "the service does not stream in binary:\n%s" % proc.stderr())
    burst(ctx, 100, "f", "ALTER TABLE f ADD COLUMN e mood; "
          "INSERT INTO f VALUES (151, 'with the column', 'happy'); "
          "UPDATE f SET e = 'sad' WHERE id = 101",
          "INSERT INTO %(t)s VALUES (%(id)d, 'after', 'ok'); "
          "UPDATE %(t)s SET e = 'happy' WHERE id = %(id)d")
    ctx.catch_up(path, proc=proc)
    err = proc.stderr()
    check('going back to text: column "public"."f"."e" of type mood' in err,
          "the service did not say that it goes back to text:\n%s" % err)
    check("streaming in text until the transaction committed at" in err,
          "the next stream is not in text:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "k", "f")
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())
    # a new run reads the catalog: the enum column keeps it in text
    _, _, err = ctx.once(path, slot, "pub", "-v")
    check('streaming in text: column "public"."f"."e" of type mood is not read in binary'
          in err, "a new run does not say why it streams in text:\n%s" % err)

    # --- kill -9 during the switch ---
    ctx.sql("CREATE TABLE g (id int NOT NULL, v text)")
    ctx.sql("ALTER TABLE g REPLICA IDENTITY FULL")
    ctx.sql("CREATE PUBLICATION pub2 FOR TABLE k, g")
    ctx.create_marker("pub2", "marker2")
    path2, slot2 = ctx.path("kill.db"), ctx.slot("kill")
    ctx.once(path2, slot2, "pub2")

    # (1) at the text stream's START_REPLICATION
    shim = {"LD_PRELOAD": harness.fault_shim("kill_at_query"),
            "PGMIRROR_KILL_QUERY": "START_REPLICATION", "PGMIRROR_KILL_NTH": "2"}
    proc = ctx.start(ctx.mirror_args(path2, slot2, "pub2", "-v", "-s", "1"), tag="kill1",
                     env=shim)
    ctx.catch_up(path2, marker="marker2", proc=proc)
    check("streaming in binary" in proc.stderr(),
          "the service does not stream in binary:\n%s" % proc.stderr())
    burst(ctx, 1000, "g", "ALTER TABLE g ADD COLUMN p point; "
          "INSERT INTO g VALUES (1151, 'with the column', '(1,2)')",
          "INSERT INTO %(t)s VALUES (%(id)d, 'after', '(3,4)'); "
          "UPDATE %(t)s SET p = '(5,6)' WHERE id = %(id)d")
    rc = proc.popen.wait(30 * harness.SLOW)
    err = proc.stderr()
    check(rc == -signal.SIGKILL and "kill_at_query: SIGKILL" in err,
          "pgmirror was not killed at its second START_REPLICATION (exit %s):\n%s" % (rc, err))
    check('going back to text: column "public"."g"."p" of type point' in err,
          "pgmirror was killed before it went back to text:\n%s" % err)
    proc = ctx.start(ctx.mirror_args(path2, slot2, "pub2", "-v", "-s", "1"), tag="after1")
    ctx.catch_up(path2, marker="marker2", proc=proc)
    check('streaming in text: column "public"."g"."p" of type point is not read in binary'
          in proc.stderr(), "the restart does not stream in text:\n%s" % proc.stderr())
    ctx.assert_mirror_equals_source(path2, "k", "g")
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())

    # (2) as soon as it says so, inside the transaction with the column
    ctx.sql("ALTER TABLE g DROP COLUMN p")
    proc = ctx.start(ctx.mirror_args(path2, slot2, "pub2", "-v", "-s", "1"), tag="kill2")
    ctx.catch_up(path2, marker="marker2", proc=proc)
    check(proc.stderr().count("streaming in binary") == 1,
          "the service does not stream in binary:\n%s" % proc.stderr())
    burst(ctx, 2000, "g", "ALTER TABLE g ADD COLUMN w tsvector; "
          "INSERT INTO g VALUES (2151, 'with the column', 'a b')",
          "INSERT INTO %(t)s VALUES (%(id)d, 'after', 'c'); "
          "UPDATE %(t)s SET w = 'd e' WHERE id = %(id)d")
    wait_stderr(proc, "going back to text")
    proc.popen.send_signal(signal.SIGKILL)
    proc.popen.wait(30 * harness.SLOW)
    proc = ctx.start(ctx.mirror_args(path2, slot2, "pub2", "-v", "-s", "1"), tag="after2")
    ctx.catch_up(path2, marker="marker2", proc=proc)
    check('streaming in text: column "public"."g"."w" of type tsvector is not read in binary'
          in proc.stderr(), "the restart does not stream in text:\n%s" % proc.stderr())
    ctx.assert_mirror_equals_source(path2, "k", "g")
    check(ctx.stop(proc) == 0, "the service did not stop cleanly:\n%s" % proc.stderr())

    # --once switches too (its next round waits for the old walsender), for
    # a column gone from the catalog by the time it starts: it stays in
    # text until that transaction is in, then the rest is in binary again
    ctx.sql("ALTER TABLE g DROP COLUMN w")
    ctx.once(path2, slot2, "pub2")
    burst(ctx, 3000, "g", "ALTER TABLE g ADD COLUMN r int4range; "
          "INSERT INTO g VALUES (3151, 'with the column', '[1,5)')",
          "INSERT INTO %(t)s VALUES (%(id)d, 'after', 'empty'); "
          "UPDATE %(t)s SET r = '[2,3]' WHERE id = %(id)d")
    ctx.sql("ALTER TABLE g DROP COLUMN r")
    ctx.sql("INSERT INTO g VALUES (3200, 'after the drop'), (3201, 'after the drop')")
    _, _, err = ctx.once(path2, slot2, "pub2", "-v")
    check("streaming in binary" in err and
          'going back to text: column "public"."g"."r" of type int4range' in err and
          "streaming in text until the transaction committed at" in err,
          "--once did not go back to text:\n%s" % err)
    ctx.assert_mirror_equals_source(path2, "k", "g")

    # a domain over a type read in binary: its values come in text, and
    # the message names the domain (the stream's Type message names its
    # base type, int4, which is read in binary)
    ctx.sql("CREATE DOMAIN posint AS int CHECK (VALUE > 0)")
    ctx.sql("ALTER TABLE g ADD COLUMN dm posint; INSERT INTO g VALUES (3300, 'domain', 5)")
    ctx.sql("ALTER TABLE g DROP COLUMN dm")
    ctx.sql("INSERT INTO g VALUES (3301, 'after the domain')")
    _, _, err = ctx.once(path2, slot2, "pub2", "-v")
    check('going back to text: column "public"."g"."dm" of type posint,' in err,
          "the switch does not name the domain:\n%s" % err)
    ctx.assert_mirror_equals_source(path2, "k", "g")


harness.main(test)

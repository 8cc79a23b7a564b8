"""A --once run from cron that finds nothing new connects to the source
once: its questions at start (the source's indexes) are asked on the
replication connection before the stream starts, not on a second, plain
connection opened for them (a backend started and authenticated on every
run of every device of a fleet, most of which find nothing to do). A
first run connects once too: the copy's catalog questions (each column's
attnum, a type's definition) are asked on the replication connection, in
the copy's snapshot, and so does a run that syncs a table that joined
the publication, on the sync's connection. A run with changes asks the
catalog on a plain connection from its first change on. Counted with pg_stat_database's sessions, which counts plain
backends; the replication connection is a walsender and does not count."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def sessions(ctx):
    # stats are flushed when a backend ends: give pgmirror's a moment
    time.sleep(1.5)
    return ctx.sql1("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text, n int);
        CREATE INDEX t_v ON t (v);
        INSERT INTO t SELECT g, 'v' || g, g FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    path, slot = ctx.path(), ctx.slot()
    before = sessions(ctx)
    ctx.once(path, slot, "pub")  # the first run, with its copy
    after = sessions(ctx)
    check(after == before, "a first run opened %d plain connections to the source, "
          "want none" % (after - before))
    for i in range(3):
        ctx.sql("INSERT INTO t VALUES (%d, 'new', 1); UPDATE t SET n = n + 1 WHERE id = %d"
                % (1000 + i, i + 1))
        ctx.once(path, slot, "pub")
        before = sessions(ctx)
        ctx.once(path, slot, "pub")  # nothing new
        after = sessions(ctx)
        check(after == before, "a --once run with nothing to do opened %d plain "
              "connections to the source, want none" % (after - before))
    # a table that joins the publication is copied on a connection of its
    # own, which answers the copy's catalog questions too
    ctx.sql("CREATE TABLE j (id int PRIMARY KEY, v text);"
            "INSERT INTO j SELECT g, 'j' || g FROM generate_series(1, 50) g;"
            "ALTER PUBLICATION pub ADD TABLE j")
    before = sessions(ctx)
    ctx.once(path, slot, "pub")
    after = sessions(ctx)
    check(after == before, "a --once run that synced a joining table opened %d plain "
          "connections to the source, want none" % (after - before))
    ctx.assert_mirror_equals_source(path, "t", "j")
    check(ctx.mirror_query(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' "
                                 "AND name LIKE 'pgmirror_index_%'")[0][0] == 1,
          "the source's index is not in the mirror")


harness.main(test)

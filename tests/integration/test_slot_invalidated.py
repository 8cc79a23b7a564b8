"""A slot invalidated by max_slot_wal_keep_size (wal_status = 'lost') while
pgmirror was not running: the next run warns, drops it, creates it again and
rebuilds the mirror from a fresh copy; the mirror equals the source and
follows changes again. Changes a server-wide setting, so runs alone."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE r (id int PRIMARY KEY, v text);
        INSERT INTO r SELECT g, 'v' || g FROM generate_series(1, 1000) g;
        CREATE TABLE filler (x text);
        CREATE PUBLICATION pub FOR TABLE r;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")

    admin = ctx.admin.cursor()
    admin.execute("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'")
    admin.execute("SELECT pg_reload_conf()")
    try:
        status = None
        for i in range(20):
            ctx.sql("INSERT INTO r VALUES (%s, 'lost from the stream')", 2000 + i)
            ctx.sql("UPDATE r SET v = 'changed' WHERE id = %s", i + 1)
            ctx.sql("INSERT INTO filler SELECT repeat('f', 1000) "
                    "FROM generate_series(1, 2000)")
            admin.execute("SELECT pg_switch_wal()")
            admin.execute("CHECKPOINT")
            admin.execute("SELECT wal_status FROM pg_replication_slots "
                          "WHERE slot_name = %s", (slot,))
            status = admin.fetchone()[0]
            if status == "lost":
                break
        check(status == "lost", "could not invalidate the slot (wal_status %s)" % status)
    finally:
        admin.execute("ALTER SYSTEM RESET max_slot_wal_keep_size")
        admin.execute("SELECT pg_reload_conf()")

    rc, out, err = ctx.once(path, slot, "pub")
    check("was invalidated" in err and "rebuilding" in err,
          "no warning about the invalidated slot:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "r")
    ctx.sql("DELETE FROM r WHERE id < 500")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "r")


harness.main(test, exclusive=True)

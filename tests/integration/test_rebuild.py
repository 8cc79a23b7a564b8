"""Starting over. A slot dropped by an administrator: the next run warns,
creates the slot again and rebuilds the mirror from a fresh copy in one
SQLite transaction, so a reader in an open read transaction keeps seeing
the old rows, and the new ones once it ends it; the mirror records the
rebuild (last_rebuild_time, last_rebuild_reason). A mirror restored from an
older copy, behind its slot, is refused (exit 1) with the --drop-slot
advice, and following that advice gives a mirror equal to the source."""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def save(path, to):
    for ext in ("", "-wal"):
        if os.path.exists(path + ext):
            shutil.copyfile(path + ext, to + ext)
        elif os.path.exists(to + ext):
            os.unlink(to + ext)


def test(ctx):
    ctx.sql("""
        CREATE TABLE r (id int PRIMARY KEY, v text);
        INSERT INTO r SELECT g, 'v' || g FROM generate_series(1, 1000) g;
        CREATE TABLE gone_later (id int PRIMARY KEY);
        INSERT INTO gone_later VALUES (1);
        CREATE PUBLICATION pub FOR TABLE r, gone_later;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.sql("UPDATE r SET v = 'x' WHERE id < 10")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "r", "gone_later")

    # An administrator drops the slot; changes go on meanwhile, and a table
    # leaves the publication.
    ctx.admin.cursor().execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    ctx.sql("""
        DELETE FROM r WHERE id > 900;
        INSERT INTO r VALUES (5000, 'new');
        UPDATE r SET v = 'y' WHERE id BETWEEN 100 AND 110;
        ALTER PUBLICATION pub DROP TABLE gone_later;
    """)
    reader = ctx.mirror_connect(path, isolation_level=None)
    reader.execute("BEGIN")
    old = reader.execute("SELECT count(*), sum(id) FROM r").fetchall()
    check(old == [(1000, 500500)], "reader's first look: %r" % old)

    rc, out, err = ctx.once(path, slot, "pub")
    check("no longer exists" in err and "rebuilding" in err,
          "no warning about the missing slot:\n%s" % err)
    check(ctx.slot_info(slot) is not None, "the slot was not created again")
    st = ctx.mirror_state(path)
    check(st["last_rebuild_reason"] == "replication slot lost (dropped on the source)" and
          st["last_rebuild_time"],
          "the rebuild is not recorded: %r at %r"
          % (st["last_rebuild_reason"], st["last_rebuild_time"]))
    now = reader.execute("SELECT count(*), sum(id) FROM r").fetchall()
    check(now == old, "a reader in its read transaction saw the rebuild: %r, "
          "then %r" % (old, now))
    reader.execute("COMMIT")
    new = reader.execute("SELECT count(*) FROM r").fetchall()
    check(new == [(901,)], "after its transaction the reader sees %r" % new)
    reader.close()
    ctx.assert_mirror_equals_source(path, "r")
    check(ctx.mirror_tables(path) == ["r"], "the rebuilt mirror has tables %r"
          % ctx.mirror_tables(path))

    # The mirror restored from an older copy: behind its slot.
    save(path, ctx.path("aside.db"))
    ctx.sql("INSERT INTO r VALUES (6000, 'after the copy')")
    ctx.once(path, slot, "pub")
    save(ctx.path("aside.db"), path)
    rc, out, err = ctx.once(path, slot, "pub", expect=1)
    check("moved past" in err and "--drop-slot" in err,
          "refusal does not say what happened and how to start over:\n%s" % err)

    # The advice works.
    rc, out, err = ctx.run(["-d", ctx.dsn, "--drop-slot", path])
    check(rc == 0, "--drop-slot: %d %s" % (rc, err))
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(path + ext):
            os.unlink(path + ext)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "r")


harness.main(test)

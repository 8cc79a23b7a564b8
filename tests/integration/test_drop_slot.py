"""--drop-slot: on a slot in use by a running pgmirror it exits 3 with a
message and changes nothing (the slot stays, the running pgmirror keeps
going); once that pgmirror stopped it drops the mirror's slot (taken from
the mirror file when -S is not given), which then is gone from
pg_replication_slots, and leaves the mirror file byte-for-byte as it was;
on a slot that does not exist it exits 1 with a message."""

import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY);
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    check(ctx.slot_info(slot) is not None, "setup: no slot")

    proc = ctx.start_follow(path, slot, "pub", tag="follow")
    ctx.sql("INSERT INTO t VALUES (1)")
    ctx.catch_up(path, proc=proc)
    check(ctx.slot_info(slot)["active"], "setup: the slot is not in use")
    rc, out, err = ctx.run(["-d", ctx.dsn, "--drop-slot", path])
    harness.log("in use: exit %d: %s" % (rc, err.strip()))
    check(rc == 3, "--drop-slot of a slot in use exited %d, expected 3\n%s" % (rc, err))
    check('replication slot "%s" is in use by another connection; stop it first'
          % slot in err, "--drop-slot in use: message %r" % err)
    check(ctx.slot_info(slot) is not None, "--drop-slot dropped a slot in use")
    ctx.sql("INSERT INTO t VALUES (2)")
    ctx.catch_up(path, proc=proc)
    check(proc.poll() is None, "the running pgmirror died: %s" % proc.stderr())
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM: exit %s\n%s" % (rc, proc.stderr()))
    ctx.wait_slot_inactive(slot)
    ctx.assert_mirror_equals_source(path, "t")

    before = sha256(path)
    rc, out, err = ctx.run(["-d", ctx.dsn, "--drop-slot", path])
    harness.log("drop: exit %d: %s" % (rc, err.strip()))
    check(rc == 0, "--drop-slot exited %d\n%s" % (rc, err))
    check(ctx.slot_info(slot) is None, "slot %s still in pg_replication_slots" % slot)
    check(sha256(path) == before, "--drop-slot changed the mirror file")
    check(not os.path.exists(path + "-wal") or os.path.getsize(path + "-wal") == 0,
          "--drop-slot wrote to the mirror's WAL")

    rc, out, err = ctx.run(["-d", ctx.dsn, "--drop-slot", path])
    harness.log("missing: exit %d: %s" % (rc, err.strip()))
    check(rc == 1, "--drop-slot of a missing slot exited %d, expected 1\n%s" % (rc, err))
    check('replication slot "%s" does not exist on the source' % slot in err,
          "--drop-slot of a missing slot: message %r" % err)
    # -S names the slot; the mirror file need not exist
    rc, out, err = ctx.run(["-d", ctx.dsn, "-S", slot + "_none", "--drop-slot",
                            ctx.path("none.db")])
    check(rc == 1 and "does not exist on the source" in err,
          "--drop-slot -S of a missing slot: exit %d, %r" % (rc, err))
    check(not os.path.exists(ctx.path("none.db")), "--drop-slot created a mirror file")


harness.main(test)

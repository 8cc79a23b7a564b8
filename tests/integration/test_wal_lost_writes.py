"""A mirror that lost its last transactions to a damaged -wal. After a
kill -9 the -wal holds the last commits (a reader, killed too, kept them
from being copied into the file); a byte changed in one of its
frames makes SQLite drop that frame and every later one without a word
(the checksum chain breaks), so the mirror reads as sound (--check: ok)
but is older than its slot. The run must refuse it (exit 1, as the
contract says of a slot that moved past the mirror), and its message
must name this cause too, not only a restore or a shared slot, and say
how to start over (--drop-slot). Which then works."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    proc = ctx.start_follow(path, slot, "pub", "-s", "1")
    ctx.catch_up(path, proc=proc)
    # a reader's snapshot keeps what follows out of the file, in the -wal
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); "
         "c.execute('BEGIN'); c.execute('SELECT count(*) FROM t').fetchall(); "
         "print('reading', flush=True); time.sleep(600)", path], stdout=subprocess.PIPE)
    check(reader.stdout.readline().strip() == b"reading", "the reader did not start")
    for i in range(5):
        ctx.sql("UPDATE t SET v = v || %s WHERE id %% 5 = %s", str(i), i)
        ctx.catch_up(path, proc=proc)
    # the slot confirmed as far as the mirror (feedback every second)
    deadline = time.time() + 30 * harness.SLOW
    while harness.parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"]) < ctx.mirror_lsn(path):
        check(time.time() < deadline, "the slot was not confirmed as far as the mirror")
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.popen.wait()
    reader.kill()
    reader.wait()
    ctx.wait_slot_inactive(slot)
    wal = path + "-wal"
    ps = 4096
    with open(wal, "rb") as f:
        data = f.read()
    frames = 0  # the frames of the -wal's current generation (its salts)
    while (32 + (frames + 1) * (ps + 24) <= len(data) and
           data[32 + frames * (ps + 24) + 8:32 + frames * (ps + 24) + 16] == data[16:24]):
        frames += 1
    check(frames > 4, "the -wal holds %d frames: the case is not made" % frames)
    with open(wal, "r+b") as f:
        f.seek(32 + (frames // 2) * (ps + 24) + 24 + 100)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0xff]))
    os.unlink(path + "-shm")  # as after a reboot: the -wal is read anew

    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"))
    harness.log("exit %d\n%s" % (rc, err))
    check(ctx.slot_final_lsn(slot) > ctx.mirror_lsn(path),
          "the mirror did not lose transactions: the case is not made")
    check(rc == 1 and "moved past" in err and "--drop-slot" in err,
          "a mirror older than its slot: exit %d\n%s" % (rc, err))
    check("-wal" in err, "the message does not name a damaged -wal as a cause:\n%s" % err)

    rc, out, err = ctx.run(["-d", ctx.dsn, "--drop-slot", path])
    check(rc == 0, "--drop-slot: exit %d\n%s" % (rc, err))
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "t", "pgm_marker")


harness.main(test)

"""A mirror file of more than 2 GiB: later runs (--once) and --status still
find and use it.  On a 32-bit system (armhf) without large file support,
stat() of such a file fails with EOVERFLOW and pgmirror took the mirror for
missing.  The file is made large by a sparse tail past SQLite's pages
(SQLite goes by the page count in its header), so the test costs no disk."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

SIZE = 5 * 2**30 // 2   # 2.5 GiB


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, 'old' FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    os.truncate(path, SIZE)
    ctx.sql("INSERT INTO t VALUES (101, 'new'); UPDATE t SET v = 'newer' WHERE id = 1")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "t")
    check(os.path.getsize(path) >= SIZE, "the mirror shrank to %d bytes"
          % os.path.getsize(path))
    p = subprocess.run([ctx.binary, "--status", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30 * harness.SLOW,
                       cwd=ctx.tmpdir)
    if p.returncode != 0:
        fail("--status of a %d-byte mirror exited %d\nstderr:\n%s"
             % (SIZE, p.returncode, p.stderr.decode(errors="replace")))
    check("table: 101 t" in p.stdout.decode(), "--status shows no 101 rows of t:\n%s"
          % p.stdout.decode())


harness.main(test)

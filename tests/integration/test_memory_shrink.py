"""Memory returns to its usual size after a huge value: a running service
(not --once) applies a transaction with a text[] value of 15 MB of control
characters (90 MB once written as a JSON array, each one as \\u0001),
then small changes; once the mirror has caught up past them, the process's
resident set (VmRSS) must be back near what it was before.  The
per-column scratch buffers used to keep the largest value ever converted
for the rest of the service's life.

Then a 40 MB bytea value, an 80 MB message in hex: libpq keeps its input
buffer as large as the largest message received for the life of the
connection, so after a message of 32 MB or more an idle service connects
again; its memory must come back too.  (A 15 MB message does not make it
connect again: the slack allows for that buffer.)"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, log  # noqa: E402

MB = 1024 * 1024
SLACK = 40 * MB


def rss(proc):
    with open("/proc/%d/status" % proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    harness.fail("no VmRSS for pid %d" % proc.pid)


def small_changes(ctx, path, proc, n):
    for i in range(n):
        ctx.sql("INSERT INTO t (id, b, a) VALUES (%s, '\\x01', '{1,2}') "
                "ON CONFLICT (id) DO UPDATE SET b = excluded.b, a = excluded.a",
                1000 + i % 10)
    ctx.catch_up(path, proc=proc, timeout=120)


def test(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, b bytea, a text[]);"
            "CREATE PUBLICATION pub FOR TABLE t;")
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    # in a sanitizer build, freed memory would wait in ASan's quarantine
    opts = os.environ.get("ASAN_OPTIONS", "")
    os.environ["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "quarantine_size_mb=0"
    ctx.once(path, slot, "pub", first=True)
    p = ctx.start_follow(path, slot, "pub")
    ctx.catch_up(path, proc=p)
    small_changes(ctx, path, p, 50)
    before = rss(p)
    log("VmRSS before: %.1f MB" % (before / MB))

    ctx.sql("INSERT INTO t (id, a) VALUES (1, ARRAY[repeat(chr(1), %s)])",
            15 * MB)
    ctx.catch_up(path, proc=p, timeout=240)
    check(ctx.mirror_query(path, "SELECT length(a) FROM t WHERE id = 1")[0][0]
          == 15 * MB * 6 + 4, "the big value did not reach the mirror")
    ctx.sql("DELETE FROM t WHERE id IN (1, 2)")
    small_changes(ctx, path, p, 50)
    after = rss(p)
    log("VmRSS after: %.1f MB" % (after / MB))
    check(after <= before + SLACK,
          "VmRSS %.1f MB after a 90 MB value and small changes, %.1f MB "
          "before: memory did not shrink back" % (after / MB, before / MB))

    ctx.sql("INSERT INTO t (id, b) VALUES (2, decode(repeat('ab', %s), 'hex'))",
            40 * MB)
    ctx.catch_up(path, proc=p, timeout=240)
    check(ctx.mirror_query(path, "SELECT length(b) FROM t WHERE id = 2")[0][0]
          == 40 * MB, "the big bytea did not reach the mirror")
    ctx.sql("DELETE FROM t WHERE id = 2")
    small_changes(ctx, path, p, 50)
    after = rss(p)
    log("VmRSS after an 80 MB message: %.1f MB" % (after / MB))
    check(after <= before + SLACK,
          "VmRSS %.1f MB after an 80 MB message and small changes, %.1f MB "
          "before: libpq's input buffer was kept" % (after / MB, before / MB))
    check(ctx.stop(p) == 0, "service exited non-zero:\n" + p.stderr())
    ctx.assert_mirror_equals_source(path, "t")


harness.main(test)

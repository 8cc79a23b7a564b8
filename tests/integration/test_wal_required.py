"""WAL is required: where SQLite cannot run the mirror in WAL mode (here a
filesystem without shared memory mappings, simulated by the LD_PRELOAD
shim tests/fault/shm_fault.so, which fails every shared mmap() of a -shm
file), pgmirror refuses with exit 1 and a message that says so and what to
do, instead of running in another journal mode or failing with a bare
"disk I/O error".  A new file is not left behind as a broken mirror; an
existing mirror is left as it was and works again where WAL works.  The
path ":memory:" (which SQLite would take for an in-memory database, in
"memory" journal mode) is refused the same way."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def files(path):
    return [s for s in ("", "-wal", "-shm", "-journal") if os.path.exists(path + s)]


def run_shim(ctx, shim, args):
    env = dict(os.environ, LD_PRELOAD=shim)
    p = subprocess.run([ctx.binary] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60, cwd=ctx.tmpdir, env=env)
    return p.returncode, p.stderr.decode(errors="replace")


def check_refusal(rc, err, path, what):
    check(rc == 1, "%s: exit %d, expected 1\nstderr:\n%s" % (what, rc, err))
    check("WAL" in err and path in err and "filesystem" in err,
          "%s: the message does not say that the mirror %s needs WAL and what "
          "to do:\n%s" % (what, path, err))


def test(ctx):
    shim = harness.fault_shim("shm_fault")
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, v text);"
            "CREATE PUBLICATION pub FOR TABLE t;"
            "INSERT INTO t VALUES (1, 'a');")

    # a new mirror where WAL is impossible
    path, slot = ctx.path(), ctx.slot()
    rc, err = run_shim(ctx, shim, ctx.mirror_args(path, slot, "pub", "--once"))
    check_refusal(rc, err, path, "new mirror without shared mmap")
    check(files(path) == [], "a new mirror that could not use WAL left %s "
          "behind" % [path + s for s in files(path)])

    # an existing mirror, then the same filesystem problem
    ctx.once(path, slot, "pub")
    ctx.sql("INSERT INTO t VALUES (2, 'b')")
    rc, err = run_shim(ctx, shim, ctx.mirror_args(path, slot, "pub", "--once"))
    check_refusal(rc, err, path, "existing mirror without shared mmap")
    check(os.path.exists(path), "an existing mirror was removed")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "t")
    check(ctx.mirror_query(path, "PRAGMA journal_mode")[0][0] == "wal",
          "mirror not in WAL mode")

    # a path SQLite opens in memory: journal mode "memory"
    rc, out, err = ctx.run(ctx.mirror_args(":memory:", ctx.slot("mem"), "pub",
                                           "--once"))
    check_refusal(rc, err, ":memory:", "mirror path :memory:")
    check(files(os.path.join(ctx.tmpdir, ":memory:")) == [],
          "the refused mirror :memory: left a file behind")


harness.main(test)

"""Command-line surface: usage errors exit 2 with a message on stderr
(unknown option, no MIRROR.db, a bad --endpos, no -P on the first run);
--help, -? and --version exit 0; an unreachable source with --once exits 1
with a message; nothing here creates a slot or leaves a mirror behind
for a usage error."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402


def expect(ctx, args, code, what, stdout_re=None):
    rc, out, err = ctx.run(args, timeout=30)
    if rc != code:
        fail("%s: pgmirror %s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s"
             % (what, " ".join(args), rc, code, out, err))
    if code != 0:
        check(err.strip(), "%s: exit %d but nothing on stderr" % (what, code))
    return out, err


def test(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY); "
            "CREATE PUBLICATION pub FOR TABLE t")
    path, slot = ctx.path(), ctx.slot()

    out, _ = expect(ctx, ["--help"], 0, "--help")
    check("MIRROR" in out.upper() or "usage" in out.lower(),
          "--help prints no usage on stdout: %r" % out[:200])
    out, _ = expect(ctx, ["-?"], 0, "-?")
    out, _ = expect(ctx, ["--version"], 0, "--version")
    check(out.strip(), "--version prints nothing on stdout")
    expect(ctx, ["-V"], 0, "-V")

    expect(ctx, ["--no-such-option", path], 2, "unknown long option")
    expect(ctx, ["-Z", path], 2, "unknown short option")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--once"], 2,
           "missing MIRROR.db")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--once", path,
                 ctx.path("second.db")], 2, "two mirror files")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--endpos",
                 "not-an-lsn", path], 2, "malformed --endpos")
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "-P", "pub", "--once",
                 "--status-interval", "abc", path], 2, "bad --status-interval")
    check(ctx.slot_info(slot) is None, "a usage error created the slot")

    # first run without -P: usage error, no slot created
    expect(ctx, ["-d", ctx.dsn, "-S", slot, "--once", "--no-initial-copy",
                 path], 2, "first run without -P")
    check(ctx.slot_info(slot) is None, "the run without -P created the slot")

    # unreachable / nonexistent source database with --once: error 1
    bad = harness.make_dsn(dbname="pgm_no_such_database_xyz",
                           host=os.environ.get("PGHOST"),
                           port=os.environ.get("PGPORT"))
    expect(ctx, ["-d", bad, "-S", slot, "-P", "pub", "--once",
                 "--no-initial-copy", ctx.path("bad.db")], 1,
           "nonexistent source database")

    # and it still works afterwards with proper arguments
    ctx.once(path, slot, "pub", first=True)
    check(ctx.slot_info(slot) is not None, "first run did not create the slot")
    # a later run may omit -P: the mirror remembers it
    rc, out, err = ctx.run(["-d", ctx.dsn, "-S", slot, "--once", path])
    check(rc == 0, "later run without -P exited %d: %s" % (rc, err))


harness.main(test)

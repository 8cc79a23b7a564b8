"""A --resync that SIGTERM stops between its tables: exit 0, and the
message says what the next run does. --resync is not remembered in the
mirror, so the next run (cron's, without --resync) leaves the tables not
synced yet as they are: the message must name them and say to run
--resync again (it said that the next run would sync them, and the
tables changed by hand stayed wrong). That run mends them."""

import os
import shlex
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ["r1", "r2", "r3"]


def tamper(ctx, path):
    con = ctx.mirror_connect(path)
    for t in TABLES:
        con.execute("UPDATE %s SET v = 'by hand' WHERE id < 10" % t)
    con.commit()
    con.close()


def by_hand(ctx, path):
    return {t: ctx.mirror_query(path, "SELECT count(*) FROM %s WHERE v = 'by hand'" % t)[0][0]
            for t in TABLES}


def test(ctx):
    for t in TABLES:
        ctx.sql("CREATE TABLE %s (id int PRIMARY KEY, v text); INSERT INTO %s SELECT g, "
                "md5(g::text) FROM generate_series(1, 300000) g" % (t, t))
    ctx.sql("CREATE PUBLICATION pub FOR TABLE %s" % ", ".join(TABLES))
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", timeout=120)
    tamper(ctx, path)

    # SIGTERM once the first table is synced again, while the next copies
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "--resync", "--once"), tag="resync")
    deadline = time.time() + 60 * harness.SLOW
    while "synced again" not in proc.stderr():
        check(proc.poll() is None, "--resync ended before a table was synced:\n%s"
              % proc.stderr())
        check(time.time() < deadline, "no table synced again within 60 s:\n%s" % proc.stderr())
        time.sleep(0.01)
    rc = ctx.stop(proc, signal.SIGTERM)
    err = proc.stderr()
    harness.log("stopped --resync: exit %s\n%s" % (rc, err))
    check(rc == 0, "SIGTERM: exit %s\n%s" % (rc, err))
    left = sorted(t for t, n in by_hand(ctx, path).items() if n > 0)
    check("stopped by a signal" in err and left,
          "the signal did not land between the tables (all synced: %s):\n%s" % (not left, err))
    check("synced on the next run" not in err,
          "the message says the next run syncs the tables --resync named:\n%s" % err)
    check("--resync=%s" % ",".join(left) in err,
          "the message does not say to run --resync=%s again:\n%s" % (",".join(left), err))

    # the next cron run leaves them; the --resync the message gives mends them
    ctx.once(path, slot, "pub")
    check(sorted(t for t, n in by_hand(ctx, path).items() if n > 0) == left,
          "a run without --resync changed the tables changed by hand: %s" % by_hand(ctx, path))
    # as written: the command the message gives, with --once
    line = [ln for ln in err.splitlines() if "--resync is not remembered" in ln][0]
    words = shlex.split(line.split(", run ", 1)[1].rsplit(" again", 1)[0])
    check(words[0] == "pgmirror" and words[-1] == path and "-d" in words,
          "the message's command is not whole: %r" % words)
    rc, out, err = ctx.run(words[1:] + ["--once"], timeout=120)
    check(rc == 0, "the message's command, run as written: exit %d\n%s" % (rc, err))
    ctx.assert_mirror_equals_source(path, *TABLES)


harness.main(test)

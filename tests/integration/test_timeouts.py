"""Server-side timeouts that a role or database sets (statement_timeout,
lock_timeout, idle_in_transaction_session_timeout, and transaction_timeout
on 17+) must not reach pgmirror's own connections: each one here is small
enough to kill the initial copy, and the first run must still complete.
(Issue 8, item 7.)"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROWS = 200000


def error_line(err):
    """The line of pgmirror's stderr that says what went wrong."""
    lines = [ln for ln in err.splitlines() if "error:" in ln] or err.splitlines()[-1:]
    return lines[0] if lines else "(no message)"


def first_run(ctx, tag, soft, dsn=None, env=None):
    """A first run (initial copy) on a fresh mirror; the mirror must equal
    the source."""
    path, slot = ctx.path(tag + ".db"), ctx.slot(tag)
    args = ["-d", dsn or ctx.dsn, "-S", slot, "-P", "pub", "--once", path]
    rc, out, err = ctx.run(args, timeout=240, env=env)
    if soft.check(rc == 0, "%s: first run exited %d: %s" % (tag, rc, error_line(err))):
        soft("%s: mirror equals source" % tag, ctx.assert_mirror_equals_source,
             path, "big", "small")


def wait_lock_waiter(ctx, thread, timeout=60):
    """Until a pgmirror backend waits for a lock: on big, or (slot
    creation) on the locker's transaction. False: pgmirror ended first, or
    it did not come to wait in time."""
    deadline = time.time() + timeout
    while thread.is_alive():
        n = ctx.sql1("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a "
                     "USING (pid) WHERE NOT l.granted AND a.application_name = 'pgmirror'")
        if n > 0:
            return True
        if time.time() > deadline:
            return False
        time.sleep(0.05)
    return False


def test(ctx):
    soft = harness.Soft()
    db = harness.qident(ctx.dbname)
    ctx.sql("CREATE TABLE big (id int PRIMARY KEY, t text);"
            "CREATE TABLE small (id int PRIMARY KEY, t text);"
            "INSERT INTO big SELECT g, repeat('x', 40) || g FROM generate_series(1, %d) g;"
            "INSERT INTO small SELECT g, 's' || g FROM generate_series(1, 1000) g;"
            "CREATE PUBLICATION pub FOR TABLE big, small" % ROWS)
    ctx.raw_cursor()  # the harness's own connections predate the settings

    # statement_timeout on the database: the copy of big takes longer; the
    # user's own options in -d still apply, but not their timeout
    ctx.sql("ALTER DATABASE %s SET statement_timeout = '100ms'" % db)
    try:
        first_run(ctx, "statement", soft, dsn=ctx.dsn + " options='-c search_path=public "
                  "-c statement_timeout=50ms'")
    finally:
        ctx.sql("ALTER DATABASE %s RESET statement_timeout" % db)

    # idle_in_transaction_session_timeout on the role: the copy's snapshot
    # transaction idles while pgmirror stores what it received
    ctx.sql("ALTER ROLE CURRENT_USER IN DATABASE %s "
            "SET idle_in_transaction_session_timeout = '1ms'" % db)
    try:
        first_run(ctx, "idle", soft, env={"PGOPTIONS": "-c lock_timeout=1ms"})
    finally:
        ctx.sql("ALTER ROLE CURRENT_USER IN DATABASE %s "
                "RESET idle_in_transaction_session_timeout" % db)

    # lock_timeout: the copy waits for a lock another session holds
    ctx.sql("ALTER DATABASE %s SET lock_timeout = '1ms'" % db)
    locker = ctx.connect(autocommit=False)
    try:
        # the locker itself waits: it connects after the database's 1 ms
        # lock_timeout, and the previous step's backends (or autovacuum) may
        # still hold a lock on big for a moment
        locker.cursor().execute("SET lock_timeout = 0")
        locker.cursor().execute("LOCK TABLE big IN ACCESS EXCLUSIVE MODE")
        result = {}
        path = ctx.path("lock.db")
        slot = ctx.slot("lock")

        def go():
            result["r"] = ctx.run(ctx.mirror_args(path, slot, "pub", "--once"),
                                  timeout=240)
        t = threading.Thread(target=go, daemon=True)
        t.start()
        waited = wait_lock_waiter(ctx, t)
        locker.rollback()
        t.join(240)
        check(not t.is_alive(), "lock: pgmirror did not finish")
        rc, out, err = result["r"]
        soft.check(waited, "lock: pgmirror never waited for a lock")
        if soft.check(rc == 0, "lock: first run exited %d: %s" % (rc, error_line(err))):
            soft("lock: mirror equals source", ctx.assert_mirror_equals_source,
                 path, "big", "small")
    finally:
        locker.close()
        ctx.sql("ALTER DATABASE %s RESET lock_timeout" % db)

    # transaction_timeout (PostgreSQL 17+) on the role
    if ctx.server_version >= 170000:
        ctx.sql("ALTER ROLE CURRENT_USER IN DATABASE %s "
                "SET transaction_timeout = '100ms'" % db)
        try:
            first_run(ctx, "transaction", soft)
        finally:
            ctx.sql("ALTER ROLE CURRENT_USER IN DATABASE %s "
                    "RESET transaction_timeout" % db)
    soft.done()


harness.main(test)

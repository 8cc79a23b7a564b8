"""A service's retries fit the link (issue 31, item 4). Through a loopback
proxy (linkproxy.py) that cuts every connection every few seconds:

- streaming, while the source commits: every connection worked (it
  streamed), so each cut is followed by a try at once ('reconnecting
  now'): the waits -v logs do not grow, the proxy sees each new connection
  within a couple of seconds of its cut, and the mirror keeps up (it holds
  everything a few seconds after the load stops);
- a first sync of many tables and a bigger one, held to a rate so that it
  needs several connections: each try commits tables or parts of the big
  one (about 3 MB, more than a connection carries), so the waits do not
  grow either, and the mirror ends equal to the source;
- a server that refuses connections (ALLOW_CONNECTIONS false) still gets a
  growing backoff: at once after the cut of a connection that worked, then
  1, 2, 4, 8 s; once it accepts again, the mirror catches up.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check, fail  # noqa: E402

RETRY_RE = re.compile(r"(reconnecting|trying again) (now|in (\d+) s)")


def waits(proc):
    """The waits (seconds) the service announced, in order."""
    return [int(m.group(3) or 0) for m in RETRY_RE.finditer(proc.stderr())]


def wait_waits(proc, n, timeout):
    deadline = time.time() + timeout
    while len(waits(proc)) < n:
        if proc.poll() is not None:
            fail("pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
        if time.time() > deadline:
            fail("%d retries not within %ss (waits %r):\n%s"
                 % (n, timeout, waits(proc), proc.stderr()))
        time.sleep(0.1)
    return waits(proc)


def link_dsn(ctx, link):
    """(the password comes from PGPASSWORD, as the harness's -d does)"""
    return harness.make_dsn(dbname=ctx.dbname, host=link.host, port=link.port,
                            user=os.environ.get("PGUSER"))


def service(ctx, link, path, slot, tag, pub="pub"):
    return ctx.start(["-d", link_dsn(ctx, link), "-S", slot, "-P", pub, "-v",
                      "-s", "1", path], tag=tag)


def reconnect_gaps(link):
    """Seconds from each cut of a connection to the next connection the
    proxy passed on."""
    gaps = []
    for cut, n in zip(link.cut_times, link.cut_counts):
        after = [t for t in link.conn_times if t >= cut]
        if after and n > 0:
            gaps.append(after[0] - cut)
    return gaps


def stream_cut(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    def commit(conn, i):
        conn.cursor().execute("INSERT INTO t VALUES (%s, repeat('v', 200))", (i,))
        conn.commit()
        time.sleep(0.02)

    with linkproxy.LinkProxy(cut_every=3) as link:
        proc = service(ctx, link, path, slot, "stream")
        ctx.catch_up(path, proc=proc)
        load = harness.Workload(ctx, commit)
        load.start()
        wait_waits(proc, 4, 60)
        n = load.stop()
        t0 = time.time()
        ctx.catch_up(path, proc=proc, timeout=30)
        behind = time.time() - t0
        gaps = reconnect_gaps(link)
        link_cuts = len(link.cut_times)
    seen = waits(proc)
    harness.log("stream: %d commits, %d cuts, waits %r, reconnected after %s s, "
                "caught up %.1f s after the load" % (n, link_cuts, seen,
                                                     ", ".join("%.1f" % g for g in gaps), behind))
    ctx.stop(proc)
    check(max(seen) <= 1, "the reconnect waits grow although every connection "
          "streamed: %r" % seen)
    check(max(gaps or [0]) < 3, "a new connection came %r s after the cuts" % gaps)
    check(behind < 8, "the mirror needed %.1f s to catch up after the load" % behind)
    ctx.assert_mirror_equals_source(path, "t")


def wait_copied(ctx, path, proc, tables, timeout):
    """Waits until the first run is done and every table holds its rows
    (the source does not change meanwhile); fails once the mirror's rows
    stood still for timeout seconds."""
    rows = dict((t, ctx.sql1("SELECT count(*) FROM %s" % t)) for t in tables)

    def step():
        try:
            have = tuple(ctx.mirror_query(path, "SELECT count(*) FROM %s" % t)[0][0]
                         for t in tables)
            done = ctx.mirror_state(path)["initial_copy_done"]
        except Exception:  # noqa: BLE001 - not there yet
            have, done = None, False
        if done and have == tuple(rows[t] for t in tables):
            return True, have
        if proc.poll() is not None:
            fail("the first sync did not finish (exit %s):\n%s" % (proc.poll(), proc.stderr()))
        return None, (have, ctx.mirror_mark(path))

    harness.wait_moving("the first sync to finish", step, quiet=timeout, interval=0.2,
                        detail=lambda: " (exit %s):\n%s" % (proc.poll(), proc.stderr()))


def sync_cut(ctx):
    tables = ["s%d" % i for i in range(13)]
    for i, t in enumerate(tables):
        ctx.sql("CREATE TABLE %s (id int PRIMARY KEY, v text);"
                "INSERT INTO %s SELECT g, md5(g::text) || repeat('s', 300) "
                "FROM generate_series(1, 1500) g" % (t, t))
    ctx.sql("INSERT INTO s12 SELECT g, md5(g::text) || repeat('b', 300) "
            "FROM generate_series(1501, 9000) g")
    ctx.sql("CREATE PUBLICATION pubs FOR TABLE %s" % ", ".join(tables))
    ctx.create_marker("pubs", "pgm_marker_s")
    path, slot = ctx.path("sync.db"), ctx.slot("sync")
    # about 9 MB at 1 MB/s, cut every 2.5 s: four tries at least
    with linkproxy.LinkProxy(rate=1000000, cut_every=2.5) as link:
        proc = service(ctx, link, path, slot, "sync", "pubs")
        wait_copied(ctx, path, proc, tables, 120)
        ctx.catch_up(path, "pgm_marker_s", proc=proc)
        link_cuts = len(link.cut_times)
    seen = waits(proc)
    harness.log("sync: %d cuts, waits %r" % (link_cuts, seen))
    ctx.stop(proc)
    check(len(seen) >= 3, "the sync was not cut: waits %r\n%s" % (seen, proc.stderr()))
    # a try that copied nothing (on a loaded machine its start can outlast
    # the 2.5 s between cuts) is backed off, rightly; what must not happen
    # is the waits growing on across tries that copied something: after
    # such a try the wait starts again from 0
    check(max(seen) <= 2 or any(a > 0 and b == 0 for a, b in zip(seen, seen[1:])),
          "the waits grow although tries copied tables or parts: %r" % seen)
    ctx.assert_mirror_equals_source(path, *tables)


def refused(ctx):
    path, slot = ctx.path(), ctx.slot()
    db = harness.qident(ctx.dbname)
    with linkproxy.LinkProxy() as link:
        proc = service(ctx, link, path, slot, "refused")
        ctx.catch_up(path, proc=proc)
        try:
            ctx.admin.cursor().execute("ALTER DATABASE %s ALLOW_CONNECTIONS false" % db)
            before = len(waits(proc))
            link.cut()
            ctx.conn.cursor().execute("INSERT INTO t VALUES (-1, 'while refused')")
            seen = wait_waits(proc, before + 5, 60)[before:]
        finally:
            ctx.admin.cursor().execute("ALTER DATABASE %s ALLOW_CONNECTIONS true" % db)
        ctx.catch_up(path, proc=proc, timeout=60)
    harness.log("refused: waits %r" % seen)
    ctx.stop(proc)
    check(seen[0] == 0, "the cut of a connection that worked is not retried at once: %r" % seen)
    check(all(b > a for a, b in zip(seen[1:], seen[2:])) and seen[-1] >= 8,
          "a refusing server is not backed off: waits %r" % seen)
    ctx.assert_mirror_equals_source(path, "t")


def test(ctx):
    # refused goes on with stream_cut's mirror
    harness.run_parts(ctx, {"stream_cut": stream_cut, "refused": refused,
                            "sync_cut": sync_cut})


harness.main(test)

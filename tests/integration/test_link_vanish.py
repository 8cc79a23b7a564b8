"""A link that vanishes without a reset (a mobile link dropping, a NAT
entry expiring: packets simply stop, no RST, no FIN) is noticed within
the link's bound, the connection's tcp_user_timeout (pgmirror's default
30 s unless -d sets one), through a loopback proxy that turns into a black
hole (linkproxy.py's blackhole(): open connections and new ones hear
nothing, the sockets stay open):

- a service streaming, with the default bound: it says the link seems
  gone and tries again; once the link is back it catches up;
- a --once run streaming a backlog, and one copying a table in parts,
  with tcp_user_timeout=4000 in -d: each exits 1 within the bound and a
  little, saying so; the next run (link back) finishes, the copy going on
  from its last part;
- a --once run connecting into the black hole: connect_timeout (30 s by
  default) ends it with exit 1;
- a server merely slow is not a vanished link: a first --once run with
  tcp_user_timeout=2000 whose snapshot and copy wait 8 s for a lock
  another session holds asks the server on a new connection whether it is
  there, waits, and finishes (exit 0).

The server keeps the old connections of a vanished link until its own
timeouts (wal_sender_timeout), holding the slot; the test ends them as
that timeout would (or the proxy's end closes them), so that the next try
may take the slot.

Before, the service and both --once runs waited on the silent link for
ever (here: more than 60 s), and the default TCP settings would have
taken about two hours to notice a link that drops packets.
"""

import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check, fail  # noqa: E402

BOUND = 4.0        # tcp_user_timeout=4000 in -d of the --once runs
DEFAULT_BOUND = 30.0
MARGIN = 4.0       # a loop's turn, the process's exit
OLD_WAIT = 60.0    # an old binary that never notices fails after this
GONE = "the link seems gone"


def link_dsn(ctx, link, **extra):
    return harness.make_dsn(dbname=ctx.dbname, host=link.host, port=link.port,
                            user=os.environ.get("PGUSER"), **extra)


def end_orphans(ctx, link, slot):
    """Ends the server's side of the connections the vanished link left
    behind (the server would, after wal_sender_timeout): the backends
    whose client is one of the proxy's silent connections; then waits
    until slot is free."""
    with link.lock:
        ports = [c.server.getsockname()[1] for c in link.conns
                 if c.silent and c.server is not None and c.server.family != socket.AF_UNIX]
    if ports:
        ctx.admin.cursor().execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE client_port = ANY(%s)", (ports,))
    ctx.wait_slot_inactive(slot)


def wait_exit(proc, limit, what):
    """Seconds until proc exits; failure past limit (the process killed)."""
    t0 = time.time()
    while proc.poll() is None:
        if time.time() - t0 > limit:
            proc.popen.kill()
            proc.popen.wait()
            fail("%s: still waiting on the silent link after %.0f s:\n%s"
                 % (what, limit, proc.stderr()[-3000:]))
        time.sleep(0.1)
    return time.time() - t0


def wait_text(proc, pattern, limit, what, since=0):
    """Seconds until pattern shows in proc's stderr (after offset since)."""
    t0 = time.time()
    while not re.search(pattern, proc.stderr()[since:]):
        if proc.poll() is not None:
            fail("%s: pgmirror exited %s:\n%s" % (what, proc.poll(), proc.stderr()))
        if time.time() - t0 > limit:
            fail("%s: not noticed after %.0f s:\n%s" % (what, limit, proc.stderr()[-3000:]))
        time.sleep(0.1)
    return time.time() - t0


def _timers(out, pid):
    """The keepalive timers (seconds) of pid's TCP connections in ss's output."""
    found = []
    for line in out.splitlines():
        if "pid=%d," % pid not in line:
            continue
        m = re.search(r"timer:\(keepalive,(?:(\d+)min)?([\d.]+)(ms|sec)?", line)
        if m:
            secs = float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
            found.append(int(m.group(1) or 0) * 60 + secs)
    return found


def stream_service(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, v text);"
            "CREATE PUBLICATION pub FOR TABLE t")
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    with linkproxy.LinkProxy() as link:
        proc = ctx.start(["-d", link_dsn(ctx, link), "-S", slot, "-P", "pub", "-v",
                          "-s", "1", path], tag="service")
        ctx.sql("INSERT INTO t SELECT g, 'before' FROM generate_series(1, 100) g")
        ctx.catch_up(path, proc=proc)
        # the kernel's layer: pgmirror's keepalive defaults (10 s of
        # silence, where the system's default is two hours)
        for _ in range(50):  # a socket with data in flight shows another timer
            timers = _timers(subprocess.run(["ss", "-tnpo", "state", "established"],
                                            capture_output=True, text=True).stdout, proc.pid)
            if timers:
                break
            time.sleep(0.1)
        check(timers and max(timers) <= 10.5,
              "pgmirror's connections have keepalive timers %r, not at most 10 s" % timers)
        since = len(proc.stderr())
        link.blackhole()
        noticed = wait_text(proc, GONE, max(OLD_WAIT, DEFAULT_BOUND + MARGIN),
                            "a service streaming when the link vanished", since)
        harness.log("service: noticed a vanished link after %.1f s (bound %.0f s)"
                    % (noticed, DEFAULT_BOUND))
        check(noticed <= DEFAULT_BOUND + MARGIN, "noticed after %.1f s, more than %.0f + %.0f s"
              % (noticed, DEFAULT_BOUND, MARGIN))
        check(proc.poll() is None, "the service exited:\n%s" % proc.stderr())
        line = [ln for ln in proc.stderr()[since:].splitlines() if GONE in ln][0]
        check("nothing heard from the source for" in line and "tcp_user_timeout" in line,
              "the message does not say what happened and what sets the wait: %s" % line)
        link.restore()
        end_orphans(ctx, link, slot)
        ctx.sql("INSERT INTO t SELECT g, 'after' FROM generate_series(101, 200) g")
        ctx.catch_up(path, proc=proc, timeout=90)
    ctx.stop(proc)
    ctx.assert_mirror_equals_source(path, "t")


def once_vanish(ctx, args, env, started, what):
    """Runs pgmirror --once args through a proxy at 400 kB/s with
    tcp_user_timeout=BOUND, turns the proxy into a black hole once
    started(proc, link) says so, and checks the run exits 1 within the
    bound saying the link seems gone; its stderr."""
    with linkproxy.LinkProxy(rate=400000, down_only=True) as link:
        dsn = link_dsn(ctx, link, tcp_user_timeout=int(BOUND * 1000))
        proc = ctx.start(["-d", dsn, "--once"] + args, tag=what.split()[0], env=env)
        deadline = time.time() + 60
        while not started(proc, link):
            check(proc.poll() is None and time.time() < deadline,
                  "%s: not started (exit %s):\n%s" % (what, proc.poll(), proc.stderr()))
            time.sleep(0.05)
        link.blackhole()
        took = wait_exit(proc, OLD_WAIT, "--once " + what)
        link.restore()
    err = proc.stderr()
    harness.log("--once %s: exit %s %.1f s after the link vanished (bound %.0f s)"
                % (what, proc.poll(), took, BOUND))
    check(proc.poll() == 1, "exit %s, not 1:\n%s" % (proc.poll(), err))
    check(took <= BOUND + MARGIN, "exited %.1f s after the link vanished, more than %.0f + "
          "%.0f s" % (took, BOUND, MARGIN))
    check(GONE in err and "%d ms" % (BOUND * 1000) in err and "nor on a new connection" in err,
          "the message does not say it:\n%s" % err[-3000:])
    return err


def once_stream(ctx):
    ctx.sql("CREATE TABLE s (id int PRIMARY KEY, v text);"
            "CREATE PUBLICATION pubs FOR TABLE s")
    ctx.create_marker("pubs", "pgm_marker_s")
    path, slot = ctx.path("stream.db"), ctx.slot("stream")
    ctx.once(path, slot, "pubs", first=True)
    ctx.sql("INSERT INTO s SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 40000) g")
    # about 12 MB of changes at 400 kB/s: it streams for long
    once_vanish(ctx, ["-S", slot, "-P", "pubs", path], None,
                lambda proc, link: link.stats()["bytes_down"] >= 1000000, "streaming")
    ctx.wait_slot_inactive(slot)  # the proxy closed what it held: the server sees EOF
    ctx.once(path, slot, "pubs")
    ctx.assert_mirror_equals_source(path, "s")


def once_copy(ctx):
    ctx.sql("CREATE TABLE c (id int PRIMARY KEY, v text);"
            "INSERT INTO c SELECT g, repeat(md5(g::text), 6) FROM generate_series(1, 40000) g;"
            "CREATE PUBLICATION pubc FOR TABLE c")
    path, slot = ctx.path("copy.db"), ctx.slot("copy")
    env = {"PGMIRROR_TEST_PART_ROWS": "2000"}
    once_vanish(ctx, ["-S", slot, "-P", "pubc", "-v", path], env,
                lambda proc, link: "rows stored (a part" in proc.stderr() and
                link.stats()["bytes_down"] >= 2000000, "copying a table in parts")
    ctx.wait_slot_inactive(slot)
    _, _, err = ctx.once(path, slot, "pubc", "-v", env=env)
    check("goes on after the" in err,
          "the next run did not go on from the parts copied:\n%s" % err[-3000:])
    ctx.assert_mirror_equals_source(path, "c")


def once_connect(ctx):
    path, slot = ctx.path("connect.db"), ctx.slot("connect")
    with linkproxy.LinkProxy() as link:
        link.blackhole()
        t0 = time.time()
        rc, _, err = ctx.run(["-d", link_dsn(ctx, link), "-S", slot, "-P", "pub", "--once",
                              path], timeout=OLD_WAIT)
        took = time.time() - t0
    harness.log("--once connecting: exit %d after %.1f s" % (rc, took))
    check(rc == 1 and "connect_timeout" in err, "exit %d:\n%s" % (rc, err))
    check(took <= 30 + MARGIN, "gave up after %.1f s, not about 30" % took)


def slow_server(ctx):
    ctx.sql("CREATE TABLE w (id int PRIMARY KEY, v text);"
            "INSERT INTO w SELECT g, 'x' FROM generate_series(1, 1000) g;"
            "CREATE PUBLICATION pubw FOR TABLE w")
    path, slot = ctx.path("slow.db"), ctx.slot("slow")
    dsn = harness.make_dsn(dbname=ctx.dbname, host=os.environ.get("PGHOST"),
                           port=os.environ.get("PGPORT"), user=os.environ.get("PGUSER"),
                           tcp_user_timeout=2000)
    locker = ctx.connect(autocommit=False)
    locker.cursor().execute("LOCK TABLE w IN ACCESS EXCLUSIVE MODE")
    proc = ctx.start(["-d", dsn, "-S", slot, "-P", "pubw", "--once", "-v", path], tag="slow")
    time.sleep(8)
    check(proc.poll() is None, "pgmirror gave up on a server that was only slow (exit %s):\n%s"
          % (proc.poll(), proc.stderr()))
    locker.rollback()
    locker.close()
    took = wait_exit(proc, 60, "--once after the lock")
    err = proc.stderr()
    harness.log("slow server: finished %.1f s after the lock was released" % took)
    check(proc.poll() == 0, "exit %s:\n%s" % (proc.poll(), err))
    check("asking it on another connection" in err,
          "the wait was never checked on a new connection:\n%s" % err)
    check(GONE not in err, "a slow server was taken for a vanished link:\n%s" % err)
    ctx.assert_mirror_equals_source(path, "w")


def test(ctx):
    harness.run_parts(ctx, {"once_stream": once_stream, "once_copy": once_copy,
                            "slow_server": slow_server, "stream_service": stream_service,
                            "once_connect": once_connect})


harness.main(test)

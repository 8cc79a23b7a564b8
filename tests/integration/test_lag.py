"""The lag a service's -v lines show is the server's own position against
the mirror's (issue 22, item 4), not the walsender's.

frozen: the replication connection goes silent (a proxy between pgmirror
and the server stops forwarding it, as a NAT that dropped a long-lived
connection's state) while the plain connection still works and rows are
committed: within seconds -v says how long nothing was heard, its lag
shows at least the bytes committed since, and pgmirror does not exit; once
the link flows again it catches up.

decoding: while the walsender decodes a big transaction on an unpublished
table (nothing for the mirror, so keepalives only, each at the walsender's
own position, which the mirror then confirms), the lag shows the bytes the
server is ahead, and falls back to 0 once the walsender is through. A
service meanwhile does not claim, in last_sync_time, to be in sync past
the big commit before the mirror has reached it.

PARTS=frozen,decoding runs only those."""

import datetime
import os
import re
import select
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail, fmt, parse_lsn  # noqa: E402

PROGRESS = re.compile(r"^pgmirror: progress: \d+ transactions, \d+ rows; "
                      r"lag (\d+) bytes, (\d+\.\d) s; confirmed [0-9A-F]+/[0-9A-F]+$")
SILENT = re.compile(r"^pgmirror: nothing heard from the server for (\d+) s")


class Proxy:
    """A TCP port on 127.0.0.1 forwarding each connection to the server;
    frozen: the replication connections (told by their startup packet,
    sent in the clear with sslmode=disable) forward nothing either way,
    the plain ones go on."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.frozen = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            c, _ = self.sock.accept()
            host = os.environ.get("PGHOST") or "localhost"
            port = os.environ.get("PGPORT") or "5432"
            if host.startswith("/"):
                u = socket.socket(socket.AF_UNIX)
                u.connect(os.path.join(host, ".s.PGSQL." + port))
            else:
                u = socket.create_connection((host, int(port)))
            threading.Thread(target=self._pump, args=(c, u), daemon=True).start()

    def _pump(self, a, b):
        replication = None
        try:
            while True:
                r, _, _ = select.select([a, b], [], [], 0.05)
                if replication and self.frozen:
                    continue
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    if replication is None and s is a:
                        replication = b"replication\0" in data
                    (b if s is a else a).sendall(data)
        except OSError:
            pass
        finally:
            a.close()
            b.close()


def lines_since(proc, n):
    return proc.stderr().splitlines()[n:]


def progress(lines):
    """(bytes, seconds) of each progress line."""
    out = []
    for l in lines:
        if "progress:" in l:
            m = PROGRESS.match(l)
            check(m, "progress line not in the documented form: %r" % l)
            out.append((int(m.group(1)), float(m.group(2))))
    return out


def setup(ctx):
    ctx.sql("""
        CREATE TABLE pubd (id int PRIMARY KEY, pad text);
        CREATE TABLE noise (id int, pad text);
        CREATE PUBLICATION pub FOR TABLE pubd;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    return path, slot


def part_frozen(ctx, path, slot):
    proxy = Proxy()
    dsn = harness.make_dsn(dbname=ctx.dbname, host="127.0.0.1", port=proxy.port,
                           user=os.environ.get("PGUSER"),
                           sslmode="disable", gssencmode="disable")
    proc = ctx.start(["-d", dsn, "-S", slot, "-v", "-s", "1", path], tag="frozen")
    ctx.catch_up(path, proc=proc)
    proxy.frozen = True
    mark = len(proc.stderr().splitlines())
    # the mirror may still store a keepalive that was under way, never
    # more than the server had before the rows
    before = ctx.source_flush_lsn()
    ctx.sql("INSERT INTO pubd SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g")
    ahead = ctx.source_flush_lsn() - before
    t0 = time.time()
    deadline = t0 + 10 * harness.SLOW
    while True:
        lines = lines_since(proc, mark)
        silent = [int(m.group(1)) for m in map(SILENT.match, lines) if m]
        p = progress(lines)
        if silent and silent[-1] >= 3 and p and p[-1][0] >= ahead:
            break
        if proc.poll() is not None:
            fail("pgmirror exited %s under a frozen link:\n%s" % (proc.poll(), proc.stderr()))
        if time.time() > deadline:
            fail("under a frozen replication link, within %.0f s -v did not say how long "
                 "nothing was heard (>= 3 s) with a lag of at least the %d bytes committed "
                 "since; lines since the freeze:\n%s"
                 % (10 * harness.SLOW, ahead, "\n".join(lines)))
        time.sleep(0.1)
    harness.log("frozen: after %.1f s: %s" % (time.time() - t0, [l for l in lines if
                                                                   "progress" in l][-1]))
    check(p[-1][1] >= 2.0, "a silent link's lag in seconds: %s" % (p[-1],))
    check(ctx.mirror_query(path, "SELECT count(*) FROM pubd") == [(0,)],
          "rows came through a frozen link")
    proxy.frozen = False
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, "pubd", "pgm_marker")
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM: exit %d\n%s" % (rc, proc.stderr()))


def utc(text):
    return datetime.datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp() + (float("0" + text[19:]) if len(text) > 19
                                                     else 0)


def part_decoding(ctx, path, slot):
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "-v", "-s", "1"), tag="decoding",
                     env={"PGMIRROR_TEST_SYNC_SECS": "1"})
    ctx.catch_up(path, proc=proc)
    mark = len(proc.stderr().splitlines())
    m0 = ctx.mirror_lsn(path)
    t0 = time.time()
    ctx.sql("INSERT INTO noise SELECT g, 'n' FROM generate_series(1, 2000000) g")
    committed = time.time()
    end = ctx.source_flush_lsn()
    harness.log("decoding: 2,000,000 rows committed in %.1f s, %d bytes of WAL"
                % (committed - t0, end - m0))
    # the service's health while the walsender decodes: never in sync
    # past the big commit before the mirror has reached it
    states = []
    deadline = time.time() + 30 * harness.SLOW
    while True:
        st = ctx.mirror_state(path)
        states.append((time.time(), st["last_sync_time"], parse_lsn(st["confirmed_lsn"])))
        if states[-1][2] >= end:
            break
        if proc.poll() is not None or time.time() > deadline:
            fail("the mirror did not reach %s (exit %s):\n%s" % (fmt(end), proc.poll(),
                                                                 proc.stderr()))
        time.sleep(0.1)
    reached = time.time()
    harness.log("decoding: the mirror reached the commit %.1f s after it" % (reached - committed))
    for seen, sync, lsn in states:
        check(sync is None or utc(sync) < committed or lsn >= end,
              "last_sync_time %s (read at %.1f s) says the mirror was in sync after the big "
              "commit (at %.1f s) while it was at %s, before its end %s"
              % (sync, seen - t0, committed - t0, fmt(lsn), fmt(end)))
    # the lag while the walsender was busy: the server's bytes ahead
    lines = lines_since(proc, mark)
    p = progress(lines)
    check(any(b >= 1 << 20 for b, _ in p),
          "while the walsender decoded %d bytes of unpublished WAL for %.1f s, no -v line "
          "showed even 1 MB of them as lag:\n%s"
          % (end - m0, reached - t0, "\n".join(l for l in lines if "progress" in l)))
    # and 0 once through
    deadline = time.time() + 20 * harness.SLOW
    while not any(b == 0 for b, _ in progress(lines_since(proc, mark))[len(p):]):
        if time.time() > deadline:
            fail("no lag-free -v line after the walsender was through:\n%s"
                 % "\n".join(lines_since(proc, mark)))
        time.sleep(0.1)
    rc = ctx.stop(proc)
    check(rc == 0, "SIGTERM: exit %d\n%s" % (rc, proc.stderr()))


KNOWN = {"frozen": part_frozen, "decoding": part_decoding}


def test(ctx):
    path, slot = setup(ctx)
    harness.run_parts(ctx, KNOWN, path, slot)


harness.main(test)

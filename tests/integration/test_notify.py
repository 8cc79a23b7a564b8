"""systemd's notify protocol, against a socket the test listens on as
systemd would (NOTIFY_SOCKET). A service's first run sends STATUS= lines
while it copies, READY=1 only once it has caught up with the source (the
rows committed before it started are in the mirror by then), WATCHDOG=1
at least every half of WATCHDOG_USEC while it runs (WATCHDOG_PID naming
it), and STOPPING=1 on SIGTERM, then exits 0. While the source holds the
first run up (a lock on the published table) it sends no WATCHDOG=1 and
no EXTEND_TIMEOUT_USEC: a run that hangs is not kept alive. A second
service on an abstract socket ('@'), with WATCHDOG_PID naming another
process, becomes ready and sends no WATCHDOG=1; with -v, its SIGTERM is
logged with the position it stopped at."""

import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

WATCHDOG_USEC = 2000000


class Listener:
    """A unix datagram socket that keeps every message with its time."""

    def __init__(self, address):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address if address[0] != "@" else "\0" + address[1:])
        self.messages = []  # (time, {key: value})

    def collect(self, seconds, until=None):
        """Reads for seconds, or until until(fields) holds; returns that
        message's fields, or None."""
        end = time.time() + seconds
        while time.time() < end:
            self.sock.settimeout(max(0.01, end - time.time()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            fields = dict(line.split("=", 1) for line in data.split("\n") if line)
            self.messages.append((time.time(), fields))
            harness.log("notify: %r" % data)
            if until is not None and until(fields):
                return fields
        return None

    def times(self, key, since=0):
        return [t for t, f in self.messages if key in f and t >= since]


def wrapper(ctx, binary, env):
    """A script that runs the binary under test as its own pid (exec), with
    env; WATCHDOG_PID=self: that pid."""
    path = os.path.join(ctx.tmpdir, "notify_%d.sh" % len(os.listdir(ctx.tmpdir)))
    with open(path, "w") as f:
        f.write("#!/bin/sh\n")
        for k, v in env.items():
            f.write("%s=%s; export %s\n" % (k, "$$" if v == "self" else "'%s'" % v, k))
        f.write('exec %s "$@"\n' % binary)
    os.chmod(path, 0o755)
    return path


def test(ctx):
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, v text);"
            "INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;"
            "CREATE PUBLICATION pub FOR TABLE t")
    path, slot = os.path.join(ctx.tmpdir, "m.db"), ctx.slot()
    listener = Listener(os.path.join(ctx.tmpdir, "notify.sock"))
    binary = ctx.binary
    ctx.binary = wrapper(ctx, binary, {"NOTIFY_SOCKET": os.path.join(ctx.tmpdir, "notify.sock"),
                               "WATCHDOG_USEC": str(WATCHDOG_USEC), "WATCHDOG_PID": "self"})
    # the source holds the first run up: a lock on the published table
    # (no transaction id, so the slot is made; the copy then waits)
    holder = ctx.connect(autocommit=False)
    holder.cursor().execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
    p = ctx.start_follow(path, slot, "pub")
    started = time.time()
    listener.collect(4)
    check(p.poll() is None, "the service exited %s:\n%s" % (p.poll(), p.stderr()))
    held = [f for t, f in listener.messages if "WATCHDOG" in f or "EXTEND_TIMEOUT_USEC" in f
            if t > started + 1.5]
    check(not held, "a run held up by the source says it is alive: %r" % held)
    check(not listener.times("READY"), "READY=1 before the copy")
    holder.rollback()
    released = time.time()
    ready = listener.collect(60 * harness.SLOW, lambda f: f.get("READY") == "1")
    if ready is None:
        fail("no READY=1 within 60 s; messages: %r\n%s" % (listener.messages, p.stderr()))
    # caught up: the rows committed before the start are there
    n = ctx.mirror_query(path, "SELECT count(*) FROM t")[0][0]
    check(n >= 20000, "READY=1 with %d rows of 20000 in the mirror" % n)
    statuses = [f["STATUS"] for _, f in listener.messages if "STATUS" in f]
    check(any(s.startswith("copying table 1 of 1: public.t") for s in statuses),
          "no STATUS= for the copy: %r" % statuses)
    check(any("EXTEND_TIMEOUT_USEC" in f for t, f in listener.messages if t >= released),
          "the copy did not extend the start: %r" % listener.messages)
    # the watchdog, while it runs: at least every half of WATCHDOG_USEC
    ready_at = time.time()
    listener.collect(4)
    pings = listener.times("WATCHDOG", ready_at)
    gaps = [b - a for a, b in zip([ready_at] + pings, pings + [time.time()])]
    check(len(pings) >= 4 and max(gaps) <= WATCHDOG_USEC / 2e6,
          "WATCHDOG=1 %d times in 4 s, longest gap %.2f s" % (len(pings), max(gaps)))
    check(ctx.stop(p) == 0, "the service did not exit 0:\n" + p.stderr())
    check(listener.collect(1, lambda f: False) is None and
          any(f.get("STOPPING") == "1" for _, f in listener.messages),
          "no STOPPING=1 on SIGTERM: %r" % listener.messages[-3:])

    # an abstract socket, and WATCHDOG_PID naming another process
    name = "@pgmirror-test-%d" % os.getpid()
    other = Listener(name)
    ctx.binary = wrapper(ctx, binary, {"NOTIFY_SOCKET": name, "WATCHDOG_USEC": str(WATCHDOG_USEC),
                               "WATCHDOG_PID": "1"})
    p = ctx.start_follow(path, slot, "pub", "-v")
    if other.collect(60 * harness.SLOW, lambda f: f.get("READY") == "1") is None:
        fail("no READY=1 on the abstract socket: %r\n%s" % (other.messages, p.stderr()))
    other.collect(2)
    check(not other.times("WATCHDOG"), "WATCHDOG=1 though WATCHDOG_PID names another process")
    check(ctx.stop(p) == 0, "the second service did not exit 0:\n" + p.stderr())
    # with -v, SIGTERM says what it did
    check("stopped by a signal; the mirror holds every transaction up to" in p.stderr(),
          "-v says nothing of SIGTERM:\n" + p.stderr())
    ctx.binary = binary


harness.main(test)

"""A weak link between pgmirror and its source, on loopback.

LinkProxy listens on a free TCP port of 127.0.0.1 and forwards each
connection to the server PGHOST/PGPORT name (a directory as the host means
the server's unix socket in it, as libpq reads it).  On the way it can

  - hold the link to a rate (bytes per second, shared by all connections,
    as one link is: both ways, or only server -> client),
  - cut every connection every N seconds (the whole link drops at once),
    at random moments (N is then the mean gap), on demand (cut()), or when
    a connection has carried a number of bytes from the server,
  - keep the link down for a while after each cut (new connections wait,
    as behind a link that is coming back),
  - cut by closing (the peer reads end of file), by reset (RST), or by
    going silent (nothing more is passed either way; the sockets stay
    open, as when a mobile link vanishes without a word),
  - turn into a black hole (blackhole(), until restore()): every open
    connection goes silent, and a connection made meanwhile is accepted
    and then hears nothing, as behind a link that vanished without a
    reset (a mobile link dropping, a NAT entry expiring: packets simply
    stop); after restore() new connections pass again, the silent ones
    stay silent,

and it counts the bytes each way (payload, without TCP/IP headers) and
the statements clients send (simple-protocol Query and extended-protocol
Parse messages; a replication command is a Query: give the client
sslmode=disable and gssencmode=disable, so that the first thing it sends
is the startup packet).  reset_counts() starts the counts again, for what
one run costs (bench/quiet.py, test_quiet_cost.py).

As a module, from a test:

    import linkproxy
    with linkproxy.LinkProxy(rate=2_000_000, cut_every=5) as link:
        dsn = harness.make_dsn(dbname=ctx.dbname, host=link.host,
                               port=link.port, ...)
        ...
        link.cut()
        print(link.bytes_down, link.statements, link.cuts)

As a script (bench/link uses it):

    linkproxy.py [--rate 2M] [--down-only] [--cut-every 5] [--random]
                 [--down-for 1] [--cut-at-bytes 1M] [--mode close|reset|silent]
                 [--seed N] [--port P] [--stats FILE]

prints "port P" on its first line, runs until SIGTERM or SIGINT, cuts
every connection on SIGUSR1, turns into a black hole on SIGUSR2 (and
back on the next SIGUSR2), writes its counters (JSON) to FILE every
half second and at the end, and prints them at the end.
"""

import argparse
import json
import os
import random
import signal
import socket
import struct
import sys
import threading
import time


def server_address(host=None, port=None):
    """(family, address) of the server libpq would reach with PGHOST/PGPORT
    (or the given host and port): a unix socket for a directory (or no
    host at all), TCP otherwise.  Only the first of several hosts."""
    if host is None:
        host = os.environ.get("PGHOST", "")
    if port is None:
        port = os.environ.get("PGPORT") or "5432"
    host = host.split(",")[0]
    port = int(str(port).split(",")[0])
    if not host:
        host = "/var/run/postgresql"
    if host.startswith("/") or host.startswith("@"):
        path = os.path.join(host, ".s.PGSQL.%d" % port)
        if host.startswith("@"):  # Linux abstract namespace
            path = "\0" + path[1:]
        return socket.AF_UNIX, path
    return socket.AF_INET6 if ":" in host else socket.AF_INET, (host, port)


def parse_size(text):
    """'2M' -> 2000000, '512k' -> 512000, '100' -> 100 (decimal units)."""
    text = str(text).strip()
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(text[-1:].lower())
    try:
        n = float(text[:-1]) * mult if mult else float(text)
    except ValueError:
        raise ValueError("not a size: %r (use a number with k, M or G)" % text)
    if n <= 0:
        raise ValueError("not a positive size: %r" % text)
    return int(n)


def client_messages(buf, state):
    """Counts Query ('Q') and Parse ('P') messages in the bytes a client
    sent (buf, appended to state's leftover); the first message of a
    connection is the startup packet, which has no type byte (nor has an
    SSL or GSS request, which the client then follows with its startup
    packet: counted as one more startup)."""
    data = state["rest"] + buf
    n = 0
    pos = 0
    while True:
        if state["startup"]:
            if len(data) - pos < 8:
                break
            length, code = struct.unpack("!II", data[pos:pos + 8])
            if len(data) - pos < length:
                break
            pos += length
            # SSLRequest, GSSENCRequest: a startup packet comes after
            state["startup"] = code in (80877103, 80877104)
            continue
        if len(data) - pos < 5:
            break
        kind = data[pos:pos + 1]
        length = struct.unpack("!I", data[pos + 1:pos + 5])[0]
        if len(data) - pos < 1 + length:
            break
        if kind in (b"Q", b"P"):
            n += 1
        pos += 1 + length
    state["rest"] = data[pos:]
    return n


class _Bucket:
    """A token bucket: take(n) returns once n bytes fit the rate.  Debt is
    allowed, so a chunk bigger than the burst still passes, later."""

    def __init__(self, rate):
        self.rate = float(rate)
        self.burst = max(1.0, self.rate / 20)  # 50 ms of the link
        self.tokens = self.burst
        self.stamp = time.monotonic()
        self.lock = threading.Lock()

    def take(self, n, alive):
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            self.tokens -= n
            wait = -self.tokens / self.rate if self.tokens < 0 else 0.0
        deadline = time.monotonic() + wait
        while alive():
            left = deadline - time.monotonic()  # read once: a later read may be past it
            if left <= 0:
                break
            time.sleep(min(0.02, left))


class _Conn:
    """One client connection and its connection to the server."""

    def __init__(self, proxy, client, server):
        self.proxy = proxy
        self.client = client
        self.server = server
        self.lock = threading.Lock()
        self.closed = False
        self.silent = False
        self.down = 0  # bytes server -> client on this connection
        self.messages = {"startup": True, "rest": b""}  # client_messages()
        self.opened = time.monotonic()

    def alive(self):
        return not self.closed and not self.silent

    def cut(self, mode):
        with self.lock:
            if self.closed or self.silent:
                return False
            if mode == "silent":
                self.silent = True
            else:
                self.closed = True
        with self.proxy.lock:  # counted before the peers can see it
            self.proxy.cuts += 1
        if mode != "silent":
            self._close_sockets(reset=mode == "reset")
        return True

    def close(self):
        """The end of a connection that one of its peers closed."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
        self._close_sockets(reset=False)

    def _close_sockets(self, reset):
        """Both ends closed: with end of file, or reset (RST)."""
        for s in (self.client, self.server):
            if s is None:
                continue  # made in a black hole: no server side
            try:
                if reset:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                 struct.pack("ii", 1, 0))
                else:
                    s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass


class LinkProxy:
    """See the module's text.  rate: bytes/s or None; down_only: the rate
    holds only server -> client; cut_every: seconds between cuts (None:
    none); random_cuts: gaps drawn from an exponential law of mean
    cut_every; down_for: seconds the link stays down after a timed cut or
    cut(); cut_at_bytes: cut a connection once it carried that many bytes
    from the server; mode: close, reset or silent; host, port: the server
    (default PGHOST, PGPORT)."""

    def __init__(self, rate=None, down_only=False, cut_every=None,
                 random_cuts=False, down_for=0.0, cut_at_bytes=None,
                 mode="close", seed=None, host=None, port=None, listen_port=0):
        if mode not in ("close", "reset", "silent"):
            raise ValueError("mode must be close, reset or silent, not %r" % mode)
        self.family, self.target = server_address(host, port)
        self.rate = rate
        self.down_only = down_only
        self.cut_every = cut_every
        self.random_cuts = random_cuts
        self.down_for = down_for
        self.cut_at_bytes = cut_at_bytes
        self.mode = mode
        self.rng = random.Random(seed)
        self.host = "127.0.0.1"
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((self.host, listen_port))
        self.port = self.sock.getsockname()[1]
        self.buckets = {"up": None if down_only or not rate else _Bucket(rate),
                        "down": _Bucket(rate) if rate else None}
        self.lock = threading.Lock()
        self.conns = []
        self.bytes_up = 0      # client -> server
        self.bytes_down = 0    # server -> client
        self.statements = 0    # Query and Parse messages clients sent
        self.connections = 0   # accepted
        self.cuts = 0          # connections cut (each counts)
        self.cut_times = []    # time.time() of each cut of the link
        self.cut_counts = []   # how many connections each of them cut
        self.conn_times = []   # time.time() of each connection passed on
        self.down_until = 0.0  # monotonic
        self.black = False     # a black hole (blackhole() .. restore())
        self.black_times = []  # time.time() of each blackhole()
        self.black_accepted = 0  # connections accepted into a black hole
        self.stopping = threading.Event()
        self.threads = []

    # -- life ----------------------------------------------------------

    def start(self):
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        for fn in (self._accept_loop, self._cut_loop):
            t = threading.Thread(target=fn, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(5)
        self.sock.close()
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            c.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def stats(self):
        with self.lock:
            return {"port": self.port, "bytes_up": self.bytes_up,
                    "bytes_down": self.bytes_down, "statements": self.statements,
                    "connections": self.connections, "cuts": self.cuts,
                    "link_cuts": len(self.cut_times), "black": self.black,
                    "black_accepted": self.black_accepted,
                    "open": sum(1 for c in self.conns if not c.closed)}

    def reset_counts(self):
        """Bytes and statements counted from zero again (what comes
        after, on connections old and new)."""
        with self.lock:
            self.bytes_up = self.bytes_down = self.statements = 0

    # -- cuts ----------------------------------------------------------

    def cut(self, down_for=None):
        """Cut every open connection now; the link then stays down for
        down_for seconds (default: the proxy's down_for).  Returns how
        many connections were cut."""
        down_for = self.down_for if down_for is None else down_for
        with self.lock:
            conns = list(self.conns)
            self.cut_times.append(time.time())
            self.down_until = max(self.down_until, time.monotonic() + down_for)
        n = sum(1 for c in conns if c.cut(self.mode))
        with self.lock:
            self.cut_counts.append(n)
        return n

    def blackhole(self):
        """The link vanishes without a word: every open connection goes
        silent (nothing passes, nothing is closed), and connections made
        from now until restore() are accepted and hear nothing.  Returns
        how many open connections went silent."""
        with self.lock:
            self.black = True
            self.black_times.append(time.time())
            conns = list(self.conns)
        n = 0
        for c in conns:
            with c.lock:
                if not c.closed and not c.silent:
                    c.silent = True
                    n += 1
        return n

    def restore(self):
        """The link is back for new connections (the silent ones stay
        silent, as the peers' state on a lost link is gone)."""
        with self.lock:
            self.black = False

    def _next_gap(self):
        if self.random_cuts:
            return self.rng.expovariate(1.0 / self.cut_every)
        return self.cut_every

    def _cut_loop(self):
        if not self.cut_every:
            return
        due = time.monotonic() + self._next_gap()
        while not self.stopping.wait(max(0.0, min(0.05, due - time.monotonic()))):
            if time.monotonic() >= due:
                self.cut()
                due = max(time.monotonic(), self.down_until) + self._next_gap()

    # -- forwarding ----------------------------------------------------

    def _accept_loop(self):
        while not self.stopping.is_set():
            if time.monotonic() < self.down_until:
                time.sleep(0.02)  # the link is down: new connections wait
                continue
            try:
                client, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            client.settimeout(None)
            while time.monotonic() < self.down_until and not self.stopping.is_set():
                time.sleep(0.02)  # accepted as the link went down: it waits too
            if self.black:
                conn = _Conn(self, client, None)
                conn.silent = True
                with self.lock:
                    self.conns = [c for c in self.conns if not c.closed]
                    self.conns.append(conn)
                    self.black_accepted += 1
                threading.Thread(target=self._pump, args=(conn, client, None, "up"),
                                 daemon=True).start()
                continue
            try:
                server = socket.socket(self.family, socket.SOCK_STREAM)
                server.connect(self.target)
            except OSError:
                client.close()  # as a refusing server: the client reads EOF
                continue
            for s in (client, server):
                if s.family != socket.AF_UNIX:
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(self, client, server)
            with self.lock:
                self.conns = [c for c in self.conns if not c.closed]
                self.conns.append(conn)
                self.connections += 1
                self.conn_times.append(time.time())
            for args in ((conn, client, server, "up"), (conn, server, client, "down")):
                threading.Thread(target=self._pump, args=args, daemon=True).start()

    def _pump(self, conn, src, dst, way):
        bucket = self.buckets[way]
        chunk = 65536 if not bucket else int(min(65536, max(512, bucket.rate / 50)))
        while True:
            try:
                data = src.recv(chunk)
            except OSError:
                data = b""
            if not data:
                if not conn.silent:
                    conn.close()
                return
            if conn.silent:
                continue  # a vanished link: bytes go nowhere
            if bucket:
                bucket.take(len(data), conn.alive)
            if not conn.alive():
                continue
            # counted before they pass: an answer to them must not be
            # seen before they are (linkproxy_selftest's statements)
            stmts = client_messages(data, conn.messages) if way == "up" else 0
            with self.lock:
                if way == "up":
                    self.bytes_up += len(data)
                    self.statements += stmts
                else:
                    self.bytes_down += len(data)
            try:
                dst.sendall(data)
            except OSError:
                conn.close()
                return
            if way == "down":
                conn.down += len(data)
                if self.cut_at_bytes and conn.down >= self.cut_at_bytes:
                    conn.cut(self.mode)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=parse_size, help="bytes/s (k, M, G: 1000s)")
    ap.add_argument("--down-only", action="store_true",
                    help="the rate holds only server -> client")
    ap.add_argument("--cut-every", type=float, help="seconds between cuts")
    ap.add_argument("--random", action="store_true",
                    help="cut at random moments, --cut-every apart on average")
    ap.add_argument("--down-for", type=float, default=0.0,
                    help="seconds the link stays down after a cut")
    ap.add_argument("--cut-at-bytes", type=parse_size,
                    help="cut a connection once it carried this from the server")
    ap.add_argument("--mode", default="close", choices=("close", "reset", "silent"))
    ap.add_argument("--seed", type=int)
    ap.add_argument("--port", type=int, default=0, help="listen port (default: free)")
    ap.add_argument("--stats", help="file to write the counters to (JSON)")
    a = ap.parse_args(argv)
    proxy = LinkProxy(rate=a.rate, down_only=a.down_only, cut_every=a.cut_every,
                      random_cuts=a.random, down_for=a.down_for,
                      cut_at_bytes=a.cut_at_bytes, mode=a.mode, seed=a.seed,
                      listen_port=a.port)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGUSR1, lambda *_: proxy.cut())
    signal.signal(signal.SIGUSR2,
                  lambda *_: proxy.restore() if proxy.black else proxy.blackhole())

    def write_stats():
        if a.stats:
            tmp = a.stats + ".tmp"
            with open(tmp, "w") as f:
                json.dump(proxy.stats(), f)
            os.replace(tmp, a.stats)

    proxy.start()
    print("port %d" % proxy.port, flush=True)
    while not done.wait(0.5):
        write_stats()
    proxy.stop()
    write_stats()
    print(json.dumps(proxy.stats()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

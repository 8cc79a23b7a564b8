"""A counting forwarder between a client and PostgreSQL, on loopback: what a
run costs the source on the wire.

CountProxy listens on a free port of 127.0.0.1 and forwards each connection
to (host, port), counting the bytes each way (payload, without TCP/IP
headers) and the statements the client sends: simple-protocol Query and
extended-protocol Parse messages (a replication command is a Query). Give
the client sslmode=disable and gssencmode=disable, so that the first thing
it sends is the startup packet. counter is the Counter the connections
accepted from then on add to:

    proxy = countproxy.CountProxy("127.0.0.1", 5432)
    proxy.start()
    proxy.counter = countproxy.Counter()
    ... run the client against port proxy.port ...
    print(proxy.counter.statements, proxy.counter.down)

bench/quiet.py and tests/integration/test_quiet_cost.py use it.
"""

import socket
import struct
import threading


class Counter:
    """What the connections accepted while it is the proxy's counter
    carried: bytes up (to the server) and down, and statements."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.up = self.down = self.statements = 0


def client_messages(buf, state):
    """Counts Query ('Q') and Parse ('P') messages in the bytes a client
    sent (buf, appended to state's leftover); the first message of a
    connection is the startup packet, which has no type byte."""
    data = state["rest"] + buf
    n = 0
    pos = 0
    while True:
        if state["startup"]:
            if len(data) - pos < 4:
                break
            length = struct.unpack("!I", data[pos:pos + 4])[0]
            if len(data) - pos < length:
                break
            pos += length
            state["startup"] = False
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


class CountProxy(threading.Thread):
    """Listens on a free port of 127.0.0.1 and forwards each connection to
    (host, port) (a host that is a directory: the server's unix socket in
    it, as libpq reads it), counting into self.counter."""

    def __init__(self, host, port):
        super().__init__(daemon=True)
        self.target = (host, port)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.counter = Counter()

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            host, port = self.target
            if str(host).startswith("/"):
                s = socket.socket(socket.AF_UNIX)
                s.connect("%s/.s.PGSQL.%s" % (host, port))
            else:
                s = socket.create_connection((host, int(port)))
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            counter = self.counter
            state = {"startup": True, "rest": b""}
            threading.Thread(target=self.pipe, args=(c, s, counter, True, state),
                             daemon=True).start()
            threading.Thread(target=self.pipe, args=(s, c, counter, False, None),
                             daemon=True).start()

    @staticmethod
    def pipe(src, dst, counter, up, state):
        try:
            while True:
                buf = src.recv(65536)
                if not buf:
                    break
                with counter.lock:
                    if up:
                        counter.up += len(buf)
                        counter.statements += client_messages(buf, state)
                    else:
                        counter.down += len(buf)
                dst.sendall(buf)
        except OSError:
            pass
        finally:
            for sk in (src, dst):
                try:
                    sk.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

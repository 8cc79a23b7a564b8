#!/usr/bin/python3
"""wire.py - what one client run costs on the wire and in CPU, both ends.

    bench/wire.py --server HOST:PORT|/SOCKET/DIR [--port 5432] -- COMMAND...

Listens on 127.0.0.1 (a free port), sets PGHOST=127.0.0.1 and PGPORT to it
for COMMAND (which must take its server from PGHOST/PGPORT, e.g. pgmirror
or pg_recvlogical with -d "dbname=DB"), forwards every connection it makes
to the real server, and prints one line when COMMAND ends:

    bytes_in=B bytes_out=O client_cpu=C server_cpu=S conns=K

bytes_in   bytes the server sent to the client, over all its connections
           (what a metered link to the device carries down; TCP/IP headers
           not counted)
bytes_out  bytes the client sent to the server
client_cpu user + system seconds of COMMAND and its children (wait4)
server_cpu user + system seconds of the server processes that served those
           connections (the walsender, and a plain backend if the client
           opened one), read from /proc/PID/stat just before the client's
           end of the connection is passed on, i.e. before the process ends;
           the PID comes from the BackendKeyData message of the startup
conns      connections the client made

The proxy asks for no TLS: COMMAND should connect with sslmode=disable
(wire.py adds PGSSLMODE=disable and PGGSSENCMODE=disable to its
environment). Needs the server on this machine (it reads /proc).
"""
import os
import select
import socket
import struct
import subprocess
import sys
import threading

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


class Totals:
    def __init__(self):
        self.lock = threading.Lock()
        self.bytes_in = self.bytes_out = self.conns = 0
        self.server_cpu = 0.0


class BackendPid:
    """Finds BackendKeyData ('K', length 12, pid, key) in what the server
    sends at startup: messages of type byte + int32 length (no TLS or GSS
    request was made, so no one-byte answer comes first)."""

    def __init__(self):
        self.buf = b""
        self.pid = None
        self.done = False

    def feed(self, data):
        if self.done:
            return
        self.buf += data
        while True:
            if len(self.buf) < 5:
                return
            typ, n = self.buf[:1], struct.unpack("!i", self.buf[1:5])[0]
            if len(self.buf) < 1 + n:
                return
            if typ == b"K":
                self.pid = struct.unpack("!i", self.buf[5:9])[0]
                self.done = True
                return
            if typ in (b"Z", b"E"):  # ready for query, or an error: no key to come
                self.done = True
                return
            self.buf = self.buf[1 + n:]


def serve(client, server_addr, totals):
    if server_addr[0] == "unix":
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(server_addr[1])
    else:
        up = socket.create_connection(server_addr[1])
    key = BackendPid()
    n_in = n_out = 0
    try:
        # a reset from either side (a client that exits without a
        # Terminate message) ends the connection like a close
        while True:
            r, _, _ = select.select([client, up], [], [])
            if up in r:
                data = up.recv(1 << 16)
                if not data:
                    break
                n_in += len(data)
                key.feed(data)
                client.sendall(data)
            if client in r:
                data = client.recv(1 << 16)
                if not data:
                    break
                n_out += len(data)
                up.sendall(data)
    except OSError:
        pass
    finally:
        cpu = proc_cpu(key.pid) if key.pid else 0.0
        client.close()
        up.close()
        with totals.lock:
            totals.bytes_in += n_in
            totals.bytes_out += n_out
            totals.server_cpu += cpu
            totals.conns += 1


def main():
    args = sys.argv[1:]
    if "--" not in args:
        sys.exit(__doc__)
    cmd = args[args.index("--") + 1:]
    opts = args[:args.index("--")]
    server = port = None
    while opts:
        o = opts.pop(0)
        if o == "--server":
            server = opts.pop(0)
        elif o == "--port":
            port = opts.pop(0)
        else:
            sys.exit("wire.py: unknown option %s" % o)
    server = server or os.environ.get("PGHOST", "/var/run/postgresql")
    port = port or os.environ.get("PGPORT", "5432")
    if server.startswith("/"):
        addr = ("unix", os.path.join(server, ".s.PGSQL.%s" % port))
    else:
        addr = ("tcp", (server, int(port)))
    lsn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(16)
    totals = Totals()
    threads = []

    def accept_loop():
        while True:
            try:
                c, _ = lsn.accept()
            except OSError:
                return
            t = threading.Thread(target=serve, args=(c, addr, totals), daemon=True)
            t.start()
            threads.append(t)

    threading.Thread(target=accept_loop, daemon=True).start()
    env = dict(os.environ, PGHOST="127.0.0.1", PGPORT=str(lsn.getsockname()[1]),
               PGSSLMODE="disable", PGGSSENCMODE="disable")
    child = subprocess.Popen(cmd, env=env)
    _, status, ru = os.wait4(child.pid, 0)
    for t in list(threads):
        t.join(10)
    lsn.close()
    code = os.waitstatus_to_exitcode(status)
    print("bytes_in=%d bytes_out=%d client_cpu=%.3f server_cpu=%.3f conns=%d" %
          (totals.bytes_in, totals.bytes_out, ru.ru_utime + ru.ru_stime,
           totals.server_cpu, totals.conns))
    sys.exit(code)


if __name__ == "__main__":
    main()

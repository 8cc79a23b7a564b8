"""Two first runs of two mirror files with the same slot name: the loser's
CREATE_REPLICATION_SLOT is held back (it goes through a loopback proxy)
until the winner has created the slot and copied; then the loser's creation
fails. The loser must not have claimed the slot: its next run refuses with
the --drop-slot advice and leaves the winner's slot alone, and the winner
keeps working."""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


class HoldingProxy:
    """Forwards loopback TCP connections to the server; holds back the
    client's bytes that carry CREATE_REPLICATION_SLOT until release()."""

    def __init__(self, host, port):
        self.target = (host, port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.held = threading.Event()
        self.released = threading.Event()
        self.socks = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.socks += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False),
                             daemon=True).start()

    def _pump(self, src, dst, from_client):
        tail = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if from_client and b"CREATE_REPLICATION_SLOT" in tail + data:
                    self.held.set()
                    self.released.wait(120)
                tail = data[-64:]
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.released.set()
        self.listener.close()
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass


def test(ctx):
    ctx.sql("""
        CREATE TABLE t (id int PRIMARY KEY, v text);
        INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g;
        CREATE PUBLICATION pub FOR TABLE t;
    """)
    slot = ctx.slot()
    winner, loser = ctx.path("winner.db"), ctx.path("loser.db")
    proxy = HoldingProxy(os.environ.get("PGHOST", "localhost"),
                         int(os.environ.get("PGPORT", "5432")))
    try:
        dsn = harness.make_dsn(dbname=ctx.dbname, host="127.0.0.1", port=proxy.port,
                               user=os.environ.get("PGUSER"),
                               sslmode="disable", gssencmode="disable")
        args = ["-d", dsn, "-S", slot, "-P", "pub", "--once", loser]
        proc = ctx.start(args, tag="loser")
        deadline = time.time() + 60
        while not proxy.held.is_set():
            check(proc.poll() is None, "the loser exited %s before creating its slot:\n%s"
                  % (proc.poll(), proc.stderr()))
            check(time.time() < deadline, "the loser never created its slot:\n%s"
                  % proc.stderr())
            time.sleep(0.02)
        ctx.once(winner, slot, "pub")
        won = ctx.slot_info(slot)
        check(won is not None, "the winner made no slot")
        proxy.released.set()
        rc = proc.popen.wait(60)
        harness.log("loser's first run: exit %s\n%s" % (rc, proc.stderr()))
        check(rc == 1 and "already exists" in proc.stderr(),
              "the loser's creation did not fail: exit %s\n%s" % (rc, proc.stderr()))
    finally:
        proxy.close()

    ctx.sql("INSERT INTO t VALUES (1000, 'after')")
    rc, out, err = ctx.run(ctx.mirror_args(loser, slot, "pub", "--once"))
    harness.log("loser's next run: exit %s\n%s" % (rc, err))
    after = ctx.slot_info(slot)
    check(after is not None and after["confirmed_flush_lsn"] == won["confirmed_flush_lsn"],
          "the loser's next run (exit %s) took the winner's slot: before %r, after %r\n%s"
          % (rc, won, after, err))
    check(rc == 1 and "--drop-slot" in err,
          "the loser's next run: exit %s, expected 1 with the --drop-slot advice\n%s"
          % (rc, err))
    ctx.once(winner, slot, "pub")
    ctx.assert_mirror_equals_source(winner, "t")


harness.main(test)

"""A device's health, as a fleet reads it. --status --json is one JSON
object with the fields of --status plus the health ones: a quiet --once
and a busy one both move last_sync_time (and clear a failed run's
last_error, which a failure leaves); a lost slot's rebuild gives a
last_rebuild_time and reason, a last_commit_time and new generations, as
--resync does for its table, while applied changes keep the generation.
--json alone is a usage error. A slot held by a connection that goes away
within seconds is waited for, not exit 3. Connecting: SIGTERM while a server accepts
and never answers ends --once and a service within a second with exit 0; a
service started before its source warns and goes on once the source is
there. -v says how long a frozen link has been silent. Under the journal
(JOURNAL_STREAM) every line has its priority; a server's DETAIL and HINT
stay on pgmirror's line."""

import json
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def status_json(ctx, path):
    rc, out, err = ctx.run(["--status", "--json", path])
    check(rc == 0, "--status --json exited %d: %s" % (rc, err))
    try:
        return json.loads(out)
    except ValueError as e:
        harness.fail("--status --json is not JSON (%s):\n%s" % (e, out))


def generations(st):
    return dict((t["name"], t["generation"]) for t in st["tables"])


def upstream():
    """A new connection to the test's server, as libpq would make it."""
    host, port = os.environ.get("PGHOST") or "localhost", os.environ.get("PGPORT") or "5432"
    if host.startswith("/"):
        s = socket.socket(socket.AF_UNIX)
        s.connect(os.path.join(host, ".s.PGSQL." + port))
    else:
        s = socket.create_connection((host, int(port)))
    return s


class Listener:
    """A TCP port on 127.0.0.1 that, once started, either forwards each
    connection to the server (paused: forwards nothing, as a frozen
    network), or accepts and never answers (silent), or answers the
    startup with an error that has a DETAIL and a HINT (error)."""

    def __init__(self, mode="forward"):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.mode = mode
        self.paused = False
        self.accepted = threading.Event()
        self.conns = []

    def start(self):
        self.sock.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            c, _ = self.sock.accept()
            self.conns.append(c)
            self.accepted.set()
            if self.mode == "forward":
                threading.Thread(target=self._pump, args=(c, upstream()), daemon=True).start()
            elif self.mode == "error":
                threading.Thread(target=self._refuse, args=(c,), daemon=True).start()

    def _pump(self, a, b):
        self.conns.append(b)
        while True:
            r, _, _ = select.select([a, b], [], [], 0.1)
            while self.paused:
                time.sleep(0.05)
            for s in r:
                try:
                    data = s.recv(65536)
                except OSError:  # reset by pgmirror or the server: as an end
                    data = b""
                if not data:
                    a.close()
                    b.close()
                    return
                (b if s is a else a).sendall(data)

    def _refuse(self, c):
        while True:
            n = struct.unpack("!I", c.recv(4))[0]
            body = c.recv(n - 4)
            if struct.unpack("!I", body[:4])[0] in (80877103, 80877104):
                c.sendall(b"N")  # no SSL, no GSS encryption
                continue
            fields = b"SFATAL\0C28000\0Mthe device is not allowed\0Dsecond line\0Hthird line\0\0"
            c.sendall(b"E" + struct.pack("!I", len(fields) + 4) + fields)
            c.close()
            return


def proxy_dsn(ctx, port):
    return harness.make_dsn(dbname=ctx.dbname, host="127.0.0.1", port=port,
                            user=os.environ.get("PGUSER"))


def setup(ctx):
    ctx.sql("""
        CREATE TABLE a (id int PRIMARY KEY, v text);
        CREATE TABLE b (id int PRIMARY KEY);
        INSERT INTO a SELECT g, 'v' FROM generate_series(1, 10) g;
        CREATE PUBLICATION pub FOR TABLE a, b;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    return path, slot


def part_status(ctx, path, slot):
    rc, out, err = ctx.run(["--json", path])
    check(rc == 2, "--json without --status: exit %d %s" % (rc, err))
    st = status_json(ctx, path)
    for key in ("mirror", "slot", "publications", "system_identifier", "database",
                "confirmed_lsn", "last_commit_time", "initial_copy", "last_sync_time",
                "last_sync_lag_bytes", "last_sync_lag_seconds", "last_check_time",
                "last_check_result", "last_rebuild_time", "last_rebuild_reason",
                "last_error", "last_error_time", "tables"):
        check(key in st, "--status --json lacks %r: %s" % (key, st))
    check(st["slot"] == slot and st["publications"] == "pub" and st["last_error"] is None,
          "--status --json: %s" % st)
    check(st["last_sync_time"] is not None, "no last_sync_time after a first run: %s" % st)
    check(dict((t["name"], t["rows"]) for t in st["tables"]) == {"a": 10, "b": 0, "pgm_marker": 0},
          "tables: %s" % st["tables"])
    gen0 = generations(st)

    # a quiet --once, then a busy one: each says the mirror was in sync
    ctx.once(path, slot, "pub")
    quiet = status_json(ctx, path)
    check(quiet["last_sync_time"] > st["last_sync_time"],
          "a quiet --once left last_sync_time at %s" % quiet["last_sync_time"])
    ctx.sql("INSERT INTO b SELECT generate_series(1, 100); UPDATE a SET v = 'w'")
    ctx.once(path, slot, "pub")
    busy = status_json(ctx, path)
    check(busy["last_sync_time"] > quiet["last_sync_time"] and busy["last_sync_lag_bytes"] is not None,
          "a busy --once: %s" % busy)
    check(generations(busy) == gen0, "applied changes changed generations: %s -> %s"
          % (gen0, generations(busy)))
    rc, out, err = ctx.run(["--status", path])
    check("last_sync_time: %s\n" % busy["last_sync_time"] in out, "--status:\n%s" % out)

    # --resync of one table: its generation changes, the others' do not
    ctx.once(path, slot, "pub", "--resync=a")
    gen1 = generations(status_json(ctx, path))
    check(gen1["a"] != gen0["a"] and gen1["b"] == gen0["b"], "--resync=a: %s -> %s" % (gen0, gen1))

    # a failure is kept, and a run that gets in sync clears it
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))  # bound, not listening: connection refused
    rc, out, err = ctx.run(["-d", proxy_dsn(ctx, dead.getsockname()[1]), "--once", path])
    check(rc == 1, "--once against nothing: exit %d %s" % (rc, err))
    failed = status_json(ctx, path)
    check(failed["last_error"] and "could not connect" in failed["last_error"] and
          failed["last_error_time"], "after a failure: %s" % failed)
    ctx.once(path, slot, "pub")
    check(status_json(ctx, path)["last_error"] is None, "a good run left the error")

    # a lost slot: rebuilt, with its time and reason, and new generations
    ctx.admin.cursor().execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    ctx.once(path, slot, "pub")
    rb = status_json(ctx, path)
    check(rb["last_rebuild_time"] and "slot" in (rb["last_rebuild_reason"] or "") and
          rb["last_commit_time"], "after a rebuild: %s" % rb)
    check(all(generations(rb)[t] != gen1[t] for t in gen1),
          "a rebuild kept a generation: %s -> %s" % (gen1, generations(rb)))



def part_connect(ctx, path, slot):
    # SIGTERM while a server accepts and never answers: exit 0 within a second
    silent = Listener("silent")
    silent.start()
    for mode in (["--once"], []):
        silent.accepted.clear()
        proc = ctx.start(["-d", proxy_dsn(ctx, silent.port)] + mode + [path])
        check(silent.accepted.wait(30 * harness.SLOW), "pgmirror did not connect")
        time.sleep(0.3)
        t0 = time.time()
        rc = ctx.stop(proc)
        check(rc == 0 and time.time() - t0 < 1.5 * harness.SLOW and
              "warning" not in proc.stderr() and "error" not in proc.stderr(),
              "SIGTERM while connecting %s: exit %d after %.1f s\n%s"
              % (mode, rc, time.time() - t0, proc.stderr()))

    # a server's DETAIL and HINT on pgmirror's one line
    refusing = Listener("error")
    refusing.start()
    rc, out, err = ctx.run(["-d", proxy_dsn(ctx, refusing.port), "--once", path])
    lines = err.splitlines()
    check(rc == 1 and len(lines) == 1 and "second line" in err and "third line" in err and
          lines[0].startswith("pgmirror: error: "), "DETAIL/HINT: exit %d\n%s" % (rc, err))



def part_service(ctx, path, slot):
    # a service started before its source; -v under a frozen link. On a
    # slow disk (each sync 300 ms), so that a warning said before the
    # mirror holds it would be seen in the file too late
    proxy = Listener("forward")
    proc = ctx.start(["-d", proxy_dsn(ctx, proxy.port), "-v", "-s", "1", path],
                     env={"LD_PRELOAD": harness.fault_shim("slow_sync")})
    deadline = time.time() + 30 * harness.SLOW
    while "trying again" not in proc.stderr() and time.time() < deadline:
        time.sleep(0.1)
    check("trying again" in proc.stderr() and "error: " not in proc.stderr(),
          "a service before its source:\n%s" % proc.stderr())
    waiting = status_json(ctx, path)
    check("not available" in (waiting["last_error"] or ""), "while it waits: %s" % waiting)
    proxy.start()
    ctx.catch_up(path, proc=proc)
    deadline = time.time() + 30 * harness.SLOW
    while status_json(ctx, path)["last_error"] is not None and time.time() < deadline:
        time.sleep(0.2)
    check(status_json(ctx, path)["last_error"] is None, "a service in sync kept its error")
    proxy.paused = True
    ctx.sql("INSERT INTO b SELECT generate_series(1000, 1100)")
    deadline = time.time() + 30 * harness.SLOW
    silent = re.compile(r"^pgmirror: nothing heard from the server for ([3-9]|\d\d+) s", re.M)
    while not silent.search(proc.stderr()) and time.time() < deadline:
        time.sleep(0.1)
    check(silent.search(proc.stderr()), "no silent link in -v:\n%s" % proc.stderr())
    # the progress line just before it: its lag is at least the silence
    # (which that line prints whole, 2.8 s as 3)
    lines = proc.stderr().splitlines()
    at = max(i for i, l in enumerate(lines) if silent.match(l))
    lag = re.search(r"lag \d+ bytes, (\d+\.\d) s", lines[at - 1])
    check(lag and float(lag.group(1)) >= int(silent.match(lines[at]).group(1)) - 0.5,
          "a silent link's lag is not its silence: %s\n%s" % (lines[at - 1], lines[at]))
    proxy.paused = False
    ctx.catch_up(path, proc=proc)
    rc = ctx.stop(proc)
    check(rc == 0, "service: exit %d\n%s" % (rc, proc.stderr()))



def part_journal(ctx, path, slot):
    # under the journal: a priority on every line
    err_path = ctx.path("journal.err")
    with open(err_path, "wb") as fe:
        st_ = os.fstat(fe.fileno())
        env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st_.st_dev, st_.st_ino))
        subprocess.run(ctx.argv(["-v"] + ctx.mirror_args(path, slot, "pub", "--once")),
                       stderr=fe, env=env, timeout=60 * harness.SLOW, check=True)
    lines = open(err_path).read().splitlines()
    check(lines and all(l[:3] in ("<3>", "<4>", "<6>", "<7>") and l[3:12] == "pgmirror:"
                        for l in lines) and any(l.startswith("<7>") for l in lines),
          "priorities under the journal:\n%s" % "\n".join(lines))


def part_slot(ctx, path, slot):
    # a slot held a moment longer by a connection that then goes (as the
    # walsender of a run that has ended): waited for, not exit 3
    import psycopg2.extras
    holder = psycopg2.connect(ctx.dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection)
    cur = holder.cursor()
    cur.start_replication(slot_name=slot, options={"proto_version": "1", "publication_names": "pub"})
    threading.Timer(2.0, holder.close).start()
    ctx.once(path, slot, "pub")


PARTS = {"status": part_status, "connect": part_connect, "service": part_service,
         "journal": part_journal, "slot": part_slot}


def test(ctx):
    path, slot = setup(ctx)
    harness.run_parts(ctx, PARTS, path, slot)


if __name__ == "__main__":
    harness.main(test)

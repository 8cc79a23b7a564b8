#!/usr/bin/env python3
"""What a quiet run costs the source: pgmirror --once when nothing changed,
at 1, 100 and 1,000 published tables, side by side with another pgmirror
binary (today's main, say) and with pg_recvlogical, the smallest thing a
logical client can do (--start --endpos=<the current position> on a slot
of its own).

Run by bench/quiet.sh (which fetches the PostgreSQL binaries and builds
nothing). For each table count it makes a database with that many tables
(id int PRIMARY KEY and four columns of common types, a few rows each) in
one publication, gives each client its own slot (each pgmirror binary its
own mirror, made by a first run and one more run), and then runs the
clients in turn, ROUNDS rounds of BATCH quiet runs each, all through a
small TCP forwarder on loopback that counts the bytes each way and the
statements the client sends (simple-protocol Query and extended-protocol
Parse messages; a replication command is a Query). Measured per run:

- statements, bytes from the source and bytes to it (the medians of all
  runs);
- wall time on the device: the process's start to its exit, as cron sees
  it (median);
- server CPU: the CPU time of the backends and walsenders that served the
  runs, from the postmaster's reaped children (/proc/PID/stat cutime +
  cstime; each run's processes have exited when it ends; autovacuum is off
  so that nothing else exits meanwhile), in clock ticks: a batch's total
  divided by its runs, the median over the rounds.

The current position for pg_recvlogical is asked on a connection kept open
(it costs no backend start of its own). The machine may be shared: run it
more than once and quote what you see.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import clusters  # noqa: E402
from linkproxy import LinkProxy  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
COLUMNS = "id int PRIMARY KEY, a int, b text, c timestamptz, d numeric(10,2)"


def reaped_cpu(cluster):
    """CPU seconds of the postmaster's reaped children."""
    with open(os.path.join(cluster.data, "postmaster.pid")) as f:
        pm = int(f.readline())
    with open("/proc/%d/stat" % pm) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / TICK


def make_database(cluster, db, ntables):
    cluster.sql("CREATE DATABASE %s" % db)
    c = cluster.connect(db)
    cur = c.cursor()
    for i in range(ntables):
        cur.execute("CREATE TABLE t%d (%s); INSERT INTO t%d SELECT g, g, 'x' || g, now(), g "
                    "FROM generate_series(1, 3) g" % (i, COLUMNS, i))
    cur.execute("CREATE PUBLICATION p FOR TABLE %s"
                % ", ".join("t%d" % i for i in range(ntables)))
    cur.execute("CHECKPOINT")
    return c


class Client:
    def __init__(self, name, argv_fn):
        self.name = name
        self.argv = argv_fn  # () -> the argv of one quiet run
        self.stmts, self.up, self.down, self.wall, self.cpu = [], [], [], [], []


def run_batch(cluster, fwd, client, batch):
    cpu0 = reaped_cpu(cluster)
    for _ in range(batch):
        fwd.reset_counts()
        argv = client.argv()
        t0 = time.perf_counter()
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        if r.returncode != 0:
            sys.exit("%s: exit %d: %s" % (client.name, r.returncode,
                                         r.stderr.decode(errors="replace")))
        time.sleep(0.02)  # the forwarder's last bytes, the backend's exit
        counts = fwd.stats()
        client.stmts.append(counts["statements"])
        client.up.append(counts["bytes_up"])
        client.down.append(counts["bytes_down"])
        client.wall.append(wall)
    time.sleep(0.1)  # the backends of the last run are reaped
    client.cpu.append((reaped_cpu(cluster) - cpu0) / batch)


def scenario(cluster, fwd, ntables, binaries):
    db = "quiet%d" % ntables
    conn = make_database(cluster, db, ntables)
    cur = conn.cursor()
    dsn = "host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable gssencmode=disable" % (
        fwd.port, db)
    tmp = os.path.join(cluster.dir, db)
    os.mkdir(tmp)
    clients = []
    for label, binary in binaries:
        path = os.path.join(tmp, label + ".db")
        slot = "m_%s_%d" % (label, ntables)  # slot names are the cluster's
        for first in (True, False):
            a = [binary, "-q", "-d", dsn, "--once", path]
            if first:
                a[4:4] = ["-S", slot, "-P", "p"]
            r = subprocess.run(a, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("%s: first runs: exit %d: %s" % (label, r.returncode, r.stderr))
        clients.append(Client(label, lambda b=binary, p=path: [b, "-q", "-d", dsn, "--once", p]))
    recv = "recv_%d" % ntables
    cur.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (recv,))

    def recv_argv():
        cur.execute("SELECT pg_current_wal_lsn()::text")
        pos = cur.fetchone()[0]
        return [os.path.join(ARGS.recvlogical), "-d", dsn, "-S", recv, "--start",
                "--endpos=" + pos, "-o", "proto_version=1", "-o", "publication_names=p",
                "-f", "/dev/null", "--no-loop"]
    clients.append(Client("pg_recvlogical", recv_argv))
    for _ in range(ARGS.rounds):
        for c in clients:
            run_batch(cluster, fwd, c, ARGS.batch)
    conn.close()
    rows = []
    for c in clients:
        rows.append(dict(tables=ntables, client=c.name, stmts=statistics.median(c.stmts),
                         down=statistics.median(c.down), up=statistics.median(c.up),
                         wall=statistics.median(c.wall) * 1000,
                         cpu=statistics.median(c.cpu) * 1000))
        print("%(tables)d tables, %(client)s: %(stmts)d statements, %(down)d B from the source, "
              "%(up)d B to it, %(wall).1f ms wall, %(cpu).1f ms server CPU" % rows[-1],
              flush=True)
    return rows


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgmirror", required=True, help="the binary measured")
    ap.add_argument("--other", action="append", default=[],
                    help="LABEL=BINARY: another pgmirror to run side by side")
    ap.add_argument("--major", type=int, default=17)
    ap.add_argument("--recvlogical", default="pg_recvlogical")
    ap.add_argument("--tables", default="1,100,1000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=20)
    ARGS = ap.parse_args()
    binaries = [("pgmirror", ARGS.pgmirror)] + [tuple(o.split("=", 1)) for o in ARGS.other]
    top = clusters.tempfile.mkdtemp(prefix="pgm_quiet.")
    os.chmod(top, 0o755)
    cluster = clusters.Cluster(clusters.bindir(ARGS.major), top, "source")
    try:
        cluster.initdb()
        cluster.configure(port=cluster.port, unix_socket_directories=cluster.dir,
                          listen_addresses="127.0.0.1", wal_level="logical",
                          max_replication_slots=20, max_wal_senders=20, fsync=False,
                          autovacuum=False)
        cluster.start()
        fwd = LinkProxy(host="127.0.0.1", port=cluster.port).start()
        rows = []
        for n in [int(x) for x in ARGS.tables.split(",")]:
            rows += scenario(cluster, fwd, n, binaries)
        print("\n| tables | client | statements | bytes from the source | bytes to it "
              "| wall time (ms) | server CPU (ms) |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            print("| %(tables)d | %(client)s | %(stmts)d | %(down)d | %(up)d | %(wall).1f "
                  "| %(cpu).1f |" % r)
    finally:
        cluster.destroy()
        clusters.shutil.rmtree(top, ignore_errors=True)


ARGS = None
if __name__ == "__main__":
    main()

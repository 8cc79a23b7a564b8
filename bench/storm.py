#!/usr/bin/env python3
"""A connection storm: RUNS devices' quiet `pgmirror --once` runs started
in the same second (a crontab line `*/5 * * * *` on every device), and the
same runs spread by a random delay (the packaged timer's
RandomizedDelaySec=4min, the cron example's `sleep $(shuf -i 0-240 -n 1)`).

Run by bench/fleet.sh storm (which fetches the PostgreSQL binaries and
builds nothing). It makes one cluster on a free port of 127.0.0.1 with a
small published table and RUNS devices, each with its own slot and mirror
(a first run and one more, so that every later run is quiet). Then, for
each server setting of SETTINGS (max_wal_senders/max_connections; the
server is restarted with it) and each SPREAD (0: all at once; S: each run
starts after a random delay of 0 to S seconds, with the first setting
only, PostgreSQL's defaults), ROUNDS storms, each measuring:

- the time from the storm's start until every run has ended, and each
  run's own wall time (median, max);
- the runs that failed, and their messages (the first line of each, with
  the count of runs that printed it);
- the most walsenders and client backends at once (pg_stat_replication
  and pg_stat_activity, sampled every 10 ms on a connection kept open),
  and the most runs alive at once (from the runs' own start and end);
- the server's CPU (the postmaster's reaped children, per run).

The devices run on the same machine as the server, so a storm's time also
holds the devices' own CPU, which a real fleet spreads over its devices.
"""

import argparse
import collections
import os
import random
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import clusters  # noqa: E402
import fleet  # noqa: E402
from fleet import DB, Device, pct  # noqa: E402
from quiet import reaped_cpu  # noqa: E402


class Sampler(threading.Thread):
    """The most walsenders and client backends at once, until stopped."""

    def __init__(self, cluster):
        super().__init__(daemon=True)
        self.conn = cluster.connect(DB)
        self.stop = threading.Event()
        self.senders = self.backends = 0

    def run(self):
        cur = self.conn.cursor()
        while not self.stop.is_set():
            cur.execute("SELECT count(*) FILTER (WHERE backend_type = 'walsender'), "
                        "count(*) FILTER (WHERE backend_type = 'client backend') - 1 "
                        "FROM pg_stat_activity")
            s, b = cur.fetchone()
            self.senders, self.backends = max(self.senders, s), max(self.backends, b)
            time.sleep(0.01)


def storm(cluster, devices, spread):
    starts = sorted((random.uniform(0, spread), d) for d in devices) if spread else \
        [(0.0, d) for d in devices]
    sampler = Sampler(cluster)
    cpu0 = reaped_cpu(cluster)
    sampler.start()
    t0 = time.time()
    running, done = [], []  # (device, proc, started)
    pending = collections.deque(starts)
    while pending or running:
        now = time.time() - t0
        while pending and pending[0][0] <= now:
            d = pending.popleft()[1]
            p = subprocess.Popen(d.args(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            running.append((d, p, time.time()))
        still = []
        for d, p, started in running:
            if p.poll() is None:
                still.append((d, p, started))
            else:
                err = p.stderr.read().decode(errors="replace").strip()
                p.stderr.close()
                done.append((started, time.time(), p.returncode, err))
        running = still
        time.sleep(0.002 if running else 0.02)
    total = time.time() - t0
    time.sleep(0.2)  # the last runs' processes are reaped
    sampler.stop.set()
    sampler.join()
    sampler.conn.close()
    events = sorted([(s, 1) for s, _, _, _ in done] + [(e, -1) for _, e, _, _ in done])
    alive = most = 0
    for _, step in events:
        alive += step
        most = max(most, alive)
    walls = [e - s for s, e, _, _ in done]
    failed = [(rc, err.splitlines()[0] if err else "") for _, _, rc, err in done if rc != 0]
    return dict(total=total, wall50=statistics.median(walls), wallmax=max(walls),
                wall95=pct(walls, 95), failed=len(failed),
                messages=collections.Counter(failed), senders=sampler.senders,
                backends=sampler.backends, alive=most,
                cpu=(reaped_cpu(cluster) - cpu0) / len(done) * 1000)


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgmirror", required=True)
    ap.add_argument("--major", type=int, default=17)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settings", default="10/100,210/100,210/20",
                    help="max_wal_senders/max_connections pairs, comma-separated")
    ap.add_argument("--spread", default="0,60",
                    help="seconds of random delay before each run, comma-separated (other "
                         "than 0: with the first setting only)")
    ARGS = ap.parse_args()
    fleet.ARGS = ARGS  # Device.args reads ARGS.pgmirror
    top = clusters.tempfile.mkdtemp(prefix="pgm_storm.")
    os.chmod(top, 0o755)
    c = clusters.Cluster(clusters.bindir(ARGS.major), top, "source")
    try:
        c.initdb()
        c.configure(port=c.port, unix_socket_directories=c.dir, listen_addresses="127.0.0.1",
                    wal_level="logical", fsync=False, autovacuum=False,
                    max_replication_slots=ARGS.runs + 10, max_wal_senders=ARGS.runs + 10,
                    max_connections=ARGS.runs + 20)
        c.start()
        c.sql('CREATE DATABASE "%s"' % DB)
        c.sql("CREATE TABLE orders (id bigint PRIMARY KEY, store int NOT NULL, "
              "amount numeric(10,2), note text, created timestamptz NOT NULL "
              "DEFAULT clock_timestamp()); INSERT INTO orders (id, store, amount, note) "
              "SELECT g, g % 97, g, 'order' FROM generate_series(1, 100) g; "
              "CREATE PUBLICATION all_orders FOR TABLE orders", dbname=DB)
        d = os.path.join(top, "devices")
        os.mkdir(d)
        devices = [Device(k, c, False, d) for k in range(ARGS.runs)]
        for first in (True, False):
            for i in range(0, len(devices), 8):  # 8 at a time
                procs = [(dev, subprocess.Popen(dev.args(first=first), stdout=subprocess.DEVNULL,
                                                stderr=subprocess.PIPE))
                         for dev in devices[i:i + 8]]
                for dev, p in procs:
                    err = p.communicate()[1].decode(errors="replace")
                    if p.returncode != 0:
                        sys.exit("device %d: first runs: exit %d: %s" % (dev.k, p.returncode, err))
        rows = []
        for i, setting in enumerate(ARGS.settings.split(",")):
            senders, conns = (int(x) for x in setting.split("/"))
            c.stop()
            c.configure(max_wal_senders=senders, max_connections=conns)
            c.start()
            spreads = [float(x) for x in ARGS.spread.split(",")]
            for spread in spreads if i == 0 else [x for x in spreads if x == 0]:
                results = []
                for _ in range(ARGS.rounds):
                    r = storm(c, devices, spread)
                    results.append(r)
                    print("max_wal_senders %d, max_connections %d, delay 0-%.0f s: %d runs done in "
                          "%.1f s (each p50 %.2f s, max %.2f s); %d failed %s; at once: %d "
                          "walsenders, %d backends, %d runs; server CPU %.1f ms per run"
                          % (senders, conns, spread, ARGS.runs, r["total"], r["wall50"],
                             r["wallmax"], r["failed"], dict(r["messages"]), r["senders"],
                             r["backends"], r["alive"], r["cpu"]), flush=True)
                med = {k: statistics.median(r[k] for r in results)
                       for k in ("total", "wall50", "wallmax", "failed", "senders", "backends",
                                 "alive", "cpu")}
                rows.append((senders, conns, spread, med))
        print("\n| max_wal_senders / max_connections | random delay | time to all done "
              "| run wall p50 / max | failed runs | walsenders at once | backends at once "
              "| runs alive at once | server CPU per run |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for senders, conns, spread, m in rows:
            print("| %d / %d | 0-%.0f s | %.1f s | %.2f / %.2f s | %d of %d | %d | %d | %d "
                  "| %.1f ms |" % (senders, conns, spread, m["total"], m["wall50"], m["wallmax"],
                                   m["failed"], ARGS.runs, m["senders"], m["backends"],
                                   m["alive"], m["cpu"]))
        print("(medians of %d rounds each)" % ARGS.rounds)
    finally:
        c.destroy()
        clusters.shutil.rmtree(top, ignore_errors=True)


ARGS = None
if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A fleet of pgmirror devices against one primary, or a primary and a hot
standby, with a steady write workload; what it costs the servers.

Run by bench/fleet.sh (which fetches the PostgreSQL binaries and builds
nothing); see there for the options. For each scenario (N devices, all on
the primary or split between the primary and the standby) it makes a fresh
primary and standby (tests/integration/clusters.py), then:

- a writer commits RATE transactions a second, each one row of the
  published table `orders` (its `store` picks the device it belongs to) and
  one row of ~1000 bytes of the unpublished table `noise`, so that the
  walsenders decode much WAL they send nothing of;
- every device has its own slot and mirror; a FILTERED share of them mirror
  a publication of their own with a row filter (`WHERE store = k`), the
  others the whole table; each runs `pgmirror --once` every INTERVAL
  seconds, staggered like cron jobs spread over the interval (a run still
  going when the next is due is skipped, as exit 3 would);
- for DURATION seconds it measures the sync lag of every row a device
  mirrors (its source commit time to the end of the run that brought it),
  the CPU time of each server's processes (the postmaster, its live
  children and the children it has reaped), the WAL written, the WAL the
  slots hold back (sampled each second), and the walsenders connected at
  once (sampled).

A scenario with N = 0 measures the workload alone; the decoding cost of a
device is then (server CPU - that baseline) / N, also per MB of WAL.
Printed: one line per scenario, and a Markdown table at the end.
"""

import argparse
import datetime
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
from harness import parse_lsn  # noqa: E402

DB = "fleet"
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid, children=False):
    """utime + stime (+ cutime + cstime) of pid, in seconds; 0 if gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    t = int(fields[11]) + int(fields[12])
    if children:
        t += int(fields[13]) + int(fields[14])
    return t / TICK


def server_cpu(cluster):
    """CPU seconds of a cluster: postmaster, reaped children, live children."""
    with open(os.path.join(cluster.data, "postmaster.pid")) as f:
        pm = int(f.readline())
    total = proc_cpu(pm, children=True)
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pm:
                total += proc_cpu(int(d))
    return total


def lsn(c, q):
    return parse_lsn(c.sql1(q))


class Device:
    def __init__(self, k, server, filtered, tmp):
        self.k = k
        self.server = server  # the Cluster it mirrors from
        self.filtered = filtered
        self.slot = "dev%03d" % k
        self.pub = "store_%d" % k if filtered else "all_orders"
        self.path = os.path.join(tmp, "dev%03d.db" % k)
        self.proc = None
        self.last_id = 0
        self.lags = []
        self.runs = self.skipped = self.failed = 0

    def args(self, first=False):
        a = [ARGS.pgmirror, "-q", "-d", self.server.dsn(DB), "--once"]
        if first:
            a += ["-S", self.slot, "-P", self.pub, "--no-initial-copy"]
        return a + [self.path]

    def start_run(self):
        if self.proc is not None and self.proc.poll() is None:
            self.skipped += 1
            return
        self.proc = subprocess.Popen(self.args(), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.runs += 1

    def collect(self):
        """After a run has ended: the lag of each row it brought."""
        if self.proc is None or self.proc.poll() is None:
            return False
        end = time.time()
        err = self.proc.stderr.read().decode(errors="replace")
        if self.proc.returncode != 0:
            self.failed += 1
            if self.failed <= 3:
                print("device %d: exit %d: %s" % (self.k, self.proc.returncode, err.strip()),
                      file=sys.stderr)
        self.proc.stderr.close()
        self.proc = None
        import sqlite3
        con = sqlite3.connect(self.path, timeout=30)
        try:
            rows = con.execute("SELECT id, created FROM orders WHERE id > ?",
                               (self.last_id,)).fetchall()
        except sqlite3.Error:
            rows = []
        finally:
            con.close()
        for rid, created in rows:
            t = datetime.datetime.strptime(created[:26].ljust(26, "0") if "." in created
                                           else created + ".000000",
                                           "%Y-%m-%d %H:%M:%S.%f").replace(
                tzinfo=datetime.timezone.utc).timestamp()
            self.lags.append(end - t)
            self.last_id = max(self.last_id, rid)
        return True


def writer(primary, stop, rate, counter):
    c = primary.connect(DB)
    cur = c.cursor()
    pad = os.urandom(500).hex()  # 1000 bytes that do not compress
    next_t = time.time()
    while not stop.is_set():
        store = random.randrange(max(1, ARGS.stores))
        cur.execute("BEGIN; INSERT INTO orders (store, amount, note) VALUES (%s, %s, %s);"
                    "INSERT INTO noise (payload) VALUES (%s); COMMIT",
                    (store, random.randrange(1, 10000) / 100, "order", pad[counter[0] % 7:]))
        counter[0] += 1
        next_t += 1.0 / rate
        delay = next_t - time.time()
        if delay > 0:
            time.sleep(delay)
    c.close()


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def scenario(n, split):
    # a standby needs at least the primary's values (it had 20 and 100)
    conf = dict(max_replication_slots=max(20, n + 10), max_wal_senders=max(20, n + 10),
                max_connections=max(100, 2 * n + 40))
    pair = clusters.Pair(ARGS.major, dbname=DB, primary_conf=conf,
                         standby_conf=dict(conf, hot_standby_feedback=True))
    tmp = pair.top
    try:
        p, s = pair.primary, pair.standby
        p.sql("CREATE TABLE orders (id bigserial PRIMARY KEY, store int NOT NULL, "
              "amount numeric(10,2), note text, created timestamptz NOT NULL "
              "DEFAULT clock_timestamp());"
              "CREATE TABLE noise (id bigserial PRIMARY KEY, payload text);"
              "CREATE PUBLICATION all_orders FOR TABLE orders", dbname=DB)
        nfilt = int(round(n * ARGS.filtered))
        for k in range(nfilt):
            p.sql("CREATE PUBLICATION store_%d FOR TABLE orders WHERE (store = %d)" % (k, k),
                  dbname=DB)
        pair.wait_replay()
        devices = [Device(k, s if split and k % 2 == 1 else p, k < nfilt, tmp)
                   for k in range(n)]
        # first runs (slots; on the standby each waits for a snapshot record)
        stop_snap = threading.Event()

        def snapshots():
            while not stop_snap.is_set():
                pair.log_snapshot()
                time.sleep(0.2)
        th = threading.Thread(target=snapshots, daemon=True)
        th.start()
        for d in devices:
            r = subprocess.run(d.args(first=True), capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                sys.exit("device %d first run: exit %d: %s" % (d.k, r.returncode, r.stderr))
        stop_snap.set()
        th.join()

        stop = threading.Event()
        counter = [0]
        w = threading.Thread(target=writer, args=(p, stop, ARGS.rate, counter), daemon=True)
        lsn0 = lsn(p, "SELECT pg_current_wal_lsn()::text")
        cpu0 = (server_cpu(p), server_cpu(s))
        t0 = time.time()
        w.start()
        held = {"primary": 0, "standby": 0}
        senders = {"primary": 0, "standby": 0}
        next_sample = t0
        due = [t0 + ARGS.interval * k / max(1, n) for k in range(n)]
        while time.time() < t0 + ARGS.duration:
            now = time.time()
            for i, d in enumerate(devices):
                d.collect()
                if now >= due[i]:
                    d.start_run()
                    due[i] += ARGS.interval
            if now >= next_sample:
                next_sample += 1
                for name, c, cur in (("primary", p, "pg_current_wal_lsn()"),
                                     ("standby", s, "pg_last_wal_replay_lsn()")):
                    r = c.sql("SELECT coalesce(max(pg_wal_lsn_diff(%s, restart_lsn)), 0), "
                              "(SELECT count(*) FROM pg_stat_replication WHERE "
                              "application_name <> 'standby') FROM pg_replication_slots "
                              "WHERE slot_type = 'logical'" % cur)
                    held[name] = max(held[name], float(r[0][0]))
                    senders[name] = max(senders[name], int(r[0][1]))
            time.sleep(0.02)
        stop.set()
        w.join()
        # the runs in flight end; their lags count
        deadline = time.time() + 120
        while any(d.proc is not None for d in devices) and time.time() < deadline:
            for d in devices:
                d.collect()
            time.sleep(0.05)
        elapsed = time.time() - t0
        cpu1 = (server_cpu(p), server_cpu(s))
        wal_mb = (lsn(p, "SELECT pg_current_wal_lsn()::text") - lsn0) / 1e6
        lags = [x for d in devices for x in d.lags]
        res = dict(n=n, split=split, secs=elapsed, tx=counter[0], wal_mb=wal_mb,
                   runs=sum(d.runs for d in devices),
                   skipped=sum(d.skipped for d in devices),
                   failed=sum(d.failed for d in devices),
                   lag50=pct(lags, 50), lag95=pct(lags, 95),
                   lagmax=max(lags) if lags else float("nan"),
                   cpu_p=cpu1[0] - cpu0[0], cpu_s=cpu1[1] - cpu0[1],
                   held_p=held["primary"] / 1e6, held_s=held["standby"] / 1e6,
                   send_p=senders["primary"], send_s=senders["standby"],
                   slots_p=sum(1 for d in devices if d.server is p),
                   slots_s=sum(1 for d in devices if d.server is s))
        print("N=%(n)d split=%(split)s: %(tx)d tx, %(wal_mb).1f MB WAL in %(secs).0f s; "
              "%(runs)d runs (%(skipped)d skipped, %(failed)d failed); lag p50 %(lag50).1f s "
              "p95 %(lag95).1f s max %(lagmax).1f s; CPU primary %(cpu_p).1f s standby "
              "%(cpu_s).1f s; WAL held max %(held_p).1f / %(held_s).1f MB; walsenders at "
              "once %(send_p)d / %(send_s)d" % res, flush=True)
        return res
    finally:
        pair.close()


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgmirror", required=True)
    ap.add_argument("--major", type=int, default=17)
    ap.add_argument("--devices", default="10,50,100")
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--interval", type=float, default=10)
    ap.add_argument("--rate", type=float, default=100)
    ap.add_argument("--filtered", type=float, default=0.5)
    ap.add_argument("--no-split", action="store_true")
    ARGS = ap.parse_args()
    ns = [int(x) for x in ARGS.devices.split(",")]
    ARGS.stores = max(ns)
    results = [scenario(0, False)]
    for n in ns:
        results.append(scenario(n, False))
        if not ARGS.no_split:
            results.append(scenario(n, True))
    base = results[0]
    print("\n| devices | where | WAL MB | lag p50 / p95 / max (s) | server CPU s "
          "(primary + standby) | decoding CPU per device per MB WAL (ms) | WAL held max (MB) "
          "| walsenders at once | slots |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        # the workload alone, scaled to this scenario's transactions
        scale = r["tx"] / base["tx"] if base["tx"] else 1
        extra = r["cpu_p"] + r["cpu_s"] - (base["cpu_p"] + base["cpu_s"]) * scale
        per = extra / r["n"] / r["wal_mb"] * 1000 if r["n"] and r["wal_mb"] else float("nan")
        print("| %d | %s | %.1f | %.1f / %.1f / %.1f | %.1f + %.1f | %.1f | %.1f / %.1f | "
              "%d / %d | %d / %d |" % (
                  r["n"], "primary + standby" if r["split"] else "primary", r["wal_mb"],
                  r["lag50"], r["lag95"], r["lagmax"], r["cpu_p"], r["cpu_s"], per,
                  r["held_p"], r["held_s"], r["send_p"], r["send_s"], r["slots_p"],
                  r["slots_s"]))


ARGS = None
if __name__ == "__main__":
    main()

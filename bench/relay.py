#!/usr/bin/env python3
"""A relay tier for a fleet: devices on a relay that subscribes to the
primary with PostgreSQL's own logical replication, beside the same devices
on the primary, at the same primary workload; what a device run costs each
server, and what lag the relay adds.

Run by bench/fleet.sh relay (which fetches the PostgreSQL binaries and
builds nothing). It makes two clusters of one major on free ports of
127.0.0.1 (tests/integration/clusters.py):

- the primary, with the mirrored table `orders` in the publication
  `relay_pub` and the unpublished table `noise`;
- the relay, with its own copy of `orders` (one column more, `relayed`,
  whose default clock_timestamp() is the time the relay applied the row:
  `relayed - created` is the lag the relay adds), subscribed to
  `relay_pub` (CREATE SUBSCRIPTION: one slot on the primary) and
  publishing its copy again as `all_orders`;
- DEVICES devices on each server (its own slot and mirror each, first run
  with --no-initial-copy), mirroring `all_orders` (a publication of the
  same name on the primary), each running `pgmirror --once` every
  INTERVAL seconds, the runs of both groups staggered over the interval.

Then ROUNDS rounds of two phases each: a quiet phase (QUIET seconds, no
writes: the cost of a run that finds nothing new) and a load phase
(DURATION seconds) in which a writer commits TX transactions a second
that together write RATE MB of WAL a second on the primary, SHARE of it
rows of `orders` (about 160 bytes of WAL each, NOTE_BYTES more with
--note-bytes) and the rest rows of ~1 kB of `noise` (the rows per
transaction come from a calibration of the WAL each kind of row writes).
With --filtered F, a share F of the devices mirror a publication of their
own with a row filter (`WHERE store = K`, about 1 % of the rows), on both
servers.
Before each phase the devices are brought up to date and a
running-transactions record is logged, so that a phase's runs start from
slots that hold no WAL of the phase before. Measured per phase and server:

- server CPU per device run: the CPU time of the processes that served
  the runs (walsender and backend), from the postmaster's reaped children
  (/proc/PID/stat cutime + cstime; autovacuum is off and every other
  connection is kept open, so nothing else exits), over the runs;
- the WAL each server wrote (MB/s), and the CPU of the relay tier itself:
  the primary's walsender of the subscription and the relay's own
  processes (all but the devices' runs);
- the lag the relay adds (relayed - created, median and max, of every row
  written in the phase) and each group's sync lag (source commit to the
  end of the run that brought the row).

From the medians over the rounds: a (ms per quiet run), b (ms per MB of
WAL decoded per device: (load - quiet) per run over the WAL a run
decoded, from its slot's restart point, asked before each run), how far
that restart point lay before the end of the device's last run, and the
fleet formula for both placements, evaluated at --goal N,T,W,S (devices,
seconds between runs, MB/s of WAL on the primary, mirrored share). With
--failover it also points one relay device at a second relay, drops
another device's slot, and prints what pgmirror says and what the way
back costs. With --advance, the bench calls pg_replication_slot_advance()
to each slot's confirmed position after each run (an experiment: does
moving the restart point up after a run cost less than decoding the
stretch again in the next?), its CPU counted with the runs'.
"""

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import clusters  # noqa: E402
import fleet  # noqa: E402
from fleet import DB, Device, pct, proc_cpu, server_cpu  # noqa: E402
from harness import parse_lsn  # noqa: E402
from quiet import reaped_cpu  # noqa: E402

ORDERS = ("CREATE TABLE orders (id bigint PRIMARY KEY, store int NOT NULL, "
          "amount numeric(10,2), note text, created timestamptz NOT NULL "
          "DEFAULT clock_timestamp()%s)")
def wal_lsn(conn):
    """The server's current WAL position, asked on conn (kept open)."""
    cur = conn.cursor()
    cur.execute("SELECT pg_current_wal_lsn()::text")
    return parse_lsn(cur.fetchone()[0])


ORDER_IDS = itertools.count(1)


def make_server(top, name, conf):
    c = clusters.Cluster(clusters.bindir(ARGS.major), top, name)
    c.initdb()
    c.configure(port=c.port, unix_socket_directories=c.dir, listen_addresses="127.0.0.1",
                wal_level="logical", fsync=False, autovacuum=False, **conf)
    c.start()
    c.sql('CREATE DATABASE "%s"' % DB)
    return c


def publish(c):
    """The devices' publications: all_orders, and store_K for the devices
    with a row filter."""
    c.sql("CREATE PUBLICATION all_orders FOR TABLE orders", dbname=DB)
    for k in range(int(round(ARGS.devices * ARGS.filtered))):
        c.sql("CREATE PUBLICATION store_%d FOR TABLE orders WHERE (store = %d)" % (k, k),
              dbname=DB)


def make_relay(top, name, primary, conf):
    """A relay: orders (and relayed), subscribed to relay_pub, published
    again as all_orders; returns once its initial copy is done."""
    r = make_server(top, name, conf)
    r.sql(ORDERS % ", relayed timestamptz NOT NULL DEFAULT clock_timestamp()", dbname=DB)
    sub = name.replace("-", "_") + "_sub"
    r.sql("CREATE SUBSCRIPTION " + sub + " CONNECTION %s PUBLICATION relay_pub",
          primary.dsn(DB), dbname=DB)
    publish(r)
    r.wait(lambda: r.sql1("SELECT count(*) FILTER (WHERE srsubstate <> 'r') = 0 AND count(*) > 0 "
                          "FROM pg_subscription_rel", dbname=DB),
           "the subscription's initial copy", timeout=120)
    return r, sub


class Writer(threading.Thread):
    """TX transactions a second of orders and noise rows, RATE MB/s of WAL
    with SHARE of it orders'."""

    def __init__(self, primary, per_order, per_noise):
        super().__init__(daemon=True)
        self.conn = primary.connect(DB)
        self.orders_per_tick = ARGS.share * ARGS.rate * 1e6 / per_order / ARGS.tx
        self.noise_per_tick = (1 - ARGS.share) * ARGS.rate * 1e6 / per_noise / ARGS.tx
        self.stop = threading.Event()
        self.per_order = per_order
        self.rows = [0, 0]  # orders, noise

    def tick(self, cur, norders, nnoise):
        q = []
        if norders:
            first = next(ORDER_IDS)
            for _ in range(norders - 1):
                next(ORDER_IDS)
            q.append("INSERT INTO orders (id, store, amount, note) SELECT g, g %% 97, "
                     "(random() * 100)::numeric(10,2), 'order ' || g || repeat('x', %d) "
                     "FROM generate_series(%d, %d) g"
                     % (ARGS.note_bytes, first, first + norders - 1))
        if nnoise:
            q.append("INSERT INTO noise (payload) SELECT repeat(md5(random()::text), 30) "
                     "FROM generate_series(1, %d)" % nnoise)
        if q:
            cur.execute("; ".join(q))
            self.rows[0] += norders
            self.rows[1] += nnoise

    def run(self):
        cur = self.conn.cursor()
        acc_o = acc_n = 0.0
        next_t = time.time()
        while not self.stop.is_set():
            acc_o += self.orders_per_tick
            acc_n += self.noise_per_tick
            self.tick(cur, int(acc_o), int(acc_n))
            acc_o -= int(acc_o)
            acc_n -= int(acc_n)
            next_t += 1.0 / ARGS.tx
            delay = next_t - time.time()
            if delay > 0:
                time.sleep(delay)

    def calibrate(self):
        """The WAL bytes of one orders row and of one noise row, each
        written in transactions of 100 rows."""
        cur = self.conn.cursor()
        out = []
        for norders, nnoise in ((100, 0), (0, 100)):
            a = wal_lsn(self.conn)
            for _ in range(20):
                self.tick(cur, norders, nnoise)
            out.append((wal_lsn(self.conn) - a) / 2000.0)
        return out


class Watch:
    """Connections kept open to a server, so that the measuring does not
    add reaped backends."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.conn = cluster.connect(DB)
        self.pid = self.one("SELECT pg_backend_pid()")[0]

    def advance(self, d):
        """With --advance, after a run of d: pg_replication_slot_advance()
        to the slot's confirmed position, which decodes (fast-forward) from
        the restart point and moves it along the running-transactions
        records it passes."""
        if ARGS.advance and d.collect():
            self.one("SELECT pg_replication_slot_advance('%s', confirmed_flush_lsn) FROM "
                     "pg_replication_slots WHERE slot_name = '%s'" % (d.slot, d.slot))

    def lsn(self):
        return wal_lsn(self.conn)

    def one(self, q):
        cur = self.conn.cursor()
        cur.execute(q)
        return cur.fetchone()


def bring_up_to_date(devices, watches):
    """Each device runs once (twice around a running-transactions record),
    so that its slot's restart point is near the end of the WAL."""
    for w in watches:
        w.one("SELECT pg_log_standby_snapshot()" if ARGS.major >= 16 else "CHECKPOINT")
    time.sleep(0.2)
    for _ in range(2):
        for d in devices:
            d.start_run()
        while any(d.proc is not None for d in devices):
            for d in devices:
                watches[0 if d.label == "primary" else 1].advance(d)
                d.collect()
            time.sleep(0.05)
        for w in watches:
            w.one("SELECT pg_log_standby_snapshot()" if ARGS.major >= 16 else "CHECKPOINT")
        time.sleep(0.2)


def note_start(d, watch):
    """A run of d starts: the WAL it will decode (from its slot's restart
    point to the end), and how far that restart point lies before the end
    of the device's last run (which stopped at the WAL's end when it
    started)."""
    end, restart = (parse_lsn(x) for x in watch.one(
        "SELECT pg_current_wal_lsn()::text, restart_lsn::text FROM pg_replication_slots "
        "WHERE slot_name = '%s'" % d.slot))
    d.decoded += end - restart
    if d.prev is not None:
        d.stretch.append(max(0, d.prev - restart))
    d.prev = end


def run_phase(name, groups, writer, sub_pid, duration):
    """groups: [(label, cluster, watch, devices)]; runs the devices for
    duration seconds; returns a dict of figures per group."""
    devices = [d for g in groups for d in g[3]]
    bring_up_to_date(devices, [g[2] for g in groups])
    watch_of = {d.slot + g[0]: g[2] for g in groups for d in g[3]}
    for d in devices:
        d.lags, d.runs, d.failed, d.decoded, d.stretch, d.prev = [], 0, 0, 0.0, [], None
    before = {g[0]: (reaped_cpu(g[1]), server_cpu(g[1]), g[2].lsn(), proc_cpu(g[2].pid))
              for g in groups}
    sub0 = proc_cpu(sub_pid)
    t0 = time.time()
    if writer is not None:
        writer.start()
    n = len(devices)
    due = [t0 + ARGS.interval * k / n for k in range(n)]
    while time.time() < t0 + duration:
        now = time.time()
        for i, d in enumerate(devices):
            watch_of[d.slot + d.label].advance(d)
            d.collect()
            if now >= due[i]:
                if d.proc is None:
                    note_start(d, watch_of[d.slot + d.label])
                d.start_run()
                due[i] += ARGS.interval
        time.sleep(0.02)
    if writer is not None:
        writer.stop.set()
        writer.join()
    t1 = time.time()
    deadline = t1 + 120
    while any(d.proc is not None for d in devices) and time.time() < deadline:
        for d in devices:
            watch_of[d.slot + d.label].advance(d)
            d.collect()
        time.sleep(0.05)
    time.sleep(0.2)  # the last runs' processes are reaped
    secs = t1 - t0
    res = dict(phase=name, secs=secs, sub_cpu=proc_cpu(sub_pid) - sub0)
    for label, cluster, watch, devs in groups:
        r0, s0, l0, w0 = before[label]
        reaped = reaped_cpu(cluster) - r0
        if ARGS.advance:  # the advances ran in the watching backend
            reaped += proc_cpu(watch.pid) - w0
        runs = sum(d.runs for d in devs)
        lags = [x for d in devs for x in d.lags]
        res[label] = dict(runs=runs, failed=sum(d.failed for d in devs),
                          decoded=sum(d.decoded for d in devs) / runs / 1e6 if runs else 0,
                          stretch=statistics.median([x for d in devs for x in d.stretch] or [0])
                          / 1e6,
                          per_run=reaped / runs * 1000 if runs else float("nan"),
                          others=(server_cpu(cluster) - s0 - reaped) / secs,
                          wal=(watch.lsn() - l0) / 1e6 / secs,
                          lag50=pct(lags, 50), lagmax=max(lags) if lags else float("nan"))
    if writer is not None:
        row = groups[-1][2].one(
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM relayed - "
            "created)), max(extract(epoch FROM relayed - created)), count(*) FROM orders "
            "WHERE created >= to_timestamp(%f) AND created < to_timestamp(%f)" % (t0, t1))
        res["mirrored"] = writer.rows[0] * writer.per_order / 1e6 / secs  # MB/s, nominal
        res["changes"] = writer.rows[0] / secs
        res["relay_lag50"], res["relay_lagmax"], res["relay_rows"] = (
            float(row[0] or "nan"), float(row[1] or "nan"), int(row[2]))
    line = "%s phase, %.0f s:" % (name, secs)
    for label, *_ in groups:
        g = res[label]
        line += (" %s: %d runs (%d failed), %.1f ms server CPU per run, WAL %.3f MB/s, "
                 "other processes %.3f cores, sync lag p50 %.1f s max %.1f s;"
                 % (label, g["runs"], g["failed"], g["per_run"], g["wal"], g["others"],
                    g["lag50"], g["lagmax"]))
    if writer is not None:
        line += (" relay adds p50 %.3f s max %.3f s (%d rows); subscription's walsender "
                 "%.3f cores" % (res["relay_lag50"], res["relay_lagmax"], res["relay_rows"],
                                 res["sub_cpu"] / secs))
    print(line, flush=True)
    return res


def run_once(args, timeout=300):
    t = time.time()
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stderr.strip(), time.time() - t


def failover(top, primary, relay, conf, dev_moved, dev_dropped):
    """What pgmirror does when a device moves to another relay, and when
    its slot is gone from its relay."""
    relay2, _ = make_relay(top, "relay2", primary, conf)
    try:
        rows = relay2.sql1("SELECT count(*) FROM orders", dbname=DB)
        a = [ARGS.pgmirror, "-d", relay2.dsn(DB), "--once", dev_moved.path]
        rc, err, secs = run_once(a)
        print("failover: device %d pointed at another relay: exit %d in %.2f s: %s"
              % (dev_moved.k, rc, secs, err), flush=True)
        fresh = dev_moved.path + ".relay2"
        rc, err, secs = run_once([ARGS.pgmirror, "-q", "-d", relay2.dsn(DB), "-S", dev_moved.slot,
                                  "-P", "all_orders", "--once", fresh])
        print("failover: a new mirror file from the other relay (first run, %d rows): exit %d "
              "in %.2f s %s" % (rows, rc, secs, err), flush=True)
        relay.sql("SELECT pg_drop_replication_slot(%s)", dev_dropped.slot, dbname=DB)
        rc, err, secs = run_once([ARGS.pgmirror, "-d", relay.dsn(DB), "--once",
                                  dev_dropped.path])
        print("failover: device %d whose slot was dropped on its relay: exit %d in %.2f s: %s"
              % (dev_dropped.k, rc, secs, err), flush=True)
    finally:
        relay2.destroy()


def med(results, label, key):
    xs = [r[label][key] if label else r[key] for r in results]
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def report(quiet, load, per_order, per_noise):
    a_p, a_r = med(quiet, "primary", "per_run"), med(quiet, "relay", "per_run")
    c_p, c_r = med(load, "primary", "per_run"), med(load, "relay", "per_run")
    w_p, w_r = med(load, "primary", "wal"), med(load, "relay", "wal")
    # the WAL a run decodes: from its slot's restart point, which lags the
    # last run's end by up to a running-transactions record's interval
    d_p, d_r = med(load, "primary", "decoded"), med(load, "relay", "decoded")
    b_p, b_r = (c_p - a_p) / d_p, (c_r - a_r) / d_r
    # in seconds of the server's WAL
    s_p, s_r = med(load, "primary", "stretch") / w_p, med(load, "relay", "stretch") / w_r
    relay_own = med(load, "relay", "others") - med(quiet, "relay", "others")
    sub = med(load, None, "sub_cpu") / med(load, None, "secs")
    mirrored = med(load, None, "mirrored")  # MB/s of the primary's WAL that is mirrored
    share_measured = mirrored / w_p
    print("\nCalibration: %.0f B of WAL per orders row, %.0f B per noise row; the primary "
          "wrote %.3f MB/s, %.1f %% of it orders rows (%.0f a second, in %.0f transactions); "
          "the relay wrote %.3f MB/s (%.2f MB per MB of mirrored primary WAL)"
          % (per_order, per_noise, w_p, 100 * share_measured, med(load, None, "changes"),
             ARGS.tx, w_r, w_r / mirrored))
    print("\n| rounds %d, %d + %d devices (%d with a row filter), a run every %.0f s "
          "| on the primary | on the relay |" % (len(load), ARGS.devices, ARGS.devices,
                                                 int(round(ARGS.devices * ARGS.filtered)),
                                                 ARGS.interval))
    print("| --- | --- | --- |")
    print("| server CPU per quiet run (a) | %.1f ms | %.1f ms |" % (a_p, a_r))
    print("| server CPU per run under load | %.1f ms | %.1f ms |" % (c_p, c_r))
    print("| WAL the server wrote | %.3f MB/s | %.3f MB/s |" % (w_p, w_r))
    print("| WAL a run decoded (from its slot's restart point) | %.2f MB | %.2f MB |"
          % (d_p, d_r))
    print("| of it before the end of the device's last run (median) | %.1f s of WAL "
          "| %.1f s of WAL |" % (s_p, s_r))
    print("| decoding per device per MB of WAL decoded (b) | %.1f ms | %.1f ms |"
          % (b_p, b_r))
    print("| sync lag p50 / max | %.1f / %.1f s | %.1f / %.1f s |" % (
        med(load, "primary", "lag50"), med(load, "primary", "lagmax"),
        med(load, "relay", "lag50"), med(load, "relay", "lagmax")))
    changes = med(load, None, "changes")
    print("| the same per 1,000 mirrored changes decoded | %.1f ms | %.1f ms |"
          % ((c_p - a_p) / (changes * d_p / w_p) * 1000,
             (c_r - a_r) / (changes * d_r / w_r) * 1000))
    print("| failed runs | %d | %d |" % (sum(r["primary"]["failed"] for r in quiet + load),
                                        sum(r["relay"]["failed"] for r in quiet + load)))
    print("\nThe relay adds a lag of p50 %.3f s, max %.3f s (medians over the rounds; worst "
          "%.3f s). The relay tier itself: the subscription's walsender on the primary %.3f "
          "cores (%.1f ms per MB of primary WAL), the relay's apply and other processes %.3f "
          "cores over its idle (%.1f ms per MB mirrored)."
          % (med(load, None, "relay_lag50"), med(load, None, "relay_lagmax"),
             max(r["relay_lagmax"] for r in load), sub, sub / w_p * 1000, relay_own,
             relay_own / mirrored * 1000))
    n, t, w, s = (float(x) for x in ARGS.goal.split(","))
    w_relay = w * s * (w_r / mirrored)
    # the stretch as a share of the interval (it grows with the interval)
    k_p, k_r = s_p / ARGS.interval, s_r / ARGS.interval
    on_primary = n * (b_p * w * t * (1 + k_p) + a_p) / t / 1000
    per_relay = relay_own / mirrored * w * s
    on_relays = n * (b_r * w_relay * t * (1 + k_r) + a_r) / t / 1000
    print("\nGoal: %d devices, a run every %.0f s, %.2f MB/s of WAL on the primary, %.0f %% "
          "mirrored (the relay's WAL %.3f MB/s):" % (n, t, w, 100 * s, w_relay))
    print("  devices on the primary: %.2f cores = N x (%.1f ms x W x %.2f T + %.1f ms) / T"
          % (on_primary, b_p, 1 + k_p, a_p))
    print("  devices on relays: %.2f cores of device runs = N x (%.1f ms x W_relay x %.2f T "
          "+ %.1f ms) / T, plus per relay %.3f cores of apply and %.3f cores on the primary"
          % (on_relays, b_r, 1 + k_r, a_r, per_relay, sub / w_p * w))
    print("  (the restart stretch taken as the same share of the interval as measured here; "
          "it grew from 0.25-0.7 to 0.55 of it on a relay from runs every 30 s to 240 s)")


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgmirror", required=True)
    ap.add_argument("--major", type=int, default=17)
    ap.add_argument("--devices", type=int, default=20, help="devices on each server")
    ap.add_argument("--interval", type=float, default=30)
    ap.add_argument("--duration", type=float, default=90, help="seconds of each load phase")
    ap.add_argument("--quiet", type=float, default=30, help="seconds of each quiet phase")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rate", type=float, default=1.0, help="MB/s of WAL on the primary")
    ap.add_argument("--share", type=float, default=0.05, help="of it, mirrored")
    ap.add_argument("--tx", type=float, default=10, help="transactions a second")
    ap.add_argument("--note-bytes", type=int, default=0,
                    help="bytes added to each orders row's note")
    ap.add_argument("--filtered", type=float, default=0,
                    help="share of the devices whose publication has a row filter "
                         "(store = K: about 1 %% of the rows)")
    ap.add_argument("--goal", default="10000,300,1,0.05")
    ap.add_argument("--failover", action="store_true")
    ap.add_argument("--advance", action="store_true",
                    help="after each run, pg_replication_slot_advance() to the slot's confirmed "
                         "position (its CPU counted with the runs')")
    ARGS = ap.parse_args()
    fleet.ARGS = ARGS  # Device.args reads ARGS.pgmirror
    top = clusters.tempfile.mkdtemp(prefix="pgm_relay.")
    os.chmod(top, 0o755)
    conf = dict(max_replication_slots=ARGS.devices + 10, max_wal_senders=ARGS.devices + 10)
    primary = relay = None
    try:
        primary = make_server(top, "primary", conf)
        primary.sql(ORDERS % "" + "; CREATE TABLE noise (id bigserial PRIMARY KEY, payload text);"
                    "CREATE PUBLICATION relay_pub FOR TABLE orders", dbname=DB)
        publish(primary)
        relay, sub = make_relay(top, "relay", primary, conf)
        sub_pid = int(primary.sql1("SELECT pid FROM pg_stat_replication WHERE "
                                   "application_name = %s", sub))
        groups = []
        for label, server in (("primary", primary), ("relay", relay)):
            d = os.path.join(top, label + "-devices")
            os.mkdir(d)
            nfilt = int(round(ARGS.devices * ARGS.filtered))
            devs = [Device(k, server, k < nfilt, d) for k in range(ARGS.devices)]
            for dev in devs:
                dev.label = label
            for dev in devs:
                rc, err, _ = run_once(dev.args(first=True))
                if rc != 0:
                    sys.exit("%s device %d: first run: exit %d: %s" % (label, dev.k, rc, err))
            groups.append((label, server, Watch(server), devs))
        w = Writer(primary, 1, 1)
        per_order, per_noise = w.calibrate()
        w.conn.close()
        quiet, load = [], []
        for _ in range(ARGS.rounds):
            quiet.append(run_phase("quiet", groups, None, sub_pid, ARGS.quiet))
            w = Writer(primary, per_order, per_noise)
            load.append(run_phase("load", groups, w, sub_pid, ARGS.duration))
            w.conn.close()
        report(quiet, load, per_order, per_noise)
        if ARGS.failover:
            failover(top, primary, relay, conf, groups[1][3][0], groups[1][3][1])
    finally:
        for c in (relay, primary):
            if c is not None:
                c.destroy()
        clusters.shutil.rmtree(top, ignore_errors=True)


ARGS = None
if __name__ == "__main__":
    main()

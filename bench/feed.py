#!/usr/bin/env python3
"""feed.py: what a feed costs a hub and gives a device (issue 40), side by
side in one run. Run by bench/feed.sh, which picks the binary and the
server; see there for the options.

The table is bench.sh's (id bigint PRIMARY KEY, a int, b text, c
timestamptz DEFAULT now(), d numeric(10,2)), published. Every pgmirror run
here is a whole run (start, connection or manifest, work, exit), timed by
wall clock, with its CPU (user + system) from wait4(); each timed run
starts after a sync(1). Per repeat:

hub: a fresh table; four mirrors made on it while it is empty, each with
  its own slot (first runs): the hub (--feed=DIR, which writes its first
  snapshot), a plain mirror (no --feed), a plain mirror run through
  bench/wire.py (pgoutput's bytes on the wire) and a device (--from=DIR).
  Then the backlog "mix", CHANGES row changes: one INSERT of 0.3 x CHANGES
  rows; 0.05 x CHANGES small transactions of 4 changes (2 inserts, an
  update, a delete); one UPDATE of 0.2 x CHANGES rows; 0.05 x CHANGES more
  small ones; one DELETE of 0.1 x CHANGES rows. Then, to the same end
  position, the hub and the plain mirror (in turns: one first in odd
  repeats, the other in even ones), the wire run, then the device's
  catch-up from the feed (a directory on this machine: no network). The
  hub's CPU leaves out the snapshots it takes by itself (when the segments
  it wrote outweigh its newest snapshot: from DIR/.hub/snapshot.db's
  VACUUM INTO until the file is compressed, placed and removed, polled
  every 5 ms), which the table gives apart. Feed bytes are the segments
  the run added (as served, compressed; and raw).
catchup: the same with the backlog "inserts": CHANGES rows inserted, half
  in 5 transactions of 0.1 x CHANGES rows, half in transactions of 10 rows
  between them; and SQLite alone (bench/sqlite_alone.c, compiled here with
  cc -O2) inserting the device's CHANGES rows, as stored, into a new file
  with the mirror's settings in one transaction.
live: a fresh table of TXNS rows, mirrors made as above (the device from
  the hub's first snapshot), then TXNS small transactions of the mix (2
  inserts, an update, a delete) at RATE a second (pgbench -R, one client),
  followed as they come by a hub service and a plain service (each stopped
  by SIGTERM once its mirror equals the source): a hub that follows a
  trickle of transactions commits a group for nearly each one, as in
  production. Then the backlog caught up by a plain --once on a third slot
  and by the device from the feed.
first: on that CHANGES-row table (or a table of CHANGES rows made for it
  when live ran in between), two more first runs on slots of their
  own (in turns): a plain one (the first copy from PostgreSQL) and a hub
  into a new feed (the copy, then its snapshot; the two are timed apart
  as above); then a new device's first run from that feed, which takes the
  snapshot.
compress: the segments of the first repeat's two backlogs and the
  snapshot of its first run, decompressed, then compressed again by the
  command-line tools, one file at a time as the hub does: zstd -1, -3
  (pgmirror's level, libzstd in the hub) and -9 (--single-thread, with its
  checksum, as the hub writes them) and gzip -6; bytes, and the CPU of
  compressing and decompressing (medians of the repeats).

Every mirror is checked against the source (count, sums of id, a and
length(b)) after its run. Printed: each run's figures as it goes (stderr),
then the tables of medians, each ratio with its goal and whether it is met.
"""

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DB = "pgm_feed"
PUB = "pgm_feed_pub"
TICK = os.sysconf("SC_CLK_TCK")
TIMEOUT = int(os.environ.get("BENCH_TIMEOUT", "900"))
PGOPTS = dict(os.environ, PGOPTIONS="-c client_min_messages=warning")

GOAL_HUB_CPU = 1.2      # hub CPU / plain mirror's
GOAL_FROM_PG = 2.0      # catch-up rate from the feed / from PostgreSQL
GOAL_ALONE = 0.8        # catch-up rate from the feed / SQLite alone's
GOAL_BYTES = 0.5        # feed bytes / pgoutput's bytes on the wire
GOAL_FIRST = 0.25       # first run from a snapshot / first copy


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    sys.exit("feed: " + msg)


def psql(sql, db=DB):
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                       capture_output=True, text=True, timeout=TIMEOUT, env=PGOPTS)
    if p.returncode != 0:
        die("psql failed (%s): %s" % (sql.split("\n")[0][:60], p.stderr.strip()))
    return p.stdout.strip()


def proc_cpu(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


class Run:
    """One command's run: wall and CPU seconds, and the wall and CPU it
    spent while the file watch existed (polled every 5 ms: a hub's
    snapshot, DIR/.hub/snapshot.db, from its VACUUM INTO until it is
    compressed and placed). A service (wait=False) runs until stop()."""

    def __init__(self, cmd, errlog, watch=None, stdout=subprocess.DEVNULL, wait=True):
        os.sync()  # the disk writes of the run before are not this one's
        self.cmd = cmd
        self.watched = 0     # times watch appeared
        self.in_wall = 0.0   # wall and CPU while it existed
        self.in_cpu = 0.0
        self.t0 = time.monotonic()
        with open(errlog, "a") as err:
            self.proc = subprocess.Popen(cmd, stdout=stdout, stderr=err)
        self.errlog = errlog
        self.done = threading.Event()
        self.killer = threading.Timer(TIMEOUT, self.proc.kill)
        self.killer.start()
        self.poller = None
        if watch:
            self.poller = threading.Thread(target=self.poll, args=(watch,), daemon=True)
            self.poller.start()
        if wait:
            self.finish()

    def poll(self, watch):
        since = None  # (wall, cpu) when watch appeared
        while True:
            over = self.done.is_set()
            cpu = proc_cpu(self.proc.pid)
            if cpu is None:  # reaped: what finish() counted
                cpu = self.cpu if over else None
            now = time.monotonic()
            there = os.path.exists(watch) and not over
            if there and since is None and cpu is not None:
                since = (now, cpu)
                self.watched += 1
            elif not there and since is not None and cpu is not None:
                self.in_wall += now - since[0]
                self.in_cpu += cpu - since[1]
                since = None
            if over:
                return
            time.sleep(0.005)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.finish()

    def finish(self):
        _, status, ru = os.wait4(self.proc.pid, 0)
        self.wall = time.monotonic() - self.t0
        self.proc.returncode = self.rc = os.waitstatus_to_exitcode(status)
        self.cpu = ru.ru_utime + ru.ru_stime
        self.maxrss = ru.ru_maxrss / 1024.0  # MB
        self.done.set()
        self.killer.cancel()
        if self.poller:
            self.poller.join()
        if self.rc != 0:
            die("%s exited %d (see %s)" % (" ".join(self.cmd[:6]), self.rc, self.errlog))

    def without(self):
        """wall and CPU without the time the watched file existed."""
        return self.wall - self.in_wall, self.cpu - self.in_cpu

    def snapshot_cpu(self):
        return self.in_cpu if self.watched else None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, spec="%.2f"):
    return "n/a" if v is None else spec % v


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def verdict(v, goal, le):
    if v is None:
        return "n/a"
    return "met" if (v <= goal if le else v >= goal) else "NOT met"


class Bench:
    def __init__(self, opts):
        self.bin = opts.pgmirror
        self.n = opts.changes
        self.work = tempfile.mkdtemp(prefix="pgm_feed.")
        self.errlog = os.path.join(self.work, "pgmirror.err")
        self.keep = os.path.join(self.work, "keep")
        os.makedirs(self.keep)
        self.alone = None

    def path(self, name):
        return os.path.join(self.work, name)

    # --- the source ---------------------------------------------------------

    def drop_slots(self):
        psql("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
             "WHERE slot_name LIKE 'pgm_feed_%' AND active_pid IS NOT NULL")
        for _ in range(100):
            if psql("SELECT count(*) FROM pg_replication_slots "
                    "WHERE slot_name LIKE 'pgm_feed_%' AND active") == "0":
                break
            time.sleep(0.1)
        psql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
             "WHERE slot_name LIKE 'pgm_feed_%'")

    def reset(self):
        """A fresh empty table, published; no slot, no mirror, no feed."""
        self.drop_slots()
        psql("DROP TABLE IF EXISTS bench_t; DROP PUBLICATION IF EXISTS %s;"
             "CREATE TABLE bench_t (id bigint PRIMARY KEY, a int, b text,"
             "  c timestamptz DEFAULT now(), d numeric(10,2));"
             "CREATE PUBLICATION %s FOR TABLE bench_t" % (PUB, PUB))
        for name in os.listdir(self.work):
            if name not in ("keep", "pgmirror.err", "sqlite_alone"):
                p = self.path(name)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)

    def procedures(self):
        psql("""
CREATE OR REPLACE PROCEDURE bench_mix(first int, n int, l bigint) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN first..first + n - 1 LOOP
    INSERT INTO bench_t (id, a, b, d)
      VALUES (l + 2 * i - 1, i, md5(i::text), i / 100.0), (l + 2 * i, -i, md5((-i)::text), 1.5);
    UPDATE bench_t SET a = a + 1, b = b || 'x' WHERE id = i;
    DELETE FROM bench_t WHERE id = l + 2 * i - 2;
    COMMIT;
  END LOOP;
END $$;
CREATE OR REPLACE PROCEDURE bench_ins(base bigint, ntx int, per int) LANGUAGE plpgsql AS $$
BEGIN
  FOR t IN 0..ntx - 1 LOOP
    INSERT INTO bench_t (id, a, b, d)
      SELECT base + t * per + g, g, md5((base + t * per + g)::text), g / 100.0
      FROM generate_series(1, per) g;
    COMMIT;
  END LOOP;
END $$;""")

    def workload_mix(self):
        """The mix backlog; returns its row changes."""
        n = self.n
        big_ins, small, big_upd, big_del = 3 * n // 10 + 1, n // 10, n // 5, n // 10
        half = small // 2
        psql("INSERT INTO bench_t (id, a, b, d) SELECT g, g, md5(g::text), g / 100.0 "
             "FROM generate_series(1, %d) g" % big_ins)
        psql("CALL bench_mix(1, %d, %d)" % (half, big_ins))
        psql("UPDATE bench_t SET a = a + 1, b = b || 'y' WHERE id <= %d" % big_upd)
        psql("CALL bench_mix(%d, %d, %d)" % (half + 1, small - half, big_ins))
        # every small transaction deleted ids >= big_ins: this range is whole
        psql("DELETE FROM bench_t WHERE id > %d AND id <= %d" % (big_upd, big_upd + big_del))
        return big_ins + 4 * small + big_upd + big_del

    def workload_inserts(self):
        """The inserts backlog: n rows; returns n."""
        n = self.n
        big, per = n // 10, 10
        ntx = (n // 2) // 5 // per
        base = 0
        for _ in range(5):
            psql("INSERT INTO bench_t (id, a, b, d) SELECT %d + g, g, md5((%d + g)::text), "
                 "g / 100.0 FROM generate_series(1, %d) g" % (base, base, big))
            base += big
            psql("CALL bench_ins(%d, %d, %d)" % (base, ntx, per))
            base += ntx * per
        return base

    def end_lsn(self):
        lsn = psql("SELECT pg_current_wal_insert_lsn()")
        psql("CHECKPOINT")
        return lsn

    def source_sig(self):
        return psql("SELECT count(*) || ' ' || coalesce(sum(id), 0) || ' ' || coalesce(sum(a), 0)"
                    " || ' ' || coalesce(sum(length(b)), 0) FROM bench_t")

    def check(self, name, sig):
        con = sqlite3.connect("file:%s?mode=ro" % self.path(name), uri=True)
        try:
            got = " ".join(str(v) for v in con.execute(
                "SELECT count(*), coalesce(sum(id), 0), coalesce(sum(a), 0), "
                "coalesce(sum(length(b)), 0) FROM bench_t").fetchone())
        finally:
            con.close()
        if got != sig:
            die("%s holds (count, sums) %s, the source %s" % (name, got, sig))

    # --- pgmirror -------------------------------------------------------------

    def pgm(self, slot, db, *args):
        return [self.bin, "-q", "-d", "dbname=" + DB, "-S", "pgm_feed_" + slot, "-P", PUB] + \
            list(args) + [self.path(db)]

    def device(self, feed, db):
        return [self.bin, "-q", "--from=" + self.path(feed), "--once", self.path(db)]

    def run(self, cmd, watch=None):
        return Run(cmd, self.errlog, watch=watch)

    def wire(self, cmd):
        out = self.path("wire.out")
        with open(out, "w") as f:
            Run([sys.executable, os.path.join(HERE, "wire.py"), "--"] + cmd, self.errlog,
                stdout=f)
        with open(out) as f:
            fields = dict(kv.split("=") for kv in f.read().split())
        return int(fields["bytes_in"]), float(fields["client_cpu"])

    def manifest(self, feed):
        with open(os.path.join(self.path(feed), "manifest.json")) as f:
            return json.load(f)

    # --- the parts ------------------------------------------------------------

    def backlog(self, name, workload, r, wire):
        """A backlog caught up by a hub, a plain mirror (in turns), a wire
        run when asked, and a device from the hub's feed; its figures."""
        self.reset()
        for slot, args in (("hub", ["--feed=" + self.path("feed")]), ("plain", []),
                           ("wire", []))[:3 if wire else 2]:
            self.run(self.pgm(slot, slot + ".db", "--once", *args))
        self.run(self.device("feed", "dev.db"))
        before = {s["name"] for s in self.manifest("feed")["segments"]}
        nsnap = len(self.manifest("feed")["snapshots"])
        t0 = time.monotonic()
        changes = workload()
        made = time.monotonic() - t0
        end = self.end_lsn()
        sig = self.source_sig()
        res = {"changes": changes}
        snapdb = os.path.join(self.path("feed"), ".hub", "snapshot.db")
        order = ("hub", "plain") if r % 2 else ("plain", "hub")
        for who in order:
            if who == "hub":
                hub = self.run(self.pgm("hub", "hub.db", "--endpos", end,
                                        "--feed=" + self.path("feed")), watch=snapdb)
                res["hub_wall"], res["hub_cpu"] = hub.without()
                res["hub_all_cpu"] = hub.cpu
                res["snap_cpu"] = hub.snapshot_cpu()
            else:
                plain = self.run(self.pgm("plain", "plain.db", "--endpos", end))
                res["plain_wall"], res["plain_cpu"] = plain.wall, plain.cpu
        if wire:
            res["wire_bytes"], res["wire_cpu"] = self.wire(
                self.pgm("wire", "wire.db", "--endpos", end))
        dev = self.run(self.device("feed", "dev.db"))
        res["dev_wall"], res["dev_cpu"], res["dev_rss"] = dev.wall, dev.cpu, dev.maxrss
        for db in ("hub.db", "plain.db", "dev.db") + (("wire.db",) if wire else ()):
            self.check(db, sig)
        man = self.manifest("feed")
        new = [s for s in man["segments"] if s["name"] not in before]
        res["feed_bytes"] = sum(s["size"] for s in new)
        res["feed_raw"] = sum(s["raw_size"] for s in new)
        res["segments"] = len(new)
        res["groups"] = sum(s["last_group"] - s["first_group"] + 1 for s in new)
        res["snapshot"] = len(man["snapshots"]) > nsnap
        if r == 1:
            dst = os.path.join(self.keep, name)
            os.makedirs(dst)
            for s in new:
                shutil.copy(os.path.join(self.path("feed"), s["name"]), dst)
        log("  %s #%d: %d changes (made in %.1f s), %d segments, %d groups; hub %.2f s wall, "
            "%.2f s CPU%s; plain %.2f s, %.2f s CPU; %sdevice %.2f s, %.2f s CPU; feed %d B "
            "(raw %d)" % (name, r, changes, made, res["segments"], res["groups"],
                          res["hub_wall"], res["hub_cpu"],
                          " (+ %.2f s CPU for a snapshot)" % res["snap_cpu"]
                          if res["snap_cpu"] is not None else "",
                          res["plain_wall"], res["plain_cpu"],
                          "wire %d B, " % res["wire_bytes"] if wire else "",
                          res["dev_wall"], res["dev_cpu"], res["feed_bytes"], res["feed_raw"]))
        return res

    def mirror_sig(self, name):
        """The mirror's (count, sums) as check() compares them, or None."""
        try:
            con = sqlite3.connect("file:%s?mode=ro" % self.path(name), uri=True, timeout=1)
            try:
                return " ".join(str(v) for v in con.execute(
                    "SELECT count(*), coalesce(sum(id), 0), coalesce(sum(a), 0), "
                    "coalesce(sum(length(b)), 0) FROM bench_t").fetchone())
            finally:
                con.close()
        except sqlite3.Error:
            return None

    def live(self, r, txns, rate):
        """Small transactions at a steady rate (pgbench -R), followed as they
        come by a hub service and a plain service; then the same backlog
        caught up by a device from the feed and by a plain --once."""
        self.reset()
        psql("DROP SEQUENCE IF EXISTS bench_i; CREATE SEQUENCE bench_i")
        psql("INSERT INTO bench_t (id, a, b, d) SELECT g, g, md5(g::text), g / 100.0 "
             "FROM generate_series(1, %d) g" % txns)
        feed = self.path("feed")
        for slot, args in (("hub", ["--feed=" + feed]), ("plain", []), ("live", [])):
            self.run(self.pgm(slot, slot + ".db", "--once", *args))
        self.run(self.device("feed", "dev.db"))
        before = {s["name"] for s in self.manifest("feed")["segments"]}
        script = self.path("mix.sql")
        with open(script, "w") as f:
            f.write("BEGIN;\n"
                    "SELECT nextval('bench_i') AS i \\gset\n"
                    "INSERT INTO bench_t (id, a, b, d) VALUES (:L + 2 * :i - 1, :i, md5(:i::text), "
                    ":i / 100.0), (:L + 2 * :i, -:i, md5((-:i)::text), 1.5);\n"
                    "UPDATE bench_t SET a = a + 1, b = b || 'x' WHERE id = :i;\n"
                    "DELETE FROM bench_t WHERE id = :L + 2 * :i - 2;\n"
                    "END;\n")
        snapdb = os.path.join(feed, ".hub", "snapshot.db")
        hub = Run(self.pgm("hub", "hub.db", "--feed=" + feed), self.errlog, watch=snapdb,
                  wait=False)
        svc = Run(self.pgm("live", "live.db"), self.errlog, wait=False)
        p = subprocess.run(["pgbench", "-n", "-c", "1", "-R", str(rate), "-t", str(txns),
                            "-D", "L=%d" % txns, "-f", script, DB],
                           capture_output=True, text=True, timeout=TIMEOUT)
        if p.returncode != 0:
            die("pgbench failed: " + p.stderr.strip()[-300:])
        tps = next((float(l.split()[2]) for l in p.stdout.splitlines()
                    if l.startswith("tps = ")), 0.0)
        sig = self.source_sig()
        deadline = time.monotonic() + TIMEOUT
        while not (self.mirror_sig("hub.db") == sig and self.mirror_sig("live.db") == sig):
            if time.monotonic() > deadline:
                die("the services did not follow the live workload within %d s" % TIMEOUT)
            time.sleep(0.2)
        hub.stop()
        svc.stop()
        res = {"changes": 4 * txns, "tps": tps}
        res["hub_wall"], res["hub_cpu"] = hub.without()
        res["snap_cpu"] = hub.snapshot_cpu()
        res["svc_cpu"] = svc.cpu
        plain = self.run(self.pgm("plain", "plain.db", "--once"))
        res["plain_wall"], res["plain_cpu"] = plain.wall, plain.cpu
        dev = self.run(self.device("feed", "dev.db"))
        res["dev_wall"], res["dev_cpu"], res["dev_rss"] = dev.wall, dev.cpu, dev.maxrss
        for db in ("hub.db", "live.db", "plain.db", "dev.db"):
            self.check(db, sig)
        man = self.manifest("feed")
        new = [s for s in man["segments"] if s["name"] not in before]
        res["feed_bytes"] = sum(s["size"] for s in new)
        res["feed_raw"] = sum(s["raw_size"] for s in new)
        res["segments"] = len(new)
        res["groups"] = sum(s["last_group"] - s["first_group"] + 1 for s in new)
        log("  live #%d: %d changes in %d transactions at %.0f/s, %d segments, %d groups; hub "
            "service %.2f s CPU%s, plain service %.2f s CPU; catch-up: plain --once %.2f s "
            "(%.2f s CPU), device %.2f s (%.2f s CPU); feed %d B (raw %d)" %
            (r, res["changes"], txns, tps, res["segments"], res["groups"], res["hub_cpu"],
             " (+ %.2f s CPU for a snapshot)" % res["snap_cpu"]
             if res["snap_cpu"] is not None else "", res["svc_cpu"], res["plain_wall"],
             res["plain_cpu"], res["dev_wall"], res["dev_cpu"], res["feed_bytes"],
             res["feed_raw"]))
        return res

    def sqlite_alone(self):
        """SQLite alone's seconds for the device's rows."""
        if self.alone is None:
            exe = os.path.join(self.work, "sqlite_alone")
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "sqlite3"],
                                   capture_output=True, text=True).stdout.split()
            subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "sqlite_alone.c")] + flags,
                           check=True)
            self.alone = exe
        out = self.path("alone.db")
        p = subprocess.run([self.alone, self.path("dev.db"), "bench_t", out],
                           capture_output=True, text=True, timeout=TIMEOUT)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(out + suffix):
                os.unlink(out + suffix)
        if p.returncode != 0:
            die("sqlite_alone failed: " + p.stderr.strip())
        rows, secs, _ = p.stdout.split()
        return int(rows), float(secs)

    def first(self, r, loaded):
        """First runs on the table as it stands: plain, and a hub into a new
        feed (in turns), then a new device from that feed."""
        if not loaded:
            self.reset()
            self.procedures()
            self.workload_inserts()
        rows = int(psql("SELECT count(*) FROM bench_t"))
        psql("VACUUM ANALYZE bench_t")
        psql("CHECKPOINT")
        sig = self.source_sig()
        res = {"rows": rows}
        snapdb = os.path.join(self.path("feed1"), ".hub", "snapshot.db")
        for who in (("plain", "hub") if r % 2 else ("hub", "plain")):
            if who == "plain":
                p = self.run(self.pgm("plain1", "plain1.db", "--once"))
                res["plain_wall"], res["plain_cpu"] = p.wall, p.cpu
            else:
                h = self.run(self.pgm("hub1", "hub1.db", "--once",
                                      "--feed=" + self.path("feed1")), watch=snapdb)
                res["hub_wall"], res["hub_cpu"] = h.wall, h.cpu
                res["hub_copy_wall"] = h.without()[0]
                res["snap_wall"] = h.in_wall
                res["snap_cpu"] = h.in_cpu
        d = self.run(self.device("feed1", "dev1.db"))
        res["dev_wall"], res["dev_cpu"] = d.wall, d.cpu
        for db in ("plain1.db", "hub1.db", "dev1.db"):
            self.check(db, sig)
        snap = self.manifest("feed1")["snapshots"][-1]
        res["snap_size"], res["snap_raw"] = snap["size"], snap["raw_size"]
        if r == 1:
            os.makedirs(os.path.join(self.keep, "snapshot"))
            shutil.copy(os.path.join(self.path("feed1"), snap["name"]),
                        os.path.join(self.keep, "snapshot"))
        log("  first #%d: %d rows; plain first run %.2f s (%.2f s CPU); hub first run %.2f s "
            "(snapshot %.2f s, %.2f s CPU; %d B of %d); device from the snapshot %.2f s "
            "(%.2f s CPU)" % (r, rows, res["plain_wall"], res["plain_cpu"], res["hub_wall"],
                              res["snap_wall"], res["snap_cpu"], res["snap_size"],
                              res["snap_raw"], res["dev_wall"], res["dev_cpu"]))
        return res

    def orders(self):
        """The feed of a table of the values a device's tables often hold
        (bench_t's md5 text is as random as text gets): its segments and a
        snapshot, for compress(); its bytes on the wire and in the feed."""
        self.drop_slots()
        n = self.n
        psql("""
DROP TABLE IF EXISTS orders; DROP PUBLICATION IF EXISTS pgm_feed_orders;
CREATE TABLE orders (id bigint PRIMARY KEY, store int, sku text, qty int, price numeric(12,2),
  status text, created timestamptz, customer uuid, note text);
CREATE PUBLICATION pgm_feed_orders FOR TABLE orders;
CREATE OR REPLACE PROCEDURE bench_orders(n int, per int) LANGUAGE plpgsql AS $$
BEGIN
  FOR t IN 0..n / per - 1 LOOP
    INSERT INTO orders SELECT g, g % 50 + 1, 'SKU-' || lpad((g * 7919 % 2000)::text, 5, '0'),
      1 + g % 9, (g * 31 % 10000) / 100.0,
      (ARRAY['new', 'paid', 'shipped', 'delivered', 'returned'])[1 + g % 5],
      '2026-01-01'::timestamptz + g * interval '1 second', md5((g % 5000)::text)::uuid,
      CASE WHEN g % 4 = 0 THEN 'leave at the door' WHEN g % 7 = 0 THEN NULL
           ELSE 'gift wrap ' || g % 3 END
    FROM generate_series(t * per + 1, t * per + per) g;
    COMMIT;
  END LOOP;
END $$;
CREATE OR REPLACE PROCEDURE bench_ship(n int, per int) LANGUAGE plpgsql AS $$
BEGIN
  FOR t IN 0..n / per - 1 LOOP
    UPDATE orders SET status = 'shipped', qty = qty + 1 WHERE id > t * per AND id <= t * per + per;
    COMMIT;
  END LOOP;
END $$;""")
        feed = self.path("feed_orders")

        def pgm(*args):
            return [self.bin, "-q", "-d", "dbname=" + DB, "-S", "pgm_feed_orders", "-P",
                    "pgm_feed_orders"] + list(args) + [self.path("orders.db")]

        self.run(pgm("--once", "--feed=" + feed))
        before = {s["name"] for s in self.manifest("feed_orders")["segments"]}
        psql("CALL bench_orders(%d, 10)" % (n // 5))
        psql("CALL bench_ship(%d, 10)" % (n // 10))
        psql("DELETE FROM orders WHERE id <= %d" % (n // 50))
        changes = n // 5 + n // 10 + n // 50
        end = self.end_lsn()
        wire, _ = self.wire(pgm("--endpos", end, "--feed=" + feed, "--feed-snapshot"))
        con = sqlite3.connect("file:%s?mode=ro" % self.path("orders.db"), uri=True)
        got = "%d %d" % con.execute("SELECT count(*), sum(qty) FROM orders").fetchone()
        con.close()
        if got != psql("SELECT count(*) || ' ' || sum(qty) FROM orders"):
            die("the orders mirror differs from its source")
        man = self.manifest("feed_orders")
        new = [s for s in man["segments"] if s["name"] not in before]
        for kind, files in (("orders", new), ("orders snap", man["snapshots"][-1:])):
            os.makedirs(os.path.join(self.keep, kind))
            for f in files:
                shutil.copy(os.path.join(feed, f["name"]), os.path.join(self.keep, kind))
        res = {"changes": changes, "wire": wire, "feed": sum(s["size"] for s in new),
               "raw": sum(s["raw_size"] for s in new)}
        log("  orders: %d changes, wire %d B, feed %d B (raw %d)" %
            (changes, wire, res["feed"], res["raw"]))
        psql("DROP TABLE orders; DROP PUBLICATION pgm_feed_orders")
        self.drop_slots()
        return res

    def compress(self, repeats):
        """The kept files, by codec: raw and compressed bytes, CPU."""
        unzstd = ["zstd", "-d", "-q", "-c"]
        codecs = [("zstd -%d" % lv, ["zstd", "-%d" % lv, "--single-thread", "-q", "-c"], unzstd)
                  for lv in (1, 3, 9)] + [("gzip -6", ["gzip", "-6", "-c"], ["gzip", "-d", "-c"])]
        out = []
        for kind in ("mix", "inserts", "snapshot", "orders", "orders snap"):
            src = os.path.join(self.keep, kind)
            if not os.path.isdir(src):
                continue
            raws = []
            served = 0
            for name in sorted(os.listdir(src)):
                z = os.path.join(src, name)
                served += os.path.getsize(z)
                raw = os.path.join(self.work, "raw." + kind.replace(" ", "_") + "." + name)
                with open(raw, "wb") as f:
                    subprocess.run(["zstd", "-d", "-q", "-c", z], stdout=f, check=True)
                raws.append(raw)
            rawsize = sum(os.path.getsize(f) for f in raws)
            row = {"kind": kind, "files": len(raws), "raw": rawsize, "pgmirror": served,
                   "codecs": []}
            for label, comp, decomp in codecs:
                ccpu, dcpu, size = [], [], 0
                for _ in range(repeats):
                    c = d = 0.0
                    size = 0
                    for raw in raws:
                        packed = raw + ".packed"
                        with open(raw, "rb") as fi, open(packed, "wb") as fo:
                            c += self.cpu_of(comp, fi, fo)
                        size += os.path.getsize(packed)
                        with open(packed, "rb") as fi:
                            d += self.cpu_of(decomp, fi, subprocess.DEVNULL)
                        os.unlink(packed)
                    ccpu.append(c)
                    dcpu.append(d)
                row["codecs"].append((label, size, median(ccpu), median(dcpu)))
                log("  compress %s: %s %d B of %d, %.2f s CPU to compress, %.2f s to "
                    "decompress" % (kind, label, size, rawsize, median(ccpu), median(dcpu)))
            for raw in raws:
                os.unlink(raw)
            out.append(row)
        return out

    @staticmethod
    def cpu_of(cmd, stdin, stdout):
        p = subprocess.Popen(cmd, stdin=stdin, stdout=stdout)
        _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            die("%s failed" % " ".join(cmd))
        return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgmirror", required=True)
    ap.add_argument("--changes", type=int, default=1000000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parts", default="hub,catchup,live,first,compress")
    ap.add_argument("--live-txns", type=int, default=25000)
    ap.add_argument("--live-rate", type=int, default=1000)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    opts = ap.parse_args()
    parts = set(opts.parts.split(","))
    if parts - {"hub", "catchup", "live", "first", "compress"}:
        die("unknown part in --parts %s" % opts.parts)
    if opts.changes < 1000 or opts.changes % 1000:
        die("CHANGES must be a multiple of 1000")
    if opts.repeats < 1:
        die("REPEATS must be at least 1")
    started = time.monotonic()
    psql("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB, db="postgres")
    psql("CREATE DATABASE %s" % DB, db="postgres")
    if psql("SHOW wal_level") != "logical":
        die("wal_level is not logical")
    b = Bench(opts)
    log("feed bench: %d changes, %d repeats, work in %s" % (opts.changes, opts.repeats, b.work))
    mix, ins, live, first = [], [], [], []
    try:
        for r in range(1, opts.repeats + 1):
            b.reset()
            b.procedures()
            if "hub" in parts:
                mix.append(b.backlog("mix", b.workload_mix, r, wire=True))
            if "catchup" in parts:
                res = b.backlog("inserts", b.workload_inserts, r, wire=True)
                res["alone_rows"], res["alone"] = b.sqlite_alone()
                log("  inserts #%d: SQLite alone %.2f s for %d rows" % (r, res["alone"],
                                                                      res["alone_rows"]))
                ins.append(res)
            if "live" in parts:
                live.append(b.live(r, opts.live_txns, opts.live_rate))
            if "first" in parts:
                first.append(b.first(r, loaded="catchup" in parts and "live" not in parts))
        orders = b.orders() if "compress" in parts else None
        comp = b.compress(opts.repeats) if "compress" in parts else []
        version = psql("SHOW server_version")
        b.drop_slots()
        report(opts, version, mix, ins, live, first, orders, comp)
        log("(the bench ran %.0f s)" % (time.monotonic() - started))
    finally:
        if opts.keep:
            log("work directory kept: %s" % b.work)
        else:
            shutil.rmtree(b.work, ignore_errors=True)
        subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c",
                        "DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB], env=PGOPTS)


def med(runs, key):
    return median([x.get(key) for x in runs])


def report(opts, version, mix, ins, live, first, orders, comp):
    print()
    print("pgmirror feed benchmark: %d changes, %d repeats (medians), PostgreSQL %s" %
          (opts.changes, opts.repeats, version))
    goals = []
    backlogs = [(name, runs) for name, runs in (("mix", mix), ("inserts", ins), ("live", live))
                if runs]
    if backlogs:
        print()
        print("%-8s %8s %9s %9s %7s %8s %8s %9s %9s %9s %7s" %
              ("hub", "changes", "plain CPU", "hub CPU", "ratio", "plain s", "hub s",
               "wire B/ch", "feed B/ch", "raw B/ch", "ratio"))
        for name, runs in backlogs:
            n = runs[0]["changes"]
            cmp = "svc_cpu" if name == "live" else "plain_cpu"
            pc, hc = med(runs, cmp), med(runs, "hub_cpu")
            cpu_ratio = median([ratio(x["hub_cpu"], x[cmp]) for x in runs])
            wire = med(runs, "wire_bytes")
            feed = med(runs, "feed_bytes")
            raw = med(runs, "feed_raw")
            br = ratio(feed, wire)
            walls = ("n/a", "n/a") if name == "live" else \
                (fmt(med(runs, "plain_wall")), fmt(med(runs, "hub_wall")))
            print("%-8s %8d %9.2f %9.2f %7.2f %8s %8s %9s %9.1f %9.1f %7s" %
                  ((name, n, pc, hc, cpu_ratio) + walls +
                   (fmt(None if wire is None else wire / n, "%.1f"), feed / n, raw / n,
                    fmt(br))))
            goals.append(("%s: the hub's CPU / without --feed" % name, cpu_ratio, GOAL_HUB_CPU,
                          True))
            if br is not None:
                goals.append(("%s: feed bytes / pgoutput's on the wire" % name, br, GOAL_BYTES,
                              True))
            snaps = [x["snap_cpu"] for x in runs if x["snap_cpu"] is not None]
            if snaps:
                print("%-8s (and snapshots of its own in %d of %d runs: %.2f s CPU, "
                      "not counted above)" % ("", len(snaps), len(runs), median(snaps)))
        print("(CPU = user + system seconds of the whole run; hub = the same mirror with --feed, "
              "without its own snapshots;")
        print(" mix, inserts: --endpos runs over a backlog; live: services that followed "
              "%d transactions at %d/s" % (opts.live_txns, opts.live_rate))
        print(" as they came; s = wall seconds; wire = pgoutput's bytes the server sent per "
              "change (bench/wire.py);")
        print(" feed = the segments' bytes as served (zstd), raw = decompressed; ratios: hub "
              "CPU / plain CPU (median")
        print(" of each repeat's own), feed bytes / wire bytes)")
        print()
        print("%-8s %8s %7s %9s %9s %9s %9s %8s %9s %9s %6s %6s" %
              ("catch-up", "changes", "groups", "from PG s", "PG ch/s", "feed s", "feed ch/s",
               "dev RSS", "alone s", "alone r/s", "/PG", "/alone"))
        for name, runs in backlogs:
            n = runs[0]["changes"]
            pg, dev = med(runs, "plain_wall"), med(runs, "dev_wall")
            alone = med(runs, "alone")
            arate = None if alone is None else runs[0]["alone_rows"] / alone
            vs_pg = median([ratio(x["plain_wall"], x["dev_wall"]) for x in runs])
            vs_alone = median([ratio(x["alone"], x["dev_wall"] * x["alone_rows"] / x["changes"])
                               if "alone" in x else None for x in runs])
            print("%-8s %8d %7d %9.2f %9.0f %9.2f %9.0f %8.0f %9s %9s %6.2f %6s" %
                  (name, n, med(runs, "groups"), pg, n / pg, dev, n / dev, med(runs, "dev_rss"),
                   fmt(alone), fmt(arate, "%.0f"), vs_pg, fmt(vs_alone)))
            goals.append(("%s: catch-up rate from the feed / from PostgreSQL" % name, vs_pg,
                          GOAL_FROM_PG, False))
            if vs_alone is not None:
                goals.append(("%s: catch-up rate from the feed / SQLite alone's" % name,
                              vs_alone, GOAL_ALONE, False))
        print("(from PG = a plain mirror's run over its slot's backlog; feed = a device's run "
              "over the same backlog")
        print(" from the hub's feed, a local directory (groups: the hub's, as it committed them; "
              "dev RSS: the")
        print(" device's peak RSS, MB); alone = bench/sqlite_alone.c inserting the device's rows "
              "in one transaction;")
        print(" /PG and /alone = the feed's rate over theirs, medians of each repeat's own)")
    if first:
        print()
        print("%-8s %8s %10s %10s %10s %10s %10s %7s" %
              ("first", "rows", "copy s", "hub s", "snapshot s", "snap MB", "device s",
               "ratio"))
        rr = median([ratio(x["dev_wall"], x["plain_wall"]) for x in first])
        print("%-8s %8d %10.2f %10.2f %10.2f %10.1f %10.2f %7.2f" %
              ("snapshot", first[0]["rows"], med(first, "plain_wall"), med(first, "hub_wall"),
               med(first, "snap_wall"), med(first, "snap_size") / 1e6, med(first, "dev_wall"),
               rr))
        print("(copy = a plain first run, which copies the table from PostgreSQL; hub = a first "
              "run with --feed,")
        print(" its copy then its snapshot (%.2f s of CPU; %.1f MB raw); device = a new device's "
              "first run from the" % (med(first, "snap_cpu"), med(first, "snap_raw") / 1e6))
        print(" snapshot; ratio = device / copy, median of each repeat's own)")
        goals.append(("a first run from a snapshot / a first copy", rr, GOAL_FIRST, True))
    if comp:
        print()
        print("%-11s %5s %8s %8s %10s %6s %7s %9s %11s" %
              ("compress", "files", "raw MB", "codec", "packed MB", "ratio", "comp s",
               "comp MB/s", "decomp MB/s"))
        for row in comp:
            for label, size, c, d in row["codecs"]:
                print("%-11s %5d %8.1f %8s %10.2f %6.2f %7.2f %9.0f %11.0f" %
                      (row["kind"], row["files"], row["raw"] / 1e6, label, size / 1e6,
                       row["raw"] / size, c, row["raw"] / 1e6 / c if c else 0,
                       row["raw"] / 1e6 / d if d else 0))
            print("%-11s %5s %8s %8s %10.2f %6.2f   (as the hub wrote them, libzstd level 3)" %
                  ("", "", "", "pgmirror", row["pgmirror"] / 1e6, row["raw"] / row["pgmirror"]))
        print("(the first repeat's files, each compressed alone by the command-line tool; "
              "ratio = raw / packed;")
        print(" comp s = CPU to compress them all; MB/s = raw MB per CPU second; orders: a "
              "table of the values")
        print(" a device's tables often hold, id bigint, store int, sku text (2,000), qty int, "
              "price numeric(12,2),")
        print(" status text (5), created timestamptz, customer uuid (5,000), note text (4, or "
              "NULL): %d changes," % orders["changes"])
        print(" 0.2 x CHANGES rows inserted 10 to a transaction, half of them updated 10 to a "
              "transaction, 0.02 x")
        print(" CHANGES deleted: %.1f bytes on the wire per change, %.1f in the feed (raw %.1f), "
              "%.2f of the wire's;" % (orders["wire"] / orders["changes"],
                                       orders["feed"] / orders["changes"],
                                       orders["raw"] / orders["changes"],
                                       orders["feed"] / orders["wire"]))
        print(" orders snap = the hub's snapshot of it after them, --feed-snapshot)")
    if goals:
        print()
        print("goals:")
        for what, v, goal, le in goals:
            print("  %-58s %6s  goal %s %.2f  %s" % (what, fmt(v), "<=" if le else ">=", goal,
                                                     verdict(v, goal, le)))


if __name__ == "__main__":
    main()

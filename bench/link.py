#!/usr/bin/python3
"""pgmirror on a weak link (not a test: it prints what it measured).

    bench/link [-b PGMIRROR] [-- OPTIONS]            (starts a cluster)
    pg_virtualenv -t -o wal_level=logical -o fsync=off \\
        /usr/bin/python3 bench/link.py --pgmirror PGMIRROR [OPTIONS]

Each link profile RATE/N (--profiles, default 1M/30,10M/12,2M/5: 1 MB/s
cut every 30 s, 10 MB/s every 12 s, 2 MB/s every 5 s) is a loopback proxy
(tests/integration/linkproxy.py) that holds the link to RATE bytes/s both
ways and cuts every connection every N seconds, the link then down for
--down-for seconds (default 0). Parts (--parts, default all four):

  sync    the first sync of a table "big" of --rows rows (default
          1,000,000; about 110 bytes a row on the wire) and a table "small"
          of 1,000 rows behind it: pgmirror --once through the proxy, run
          again at once after each failure (as a cron job would, without
          the wait) until one exits 0 or --max-secs (default 900) have gone
          by; reported: the tries, the seconds, the bytes both ways through
          the proxy, and the try after which "small" was complete; each
          against the same sync through the same proxy with no cuts (one
          try). Goal (issue 31): it finishes, bytes <= 1.2 x and time
          <= 1.5 x the uncut sync plus the time the link is down.
  stream  a service (no --once) whose mirror is made first without the
          proxy, then run through it while the source commits
          --stream-rate (default 100) one-row transactions a second for
          --stream-secs (default 60); each row's lag is the time from its
          commit to the first look (every 50 ms) that finds it in the
          mirror; reported: the median and the maximum, and the
          reconnections. Goal: the maximum <= the cut interval + 2 s.
  bigtxn  one UPDATE of every row of "big" (one source transaction) while
          a service follows through the proxy of the last profile: its
          bytes on the wire (through an uncut proxy, first) against what
          the link carries between two cuts, and whether it gets through
          within --bigtxn-secs (default 300). A transaction is confirmed
          as a whole: one bigger than the link's window never gets through.
  vanish  the link vanishes without a reset (the proxy turns into a black
          hole: nothing passes, nothing is closed), with pgmirror's own
          defaults in -d: how long a service streaming takes to try again
          (it says "reconnecting" or "trying again"), and how long a --once run copying
          "big" at 2 MB/s and one connecting take to exit; a run still
          waiting after --vanish-secs (default 120) is killed and
          reported as such. Goal: within the link's bound, 30 s (and
          connect_timeout, 30 s, while connecting).

Uses the server the PG* variables name (wal_level=logical); makes and
drops a database pgm_link there, and the slots pgm_link_*.
"""

import argparse
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
import linkproxy  # noqa: E402

DB = "pgm_link"


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def admin():
    c = psycopg2.connect(dbname=os.environ.get("PGDATABASE", "postgres"))
    c.autocommit = True
    return c


def source(autocommit=True):
    c = psycopg2.connect(dbname=DB)
    c.autocommit = autocommit
    return c


def sql(q, *args):
    c = source()
    try:
        c.cursor().execute(q, args or None)
    finally:
        c.close()


def dsn(link=None):
    def q(v):
        return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"
    kw = {"dbname": DB, "user": os.environ.get("PGUSER")}  # PGPASSWORD: inherited
    if link is not None:
        kw.update(host=link.host, port=link.port, sslmode="disable")
    else:
        kw.update(host=os.environ.get("PGHOST"), port=os.environ.get("PGPORT"))
    return " ".join("%s=%s" % (k, q(v)) for k, v in kw.items() if v)


def setup(rows):
    a = admin()
    a.cursor().execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)
    a.cursor().execute("CREATE DATABASE %s" % DB)
    a.close()
    say("making %d rows ..." % rows)
    sql("""
        CREATE TABLE big (id int PRIMARY KEY, v text);
        INSERT INTO big SELECT g, repeat(md5(g::text), 3) FROM generate_series(1, %d) g;
        CREATE TABLE small (id int PRIMARY KEY, v text);
        INSERT INTO small SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
        CREATE TABLE stream_t (id bigint PRIMARY KEY, v text);
        CREATE PUBLICATION link_pub FOR TABLE big, small;
        CREATE PUBLICATION stream_pub FOR TABLE stream_t;
        ANALYZE;
    """ % rows)


def drop_slot(binary, slot):
    subprocess.run([binary, "-d", dsn(), "--drop-slot", "-S", slot],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = admin()  # whatever pgmirror left (a refused drop, a temporary slot)
    c.cursor().execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                       "WHERE slot_name = %s AND NOT active", (slot,))
    c.close()


def remove_mirror(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def rows_in(path, table):
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM %s" % table).fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def fresh_mirror(opt, tmp, name, pub):
    """A mirror made by a first run without the proxy: (path, slot)."""
    path = os.path.join(tmp, name + ".db")
    slot = "pgm_link_" + name
    remove_mirror(path)
    drop_slot(opt.pgmirror, slot)
    subprocess.run([opt.pgmirror, "-d", dsn(), "-S", slot, "-P", pub, "--once", path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path, slot


def stop_service(svc, timeout):
    svc.send_signal(signal.SIGTERM)
    try:
        svc.wait(timeout)
    except subprocess.TimeoutExpired:
        svc.kill()
        svc.wait()


def parse_profile(text):
    m = re.match(r"^([0-9.]+[kMG]?)/([0-9.]+)$", text)
    if not m:
        raise SystemExit("link: a profile is RATE/SECONDS (2M/5), not %r" % text)
    return text, linkproxy.parse_size(m.group(1)), float(m.group(2))


def mb(n):
    return "%.1f MB" % (n / 1e6)


# ---------------------------------------------------------------- vanish --

def unnoticed(opt, proc, noticed):
    """Seconds until noticed() (or proc's exit), None past --vanish-secs."""
    t0 = time.time()
    while not noticed() and proc.poll() is None:
        if time.time() - t0 > opt.vanish_secs:
            proc.kill()
            proc.wait()
            return None
        time.sleep(0.1)
    return time.time() - t0


def vanish(opt, tmp):
    """A link that vanishes without a reset: {what: seconds or None}."""
    out = {}
    path, slot = fresh_mirror(opt, tmp, "vanish", "stream_pub")
    link = linkproxy.LinkProxy().start()
    err = open(os.path.join(tmp, "vanish.err"), "w+")
    svc = subprocess.Popen([opt.pgmirror, "-d", dsn(link), "-S", slot, "-P", "stream_pub",
                            "-s", "1", path], stdout=subprocess.DEVNULL, stderr=err)
    time.sleep(3)  # connected and streaming
    link.blackhole()

    def retried():
        err.seek(0)
        return re.search(r"(?:reconnecting|trying again) (?:now|in \d+ s)", err.read())
    out["service streaming"] = unnoticed(opt, svc, retried)
    stop_service(svc, 5)
    err.close()
    link.stop()  # the server sees the old connections end
    time.sleep(1)
    drop_slot(opt.pgmirror, slot)
    remove_mirror(path)

    path, slot = os.path.join(tmp, "vanish_copy.db"), "pgm_link_vanish_copy"
    link = linkproxy.LinkProxy(rate=2000000).start()
    once = subprocess.Popen([opt.pgmirror, "-d", dsn(link), "-S", slot, "-P", "link_pub",
                             "--once", path], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(5)  # copying
    link.blackhole()
    out["--once copying"] = unnoticed(opt, once, lambda: False)
    out["--once connecting"] = unnoticed(opt, subprocess.Popen(
        [opt.pgmirror, "-d", dsn(link), "-S", slot, "-P", "link_pub", "--once", path],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), lambda: False)
    link.stop()
    time.sleep(1)
    drop_slot(opt.pgmirror, slot)
    remove_mirror(path)
    print("\n## A link that vanishes without a reset (pgmirror's defaults)\n")
    print("| run | noticed after |")
    print("| --- | --- |")
    for what, secs in out.items():
        print("| %s | %s |" % (what, "%.1f s" % secs if secs is not None
                                else "not within %.0f s" % opt.vanish_secs))
    return out


# ------------------------------------------------------------------ sync --

def sync(opt, tmp, profile, cut):
    """The first sync through the profile's proxy, cut or not: a dict."""
    name, rate, every = profile
    path = os.path.join(tmp, "sync.db")
    slot = "pgm_link_sync"
    remove_mirror(path)
    drop_slot(opt.pgmirror, slot)
    link = linkproxy.LinkProxy(rate=rate, cut_every=every if cut else None,
                               down_for=opt.down_for if cut else 0).start()
    res = {"tries": 0, "done": False, "small_at": None}
    t0 = time.time()
    try:
        while time.time() - t0 < opt.max_secs:
            res["tries"] += 1
            try:
                p = subprocess.run([opt.pgmirror, "-d", dsn(link), "-S", slot, "-P", "link_pub",
                                    "--once", path], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE,
                                   timeout=max(1, opt.max_secs - (time.time() - t0)))
            except subprocess.TimeoutExpired:
                break
            if res["small_at"] is None and rows_in(path, "small") == 1000:
                res["small_at"] = res["tries"]
            if p.returncode == 0:
                res["done"] = True
                break
            res["last_error"] = p.stderr.decode(errors="replace").strip().splitlines()[-1:]
    finally:
        res["secs"] = time.time() - t0
        link.stop()
    st = link.stats()
    res["bytes"] = st["bytes_up"] + st["bytes_down"]
    res["cuts"] = st["link_cuts"]
    res["down"] = st["link_cuts"] * (opt.down_for if cut else 0)
    if res["done"] and rows_in(path, "big") != opt.rows:
        res["done"] = False
        res["last_error"] = ["the mirror holds %d rows of big, not %d"
                             % (rows_in(path, "big"), opt.rows)]
    drop_slot(opt.pgmirror, slot)
    remove_mirror(path)
    return res


def report_sync(opt, results):
    print("\n## first sync of %d rows (+ 1,000 behind), --once in a loop\n" % opt.rows)
    print("| link | uncut: s | uncut: bytes | cut: finished | tries | s | bytes "
          "| time / uncut | bytes / uncut | small complete after try | goal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, base, cut in results:
        tr = cut["secs"] / base["secs"] if base["secs"] else 0
        br = cut["bytes"] / base["bytes"] if base["bytes"] else 0
        goal = (cut["done"] and cut["bytes"] <= 1.2 * base["bytes"] and
                cut["secs"] <= 1.5 * base["secs"] + cut["down"])
        print("| %s | %.1f%s | %s | %s | %d | %.1f | %s | %.2f | %.2f | %s | %s |"
              % (name, base["secs"], "" if base["done"] else " (not done)", mb(base["bytes"]),
                 "yes" if cut["done"] else "no, gave up", cut["tries"], cut["secs"],
                 mb(cut["bytes"]), tr, br, cut["small_at"] or "never",
                 "met" if goal else "missed"))
        if not cut["done"]:
            print("|  | last error: %s |||||||||" % " ".join(cut.get("last_error") or []))


# ---------------------------------------------------------------- stream --

def stream(opt, tmp, profile):
    """A service through the profile's proxy under a steady load: a dict."""
    name, rate, every = profile
    sql("TRUNCATE stream_t")
    path, slot = fresh_mirror(opt, tmp, "stream", "stream_pub")
    link = linkproxy.LinkProxy(rate=rate, cut_every=every, down_for=opt.down_for).start()
    err = open(os.path.join(tmp, "stream.err"), "w+")
    svc = subprocess.Popen([opt.pgmirror, "-d", dsn(link), "-S", slot, "-P", "stream_pub",
                            "-s", "1", path], stdout=subprocess.DEVNULL, stderr=err)
    committed = []  # commit time of row i + 1
    arrived = {}
    stop = threading.Event()

    def watch():
        seen = 0
        while not stop.is_set():
            try:
                con = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=1)
                top = con.execute("SELECT max(id) FROM stream_t").fetchone()[0] or 0
                con.close()
            except sqlite3.Error:
                top = seen
            now = time.time()
            for i in range(seen + 1, top + 1):
                arrived[i] = now
            seen = max(seen, top)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    c = source(autocommit=True)
    cur = c.cursor()
    t0 = time.time()
    n = int(opt.stream_secs * opt.stream_rate)
    for i in range(1, n + 1):
        due = t0 + (i - 1) / opt.stream_rate
        time.sleep(max(0.0, due - time.time()))
        cur.execute("INSERT INTO stream_t VALUES (%s, 'x')", (i,))
        committed.append(time.time())
    c.close()
    deadline = time.time() + 3 * every + 60
    while len(arrived) < n and time.time() < deadline and svc.poll() is None:
        time.sleep(0.1)
    stop.set()
    watcher.join()
    stop_service(svc, 30)
    link.stop()
    err.seek(0)
    text = err.read()
    err.close()
    lags = [arrived[i + 1] - t for i, t in enumerate(committed) if i + 1 in arrived]
    drop_slot(opt.pgmirror, slot)
    remove_mirror(path)
    return {"rows": n, "arrived": len(lags), "cuts": link.stats()["link_cuts"],
            "median": statistics.median(lags) if lags else None,
            "max": max(lags) if lags else None,
            "waits": re.findall(r"(?:reconnecting|trying again) (now|in \d+ s)", text)}


def wait_secs(text):
    """'now' -> 0, 'in 4 s' -> 4."""
    return 0 if text == "now" else int(text.split()[1])


def report_stream(opt, results):
    print("\n## a service streaming %d transactions/s for %d s\n"
          % (opt.stream_rate, opt.stream_secs))
    print("| link | cuts | rows in mirror | lag median s | lag max s | goal (max <= N + 2 s) "
          "| waits before reconnecting |")
    print("|---|---|---|---|---|---|---|")
    for (name, rate, every), r in results:
        goal = (r["max"] is not None and r["arrived"] == r["rows"] and
                r["max"] <= every + 2)
        waits = {}
        for w in r["waits"]:
            waits[w] = waits.get(w, 0) + 1
        print("| %s | %d | %d of %d | %s | %s | %s | %s |"
              % (name, r["cuts"], r["arrived"], r["rows"],
                 "%.2f" % r["median"] if r["median"] is not None else "-",
                 "%.2f" % r["max"] if r["max"] is not None else "-",
                 "met" if goal else "missed",
                 ", ".join("%s x%d" % (k, waits[k]) for k in sorted(waits, key=wait_secs))
                 or "none"))


# ---------------------------------------------------------------- bigtxn --

def bigtxn_through(opt, tmp, path, slot, link, limit):
    """One UPDATE of every row of big while a service follows through link:
    (applied, seconds, connections)."""
    err = open(os.path.join(tmp, "bigtxn.err"), "a")
    svc = subprocess.Popen([opt.pgmirror, "-d", dsn(link), "-S", slot, "-P", "link_pub",
                            "-s", "1", path], stdout=subprocess.DEVNULL, stderr=err)
    c = source(autocommit=False)
    cur = c.cursor()
    cur.execute("UPDATE big SET v = md5(v) || v")
    c.commit()
    cur.execute("SELECT v FROM big WHERE id = %s", (opt.rows,))
    want = cur.fetchone()[0]
    c.close()
    t0 = time.time()
    applied = False
    while time.time() - t0 < limit and svc.poll() is None:
        try:
            con = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=1)
            row = con.execute("SELECT v FROM big WHERE id = ?", (opt.rows,)).fetchone()
            con.close()
            applied = row is not None and row[0] == want
        except sqlite3.Error:
            pass
        if applied:
            break
        time.sleep(0.2)
    secs = time.time() - t0
    stop_service(svc, 60)
    err.close()
    return applied, secs


def bigtxn(opt, tmp, profile):
    name, rate, every = profile
    path, slot = fresh_mirror(opt, tmp, "bigtxn", "link_pub")
    res = {}
    with linkproxy.LinkProxy() as link:
        res["base"] = bigtxn_through(opt, tmp, path, slot, link, max(opt.bigtxn_secs, 600))
        res["base_bytes"] = link.stats()["bytes_down"]
    with linkproxy.LinkProxy(rate=rate, cut_every=every, down_for=opt.down_for) as link:
        res["cut"] = bigtxn_through(opt, tmp, path, slot, link, opt.bigtxn_secs)
        st = link.stats()
    res["cut_bytes"] = st["bytes_down"]
    res["cut_conns"] = st["connections"]
    drop_slot(opt.pgmirror, slot)
    remove_mirror(path)
    print("\n## one UPDATE of %d rows (one transaction), a service following\n" % opt.rows)
    print("| link | bytes of the transaction (uncut) | applied uncut after s "
          "| window (rate x N) | applied through the cuts | s | connections | bytes carried |")
    print("|---|---|---|---|---|---|---|---|")
    print("| %s | %s | %s | %s | %s | %.0f | %d | %s |"
          % (name, mb(res["base_bytes"]), "%.1f" % res["base"][1] if res["base"][0] else "no",
             mb(rate * every), "yes" if res["cut"][0] else "no", res["cut"][1],
             res["cut_conns"], mb(res["cut_bytes"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pgmirror", default=os.environ.get("PGMIRROR"), required=False)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--profiles", default="1M/30,10M/12,2M/5")
    ap.add_argument("--parts", default="sync,stream,bigtxn,vanish")
    ap.add_argument("--max-secs", type=float, default=900,
                    help="give a cut sync up after this long")
    ap.add_argument("--down-for", type=float, default=0.0)
    ap.add_argument("--stream-secs", type=float, default=60)
    ap.add_argument("--stream-rate", type=float, default=100)
    ap.add_argument("--bigtxn-secs", type=float, default=300)
    ap.add_argument("--vanish-secs", type=float, default=120)
    opt = ap.parse_args()
    if not opt.pgmirror or not os.access(opt.pgmirror, os.X_OK):
        raise SystemExit("link: no pgmirror binary (--pgmirror or PGMIRROR)")
    profiles = [parse_profile(p) for p in opt.profiles.split(",") if p]
    parts = set(opt.parts.split(","))
    known = {"sync", "stream", "bigtxn", "vanish"}
    if parts - known:
        raise SystemExit("link: unknown parts %s" % ", ".join(sorted(parts - known)))
    version = subprocess.run([opt.pgmirror, "--version"], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.strip().split("\n")[0]
    print("# pgmirror on a weak link: %s (%s), %d rows, link down %.0f s after a cut"
          % (opt.pgmirror, version, opt.rows, opt.down_for))
    setup(opt.rows)
    tmp = tempfile.mkdtemp(prefix="pgm_link.")
    try:
        if "sync" in parts:
            results = []
            for p in profiles:
                say("sync %s: uncut ..." % p[0])
                base = sync(opt, tmp, p, cut=False)
                say("sync %s: uncut %.1f s, %s; cut ..." % (p[0], base["secs"], mb(base["bytes"])))
                cut = sync(opt, tmp, p, cut=True)
                say("sync %s: cut: %s after %d tries, %.1f s, %s"
                    % (p[0], "done" if cut["done"] else "not done", cut["tries"], cut["secs"],
                       mb(cut["bytes"])))
                results.append((p[0], base, cut))
            report_sync(opt, results)
        if "stream" in parts:
            results = []
            for p in profiles:
                say("stream %s ..." % p[0])
                results.append((p, stream(opt, tmp, p)))
            report_stream(opt, results)
        if "bigtxn" in parts:
            say("bigtxn %s ..." % profiles[-1][0])
            bigtxn(opt, tmp, profiles[-1])
        if "vanish" in parts:
            say("vanish ...")
            vanish(opt, tmp)
    finally:
        a = admin()
        a.cursor().execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)
        a.close()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Self-test of linkproxy.py, runnable without pgmirror:

    pg_virtualenv -o wal_level=logical /usr/bin/python3 tests/integration/linkproxy_selftest.py

The proxy forwards to the test's server (a unix socket directory or a TCP
host, as PGHOST says), counts the bytes each way, holds the rate (a 1 MB
answer at 1 MB/s takes about a second, not a few milliseconds), cuts on
demand, every N seconds, at random moments, after N bytes, keeps the link
down after a cut, goes silent instead of closing, turns into a black hole
and back, counts the statements a client sends, and runs as a script
(SIGUSR1 cuts, SIGUSR2 turns the black hole on and off, the counters at
the end).  Not named test_*.py: it tests
the tests, not pgmirror.
"""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PGMIRROR", "/bin/true")
import harness  # noqa: E402
import linkproxy  # noqa: E402
from harness import check, fail  # noqa: E402

import psycopg2  # noqa: E402

ONE_MB = "SELECT repeat('x', 1000000)"


def connect(ctx, link):
    c = psycopg2.connect(harness.make_dsn(
        dbname=ctx.dbname, host=link.host, port=link.port,
        user=os.environ.get("PGUSER"), password=os.environ.get("PGPASSWORD"),
        sslmode="disable", connect_timeout=10))
    c.autocommit = True
    return c


def query(conn, q):
    cur = conn.cursor()
    cur.execute(q)
    return cur.fetchall()


def expect_cut(conn, what):
    try:
        query(conn, "SELECT 1")
    except psycopg2.Error:
        return
    fail("%s: a query on a cut connection worked" % what)


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            fail("%s: not within %ss" % (what, timeout))
        time.sleep(0.02)


def addresses(ctx):
    fam, path = linkproxy.server_address("/run/pg dir", "5433")
    check((fam, path) == (socket.AF_UNIX, "/run/pg dir/.s.PGSQL.5433"),
          "socket directory: %r" % ((fam, path),))
    fam, addr = linkproxy.server_address("localhost,other", "6000")
    check((fam, addr) == (socket.AF_INET, ("localhost", 6000)), "TCP host: %r"
          % ((fam, addr),))
    check(linkproxy.server_address("", "1")[1] == "/var/run/postgresql/.s.PGSQL.1",
          "no host is libpq's default socket directory")
    check(linkproxy.parse_size("2M") == 2000000 and linkproxy.parse_size("512k") == 512000,
          "sizes")
    print("ok: server addresses from PGHOST/PGPORT (%s: %r)"
          % (os.environ.get("PGHOST"), linkproxy.server_address()))

    # a directory as the host: the proxy reaches a unix socket in it (here
    # an echo server of ours, as the test's server may be on TCP only)
    sockdir = os.path.join(ctx.tmpdir, "sock dir")
    os.mkdir(sockdir)
    echo = socket.socket(socket.AF_UNIX)
    echo.bind(os.path.join(sockdir, ".s.PGSQL.5999"))
    echo.listen(1)
    with linkproxy.LinkProxy(host=sockdir, port=5999) as link:
        s = socket.create_connection((link.host, link.port), timeout=5)
        s.sendall(b"ping")
        peer, _ = echo.accept()
        peer.settimeout(5)
        check(peer.recv(4) == b"ping", "the unix socket got nothing")
        peer.sendall(b"pong")
        check(s.recv(4) == b"pong", "nothing back from the unix socket")
        s.close()
        peer.close()
    echo.close()
    print("ok: forwards to a unix socket in a directory")


def forward_and_count(ctx):
    with linkproxy.LinkProxy() as link:
        c = connect(ctx, link)
        t0 = time.monotonic()
        check(len(query(c, ONE_MB)[0][0]) == 1000000, "1 MB answer")
        fast = time.monotonic() - t0
        c.close()
        wait_for(lambda: link.stats()["open"] == 0, 5, "the proxy sees the close")
        st = link.stats()
    check(st["bytes_down"] > 1000000 and 0 < st["bytes_up"] < 10000,
          "counters: %r" % st)
    check(st["connections"] == 1 and st["cuts"] == 0, "counters: %r" % st)
    print("ok: forwards and counts: %r; 1 MB in %.3f s unlimited" % (st, fast))
    return fast


def rate(ctx, fast):
    with linkproxy.LinkProxy(rate=1000000, down_only=True) as link:
        c = connect(ctx, link)
        t0 = time.monotonic()
        query(c, ONE_MB)
        slow = time.monotonic() - t0
    check(0.85 < slow < 3, "1 MB at 1 MB/s took %.3f s" % slow)
    check(slow > 5 * fast, "the rate made no difference: %.3f vs %.3f s" % (slow, fast))
    with linkproxy.LinkProxy(rate=100000) as link:  # both ways: the query itself
        c = connect(ctx, link)
        t0 = time.monotonic()
        query(c, "SELECT length('%s')" % ("y" * 100000))
        up = time.monotonic() - t0
    check(0.8 < up < 3, "100 kB up at 100 kB/s took %.3f s" % up)
    print("ok: 1 MB down at 1 MB/s in %.2f s; 100 kB up at 100 kB/s in %.2f s" % (slow, up))


def cuts(ctx):
    with linkproxy.LinkProxy() as link:
        a, b = connect(ctx, link), connect(ctx, link)
        check(link.cut() == 2, "cut() cut %r connections, not 2" % link.stats())
        expect_cut(a, "cut()")
        expect_cut(b, "cut()")
        c = connect(ctx, link)
        check(query(c, "SELECT 7") == [(7,)], "a new connection after a cut")
        t0 = time.monotonic()
        link.cut(down_for=1.0)
        c = connect(ctx, link)
        waited = time.monotonic() - t0
        check(0.9 < waited < 5, "connected %.2f s after a cut with 1 s down" % waited)
        check(link.stats()["cuts"] == 3, "cuts counted: %r" % link.stats())
    print("ok: cut() cuts every connection; the link stays down %.2f s" % waited)

    with linkproxy.LinkProxy(cut_every=0.5) as link:
        c = connect(ctx, link)
        wait_for(lambda: link.stats()["link_cuts"] >= 1, 3, "a cut every 0.5 s")
        expect_cut(c, "cut_every")
        wait_for(lambda: link.stats()["link_cuts"] >= 3, 3, "three cuts")
        regular = [b - a for a, b in zip(link.cut_times, link.cut_times[1:])]
    check(all(0.4 < g < 0.8 for g in regular), "regular gaps: %r" % regular)

    with linkproxy.LinkProxy(cut_every=0.1, random_cuts=True, seed=7) as link:
        wait_for(lambda: len(link.cut_times) >= 12, 10, "random cuts")
        gaps = [b - a for a, b in zip(link.cut_times, link.cut_times[1:])]
    check(max(gaps) > 2 * min(gaps) + 0.05, "random gaps look regular: %r" % gaps)
    print("ok: cuts every 0.5 s (%s) and at random moments (%s)"
          % (", ".join("%.2f" % g for g in regular), ", ".join("%.2f" % g for g in gaps[:5])))

    with linkproxy.LinkProxy(cut_at_bytes=200000) as link:
        c = connect(ctx, link)
        try:
            query(c, ONE_MB)
            fail("a 1 MB answer passed a proxy that cuts at 200 kB")
        except psycopg2.Error:
            pass
        st = link.stats()
    check(200000 <= st["bytes_down"] < 200000 + 70000 and st["cuts"] == 1,
          "cut at bytes: %r" % st)
    print("ok: cut after 200 kB from the server: %r" % st)


def silent(ctx):
    ssl_request = struct.pack("!II", 8, 80877103)
    with linkproxy.LinkProxy(mode="silent") as link:
        s = socket.create_connection((link.host, link.port), timeout=5)
        s.sendall(ssl_request)
        check(s.recv(1) in (b"N", b"S"), "no answer to SSLRequest through the proxy")
        s.close()
        s = socket.create_connection((link.host, link.port), timeout=1)
        wait_for(lambda: link.stats()["connections"] == 2, 5, "the second connection")
        check(link.cut() >= 1, "silent cut: %r" % link.stats())
        s.sendall(ssl_request)
        try:
            got = s.recv(1)
            fail("a silent link answered %r (end of file: b'')" % got)
        except socket.timeout:
            pass
        s.close()
    print("ok: a silent cut passes nothing and closes nothing")


def statements(ctx):
    with linkproxy.LinkProxy() as link:
        c = connect(ctx, link)  # sslmode=disable: the startup packet first
        query(c, "SELECT 1; SELECT 2")  # one Query message
        cur = c.cursor()
        cur.execute("SELECT %s", (3,))  # psycopg2 sends one Query too
        before = link.stats()["statements"]
        link.reset_counts()
        query(c, "SELECT 4")
        wait_for(lambda: link.stats()["bytes_down"] > 0, 5, "the answer counted")
        st = link.stats()
    check(before == 2, "statements before reset: %d, not 2" % before)
    check(st["statements"] == 1 and 0 < st["bytes_up"] < 100,
          "after reset_counts(): %r" % st)
    state = {"startup": True, "rest": b""}
    ssl = struct.pack("!II", 8, 80877103)
    startup = struct.pack("!II", 9, 196608) + b"\0"
    q = b"Q" + struct.pack("!I", 13) + b"SELECT 1\0"
    parse = b"P" + struct.pack("!I", 4)
    n = linkproxy.client_messages(ssl + startup + q[:3], state)
    n += linkproxy.client_messages(q[3:] + parse + q, state)
    check(n == 3, "SSL request, startup packet, Query, Parse, Query: %d statements, not 3" % n)
    print("ok: counts statements (%d, then %d after reset_counts())" % (before, st["statements"]))


def blackhole(ctx):
    ssl_request = struct.pack("!II", 8, 80877103)

    def hears_nothing(sock, what):
        sock.sendall(ssl_request)
        try:
            got = sock.recv(1)
            fail("%s heard %r (end of file: b'')" % (what, got))
        except socket.timeout:
            pass

    with linkproxy.LinkProxy() as link:
        old = socket.create_connection((link.host, link.port), timeout=1)
        wait_for(lambda: link.stats()["connections"] == 1, 5, "the first connection")
        check(link.blackhole() == 1, "blackhole() silenced %r" % link.stats())
        hears_nothing(old, "a connection open when the link vanished")
        new = socket.create_connection((link.host, link.port), timeout=1)
        hears_nothing(new, "a connection made in a black hole")
        wait_for(lambda: link.stats()["black_accepted"] == 1, 5, "accepted in the black hole")
        link.restore()
        hears_nothing(old, "a silenced connection after restore()")
        d = connect(ctx, link)
        check(query(d, "SELECT 8") == [(8,)], "a new connection after restore()")
        d.close()
        old.close()
        new.close()
        st = link.stats()
    check(st["connections"] == 2 and not st["black"], "after restore(): %r" % st)
    print("ok: a black hole silences open connections and new ones; restore() lets new ones "
          "pass: %r" % st)


def script(ctx):
    here = os.path.dirname(os.path.abspath(__file__))
    stats = os.path.join(ctx.tmpdir, "stats.json")
    p = subprocess.Popen([sys.executable, os.path.join(here, "linkproxy.py"),
                          "--rate", "10M", "--stats", stats],
                         stdout=subprocess.PIPE, universal_newlines=True)
    try:
        first = p.stdout.readline().split()
        check(len(first) == 2 and first[0] == "port", "first line: %r" % first)

        class Link:
            host, port = "127.0.0.1", int(first[1])
        c = connect(ctx, Link)
        query(c, ONE_MB)
        p.send_signal(signal.SIGUSR1)
        wait_for(lambda: os.path.exists(stats) and json.load(open(stats))["cuts"] == 1,
                 5, "SIGUSR1 cuts (stats file)")
        expect_cut(c, "SIGUSR1")
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    st = json.loads(out.strip().splitlines()[-1])
    check(p.returncode == 0 and st["cuts"] == 1 and st["bytes_down"] > 1000000,
          "script: exit %r, %r" % (p.returncode, st))
    print("ok: as a script: %r" % st)


def test(ctx):
    addresses(ctx)
    fast = forward_and_count(ctx)
    rate(ctx, fast)
    cuts(ctx)
    silent(ctx)
    statements(ctx)
    blackhole(ctx)
    script(ctx)


harness.main(test, name="linkproxy_selftest")

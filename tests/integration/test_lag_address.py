"""The plain connection a service opens beside its stream (the lag
question asked at each -v line, the catalog look-ups) goes to the address
the replication connection resolved, so no host name is looked up while
the stream's loop runs (issue 32, point 5): a look-up blocks, and a slow
resolver would hold the loop, keepalives unanswered, for as long.

The source is named by a host name that only an LD_PRELOAD shim knows
(tests/fault/slow_resolve.c: no /etc/hosts, no DNS), which counts its
look-ups and makes every one after the first take 4 s. A service with -v
and -s 1 streams while the source commits, asking the server's position
every second on its plain connection: the name is looked up once, for the
one replication connection, while the -v lines come and the plain
connection is open, to the same server.

Before, the plain connection looked the name up again (2 look-ups), and
the loop stopped the 4 s the second one took.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

NAME = "pgmirror-source.invalid"
DELAY_MS = 4000
PROGRESS_RE = re.compile(r"progress: ")


def resolutions(log):
    try:
        with open(log) as f:
            return sum(1 for line in f if line.strip() == NAME)
    except FileNotFoundError:
        return 0


def test(ctx):
    host = os.environ.get("PGHOST", "")
    check(host and not host.startswith("/"),
          "the test needs the server on TCP (PGHOST is %r; pg_virtualenv -t)" % host)
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, v text); CREATE PUBLICATION pub FOR TABLE t")
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)
    log = os.path.join(ctx.tmpdir, "resolved")
    env = {"LD_PRELOAD": harness.fault_shim("slow_resolve"), "PGMIRROR_RESOLVE_NAME": NAME,
           "PGMIRROR_RESOLVE_TO": ctx.sql1("SELECT host(inet_server_addr())"),
           "PGMIRROR_RESOLVE_LOG": log, "PGMIRROR_RESOLVE_DELAY_MS": str(DELAY_MS),
           "ASAN_OPTIONS": "verify_asan_link_order=0:" + os.environ.get("ASAN_OPTIONS", "")}
    dsn = harness.make_dsn(dbname=ctx.dbname, host=NAME, port=os.environ.get("PGPORT"),
                           user=os.environ.get("PGUSER"), sslmode="disable")
    proc = ctx.start(["-d", dsn, "-S", slot, "-P", "pub", "-v", "-s", "1", path],
                     tag="service", env=env)
    for i in range(12):
        ctx.sql("INSERT INTO t VALUES (%s, 'x')", i)
        time.sleep(0.5)
    ctx.catch_up(path, proc=proc, timeout=60)
    plain = ctx.sql1("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                     "'pgmirror' AND backend_type = 'client backend' AND datname = %s",
                     ctx.dbname)
    err = proc.stderr()
    ctx.stop(proc)
    n = resolutions(log)
    lines = PROGRESS_RE.findall(err)
    harness.log("look-ups of %s: %d; -v progress lines: %d; plain connections: %d"
                % (NAME, n, len(lines), plain))
    if proc.popen.returncode not in (0, None):
        fail("pgmirror exited %s:\n%s" % (proc.popen.returncode, err))
    check(n >= 1, "the shim saw no look-up: is it preloaded?\n%s" % err)
    check(plain >= 1, "no plain connection beside the stream: the test proves nothing")
    check(len(lines) >= 4, "only %d progress lines in 6 s:\n%s" % (len(lines), err))
    check(n == 1, "the host name was looked up %d times, not once (for the replication "
          "connection alone):\n%s" % (n, err[-3000:]))
    ctx.assert_mirror_equals_source(path, "t")


harness.main(test)

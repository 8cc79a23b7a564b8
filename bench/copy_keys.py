#!/usr/bin/python3
"""The first copy of a table keyed by numeric, of one keyed by timestamptz
and of one keyed by float8, on loopback (not a test: it prints what it measured).

    pg_virtualenv -t -o wal_level=logical -o fsync=off \\
        /usr/bin/python3 bench/copy_keys.py PGMIRROR [PGMIRROR...]

Tables of ROWS rows (default 1,000,000), each with a payload of about 70
bytes, keyed by numeric (k_num_*: id numeric PRIMARY KEY) or timestamptz
(k_tstz_*: ts timestamptz PRIMARY KEY), their rows in key order (*_seq:
as a sequence or the time of insertion fills a table) or scattered
(*_scat: keys in another order than the rows'), each in a publication of
its own (k_f8_*: f float8 PRIMARY KEY, the same). For each table, REPEATS (default 3) first runs (--once, a fresh
mirror and slot) of each binary in turn: wall seconds, and their median
(ONLY=k_num_seq,... times only those tables). A binary that copies such a table whole
reads it with COPY's own scan; one that copies it in parts reads it in key
order through the primary key's index, in parts of about a second each.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tablesync import sql  # noqa: E402

ROWS = int(os.environ.get("ROWS", "1000000"))
REPEATS = int(os.environ.get("REPEATS", "3"))
ONLY = [t for t in os.environ.get("ONLY", "").split(",") if t]  # tables to time
# (table, key column, key of the row's place)
TABLES = [("k_num", "id numeric", "(%s) * 0.37 - 5000"),
          ("k_tstz", "ts timestamptz",
           "timestamptz '2000-01-01 00:00:00+00' + (%s) * interval '1 minute 0.5 seconds'"),
          ("k_f8", "f float8", "(%s)::float8 / 7")]
# rows in key order as they were inserted (a time of insertion, a sequence),
# or scattered (keys in another order than the rows', as after updates)
LAYOUTS = [("seq", "g"), ("scat", "(g::int8 * 7919 %% %d)" % ROWS)]


def first_run(binary, tmp, table, tag):
    path = os.path.join(tmp, "%s-%s.db" % (table, tag))
    slot = "bench_%s_%s" % (table, tag)
    t0 = time.time()
    subprocess.run([binary, "-S", slot, "-P", "bench_" + table, "--once", path], check=True,
                   stderr=subprocess.DEVNULL)
    t = time.time() - t0
    sql("SELECT pg_drop_replication_slot('%s')" % slot)
    os.unlink(path)
    return t


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    for table, key, first in TABLES:
        for layout, place in LAYOUTS:
            name = "%s_%s" % (table, layout)
            if ONLY and name not in ONLY:
                continue
            sql("DROP TABLE IF EXISTS %s; DROP PUBLICATION IF EXISTS bench_%s" % (name, name))
            sql("CREATE TABLE %s (%s PRIMARY KEY, n int, v text); INSERT INTO %s SELECT %s, g, "
                "md5(g::text) || md5(g::text) FROM generate_series(1, %d) g"
                % (name, key, name, first % place, ROWS))
            sql("VACUUM ANALYZE %s" % name)
            sql("CREATE PUBLICATION bench_%s FOR TABLE %s" % (name, name))
    with tempfile.TemporaryDirectory() as tmp:
        for table, _, _ in TABLES:
            for layout, _ in LAYOUTS:
                name = "%s_%s" % (table, layout)
                if ONLY and name not in ONLY:
                    continue
                # the binaries in turn in each repeat: a neighbour's load
                # moves them alike
                times = [[] for _ in binaries]
                for r in range(REPEATS):
                    for i, b in enumerate(binaries):
                        times[i].append(first_run(b, tmp, name, "b%d_%d" % (i, r)))
                for b, ts in zip(binaries, times):
                    print("%s: %s, %d rows: first copy %s s, median %.2f s"
                          % (b, name, ROWS, " ".join("%.2f" % t for t in ts),
                             statistics.median(ts)), flush=True)


main()

#!/usr/bin/python3
"""Figures of the table sync (not a test: it prints what it measured).

    pg_virtualenv -t -o wal_level=logical -o fsync=off \
        /usr/bin/python3 bench/tablesync.py PGMIRROR

1. join: a table of ROWS rows (default 1,000,000) joins a running mirror
   (ALTER PUBLICATION ... ADD TABLE, then one row changed): seconds from the
   ADD until the mirror holds the table, read from the mirror.
2. resync: pgmirror --once --resync=TABLE on that table, under
   /usr/bin/time -v: wall seconds and peak resident memory.
3. resume: a first run of ten tables of 100,000 rows killed (kill -9) once
   the mirror holds five of them; the next run's "copied N rows" lines give
   the rows it copied.
"""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import psycopg2

ROWS = int(os.environ.get("ROWS", "1000000"))


def sql(q):
    c = psycopg2.connect("")
    c.autocommit = True
    cur = c.cursor()
    cur.execute(q)
    out = cur.fetchall() if cur.description else None
    c.close()
    return out


def tables(path):
    try:
        con = sqlite3.connect(path, timeout=30)
        try:
            return [r[0] for r in con.execute("SELECT table_name FROM pgmirror_tables")]
        finally:
            con.close()
    except sqlite3.Error:
        return []


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="pgm_bench_sync.")
    for s in ("bench_j", "bench_r"):
        sql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            "WHERE slot_name = '%s'" % s)
    sql("DROP PUBLICATION IF EXISTS bench_sync; DROP PUBLICATION IF EXISTS bench_resume")
    sql("DROP TABLE IF EXISTS bench_a, bench_big; "
        "CREATE TABLE bench_a (id int PRIMARY KEY); "
        "CREATE TABLE bench_big (id int PRIMARY KEY, v text, n int); "
        "INSERT INTO bench_big SELECT g, md5(g::text), g %% 1000 "
        "FROM generate_series(1, %d) g; "
        "CREATE PUBLICATION bench_sync FOR TABLE bench_a" % ROWS)
    path = os.path.join(tmp, "join.db")
    args = [binary, "-S", "bench_j", "-P", "bench_sync"]
    subprocess.run(args + ["--once", path], check=True)
    proc = subprocess.Popen(args + [path], stderr=subprocess.PIPE)
    time.sleep(1)  # the service is streaming (a benchmark, not a test)
    t0 = time.time()
    sql("ALTER PUBLICATION bench_sync ADD TABLE bench_big")
    sql("UPDATE bench_big SET n = -1 WHERE id = 1")
    while "bench_big" not in tables(path):
        if proc.poll() is not None:
            sys.exit("pgmirror exited %s" % proc.poll())
        time.sleep(0.05)
    join_s = time.time() - t0
    proc.send_signal(signal.SIGTERM)
    proc.wait()
    print("join: %d rows joined a running mirror in %.1f s" % (ROWS, join_s))

    r = subprocess.run(["/usr/bin/time", "-v"] + args + ["--once", "--resync=bench_big", path],
                       stderr=subprocess.PIPE, check=True)
    err = r.stderr.decode()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", err).group(1)
    print("resync: %d rows, wall %s, peak RSS %.1f MB" % (ROWS, wall, rss / 1024))

    sql("DROP TABLE IF EXISTS bench_big; "
        "DO $$ BEGIN FOR i IN 1..10 LOOP "
        "EXECUTE format('DROP TABLE IF EXISTS bench_t%s', i); "
        "EXECUTE format('CREATE TABLE bench_t%s (id int PRIMARY KEY, v text)', i); "
        "EXECUTE format('INSERT INTO bench_t%s SELECT g, md5(g::text) "
        "FROM generate_series(1, 100000) g', i); END LOOP; END $$; "
        "CREATE PUBLICATION bench_resume FOR TABLE bench_t1, bench_t2, bench_t3, bench_t4, "
        "bench_t5, bench_t6, bench_t7, bench_t8, bench_t9, bench_t10")
    path = os.path.join(tmp, "resume.db")
    args = [binary, "-S", "bench_r", "-P", "bench_resume"]
    proc = subprocess.Popen(args + [path], stderr=subprocess.PIPE)
    while len(tables(path)) < 5:
        if proc.poll() is not None:
            sys.exit("the first run exited %s before five tables" % proc.poll())
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = len(tables(path))
    time.sleep(1)  # the walsender lets go of the slot
    r = subprocess.run(args + ["--once", path], stderr=subprocess.PIPE, check=True)
    copied = [int(n) for n in re.findall(r"copied (\d+) rows", r.stderr.decode())]
    print("resume: killed with %d of 10 tables copied; the next run copied %d tables, "
          "%d rows" % (kept, len(copied), sum(copied)))


if __name__ == "__main__":
    main()

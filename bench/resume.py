#!/usr/bin/python3
"""A whole first run against a resumed one, under a steady stream of short
source transactions (not a test: it prints what it measured).

    pg_virtualenv -t -o wal_level=logical -o fsync=off \\
        /usr/bin/python3 bench/resume.py PGMIRROR [PGMIRROR...]

TABLES (default 1,000) one-row tables in schema many, published FOR TABLES
IN SCHEMA; meanwhile a thread commits a one-row INSERT into an unpublished
table every few milliseconds (so every slot creation has transactions to
wait for). For each binary: seconds of a whole first run (--once), and of
the run that resumes a first run killed (kill -9) after KEEP (default 5)
tables were copied. Each binary gets fresh mirrors and slots.
"""

import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tablesync import sql  # noqa: E402

TABLES = int(os.environ.get("TABLES", "1000"))
KEEP = int(os.environ.get("KEEP", "5"))


def load(stop, counter):
    """Short transactions, one after another, until stop is set."""
    c = psycopg2.connect("")
    c.autocommit = True
    cur = c.cursor()
    while not stop.is_set():
        cur.execute("INSERT INTO bench_load (v) VALUES ('x')")
        counter[0] += 1
        time.sleep(0.003)
    c.close()


def args(binary, path, slot):
    return [binary, "-S", slot, "-P", "bench_pub", "--once", "-v", path]


def whole(binary, tmp, tag):
    path = os.path.join(tmp, "whole-%s.db" % tag)
    t0 = time.time()
    subprocess.run(args(binary, path, "bench_whole_" + tag), check=True,
                   stderr=subprocess.DEVNULL)
    return time.time() - t0


def resumed(binary, tmp, tag):
    path = os.path.join(tmp, "resume-%s.db" % tag)
    err = os.path.join(tmp, "resume-%s.err" % tag)
    with open(err, "wb") as fe:
        p = subprocess.Popen(args(binary, path, "bench_resume_" + tag), stderr=fe)
    while p.poll() is None:
        with open(err, errors="replace") as f:
            if len(re.findall(r"copied \d+ rows of \"many\.", f.read())) >= KEEP:
                break
        time.sleep(0.005)
    p.kill()
    p.wait()
    with open(err, errors="replace") as f:
        kept = len(re.findall(r"copied \d+ rows of \"many\.", f.read()))
    time.sleep(1)  # the killed walsender lets go of the slot
    t0 = time.time()
    subprocess.run(args(binary, path, "bench_resume_" + tag), check=True,
                   stderr=subprocess.DEVNULL)
    return time.time() - t0, kept


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    sql("DROP SCHEMA IF EXISTS many CASCADE; DROP TABLE IF EXISTS bench_load; "
        "DROP PUBLICATION IF EXISTS bench_pub")
    sql("CREATE SCHEMA many; CREATE TABLE bench_load (id serial PRIMARY KEY, v text)")
    sql("""DO $$ BEGIN
             FOR i IN 1..%d LOOP
               EXECUTE format('CREATE TABLE many.t%%s (id int PRIMARY KEY, v text)', i);
               EXECUTE format('INSERT INTO many.t%%s VALUES (1, ''x'')', i);
             END LOOP;
           END $$""" % TABLES)
    sql("CREATE PUBLICATION bench_pub FOR TABLES IN SCHEMA many")
    stop, counter = threading.Event(), [0]
    th = threading.Thread(target=load, args=(stop, counter))
    th.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i, b in enumerate(binaries):
                tag = "b%d" % i
                w = whole(b, tmp, tag)
                r, kept = resumed(b, tmp, tag)
                print("%s: %d tables: whole first run %.1f s; killed after %d tables, "
                      "resumed in %.1f s (%.1f x)" % (b, TABLES, w, kept, r, r / w),
                      flush=True)
    finally:
        stop.set()
        th.join()
        for s in sql("SELECT slot_name FROM pg_replication_slots "
                     "WHERE slot_name LIKE 'bench\\_%'"):
            sql("SELECT pg_drop_replication_slot('%s')" % s[0])
    print("source transactions meanwhile: %d" % counter[0])


main()

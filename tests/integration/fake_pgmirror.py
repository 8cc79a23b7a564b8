#!/usr/bin/python3
"""A minimal stand-in for pgmirror, in Python, used ONLY to check that the
integration tests themselves work (their SQL, waits, signals, comparisons)
before or independently of the C program:

    pg_virtualenv -o wal_level=logical -o max_replication_slots=40 \
        -o max_wal_senders=40 env PGMIRROR=$PWD/tests/integration/fake_pgmirror.py \
        /usr/bin/python3 tests/integration/test_rounds.py

It follows CONTRACT.md loosely (pgoutput proto 1, per-transaction SQLite
commits, flock for exit 3) and leaves out the initial copy, schema changes,
streaming and two-phase.  It is not the product and not a reference for it.
"""

import datetime
import decimal
import fcntl
import getopt
import json
import os
import re
import select
import signal
import sqlite3
import struct
import sys
import time

import psycopg2
import psycopg2.errors
import psycopg2.extras

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "sql", "schema.sql")
stop_flag = False


def die(code, msg):
    sys.stderr.write("pgmirror(fake): %s\n" % msg)
    sys.exit(code)


def lsn_int(s):
    a, b = s.split("/")
    return (int(a, 16) << 32) | int(b, 16)


def lsn_str(n):
    return "%X/%X" % (n >> 32, n & 0xFFFFFFFF)


def frac6(ts):
    m = re.match(r"^(\d{4,}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d+))?$", ts)
    if not m:
        return ts
    f = (m.group(2) or "").rstrip("0")
    return m.group(1) + ("." + f.ljust(6, "0") if f else "")


def parse_array(s, conv):
    pos = 0

    def elem():
        nonlocal pos
        if s[pos] == "{":
            pos += 1
            out = []
            if s[pos] == "}":
                pos += 1
                return out
            while True:
                out.append(elem())
                if s[pos] == ",":
                    pos += 1
                    continue
                pos += 1  # }
                return out
        if s[pos] == '"':
            pos += 1
            buf = []
            while s[pos] != '"':
                if s[pos] == "\\":
                    pos += 1
                buf.append(s[pos])
                pos += 1
            pos += 1
            return conv("".join(buf))
        start = pos
        while s[pos] not in ",}":
            pos += 1
        tok = s[start:pos]
        return None if tok == "NULL" else conv(tok)

    if s.startswith("["):  # dimension decoration
        s = s[s.index("=") + 1:]
    return elem()


class Types:
    def __init__(self, conn):
        self.conn = conn
        self.cache = {}

    def get(self, oid):
        if oid not in self.cache:
            cur = self.conn.cursor()
            cur.execute("SELECT t.typname, t.typcategory, coalesce(e.typname, '') "
                        "FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem "
                        "WHERE t.oid = %s", (oid,))
            self.cache[oid] = cur.fetchone() or ("text", "S", "")
        return self.cache[oid]


def scalar(typname, typmod, v):
    if typname == "bool":
        return 1 if v == "t" else 0
    if typname in ("int2", "int4", "int8", "oid"):
        return int(v)
    if typname in ("float4", "float8"):
        if v == "NaN":
            return "NaN"
        return float(v)
    if typname == "numeric":
        if typmod >= 4 and ((typmod - 4) >> 16) <= 15 and v != "NaN":
            d = decimal.Decimal(v)
            return int(d) if d == d.to_integral_value() else float(v)
        return v
    if typname == "bytea":
        return bytes.fromhex(v[2:])
    if typname == "timestamp":
        return frac6(v)
    if typname == "timestamptz":
        if v in ("infinity", "-infinity"):
            return v
        m = re.match(r"^(.*?)([+-]\d\d(?::?\d\d){0,2})$", v)
        off = m.group(2)
        sign = -1 if off[0] == "-" else 1
        parts = [int(x) for x in off[1:].split(":")] + [0, 0]
        tz = datetime.timezone(sign * datetime.timedelta(
            hours=parts[0], minutes=parts[1], seconds=parts[2]))
        base = m.group(1)
        frac = ""
        if "." in base:
            base, frac = base.split(".")
        dt = datetime.datetime.strptime(base, "%Y-%m-%d %H:%M:%S").replace(
            microsecond=int(frac.ljust(6, "0")) if frac else 0, tzinfo=tz)
        dt = dt.astimezone(datetime.timezone.utc)
        out = dt.strftime("%Y-%m-%d %H:%M:%S")
        if dt.microsecond:
            out += ".%06d" % dt.microsecond
        return out
    return v


def convert(types, oid, typmod, v):
    typname, cat, elem = types.get(oid)
    if cat == "A":
        def conv(x):
            if elem in ("int2", "int4", "int8", "oid", "float4", "float8", "numeric"):
                return json.loads(x) if x not in ("NaN", "Infinity", "-Infinity") else x
            if elem == "bool":
                return x == "t"
            return x
        return json.dumps(parse_array(v, conv))
    return scalar(typname, typmod, v)


def decl(types, oid, typmod):
    typname, cat, _ = types.get(oid)
    if cat == "A":
        return "TEXT"
    if typname in ("bool", "int2", "int4", "int8", "oid"):
        return "INTEGER"
    if typname in ("float4", "float8"):
        return "REAL"
    if typname == "numeric" and typmod >= 4 and ((typmod - 4) >> 16) <= 15:
        return "NUMERIC"
    if typname == "bytea":
        return "BLOB"
    return "TEXT"


def q(name):
    return '"' + name.replace('"', '""') + '"'


class Reader:
    def __init__(self, b):
        self.b, self.p = b, 0

    def u8(self):
        self.p += 1
        return self.b[self.p - 1]

    def i16(self):
        self.p += 2
        return struct.unpack(">h", self.b[self.p - 2:self.p])[0]

    def i32(self):
        self.p += 4
        return struct.unpack(">i", self.b[self.p - 4:self.p])[0]

    def u32(self):
        self.p += 4
        return struct.unpack(">I", self.b[self.p - 4:self.p])[0]

    def i64(self):
        self.p += 8
        return struct.unpack(">q", self.b[self.p - 8:self.p])[0]

    def s(self):
        e = self.b.index(0, self.p)
        v = self.b[self.p:e].decode()
        self.p = e + 1
        return v

    def tuple(self):
        n = self.i16()
        out = []
        for _ in range(n):
            k = chr(self.u8())
            if k == "n":
                out.append(("n", None))
            elif k == "u":
                out.append(("u", None))
            else:
                ln = self.i32()
                out.append(("t", self.b[self.p:self.p + ln].decode()))
                self.p += ln
        return out


def main():
    try:
        opts, args = getopt.gnu_getopt(sys.argv[1:], "d:S:P:E:s:vqVh", [
            "dbname=", "slot=", "publication=", "once", "endpos=",
            "no-initial-copy", "drop-slot", "status", "status-interval=",
            "verbose", "quiet", "version", "help"])
    except getopt.GetoptError as e:
        die(2, str(e))
    o = dict(dsn="", slot="pgmirror", pubs=[], once=False, endpos=None,
             status=False, drop=False)
    for k, v in opts:
        if k in ("-h", "--help"):
            print("usage: pgmirror [OPTION]... MIRROR.db")
            sys.exit(0)
        if k in ("-V", "--version"):
            print("pgmirror (fake) 0")
            sys.exit(0)
        if k in ("-d", "--dbname"):
            o["dsn"] = v
        elif k in ("-S", "--slot"):
            o["slot"] = v
        elif k in ("-P", "--publication"):
            o["pubs"] += [p for p in v.split(",") if p]
        elif k == "--once":
            o["once"] = True
        elif k in ("-E", "--endpos"):
            if not re.match(r"^[0-9A-Fa-f]+/[0-9A-Fa-f]+$", v):
                die(2, "bad LSN %s" % v)
            o["endpos"] = lsn_int(v)
        elif k in ("-s", "--status-interval"):
            if not v.isdigit():
                die(2, "bad interval")
        elif k == "--status":
            o["status"] = True
        elif k == "--drop-slot":
            o["drop"] = True
    if len(args) != 1:
        die(2, "need exactly one MIRROR.db")
    path = args[0]
    if o["status"]:
        if not os.path.exists(path):
            die(1, "no such mirror %s" % path)
        con = sqlite3.connect(path)
        st = con.execute("SELECT slot, publications, confirmed_lsn, last_commit_time "
                         "FROM pgmirror_state").fetchone()
        print("slot %s\npublications %s\nconfirmed %s\nlast commit %s" % st)
        for (t,) in con.execute("SELECT DISTINCT table_name FROM pgmirror_columns"):
            print("%s %d" % (t, con.execute("SELECT count(*) FROM %s" % q(t)).fetchone()[0]))
        sys.exit(0)

    lockf = open(path + ".fake-lock", "a")
    try:
        fcntl.flock(lockf, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        die(3, "another pgmirror holds %s" % path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(open(SCHEMA).read())
    st = db.execute("SELECT slot, publications, confirmed_lsn FROM pgmirror_state").fetchone()
    if st is None and not o["pubs"]:
        db.close()
        die(2, "-P is required on the first run")
    if st is not None and o["pubs"] and sorted(set(o["pubs"])) != sorted(st[1].split(",")):
        die(1, "publications %s differ from the mirror's %s"
            % (",".join(o["pubs"]), st[1]))
    pubs = st[1] if st else ",".join(sorted(set(o["pubs"])))
    slot = o["slot"]
    try:
        conn = psycopg2.connect(o["dsn"])
        conn.autocommit = True
        rconn = psycopg2.connect(o["dsn"], connection_factory=psycopg2.extras.LogicalReplicationConnection)
    except psycopg2.Error as e:
        die(1, "cannot connect: %s" % e)
    cur = conn.cursor()
    cur.execute("SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,))
    r = cur.fetchone()
    if o["drop"]:
        if r:
            cur.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        sys.exit(0)
    if r and r[0]:
        die(3, "slot %s is in use" % slot)
    rcur = rconn.cursor()
    if st is None:
        if r:
            die(1, "slot %s exists but this mirror did not create it; use --drop-slot" % slot)
        rcur.create_replication_slot(slot, output_plugin="pgoutput")
        cp = rcur.fetchone()[1]
        cur.execute("SELECT system_identifier::text, current_database() FROM pg_control_system()")
        sysid, dbname = cur.fetchone()
        db.execute("INSERT INTO pgmirror_state (id, slot, publications, system_identifier, "
                   "database, confirmed_lsn, slot_created_lsn, initial_copy_done) "
                   "VALUES (1, ?, ?, ?, ?, ?, ?, 1)", (slot, pubs, sysid, dbname, cp, cp))
        confirmed = lsn_int(cp)
    else:
        confirmed = lsn_int(st[2])
    cur.execute("SELECT pg_current_wal_flush_lsn()::text")
    target = lsn_int(cur.fetchone()[0]) if o["once"] else None
    endpos = o["endpos"]

    def on_sig(signum, frame):
        global stop_flag
        stop_flag = True
    signal.signal(signal.SIGTERM, on_sig)
    signal.signal(signal.SIGINT, on_sig)

    try:
        rcur.start_replication(slot_name=slot, decode=False, start_lsn=confirmed,
                               options={"proto_version": "1", "publication_names": pubs})
    except psycopg2.errors.ObjectInUse as e:
        die(3, str(e).strip())
    types = Types(conn)
    rels = {}
    in_tx = False
    last_reply = 0

    def stop_at(pos):
        return (target is not None and pos >= target) or (endpos is not None and pos >= endpos)

    while not stop_flag:
        msg = rcur.read_message()
        if msg is None:
            if not in_tx:
                we = rcur.wal_end or 0
                if stop_at(we) or we > confirmed:
                    newc = we if endpos is None else min(we, endpos)
                    if newc > confirmed:
                        db.execute("UPDATE pgmirror_state SET confirmed_lsn = ?", (lsn_str(newc),))
                        confirmed = newc
                    rcur.send_feedback(flush_lsn=confirmed)
                    if stop_at(we):
                        break
            if time.time() - last_reply > 0.2:
                rcur.send_feedback(flush_lsn=confirmed, reply=True)
                last_reply = time.time()
            select.select([rcur], [], [], 0.2)
            continue
        d = Reader(msg.payload)
        kind = chr(d.u8())
        if kind == "B":
            final = d.i64()
            if endpos is not None and final > endpos:
                break
            db.execute("BEGIN")
            in_tx = True
        elif kind == "C":
            d.u8()
            d.i64()
            end = d.i64()
            ts = d.i64()
            t = datetime.datetime(2000, 1, 1) + datetime.timedelta(microseconds=ts)
            db.execute("UPDATE pgmirror_state SET confirmed_lsn = ?, last_commit_time = ?",
                       (lsn_str(end), t.strftime("%Y-%m-%d %H:%M:%S.%f")))
            db.execute("COMMIT")
            in_tx = False
            confirmed = end
            rcur.send_feedback(flush_lsn=end)
            if stop_at(end):
                break
        elif kind == "R":
            relid = d.u32()
            nsp, name, ident = d.s(), d.s(), chr(d.u8())
            cols = []
            for _ in range(d.i16()):
                flags = d.u8()
                cols.append((d.s(), d.u32(), d.i32(), flags & 1))
            tname = name if nsp == "public" else "%s_%s" % (nsp, name)
            rels[relid] = (tname, cols, ident)
            keys = [c[0] for c in cols if c[3]]
            ddl = ", ".join("%s %s" % (q(c[0]), decl(types, c[1], c[2])) for c in cols)
            if keys and ident != "f":
                ddl += ", PRIMARY KEY (%s)" % ", ".join(q(k) for k in keys)
            db.execute("CREATE TABLE IF NOT EXISTS %s (%s)" % (q(tname), ddl))
            db.execute("DELETE FROM pgmirror_columns WHERE table_name = ?", (tname,))
            for i, c in enumerate(cols):
                db.execute("INSERT INTO pgmirror_columns VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (tname, c[0], i + 1, types.get(c[1])[0], c[2], c[3], c[1]))
        elif kind in "IUD":
            tname, cols, ident = rels[d.u32()]
            old = new = None
            k = chr(d.u8())
            if k in "KO":
                old = d.tuple()
                if kind == "U":
                    d.u8()
                    new = d.tuple()
            else:
                new = d.tuple()

            def vals(tup):
                return [(c[0], None if kk == "n" else convert(types, c[1], c[2], v))
                        for c, (kk, v) in zip(cols, tup) if kk != "u"]
            if kind == "I":
                vv = vals(new)
                db.execute("INSERT INTO %s (%s) VALUES (%s)" % (
                    q(tname), ", ".join(q(c) for c, _ in vv), ", ".join("?" * len(vv))),
                    [v for _, v in vv])
                continue
            match = vals(old) if old else [(c, v) for (c, v), col in zip(
                vals(new), cols) if col[3]]
            if old and k == "K":
                match = [(c, v) for (c, v), col in zip(vals(old), cols) if col[3]]
            where = " AND ".join("%s IS ?" % q(c) for c, _ in match)
            sel = "rowid = (SELECT rowid FROM %s WHERE %s LIMIT 1)" % (q(tname), where)
            if kind == "D":
                db.execute("DELETE FROM %s WHERE %s" % (q(tname), sel), [v for _, v in match])
            else:
                vv = vals(new)
                db.execute("UPDATE %s SET %s WHERE %s" % (
                    q(tname), ", ".join("%s = ?" % q(c) for c, _ in vv), sel),
                    [v for _, v in vv] + [v for _, v in match])
        elif kind == "T":
            n = d.i32()
            d.u8()
            for _ in range(n):
                rid = d.u32()
                if rid in rels:
                    db.execute("DELETE FROM %s" % q(rels[rid][0]))
    if in_tx:
        db.execute("ROLLBACK")
    rcur.send_feedback(flush_lsn=confirmed, force=True)
    db.close()
    sys.exit(0)


if __name__ == "__main__":
    main()

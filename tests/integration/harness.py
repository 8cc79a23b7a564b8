"""Integration test harness for pgmirror.

Every test file is a small script:

    import harness
    def test(ctx):
        ...
    harness.main(test)

run as `/usr/bin/python3 tests/integration/test_X.py` with the PG* variables
naming a server with wal_level=logical (pg_virtualenv sets them) and
PGMIRROR naming the binary (the Makefile sets it).  Exit 0 = pass, 1 = fail.
A test never skips (never exits 77): no server, no PGMIRROR or no binary is a
failure, so CI cannot pass without running the tests.

Each test gets its own database `pgm_<name>` (created fresh, dropped at the
end), its own slot names (`pgm_<name>_<suffix>`) and its own temp dir, so
tests can run in parallel (`make -j2 check`).

Tests wait on LSNs (wait_for_mirror / catch_up), never on a fixed sleep.
A wait on a long process (a mirror catching up, a copy) is bounded by how
long it may stand still, not by how long it may take (wait_moving): on a
slow or loaded machine it goes on while the process moves; the test's own
limit bounds it in all.

Environment knobs: PGMIRROR_KEEP=1 keeps the temp dir and database after
the test (also kept on failure: the temp dir path is printed);
PGMIRROR_TEST_TIMEOUT (seconds, default 300) bounds a whole test;
PGMIRROR_TEST_SLOW=N (default 1) is for a binary that runs N times slower
than native, such as a cross build under qemu-user: it multiplies the time
limits for pgmirror (runs, stops, catching up, the whole test) by N and
paces a Workload at 1/N of its speed, so that the mirror can keep up.
"""

import collections
import decimal
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback

# see PGMIRROR_TEST_SLOW above
SLOW = max(1.0, float(os.environ.get("PGMIRROR_TEST_SLOW") or 1))
# PGMIRROR_FEED_REPLAY=1: every mirror a test makes from PostgreSQL also
# writes a feed (--feed=MIRROR.feed, closing a segment every second), and
# every check of a mirror against the source (assert_mirror_equals_source(),
# a --verify through ctx.run() that exits 0, a test's own comparison that
# says so with ctx.checked()) also replays that feed into a
# device (MIRROR.device.db) and compares it with the hub, table by table
# (TestContext.replay_check). The counts of what was replayed go to the
# log ("replayed: ...").
REPLAY = os.environ.get("PGMIRROR_FEED_REPLAY") == "1"

try:
    import psycopg2
    import psycopg2.extensions
except ImportError:  # pragma: no cover - environment problem, still a failure
    print("FAIL: python3-psycopg2 is not installed (use /usr/bin/python3)")
    sys.exit(1)


class Failure(Exception):
    """A test assertion failed; the message says what differed."""


def fail(msg):
    raise Failure(msg)


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def log(msg):
    print(msg, flush=True)


def process_cpu(pid):
    """The CPU time process pid used so far, in tenths of a second (None
    where /proc does not show it)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 10 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


# what the test waits for now, for the message of its own time limit
_waiting = []


def wait_moving(what, step, quiet=60, interval=0.05, detail=None):
    """Waits for the end of a long process whose speed is the machine's:
    step() returns (result, mark), result not None once the awaited event
    came (returned), mark a value that changes while the process moves
    (an LSN, rows stored). Fails, saying what it waited for (what), the
    last mark and detail(), once the mark stood still for quiet seconds
    (times SLOW): a slow process that moves is waited for, however slow;
    the test's own limit (PGMIRROR_TEST_TIMEOUT) bounds the whole wait."""
    quiet *= SLOW
    _waiting.append(what)
    try:
        last, since = None, time.time()
        while True:
            result, mark = step()
            if result is not None:
                return result
            if mark != last:
                last, since = mark, time.time()
            elif time.time() - since > quiet:
                fail("waited for %s: nothing moved for %.0f s (last seen: %s)%s"
                     % (what, quiet, last, detail() if detail else ""))
            time.sleep(interval)
    finally:
        _waiting.pop()


# ---------------------------------------------------------------- LSNs ----

_LSN_RE = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")


def parse_lsn(s):
    """'16/B374D848' -> int.  Raises Failure on anything else."""
    if isinstance(s, int):
        return s
    m = _LSN_RE.match(s or "")
    if not m:
        fail("not an LSN (X/Y): %r" % (s,))
    return (int(m.group(1), 16) << 32) | int(m.group(2), 16)


def format_lsn(n):
    return "%X/%X" % (n >> 32, n & 0xFFFFFFFF)


fmt = format_lsn


# ------------------------------------------------------ fault shims ----

def fault_shim(name):
    """The path of the LD_PRELOAD shim tests/fault/NAME.so that make check
    builds (PGMIRROR_FAULT_DIR names its folder); a missing one fails."""
    d = os.environ.get("PGMIRROR_FAULT_DIR")
    path = os.path.join(d, name + ".so") if d else None
    if not path or not os.path.isfile(path):
        fail("no fault shim %s.so in PGMIRROR_FAULT_DIR=%r (make check builds "
             "tests/fault/%s.so and sets it)" % (name, d, name))
    return path


# ------------------------------------------------------------ files ----

def _zstd_lib():
    import ctypes
    import ctypes.util
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    lib.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                    ctypes.c_size_t]
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    return lib, ctypes


def zstd_decompress(data):
    """A zstd frame's contents (libzstd, which pgmirror links too); one
    that cannot be read fails."""
    lib, ctypes = _zstd_lib()
    size = lib.ZSTD_getFrameContentSize(data, len(data))
    check(size < (1 << 40), "not a zstd frame with its size (%d bytes)" % len(data))
    out = ctypes.create_string_buffer(max(1, size))
    n = lib.ZSTD_decompress(out, size, data, len(data))
    check(not lib.ZSTD_isError(n) and n == size, "a zstd frame that cannot be read")
    return out.raw[:size]


def mirror_files(path):
    """Every file whose name begins with the mirror's (path: the mirror,
    its -wal and -shm, and in the replay mode its feed, MIRROR.feed, and
    device, MIRROR.device.db), directories walked, as [(name, bytes)]
    sorted by name; a .zst file (a feed's segment or snapshot)
    decompressed, so that what it holds can be searched."""
    import glob
    out = []
    for top in sorted(glob.glob(glob.escape(path) + "*")):
        found = [top]
        if os.path.isdir(top):
            found = [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs]
        for f in sorted(found):
            with open(f, "rb") as fh:
                data = fh.read()
            if f.endswith(".zst"):
                data = zstd_decompress(data)
            out.append((os.path.relpath(f, os.path.dirname(path)), data))
    return out


# ----------------------------------------------------- libpq DSN quoting ----

def _dsn_value(v):
    v = str(v)
    if v and re.match(r"^[A-Za-z0-9_./:@-]+$", v):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def make_dsn(**kw):
    return " ".join("%s=%s" % (k, _dsn_value(v)) for k, v in kw.items()
                    if v is not None and v != "")


# ------------------------------------------------- value normalisation ----
#
# Both sides are turned into hashable "cells": (kind, value), kind being the
# SQLite storage class the contract promises (integer, real, text, blob,
# null) or 'json' for json/jsonb/array columns (compared parsed).

def _json_norm(v):
    """Parsed JSON (or a psycopg2 array) -> hashable, number-type-blind."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float, decimal.Decimal)):
        if isinstance(v, float) and v != v:
            return ("num", "NaN")
        return ("num", decimal.Decimal(repr(v)) if isinstance(v, float)
                else decimal.Decimal(v))
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, (list, tuple)):
        return ("list", tuple(_json_norm(x) for x in v))
    if isinstance(v, dict):
        return ("obj", tuple(sorted((k, _json_norm(x)) for k, x in v.items())))
    return ("other", str(v))


def _parse_json_text(s):
    return json.loads(s, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def _sqlite_kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "integer"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "real"
    if isinstance(v, str):
        return "text"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "blob"
    return type(v).__name__


def cell(v):
    """A plain Python value (as the contract says the mirror stores it)."""
    k = _sqlite_kind(v)
    if k == "blob":
        v = bytes(v)
    if k == "integer":
        v = int(v)
    return (k, v)


def _frac6(ts):
    """PostgreSQL timestamp text -> contract form: fraction padded to 6
    digits when non-zero, dropped when zero.  'infinity' stays."""
    m = re.match(r"^(\d{4,}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$", ts)
    if not m:
        return ts
    base, frac, rest = m.group(1), m.group(2) or "", m.group(3)
    frac = frac.rstrip("0")
    if frac:
        base += "." + frac.ljust(6, "0")
    return base + rest


def numeric_precision(typmod):
    if typmod is None or typmod < 4:
        return None, None
    t = typmod - 4
    return (t >> 16) & 0xFFFF, t & 0xFFFF


def expected_cell(col, text, native=None):
    """Source value -> the cell the mirror must hold (arrays: see
    source_cells, which compares to_json of the source array).

    col: dict from source_columns(); text: the server's text output of the
    value (of value AT TIME ZONE 'UTC' for timestamptz)."""
    if text is None:
        return ("null", None)
    t = col["typname"]
    if t == "bool":
        return ("integer", 1 if text in ("t", "true") else 0)
    if t in ("int2", "int4", "int8", "oid"):
        return ("integer", int(text))
    if t in ("float4", "float8"):
        if text == "NaN":
            return ("text", "NaN")
        return ("real", float(text))
    if t == "numeric":
        p, s = numeric_precision(col["typmod"])
        if p is not None and p <= 15 and text != "NaN":
            d = decimal.Decimal(text)
            if d == d.to_integral_value():
                return ("integer", int(d))
            return ("real", float(text))
        return ("text", text)
    if t == "bytea":
        check(text.startswith("\\x"), "bytea_output is not hex: %r" % text[:20])
        return ("blob", bytes.fromhex(text[2:]))
    if t in ("timestamp", "timestamptz"):
        return ("text", _frac6(text))
    if t in ("json", "jsonb"):
        return ("json", _json_norm(_parse_json_text(text)))
    return ("text", text)


def mirror_cell(col, v):
    """Mirror value -> cell (json/array columns parsed when they are text)."""
    if v is None:
        return ("null", None)
    if col["is_array"] or col["typname"] in ("json", "jsonb"):
        if isinstance(v, str):
            try:
                return ("json", _json_norm(_parse_json_text(v)))
            except ValueError:
                return ("text(not json)", v)
        return cell(v)
    return cell(v)


def mirror_table_name(qualified):
    """'public.t' -> 't', 's.t' -> 's_t', 't' -> 't'."""
    if "." in qualified:
        schema, name = qualified.split(".", 1)
    else:
        schema, name = "public", qualified
    return name if schema == "public" else "%s_%s" % (schema, name)


def qident(name):
    return '"' + name.replace('"', '""') + '"'


def qtable(qualified):
    if "." in qualified:
        schema, name = qualified.split(".", 1)
    else:
        schema, name = "public", qualified
    return "%s.%s" % (qident(schema), qident(name))


def _show_cell(c):
    kind, v = c
    if kind == "json":
        return "json:" + _show_json(v)
    if kind in ("text", "blob") and v is not None and len(v) > 60:
        return "%s:%r…(len %d)" % (kind, v[:40], len(v))
    return "%s:%r" % (kind, v)


def _show_json(n):
    if n is None:
        return "null"
    tag, v = n
    if tag == "list":
        return "[" + ",".join(_show_json(x) for x in v) + "]"
    if tag == "obj":
        return "{" + ",".join("%s:%s" % (k, _show_json(x)) for k, x in v) + "}"
    if tag == "str":
        return json.dumps(v)
    return str(v)


def _show_row(row):
    return "(" + ", ".join(_show_cell(c) for c in row) + ")"


# ------------------------------------------------------------- context ----

class Proc:
    """A pgmirror started in the background; output goes to files."""

    def __init__(self, popen, out_path, err_path, args):
        self.popen = popen
        self.out_path = out_path
        self.err_path = err_path
        self.args = args

    @property
    def pid(self):
        return self.popen.pid

    def poll(self):
        return self.popen.poll()

    def stderr(self):
        try:
            with open(self.err_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stdout(self):
        try:
            with open(self.out_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


class TestContext:
    def __init__(self, name):
        self.name = name
        self.dbname = "pgm_" + name
        self.procs = []
        self.slots = set()
        self.conn = None
        self.admin = None
        self.failed = False
        self.binary = os.environ.get("PGMIRROR")
        if not self.binary:
            fail("PGMIRROR is not set: it must name the pgmirror binary "
                 "(make check sets it)")
        if not (os.path.isfile(self.binary) and os.access(self.binary, os.X_OK)):
            fail("PGMIRROR=%s: no such executable (run make first)" % self.binary)
        self.tmpdir = tempfile.mkdtemp(prefix="pgm_%s." % name)

    # -- setup / teardown --------------------------------------------------

    def setup(self, encoding=None):
        """encoding: create the test database with this server encoding
        (C collation, from template0) instead of the cluster's default."""
        try:
            self.admin = psycopg2.connect(
                dbname=os.environ.get("PGDATABASE", "postgres"),
                connect_timeout=10)
        except psycopg2.Error as e:
            fail("cannot connect to the source server (PGHOST=%s PGPORT=%s): %s"
                 "\n(run under pg_virtualenv -o wal_level=logical ...)"
                 % (os.environ.get("PGHOST"), os.environ.get("PGPORT"),
                    str(e).strip()))
        self.admin.autocommit = True
        cur = self.admin.cursor()
        cur.execute("SHOW wal_level")
        wl = cur.fetchone()[0]
        check(wl == "logical", "server has wal_level=%s, need logical "
              "(pg_virtualenv -o wal_level=logical ...)" % wl)
        self._drop_db_slots()
        cur.execute("DROP DATABASE IF EXISTS %s" % qident(self.dbname))
        if encoding:
            cur.execute("CREATE DATABASE %s ENCODING %%s LC_COLLATE 'C' "
                        "LC_CTYPE 'C' TEMPLATE template0" % qident(self.dbname),
                        (encoding,))
        else:
            cur.execute("CREATE DATABASE %s" % qident(self.dbname))
        self.conn = self.connect()
        self.server_version = self.conn.server_version
        self.dsn = make_dsn(dbname=self.dbname,
                            host=os.environ.get("PGHOST"),
                            port=os.environ.get("PGPORT"),
                            user=os.environ.get("PGUSER"))
        # (the password stays in PGPASSWORD, which pgmirror inherits: one
        # in -d draws a warning on every run)

    def connect(self, autocommit=True):
        # floats read exactly, as pgmirror's sessions read them (before 12
        # the default printed 15 digits of a float8, 6 of a float4)
        c = psycopg2.connect(dbname=self.dbname, connect_timeout=10,
                             options="-c extra_float_digits=3")
        c.autocommit = autocommit
        return c

    def _drop_db_slots(self):
        cur = self.admin.cursor()
        cur.execute("SELECT slot_name FROM pg_replication_slots "
                    "WHERE database = %s OR slot_name = ANY(%s)",
                    (self.dbname, list(self.slots)))
        for (slot,) in cur.fetchall():
            self._drop_slot(slot)

    def _drop_slot(self, slot):
        cur = self.admin.cursor()
        deadline = time.time() + 20
        while True:
            cur.execute("SELECT active_pid FROM pg_replication_slots "
                        "WHERE slot_name = %s", (slot,))
            r = cur.fetchone()
            if r is None:
                return
            if r[0] is None:
                try:
                    cur.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
                    return
                except psycopg2.Error as e:
                    if time.time() > deadline:
                        log("warning: cannot drop slot %s: %s" % (slot, e))
                        return
            else:
                cur.execute("SELECT pg_terminate_backend(%s)", (r[0],))
            if time.time() > deadline:
                log("warning: slot %s still active" % slot)
                return
            time.sleep(0.05)

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.popen.send_signal(signal.SIGTERM)
                    p.popen.wait(5)
                except subprocess.TimeoutExpired:
                    p.popen.kill()
                    p.popen.wait()
                except OSError:
                    pass
        keep = os.environ.get("PGMIRROR_KEEP") == "1"
        if getattr(self, "_raw", None) is not None:
            try:
                self._raw.close()
            except psycopg2.Error:
                pass
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg2.Error:
                pass
        if self.admin is not None:
            try:
                self._drop_db_slots()
                if not keep:
                    self.admin.cursor().execute(
                        "DROP DATABASE IF EXISTS %s WITH (FORCE)"
                        % qident(self.dbname))
            except psycopg2.Error as e:
                log("warning: cleanup: %s" % str(e).strip())
            self.admin.close()
        if keep or self.failed:
            log("kept temp dir %s" % self.tmpdir)
        else:
            subprocess.call(["rm", "-rf", self.tmpdir])

    # -- source helpers ----------------------------------------------------

    def restart_server(self, timeout=60):
        """A fast-mode restart of the whole cluster (a test that does it is
        exclusive): `pg_ctl restart -m fast` on PGMIRROR_PGDATA
        (scripts/other-majors.sh; PGMIRROR_PG_CTL names its pg_ctl; run as
        the directory's owner, since postgres refuses to run as root), else
        pg_ctlcluster stop (fast mode) and start of the cluster on PGPORT
        (pg_virtualenv's; its restart action skips the stop when its probe
        of the server's socket fails under load). Each command must finish
        within timeout seconds. Returns the seconds the restart took; the
        test's own connections are gone (reconnect())."""
        t0 = time.time()
        pgdata = os.environ.get("PGMIRROR_PGDATA")
        if pgdata:
            cmd = [os.environ.get("PGMIRROR_PG_CTL", "pg_ctl"), "-D", pgdata, "-w",
                   "-t", "120", "-m", "fast", "-l", os.path.join(pgdata, "server.log"),
                   "restart"]
            owner = os.stat(pgdata).st_uid
            if os.geteuid() == 0 and owner != 0:
                import pwd
                cmd = ["runuser", "-u", pwd.getpwuid(owner).pw_name, "--"] + cmd
            cmds = [cmd]
            logfile = os.path.join(pgdata, "server.log")
        else:
            port = os.environ.get("PGPORT", "5432")
            out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True,
                                 check=True).stdout
            cmds = logfile = None
            for line in out.splitlines():
                fields = line.split()
                if len(fields) >= 3 and fields[2] == port:
                    cmds = [["pg_ctlcluster", fields[0], fields[1], action]
                            for action in ("stop", "start")]
                    logfile = fields[-1]
                    break
            if cmds is None:
                fail("no cluster on port %s in pg_lsclusters:\n%s" % (port, out))
        for cmd in cmds:
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                fail("%s did not finish within %d s" % (" ".join(cmd), timeout))
            if r.returncode != 0:
                logtail = ""
                try:
                    with open(logfile, errors="replace") as f:
                        logtail = "".join(f.readlines()[-30:])
                except (OSError, TypeError):
                    pass
                fail("%s: exit %d\n%s%s\n%s" % (" ".join(cmd), r.returncode, r.stdout,
                                                r.stderr, logtail))
        return time.time() - t0

    def reconnect(self, timeout=60):
        """The test's own connections, again after a server restart."""
        deadline = time.time() + timeout
        while True:
            try:
                self.admin = psycopg2.connect(
                    dbname=os.environ.get("PGDATABASE", "postgres"), connect_timeout=10)
                self.admin.autocommit = True
                self.conn = self.connect()
                self._raw = None
                return
            except psycopg2.Error:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def sql(self, q, *params):
        """Run q on the test database (autocommit); return rows or None."""
        cur = self.conn.cursor()
        cur.execute(q, params if params else None)
        if cur.description is None:
            return None
        return cur.fetchall()

    def sql1(self, q, *params):
        rows = self.sql(q, *params)
        check(rows, "no row from %s" % q)
        return rows[0][0]

    def source_lsn(self):
        return parse_lsn(self.sql1("SELECT pg_current_wal_lsn()::text"))

    def source_flush_lsn(self):
        """The source's flushed WAL position.  Every committed transaction
        ends at or before it, and --once stops there (IDENTIFY_SYSTEM);
        source_lsn() (the write position) may be ahead of it by WAL of
        other sessions' transactions that the WAL writer has not flushed
        yet, which no mirror has to reach."""
        return parse_lsn(self.sql1("SELECT pg_current_wal_flush_lsn()::text"))

    def slot_final_lsn(self, slot):
        """The slot's confirmed_flush_lsn after a run has exited: read once
        its walsender has exited, so that it has processed the run's last
        feedback (right after the exit it may not have)."""
        self.wait_slot_inactive(slot)
        info = self.slot_info(slot)
        check(info is not None, "slot %s does not exist" % slot)
        return parse_lsn(info["confirmed_flush_lsn"])

    def system_identifier(self):
        return str(self.sql1("SELECT system_identifier FROM pg_control_system()"))

    def slot(self, suffix="s"):
        name = ("%s_%s" % (self.dbname, suffix)).lower()[:63]
        self.slots.add(name)
        return name

    def slot_info(self, slot):
        cur = self.admin.cursor()
        cur.execute("SELECT slot_name, plugin, database, active, active_pid, "
                    "confirmed_flush_lsn::text, restart_lsn::text "
                    "FROM pg_replication_slots WHERE slot_name = %s", (slot,))
        r = cur.fetchone()
        if r is None:
            return None
        return dict(zip(["slot_name", "plugin", "database", "active",
                         "active_pid", "confirmed_flush_lsn", "restart_lsn"], r))

    def backend_activity(self, pid):
        """(what pg_stat_activity says server process pid does, its CPU
        time in tenths of a second, or None where /proc does not show it:
        a server on another machine)."""
        cur = self.admin.cursor()
        cur.execute("SELECT backend_type, state, wait_event_type, wait_event, "
                    "left(query, 60) FROM pg_stat_activity WHERE pid = %s", (pid,))
        row = cur.fetchone()
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                ours = f.read().startswith(b"postgres")
        except OSError:
            ours = False
        return row, process_cpu(pid) if ours else None

    def wait_slot_inactive(self, slot, timeout=30):
        """After a client died, its walsender may live a little longer: it
        ends once it notices, between steps of its work, longer on a loaded
        machine. Waits while the process that holds the slot works (its
        CPU time moves); fails once it stood still for timeout seconds,
        saying what pg_stat_activity shows it doing."""
        def step():
            info = self.slot_info(slot)
            if info is None or not info["active"]:
                return True, None
            pid = info["active_pid"]
            return None, (pid, self.backend_activity(pid)[1]) if pid else None

        def detail():
            info = self.slot_info(slot)
            pid = info and info["active_pid"]
            return "; pid %s: %s" % (pid, self.backend_activity(pid)[0] if pid else None)

        wait_moving("slot %s to be released" % slot, step, quiet=timeout, detail=detail)

    def hold_xid(self):
        """A connection with an open transaction that has an xid: slot
        creation waits for it (commit or roll back its .rollback())."""
        c = self.connect(autocommit=False)
        c.cursor().execute("SELECT txid_current()")
        return c

    def wait_slot_creation_waiting(self, slot, proc=None, timeout=60):
        """Waits until CREATE_REPLICATION_SLOT of slot is under way and waits
        for an older transaction (the slot is listed while it is being made,
        and its walsender waits on a lock)."""
        deadline = time.time() + timeout
        cur = self.admin.cursor()
        while True:
            cur.execute("SELECT 1 FROM pg_replication_slots s JOIN pg_locks l "
                        "ON l.pid = s.active_pid AND NOT l.granted "
                        "WHERE s.slot_name = %s", (slot,))
            if cur.fetchone():
                return
            if proc is not None and proc.poll() is not None:
                fail("pgmirror exited %s before its slot creation waited:\n%s"
                     % (proc.poll(), proc.stderr()))
            if time.time() > deadline:
                fail("the creation of slot %s did not wait within %ss%s"
                     % (slot, timeout, "\nstderr:\n" + proc.stderr() if proc else ""))
            time.sleep(0.05)

    def create_tables(self, ddl):
        self.sql(ddl)

    # -- running pgmirror --------------------------------------------------

    def path(self, name="mirror.db"):
        return os.path.join(self.tmpdir, name)

    @staticmethod
    def _env(env):
        """os.environ with env's entries set (a None value removes one)."""
        if env is None:
            return None
        out = dict(os.environ)
        for k, v in env.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = v
        if out.get("LD_PRELOAD") and "verify_asan_link_order" not in out.get("ASAN_OPTIONS", ""):
            # a fault shim comes before the sanitizer build's ASan runtime
            # in the list of libraries, which ASan refuses unless told
            out["ASAN_OPTIONS"] = ":".join(filter(None, [out.get("ASAN_OPTIONS"),
                                                         "verify_asan_link_order=0"]))
        return out

    def run(self, args, timeout=60, env=None):
        """Run pgmirror args... to completion: (returncode, stdout, stderr).
        A run that stands still (uses no CPU, says nothing) for timeout
        seconds is killed and fails; one that works goes on, however slow
        the machine (wait_moving). env: variables to set (None: unset) for
        this run."""
        cmd = self.argv(args)
        self.nruns = getattr(self, "nruns", 0) + 1
        d = os.path.join(self.tmpdir, "runs")  # apart from start()'s files
        os.makedirs(d, exist_ok=True)
        out_path = os.path.join(d, "%d.out" % self.nruns)
        err_path = os.path.join(d, "%d.err" % self.nruns)
        with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
            p = subprocess.Popen(cmd, stdout=fo, stderr=fe, cwd=self.tmpdir,
                                 env=self._env(env))

        def step():
            try:
                return p.wait(0.05), None
            except subprocess.TimeoutExpired:
                pass
            return None, (process_cpu(p.pid), os.path.getsize(out_path),
                          os.path.getsize(err_path))

        def detail():
            with open(err_path, "rb") as f:
                return ": %s\nstderr: %s" % (" ".join(shlex.quote(c) for c in cmd),
                                              f.read().decode(errors="replace"))

        try:
            rc = wait_moving("pgmirror (pid %d) to finish" % p.pid, step, quiet=timeout,
                             interval=0, detail=detail)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        with open(out_path, "rb") as fo, open(err_path, "rb") as fe:
            out, err = (fo.read().decode(errors="replace"),
                        fe.read().decode(errors="replace"))
        # the replay mode: a --verify that found the mirror equal to the
        # source is a check of the mirror too, and its device is compared
        if rc == 0 and "--verify" in cmd:
            self.checked(os.path.join(self.tmpdir, cmd[-1]))
        return rc, out, err

    def start(self, args, tag=None, env=None):
        """Start pgmirror args... in the background (a Proc)."""
        tag = tag or "bg%d" % len(self.procs)
        out = os.path.join(self.tmpdir, tag + ".out")
        err = os.path.join(self.tmpdir, tag + ".err")
        cmd = self.argv(args)
        with open(out, "wb") as fo, open(err, "wb") as fe:
            p = subprocess.Popen(cmd, stdout=fo, stderr=fe, cwd=self.tmpdir,
                                 env=self._env(env))
        proc = Proc(p, out, err, cmd)
        self.procs.append(proc)
        return proc

    def stop(self, proc, sig=signal.SIGTERM, timeout=30):
        """Send sig and wait for the exit; returns the exit code (negative
        for a death by signal).  Failure if it does not exit in time."""
        timeout *= SLOW
        if proc.poll() is None:
            proc.popen.send_signal(sig)
        try:
            return proc.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.popen.kill()
            proc.popen.wait()
            fail("pgmirror (pid %d) did not exit within %ss after signal %d\n"
                 "stderr:\n%s" % (proc.pid, timeout, sig, proc.stderr()))

    def mirror_args(self, path, slot, pubs, *extra):
        args = ["-d", self.dsn, "-S", slot]
        for p in ([pubs] if isinstance(pubs, str) else pubs):
            args += ["-P", p]
        return args + list(extra) + [path]

    def argv(self, args):
        """The command line of pgmirror args... as ctx.run() and ctx.start()
        run it (in the replay mode with the feed added, see _with_feed), for
        a test that starts it itself (under a wrapper, with a file of its
        own as stderr)."""
        return [self.binary] + self._with_feed(args)

    @staticmethod
    def _with_feed(args):
        """REPLAY: a run from the source (-d, no --from) that writes a mirror
        also writes its feed beside it (MIRROR.feed), unless the test gives
        --feed itself."""
        args = [str(a) for a in args]
        if (not REPLAY or not args
                or any(a.startswith(("--feed", "--from")) for a in args)
                or {"--drop-slot", "--status", "--check", "--help", "-V"} & set(args)
                or args[-1].startswith("-")):
            return args
        return args[:-1] + ["--feed=" + args[-1] + ".feed", "--feed-interval=1", args[-1]]

    # -- feeds (docs/feed.md) ----------------------------------------------

    def device(self, dev, feed, *extra, expect=0, timeout=60, env=None):
        """pgmirror --from=feed --once dev; checks the exit code."""
        args = ["--from=%s" % feed] + list(extra)
        if "--once" not in args and not any(str(a).startswith(("-E", "--endpos"))
                                            for a in args):
            args.append("--once")
        rc, out, err = self.run(args + [dev], timeout=timeout, env=env)
        if rc != expect:
            fail("pgmirror --from %s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s"
                 % (" ".join(map(str, args)), rc, expect, out, err))
        return rc, out, err

    def mirror_contents(self, path):
        """Every mirror table of the file at path (pgmirror's own tables and
        the user's objects left out) as {table: (columns, Counter(rows))},
        with the storage classes of the values."""
        con = self.mirror_connect(path)
        try:
            names = [r[0] for r in con.execute(
                "SELECT table_name FROM pgmirror_tables WHERE table_name "
                "NOT LIKE 'pgmirror\\_%' ESCAPE '\\'").fetchall()]
            out = {}
            for t in names:
                cur = con.execute("SELECT * FROM %s" % qident(t))
                cols = [d[0] for d in cur.description]
                out[t] = (cols, collections.Counter(
                    tuple(cell(v) for v in r) for r in cur.fetchall()))
            cols = con.execute(
                "SELECT table_name, column_name, position, pg_type, type_modifier, is_key, "
                "type_oid, value_type, source_attnum FROM pgmirror_columns "
                "ORDER BY 1, 3").fetchall()
            tabs = con.execute(
                "SELECT table_name, source_schema, source_table, relation_oid, "
                "replica_identity, generation FROM pgmirror_tables ORDER BY 1").fetchall()
        finally:
            con.close()
        return out, cols, tabs

    def diff_contents(self, a, b, what_a, what_b, limit=10):
        """The differences between two mirror_contents(), as lines."""
        lines = []
        (ta, ca, ra), (tb, cb, rb) = a, b
        for t in sorted(set(ta) | set(tb)):
            if t not in tb:
                lines.append("%s: only in %s" % (t, what_a))
            elif t not in ta:
                lines.append("%s: only in %s" % (t, what_b))
            elif ta[t][0] != tb[t][0]:
                lines.append("%s: columns %s in %s, %s in %s"
                             % (t, ta[t][0], what_a, tb[t][0], what_b))
            elif ta[t][1] != tb[t][1]:
                only_a = sorted(map(_show_row, (ta[t][1] - tb[t][1]).elements()))
                only_b = sorted(map(_show_row, (tb[t][1] - ta[t][1]).elements()))
                lines.append("%s: %d rows only in %s, %d only in %s"
                             % (t, len(only_a), what_a, len(only_b), what_b))
                lines += ["  only in %s: %s" % (what_a, r) for r in only_a[:limit]]
                lines += ["  only in %s: %s" % (what_b, r) for r in only_b[:limit]]
        if ca != cb:
            lines.append("pgmirror_columns differ: %s in %s, %s in %s"
                         % (sorted(set(ca) - set(cb))[:5], what_a,
                            sorted(set(cb) - set(ca))[:5], what_b))
        if ra != rb:
            lines.append("pgmirror_tables differ: %s in %s, %s in %s"
                         % (sorted(set(ra) - set(rb))[:5], what_a,
                            sorted(set(rb) - set(ra))[:5], what_b))
        return lines

    def assert_device_equals_hub(self, dev, hub, timeout=60, feed=None):
        """The device's mirror at dev, brought up to the feed (--once runs of
        a device, again while the hub's feed is behind its mirror), equals the
        hub's at hub: the same tables, columns and rows (with storage
        classes), and the same confirmed_lsn."""
        feed = feed or hub + ".feed"
        last = {}

        def step():
            self.device(dev, feed)
            h = self.mirror_contents(hub)
            hub_lsn = self.mirror_lsn(hub)
            d = self.mirror_contents(dev)
            dev_lsn = self.mirror_lsn(dev)
            last["diff"] = self.diff_contents(h, d, "the hub", "the device")
            last["at"] = (format_lsn(hub_lsn), format_lsn(dev_lsn))
            if not last["diff"] and dev_lsn == hub_lsn:
                return sum(sum(r.values()) for _, r in h[0].values()), None
            time.sleep(0.5)
            return None, (hub_lsn, dev_lsn)  # moving while the hub or the device moves

        return wait_moving(
            "the device replaying feed %s to equal its hub" % feed, step, quiet=timeout,
            detail=lambda: "; hub at %s, device at %s:\n%s" % (
                last["at"] + ("\n".join(last["diff"]) or "(the same rows)",)))

    def checked(self, path):
        """A test's own check of the mirror at path (its rows against the
        source's, as it compares them) passed: in the replay mode its
        device is compared with it too (replay_check())."""
        if REPLAY:
            self.replay_check(path)

    def replay_check(self, path):
        """PGMIRROR_FEED_REPLAY, after each check of a mirror against the
        source (assert_mirror_equals_source(), a --verify that exits 0):
        the feed of the mirror at path (the one its
        pgmirror_feed row names: MIRROR.feed, or a test's own --feed),
        replayed into its device (MIRROR.device.db), equals the mirror (see
        REPLAY). A mirror whose first copy has not finished has no feed
        yet (docs/feed.md), and a device's mirror is checked by its test."""
        con = self.mirror_connect(path)
        try:
            feed = con.execute("SELECT role, location FROM pgmirror_feed").fetchall()
        finally:
            con.close()
        if not feed and not self.mirror_state(path)["initial_copy_done"]:
            log("not replayed: %s, whose first copy has not finished (no feed yet)"
                % os.path.basename(path))
            return
        if not feed:
            fail("replay mode: mirror %s writes no feed (no row in pgmirror_feed)" % path)
        if feed[0][0] != "hub":
            return
        feed = os.path.join(self.tmpdir, feed[0][1])
        rows = self.assert_device_equals_hub(path + ".device.db", path, feed=feed)
        log("replayed: %s into a device, %d rows equal" % (os.path.basename(path), rows))

    def once(self, path, slot, pubs, *extra, first=False, expect=0,
             timeout=60, env=None):
        """pgmirror --once; first=True adds --no-initial-copy.  Checks the
        exit code and that the slot is not ahead of the mirror."""
        extra = list(extra) + ["--once"]
        if first:
            extra.append("--no-initial-copy")
        rc, out, err = self.run(self.mirror_args(path, slot, pubs, *extra),
                                timeout=timeout, env=env)
        if rc != expect:
            fail("pgmirror %s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s"
                 % (" ".join(extra), rc, expect, out, err))
        if rc == 0:
            self.check_slot_not_ahead(path, slot)
        return rc, out, err

    def start_follow(self, path, slot, pubs, *extra, first=False, tag=None):
        """pgmirror without --once, in the background."""
        extra = list(extra)
        if first:
            extra.append("--no-initial-copy")
        return self.start(self.mirror_args(path, slot, pubs, *extra), tag=tag)

    # -- mirror helpers ----------------------------------------------------

    def mirror_connect(self, path, **kw):
        check(os.path.exists(path), "mirror file %s does not exist" % path)
        return sqlite3.connect(path, timeout=30, **kw)

    def mirror_query(self, path, q, params=()):
        con = self.mirror_connect(path)
        try:
            return con.execute(q, params).fetchall()
        finally:
            con.close()

    def mirror_state(self, path):
        con = self.mirror_connect(path)
        try:
            cur = con.execute("SELECT * FROM pgmirror_state")
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
        finally:
            con.close()
        check(len(rows) == 1, "pgmirror_state has %d rows, expected 1"
              % len(rows))
        return dict(zip(names, rows[0]))

    def mirror_lsn(self, path):
        return parse_lsn(self.mirror_state(path)["confirmed_lsn"])

    def mirror_tables(self, path):
        return [r[0] for r in self.mirror_query(
            path, "SELECT name FROM sqlite_master WHERE type='table' "
                  "AND name NOT LIKE 'pgmirror\\_%' ESCAPE '\\' "
                  "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY 1")]

    def mirror_mark(self, path):
        """What moves while a mirror advances: its confirmed_lsn and the
        rows its copies stored (a copy in parts stores rows long before
        the LSN moves); None while the file or its tables are not there."""
        try:
            con = self.mirror_connect(path)
        except Failure:
            return None
        try:
            con.execute("BEGIN")
            lsn = con.execute("SELECT confirmed_lsn FROM pgmirror_state").fetchall()
            rows = con.execute("SELECT sum(copy_rows) FROM pgmirror_tables").fetchall()
            return (lsn[0][0] if lsn else None, rows[0][0])
        except sqlite3.Error:
            return None
        finally:
            con.close()

    def wait_for_mirror(self, path, lsn, timeout=60, proc=None):
        """Poll until the mirror's confirmed_lsn >= lsn; fail once it stood
        still (mirror_mark) for timeout seconds, or if proc (when given)
        exits meanwhile, with its stderr."""
        lsn = parse_lsn(lsn)

        def step():
            if proc is not None and proc.poll() is not None:
                fail("pgmirror exited %s while waiting for %s\nstderr:\n%s"
                     % (proc.poll(), format_lsn(lsn), proc.stderr()))
            mark = self.mirror_mark(path) if os.path.exists(path) else None
            if mark is not None and mark[0] is not None and parse_lsn(mark[0]) >= lsn:
                return parse_lsn(mark[0]), mark
            return None, mark

        return wait_moving("the mirror's confirmed_lsn to reach %s" % format_lsn(lsn),
                           step, quiet=timeout,
                           detail=lambda: "\nstderr:\n" + proc.stderr() if proc else "")

    def catch_up(self, path, marker="pgm_marker", timeout=60, proc=None):
        """Wait until a running pgmirror has applied everything committed so
        far, and has itself applied something: take the current LSN, commit
        one row to `marker` (a published table, see create_marker), then
        wait until the mirror holds that row and its confirmed_lsn has
        reached the LSN.  (The marker commit lies past the LSN, so this
        works whether or not pgmirror also advances on keepalives.)  The
        wait goes on while the mirror moves (wait_for_mirror); timeout is
        how long it may stand still."""
        lsn = self.source_lsn()
        mid = self.sql1("INSERT INTO %s DEFAULT VALUES RETURNING id"
                        % qident(marker))

        def step():
            if proc is not None and proc.poll() is not None:
                fail("pgmirror exited %s while waiting for marker %d\n"
                     "stderr:\n%s" % (proc.poll(), mid, proc.stderr()))
            try:
                if self.mirror_query(path, "SELECT 1 FROM %s WHERE id = ?"
                                     % qident(marker), (mid,)):
                    return True, None
            except (sqlite3.Error, Failure):
                pass
            return None, self.mirror_mark(path) if os.path.exists(path) else None

        wait_moving("marker row %d to reach the mirror" % mid, step, quiet=timeout,
                    detail=lambda: "\nstderr:\n" + proc.stderr() if proc else "")
        return self.wait_for_mirror(path, lsn, timeout=timeout, proc=proc)

    def make_keyless_tables(self, prefix, count, rows, mod, text):
        """Tables PREFIX1 .. PREFIXcount (n int, v text), REPLICA IDENTITY
        FULL, each with `rows` rows: n = g % mod (so rows repeat), v =
        text (an SQL expression)."""
        self.sql("""
            DO $$ BEGIN
              FOR i IN 1..%d LOOP
                EXECUTE format('CREATE TABLE %s%%s (n int, v text)', i);
                EXECUTE format('ALTER TABLE %s%%s REPLICA IDENTITY FULL', i);
                EXECUTE format('INSERT INTO %s%%s SELECT g %%%% %d, %s '
                               'FROM generate_series(1, %d) g', i);
              END LOOP;
            END $$;
        """ % (count, prefix, prefix, prefix, mod, text.replace("'", "''"), rows))

    def create_marker(self, pub, marker="pgm_marker"):
        self.sql("CREATE TABLE %s (id bigserial PRIMARY KEY)" % qident(marker))
        self.sql("ALTER PUBLICATION %s ADD TABLE %s" % (qident(pub),
                                                         qident(marker)))

    def check_slot_not_ahead(self, path, slot):
        """The slot is never ahead of the mirror."""
        info = self.slot_info(slot)
        if info is None or info["confirmed_flush_lsn"] is None:
            return
        if not os.path.exists(path):
            return
        try:
            mlsn = self.mirror_lsn(path)
        except (sqlite3.Error, Failure):
            return
        slsn = parse_lsn(info["confirmed_flush_lsn"])
        check(slsn <= mlsn, "slot %s confirmed_flush_lsn %s is ahead of the "
              "mirror's confirmed_lsn %s" % (slot, info["confirmed_flush_lsn"],
                                             format_lsn(mlsn)))

    # -- the comparison ----------------------------------------------------

    def source_columns(self, qualified):
        """[{name, typname, typmod, is_array}] in attnum order."""
        rows = self.sql(
            "SELECT a.attname, "
            "  CASE WHEN t.typcategory = 'A' THEN et.typname ELSE t.typname END,"
            "  a.atttypmod, t.typcategory = 'A', "
            "  coalesce(bt.typname, t.typname) "
            "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            "LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typcategory = 'A' "
            "LEFT JOIN pg_type bt ON bt.oid = t.typbasetype AND t.typtype = 'd' "
            "WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
            "AND NOT a.attisdropped ORDER BY a.attnum", qtable(qualified))
        check(rows, "source table %s has no columns / does not exist"
              % qualified)
        return [dict(name=r[0], typname=r[1], typmod=r[2], is_array=r[3])
                for r in rows]

    def raw_cursor(self):
        """A cursor on a connection where every type comes back as the
        server's own text output (not ::text casts: char(n) keeps its
        padding, inet its form, as pgoutput sends them)."""
        if getattr(self, "_raw", None) is None:
            self._raw = self.connect()
        oids = tuple(r[0] for r in self.sql("SELECT oid::int FROM pg_type"))
        raw = psycopg2.extensions.new_type(oids, "PGM_RAW", lambda v, c: v)
        psycopg2.extensions.register_type(raw, self._raw)
        return self._raw.cursor()

    def source_cells(self, qualified, cols):
        exprs = []
        for c in cols:
            q = qident(c["name"])
            if c["is_array"]:
                exprs.append("to_json(%s)" % q)
            elif c["typname"] == "timestamptz":
                exprs.append("(%s AT TIME ZONE 'UTC')" % q)
            else:
                exprs.append(q)
        cur = self.raw_cursor()
        cur.execute("SELECT %s FROM %s" % (", ".join(exprs), qtable(qualified)))
        out = []
        for r in cur.fetchall():
            cells = []
            for c, v in zip(cols, r):
                if c["is_array"]:
                    cells.append(("null", None) if v is None else
                                 ("json", _json_norm(_parse_json_text(v))))
                else:
                    cells.append(expected_cell(c, v, None))
            out.append(tuple(cells))
        return out

    def mirror_cells(self, path, table, cols):
        con = self.mirror_connect(path)
        try:
            q = "SELECT %s FROM %s" % (", ".join(qident(c["name"]) for c in cols),
                                       qident(table))
            rows = con.execute(q).fetchall()
        finally:
            con.close()
        return [tuple(mirror_cell(c, v) for c, v in zip(cols, r)) for r in rows]

    def mirror_columns(self, path, table):
        return [r[1] for r in self.mirror_query(
            path, "PRAGMA table_info(%s)" % qident(table))]

    def assert_mirror_equals_source(self, path, *tables, limit=20):
        """Each source table (schema-qualified or public) equals its mirror
        table: same column names in source order, same multiset of rows,
        values in the contract's form and SQLite storage class."""
        problems = []
        for qualified in tables:
            mt = mirror_table_name(qualified)
            cols = self.source_columns(qualified)
            names = [c["name"] for c in cols]
            mnames = self.mirror_columns(path, mt)
            if not mnames:
                problems.append("%s: mirror table %s does not exist (mirror "
                                "has %s)" % (qualified, mt,
                                             self.mirror_tables(path)))
                continue
            if mnames != names:
                problems.append("%s: mirror table %s has columns %s, source %s"
                                % (qualified, mt, mnames, names))
                continue
            src = collections.Counter(self.source_cells(qualified, cols))
            mir = collections.Counter(self.mirror_cells(path, mt, cols))
            if src == mir:
                continue
            only_src = list((src - mir).elements())
            only_mir = list((mir - src).elements())
            lines = ["%s -> %s: source %d rows, mirror %d rows; %d only in "
                     "source, %d only in mirror; columns %s"
                     % (qualified, mt, sum(src.values()), sum(mir.values()),
                        len(only_src), len(only_mir), names)]
            for title, rows in (("only in source", only_src),
                                ("only in mirror", only_mir)):
                shown = sorted((_show_row(r) for r in rows))[:limit]
                for s in shown:
                    lines.append("  %s: %s" % (title, s))
                if len(rows) > limit:
                    lines.append("  %s: ... %d more" % (title, len(rows) - limit))
            problems.append("\n".join(lines))
        if problems:
            fail("mirror differs from source:\n" + "\n".join(problems))
        if REPLAY:
            self.replay_check(path)

    def mirror_snapshot(self, path):
        """All user tables of the mirror, as {table: Counter(rows)} (with
        storage classes), to check that "nothing changed"."""
        snap = {}
        con = self.mirror_connect(path)
        try:
            for (t,) in con.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' AND "
                    "name NOT LIKE 'pgmirror\\_%' ESCAPE '\\' AND "
                    "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").fetchall():
                rows = con.execute("SELECT * FROM %s" % qident(t)).fetchall()
                snap[t] = collections.Counter(tuple(cell(v) for v in r)
                                              for r in rows)
        finally:
            con.close()
        return snap


# ---------------------------------------------------------- background ----

class Soft:
    """Collects failures so that one run reports all of them: soft(what, fn,
    *args) runs a check function, soft.check(cond, msg) a condition (both
    return whether it held), soft.notes are logged, and soft.done() fails
    with the whole list."""

    def __init__(self):
        self.problems = []
        self.notes = []

    def __call__(self, what, fn, *args, **kw):
        try:
            fn(*args, **kw)
            return True
        except Failure as e:
            log("FAILED: %s: %s" % (what, e))
            self.problems.append("%s: %s" % (what, e))
            return False

    def check(self, cond, msg):
        if not cond:
            log("FAILED: %s" % msg)
            self.problems.append(msg)
        return cond

    def done(self):
        for n in self.notes:
            log("note: " + n)
        if self.problems:
            fail("%d problem(s):\n- %s" % (len(self.problems), "\n- ".join(self.problems)))


class Workload(threading.Thread):
    """Run fn(conn, i) for i = 0, 1, ... on its own connection until stop()
    (or n iterations).  Errors are kept and re-raised by stop()."""

    def __init__(self, ctx, fn, n=None, autocommit=False):
        super().__init__(daemon=True)
        self.ctx, self.fn, self.n = ctx, fn, n
        self.conn = ctx.connect(autocommit=autocommit)
        self._halt = threading.Event()
        self.error = None
        self.count = 0

    def run(self):
        try:
            i = 0
            while not self._halt.is_set() and (self.n is None or i < self.n):
                t0 = time.monotonic()
                self.fn(self.conn, i)
                if SLOW > 1:  # pacing for a slow binary, not a wait
                    self._halt.wait((SLOW - 1) * (time.monotonic() - t0))
                i += 1
                self.count = i
        except Exception:  # noqa: BLE001 - reported by stop()
            self.error = traceback.format_exc()

    def wait_count(self, n, timeout=120):
        """Wait until fn has run n times (the workload is flowing); fails
        once it stood still for timeout seconds."""
        def step():
            if self.count >= n:
                return True, None
            check(self.is_alive(), "workload stopped: %s" % self.error)
            return None, self.count

        wait_moving("the workload to run %d times" % n, step, quiet=timeout, interval=0.01)

    def stop(self, timeout=120):
        self._halt.set()
        self.join(timeout)
        check(not self.is_alive(), "workload did not stop")
        self.conn.close()
        if self.error:
            fail("workload failed:\n" + self.error)
        return self.count


# ---------------------------------------------------------------- main ----

def _cluster_lock(exclusive):
    """Tests share the server (make -j check); one that changes server-wide
    settings (exclusive) runs alone: it takes this lock exclusively, every
    other test shares it."""
    import fcntl
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", "%s_%s" % (os.environ.get("PGHOST", ""),
                                                    os.environ.get("PGPORT", "")))
    f = open(os.path.join(tempfile.gettempdir(), "pgmirror-tests-%s.lock" % key), "a")
    fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    return f



def run_parts(ctx, parts, *args):
    """Runs a test's parts (name -> function(ctx, *args)) in order, each
    timed in the log; PARTS=a,b in the environment runs only those."""
    only = [p for p in os.environ.get("PARTS", "").split(",") if p]
    check(set(only) <= set(parts), "unknown PARTS %s (known: %s)"
          % (sorted(set(only) - set(parts)), ", ".join(parts)))
    for name, part in parts.items():
        if not only or name in only:
            t0 = time.time()
            part(ctx, *args)
            log("%s: %.1f s" % (name, time.time() - t0))

def main(test, name=None, exclusive=False, encoding=None, replay=True):
    """Run test(ctx) and exit 0 (pass) or 1 (fail).  Never 77.
    exclusive: the test changes server-wide settings and must run alone.
    encoding: the test database's server encoding (default: the cluster's).
    replay=False: the replay mode (REPLAY) leaves the test as it is: it runs
    pgmirror outside ctx.run and ctx.start (on a terminal), or its mirrors
    are not pgmirror's (made by hand); the test says why."""
    global REPLAY
    REPLAY = REPLAY and replay
    if name is None:
        base = os.path.basename(sys.argv[0])
        name = re.sub(r"^test_|\.py$", "", base)
    name = re.sub(r"[^a-z0-9_]", "_", name.lower())
    timeout = int(int(os.environ.get("PGMIRROR_TEST_TIMEOUT", "300")) * SLOW)

    def on_alarm(signum, frame):
        raise Failure("test did not finish within %ss%s" % (
            timeout, " (waiting for %s)" % _waiting[-1] if _waiting else ""))

    signal.signal(signal.SIGALRM, on_alarm)
    lock = _cluster_lock(exclusive)  # noqa: F841 - held until exit
    signal.alarm(timeout)
    ctx = None
    rc = 1
    t0 = time.time()
    try:
        ctx = TestContext(name)
        ctx.setup(encoding=encoding)
        test(ctx)
        rc = 0
    except Failure as e:
        log("FAIL: %s" % e)
    except Exception:  # noqa: BLE001
        log("FAIL: unexpected error:\n" + traceback.format_exc())
    finally:
        signal.alarm(0)
        if ctx is not None:
            ctx.failed = rc != 0
            try:
                ctx.cleanup()
            except Exception:  # noqa: BLE001
                log("warning: cleanup failed:\n" + traceback.format_exc())
    log("%s: %s (%.1fs)" % ("PASS" if rc == 0 else "FAIL", name,
                            time.time() - t0))
    sys.exit(rc)

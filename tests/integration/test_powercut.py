"""Power cuts in every phase of a mirror's life (tests/fault/powercut.c,
tests/integration/powercut.py): a run of pgmirror is cut at a sync, a
rename, a removal, a create or a directory sync (the Nth of its kind,
before or after it; the kind and N drawn with a fixed seed), the mirror's
directory is put back to what the cut leaves, and then: the file passes
the integrity check as the cut left it, the slot is not ahead of it, and
the next run ends with the mirror equal to the source, row by row, with no
heal. Phases: the first copy (and with --no-initial-copy), a resumed copy,
streaming under load, a table that joins, --resync, a heal, a lost slot's
rebuild, the daily check, and the last commits of a --once run.

The same cuts with fsync() and fdatasync() made no-ops (a disk that lies
about its syncs, PGMIRROR_CUT_NOSYNC), drawn in each run's second half
(once the server has been told of work), must find loss: the test fails
if none of them does, so it can see what it looks for.

PGMIRROR_POWERCUT_CUTS (cuts per phase), PGMIRROR_POWERCUT_NOSYNC (cuts
with no-op syncs), PGMIRROR_SEED and PARTS (phases) size it; with
PGMIRROR_POWERCUT_SOAK=1 it goes on after a failure and reports them all
with a command that reproduces each (bench/powercut.sh)."""

import collections
import os
import random
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
from powercut import PowerCut  # noqa: E402

CUTS = int(os.environ.get("PGMIRROR_POWERCUT_CUTS", "12"))
NOSYNC_CUTS = int(os.environ.get("PGMIRROR_POWERCUT_NOSYNC", "16"))
SEED = int(os.environ.get("PGMIRROR_SEED", "34"))
SOAK = os.environ.get("PGMIRROR_POWERCUT_SOAK") == "1"
TABLES = ["t1", "logs", "acc", "pgm_marker"]
KINDS = ["any", "any", "sync", "sync", "dirsync", "rename", "unlink", "create"]


def workload(conn, i):
    cur = conn.cursor()
    cur.execute("INSERT INTO logs VALUES (%s, 'w')", (i,))
    cur.execute("UPDATE acc SET n = n + 1 WHERE id = %s", (i % 20,))
    if i % 10 == 3:
        cur.execute("INSERT INTO t1 SELECT 100000 + %s * 100 + g, md5(g::text) "
                    "FROM generate_series(1, 50) g", (i,))
    conn.commit()


class Soak:
    def __init__(self, ctx, pc, slot):
        self.ctx, self.pc, self.slot, self.path = ctx, pc, slot, pc.path()
        self.rnd = random.Random(SEED)
        self.cuts = collections.Counter()      # phase -> cuts made
        self.missed = collections.Counter()    # phase -> runs that ended before the event
        self.failures = []                     # (phase, index, env, problems)
        self.found = 0                         # nosync: cuts that found loss
        self.nosync_cuts = 0
        self.nosync = False                    # syncs are no-ops (PGMIRROR_CUT_NOSYNC)
        self.joined = 0
        self.wl_round = 0
        self.known = {}                        # (phase, kind) -> events a run had

    # -- states a phase starts from ----------------------------------------

    def fresh(self):
        """No mirror, no slot."""
        self.ctx.wait_slot_inactive(self.slot)
        self.ctx._drop_slot(self.slot)
        for name in self.pc.files():
            p = os.path.join(self.pc.dir, name)
            if os.path.isdir(p):
                shutil.rmtree(p)  # the replay mode's feed, MIRROR.feed
            else:
                os.unlink(p)
        self.pc.settle()

    def mirror(self):
        """A sound mirror, equal to the source (made again if the last cut
        left it otherwise, as after a failure)."""
        rc, out, err = self.ctx.run(self.args(), timeout=120)
        if rc != 0 or not os.path.exists(self.path):
            self.fresh()
            self.ctx.once(self.path, self.slot, "pub", timeout=120)
        self.pc.settle()

    def args(self, *extra):
        return self.ctx.mirror_args(self.path, self.slot, "pub", "--once", *extra)

    # -- one cut -------------------------------------------------------------

    def cut(self, phase, i, args, kind=None, nth=None, after=None,
            during=None, heal=False, compare=True):
        """Runs args under the shim, cut at the nth event of kind (drawn when
        not given); then checks what is left. during: a function run while
        pgmirror runs (a workload), returning a function that ends it."""
        ctx, pc, nosync = self.ctx, self.pc, self.nosync
        if kind is None:   # a kind this phase has events of (as far as known)
            kinds = [k for k in KINDS if self.known.get((phase, k), 1) > 0]
            kind = self.rnd.choice(kinds)
        after = self.rnd.random() < 0.5 if after is None else after
        if nth is None:
            top = self.known.get((phase, kind), {"any": 400, "sync": 200}.get(kind, 20))
            # syncs as no-ops: in a run's second half, once the server has
            # been told of work (a cut before that loses nothing it knows)
            nth = self.rnd.randint(max(1, top // 2) if nosync else 1, top)
        count = os.path.join(ctx.tmpdir, "pc.count")
        env = pc.env(op=kind, nth=nth, after=after, nosync=nosync, count=count)
        shown = " ".join("%s=%s" % (k, v) for k, v in sorted(env.items())
                         if v is not None and k.startswith("PGMIRROR_CUT_")
                         and k not in ("PGMIRROR_CUT_DIR", "PGMIRROR_CUT_SHADOW",
                                       "PGMIRROR_CUT_COUNT"))
        end = during() if during else None
        rc, out, err = ctx.run(args, env=env, timeout=180)
        if end:
            end()
        if "powercut: cut" not in err and rc == 0:
            self.missed[phase] += 1
            with open(count) as f:   # how many there are: drawn among them next time
                seen = {k: int(n) for k, n in (line.split() for line in f)}
            seen["any"] = sum(seen.values())
            for k, n in seen.items():
                self.known[(phase, k)] = n
            self.pc.settle()
            return True
        if "powercut: cut" not in err:   # what an earlier cut left stopped it
            problems = ["a run under the shim exited %d before its cut:\n%s" % (rc, err)]
        else:
            problems = self.after_cut(phase, err, heal, compare)
        if nosync:
            self.nosync_cuts += 1
        else:
            self.cuts[phase] += 1
        harness.log("%s %d: %s: %s" % (phase, i + 1, shown.replace("PGMIRROR_CUT_", ""),
                                       "FOUND" if problems else "ok"))
        pc.settle()
        if nosync:
            self.found += bool(problems)
            if problems:
                self.fresh()
            return True
        if problems:
            cmd = ("PGMIRROR_SEED=%d PGMIRROR_POWERCUT_CUTS=%d PARTS=%s "
                   "PGMIRROR_POWERCUT_SOAK=1 pg_virtualenv -t -o wal_level=logical "
                   "-o max_replication_slots=20 -o max_wal_senders=20 make check "
                   "TESTS=tests/integration/test_powercut.py  # cut %d: %s"
                   % (SEED, i + 1, phase, i + 1, shown))
            self.failures.append((phase, i, shown, problems, cmd))
            harness.log("FAILURE in %s, cut %d (%s):\n  %s\n  to reproduce: %s"
                        % (phase, i + 1, shown, "\n  ".join(problems), cmd))
            check(SOAK, "power cut in %s (%s) lost or damaged the mirror:\n%s"
                  % (phase, shown, "\n".join(problems)))
            self.fresh()
        return not problems

    def after_cut(self, phase, err, heal, compare):
        """What the cut left, and the next run: the problems found."""
        ctx, pc = self.ctx, self.pc
        ctx.wait_slot_inactive(self.slot)
        pc.rewind()
        problems = pc.problems_after_cut(self.slot, heal_allowed=heal)
        rc2, out2, err2 = ctx.run(self.args(), timeout=180)
        if os.environ.get("PGMIRROR_POWERCUT_DEBUG"):
            harness.log("the next run exited %d:\n%s" % (rc2, err2))
        if rc2 != 0:
            problems.append("the next run exited %d:\n%s" % (rc2, err2))
        elif "damaged" in err2 and not heal:
            problems.append("the next run found the mirror damaged:\n%s" % err2)
        elif "damaged" in err2 and "has been rebuilt" in err:
            problems.append("a heal that had finished (its new file in place) was undone by "
                            "the cut, and the next run healed again:\n%s" % err2)
        else:
            try:
                ctx.check_slot_not_ahead(self.path, self.slot)
                if compare:
                    ctx.assert_mirror_equals_source(self.path, *TABLES)
                res = pc.integrity()
                check(res == ["ok"], "integrity_check after the next run: %s" % res)
            except harness.Failure as e:
                problems.append(str(e))
        return problems

    # -- the phases ------------------------------------------------------------

    def first_copy(self, i):
        self.fresh()
        self.cut("first_copy", i, self.args())

    def first_no_copy(self, i):
        """--no-initial-copy: the tables are made empty; no slot is left
        without the file that owns it, and the next run goes on."""
        self.fresh()
        args = self.args("--no-initial-copy")
        self.cut("first_no_copy", i, args, compare=False)
        if os.path.exists(self.path):   # rows since then reach it
            self.ctx.sql("INSERT INTO pgm_marker DEFAULT VALUES")
            self.ctx.once(self.path, self.slot, "pub", timeout=120)
            got = self.ctx.mirror_query(self.path, "SELECT count(*) FROM pgm_marker")[0][0]
            check(got >= 1, "first_no_copy: a row inserted after the cut did not come")
            self.pc.settle()
        self.fresh()
        self.mirror()

    def resumed_copy(self, i):
        """A first copy cut in its middle, then its resume cut again; t1's
        copy goes in parts of 500 rows, so the cuts fall between and in
        the parts of a copy that resumes inside the table."""
        self.fresh()
        os.environ["PGMIRROR_TEST_PART_ROWS"] = "500"
        try:
            env = self.pc.env(op="sync", nth=self.rnd.randint(3, 12), match="-wal")
            self.ctx.run(self.args(), env=env, timeout=120)
            self.ctx.wait_slot_inactive(self.slot)
            self.pc.rewind()
            self.cut("resumed_copy", i, self.args())
        finally:
            del os.environ["PGMIRROR_TEST_PART_ROWS"]

    def streaming(self, i):
        self.mirror()
        self.wl_round += 1
        base = self.wl_round * 1000

        def during():
            w = harness.Workload(self.ctx, lambda c, k: workload(c, base + k), n=150)
            w.start()
            w.wait_count(20)
            return w.stop

        self.cut("streaming", i, self.args(), during=during)

    def table_join(self, i):
        """A table joins (and the one before it leaves: the source drops it)."""
        if self.joined:
            old = "j%d" % self.joined
            self.ctx.sql("DROP TABLE %s" % old)
            TABLES.remove(old)
        self.mirror()
        self.joined += 1
        t = "j%d" % self.joined
        self.ctx.sql("CREATE TABLE %s (id int PRIMARY KEY, v text); "
                     "INSERT INTO %s SELECT g, md5(g::text) FROM generate_series(1, 2000) g; "
                     "ALTER PUBLICATION pub ADD TABLE %s" % (t, t, t))
        TABLES.append(t)
        self.cut("table_join", i, self.args())

    def resync(self, i):
        self.mirror()
        self.cut("resync", i, self.args("--resync=t1"))

    def heal(self, i):
        self.mirror()
        con = sqlite3.connect(self.path)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("UPDATE pgmirror_state SET last_check_time = datetime('now', '-2 days')")
        con.commit()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        leaves = [r[0] for r in con.execute(
            "SELECT pageno FROM dbstat WHERE name = 't1' AND pagetype = 'leaf' ORDER BY 1")]
        ps = con.execute("PRAGMA page_size").fetchone()[0]
        con.close()
        with open(self.path, "r+b") as f:
            f.seek((leaves[len(leaves) // 2] - 1) * ps)
            f.write(b"\xff" * ps)
        self.pc.settle()
        self.cut("heal", i, self.args(), heal=True)
        for name in self.pc.files():
            if name.endswith(".damaged") or ".damaged-" in name:
                os.unlink(os.path.join(self.pc.dir, name))
        self.pc.settle()

    def lost_slot(self, i):
        self.mirror()
        self.ctx._drop_slot(self.slot)
        self.cut("lost_slot", i, self.args())

    def daily_check(self, i):
        self.mirror()
        con = sqlite3.connect(self.path)
        con.execute("UPDATE pgmirror_state SET last_check_time = datetime('now', '-2 days')")
        con.commit()
        con.close()
        self.pc.settle()
        self.cut("daily_check", i, self.args())

    def claim_fails(self, i):
        """A first run whose commits fail (EIO at the ith -wal sync: the
        schema, the intent, the claim, a table), with and without a copy:
        it fails, and leaves no slot without the file that owns it; the
        next run goes on by itself."""
        for extra in ([], ["--no-initial-copy"]):
            self.fresh()
            env = self.pc.env(op="sync", match="-wal", nth=i + 1, eio=True)
            rc, out, err = self.ctx.run(self.args(*extra), env=env, timeout=120)
            if "powercut: EIO" not in err:
                continue
            self.cuts["claim_fails"] += 1
            self.ctx.wait_slot_inactive(self.slot)
            self.pc.settle()
            slot = self.ctx.slot_info(self.slot)
            check(slot is None or os.path.exists(self.path),
                  "claim_fails: a first run%s whose commit %d failed left slot %s and no "
                  "mirror file:\n%s" % (" ".join([""] + extra), i + 1, self.slot, err))
            rc, out, err2 = self.ctx.run(self.args(*extra), timeout=120)
            check(rc == 0, "claim_fails: after a first run%s whose commit %d failed:\n%s\n"
                  "the next run exited %d:\n%s" % (" ".join([""] + extra), i + 1, err, rc,
                                                   err2))
            if not extra:
                self.ctx.assert_mirror_equals_source(self.path, *TABLES)
            self.pc.settle()
        self.fresh()
        self.mirror()

    def cron_exit(self, i):
        """The last commits of a --once run: the kth -wal sync from its end."""
        self.mirror()
        self.ctx.sql("INSERT INTO logs VALUES (-1, 'cron'); UPDATE acc SET n = n + 1")
        count = os.path.join(self.ctx.tmpdir, "pc.count")
        self.ctx.run(self.args(), env=self.pc.env(op="sync", match="-wal", count=count))
        self.pc.settle()
        with open(count) as f:
            total = dict(line.split() for line in f)["sync"]
        self.ctx.sql("INSERT INTO logs VALUES (-1, 'cron'); UPDATE acc SET n = n + 1")
        nth = max(1, int(total) - self.rnd.randint(0, 2))
        self.cut("cron_exit", i, self.args(), kind="sync", nth=nth)


def test(ctx):
    ctx.sql("""
        CREATE TABLE t1 (id int PRIMARY KEY, v text);
        INSERT INTO t1 SELECT g, md5(g::text) FROM generate_series(1, 4000) g;
        CREATE TABLE logs (tx int, note text);              -- no key
        ALTER TABLE logs REPLICA IDENTITY FULL;
        CREATE TABLE acc (id int PRIMARY KEY, n int);
        INSERT INTO acc SELECT g, 0 FROM generate_series(0, 19) g;
        CREATE PUBLICATION pub FOR TABLE t1, logs, acc;
    """)
    ctx.create_marker("pub")
    pc = PowerCut(ctx)
    soak = Soak(ctx, pc, ctx.slot())
    phases = {"first_copy": soak.first_copy, "first_no_copy": soak.first_no_copy,
              "resumed_copy": soak.resumed_copy, "streaming": soak.streaming,
              "table_join": soak.table_join, "resync": soak.resync, "heal": soak.heal,
              "lost_slot": soak.lost_slot, "daily_check": soak.daily_check,
              "cron_exit": soak.cron_exit, "claim_fails": soak.claim_fails}

    def run_phase(name):
        def part(ctx):
            # a draw of each phase's own: PARTS=name draws its cuts again
            soak.rnd = random.Random("%d:%s" % (SEED, name))
            # claim_fails goes through a first run's -wal syncs in order
            for i in range(min(CUTS, 8) if name == "claim_fails" else CUTS):
                phases[name](i)
        return part

    parts = {name: run_phase(name) for name in phases}

    def wal_reset_note(ctx):
        """-v names SQLite's WAL-reset bug when the SQLite in use has it."""
        soak.mirror()
        rc, out, err = ctx.run(["-V"])
        v = tuple(int(x) for x in out.split("SQLite ")[1].split()[0].split("."))
        bug = ((3, 7, 0) <= v < (3, 51, 3) and not (v[:2] == (3, 44) and v >= (3, 44, 6))
               and not (v[:2] == (3, 50) and v >= (3, 50, 7)))
        rc, out, err = ctx.run(soak.args("-v"), timeout=120)
        check(rc == 0 and ("WAL-reset bug" in err) == bug,
              "SQLite %s (bug: %s), but -v said:\n%s" % (v, bug, err))
        soak.pc.settle()

    parts["wal_reset_note"] = wal_reset_note

    def nosync(ctx):
        """The same cuts, on a disk that lies about its syncs."""
        soak.nosync = True
        soak.rnd = random.Random("%d:nosync" % SEED)
        some = [soak.first_copy, soak.streaming, soak.table_join, soak.lost_slot,
                soak.cron_exit]
        for i in range(NOSYNC_CUTS):
            some[i % len(some)](i)
        soak.nosync = False

    if NOSYNC_CUTS > 0:
        parts["nosync"] = nosync
    harness.run_parts(ctx, parts)
    total = sum(soak.cuts.values())
    for name in phases:
        if soak.cuts[name] or soak.missed[name]:
            harness.log("%-14s %4d cuts (%d runs ended before their event)"
                        % (name, soak.cuts[name], soak.missed[name]))
    harness.log("%d cuts, %d failures" % (total, len(soak.failures)))
    for phase, i, shown, problems, cmd in soak.failures:
        harness.log("failure: %s cut %d: %s\n  %s" % (phase, i + 1, "; ".join(problems), cmd))
    check(not soak.failures, "%d of %d cuts lost or damaged the mirror"
          % (len(soak.failures), total))
    if "nosync" in parts and (not os.environ.get("PARTS") or
                              "nosync" in os.environ["PARTS"]):
        harness.log("syncs as no-ops: %d of %d cuts found loss or damage"
                    % (soak.found, soak.nosync_cuts))
        check(soak.found > 0, "with fsync and fdatasync as no-ops, none of %d cuts found "
              "loss: the power-cut layer cannot see what it looks for" % soak.nosync_cuts)


harness.main(test, exclusive=False)

"""The feed's order of durability (docs/feed.md, "When the hub writes
what"; DESIGN.md invariant 13) under kill -9 at every step of a hub's
feed, and under power cuts that keep only what was synced, names included.

What a mirror transaction carries is durable in the feed before it commits
in the mirror; the manifest lists only what is durable, named and
committed; the hub confirms to PostgreSQL only what the manifest lists; a
restarted hub lists what its mirror committed and drops the rest.

kill9: a hub (--once, --feed in a directory under the powercut shim,
tests/fault/powercut.c, used without a rewind: kill -9 at one event) is
killed at each step of its feed's life, chosen by event, not by time:
a new epoch's snapshot named before its manifest; a group synced before
its mirror COMMIT; a group committed, the next one's end written and not
synced; a segment ended before it is compressed; a segment named in seg/
before the manifest; a manifest written before its rename; a manifest
renamed with the old open segment still there; a snapshot named (one that
retires an older one) before its manifest, its manifest written before
its rename, and renamed; the next run's removal of the listed open
segment; a new open segment written before its rename, and (a service)
renamed over the closed one, and before that; a retired file's removal
(before and after) and the retired list's rewrite. Each kill's state is
checked to be the step's (so the kill fell where it says); then, as the
kill left it and after the next run: the manifest lists only files that
are there with the size and SHA-256 it gives, in an unbroken chain; the
slot is not ahead of the manifest's end, nor the manifest's end past the
hub's mirror; every group the mirror committed is listed or held in the
open segment; the next run keeps the epoch; a device replaying the feed
equals the hub, and the hub the source (keyless rows given twice and
copies of one row, so a group applied twice or lost shows). Retired
files' notes are aged by an hour before each next run, so that a note of
a file still listed removes it at once. Then the same checks after EIO at
the feed's syncs.

powercut: the mirror and its feed in one directory tree under the
powercut shim. A mirror's first run with --feed (its directories made,
its first epoch's snapshot and manifest, a first segment), and a run that
commits two groups, closes a segment, writes its manifest, a snapshot
(that retires an older one; files retired long enough are removed) and
the manifest again, are cut right after each of their events in turn
(PGMIRROR_FEED_POWERCUT_STRIDE=N: every Nth), and the tree put back to
what a power cut leaves, names included. After each cut: the mirror passes
integrity_check, its slot is not ahead of it, its feed_group is consistent
with the open segment and the manifest, the manifest (if any) parses and
lists only durable files with their SHA-256; the next run without a cut
succeeds, and the device replaying the feed equals the hub and the source.
Last, with the open segment's syncs made no-ops (a disk that lies), a cut
after its groups committed must find them missing (the layer sees what
it looks for), and the next run begins a new epoch rather than list a
feed with a gap.
"""

import hashlib
import json
import os
import re
import shutil
import sqlite3
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402
from powercut import PowerCut  # noqa: E402

STRIDE = int(os.environ.get("PGMIRROR_FEED_POWERCUT_STRIDE", "1"))
TABLES = ["acc", "logs", "dup", "pgm_marker"]
SEG_RE = re.compile(r"^seg/([0-9a-f]{32})/([0-9a-f]{16})-([0-9a-f]{16})-([0-9a-f]{16})\.pgmf\.zst$")
SNAP_RE = re.compile(r"^snap/([0-9a-f]{32})/([0-9a-f]{16})-([0-9a-f]{16})\.sqlite\.zst$")


def workload(ctx, i, many=False):
    """A round of source transactions: keyless rows given twice, a row of a
    REPLICA IDENTITY FULL table given three times and one of its copies
    deleted, a keyed update; many: 6000 more transactions, so that the
    hub's run commits more than one group."""
    ctx.sql("INSERT INTO logs VALUES (%s, 'twice'), (%s, 'twice')", i, i)
    ctx.sql("INSERT INTO dup VALUES (%s, 'x'), (%s, 'x'), (%s, 'x')", i % 7, i % 7, i % 7)
    ctx.sql("DELETE FROM dup WHERE ctid = (SELECT ctid FROM dup WHERE a = %s LIMIT 1)", i % 7)
    ctx.sql("UPDATE acc SET n = n + 1 WHERE id = %s", i % 20)
    if many:
        ctx.sql("DO $$ BEGIN FOR i IN 1..6000 LOOP UPDATE acc SET n = n + 1 "
                "WHERE id = i % 20; COMMIT; END LOOP; END $$")


# -- the feed as a reader finds it ---------------------------------------------

def read_manifest(feed):
    """The manifest, parsed (None when there is none)."""
    path = os.path.join(feed, "manifest.json")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        text = f.read()
    try:
        m = json.loads(text)
    except ValueError as e:
        fail("manifest.json does not parse (%s): %r" % (e, text[:200]))
    check(m.get("format") == "pgmirror-feed" and m.get("version") == 1,
          "manifest.json is not a feed manifest of version 1: %r" % text[:200])
    return m


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def check_listed_files(feed, m):
    """Every file the manifest lists is there, with its size and SHA-256;
    its name has the shape, epoch and groups the manifest gives; the
    segments make an unbroken chain from oldest to end."""
    epoch = m["epoch"]
    for s in m["segments"]:
        mt = SEG_RE.match(s["name"])
        check(mt and mt.group(1) == epoch and int(mt.group(2), 16) == s["first_group"]
              and int(mt.group(3), 16) == s["last_group"]
              and s["sha256"].startswith(mt.group(4)),
              "the manifest lists segment %s under a name that does not fit it: %s"
              % (s["name"], s))
    for s in m["snapshots"]:
        mt = SNAP_RE.match(s["name"])
        check(mt and mt.group(1) == epoch and int(mt.group(2), 16) == s["group"]
              and s["sha256"].startswith(mt.group(3)),
              "the manifest lists snapshot %s under a name that does not fit it: %s"
              % (s["name"], s))
    for s in m["segments"] + m["snapshots"]:
        path = os.path.join(feed, s["name"])
        check(os.path.isfile(path), "the manifest (seq %d) lists %s, which is not there"
              % (m["seq"], s["name"]))
        size = os.path.getsize(path)
        check(size == s["size"], "the manifest lists %s with %d bytes; it has %d"
              % (s["name"], s["size"], size))
        digest = sha256_of(path)
        check(digest == s["sha256"], "the manifest lists %s with SHA-256 %s; it has %s"
              % (s["name"], s["sha256"], digest))
    group, lsn = m["oldest"]["group"] - 1, m["oldest"]["lsn"]
    for s in m["segments"]:
        check(s["first_group"] == group + 1 and s["start_lsn"] == lsn,
              "the manifest's segments do not follow each other at %s (after group %d at %s)"
              % (s["name"], group, lsn))
        group, lsn = s["last_group"], s["end_lsn"]
    check(group == m["end"]["group"] and lsn == m["end"]["lsn"],
          "the manifest's segments end at group %d (%s), its end says %s" % (group, lsn, m["end"]))
    for s in m["snapshots"]:
        check(s["group"] <= m["end"]["group"],
              "snapshot %s stands after the manifest's end %s" % (s["name"], m["end"]))


def read_open_segment(feed):
    """DIR/.hub/open.pgmf as a hub that starts finds it: None when there is
    none, else {epoch, first, start, groups: [(group, lsn)], ended}, read up
    to the first record cut short."""
    path = os.path.join(feed, ".hub", "open.pgmf")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    seg = {"epoch": None, "first": None, "start": None, "groups": [], "ended": False}
    off = 0
    while off + 5 <= len(data):
        kind, n = data[off:off + 1], struct.unpack(">I", data[off + 1:off + 5])[0]
        body = data[off + 5:off + 5 + n]
        if len(body) < n:
            break
        if kind == b"H":
            (elen,) = struct.unpack(">I", body[2:6])
            seg["epoch"] = body[6:6 + elen].decode()
            seg["first"], seg["start"] = struct.unpack(">QQ", body[6 + elen:22 + elen])
        elif kind == b"C":
            seg["groups"].append(struct.unpack(">QQ", body[:16]))
        elif kind == b"E":
            seg["ended"] = True
            break
        off += 5 + n
    return seg


def hub_state(ctx, hub):
    """The hub's mirror: (feed_group, epoch, confirmed_lsn), read from a
    copy (a reader must not change what the next run finds)."""
    tmp = tempfile.mkdtemp(prefix="pgm_feed_pc.")
    try:
        for side in ("", "-wal"):
            if os.path.exists(hub + side):
                shutil.copyfile(hub + side, os.path.join(tmp, "m.db" + side))
        con = ctx.mirror_connect(os.path.join(tmp, "m.db"))
        try:
            st = con.execute("SELECT confirmed_lsn FROM pgmirror_state").fetchone()
            try:
                fs = con.execute("SELECT feed_group, epoch FROM pgmirror_feed").fetchone()
            except sqlite3.Error:   # no feed row yet
                fs = None
        finally:
            con.close()
    finally:
        shutil.rmtree(tmp)
    lsn = harness.parse_lsn(st[0]) if st and st[0] else 0
    return (fs[0], fs[1], lsn) if fs else (None, None, lsn)


def check_feed(ctx, hub, feed, slot, what, same_epoch=True):
    """The feed and the hub's mirror as a restart finds them (see the
    docstring); returns (manifest, open segment, mirror state)."""
    ctx.wait_slot_inactive(slot)
    m = read_manifest(feed)
    group, epoch, lsn = hub_state(ctx, hub)
    seg = read_open_segment(feed)
    where = "%s: " % what
    try:
        if m is None:
            check(not same_epoch, "there is no manifest")
            return m, seg, (group, epoch, lsn)
        check_listed_files(feed, m)
        end = harness.parse_lsn(m["end"]["lsn"])
        info = ctx.slot_info(slot)
        if info and info["confirmed_flush_lsn"]:
            check(harness.parse_lsn(info["confirmed_flush_lsn"]) <= end,
                  "the slot (%s) is ahead of the manifest's end (%s)"
                  % (info["confirmed_flush_lsn"], m["end"]["lsn"]))
        if epoch != m["epoch"]:
            check(not same_epoch, "the mirror follows epoch %s, the manifest %s"
                  % (epoch, m["epoch"]))
            return m, seg, (group, epoch, lsn)
        check(m["end"]["group"] <= group, "the manifest lists group %d, the mirror holds %d"
              % (m["end"]["group"], group))
        check(end <= lsn, "the manifest's end %s is past the mirror's %s"
              % (m["end"]["lsn"], harness.format_lsn(lsn)))
        if group == m["end"]["group"]:
            check(end == lsn, "the mirror at group %d stands at %s, the manifest's end at %s"
                  % (group, harness.format_lsn(lsn), m["end"]["lsn"]))
        else:
            # what the mirror committed past the manifest is durable in the
            # open segment, which follows the manifest
            check(seg is not None and seg["epoch"] == epoch and
                  seg["first"] == m["end"]["group"] + 1 and
                  (group, lsn) in seg["groups"],
                  "the mirror committed group %d (%s) past the manifest's end %s, but the "
                  "open segment does not hold it: %s"
                  % (group, harness.format_lsn(lsn), m["end"], seg))
    except harness.Failure as e:
        fail(where + str(e))
    return m, seg, (group, epoch, lsn)


def trace_of(err):
    """The events of a run under the shim with trace=True, in short."""
    return "; ".join("%s %s" % (k, os.path.basename(p)) for k, p in
                     re.findall(r"^powercut: event \d+ (\w+) (.*)$", err, re.M))


def age_retired(feed):
    """An hour passes for every file noted as retired (.hub/retired): the
    next manifest written removes them all."""
    path = os.path.join(feed, ".hub", "retired")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        lines = [line.split(" ", 1) for line in f if " " in line]
    with open(path, "w") as f:
        f.writelines("0 %s" % name for _, name in lines)
    return len(lines)


class Hub:
    """A hub whose mirror and feed live in a power-cut directory, and a
    device that follows its feed."""

    def __init__(self, ctx, pc, tag, base):
        self.ctx, self.pc = ctx, pc
        self.path, self.feed = pc.path(), pc.path("feed")
        self.slot, self.dev = ctx.slot(tag), ctx.path(tag + "_dev.db")
        self.round = base

    def args(self, *extra, once=True):
        return self.ctx.mirror_args(self.path, self.slot, "pub", *(
            ["--feed=" + self.feed, "--feed-keep=2"] + (["--once"] if once else [])
            + list(extra)))

    def work(self, many=False):
        self.round += 1
        workload(self.ctx, self.round, many)

    def run(self, *extra, what="the next run", keep_epoch=False):
        """A run without a cut: it succeeds (and keeps the feed's epoch)."""
        rc, out, err = self.ctx.run(self.args(*extra), timeout=120)
        check(rc == 0, "%s exited %d:\n%s" % (what, rc, err))
        if keep_epoch:
            check("begins epoch" not in err and "new epoch" not in err,
                  "%s began a new epoch of the feed:\n%s" % (what, err))
        return err

    def equal(self, what):
        """A device replaying the feed equals the hub, and the hub the source."""
        try:
            rows = self.ctx.assert_device_equals_hub(self.dev, self.path, timeout=30,
                                                     feed=self.feed)
            self.ctx.assert_mirror_equals_source(self.path, *TABLES)
        except harness.Failure as e:
            fail("%s: %s" % (what, e))
        return rows


# -- kill -9 at each step ------------------------------------------------------

def part_kill9(ctx):
    pc = PowerCut(ctx, "k9")
    h = Hub(ctx, pc, "k9", 0)
    kills = []

    def kill(what, op, match, nth=1, after=False, extra=(), many=False, expect=None,
             service=False, same_epoch=True):
        """One run killed at the nth event op on a path ending in match;
        expect(manifest, open segment, mirror state) says the state is the
        step's; then the checks, the next run, the device."""
        h.work(many)
        env = pc.env(op=op, nth=nth, after=after, match=match, trace=True)
        if service:
            proc = ctx.start(h.args("--feed-interval=1", *extra, once=False), env=env,
                             tag="k9_service")

            def trickle(c, i):   # a transaction every 20 ms (a pace, not a wait)
                c.cursor().execute("INSERT INTO logs VALUES (%s, 'service')", (i,))
                c.commit()
                time.sleep(0.02)

            w = harness.Workload(ctx, trickle)
            w.start()
            try:
                rc = proc.popen.wait(60 * harness.SLOW)
            except Exception:  # noqa: BLE001 - TimeoutExpired
                ctx.stop(proc)
                fail("%s: the service was not killed at %s %d of *%s within 60 s:\n%s"
                     % (what, op, nth, match, proc.stderr()))
            finally:
                w.stop()
            err = proc.stderr()
        else:
            rc, out, err = ctx.run(h.args(*extra), env=env, timeout=120)
        check(rc == -9 and "powercut: cut" in err,
              "%s: the run was not killed %s %s %d of *%s: exit %d\n%s"
              % (what, "after" if after else "before", op, nth, match, rc, err))
        line = [x for x in err.splitlines() if "powercut: cut" in x][0]
        state = check_feed(ctx, h.path, h.feed, h.slot, what + ", as the kill left it",
                           same_epoch=same_epoch)
        if expect:
            try:
                expect(*state)
            except harness.Failure as e:
                fail("%s: the kill (%s) did not leave the step's state: %s\nthe run met: %s"
                     % (what, line, e, trace_of(err)))
        age_retired(h.feed)
        h.work()
        h.run(what=what + ": the next run", keep_epoch=same_epoch)
        check_feed(ctx, h.path, h.feed, h.slot, what + ", after the next run")
        rows = h.equal(what)
        kills.append(what)
        harness.log("kill -9 %s (%s): ok, the device equals the hub (%d rows)"
                    % (what, line.split(": ", 1)[1], rows))

    # the hub's first run with --feed: the epoch's snapshot is named, its
    # manifest not written; the next run begins the epoch again
    kill("a new epoch's snapshot named, before its manifest", "rename", "/.hub/snapshot.zst",
         after=True, same_epoch=False,
         expect=lambda m, seg, st: check(m is None and st[1] is not None and os.listdir(
             os.path.join(h.feed, "snap", st[1])),
             "the mirror's epoch, its snapshot there, no manifest: %s %s" % (m, st)))
    h.work()
    h.run("--feed-snapshot", what="a run with a snapshot", keep_epoch=True)
    h.equal("a run with a snapshot")

    def unlisted_group(m, seg, st):
        check(st[0] > m["end"]["group"], "the mirror holds group %d, the manifest lists "
              "up to %d" % (st[0], m["end"]["group"]))

    def c_synced_not_committed(m, seg, st):
        check(seg and seg["groups"] and seg["groups"][-1][0] == st[0] + 1,
              "the open segment's last group is the one after the mirror's %d: %s"
              % (st[0], seg))

    kill("a group synced, before its mirror's COMMIT", "sync", "/.hub/open.pgmf",
         after=True, expect=c_synced_not_committed)

    def committed_next_unsynced(m, seg, st):
        unlisted_group(m, seg, st)
        check(seg and not seg["ended"] and len(seg["groups"]) >= 2 and
              seg["groups"][-2][0] == st[0] and seg["groups"][-1][0] == st[0] + 1,
              "the open segment holds the mirror's group %d, and the next one's end, not "
              "synced: %s" % (st[0], seg))

    # a run of two groups killed before the second one's sync: the first
    # committed, its segment not ended, the second's end written, not synced
    kill("a group's COMMIT done, the next group not synced, before the segment ends", "sync",
         "/.hub/open.pgmf", nth=2, many=True, expect=committed_next_unsynced)

    def ended_not_named(m, seg, st):
        unlisted_group(m, seg, st)
        check(seg and seg["ended"] and seg["groups"][-1][0] == st[0],
              "the open segment ended after the mirror's group %d: %s" % (st[0], seg))

    kill("a segment ended, before it is compressed and named", "create", "/.hub/closing.zst",
         expect=ended_not_named)

    def named_not_listed(m, seg, st):
        ended_not_named(m, seg, st)
        d = os.path.join(h.feed, "seg", st[1])
        names = ["seg/%s/%s" % (st[1], n) for n in os.listdir(d)]
        check(any(SEG_RE.match(n) and int(SEG_RE.match(n).group(3), 16) == st[0]
                  for n in names) and not any(s["last_group"] == st[0] for s in m["segments"]),
              "a segment that ends at group %d is in seg/ and not listed: %s" % (st[0], names))

    kill("a segment named in seg/, before the manifest", "rename", "/.hub/closing.zst",
         after=True, expect=named_not_listed)

    def manifest_not_renamed(m, seg, st):
        ended_not_named(m, seg, st)
        check(os.path.exists(os.path.join(h.feed, ".hub", "manifest.json.tmp")),
              "the new manifest is written under its temporary name")

    kill("a manifest written, before its rename", "rename", "/.hub/manifest.json.tmp",
         expect=manifest_not_renamed)

    def listed_open_kept(m, seg, st):
        check(m["end"]["group"] == st[0] and seg and seg["ended"],
              "the manifest lists the mirror's group %d, the old open segment is there: %s %s"
              % (st[0], m["end"], seg))

    kill("a manifest renamed, before the old open segment goes", "rename",
         "/.hub/manifest.json.tmp", after=True, expect=listed_open_kept)

    def snapshot_not_listed(m, seg, st):
        listed_open_kept(m, seg, st)
        d = os.path.join(h.feed, "snap", st[1])
        check(len(os.listdir(d)) > len(m["snapshots"]) and m["snapshots"][-1]["group"] < st[0],
              "a snapshot after group %d is in snap/ and not listed: %s, listed %s"
              % (st[0], os.listdir(d), m["snapshots"]))

    # --feed-keep=2 and two snapshots listed: the new one retires the oldest
    h.work()
    h.run("--feed-snapshot", what="a second run with a snapshot", keep_epoch=True)
    kill("a snapshot named (it retires the oldest), before its manifest", "rename",
         "/.hub/snapshot.zst", after=True, extra=["--feed-snapshot"], expect=snapshot_not_listed)

    def snapshot_manifest_not_renamed(m, seg, st):
        snapshot_not_listed(m, seg, st)
        check(os.path.exists(os.path.join(h.feed, ".hub", "manifest.json.tmp")),
              "the new manifest is written under its temporary name")

    kill("a snapshot's manifest (it retires the oldest) written, before its rename", "rename",
         "/.hub/manifest.json.tmp", nth=2, extra=["--feed-snapshot"],
         expect=snapshot_manifest_not_renamed)

    def snapshot_listed(m, seg, st):
        check(m["snapshots"][-1]["group"] == st[0] and len(m["snapshots"]) == 2,
              "the manifest lists the new snapshot after group %d (and one more): %s"
              % (st[0], m["snapshots"]))

    kill("a snapshot's manifest renamed", "rename", "/.hub/manifest.json.tmp", nth=2,
         after=True, extra=["--feed-snapshot"], expect=snapshot_listed)

    def open_removed(m, seg, st):
        check(seg is None and m["end"]["group"] == st[0],
              "the listed open segment removed, nothing new: %s %s" % (seg, m["end"]))

    kill("the next run's removal of the listed open segment", "unlink", "/.hub/open.pgmf",
         after=True, expect=open_removed)

    def new_not_renamed(m, seg, st):
        open_removed(m, seg, st)
        check(os.path.exists(os.path.join(h.feed, ".hub", "open.new")),
              "the new open segment is written under its temporary name")

    kill("a new open segment written, before its rename", "rename", "/.hub/open.new",
         expect=new_not_renamed)

    def begun_over_closed(m, seg, st):
        check(seg and not seg["ended"] and not seg["groups"] and
              seg["first"] == m["end"]["group"] + 1,
              "a new open segment after the manifest's end %s, no group in it: %s"
              % (m["end"], seg))

    kill("a service's next open segment renamed over the closed one", "rename",
         "/.hub/open.new", nth=2, after=True, service=True, expect=begun_over_closed)

    def closed_kept(m, seg, st):
        check(seg and seg["ended"] and m["end"]["group"] == st[0] and
              os.path.exists(os.path.join(h.feed, ".hub", "open.new")),
              "the closed open segment there, the new one under its temporary name: %s" % seg)

    kill("a service's next open segment written, before it replaces the closed one",
         "rename", "/.hub/open.new", nth=2, service=True, expect=closed_kept)

    # retention: notes aged by age_retired(); files go when a manifest is written
    for after in (False, True):
        h.work()
        h.run("--feed-snapshot", what="a run that retires files", keep_epoch=True)
        check(age_retired(h.feed) > 0, "a run with --feed-keep=2 and a third snapshot "
              "retired no file")
        kill("a retired file's removal (%s)" % ("after" if after else "before"), "unlink",
             ".zst", after=after, extra=["--feed-snapshot"])
    h.work()
    h.run("--feed-snapshot", what="a run that retires files", keep_epoch=True)
    age_retired(h.feed)
    kill("the retired list rewritten", "rename", "/.hub/retired.new", after=True,
         extra=["--feed-snapshot"])
    harness.log("kill -9 at %d steps of the feed's life" % len(kills))

    # a disk that fails (EIO) at a step: the run fails or goes on, and
    # leaves nothing that the order above forbids
    for what, op, match, nth in (
            ("a group's sync", "sync", "/.hub/open.pgmf", 1),
            ("the segment's end's sync", "sync", "/.hub/open.pgmf", 2),
            ("the compressed segment's sync", "sync", "/.hub/closing.zst", 1),
            ("the manifest's sync", "sync", "/.hub/manifest.json.tmp", 1),
            ("the feed directory's sync after the manifest's rename", "dirsync", "/feed", 1)):
        h.work()
        env = pc.env(op=op, nth=nth, match=match, eio=True)
        rc, out, err = ctx.run(h.args(), env=env, timeout=120)
        check("powercut: EIO" in err, "EIO at %s: the run met no such event: exit %d\n%s"
              % (what, rc, err))
        check_feed(ctx, h.path, h.feed, h.slot, "EIO at %s (exit %d), as it left the feed"
                   % (what, rc))
        h.work()
        h.run(what="EIO at %s: the next run" % what, keep_epoch=True)
        check_feed(ctx, h.path, h.feed, h.slot, "EIO at %s, after the next run" % what)
        rows = h.equal("EIO at %s" % what)
        harness.log("EIO at %s: exit %d, ok, the device equals the hub (%d rows)"
                    % (what, rc, rows))


# -- power cuts --------------------------------------------------------------

def count_events(ctx, h, extra):
    """A run without a cut under the shim: its events, in order."""
    rc, out, err = ctx.run(h.args(*extra), env=h.pc.env(op="any", trace=True), timeout=120)
    check(rc == 0, "a run under the shim exited %d:\n%s" % (rc, err))
    h.pc.settle()
    return re.findall(r"^powercut: event \d+ (\w+) (.*)$", err, re.M)


def cut_at_every_event(ctx, h, what, events, prepare, extra, same_epoch):
    """Runs like the one that met events, each cut right after one of them
    and rewound; the checks after each. (Only syncs make anything durable,
    so a cut before an event leaves what a cut after the one before it
    leaves.)"""
    cuts = missed = 0
    for n in range(1, len(events) + 1, STRIDE):
        prepare()
        env = h.pc.env(op="any", nth=n, after=True)
        rc, out, err = ctx.run(h.args(*extra), env=env, timeout=120)
        if "powercut: cut" not in err:
            check(rc == 0, "%s: a run under the shim exited %d before its cut:\n%s"
                  % (what, rc, err))
            missed += 1
            h.pc.settle()
            continue
        line = [x for x in err.splitlines() if "powercut: cut" in x][0]
        step = "%s, cut %s" % (what, line.split(": ", 1)[1])
        ctx.wait_slot_inactive(h.slot)
        h.pc.rewind()
        problems = h.pc.problems_after_cut(h.slot)
        check(not problems, "%s: %s" % (step, "; ".join(problems)))
        check_feed(ctx, h.path, h.feed, h.slot, step + ", as the cut left it",
                   same_epoch=same_epoch)
        h.run(what=step + ": the next run", keep_epoch=same_epoch)
        res = h.pc.integrity()
        check(res == ["ok"], "%s: integrity_check after the next run: %s" % (step, res))
        check_feed(ctx, h.path, h.feed, h.slot, step + ", after the next run")
        h.equal(step)
        h.pc.settle()
        cuts += 1
    harness.log("%s: %d events, %d cuts (%d runs ended before theirs)"
                % (what, len(events), cuts, missed))
    return cuts


def part_powercut(ctx):
    pc = PowerCut(ctx, "pc")
    h = Hub(ctx, pc, "pc", 100000)
    # a mirror's first run with --feed: the feed's directories, its first
    # epoch's snapshot and manifest, a first segment
    rc, out, err = ctx.run(ctx.mirror_args(h.path, h.slot, "pub", "--once"), timeout=120)
    check(rc == 0, "a first run without --feed exited %d:\n%s" % (rc, err))
    pc.settle()

    def fresh_feed():
        shutil.rmtree(h.feed, ignore_errors=True)
        h.work()
        pc.settle()

    fresh_feed()
    first = count_events(ctx, h, [])
    kinds = sorted(set(k for k, p in first if "/feed" in p))
    harness.log("a first run with --feed: %d events (%s on the feed)"
                % (len(first), ", ".join(kinds)))
    h.equal("a first run with --feed")
    cuts = cut_at_every_event(ctx, h, "a first run with --feed", first, fresh_feed, [],
                              same_epoch=False)

    # a run that writes two groups, closes the segment, writes the
    # manifest, a snapshot that retires the oldest and removes files
    # retired long enough, and the manifest again
    def prepare():
        h.work(many=True)
        age_retired(h.feed)
        pc.settle()

    for _ in range(3):   # three snapshots, so that the next retires one
        prepare()
        h.run("--feed-snapshot", what="a run with a snapshot", keep_epoch=True)
        pc.settle()
    prepare()
    events = count_events(ctx, h, ["--feed-snapshot"])
    h.equal("a counted run")
    want = {("sync", "open.pgmf"), ("sync", "mirror.db-wal"), ("rename", "closing.zst"),
            ("rename", "snapshot.zst"), ("rename", "manifest.json.tmp"),
            ("unlink", ".pgmf.zst"), ("unlink", ".sqlite.zst"), ("dirsync", "/feed")}
    got = {(k, w) for k, p in events for kk, w in want if k == kk and p.endswith(w)}
    check(got == want, "a run with a snapshot met no %s:\n%s" % (sorted(want - got), events))
    harness.log("a run with two groups, a segment, a snapshot and retention: %d events"
                % len(events))
    cuts += cut_at_every_event(ctx, h, "a run with a snapshot", events, prepare,
                               ["--feed-snapshot"], same_epoch=True)
    harness.log("%d power cuts, each rewound and checked" % cuts)

    # the layer sees what it looks for: with the open segment's syncs made
    # no-ops (a disk that lies), a cut after its groups committed finds
    # them gone from the feed; the next run then begins a new epoch rather
    # than list a feed with a gap in it
    prepare()
    env = pc.env(op="create", match="/.hub/closing.zst", nth=1, nosync="/.hub/open.pgmf")
    rc, out, err = ctx.run(h.args(), env=env, timeout=120)
    check(rc == -9 and "powercut: cut" in err, "a run with the open segment's syncs as "
          "no-ops was not cut before its segment was compressed: exit %d\n%s" % (rc, err))
    ctx.wait_slot_inactive(h.slot)
    pc.rewind()
    found = None
    try:
        check_feed(ctx, h.path, h.feed, h.slot, "syncs as no-ops")
    except harness.Failure as e:
        found = str(e)
    check(found and "does not hold it" in found,
          "with the open segment's syncs as no-ops, a cut after its groups committed found "
          "%s: the layer cannot see what it looks for" % (found or "nothing lost"))
    harness.log("with the open segment's syncs as no-ops, the cut found: %s" % found)
    h.work()
    err = h.run(what="the run after a cut that lost committed groups")
    check("begins epoch" in err, "the run after a cut that lost groups its mirror committed "
          "did not begin a new epoch:\n%s" % err)
    check_feed(ctx, h.path, h.feed, h.slot, "the run after a cut that lost committed groups")
    h.equal("the run after a cut that lost committed groups")


def test(ctx):
    ctx.sql("""
        CREATE TABLE acc (id int PRIMARY KEY, n int);
        CREATE TABLE logs (tx int, note text);             -- no key: rows given twice
        CREATE TABLE dup (a int, b text);                  -- copies of one row
        ALTER TABLE dup REPLICA IDENTITY FULL;
        CREATE PUBLICATION pub FOR TABLE acc, logs, dup;
        INSERT INTO acc SELECT g, 0 FROM generate_series(0, 19) g;
    """)
    ctx.create_marker("pub")
    harness.run_parts(ctx, {"kill9": part_kill9, "powercut": part_powercut})


harness.main(test)

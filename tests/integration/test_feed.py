"""The feed (docs/feed.md): a hub (--feed=DIR) writes what its mirror takes;
a device (--from=DIR) replays it and equals the hub, table by table, row by
row, at the same confirmed_lsn.

Parts (PARTS=a,b runs only those):
  basic     a first run from the snapshot, then rounds of changes of every
            kind (keyless duplicates, key changes, TOAST left unchanged, a
            transaction of many rows, an added column), each replayed; the
            device's own view, index and trigger are kept, and the trigger
            fires for the changes; a quiet round moves nothing; --status
  damage    a flipped byte, a cut file, a manifest that is not JSON, an
            older manifest put back: each an error naming the file, nothing
            applied, the mirror as it was; the feed mended, the device goes on
  other     another hub's feed is refused, the mirror untouched
  epoch     a step of the hub's own (--resync) begins a new epoch: the device
            rebuilds from its snapshot, keeping its objects
  pruned    a device whose position the feed no longer lists rebuilds
  usage     the hub's options are usage errors on a device, and the other way
  healed    a device's own damaged file is set aside and rebuilt from the
            feed's snapshot, keeping the user's objects
  service   a hub and a device as services: a change on the source reaches
            the device; SIGTERM stops each with exit 0
  joinkill  a table joins and is copied, and the hub is killed before the
            new epoch that copy calls for is written: the next run writes it
  rebuild   a hub whose slot was dropped rebuilds its mirror (a new epoch),
            and its device follows
  join      a service hub copies a table that joins the publication (a new
            epoch within the stream's round) and goes on recording the
            round's transactions
  confirm   a hub's --once run ends with the slot confirmed where its mirror
            and feed stand
  midrun    a device that reads while its hub's service runs starts each run
            in the middle of the hub's (handed the newest Relation message
            at a change where the hub asked no catalog question)
  heal      a hub whose mirror is found damaged as the run reads it (not by
            the integrity check) heals it: a new epoch, and its device
            follows
  busy      a service hub whose source is busy with a table it does not
            publish (a stream never idle) lists its segments and so moves
            its slot on
"""

import json
import os
import shutil
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

TABLES = ("k", "nokey", "wide")


def setup_source(ctx):
    ctx.sql("""
        DROP PUBLICATION IF EXISTS pub;
        DROP TABLE IF EXISTS k, nokey, wide, pgm_marker;
        CREATE TABLE k (id int PRIMARY KEY, v text, n numeric(12,2), t timestamptz,
                        j jsonb, a int[]);
        CREATE TABLE nokey (a int, b text);
        ALTER TABLE nokey REPLICA IDENTITY FULL;
        CREATE TABLE wide (id int PRIMARY KEY, big text, small int);
        ALTER TABLE wide ALTER big SET STORAGE EXTERNAL;
        INSERT INTO k SELECT g, 'v' || g, g * 1.5, '2026-01-01'::timestamptz + g * interval '1 h',
                             jsonb_build_object('g', g), ARRAY[g, g + 1]
                      FROM generate_series(1, 200) g;
        INSERT INTO nokey SELECT g % 7, 'dup' FROM generate_series(1, 50) g;
        INSERT INTO wide VALUES (1, repeat('x', 100000), 1);
        CREATE PUBLICATION pub FOR TABLE k, nokey, wide;
    """)


def hub_once(ctx, hub, slot, feed, *extra, expect=0):
    return ctx.once(hub, slot, "pub", "--feed=" + feed, *extra, expect=expect)


def manifest(feed):
    with open(os.path.join(feed, "manifest.json")) as f:
        return json.load(f)


def device_objects(ctx, dev):
    con = sqlite3.connect(dev)
    try:
        con.executescript("""
            CREATE TABLE IF NOT EXISTS app_log (what text, id int);
            CREATE VIEW IF NOT EXISTS cheap AS SELECT id, v FROM k WHERE n < 30;
            CREATE INDEX IF NOT EXISTS k_by_v ON k (v);
            CREATE TRIGGER IF NOT EXISTS k_ins AFTER INSERT ON k
                BEGIN INSERT INTO app_log VALUES ('ins', new.id); END;
        """)
    finally:
        con.close()


def app_log(ctx, dev):
    return ctx.mirror_query(dev, "SELECT what, id FROM app_log ORDER BY id")


def part_basic(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("basic_hub.db"), ctx.path("basic_dev.db"), ctx.slot("basic")
    feed = ctx.path("basic_feed")
    hub_once(ctx, hub, slot, feed)
    m = manifest(feed)
    check(len(m["snapshots"]) == 1, "a first run wrote %d snapshots, not 1"
          % len(m["snapshots"]))
    check(m["source"]["slot"] == slot and m["source"]["publications"] == ["pub"],
          "the manifest's source is %s" % m["source"])
    check(not os.path.exists(dev), "the device's file is there before its first run")
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    state = ctx.mirror_state(dev)
    check(state["slot"] == slot, "the device's state names slot %r" % state["slot"])
    device_objects(ctx, dev)

    rounds = [
        """INSERT INTO k SELECT g, 'n' || g, g, now(), '{"x": [1, 2]}', '{}'
               FROM generate_series(201, 260) g;
           UPDATE k SET v = v || '!' WHERE id % 5 = 0;
           DELETE FROM k WHERE id % 11 = 0;""",
        """INSERT INTO nokey SELECT 3, 'dup' FROM generate_series(1, 5);
           DELETE FROM nokey WHERE a = 2;
           UPDATE nokey SET b = 'changed' WHERE a = 4;""",
        """UPDATE k SET id = id + 1000 WHERE id BETWEEN 10 AND 14;
           UPDATE wide SET small = small + 1;""",
        """BEGIN; INSERT INTO k SELECT g, 'big', g, now(), 'null', NULL
               FROM generate_series(2000, 7000) g; COMMIT;""",
        """ALTER TABLE k ADD COLUMN extra int DEFAULT 7;
           INSERT INTO k (id, v) VALUES (9000, 'after the column');""",
    ]
    for i, sql in enumerate(rounds):
        ctx.sql(sql)
        hub_once(ctx, hub, slot, feed)
        ctx.assert_mirror_equals_source(hub, *TABLES)
        ctx.assert_device_equals_hub(dev, hub, feed=feed)
        harness.log("round %d replayed" % (i + 1))
    # the device's objects are kept, and its trigger saw each insert once
    # (a key change is an update in the mirror too)
    logged = app_log(ctx, dev)
    ids = sorted(r[1] for r in logged)
    want = sorted(list(range(201, 261)) + list(range(2000, 7001)) + [9000])
    check(ids == want, "the device's trigger logged %d inserts (%s...), expected %d"
          % (len(ids), ids[:5], len(want)))
    check(ctx.mirror_query(dev, "SELECT count(*) FROM cheap")[0][0] > 0,
          "the device's view is gone or empty")
    # -E on a device: it stops before the first transaction past it
    dev2 = ctx.path("basic_dev2.db")
    ctx.device(dev2, feed)
    first = ctx.mirror_lsn(dev2)
    ctx.sql("INSERT INTO k (id, v) VALUES (9100, 'e1')")
    mid = harness.parse_lsn(ctx.sql1("SELECT pg_current_wal_insert_lsn()::text"))
    ctx.sql("INSERT INTO k (id, v) VALUES (9101, 'e2')")
    hub_once(ctx, hub, slot, feed)
    ctx.device(dev2, feed, "-E", harness.format_lsn(mid))
    got = [r[0] for r in ctx.mirror_query(dev2, "SELECT id FROM k WHERE id >= 9100 ORDER BY 1")]
    check(got == [9100] and first < ctx.mirror_lsn(dev2) <= mid,
          "a device with -E %s holds %s at %s" % (harness.format_lsn(mid), got,
                                                  harness.format_lsn(ctx.mirror_lsn(dev2))))
    ctx.assert_device_equals_hub(dev2, hub, feed=feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    # a quiet round: the hub moves no group of changes, the device nothing
    before = ctx.mirror_contents(dev)
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    check(ctx.mirror_contents(dev) == before, "a quiet round changed the device")
    # --status of the device: the feed in place of the slot, its end, its lag
    rc, out, err = ctx.run(["--status", "--json", dev])
    check(rc == 0, "--status --json on the device exited %d: %s" % (rc, err))
    st = json.loads(out)
    check("slot" not in st and st["feed"]["url"] == feed,
          "--status --json of the device shows %s" % {k: st.get(k) for k in ("slot", "feed")})
    check(st["feed"]["end_lsn"] == ctx.mirror_state(hub)["confirmed_lsn"]
          and st["feed"]["lag_bytes"] == 0,
          "the device's feed end and lag: %s, hub at %s"
          % (st["feed"], ctx.mirror_state(hub)["confirmed_lsn"]))
    rc, out, err = ctx.run(["--status", "--prometheus", dev])
    check(rc == 0 and 'feed="%s"' % feed in out and "slot=" not in out
          and "pgmirror_feed_end_lsn{" in out,
          "--status --prometheus of the device:\n%s" % out[:600])
    rc, out, err = ctx.run(["--status", hub])
    check(rc == 0 and ("feed: %s\n" % feed) in out and "feed_snapshot: snap/" in out,
          "--status of the hub:\n%s" % out)


def corrupt(path, how):
    data = open(path, "rb").read()
    if how == "flip":
        i = len(data) // 2
        data = data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1:]
    elif how == "cut":
        data = data[:len(data) - 7]
    open(path, "wb").write(data)


def part_damage(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("damage_hub.db"), ctx.path("damage_dev.db"), ctx.slot("damage")
    feed = ctx.path("damage_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    old_manifest = open(os.path.join(feed, "manifest.json"), "rb").read()
    ctx.sql("INSERT INTO k (id, v) SELECT g, 'd' FROM generate_series(500, 520) g")
    hub_once(ctx, hub, slot, feed)
    seg = manifest(feed)["segments"][-1]["name"]
    seg_path = os.path.join(feed, seg)
    good = open(seg_path, "rb").read()
    before = ctx.mirror_contents(dev)
    lsn = ctx.mirror_lsn(dev)
    for how in ("flip", "cut"):
        corrupt(seg_path, how)
        rc, out, err = ctx.device(dev, feed, expect=1)
        check(os.path.basename(seg) in err and "damaged" in err,
              "a %s segment: the error does not name it as damaged:\n%s" % (how, err))
        check(ctx.mirror_contents(dev) == before and ctx.mirror_lsn(dev) == lsn,
              "a %s segment changed the device" % how)
        open(seg_path, "wb").write(good)
    mpath = os.path.join(feed, "manifest.json")
    new_manifest = open(mpath, "rb").read()
    open(mpath, "wb").write(b'{"format": "pgmirror-feed", "version": 1, ')
    rc, out, err = ctx.device(dev, feed, expect=1)
    check("manifest" in err and ctx.mirror_contents(dev) == before,
          "a manifest that is not JSON:\n%s" % err)
    open(mpath, "wb").write(new_manifest)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    # an older manifest put back, after the device read a newer one
    open(mpath, "wb").write(old_manifest)
    rc, out, err = ctx.device(dev, feed, expect=1)
    check("older than one this device has read" in err, "an old manifest put back:\n%s" % err)
    open(mpath, "wb").write(new_manifest)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def part_other(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("o_hub.db"), ctx.path("o_dev.db"), ctx.slot("o1")
    hub2, slot2 = ctx.path("o_hub2.db"), ctx.slot("o2")
    feed, feed2 = ctx.path("o_feed"), ctx.path("o_feed2")
    hub_once(ctx, hub, slot, feed)
    hub_once(ctx, hub2, slot2, feed2)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    before = ctx.mirror_contents(dev)
    rc, out, err = ctx.device(dev, feed2, expect=1)
    check("another hub" in err and slot2 in err, "another hub's feed:\n%s" % err)
    check(ctx.mirror_contents(dev) == before, "another hub's feed changed the device")
    # a feed directory of another mirror is refused by a hub too
    rc, out, err = ctx.run(ctx.mirror_args(hub2, slot2, "pub", "--once", "--feed=" + feed))
    check(rc == 1 and "another mirror" in err, "a hub given another's feed: %d %s" % (rc, err))


def part_epoch(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("epoch_hub.db"), ctx.path("epoch_dev.db"), ctx.slot("epoch")
    feed = ctx.path("epoch_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    device_objects(ctx, dev)
    epoch = manifest(feed)["epoch"]
    ctx.sql("UPDATE k SET v = 'before the resync' WHERE id < 5")
    hub_once(ctx, hub, slot, feed, "--resync=k")
    check(manifest(feed)["epoch"] != epoch, "a --resync on the hub kept the feed's epoch")
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    check(ctx.mirror_query(dev, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                "('cheap', 'k_by_v', 'k_ins', 'app_log')")[0][0] == 4,
          "the device's objects are gone after the new epoch")
    state = ctx.mirror_state(dev)
    check("epoch" in (state["last_rebuild_reason"] or ""),
          "the device's last_rebuild_reason is %r" % state["last_rebuild_reason"])
    left = sorted(f for f in os.listdir(ctx.tmpdir) if f.startswith("epoch_dev.db.feed-new"))
    check(not left, "the device's snapshots left %s beside it" % left)


def part_pruned(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("pruned_hub.db"), ctx.path("pruned_dev.db"), ctx.slot("pruned")
    feed = ctx.path("pruned_feed")
    hub_once(ctx, hub, slot, feed, "--feed-keep=2")
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    for i in range(4):
        ctx.sql("INSERT INTO k (id, v) VALUES (%d, 'p')" % (3000 + i))
        hub_once(ctx, hub, slot, feed, "--feed-keep=2", "--feed-snapshot")
    m = manifest(feed)
    check(len(m["snapshots"]) == 2, "--feed-keep=2 left %d snapshots" % len(m["snapshots"]))
    check(ctx.mirror_state(dev)["confirmed_lsn"] != m["end"]["lsn"], "the device is not behind")
    rc, out, err = ctx.device(dev, feed)
    check("no longer holds the device's position" in err, "a pruned position:\n%s" % err)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def part_usage(ctx):
    dev = ctx.path("dev.db")
    for opt in (["-d", "dbname=x"], ["-S", "s"], ["-P", "p"], ["--feed=/tmp/x"],
                ["--drop-slot"], ["--verify"], ["--resync"], ["--failover"],
                ["--no-initial-copy"], ["--feed-snapshot"], ["--feed-keep=3"]):
        rc, out, err = ctx.run(["--from=/tmp/nowhere"] + opt + [dev])
        check(rc == 2 and "on the hub" in err, "--from with %s: %d %s" % (opt, rc, err))
    rc, out, err = ctx.run(["--feed-snapshot", "-d", "dbname=x", dev])
    check(rc == 2 and "only with --feed" in err, "--feed-snapshot alone: %d %s" % (rc, err))
    check(not os.path.exists(dev), "a usage error made the mirror file")


def part_healed(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("h_hub.db"), ctx.path("h_dev.db"), ctx.slot("healed")
    feed = ctx.path("h_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    device_objects(ctx, dev)
    leaves = [r[0] for r in ctx.mirror_query(
        dev, "SELECT pageno FROM dbstat WHERE name = 'k' AND pagetype = 'leaf'")]
    ps = ctx.mirror_query(dev, "PRAGMA page_size")[0][0]
    check(leaves, "table k of the device has no leaf page")
    with open(dev, "r+b") as f:
        f.seek((leaves[len(leaves) // 2] - 1) * ps)
        f.write(b"\xff" * ps)
    rc, out, err = ctx.run(["--check", dev])
    check(rc == 5, "--check of the damaged device exited %d: %s" % (rc, out + err))
    ctx.sql("UPDATE k SET v = 'after the damage' WHERE id < 100")
    hub_once(ctx, hub, slot, feed)
    rc, out, err = ctx.device(dev, feed)
    check("damaged" in err and os.path.exists(dev + ".damaged"),
          "the damaged device was not set aside and rebuilt:\n%s" % err)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    check(ctx.mirror_query(dev, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                "('cheap', 'k_by_v', 'k_ins', 'app_log')")[0][0] == 4,
          "the device's objects are gone after its heal")
    rc, out, err = ctx.run(["--check", dev])
    check(rc == 0, "--check after the heal exited %d: %s" % (rc, out + err))


def part_service(ctx):
    setup_source(ctx)
    ctx.create_marker("pub")
    hub, dev, slot = ctx.path("s_hub.db"), ctx.path("s_dev.db"), ctx.slot("service")
    feed = ctx.path("s_feed")
    hub_once(ctx, hub, slot, feed)
    hproc = ctx.start_follow(hub, slot, "pub", "--feed=" + feed, "--feed-interval=1",
                             tag="hub")
    dproc = ctx.start(["--from=" + feed, dev], tag="dev")
    for i in range(3):
        ctx.sql("INSERT INTO k (id, v) SELECT g, 's' FROM generate_series(%d, %d) g"
                % (10000 + i * 100, 10000 + i * 100 + 99))
        ctx.catch_up(hub, proc=hproc)
        want = ctx.mirror_lsn(hub)
        ctx.wait_for_mirror(dev, want, proc=dproc, timeout=60)
        check(ctx.mirror_query(dev, "SELECT count(*) FROM k WHERE v = 's'")[0][0]
              == (i + 1) * 100, "the device service missed rows of round %d" % i)
    check(ctx.stop(dproc) == 0, "the device service did not stop with exit 0:\n%s"
          % dproc.stderr())
    check(ctx.stop(hproc) == 0, "the hub service did not stop with exit 0:\n%s"
          % hproc.stderr())
    ctx.assert_mirror_equals_source(hub, *TABLES)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def part_joinkill(ctx):
    setup_source(ctx)
    ctx.sql("DROP TABLE IF EXISTS late; CREATE TABLE late (id int PRIMARY KEY, v text);"
            "INSERT INTO late SELECT g, 'l' FROM generate_series(1, 300) g")
    hub, dev, slot = ctx.path("j_hub.db"), ctx.path("j_dev.db"), ctx.slot("joinkill")
    feed = ctx.path("j_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    epoch = manifest(feed)["epoch"]
    ctx.sql("ALTER PUBLICATION pub ADD TABLE late")
    # killed once the copy committed, when the run asks for the indexes that
    # follow it: before the hub could begin the new epoch the copy calls for
    for nth in range(1, 6):
        rc, out, err = ctx.run(ctx.mirror_args(hub, slot, "pub", "--once", "--feed=" + feed),
                               env={"LD_PRELOAD": harness.fault_shim("kill_at_query"),
                                    "PGMIRROR_KILL_QUERY": "i.indisvalid AND i.indislive",
                                    "PGMIRROR_KILL_NTH": str(nth)})
        check(rc == -9, "the hub was not killed at its indexes query %d: %d\n%s"
              % (nth, rc, err))
        if ctx.mirror_query(hub, "SELECT count(*) FROM pgmirror_tables "
                                 "WHERE table_name = 'late'")[0][0]:
            break
    check(ctx.mirror_query(hub, "SELECT stale FROM pgmirror_feed")[0][0] == 1,
          "the copy of the table that joined did not mark the feed stale")
    check(ctx.mirror_query(hub, "SELECT count(*) FROM late")[0][0] == 300,
          "the hub's mirror does not hold the table that joined")
    check(manifest(feed)["epoch"] == epoch, "the epoch changed before the kill")
    hub_once(ctx, hub, slot, feed)
    check(manifest(feed)["epoch"] != epoch, "the run after the kill kept the old epoch")
    ctx.assert_mirror_equals_source(hub, *(TABLES + ("late",)))
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def marker(ctx):
    """pgm_marker, made anew, in pub (for catch_up)."""
    ctx.sql("DROP TABLE IF EXISTS pgm_marker")
    ctx.create_marker("pub")


def part_rebuild(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("rb_hub.db"), ctx.path("rb_dev.db"), ctx.slot("rb")
    feed = ctx.path("rb_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    epoch = manifest(feed)["epoch"]
    ctx.admin.cursor().execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    ctx.sql("UPDATE k SET v = 'while the slot was gone' WHERE id < 20")
    rc, out, err = hub_once(ctx, hub, slot, feed)
    check("no longer exists" in err and "rebuilding" in err,
          "no rebuild after the slot was dropped:\n%s" % err)
    check(manifest(feed)["epoch"] != epoch, "the hub's rebuild kept the feed's epoch")
    ctx.assert_mirror_equals_source(hub, *TABLES)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    ctx.sql("DELETE FROM k WHERE id < 10")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_mirror_equals_source(hub, *TABLES)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def part_join(ctx):
    setup_source(ctx)
    ctx.sql("""DROP TABLE IF EXISTS j; CREATE TABLE j (id int PRIMARY KEY, v text);
               INSERT INTO j SELECT g, 'j' FROM generate_series(1, 50) g""")
    marker(ctx)
    hub, dev, slot = ctx.path("join_hub.db"), ctx.path("join_dev.db"), ctx.slot("join")
    feed = ctx.path("join_feed")
    hub_once(ctx, hub, slot, feed)
    proc = ctx.start(ctx.mirror_args(hub, slot, "pub", "--feed=" + feed, "--feed-interval=1"),
                     tag="join_hub")
    ctx.catch_up(hub, proc=proc)
    epoch = manifest(feed)["epoch"]
    ctx.sql("ALTER PUBLICATION pub ADD TABLE j; INSERT INTO j VALUES (100, 'joined')")
    ctx.catch_up(hub, proc=proc)
    ctx.assert_mirror_equals_source(hub, "j")
    # the transactions after the copy, in the same round of the stream
    for i in range(3):
        ctx.sql("INSERT INTO j VALUES (%d, 'after'); UPDATE k SET v = 'a' WHERE id = %d"
                % (200 + i, i + 1))
        ctx.catch_up(hub, proc=proc)
    check(manifest(feed)["epoch"] != epoch, "the copy of a table that joined kept the epoch")
    ctx.assert_mirror_equals_source(hub, "j", *TABLES)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    rc = ctx.stop(proc)
    check(rc == 0, "the hub's service exited %s:\n%s" % (rc, proc.stderr()))


def part_confirm(ctx):
    setup_source(ctx)
    hub, slot = ctx.path("cf_hub.db"), ctx.slot("cf")
    feed = ctx.path("cf_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.sql("INSERT INTO k (id, v) VALUES (8000, 'confirmed')")
    hub_once(ctx, hub, slot, feed)
    st, info = ctx.mirror_state(hub), ctx.slot_info(slot)
    check(info["confirmed_flush_lsn"] == st["confirmed_lsn"]
          and manifest(feed)["end"]["lsn"] == st["confirmed_lsn"],
          "after a --once run of the hub, its slot is confirmed at %s, its mirror at %s, "
          "its feed's end at %s" % (info["confirmed_flush_lsn"], st["confirmed_lsn"],
                                    manifest(feed)["end"]["lsn"]))


def part_midrun(ctx):
    setup_source(ctx)
    marker(ctx)
    hub, dev, slot = ctx.path("mid_hub.db"), ctx.path("mid_dev.db"), ctx.slot("mid")
    feed = ctx.path("mid_feed")
    hub_once(ctx, hub, slot, feed)
    proc = ctx.start(ctx.mirror_args(hub, slot, "pub", "--feed=" + feed, "--feed-interval=1"),
                     tag="mid_hub")
    for i in range(3):
        ctx.sql("INSERT INTO k (id, v) VALUES (%d, 'mid'); UPDATE nokey SET b = 'm%d' WHERE a = %d"
                % (4000 + i, i, i))
        ctx.catch_up(hub, proc=proc)
        ctx.assert_device_equals_hub(dev, hub, feed=feed)
    ctx.assert_mirror_equals_source(hub, *TABLES)
    rc = ctx.stop(proc)
    check(rc == 0, "the hub's service exited %s:\n%s" % (rc, proc.stderr()))
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def part_heal(ctx):
    setup_source(ctx)
    hub, dev, slot = ctx.path("heal_hub.db"), ctx.path("heal_dev.db"), ctx.slot("heal")
    feed = ctx.path("heal_feed")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    epoch = manifest(feed)["epoch"]
    # a NULL where pgmirror never writes one (its NOT NULL taken away, as
    # test_status_damaged does), the integrity check not due
    con = sqlite3.connect(hub)
    version = con.execute("PRAGMA schema_version").fetchone()[0]
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') "
                "WHERE type = 'table' AND name = 'pgmirror_tables'")
    con.execute("PRAGMA schema_version = %d" % (version + 1))
    con.execute("PRAGMA writable_schema = OFF")
    con.commit()
    con.close()
    con = sqlite3.connect(hub)
    con.executescript("""
        CREATE TABLE app_notes (n INTEGER PRIMARY KEY, note TEXT);
        INSERT INTO app_notes (note) VALUES ('mine');
        UPDATE pgmirror_tables SET table_name = NULL WHERE table_name = 'k';
        UPDATE pgmirror_state SET last_check_time = datetime('now'), last_check_result = 'ok';
    """)
    con.close()
    # a table that joins: the run reads pgmirror_tables before it streams
    ctx.sql("""DROP TABLE IF EXISTS heal_more; CREATE TABLE heal_more (id int PRIMARY KEY);
               ALTER PUBLICATION pub ADD TABLE heal_more;
               INSERT INTO k (id, v) VALUES (8100, 'after the heal')""")
    rc, out, err = hub_once(ctx, hub, slot, feed)
    check("pgmirror_tables.table_name is NULL" in err and "rebuilt from a fresh copy" in err,
          "the hub did not heal:\n%s" % err)
    check(manifest(feed)["epoch"] != epoch, "the hub's heal kept the feed's epoch")
    ctx.assert_mirror_equals_source(hub, *TABLES)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)
    ctx.sql("INSERT INTO k (id, v) VALUES (8101, 'after that')")
    hub_once(ctx, hub, slot, feed)
    ctx.assert_device_equals_hub(dev, hub, feed=feed)


def part_busy(ctx):
    setup_source(ctx)
    ctx.sql("DROP TABLE IF EXISTS noise; CREATE TABLE noise (id bigserial PRIMARY KEY, pad text)")
    marker(ctx)
    hub, slot = ctx.path("busy_hub.db"), ctx.slot("busy")
    feed = ctx.path("busy_feed")
    hub_once(ctx, hub, slot, feed)
    proc = ctx.start(ctx.mirror_args(hub, slot, "pub", "--feed=" + feed, "--feed-interval=1",
                                     "-s", "1"), tag="busy_hub")
    ctx.catch_up(hub, proc=proc)

    def noise(conn, i):
        conn.cursor().execute("INSERT INTO noise (pad) SELECT repeat('n', 200) "
                              "FROM generate_series(1, 50)")

    w = harness.Workload(ctx, noise, autocommit=True)
    w.start()
    try:
        w.wait_count(3)
        target = ctx.source_flush_lsn()
        deadline = time.time() + 60 * harness.SLOW
        while True:
            slot_lsn = harness.parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])
            if slot_lsn >= target:
                break
            check(proc.poll() is None, "the hub exited:\n%s" % proc.stderr())
            check(time.time() < deadline,
                  "the busy hub's slot stayed at %s, short of %s, for 60 s (its feed ends at "
                  "%s, its mirror at %s)" % (harness.fmt(slot_lsn), harness.fmt(target),
                                             manifest(feed)["end"]["lsn"],
                                             harness.fmt(ctx.mirror_lsn(hub))))
            time.sleep(0.1)
    finally:
        w.stop()
    rc = ctx.stop(proc)
    check(rc == 0, "the hub's service exited %s:\n%s" % (rc, proc.stderr()))
    ctx.check_slot_not_ahead(hub, slot)


def test(ctx):
    harness.run_parts(ctx, {
        "basic": part_basic, "damage": part_damage, "other": part_other,
        "epoch": part_epoch, "pruned": part_pruned, "usage": part_usage,
        "healed": part_healed, "service": part_service, "joinkill": part_joinkill,
        "rebuild": part_rebuild, "join": part_join, "confirm": part_confirm,
        "midrun": part_midrun, "heal": part_heal, "busy": part_busy,
    })


harness.main(test)

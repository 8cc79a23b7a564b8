"""A column change on a table that gets no further row change is followed
within a service's check (SIGHUP asks for one at once), also one made
before the service started, and by the next --once run, once it has
caught up to its end position:
the source's columns and values, not the old ones. `ALTER TABLE t DROP b,
ADD b char` left the mirror's b with its old integers (and --verify said
differs) until the table's next change, since the stream sends a table's
columns only with a change of its rows. A column renamed, one added with a
default and one dropped are followed too; a table nothing happened to keeps
its rows (its generation stays); two columns that swap names are told
apart (the fingerprint's sum of row hashes must not be linear in their
fields); and the run after that asks nothing more
(the publications' fingerprint is the one it stored: no table synced).
A table whose columns changed and whose rows changed after is followed by
the stream, not copied: the --once run leaves it for after its end
position, by which the stream has brought its columns (copied at start,
those rows would have skipped the user's triggers on the mirror)."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

TABLES = ("recol", "renamed", "added", "dropped", "calm", "streamed", "swapped")


def generations(ctx, path):
    return dict(ctx.mirror_query(path, "SELECT table_name, generation FROM pgmirror_tables"))


def verify_ok(ctx, path, slot):
    rc, out, err = ctx.run(ctx.mirror_args(path, slot, "pub", "--verify"))
    if rc != 0:
        fail("--verify exited %d:\n%s\n%s" % (rc, out, err))


def check_followed(ctx, path, proc, tables, before):
    """SIGHUP asks service proc for a check; it must sync each of tables
    again (a generation other than in before) within a minute."""
    proc.popen.send_signal(signal.SIGHUP)
    deadline = time.time() + 60 * harness.SLOW
    # a table copied again is in pgmirror_tables only under its staged
    # name until its copy takes the old one's place: not followed yet
    while any(generations(ctx, path).get(t, before[t]) == before[t] for t in tables):
        check(proc.poll() is None, "pgmirror exited %s:\n%s" % (proc.poll(), proc.stderr()))
        if time.time() > deadline:
            fail("the service did not follow the column changes of %s within 60 s:\n%s"
                 % (", ".join(tables), proc.stderr()))
        time.sleep(0.2)
    ctx.catch_up(path, proc=proc)
    ctx.assert_mirror_equals_source(path, *TABLES)


def test(ctx):
    ctx.sql("""
        CREATE TABLE recol (id int PRIMARY KEY, a int, b int);
        CREATE TABLE renamed (id int PRIMARY KEY, v text);
        CREATE TABLE added (id int PRIMARY KEY, v text);
        CREATE TABLE dropped (id int PRIMARY KEY, v text, gone int);
        CREATE TABLE calm (id int PRIMARY KEY, v text);
        CREATE TABLE streamed (id int PRIMARY KEY, v text);
        CREATE TABLE swapped (id int PRIMARY KEY, a int, b int);
        INSERT INTO recol SELECT g, g, 10 * g FROM generate_series(1, 20) g;
        INSERT INTO renamed SELECT g, 'r' || g FROM generate_series(1, 20) g;
        INSERT INTO added SELECT g, 'a' || g FROM generate_series(1, 20) g;
        INSERT INTO dropped SELECT g, 'd' || g, g FROM generate_series(1, 20) g;
        INSERT INTO calm SELECT g, 'c' || g FROM generate_series(1, 20) g;
        INSERT INTO streamed SELECT g, 's' || g FROM generate_series(1, 20) g;
        INSERT INTO swapped SELECT g, g, -g FROM generate_series(1, 20) g;
        CREATE PUBLICATION pub FOR TABLE recol, renamed, added, dropped, calm, streamed,
            swapped;
    """)
    ctx.create_marker("pub")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.once(path, slot, "pub")  # the fingerprint is stored
    ctx.assert_mirror_equals_source(path, *TABLES)
    gen0 = generations(ctx, path)

    # column changes, and no row change after them, while a service runs:
    # its check (SIGHUP asks for one at once) follows them
    # on a slow disk (each sync 300 ms): the copies again that follow the
    # columns take long enough for the polls below to see them under way
    proc = ctx.start(ctx.mirror_args(path, slot, "pub", "-v"),
                     env={"LD_PRELOAD": harness.fault_shim("slow_sync")})
    ctx.catch_up(path, proc=proc)
    ctx.sql("""
        ALTER TABLE recol DROP b, ADD b char;
        ALTER TABLE renamed RENAME v TO w;
        ALTER TABLE added ADD c int DEFAULT 7;
        ALTER TABLE dropped DROP gone;
    """)
    changed = ("recol", "renamed", "added", "dropped")
    check_followed(ctx, path, proc, changed, gen0)
    check(ctx.mirror_query(path, "SELECT count(*) FROM recol WHERE b IS NOT NULL") == [(0,)],
          "recol.b kept values after it was dropped and added again")
    err = proc.stderr()
    for t in changed:
        check('the columns of source table "public.%s" changed' % t in err,
              "no line says %s's columns changed:\n%s" % (t, err))
    gen1 = generations(ctx, path)
    check(gen1["calm"] == gen0["calm"], "mirror table calm was synced again")
    check(ctx.stop(proc) == 0, "the service did not exit 0:\n%s" % proc.stderr())
    verify_ok(ctx, path, slot)

    # a column change before a service starts: its check at start leaves
    # the table for later, and its next check (SIGHUP) follows it
    ctx.sql("ALTER TABLE calm ADD w int DEFAULT 3")
    proc = ctx.start_follow(path, slot, "pub", "-v")
    ctx.catch_up(path, proc=proc)
    check_followed(ctx, path, proc, ("calm",), gen1)
    check(ctx.stop(proc) == 0, "the service did not exit 0:\n%s" % proc.stderr())
    gen1 = generations(ctx, path)

    # from cron: column changes, no row change after them but for
    # streamed's, and one --once run
    ctx.sql("""
        ALTER TABLE recol DROP b, ADD b text;
        ALTER TABLE renamed RENAME w TO x;
        ALTER TABLE added ADD d int DEFAULT 8;
        ALTER TABLE streamed ADD z int;
        UPDATE streamed SET z = id WHERE id <= 3;
    """)
    _, _, err = ctx.once(path, slot, "pub", "-v")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check(ctx.mirror_query(path, "SELECT count(*) FROM recol WHERE b IS NOT NULL") == [(0,)],
          "recol.b kept values after it was dropped and added again")
    gen2 = generations(ctx, path)
    for t in ("recol", "renamed", "added"):
        check('the columns of source table "public.%s" changed' % t in err and gen2[t] != gen1[t],
              "the --once run did not sync %s again:\n%s" % (t, err))
    for t in ("calm", "dropped", "swapped"):
        check(gen2[t] == gen1[t], "the --once run synced %s again:\n%s" % (t, err))
    check('mirror table "streamed" follows' in err and '"streamed" is synced again' not in err,
          "the stream did not follow streamed's columns, or it was copied again:\n%s" % err)
    verify_ok(ctx, path, slot)

    # two columns that swap names, and nothing else: the fingerprint differs
    _, _, err = ctx.once(path, slot, "pub", "-v")
    check("the publications are as the mirror follows them" in err,
          "the run after the --once run that followed the columns was not quiet:\n%s" % err)
    ctx.sql("ALTER TABLE swapped RENAME a TO tmp; ALTER TABLE swapped RENAME b TO a;"
            "ALTER TABLE swapped RENAME tmp TO b")
    _, _, err = ctx.once(path, slot, "pub", "-v")
    ctx.assert_mirror_equals_source(path, *TABLES)
    check('the columns of source table "public.swapped" changed' in err,
          "the --once run did not sync swapped again:\n%s" % err)
    gen2 = generations(ctx, path)
    verify_ok(ctx, path, slot)

    # nothing changed since: nothing is read again, nothing synced
    _, _, err = ctx.once(path, slot, "pub", "-v")
    check("the publications are as the mirror follows them" in err and "synced again" not in err,
          "a run after the sync read the publications again:\n%s" % err)
    check(generations(ctx, path) == gen2, "a quiet run synced a table again")
    verify_ok(ctx, path, slot)


harness.main(test)

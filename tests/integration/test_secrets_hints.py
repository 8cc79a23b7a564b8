"""No password shows through a command a message gives to run: the messages
that print one (a slot that has moved past the mirror, a slot this mirror
did not create, a stopped --resync) print -d with its password masked, for
a password with a quote in keyword form, with a quote in a URI, and with
an escaped blank in keyword form (which libpq reads as part of the value).
Neither the password nor any piece of it appears on stderr, in last_error,
in --status or --status --json, in the mirror's files, or in
/proc/PID/cmdline; the command shows password=******** and still names the
rest of the source (its shell quoting once turned ' into '\\'' after the
mask, and the mask of an unquoted value stopped at the escaped blank)."""

import os
import shlex
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROLE = "pgm_secrets_hints_app"
MASKED = "password=********"
NOPASS = {"PGPASSWORD": None, "PGPASSFILE": os.devnull}


def save(path, to):
    """path and its -wal, copied to to (a -wal there that path lacks goes)."""
    for ext in ("", "-wal"):
        if os.path.exists(path + ext):
            shutil.copyfile(path + ext, to + ext)
        elif os.path.exists(to + ext):
            os.unlink(to + ext)


def forms(ctx):
    """(what, password, -d, pieces of the password that must never show):
    the pieces are letters no LSN, slot name or mask can hold."""
    host, port, db = "127.0.0.1", os.environ.get("PGPORT") or "5432", ctx.dbname
    tcp = "host=%s port=%s dbname=%s user=%s" % (host, port, db, ROLE)
    return [
        ("a quote in a keyword value", "Qx7'Zr9", tcp + " password='Qx7\\'Zr9'",
         ["Qx7", "Zr9"]),
        ("a quote in a URI's password", "Kw4'Vy8",
         "postgresql://%s:Kw4'Vy8@%s:%s/%s" % (ROLE, host, port, db), ["Kw4", "Vy8"]),
        ("an escaped blank in a keyword value", "Jm5 Tp2", tcp + " password=Jm5\\ Tp2",
         ["Jm5", "Tp2"]),
    ]


def shows(ctx, path, pieces, err):
    """Where a piece of the password shows: stderr, last_error, --status,
    --status --json, the mirror's files."""
    places = [("stderr", err)]
    if os.path.exists(path):
        places.append(("last_error", str(ctx.mirror_state(path)["last_error"])))
        for args in (["--status"], ["--status", "--json"]):
            rc, out, e = ctx.run(args + [path])
            check(rc == 0, "%s exited %d: %s" % (" ".join(args), rc, e))
            places.append((" ".join(args), out))
    places += [(name, data.decode("latin-1")) for name, data in harness.mirror_files(path)]
    return ["%r in %s" % (p, where) for where, text in places for p in pieces if p in text]


def hint_dbname(err, after):
    """The -d of the command in the message line holding after."""
    line = [ln for ln in err.splitlines() if after in ln]
    check(line, "no message with %r:\n%s" % (after, err))
    words = shlex.split(line[0].split(after, 1)[1])
    check("-d" in words, "the command in %r has no -d" % line[0])
    return words[words.index("-d") + 1]


def check_hint(soft, what, err, after):
    d = hint_dbname(err, after)
    harness.log("%s: -d %s" % (what, shlex.quote(d)))
    soft.check(MASKED in d and ROLE in d,
               "%s: the command's -d is %r: not masked as %r, or the role is gone"
               % (what, d, MASKED))


def moved_past(ctx, soft, form, path, slot):
    what, _, dsn, pieces = form
    rc, _, err = ctx.run(["-d", dsn, "-S", slot, "--once", path], env=NOPASS)
    soft.check(rc == 1 and "has moved past" in err,
               "%s: a slot moved past the mirror: exit %d\n%s" % (what, rc, err))
    if "has moved past" in err:
        check_hint(soft, what, err, "To start over: ")
    found = shows(ctx, path, pieces, err)
    soft.check(not found, "%s, a slot moved past the mirror: the password shows: %s"
               % (what, ", ".join(found)))


def not_ours(ctx, soft, form, slot, n):
    what, _, dsn, pieces = form
    path = ctx.path("fresh%d.db" % n)
    rc, _, err = ctx.run(["-d", dsn, "-S", slot, "-P", "pub", "--once", path], env=NOPASS)
    soft.check(rc == 1 and "did not create it" in err,
               "%s: a slot this mirror did not create: exit %d\n%s" % (what, rc, err))
    if "did not create it" in err:
        check_hint(soft, what, err, "drop it first with ")
    found = shows(ctx, path, pieces, err)
    soft.check(not found, "%s, a slot this mirror did not create: the password shows: %s"
               % (what, ", ".join(found)))


def resync_stopped(ctx, soft, form, path, slot):
    """--resync stopped by SIGTERM while its snapshot waits for an open
    transaction; meanwhile its command line is read."""
    what, _, dsn, pieces = form
    holder = ctx.hold_xid()
    proc = ctx.start(["-d", dsn, "-S", slot, "--resync", "--once", path], env=NOPASS)
    deadline = time.time() + 60 * harness.SLOW
    cur = ctx.admin.cursor()
    while True:
        cur.execute("SELECT 1 FROM pg_replication_slots s JOIN pg_locks l "
                    "ON l.pid = s.active_pid AND NOT l.granted "
                    "WHERE s.slot_name LIKE %s", (slot + "\\_sync\\_%",))
        if cur.fetchone():
            break
        check(proc.poll() is None, "%s: --resync exited %s before its snapshot waited:\n%s"
              % (what, proc.poll(), proc.stderr()))
        check(time.time() < deadline, "%s: --resync's snapshot did not wait within 60 s:\n%s"
              % (what, proc.stderr()))
        time.sleep(0.05)
    with open("/proc/%d/cmdline" % proc.pid, "rb") as f:
        cmdline = f.read().decode("latin-1")
    rc = ctx.stop(proc)
    holder.rollback()
    holder.close()
    err = proc.stderr()
    soft.check(rc == 0 and "--resync is not remembered" in err,
               "%s: a stopped --resync: exit %d\n%s" % (what, rc, err))
    if "--resync is not remembered" in err:
        check_hint(soft, what, err, ", run ")
    found = shows(ctx, path, pieces, err)
    found += ["%r in /proc/PID/cmdline" % p for p in pieces if p in cmdline]
    soft.check(not found, "%s, a stopped --resync: the password shows: %s"
               % (what, ", ".join(found)))


def test(ctx):
    ctx.create_tables("CREATE TABLE t (id int PRIMARY KEY, v text);"
                      "INSERT INTO t VALUES (1, 'one');"
                      "CREATE PUBLICATION pub FOR TABLE t")
    ctx.create_marker("pub")
    if not ctx.sql("SELECT 1 FROM pg_roles WHERE rolname = %s", ROLE):
        ctx.sql("CREATE ROLE %s LOGIN REPLICATION" % ROLE)
    ctx.sql("GRANT SELECT ON t, pgm_marker TO %s" % ROLE)

    # a mirror its slot has moved past: restored from an older copy
    behind, slot = ctx.path("behind.db"), ctx.slot("b")
    ctx.once(behind, slot, "pub")
    save(behind, ctx.path("older.db"))
    ctx.sql("INSERT INTO t VALUES (2, 'two')")
    ctx.once(behind, slot, "pub")
    save(ctx.path("older.db"), behind)
    # a mirror in sync, to --resync
    synced, slot_r = ctx.path("synced.db"), ctx.slot("r")
    ctx.once(synced, slot_r, "pub")

    soft = harness.Soft()
    for n, form in enumerate(forms(ctx)):
        ctx.sql("ALTER ROLE %s PASSWORD %%s" % ROLE, form[1])
        moved_past(ctx, soft, form, behind, slot)
        not_ours(ctx, soft, form, slot, n)
        resync_stopped(ctx, soft, form, synced, slot_r)
    soft.done()


harness.main(test)

"""A SQL_ASCII source: the server stores text bytes unchecked and cannot
convert them.  Asked for UTF-8, it checks them on the way out, and
pgmirror checks them again.  Valid UTF-8 is mirrored as it is (copy and
stream); a value that is not UTF-8 stops the run with a message that says
what to do (naming the table in a copy), instead of putting invalid text
into the mirror.  (Issue 8, item 1.)"""

import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def raw(hexbytes):
    """A text value of exactly these bytes (SQL_ASCII converts nothing)."""
    return "convert_from('\\x%s'::bytea, 'SQL_ASCII')" % hexbytes


def mirror_hex(ctx, path):
    return ctx.mirror_query(path, "SELECT id, hex(t), typeof(t) FROM t ORDER BY id")


def test(ctx):
    check(ctx.sql1("SHOW server_encoding") == "SQL_ASCII", "not a SQL_ASCII database")
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, t text);"
            "CREATE TABLE other (id int PRIMARY KEY);"
            "CREATE PUBLICATION pub FOR TABLE t, other;"
            "INSERT INTO t VALUES (1, %s), (2, 'plain')" % raw("636166c3a9"))
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", env={"PGCLIENTENCODING": "SQL_ASCII"})
    got = mirror_hex(ctx, path)
    check(got == [(1, "636166C3A9", "text"), (2, "706C61696E", "text")],
          "after the copy the mirror holds %r" % (got,))

    ctx.sql("INSERT INTO t VALUES (3, %s)" % raw("e282ac"))
    ctx.once(path, slot, "pub")
    got = mirror_hex(ctx, path)
    check(got[-1] == (3, "E282AC", "text"), "streamed UTF-8 became %r" % (got[-1],))
    ctx.checked(path)

    # a LATIN1 é (E9) is not UTF-8: refused, never stored
    ctx.sql("INSERT INTO other VALUES (1)")
    ctx.sql("INSERT INTO t VALUES (4, %s)" % raw("636166e9"))
    rc, out, err = ctx.once(path, slot, "pub", expect=1)
    check("SQL_ASCII" in err and "correct the value on the source" in err
          and "--drop-slot" in err,
          "the message does not say what is wrong and what to do:\n%s" % err)
    hint = [ln for ln in err.splitlines() if "drop the slot: " in ln]
    words = shlex.split(hint[0].split("drop the slot: ", 1)[1]) if hint else []
    check(words[:1] == ["pgmirror"] and "-d" in words and "--drop-slot" in words
          and words[-1] == path, "the hint is not a command that runs as written:\n%s" % err)
    check("connection to the source lost" not in err,
          "a change the source cannot send is not a lost connection:\n%s" % err)
    got = mirror_hex(ctx, path)
    check([r for r in got if r[0] == 4] == [], "invalid text was stored: %r" % (got,))
    # a service stops too, rather than trying again for ever
    p = ctx.start_follow(path, slot, "pub")
    try:
        p.popen.wait(timeout=60)
    except harness.subprocess.TimeoutExpired:
        harness.fail("the service kept retrying a change the source cannot send:\n"
                     + p.stderr())
    check(p.poll() == 1 and "SQL_ASCII" in p.stderr(),
          "the service exited %s:\n%s" % (p.poll(), p.stderr()))

    # the copy refuses it just the same
    path2, slot2 = ctx.path("second.db"), ctx.slot("second")
    rc, out, err = ctx.once(path2, slot2, "pub", expect=1)
    check("SQL_ASCII" in err and '"public.t"' in err,
          "the copy's message does not say what is wrong where:\n%s" % err)


harness.main(test, encoding="SQL_ASCII")

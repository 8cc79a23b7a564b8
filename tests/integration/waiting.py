"""What the tests of tables that wait share (test_waiting_*.py): a role
that is not a superuser, with REPLICATION, for the test's run, and the
waiting tables as --status --json shows them."""

import json

from harness import check, parse_lsn, qident


def with_role(ctx, run_all):
    """Calls run_all(ctx, role) with a new LOGIN REPLICATION role (password
    'pw'), which is dropped afterwards with what it owns."""
    role = ctx.dbname + "_dev"
    admin = ctx.admin.cursor()
    admin.execute("DROP ROLE IF EXISTS %s" % qident(role))
    admin.execute("CREATE ROLE %s LOGIN REPLICATION PASSWORD 'pw'" % qident(role))
    try:
        run_all(ctx, role)
    finally:
        ctx.sql("DROP OWNED BY %s" % qident(role))
        admin.execute("DROP ROLE IF EXISTS %s" % qident(role))


def status(ctx, path, *extra):
    rc, out, err = ctx.run(["--status"] + list(extra) + [path])
    check(rc == 0, "--status %s exited %d: %s" % (" ".join(extra), rc, err))
    return out


def waiting_json(ctx, path):
    """({source name: table entry} of the waiting tables, the whole object)."""
    doc = json.loads(status(ctx, path, "--json"))
    return dict((t["source"], t) for t in doc["tables"] if t.get("state") == "waiting"), doc


def slot_lsn(ctx, slot):
    return parse_lsn(ctx.slot_info(slot)["confirmed_flush_lsn"])



# A json[] value PostgreSQL takes (its parser nests as deep as its stack
# allows) but the mirror cannot store: an element nested 7,000 deep, past
# the 6,400 levels the mirror's JSON check allows.
DEEP_JSON = "ARRAY[repeat('[', 7000) || repeat(']', 7000)]::json[]"

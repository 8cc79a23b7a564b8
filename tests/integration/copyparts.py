"""What the tests of the copy in parts share (test_copy_*.py): pgmirror's
arguments through a link proxy, and the check of what a cut copy left."""

import os

import harness
from harness import check


def link_args(ctx, link, path, slot, pub, *extra):
    """pgmirror's arguments for a run that reaches the source through link
    (linkproxy.LinkProxy)."""
    dsn = harness.make_dsn(dbname=ctx.dbname, host=link.host, port=link.port,
                           user=os.environ.get("PGUSER"), password=os.environ.get("PGPASSWORD"))
    return ["-d", dsn, "-S", slot, "-P", pub] + list(extra) + [path]


def check_parts_left(ctx, path, what):
    """Nothing looks complete (initial_copy_done = 0), and each table left is
    either whole (equal to the source) or the committed parts of a copy
    that goes on: as many rows as its copy says it stored."""
    st = ctx.mirror_state(path)
    check(st["initial_copy_done"] == 0, "%s left initial_copy_done = %r"
          % (what, st["initial_copy_done"]))
    for name, state, stored in ctx.mirror_query(
            path, "SELECT table_name, copy_state, copy_rows FROM pgmirror_tables"):
        if state is not None and not state.endswith(" *\n"):
            n = ctx.mirror_query(path, "SELECT count(*) FROM \"%s\"" % name)[0][0]
            check(n == stored, "%s left %d rows of %s, whose copy stored %d"
                  % (what, n, name, stored))
        else:
            ctx.assert_mirror_equals_source(path, name)

"""What the tests of the copy in parts share (test_copy_*.py): pgmirror's
arguments through a link proxy, and the check of what a cut copy left."""

import os
import re

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
        if state is not None and not copy_done(state):
            n = ctx.mirror_query(path, "SELECT count(*) FROM \"%s\"" % name)[0][0]
            check(n == stored, "%s left %d rows of %s, whose copy stored %d"
                  % (what, n, name, stored))
        else:
            ctx.assert_mirror_equals_source(path, name)


def parse_ranges(state):
    """The ranges in copy_state (copy_ranges.h), parsed (a text key's bytes
    may hold ' *' and newlines): a list of (lsn, key), key None for the
    range that reaches the table's end, else its items' texts (an
    integer's digits, or the text a key of another kind is kept as)."""
    data = state.encode()
    i = data.index(b"\n") + 1  # past the header
    ranges = []
    while i < len(data):
        sp = data.index(b" ", i)
        lsn, i = data[i:sp].decode(), sp + 1
        if data[i:i + 2] == b"*\n":
            ranges.append((lsn, None))
            i += 2
            continue
        items = []
        while data[i:i + 1] != b"\n":
            kind, i = data[i:i + 1], i + 1
            if kind == b"i":
                j = data.index(b";", i)
                items.append(data[i:j].decode())
                i = j + 1
            else:
                j = data.index(b":", i)
                n = int(data[i:j])
                items.append(data[j + 1:j + 1 + n].decode())
                i = j + 1 + n
        ranges.append((lsn, items))
        i += 1
    return ranges


def copy_done(state):
    """Whether the copy whose copy_state is state reached the table's end."""
    ranges = parse_ranges(state)
    return bool(ranges) and ranges[-1][1] is None


def parse_last_key(state):
    """The last key in copy_state as its items' texts, or None when there is
    none (no state, or the copy reached the end)."""
    if state is None:
        return None
    ranges = parse_ranges(state)
    return ranges[-1][1] if ranges else None


def progress(ctx, path, table):
    """(rows stored, the last key's items or None) of the copy of table."""
    try:
        rows = ctx.mirror_query(path, "SELECT copy_rows, copy_state FROM pgmirror_tables "
                                "WHERE table_name = ?", (table,))
    except Exception:  # noqa: BLE001 - the file is being made
        return 0, None
    if not rows:
        return 0, None
    return rows[0][0] or 0, parse_last_key(rows[0][1])


def wait_progress(ctx, path, table, more_than, proc):
    """(rows, last key) once the copy of table stored more than more_than
    rows in parts; (rows, None) when proc ended before. Fails once the
    copy stored nothing for 120 s (not after 120 s of copying)."""
    def step():
        rows, key = progress(ctx, path, table)
        if rows > more_than and key is not None:
            return (rows, key), rows
        if proc.poll() is not None:
            return (rows, None), rows
        return None, rows

    return harness.wait_moving("the copy of %s to pass %d rows" % (table, more_than), step,
                               quiet=120, interval=0.002,
                               detail=lambda: "\nstderr:\n" + proc.stderr())


def went_on(err, table, stored):
    """Whether a try's messages say the copy of public.table went on after
    the stored rows."""
    return re.search(r'copy of "public\.%s" goes on after the %d rows stored'
                     % (table, stored), err) is not None


def cut_try(ctx, link, args, tag, env, table, stored, r, wait):
    """Try r of a --once run (args) through link: cut the link once
    wait(proc) returns (the copy of table got far enough), and check that
    the try exited 1 and, after the first, went on after the stored rows.
    Returns what wait returned."""
    proc = ctx.start(args, tag=tag, env=env)
    got = wait(proc)
    link.cut()
    rc = proc.popen.wait(60 * harness.SLOW)
    err = proc.stderr()
    check(rc == 1, "try %d exited %d after the cut, expected 1:\n%s" % (r, rc, err))
    check(re.search(r'^pgmirror: error: .*"public\.%s"' % table, err, re.M),
          "try %d's error does not name the table whose copy the cut stopped:\n%s"
          % (r, err))
    check(r == 1 or went_on(err, table, stored),
          "try %d did not go on after the %d rows stored:\n%s" % (r, stored, err))
    return got


def last_try(ctx, args, env, table, stored):
    """The try after the cuts: it finishes, going on after the stored rows.
    Returns its messages."""
    rc, _, err = ctx.run(args, env=env, timeout=180)
    check(rc == 0, "the last try exited %d:\n%s" % (rc, err))
    check(went_on(err, table, stored),
          "the last try did not go on after the %d rows stored:\n%s" % (stored, err))
    return err

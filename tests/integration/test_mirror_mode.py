"""File modes: a new mirror is created 0600 whatever the umask (here 022),
and so are its -wal and -shm, since it holds the source's rows; an existing
mirror keeps the mode its owner gave it (0640 here), through --once runs
and a service."""

import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def modes(path):
    out = {}
    for suffix in ("", "-wal", "-shm"):
        try:
            out[suffix or "db"] = "%04o" % stat.S_IMODE(os.stat(path + suffix).st_mode)
        except FileNotFoundError:
            out[suffix or "db"] = None
    return out


def service_modes(ctx, path, slot, first):
    """Modes of the three files while a service runs and has caught up."""
    p = ctx.start_follow(path, slot, "pub", first=first)
    ctx.catch_up(path, proc=p)
    m = modes(path)
    check(ctx.stop(p) == 0, "service exited non-zero:\n" + p.stderr())
    return m


def test(ctx):
    os.umask(0o022)
    ctx.sql("CREATE TABLE t (id int PRIMARY KEY, v text);"
            "CREATE PUBLICATION pub FOR TABLE t;")
    ctx.create_marker("pub")
    ctx.sql("INSERT INTO t VALUES (1, 'a')")

    # a new mirror, made by a service
    path, slot = ctx.path(), ctx.slot()
    m = service_modes(ctx, path, slot, first=False)
    check(m == {"db": "0600", "-wal": "0600", "-shm": "0600"},
          "new mirror under umask 022: modes %s, expected 0600 for all" % m)

    # a new mirror, made by --once
    path2, slot2 = ctx.path("once.db"), ctx.slot("t2")
    ctx.once(path2, slot2, "pub")
    check(modes(path2)["db"] == "0600", "new mirror made by --once: mode %s"
          % modes(path2)["db"])

    # an existing mirror keeps its mode
    os.chmod(path, 0o640)
    ctx.sql("INSERT INTO t VALUES (2, 'b')")
    ctx.once(path, slot, "pub")
    check(modes(path)["db"] == "0640", "existing 0640 mirror became %s after "
          "--once" % modes(path)["db"])
    m = service_modes(ctx, path, slot, first=False)
    check(m == {"db": "0640", "-wal": "0640", "-shm": "0640"},
          "existing 0640 mirror, while a service runs: %s" % m)
    check(modes(path)["db"] == "0640", "existing 0640 mirror became %s"
          % modes(path)["db"])
    ctx.assert_mirror_equals_source(path, "t")


harness.main(test)

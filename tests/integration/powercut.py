"""Power cuts for the integration tests: the directory a mirror lives in
(and every directory under it, such as a feed's), with the durable state
the powercut shim (tests/fault/powercut.c) keeps beside it, and what a cut
leaves checked.

A run of pgmirror under the shim (PowerCut.env()) is killed at a chosen
event; PowerCut.rewind() then puts the tree back to what a power cut at
that moment would leave: each file as its last sync found it, each
directory with the names it had at its last sync (a name in a
subdirectory only when the subdirectory's own name survived too).
PowerCut.settle() declares everything there now durable (after a run that
was not cut, and after the test read or wrote the files itself).

Soak (test_powercut.py, bench/powercut.sh) cuts every phase of a mirror's
life this way, and after each cut checks what is left (PowerCut.problems()):
the file as the cut left it passes PRAGMA integrity_check, the slot is not
ahead of it, and the next run, without a cut, ends with the mirror equal
to the source.

PGMIRROR_POWERCUT_LAZYFS=MOUNT,FIFO cross-checks against LazyFS
(a FUSE file system that keeps unsynced writes in a cache of its own and
drops them on "lazyfs::clear-cache"): the directory is made under MOUNT,
a rewind is LazyFS's clear-cache, and a settle syncs every file. LazyFS
passes names straight to the disk, so that mode loses unsynced data only,
never a name; it is for a soak by hand (set around bench/powercut.sh), not CI.
"""

import os
import shutil
import sqlite3
import stat
import tempfile
import time

import harness


class PowerCut:
    def __init__(self, ctx, name="pc"):
        self.ctx = ctx
        self.dir = os.path.join(ctx.tmpdir, name)
        self.shadow = os.path.join(ctx.tmpdir, name + ".durable")
        self.lazyfs = os.environ.get("PGMIRROR_POWERCUT_LAZYFS")
        if self.lazyfs:
            mount, self.fifo = self.lazyfs.split(",")
            self.dir = os.path.join(mount, os.path.basename(ctx.tmpdir))
        os.makedirs(self.dir)
        os.makedirs(self.shadow)
        self.shim = harness.fault_shim("powercut")
        self.settle()

    def path(self, name="mirror.db"):
        return os.path.join(self.dir, name)

    def env(self, op="any", nth=None, after=False, match=None, nosync=False,
            count=None, eio=False, trace=False):
        """The environment of a run under the shim: cut at the nth event
        of kind op (None: no cut), before it or after it; eio: that event
        fails with EIO instead, and the run goes on; nosync: syncs sync
        nothing (a string: of paths that end so); trace: a line on stderr
        for each event ("powercut: event N KIND PATH")."""
        return {"LD_PRELOAD": self.shim, "PGMIRROR_CUT_DIR": self.dir,
                "PGMIRROR_CUT_SHADOW": self.shadow, "PGMIRROR_CUT_OP": op,
                "PGMIRROR_CUT_NTH": str(nth) if nth else None,
                "PGMIRROR_CUT_AFTER": "1" if after else None,
                "PGMIRROR_CUT_MATCH": match,
                "PGMIRROR_CUT_NOSYNC": "1" if nosync else None,
                "PGMIRROR_CUT_NOSYNC_MATCH": nosync if isinstance(nosync, str) else None,
                "PGMIRROR_CUT_EIO": "1" if eio else None,
                "PGMIRROR_CUT_COUNT": count,
                "PGMIRROR_CUT_TRACE": "1" if trace else None}

    def _entries(self):
        """(relative path, lstat) of everything in the tree, parents first."""
        out = []
        for top, dirs, files in os.walk(self.dir):
            dirs.sort()
            for name in dirs + sorted(files):
                p = os.path.join(top, name)
                out.append((os.path.relpath(p, self.dir), os.lstat(p)))
        return out

    def settle(self):
        """Everything in the tree is durable now."""
        entries = self._entries()
        if self.lazyfs:
            for rel, st in entries:
                fd = os.open(os.path.join(self.dir, rel), os.O_RDONLY)
                os.fsync(fd)
                os.close(fd)
        for f in os.listdir(self.shadow):
            os.unlink(os.path.join(self.shadow, f))
        lines = []
        for rel, st in entries:
            if stat.S_ISDIR(st.st_mode):
                lines.append("dir %s\n" % rel)
            elif stat.S_ISREG(st.st_mode):
                key = "%d.%d" % (st.st_dev, st.st_ino)
                shutil.copyfile(os.path.join(self.dir, rel),
                                os.path.join(self.shadow, "ino." + key))
                lines.append("%s %s\n" % (key, rel))
        with open(os.path.join(self.shadow, "names"), "w") as f:
            f.writelines(lines)

    def rewind(self):
        """The directory as a power cut now leaves it: the names of its last
        sync, each file with what its last sync held (empty if none)."""
        if self.lazyfs:
            with open(self.fifo, "w") as f:
                f.write("lazyfs::clear-cache\n")
            time.sleep(0.5)  # LazyFS says when it is done on a FIFO that loses lines
            self.settle()
            return
        with open(os.path.join(self.shadow, "names")) as f:
            names = [line.rstrip("\n").split(" ", 1) for line in f if line.strip()]
        for name in os.listdir(self.dir):
            p = os.path.join(self.dir, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
        dirs = {""} | {rel for key, rel in names if key == "dir"}

        def kept(rel):   # its directory and every one above it kept their names
            parent = os.path.dirname(rel)
            return parent == "" or (parent in dirs and kept(parent))

        for key, rel in sorted(names, key=lambda n: n[1].count("/")):
            if not kept(rel):
                continue
            dst = os.path.join(self.dir, rel)
            if key == "dir":
                os.mkdir(dst, 0o755)
                continue
            src = os.path.join(self.shadow, "ino." + key)
            if os.path.exists(src):
                shutil.copyfile(src, dst)
            else:
                open(dst, "wb").close()
            os.chmod(dst, 0o600)
        self.settle()

    def files(self):
        return sorted(os.listdir(self.dir))

    def problems_after_cut(self, slot, heal_allowed=False):
        """What the cut left, read from a copy (a reader must not change
        what pgmirror finds): the mirror passes the integrity check and the
        slot is not ahead of it (unless a heal's new file is there: the slot
        is then the new file's)."""
        found = []
        path = self.path()
        if not os.path.exists(path):
            return found
        tmp = tempfile.mkdtemp(prefix="pgm_pc_copy.")
        try:
            for name in os.listdir(self.dir):
                if os.path.isfile(os.path.join(self.dir, name)):
                    shutil.copyfile(os.path.join(self.dir, name), os.path.join(tmp, name))
            con = sqlite3.connect(os.path.join(tmp, "mirror.db"))
            try:
                res = [r[0] for r in con.execute("PRAGMA integrity_check")]
                if res != ["ok"] and not heal_allowed:
                    found.append("integrity_check after the cut: %s" % "; ".join(res))
                try:
                    st = con.execute("SELECT confirmed_lsn, initial_copy_done "
                                     "FROM pgmirror_state").fetchall()
                except sqlite3.Error:
                    st = []
            except sqlite3.Error as e:
                if not heal_allowed:
                    found.append("the mirror cannot be read after the cut: %s" % e)
                st = []
            finally:
                con.close()
        finally:
            shutil.rmtree(tmp)
        info = self.ctx.slot_info(slot)
        rebuilding = os.path.exists(path + ".rebuild")
        if (st and st[0][1] and info is not None and info["confirmed_flush_lsn"]
                and not rebuilding):
            slsn = harness.parse_lsn(info["confirmed_flush_lsn"])
            mlsn = harness.parse_lsn(st[0][0])
            if slsn > mlsn:
                found.append("slot %s at %s is ahead of the mirror at %s after the cut"
                             % (slot, info["confirmed_flush_lsn"], st[0][0]))
        return found

    def integrity(self):
        con = sqlite3.connect(self.path())
        try:
            return [r[0] for r in con.execute("PRAGMA integrity_check")]
        finally:
            con.close()

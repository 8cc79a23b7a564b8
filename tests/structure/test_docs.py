#!/usr/bin/env python3
"""test_docs.py: what the documents say of the program's surface matches
the program. Reads the source tree as text:

- every column of pgmirror's own tables (sql/schema.sql, and the columns
  mirror_upgrade() adds) is named in docs/mirror-file.md;
- the format number docs/mirror-file.md gives ("now N") is
  MIRROR_FORMAT_VERSION;
- every long option of src/main.c is in README.md and in pgmirror.1, and
  every long option the two name is one of src/main.c's;
- every installed path the documents, units and examples name
  (/usr/share/doc/pgmirror/examples/NAME, /usr/lib/pgmirror/NAME, a unit
  pgmirror...@NAME.service or .timer) is one the package installs;
- every relative link between the documents leads to a file that exists.
Exits 1 naming each thing that drifted."""

import os
import re
import sys

TOP = os.environ.get("PGMIRROR_SRCDIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")


def read(rel):
    """The text of rel; a man page's escaped hyphens as hyphens."""
    with open(os.path.join(TOP, rel), encoding="utf-8") as f:
        text = f.read()
    return text.replace("\\-", "-") if rel.endswith(".1") else text


def main():
    bad = []
    mirror_doc = read("docs/mirror-file.md")

    # the columns of pgmirror's own tables
    schema = re.sub(r"--[^\n]*", "", read("sql/schema.sql"))
    columns = []
    for table, body in re.findall(r"CREATE TABLE IF NOT EXISTS (pgmirror_\w+) \((.*?)\n\);",
                                  schema, re.S):
        for line in body.split(","):
            m = re.match(r"\s*([a-z_]+)\s+(TEXT|INTEGER|REAL)", line)
            if m:
                columns.append((table, m.group(1)))
    columns += re.findall(r'\{ "(pgmirror_\w+)", "(\w+)",', read("src/mirror/mirror_sync.c"))
    if len(columns) < 20:
        print("test_docs: only %d columns read from sql/schema.sql" % len(columns))
        return 1
    for table, column in sorted(set(columns)):
        if "`%s`" % column not in mirror_doc:
            bad.append("docs/mirror-file.md does not name column %s.%s" % (table, column))

    # the format number
    version = re.search(r"#define MIRROR_FORMAT_VERSION (\d+)",
                        read("include/pgmirror/mirror.h")).group(1)
    said = re.findall(r"`format_version` \(the mirror file's format, now (\d+)", mirror_doc)
    if said != [version]:
        bad.append("docs/mirror-file.md gives format_version %s; the program's is %s"
                   % (said, version))

    # the options
    main_c = read("src/main.c")
    options = set(re.findall(r'\{"([a-z-]+)", (?:no|required|optional)_argument', main_c))
    if len(options) < 15:
        print("test_docs: only %d options read from src/main.c" % len(options))
        return 1
    readme, man = read("README.md"), read("pgmirror.1")
    man_options = set(re.findall(r"(?<![\w-])--([a-z][a-z-]*[a-z])", man))
    readme_options = set(re.findall(r"(?<![\w-])--([a-z][a-z-]*[a-z])", readme))
    for o in sorted(options):
        if o not in readme_options:
            bad.append("README.md does not name --%s" % o)
        if o not in man_options:
            bad.append("pgmirror.1 does not name --%s" % o)
    for o in sorted(man_options - options):
        bad.append("pgmirror.1 names --%s, which pgmirror does not have" % o)

    # the installed files
    installed = read("debian/pgmirror.install").split("\n")
    examples = {os.path.basename(l) for l in read("debian/pgmirror.examples").split()}
    libexec = {os.path.basename(l.split()[0]) for l in installed
               if l.strip().endswith("usr/lib/pgmirror")}
    units = {os.path.basename(l.split()[0]) for l in installed if "systemd/system" in l}
    texts = [t for t in ("README.md", "pgmirror.1", "debian/README.Debian")
             if os.path.exists(os.path.join(TOP, t))]
    for d in ("docs", "systemd", "examples", "metrics"):
        if os.path.isdir(os.path.join(TOP, d)):
            texts += [os.path.join(d, n) for n in sorted(os.listdir(os.path.join(TOP, d)))]
    for rel in texts:
        text = read(rel)
        for name in re.findall(r"/usr/share/doc/pgmirror/examples/([\w.@-]*\w)", text):
            if name not in examples:
                bad.append("%s names examples/%s, which the package does not install"
                           % (rel, name))
        for name in re.findall(r"/usr/lib/pgmirror/([\w.-]*\w)", text):
            if name not in libexec:
                bad.append("%s names /usr/lib/pgmirror/%s, which the package does not "
                           "install" % (rel, name))
        for unit, kind in re.findall(r"\b(pgmirror(?:-[a-z]+)?)@[A-Za-z%*]*\.(service|timer)",
                                     text):
            if "%s@.%s" % (unit, kind) not in units:
                bad.append("%s names %s@NAME.%s, which the package does not install"
                           % (rel, unit, kind))
        # links between the documents
        if rel.endswith(".md"):
            for link in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
                if not os.path.exists(os.path.join(TOP, os.path.dirname(rel), link)):
                    bad.append("%s links to %s, which does not exist" % (rel, link))
    for b in bad:
        print("test_docs: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

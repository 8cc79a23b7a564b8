#!/usr/bin/env python3
"""test_call_loops.py: no file of src/ calls a function of a file that
calls it back, directly or around a loop (README.md, "Design").

Reads the C sources as text: a function is defined where a line at the
start of a line opens its parameter list and the body's brace opens the
next line (the house style); a file calls it where it names it (a call, or its
address taken, as in a table of functions). Prints, for each file, the files whose functions it calls; with
--graph, only that. Exits 1 when a loop is found, naming its files."""

import os
import re
import sys

TOP = os.environ.get("PGMIRROR_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SRC = os.path.join(TOP, "src")

# (a trailing attribute macro, such as PGM_PRINTF(2, 3), may follow)
DEF = re.compile(r"^(static\s+)?[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\(((?:[^;{}()]|\([^;{}()]*\))*)\)"
                 r"(\s+[A-Z_]+\([^;{}()]*\))?\s*\n\{", re.M)
NAME = re.compile(r"\b([A-Za-z_]\w*)\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(\\.|[^"\\\n])*"')


def sources():
    out = []
    for d, _, names in os.walk(SRC):
        out += [os.path.join(d, n) for n in names if n.endswith(".c")]
    return sorted(out)


def main():
    files = sources()
    if len(files) < 10:
        print("test_call_loops: found %d C files under %s" % (len(files), SRC))
        return 1
    text = {}
    defined = {}  # a function that is not static -> the file defining it
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text[f] = STRING.sub('""', COMMENT.sub(" ", fh.read()))
        for m in DEF.finditer(text[f]):
            if not m.group(1):
                if m.group(2) in defined and defined[m.group(2)] != f:
                    print("test_call_loops: %s is defined in %s and %s"
                          % (m.group(2), defined[m.group(2)], f))
                    return 1
                defined[m.group(2)] = f
    calls = {f: sorted({defined[n] for n in NAME.findall(text[f])
                        if n in defined and defined[n] != f}) for f in files}
    rel = lambda f: os.path.relpath(f, TOP)
    for f in files:
        print("%s -> %s" % (rel(f), ", ".join(rel(g) for g in calls[f]) or "-"))
    if len(defined) < 100:
        print("test_call_loops: only %d functions found: the reading is broken" % len(defined))
        return 1
    # a file on a loop reaches itself
    bad = []
    for f in files:
        seen, todo = set(), list(calls[f])
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo += calls[g]
        if f in seen:
            bad.append(rel(f))
    if bad:
        print("FAIL: files on a loop of calls: " + ", ".join(bad))
        return 1
    print("PASS: %d files, %d functions, no loop of calls" % (len(files), len(defined)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

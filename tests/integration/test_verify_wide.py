"""--verify checks tables of any width: a keyless table (REPLICA IDENTITY
FULL) of 1,100 columns, whose comparison once asked SQLite for more than
2,000 result columns ('too many columns in result set', and no table was
checked at all), and a keyed table of 1,600 columns (PostgreSQL's most),
whose comparison reads more columns in aggregates than SQLite allows in
one statement. Equal: 'ok' for each, exit 0; one value changed in the
mirror: each table differs, as it should, exit 4."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

WIDE = {"kl": (1100, False), "ky": (1600, True)}


def test(ctx):
    for table, (ncols, keyed) in WIDE.items():
        cols = ", ".join("c%d int" % i for i in range(ncols))
        ctx.sql("CREATE TABLE %s (%s%s)" % (table, cols, ", PRIMARY KEY (c0)" if keyed else ""))
        if not keyed:
            ctx.sql("ALTER TABLE %s REPLICA IDENTITY FULL" % table)
        for r in range(3):
            ctx.sql("INSERT INTO %s VALUES (%s)" % (
                table, ", ".join(str(r * 10000 + i) for i in range(ncols))))
        if not keyed:  # a duplicate row counts
            ctx.sql("INSERT INTO %s SELECT * FROM %s WHERE c0 = 0" % (table, table))
    ctx.sql("CREATE PUBLICATION pub FOR TABLE kl, ky")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    args = ctx.mirror_args(path, slot, "pub", "--verify")
    rc, out, err = ctx.run(args, timeout=120)
    check(rc == 0 and out == "kl: ok\nky: ok\n",
          "--verify of equal wide tables: exit %d, stdout:\n%s\nstderr:\n%s" % (rc, out, err))
    con = ctx.mirror_connect(path)
    con.execute("UPDATE kl SET c%d = -1 WHERE c0 = 10000" % (WIDE["kl"][0] - 1))
    con.execute("UPDATE ky SET c%d = -1 WHERE c0 = 10000" % (WIDE["ky"][0] - 1))
    con.execute("DELETE FROM kl WHERE rowid = (SELECT max(rowid) FROM kl WHERE c0 = 0)")
    con.commit()
    con.close()
    rc, out, err = ctx.run(args, timeout=120)
    want = ("kl: differs (2 missing, 1 unexpected, 0 changed)\n"
            "ky: differs (0 missing, 0 unexpected, 1 changed)\n")
    check(rc == 4 and out == want,
          "--verify of changed wide tables: exit %d, stdout:\n%s\nexpected:\n%s\nstderr:\n%s"
          % (rc, out, want, err))


harness.main(test)

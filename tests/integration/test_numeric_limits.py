"""Every numeric PostgreSQL can hold is mirrored, in the binary copy and
in the binary stream: 9e131071 + 1 (131,072 digits, 32,768 base-10000
digits: numeric_send's digit count is unsigned, past int16), the widest
value (131,072 nines before the point, 16,383 after), its negative, and
the smallest fraction; exact text, equal to the source, in both formats
and with --no-binary."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

WIDEST = "(repeat('9', 131072) || '.' || repeat('9', 16383))::numeric"
VALUES = ["9e131071 + 1", WIDEST, "-" + WIDEST,
          "('0.' || repeat('0', 16382) || '1')::numeric", "1e131071"]


def insert(ctx, first_id):
    for i, v in enumerate(VALUES):
        ctx.sql("INSERT INTO n VALUES (%d, %s)" % (first_id + i, v))


def test(ctx):
    ctx.create_tables("CREATE TABLE n (id int PRIMARY KEY, a numeric);"
                      "CREATE PUBLICATION pub FOR TABLE n")
    insert(ctx, 1)
    path, slot = ctx.path(), ctx.slot()
    textp, texts = ctx.path("text.db"), ctx.slot("t")
    _, _, err = ctx.once(path, slot, "pub", "-v")
    check('copying "public.n" in binary format' in err,
          "the table was not copied in binary:\n%s" % err)
    ctx.once(textp, texts, "pub", "--no-binary")
    ctx.assert_mirror_equals_source(path, "public.n")
    insert(ctx, 11)
    _, _, err = ctx.once(path, slot, "pub", "-v")
    check("streaming in binary" in err, "the changes were not streamed in binary:\n%s" % err)
    ctx.once(textp, texts, "pub", "--no-binary")
    for p in (path, textp):
        ctx.assert_mirror_equals_source(p, "public.n")
        got = dict(ctx.mirror_query(p, "SELECT id, length(a) FROM n"))
        check(got.get(1) == 131072 and got.get(2) == 131072 + 1 + 16383
              and got.get(13) == 131072 + 2 + 16383,
              "%s: the widest values' lengths are %s" % (os.path.basename(p), got))


harness.main(test)

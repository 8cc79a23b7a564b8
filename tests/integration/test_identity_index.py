"""REPLICA IDENTITY USING INDEX: a unique index on NOT NULL columns other
than the primary key is the identity; the mirror's key (PRIMARY KEY and
pgmirror_columns.is_key) is that index's columns; updates changing the
identity columns, the old primary key column, and deletes all apply. The
identity moved to another index, and back to the primary key, with no row
change after it: a quiet --once gives the mirror the source's key
(pgmirror_tables.replica_identity, pgmirror_columns.is_key, the PRIMARY
KEY, the other indexes copied); it kept the old one until the next row
change."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402


def test(ctx):
    ctx.sql("""
        CREATE TABLE ui (id int PRIMARY KEY, code text NOT NULL,
                         region int NOT NULL, v text);
        CREATE UNIQUE INDEX ui_code_region ON ui (code, region);
        ALTER TABLE ui REPLICA IDENTITY USING INDEX ui_code_region;
        CREATE PUBLICATION pub FOR TABLE ui;
    """)
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub", first=True)

    ctx.sql("INSERT INTO ui SELECT g, 'c' || (g % 5), g / 5, 'v' || g "
            "FROM generate_series(1, 40) g")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "ui")

    keys = {r[0]: r[1] for r in ctx.mirror_query(
        path, "SELECT column_name, is_key FROM pgmirror_columns "
              "WHERE table_name = 'ui'")}
    check(keys == {"id": 0, "code": 1, "region": 1, "v": 0},
          "pgmirror_columns.is_key: %r" % (keys,))
    pk = sorted((r[5], r[1]) for r in ctx.mirror_query(path, "PRAGMA table_info(ui)")
                if r[5])
    check([c for _, c in pk] == ["code", "region"],
          "mirror PRIMARY KEY should be (code, region), is %r" % (pk,))

    ctx.sql("""
        UPDATE ui SET v = 'plain' WHERE id = 1;
        UPDATE ui SET id = id + 1000 WHERE id BETWEEN 2 AND 4;   -- not the identity
        UPDATE ui SET code = 'moved' WHERE id = 5;               -- identity change
        UPDATE ui SET region = region + 100, v = NULL WHERE id IN (6, 7);
        DELETE FROM ui WHERE id IN (8, 9);
        BEGIN;                                 -- swap identities of 10 (c0,2) and 11 (c1,2)
          UPDATE ui SET code = 'tmp' WHERE id = 10;
          UPDATE ui SET code = 'c0' WHERE id = 11;
          UPDATE ui SET code = 'c1' WHERE id = 10;
        COMMIT;
        INSERT INTO ui VALUES (500, 'moved', 99, 'same code other region');
    """)
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "ui")

    quiet_change(ctx, path, slot)


def key_of(ctx, path):
    """What the mirror says of ui's key: replica_identity, is_key per
    column, the PRIMARY KEY's columns, and the source indexes it copied
    (all but the identity's, docs/mirror-file.md)."""
    ri = ctx.mirror_query(path, "SELECT replica_identity FROM pgmirror_tables "
                          "WHERE table_name = 'ui'")
    keys = dict(ctx.mirror_query(path, "SELECT column_name, is_key FROM pgmirror_columns "
                                 "WHERE table_name = 'ui'"))
    pk = sorted(r[1] for r in ctx.mirror_query(path, "PRAGMA table_info(ui)") if r[5])
    copied = sorted(r[0].split("_", 3)[3] for r in ctx.mirror_query(
        path, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ui' "
              "AND name LIKE 'pgmirror\\_index\\_%' ESCAPE '\\'"))
    return (ri[0][0] if ri else None, keys, pk, copied)


def quiet_change(ctx, path, slot):
    """The identity index changed, and no row after it: a quiet --once
    gives the mirror table the source's key (the fingerprint saw the
    indexes change, but the check compared no key)."""
    ctx.sql("CREATE UNIQUE INDEX ui_region_id ON ui (region, id)")
    ctx.once(path, slot, "pub")
    ctx.once(path, slot, "pub")  # the fingerprint is stored
    steps = (
        ("USING INDEX ui_region_id",
         ("i", {"id": 1, "code": 0, "region": 1, "v": 0}, ["id", "region"],
          ["ui_code_region", "ui_pkey"])),
        ("DEFAULT",
         ("d", {"id": 1, "code": 0, "region": 0, "v": 0}, ["id"],
          ["ui_code_region", "ui_region_id"])),
    )
    for ident, want in steps:
        ctx.sql("ALTER TABLE ui REPLICA IDENTITY %s" % ident)
        ctx.once(path, slot, "pub")
        got = key_of(ctx, path)
        check(got == want, "after REPLICA IDENTITY %s and a quiet --once the mirror's key of ui "
              "(replica_identity, is_key, PRIMARY KEY, indexes copied) is %r, not %r"
              % (ident, got, want))
        ctx.assert_mirror_equals_source(path, "ui")
        ctx.sql("UPDATE ui SET v = 'after %s' WHERE id = (SELECT max(id) FROM ui); "
                "DELETE FROM ui WHERE id = (SELECT min(id) FROM ui)" % ident)
        ctx.once(path, slot, "pub")
        ctx.assert_mirror_equals_source(path, "ui")


harness.main(test)

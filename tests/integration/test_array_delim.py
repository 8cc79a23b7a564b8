"""Arrays whose element type's delimiter is not a comma: box (typdelim
';', a box's own text has commas) and a domain over box, whose array type
only the catalog knows.  The mirror holds a JSON array of the elements'
text, as for any array, in the copy and in the stream.  (Issue 8, item 12.)"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

ROWS = """
    (1, ARRAY['(1,1),(0,0)'::box, '(3,3),(2,2)'], ARRAY['(1,2),(0,-1.5)'::mybox]),
    (2, ARRAY[NULL, '(1e+20,2),(0,0)'::box], ARRAY[NULL, '(5,5),(4,4)'::mybox]),
    (3, '{{"(1,1),(0,0)";"(2,2),(0,0)"};{"(3,3),(0,0)";"(4,4),(0,0)"}}',
        '{{"(1,1),(0,0)"};{"(2,2),(1,1)"}}'),
    (4, '{}', '{}'),
    (5, NULL, NULL),
    (6, '[0:1]={"(1,1),(0,0)";"(2,2),(1,1)"}', '[2:2]={"(9,9),(8,8)"}')
"""


def test(ctx):
    ctx.sql("CREATE DOMAIN mybox AS box;"
            "CREATE TABLE boxes (id int PRIMARY KEY, b box[], d mybox[]);"
            "CREATE PUBLICATION pub FOR TABLE boxes;"
            "INSERT INTO boxes VALUES " + ROWS)
    check(ctx.sql1("SELECT typdelim FROM pg_type WHERE typname = 'mybox'") == ";",
          "the domain's delimiter is not ';'")
    path, slot = ctx.path(), ctx.slot()
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "boxes")
    got = ctx.mirror_query(path, "SELECT b FROM boxes WHERE id = 1")
    check(got == [('["(1,1),(0,0)","(3,3),(2,2)"]',)], "box[] became %r" % (got,))

    ctx.sql("INSERT INTO boxes SELECT id + 10, b, d FROM boxes;"
            "UPDATE boxes SET b = b || '(7,7),(6,6)'::box, d = d || '(7,7),(6,6)'::mybox"
            " WHERE id IN (1, 11)")
    ctx.once(path, slot, "pub")
    ctx.assert_mirror_equals_source(path, "boxes")


harness.main(test)

-- The tables ($1, an array of OIDs) that the role pgmirror connects as
-- cannot read (neither the table nor each of its columns), each with the
-- GRANT that lets it: its copy would fail, so it waits (tablesync.c). No
-- row when every one can be read.
SELECT c.oid,
       pg_catalog.format('GRANT SELECT ON %I.%I TO %I', n.nspname, c.relname, current_user)
FROM pg_catalog.unnest($1::pg_catalog.oid[]) AS t(relid)
JOIN pg_catalog.pg_class c ON c.oid = t.relid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE NOT pg_catalog.has_table_privilege(c.oid, 'SELECT')
  AND EXISTS (SELECT FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                AND NOT pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT'))
ORDER BY 1

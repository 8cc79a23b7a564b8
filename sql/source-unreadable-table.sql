-- The tables ($1, an array of OIDs) that the role pgmirror connects as
-- cannot read: its schema may not be used, or neither the table nor each
-- of its columns may be read. Each with the GRANTs that let it: its copy
-- would fail, so it waits (waiting.c). No row when every one can be read.
SELECT c.oid,
       pg_catalog.concat_ws('; ',
         CASE WHEN NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE')
              THEN pg_catalog.format('GRANT USAGE ON SCHEMA %I TO %I', n.nspname, current_user)
         END,
         CASE WHEN NOT pg_catalog.has_table_privilege(c.oid, 'SELECT') AND EXISTS (
                     SELECT FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                       AND NOT pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT'))
              THEN pg_catalog.format('GRANT SELECT ON %I.%I TO %I', n.nspname, c.relname,
                                     current_user)
         END)
FROM pg_catalog.unnest($1::pg_catalog.oid[]) AS t(relid)
JOIN pg_catalog.pg_class c ON c.oid = t.relid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE')
   OR (NOT pg_catalog.has_table_privilege(c.oid, 'SELECT')
       AND EXISTS (SELECT FROM pg_catalog.pg_attribute a
                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                     AND NOT pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT')))
ORDER BY 1

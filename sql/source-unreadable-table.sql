-- The tables ($1, an array of OIDs) that the role pgmirror connects as
-- cannot read: its schema may not be used, or the table may not be read
-- and neither may one of its published columns ($2: "OID:name" each,
-- split at the first colon; a grant of those columns alone is enough to
-- copy them). Each with the GRANTs that let it: its copy would fail, so
-- it waits (waiting.c). No row when every one can be read.
WITH cols AS (
    SELECT pg_catalog.split_part(p.col, ':', 1)::pg_catalog.oid AS relid,
           pg_catalog.substr(p.col, pg_catalog.strpos(p.col, ':') + 1) AS attname
    FROM pg_catalog.unnest($2::pg_catalog.text[]) AS p(col)
), unreadable AS (
    SELECT c.oid
    FROM pg_catalog.unnest($1::pg_catalog.oid[]) AS t(relid)
    JOIN pg_catalog.pg_class c ON c.oid = t.relid
    WHERE NOT pg_catalog.has_table_privilege(c.oid, 'SELECT')
      AND EXISTS (SELECT FROM cols
                  JOIN pg_catalog.pg_attribute a
                    ON a.attrelid = cols.relid AND a.attname = cols.attname
                       AND NOT a.attisdropped
                  WHERE cols.relid = c.oid
                    AND NOT pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT'))
)
SELECT c.oid,
       pg_catalog.concat_ws('; ',
         CASE WHEN NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE')
              THEN pg_catalog.format('GRANT USAGE ON SCHEMA %I TO %I', n.nspname, current_user)
         END,
         CASE WHEN c.oid IN (SELECT oid FROM unreadable)
              THEN pg_catalog.format('GRANT SELECT ON %I.%I TO %I', n.nspname, c.relname,
                                     current_user)
         END)
FROM pg_catalog.unnest($1::pg_catalog.oid[]) AS t(relid)
JOIN pg_catalog.pg_class c ON c.oid = t.relid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE')
   OR c.oid IN (SELECT oid FROM unreadable)
ORDER BY 1

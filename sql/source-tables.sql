-- The tables of the publications $1 (a list of quoted literals), one row
-- per published column (or one with a NULL column for a table with none),
-- ordered by table then attnum.
--
-- The key flags follow pgoutput's RelationGetIdentityKeyBitmap(): the
-- replica identity index for 'i', the primary key for 'd', every column
-- for 'f'. A table in several publications gets the union of their column
-- lists and the OR of their row filters; one publication without a filter
-- means no filter.
--
-- What differs between server versions is filled in by the caller: $2 the
-- row filter (pt.rowfilter from 15 on, else NULL::text), $3 the column list
-- (pt.attnames from 15 on, else NULL::name[]), $4 the condition that
-- leaves out generated columns (from 12 on, else nothing).
WITH pubrel AS (
  SELECT c.oid AS relid, n.nspname, c.relname, c.relreplident, c.relkind,
         $2 AS rowfilter, $3 AS attnames
  FROM pg_catalog.pg_publication_tables pt
  JOIN pg_catalog.pg_namespace n ON n.nspname = pt.schemaname
  JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename
  WHERE pt.pubname IN ($1)
), t AS (
  SELECT relid, nspname, relname, relreplident, relkind,
         CASE WHEN bool_or(rowfilter IS NULL) THEN NULL
         ELSE string_agg('(' || rowfilter || ')', ' OR ') END AS rowfilter
  FROM pubrel
  GROUP BY relid, nspname, relname, relreplident, relkind
)
SELECT t.relid, t.nspname, t.relname, t.relreplident, t.relkind = 'p',
       t.rowfilter, a.attname, a.atttypid, a.atttypmod,
       t.relreplident = 'f' OR EXISTS (
         SELECT 1 FROM pg_catalog.pg_index i
         WHERE i.indrelid = t.relid AND a.attnum = ANY (i.indkey) AND
               CASE t.relreplident WHEN 'i' THEN i.indisreplident
               WHEN 'd' THEN i.indisprimary ELSE false END)
FROM t
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = t.relid
  AND a.attnum > 0 AND NOT a.attisdropped $4
  AND EXISTS (SELECT 1 FROM pubrel p WHERE p.relid = t.relid
              AND (p.attnames IS NULL OR a.attname = ANY (p.attnames)))
ORDER BY t.nspname, t.relname, a.attnum

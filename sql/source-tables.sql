-- The tables of the publications $1 (a list of quoted literals), one row
-- per published column (or one with a NULL column for a table with none),
-- ordered by table then attnum.
--
-- The key flags follow pgoutput's RelationGetIdentityKeyBitmap(): the
-- replica identity index for 'i', the primary key for 'd', every column
-- for 'f'. A table in several publications gets the union of their column
-- lists (equal, see below) and the OR of their row filters; one
-- publication without a filter means no filter. Column lists that differ between the publications
-- (PostgreSQL 15+: a publication without one has every column) cannot be
-- streamed: pgoutput ends the stream at the table's first change ("cannot
-- use different column lists"). The column after the definition then
-- names the publications, and the caller refuses the table. Before 18,
-- attnames has every generated column of a publication without a list,
-- though none is published; pgoutput 15 counts them in that "no list" (a
-- list of every other column differs from it), 16 and 17 do not: $9 then
-- leaves them out of the comparison (else nothing).
--
-- The definition column is a canonical text of what
-- makes its published contents, compared with the one the mirror stored
-- when it last copied the table (tablesync.c): a change means the table
-- must be copied again. It names catalog rows by their identity, so that
-- leaving and joining again shows: each publication that publishes it (its
-- row's xmin, which ALTER PUBLICATION ... SET (...) changes; FOR ALL
-- TABLES; publish_via_partition_root), each pg_publication_rel row of the
-- table or of an ancestor (a new OID when it leaves and joins again; its
-- row filter and column list), each pg_publication_namespace row of the
-- schema of the table or of an ancestor (with the xmin of the table's row
-- type, which moving the table to another schema and back changes), the
-- pg_inherits rows (their xmin) linking the table to those ancestors, and
-- for a published root its partitions (with theirs).
--
-- What differs between server versions is filled in by the caller: $2 the
-- row filter (pt.rowfilter from 15 on, else NULL::text), $3 the column list
-- (pt.attnames from 15 on, else NULL::name[]), $4 the condition that
-- leaves out generated columns (from 12 to 17, else nothing: from 18 on
-- attnames has the generated columns a publication publishes, by its
-- column list or publish_generated_columns, and only those; before, it
-- has them all, and none is published), $8 whether column a is generated
-- (from 12 on, else false: COPY cannot name one, a query can), $5 the text of
-- publication p's publish_via_partition_root (from 13 on, else ''), $6 the
-- text of pg_publication_rel row r's row filter and column list (from 15
-- on, else ''), $7 the schema memberships of the table and its ancestors
-- (from 15 on a query of pg_publication_namespace, else one that finds
-- none).
--
-- The last column is a domain's base type and its modifier (a domain of a
-- domain: the innermost), else the column's own: the copy in parts orders
-- a domain's key as its base type (copy_keys.h). The domains' bases are
-- one CTE of every domain (dombase): a recursive query inside the final
-- SELECT made the whole statement take 85 ms instead of 2 on PostgreSQL
-- 15, in every run.
WITH RECURSIVE doms(oid, base, mod) AS (
  SELECT oid, typbasetype, typtypmod FROM pg_catalog.pg_type WHERE typtype = 'd'
  UNION ALL
  SELECT d.oid, y.typbasetype, y.typtypmod
  FROM doms d JOIN pg_catalog.pg_type y ON y.oid = d.base AND y.typtype = 'd'
), dombase AS (
  SELECT oid, base, mod FROM doms d WHERE NOT EXISTS (
    SELECT 1 FROM pg_catalog.pg_type y WHERE y.oid = d.base AND y.typtype = 'd')
), pubrel AS (
  SELECT c.oid AS relid, n.nspname, c.relname, c.relreplident, c.relkind,
         $2 AS rowfilter, $3 AS attnames, pt.pubname,
         (SELECT array_agg(a.attname ORDER BY a.attname) FROM pg_catalog.pg_attribute a
          WHERE a.attrelid = c.oid AND a.attname = ANY ($3) $9) AS colset
  FROM pg_catalog.pg_publication_tables pt
  JOIN pg_catalog.pg_namespace n ON n.nspname = pt.schemaname
  JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename
  WHERE pt.pubname IN ($1)
), t AS (
  SELECT relid, nspname, relname, relreplident, relkind,
         CASE WHEN bool_or(rowfilter IS NULL) THEN NULL
         ELSE string_agg('(' || rowfilter || ')', ' OR ') END AS rowfilter,
         CASE WHEN count(DISTINCT colset) > 1
         THEN string_agg(DISTINCT '"' || pubname || '"', ', ') END AS listsdiffer
  FROM pubrel
  GROUP BY relid, nspname, relname, relreplident, relkind
), pubs AS (
  SELECT DISTINCT pr.relid, p.oid, p.xmin::text AS xmin, p.puballtables, $5 AS viaroot
  FROM pubrel pr JOIN pg_catalog.pg_publication p ON p.pubname = pr.pubname
), up(relid, anc, link) AS (
  SELECT relid, relid, ''::text FROM t
  UNION ALL
  SELECT up.relid, i.inhparent, up.link || ' ' || i.xmin::text
  FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.anc
), down(relid, part, link) AS (
  SELECT relid, relid, ''::text FROM t WHERE relkind = 'p'
  UNION ALL
  SELECT down.relid, i.inhrelid, down.link || ' ' || i.xmin::text
  FROM down JOIN pg_catalog.pg_inherits i ON i.inhparent = down.part
), def AS (
  SELECT relid, 'publication ' || oid || ' row ' || xmin ||
         CASE WHEN puballtables THEN ' all tables' ELSE '' END || viaroot AS d
  FROM pubs p
  UNION ALL
  SELECT up.relid, 'table ' || r.oid || ' of ' || r.prpubid || ' for ' || r.prrelid ||
         ' via' || up.link $6
  FROM up JOIN pg_catalog.pg_publication_rel r ON r.prrelid = up.anc
  JOIN pubs ON pubs.relid = up.relid AND pubs.oid = r.prpubid
  UNION ALL
  $7
  UNION ALL
  SELECT relid, 'partition ' || part || ' via' || link FROM down WHERE part <> relid
), defs AS (
  SELECT relid, string_agg(d, '; ' ORDER BY d) AS definition FROM def GROUP BY relid
)
SELECT t.relid, t.nspname, t.relname, t.relreplident, t.relkind = 'p',
       t.rowfilter, a.attname, a.atttypid, a.atttypmod,
       t.relreplident = 'f' OR EXISTS (
         SELECT 1 FROM pg_catalog.pg_index i
         WHERE i.indrelid = t.relid AND a.attnum = ANY (i.indkey) AND
               CASE t.relreplident WHEN 'i' THEN i.indisreplident
               WHEN 'd' THEN i.indisprimary ELSE false END),
       d.definition, t.listsdiffer, $8, a.attnum,
       COALESCE((SELECT base::text || ' ' || mod::text FROM dombase
                 WHERE dombase.oid = a.atttypid),
                a.atttypid::text || ' ' || a.atttypmod::text)
FROM t
LEFT JOIN defs d ON d.relid = t.relid
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = t.relid
  AND a.attnum > 0 AND NOT a.attisdropped $4
  AND EXISTS (SELECT 1 FROM pubrel p WHERE p.relid = t.relid
              AND (p.attnames IS NULL OR a.attname = ANY (p.attnames)))
ORDER BY t.nspname, t.relname, a.attnum

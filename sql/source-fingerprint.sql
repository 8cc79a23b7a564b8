-- The fingerprint of what pgmirror follows of the publications $1 (a list
-- of quoted literals), and the types of the published tables' columns:
-- the one question a quiet run asks (sql/source-tables.sql is the detail,
-- read only when the fingerprint differs from the one the mirror stored).
--
-- The fingerprint is an md5 over catalog rows, each named by its identity
-- so that leaving and joining again shows:
--   p  each publication (its row's xmin: ALTER PUBLICATION ... SET (...),
--      publish_via_partition_root, publish_generated_columns change it);
--   m  each table it publishes, as the server itself answers
--      (pg_get_publication_tables(): FOR ALL TABLES, schemas, partitions),
--      with its column list and row filter ($2: from 15 on, else '');
--   r  each pg_publication_rel row (a new OID when a table leaves and
--      joins again; its xmin: a row filter or column list set anew);
--   s  each pg_publication_namespace row of them ($3: from 15 on a query
--      of that catalog, else one that finds none);
--   t  each published table's names, and the xmin of its row type (moving
--      it to another schema and back changes it);
--   i  the pg_inherits rows above a published table and below a published
--      root (partitions attached and detached);
--   x  the indexes of the published tables (the mirror copies them);
--   a  every column of a published table: number, name, type, typmod,
--      dropped, and generated ($4: from 12 on, else '').
-- Each row is written as ROW(...)::text (text quoted, so unambiguous) and
-- hashed to 64 bits ($5 ... $6 around it: hashtextextended() from 11 on,
-- else the first 64 bits of its md5); a kind's hashes are summed, which
-- needs no sort, and the md5 of the sums is the fingerprint. The types
-- column lists the distinct type:typmod of the published tables' columns
-- (not dropped), for the stream's choice of binary values.
WITH RECURSIVE pubs AS (
  SELECT p.oid, p.pubname, p.xmin FROM pg_catalog.pg_publication p WHERE p.pubname IN ($1)
), pt AS (
  SELECT pubs.oid AS pubid, g.relid, $2 AS more
  FROM pubs, LATERAL pg_catalog.pg_get_publication_tables(pubs.pubname::text) g
), rel AS (
  SELECT c.oid, c.relname, c.relnamespace, c.relkind, c.reltype
  FROM pg_catalog.pg_class c WHERE c.oid = ANY (ARRAY(SELECT relid FROM pt))
), up(rel) AS (
  SELECT oid FROM rel
  UNION
  SELECT i.inhparent FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.rel
), down(rel) AS (
  SELECT oid FROM rel WHERE relkind = 'p'
  UNION
  SELECT i.inhrelid FROM down JOIN pg_catalog.pg_inherits i ON i.inhparent = down.rel
), att AS (
  SELECT a.attrelid, a.attnum, a.attname, a.atttypid, a.atttypmod, a.attisdropped, $4 AS gen
  FROM pg_catalog.pg_attribute a
  WHERE a.attrelid = ANY (ARRAY(SELECT oid FROM rel)) AND a.attnum > 0
), parts(kind, h) AS (
  SELECT 'p', $5ROW(oid, xmin)::text$6 FROM pubs
  UNION ALL
  SELECT 'm', $5ROW(pubid, relid, more)::text$6 FROM pt
  UNION ALL
  SELECT 'r', $5ROW(r.oid, r.prpubid, r.prrelid, r.xmin)::text$6
  FROM pg_catalog.pg_publication_rel r WHERE r.prpubid IN (SELECT oid FROM pubs)
  UNION ALL
  SELECT 's', $5ROW(pn.oid, pn.pnpubid, pn.pnnspid)::text$6 FROM $3 pn
  UNION ALL
  SELECT 't', $5ROW(rel.oid, n.nspname, rel.relname, ty.xmin)::text$6
  FROM rel JOIN pg_catalog.pg_namespace n ON n.oid = rel.relnamespace
  JOIN pg_catalog.pg_type ty ON ty.oid = rel.reltype
  UNION ALL
  SELECT 'i', $5ROW(i.inhrelid, i.inhparent, i.xmin)::text$6
  FROM pg_catalog.pg_inherits i
  WHERE i.inhrelid IN (SELECT rel FROM up) OR i.inhparent IN (SELECT rel FROM down)
  UNION ALL
  SELECT 'x', $5ROW(i.indexrelid, i.indrelid, i.xmin, ic.relname)::text$6
  FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
  WHERE i.indrelid = ANY (ARRAY(SELECT oid FROM rel))
  UNION ALL
  SELECT 'a', $5ROW(attrelid, attnum, attname, atttypid, atttypmod, attisdropped, gen)::text$6
  FROM att
)
SELECT (SELECT pg_catalog.md5(string_agg(kind || ' ' || n || ' ' || s, ' ' ORDER BY kind))
        FROM (SELECT kind, count(*) AS n, sum(h::numeric) AS s FROM parts GROUP BY kind) k),
       (SELECT string_agg(atttypid || ':' || atttypmod, ',')
        FROM (SELECT DISTINCT atttypid, atttypmod FROM att WHERE NOT attisdropped) d)

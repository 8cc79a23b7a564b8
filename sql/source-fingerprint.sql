-- The fingerprint of what pgmirror follows of the publications $1 (a list
-- of quoted literals), and the types of the published tables' columns:
-- the one question a quiet run asks (sql/source-tables.sql is the detail,
-- read only when the fingerprint differs from the one the mirror stored).
--
-- The fingerprint is an md5 over catalog rows, each named by its identity
-- so that leaving and joining again shows, in the order of their keys
-- (names and other text as ROW()::text writes them, quoted):
--   p  each publication (its row's xmin: ALTER PUBLICATION ... SET (...),
--      publish_via_partition_root, publish_generated_columns change it);
--   m  each table it publishes, as the server itself answers
--      (pg_get_publication_tables(): FOR ALL TABLES, schemas, partitions),
--      with its column list and row filter ($2: from 15 on, else '');
--   r  each pg_publication_rel row (a new OID when a table leaves and
--      joins again; its xmin: a row filter or column list set anew);
--   s  each pg_publication_namespace row ($3: from 15 on a query of them
--      followed by a comma, else nothing);
--   t  each published table's names, and the xmin of its row type (moving
--      it to another schema and back changes it);
--   i  the pg_inherits rows above a published table and below a published
--      root (partitions attached and detached);
--   x  the indexes of the published tables (the mirror copies them);
--   a  every column of a published table: number, name, type, typmod,
--      dropped, and generated ($4: from 12 on, else '').
-- The types column lists the distinct type:typmod of the published tables'
-- columns (not dropped), for the stream's choice of binary values.
WITH RECURSIVE pubs AS (
  SELECT p.oid, p.xmin FROM pg_catalog.pg_publication p WHERE p.pubname IN ($1)
), pt AS (
  SELECT pubs.oid AS pubid, g.relid, $2 AS more
  FROM pg_catalog.pg_publication p JOIN pubs ON pubs.oid = p.oid,
       LATERAL pg_catalog.pg_get_publication_tables(p.pubname::text) g
), rel AS (
  SELECT c.oid, c.relname, c.relnamespace, c.relkind, c.reltype
  FROM pg_catalog.pg_class c WHERE c.oid IN (SELECT relid FROM pt)
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
  WHERE a.attrelid IN (SELECT oid FROM rel) AND a.attnum > 0
)
SELECT pg_catalog.md5(concat_ws(E'\n',
  (SELECT string_agg('p ' || oid || ' ' || xmin::text, ' ' ORDER BY oid) FROM pubs),
  (SELECT string_agg('m ' || pubid || ' ' || relid || more, ' ' ORDER BY pubid, relid) FROM pt),
  (SELECT string_agg('r ' || r.oid || ' ' || r.prrelid || ' ' || r.xmin::text, ' '
                     ORDER BY r.oid)
   FROM pg_catalog.pg_publication_rel r WHERE r.prpubid IN (SELECT oid FROM pubs)),
  $3
  (SELECT string_agg('t ' || ROW(rel.oid, n.nspname, rel.relname, ty.xmin)::text, ' '
                     ORDER BY rel.oid)
   FROM rel JOIN pg_catalog.pg_namespace n ON n.oid = rel.relnamespace
   JOIN pg_catalog.pg_type ty ON ty.oid = rel.reltype),
  (SELECT string_agg('i ' || i.inhrelid || ' ' || i.inhparent || ' ' || i.xmin::text, ' '
                     ORDER BY i.inhrelid, i.inhparent)
   FROM pg_catalog.pg_inherits i
   WHERE i.inhrelid IN (SELECT rel FROM up) OR i.inhparent IN (SELECT rel FROM down)),
  (SELECT string_agg('x ' || ROW(i.indexrelid, i.indrelid, i.xmin, ic.relname)::text, ' '
                     ORDER BY i.indexrelid)
   FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
   WHERE i.indrelid IN (SELECT oid FROM rel)),
  (SELECT string_agg('a ' || ROW(attrelid, attnum, attname, atttypid, atttypmod, attisdropped,
                                  gen)::text, ' ' ORDER BY attrelid, attnum)
   FROM att))),
  (SELECT string_agg(atttypid || ':' || atttypmod, ',')
   FROM (SELECT DISTINCT atttypid, atttypmod FROM att WHERE NOT attisdropped) d)

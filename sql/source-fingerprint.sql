-- The fingerprint of what pgmirror follows of the publications $1 (a list
-- of quoted literals), and the types of the published tables' columns:
-- the one question a quiet run asks (sql/source-tables.sql is the detail,
-- read only when the fingerprint differs from the one the mirror stored).
--
-- It is a change detector over the catalog rows that make the
-- publications' tables and what the mirror keeps of them, read through
-- their OID indexes; the server's own list (pg_get_publication_tables())
-- is what the detail reads. It would open every published table (16 on:
-- for its columns), a third of the cost at 1,000 tables, so the tables
-- hashed are a superset of the published ones, found from the catalogs:
--   named  the tables each pg_publication_rel row names; those in a schema
--          a pg_publication_namespace row names ($3); with FOR ALL TABLES,
--          every table and partitioned table made after initdb; of these
--          two, only permanent ones, as the server publishes (a session's
--          temporary table would change the fingerprint; an unlogged table
--          made logged, or back, joins or leaves the set, which shows);
--          the scans of pg_class run only when a publication has schemas
--          or all tables;
--   rel    those and their partitions, down pg_inherits;
--   $2     on a server newer than this build knows (19 on), also what
--          pg_get_publication_tables() answers, with its column lists and
--          row filters: a way of publishing added later is then seen too.
-- Hashed, each row named by its identity so that leaving and joining
-- again shows:
--   p  each publication (its row's xmin: ALTER PUBLICATION ... SET (...),
--      publish_via_partition_root, publish_generated_columns, FOR ALL
--      TABLES);
--   r  each pg_publication_rel row (a new OID when a table leaves and joins
--      again; its xmin: a row filter or column list set anew);
--   s  each pg_publication_namespace row of them;
--   m  $2's rows (none up to 18);
--   t  each table of rel: its names, kind, persistence, replica identity
--      (REPLICA IDENTITY FULL or DEFAULT changes only this; USING INDEX
--      also an index's row, below: the mirror's key follows both), and
--      when a publication has schemas, the xmin of its row type (moving it
--      to another schema and back changes it: it left and joined again);
--   i  the pg_inherits rows above a table of rel and below one (partitions
--      attached and detached);
--   x  the indexes of the tables of rel (the mirror copies them);
--   a  every column of a table of rel: number, name, type, typmod, dropped,
--      and generated ($4: from 12 on, else '').
-- Each row is hashed to 64 bits h ($5ROW(...)$6: from 14 on,
-- hash_record_extended(), which hashes each field with its type's hash
-- function; hashtextextended() of the row's text from 11 on; else the
-- first 64 bits of the text's md5), and a kind's hashes are summed ($7 of
-- each h), which needs no sort; the md5 of the sums is the fingerprint.
-- hash_record_extended() combines its fields' hashes linearly, so that
-- the sum of them would stay the same when two rows swap a value (two
-- tables or two columns their names): from 14 on $7 mixes each h again
-- (hashint8extended(), seeded with h, so as not to fold it to 32 bits),
-- else it is h. The types column lists the
-- distinct type:typmod of rel's columns (not dropped), for the stream's
-- choice of binary values.
WITH RECURSIVE pubs AS (
  SELECT p.oid, p.pubname, p.puballtables, p.xmin FROM pg_catalog.pg_publication p
  WHERE p.pubname IN ($1)
), pr AS (
  SELECT r.oid, r.prpubid, r.prrelid, r.xmin FROM pg_catalog.pg_publication_rel r
  WHERE r.prpubid IN (SELECT oid FROM pubs)
), pn AS $3, pt(pubid, relid, more) AS ($2
), named(rel) AS (
  SELECT prrelid FROM pr
  UNION
  SELECT relid FROM pt
  UNION
  SELECT c.oid FROM pg_catalog.pg_class c
  WHERE (SELECT pg_catalog.bool_or(puballtables) FROM pubs)
    AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p' AND c.oid >= 16384
  UNION
  SELECT c.oid FROM pg_catalog.pg_class c
  WHERE EXISTS (SELECT FROM pn) AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p'
    AND c.relnamespace IN (SELECT pnnspid FROM pn)
), down(rel) AS (
  SELECT rel FROM named
  UNION
  SELECT i.inhrelid FROM down JOIN pg_catalog.pg_inherits i ON i.inhparent = down.rel
), rel AS (
  SELECT c.oid, c.relname, c.relnamespace, c.relkind, c.relpersistence, c.relreplident,
         c.reltype
  FROM pg_catalog.pg_class c WHERE c.oid = ANY (ARRAY(SELECT rel FROM down))
), up(rel) AS (
  SELECT oid FROM rel
  UNION
  SELECT i.inhparent FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.rel
), att AS (
  SELECT a.attrelid, a.attnum, a.attname, a.atttypid, a.atttypmod, a.attisdropped, $4 AS gen
  FROM pg_catalog.pg_attribute a
  WHERE a.attrelid = ANY (ARRAY(SELECT oid FROM rel)) AND a.attnum > 0
), parts(kind, h) AS (
  SELECT 'p', $5ROW(oid, puballtables, xmin)$6 FROM pubs
  UNION ALL
  SELECT 'r', $5ROW(oid, prpubid, prrelid, xmin)$6 FROM pr
  UNION ALL
  SELECT 's', $5ROW(oid, pnpubid, pnnspid)$6 FROM pn
  UNION ALL
  SELECT 'm', $5ROW(pubid, relid, more)$6 FROM pt
  UNION ALL
  SELECT 't', $5ROW(rel.oid, n.nspname, rel.relname, rel.relkind, rel.relpersistence,
                   rel.relreplident, CASE WHEN (SELECT EXISTS (SELECT FROM pn))
                   THEN (SELECT ty.xmin FROM pg_catalog.pg_type ty WHERE ty.oid = rel.reltype) END)$6
  FROM rel JOIN pg_catalog.pg_namespace n ON n.oid = rel.relnamespace
  UNION ALL
  SELECT 'i', $5ROW(i.inhrelid, i.inhparent, i.xmin)$6
  FROM pg_catalog.pg_inherits i
  WHERE i.inhrelid IN (SELECT rel FROM up) OR i.inhparent IN (SELECT rel FROM down)
  UNION ALL
  SELECT 'x', $5ROW(i.indexrelid, i.indrelid, i.xmin, ic.relname)$6
  FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
  WHERE i.indrelid = ANY (ARRAY(SELECT oid FROM rel))
  UNION ALL
  SELECT 'a', $5ROW(attrelid, attnum, attname, atttypid, atttypmod, attisdropped, gen)$6
  FROM att
)
SELECT (SELECT pg_catalog.md5(string_agg(kind || ' ' || n || ' ' || s, ' ' ORDER BY kind))
        FROM (SELECT kind, count(*) AS n, sum($7) AS s FROM parts GROUP BY kind) k),
       (SELECT string_agg(atttypid || ':' || atttypmod, ',')
        FROM (SELECT DISTINCT atttypid, atttypmod FROM att WHERE NOT attisdropped) d)

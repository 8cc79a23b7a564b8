-- The schema and name a relation ($1, its OID) has now; no row when the
-- source has no such relation (dropped since).
SELECT n.nspname, c.relname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = $1

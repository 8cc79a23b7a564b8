-- The names in $1 (a list of quoted literals) that are not publications
-- of this database.
SELECT v.name
FROM unnest(ARRAY[$1]::text[]) AS v(name)
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_publication p WHERE p.pubname = v.name)

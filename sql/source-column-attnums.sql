-- The columns a relation ($1, its OID) has now, with their attnums.
SELECT attname, attnum
FROM pg_catalog.pg_attribute
WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped

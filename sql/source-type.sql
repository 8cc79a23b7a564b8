-- A type of the source by OID ($1): its name, kind, a domain's base type
-- and modifier, an array's element type and that type's delimiter
-- (array_out separates elements with the element type's typdelim). No
-- row: the type is gone (dropped since).
SELECT t.typname, t.typtype, t.typbasetype, t.typtypmod,
       CASE WHEN t.typlen = -1 AND t.typcategory = 'A' THEN t.typelem ELSE 0 END,
       e.typdelim
FROM pg_catalog.pg_type t
LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
WHERE t.oid = $1

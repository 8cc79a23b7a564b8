-- The indexes of the relations $1 (an oid[] literal) that the mirror
-- copies: plain btree indexes (no expression, no predicate) that are valid
-- and live, other than the one that is the table's replica identity (the
-- mirror's PRIMARY KEY already). One row per key column, in index order:
-- table OID, index OID, index name, column name, and whether it is DESC.
-- A partitioned table's own (partitioned) index is listed like any other.
--
-- $2, filled in by the caller: the number of key columns (indnkeyatts
-- from 11 on, else indnatts); INCLUDE columns are not part of the key.
SELECT i.indrelid, i.indexrelid, ic.relname, a.attname,
       (i.indoption[k.n] & 1) <> 0
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
JOIN pg_catalog.pg_class tc ON tc.oid = i.indrelid
JOIN pg_catalog.pg_am am ON am.oid = ic.relam
CROSS JOIN LATERAL generate_series(0, $2 - 1) AS k(n)
JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[k.n]
WHERE i.indrelid = ANY ($1::pg_catalog.oid[])
  AND am.amname = 'btree' AND i.indexprs IS NULL AND i.indpred IS NULL
  AND i.indisvalid AND i.indislive
  AND NOT (tc.relreplident = 'd' AND i.indisprimary)
  AND NOT (tc.relreplident = 'i' AND i.indisreplident)
ORDER BY i.indrelid, ic.relname, i.indexrelid, k.n

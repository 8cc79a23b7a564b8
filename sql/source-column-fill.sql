-- What existing rows hold in column $2 of relation $1: the constant the
-- source gave them when the column was added (attmissingval is an
-- anyarray of one element; its text goes through text[] to get the
-- element's own output), and whether the column has a default.
SELECT atthasmissing, (attmissingval::text::text[])[1], atthasdef
FROM pg_catalog.pg_attribute
WHERE attrelid = $1 AND attname = $2 AND NOT attisdropped

-- Whether transaction $1 (a 32-bit xid) may still be invisible to a new
-- snapshot: it is in the snapshot's list of running transactions, or not
-- yet below its xmax (a commit that is being made visible). Compared
-- modulo 2^32, so that the xid's epoch does not matter.
SELECT EXISTS (SELECT 1 FROM pg_catalog.txid_snapshot_xip(q.s) x
               WHERE x % 4294967296 = $1::bigint)
       OR (($1::bigint - pg_catalog.txid_snapshot_xmax(q.s)) % 4294967296
           + 4294967296) % 4294967296 < 2147483648
FROM (SELECT pg_catalog.txid_current_snapshot() AS s) q

-- The replication slot named $2 (a quoted literal). $1 says whether it
-- was invalidated: wal_status = 'lost' from PostgreSQL 13 on, false before.
-- $3 whether it is a failover slot: failover from 17 on, false before.
-- $4 why it was invalidated: invalidation_reason from 17 on, NULL before.
SELECT active, plugin, database, confirmed_flush_lsn, $1, $3, $4
FROM pg_catalog.pg_replication_slots
WHERE slot_name = $2

-- pgmirror's own tables in the mirror file. Compiled into the binary
-- (scripts/sql2c.sh); names starting with pgmirror_ are reserved.

-- One row: where this mirror comes from and how far it has got.
CREATE TABLE IF NOT EXISTS pgmirror_state (
    id                INTEGER PRIMARY KEY CHECK (id = 1),
    slot              TEXT NOT NULL,          -- replication slot on the source
    publications      TEXT NOT NULL,          -- comma-separated, sorted
    system_identifier TEXT NOT NULL,          -- IDENTIFY_SYSTEM systemid
    database          TEXT NOT NULL,          -- IDENTIFY_SYSTEM dbname
    confirmed_lsn     TEXT NOT NULL,          -- X/Y: everything up to here is applied
    last_commit_time  TEXT,                   -- UTC source commit time of the last transaction
    initial_copy_done INTEGER NOT NULL DEFAULT 0, -- 1 once the first run's copy committed
    format_version    INTEGER NOT NULL DEFAULT 1, -- MIRROR_FORMAT_VERSION (mirror.h): a newer one is refused
    -- the device's health, for --status (format 3; mirror_upgrade() adds
    -- these columns to an older file)
    last_sync_time    TEXT,                   -- UTC: a run last knew the mirror held all the source had committed
    last_sync_lag_bytes   INTEGER,            -- the lag at that moment: server WAL end minus confirmed_lsn
    last_sync_lag_seconds REAL,               -- and now minus the last applied commit's time
    last_check_time   TEXT,                   -- UTC: the last integrity check
    last_check_result TEXT,                   -- 'ok', or what the check found
    last_rebuild_time TEXT,                   -- UTC: the last rebuild from a fresh copy
    last_rebuild_reason TEXT,                 -- why (slot lost, mirror damaged, ...)
    last_error        TEXT,                   -- the last run's error; NULL once a run succeeds
    last_error_time   TEXT,                   -- UTC: when it happened
    last_generation   INTEGER NOT NULL DEFAULT 1, -- the last pgmirror_tables.generation given
    publication_fingerprint TEXT              -- the publications' fingerprint whose consequences
                                              -- are in the mirror (format 4; NULL: none)
);

-- One row per mirrored column, in source order.
CREATE TABLE IF NOT EXISTS pgmirror_columns (
    table_name    TEXT NOT NULL,              -- SQLite table name
    column_name   TEXT NOT NULL,
    position      INTEGER NOT NULL,           -- 1-based, source order
    pg_type       TEXT NOT NULL,              -- source type name
    type_modifier INTEGER NOT NULL,           -- atttypmod (-1 when none)
    is_key        INTEGER NOT NULL,           -- 1 if part of the replica identity
    type_oid      INTEGER NOT NULL,           -- source type OID
    value_type    INTEGER NOT NULL,           -- how values are stored (ValueType in values.h)
    source_attnum INTEGER NOT NULL,           -- pg_attribute.attnum on the source; 0 unknown
    PRIMARY KEY (table_name, position)
);

-- One row per mirrored table: which source relation it stands for.
CREATE TABLE IF NOT EXISTS pgmirror_tables (
    table_name    TEXT NOT NULL PRIMARY KEY,  -- SQLite table name
    source_schema TEXT NOT NULL,
    source_table  TEXT NOT NULL,
    relation_oid  INTEGER NOT NULL,           -- source pg_class OID
    replica_identity TEXT NOT NULL,           -- d, n, f or i
    sync_lsn      TEXT,                       -- X/Y: the rows are a snapshot's at this LSN;
                                              -- the table's changes apply from transactions
                                              -- committed at or after it (NULL: all)
    generation    INTEGER NOT NULL DEFAULT 1, -- changes whenever the rows are replaced
                                              -- without being applied as changes (format 3)
    definition    TEXT,                       -- what the publications publish of the table
                                              -- at its last sync (NULL: not known yet)
    -- a copy in parts (format 4): its key ranges, each with its snapshot's
    -- LSN (include/pgmirror/copy_ranges.h; NULL: copied whole), the rows it has
    -- stored, and the source's estimate of the table's rows
    copy_state    TEXT,
    copy_rows     INTEGER NOT NULL DEFAULT 0,
    copy_estimate INTEGER
);

-- One row per published table that cannot be mirrored now for a reason of
-- its own (no SELECT privilege, a name or columns SQLite cannot hold): it
-- has no mirror table, its changes are skipped, and it is tried again at
-- every start and every check; once it can be taken it is synced as a
-- joining table and its row goes (DESIGN.md, invariant 14).
-- A table whose copy met a value the mirror cannot store remembers that
-- copy (copy_*), and is copied again only once something that could change
-- the outcome did: its shape as published, a change of its rows in the
-- stream, or the back-off's time (src/run/waiting.c).
CREATE TABLE IF NOT EXISTS pgmirror_waiting (
    relation_oid  INTEGER PRIMARY KEY,        -- source pg_class OID
    source_schema TEXT NOT NULL,
    source_table  TEXT NOT NULL,
    reason        TEXT NOT NULL,              -- why it waits, and what to do
    since         TEXT NOT NULL,              -- UTC: when it began to wait
    copy_shape    TEXT,                       -- the failed copy's shape (NULL: none)
    copy_lsn      TEXT,                       -- ... its snapshot's LSN (X/Y)
    copy_changed  INTEGER NOT NULL DEFAULT 0, -- a change of its rows came since
    copy_tries    INTEGER NOT NULL DEFAULT 0, -- failed copies in a row
    copy_retry    TEXT                        -- UTC: copied again then at the latest
);

-- The tables a sync (a first run, tables that join) is to copy and has not
-- begun, with the source's estimate of their rows (NULL: not known), so
-- that --status shows what is left; a table's row counts no more once it
-- has a mirror table of its own (its copy began) or waits. Replaced by
-- each sync when it starts, emptied when it ends.
CREATE TABLE IF NOT EXISTS pgmirror_pending (
    relation_oid  INTEGER PRIMARY KEY,        -- source pg_class OID
    source_schema TEXT NOT NULL,
    source_table  TEXT NOT NULL,
    estimate      INTEGER                     -- the source's estimate of its rows
);

-- A mirror table whose rows are copied again without readers seeing a
-- part of it (--resync, a definition changed, a rebuild after a lost
-- slot): the new copy goes into a staged table (pgmirror_stage_OID,
-- registered in pgmirror_tables, in parts that survive a cut), while the
-- old table keeps its name and its rows, frozen; once the copy is done the
-- staged table takes the old one's place in one transaction (a rebuild's
-- all at once).
CREATE TABLE IF NOT EXISTS pgmirror_staged (
    relation_oid  INTEGER PRIMARY KEY,        -- source pg_class OID
    old_name      TEXT NOT NULL               -- the table readers see meanwhile
);

-- The feed (docs/feed.md) this mirror writes, as a hub (role 'hub':
-- location is the feed's directory), or reads, as a device (role
-- 'device': location is the feed's URL, credentials masked); no row:
-- neither. format 5. feed_group is written in the same transaction as
-- the group's contents.
CREATE TABLE IF NOT EXISTS pgmirror_feed (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    role          TEXT NOT NULL CHECK (role IN ('hub', 'device')),
    location      TEXT NOT NULL,
    epoch         TEXT NOT NULL,              -- 32 hex digits
    feed_group    INTEGER NOT NULL,           -- the last group this mirror committed
    seq           INTEGER NOT NULL DEFAULT 0, -- hub: of the last manifest written;
                                              -- device: the highest read
    end_group     INTEGER,                    -- device: the feed's end when last read
    end_lsn       TEXT,                       -- X/Y: its position
    end_time      TEXT,                       -- UTC: its last source commit
    read_time     TEXT,                       -- UTC: when the manifest was last read
    stale         INTEGER NOT NULL DEFAULT 0  -- hub: 1 once a step of the run's own changed
                                              -- the mirror: the next run begins a new epoch
);

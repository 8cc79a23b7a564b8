/*
 * mirror.h: the SQLite file. Opens it with the right pragmas and a lock
 * that keeps out a second pgmirror, keeps pgmirror's own tables
 * (sql/schema.sql), creates and alters mirrored tables, and runs the
 * per-table prepared statements the applier needs. The only module that
 * includes sqlite3.h.
 */
#ifndef PGMIRROR_MIRROR_H
#define PGMIRROR_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/util.h"
#include "pgmirror/values.h"

typedef struct Mirror Mirror;
typedef struct MirrorTable MirrorTable;

/*
 * The format of the mirror file this pgmirror writes, stored in
 * pgmirror_state.format_version. Raise it when an older pgmirror could no
 * longer use a mirror correctly; mirror_open() refuses a newer one.
 */
#define MIRROR_FORMAT_VERSION 5 /* 2: pgmirror_tables.sync_lsn; 3: health, generation,
				  * definition; 4: copy_state, copy_rows, copy_estimate,
				  * publication_fingerprint; 5: pgmirror_feed, the failed
				  * copies of pgmirror_waiting */

/* Results of mirror_open(). */
typedef enum MirrorOpenResult {
	MIRROR_OPEN_OK = 0,
	MIRROR_OPEN_ERROR = 1,  /* message in *errmsg */
	MIRROR_OPEN_LOCKED = 3, /* another pgmirror holds the file */
	MIRROR_OPEN_DAMAGED = 5, /* for writing, a mirror SQLite reports
				  * damaged: *out is set, locked, for
				  * mirror_close_as_is() (MIRROR_READ: an
				  * error) */
} MirrorOpenResult;

/* What the mirror records about itself (pgmirror_state). */
typedef struct MirrorState {
	bool present;             /* a state row exists */
	char *slot;
	char *publications;       /* comma-separated, sorted, no duplicates */
	char *system_identifier;
	char *database;
	Lsn confirmed_lsn;
	char *last_commit_time;   /* NULL until a transaction was applied */
	bool initial_copy_done;   /* false: the first run did not finish */
} MirrorState;

void mirror_state_clear(MirrorState *st);

typedef enum MirrorMode {
	MIRROR_WRITE,    /* an existing file, for writing */
	MIRROR_CREATE,   /* for writing, created if missing */
	MIRROR_READ,     /* read only, without the writer lock (--status) */
} MirrorMode;

/*
 * Opens the mirror at path. For writing: takes the writer lock, sets WAL
 * mode and the pragmas, and creates pgmirror's own tables. On error
 * *errmsg is a malloc'd message (free it).
 */
MirrorOpenResult mirror_open(const char *path, MirrorMode mode, Mirror **out,
			     char **errmsg);
void mirror_close(Mirror *m);
/* Who holds the writer lock of the mirror at path (mirror_holder.c): its
 * process and the pgmirror systemd unit it runs in (*unit malloc'd, NULL
 * when not in one); false when /proc cannot tell. */
bool mirror_holder(const char *path, long *pid, char **unit);
/* Closes a damaged mirror as it is: no checkpoint, its -wal stays. */
void mirror_close_as_is(Mirror *m);

/* The last error on this mirror; owned by the mirror. */
const char *mirror_error(const Mirror *m);
/* The SQLite library in use (not the headers' version), e.g. "3.40.1". */
const char *mirror_sqlite_version(void);
/* Whether that SQLite has the WAL-reset bug (docs/durability.md). */
bool mirror_sqlite_wal_reset_bug(void);

/* Reads pgmirror_state into *st (st->present false when there is none). */
bool mirror_read_state(Mirror *m, MirrorState *st) PGM_MUST_CHECK;

/* Inserts or replaces the state row's identity (slot, publications,
 * system, database, confirmed_lsn, initial_copy_done); within a
 * transaction. */
bool mirror_write_state(Mirror *m, const MirrorState *st) PGM_MUST_CHECK;

/* Sets confirmed_lsn (and last_commit_time unless NULL); within a
 * transaction. */
bool mirror_set_position(Mirror *m, Lsn lsn, const char *commit_time)
	PGM_MUST_CHECK;

/*
 * Has every SQLite statement call tick(ctx) now and then (NULL: stop
 * calling). When it returns false the running statement fails
 * ("interrupted") and the caller rolls back; a commit or rollback runs to
 * its end whatever tick says.
 */
void mirror_set_tick(Mirror *m, TickFn tick, void *ctx);

bool mirror_begin(Mirror *m) PGM_MUST_CHECK;
bool mirror_commit(Mirror *m) PGM_MUST_CHECK;
void mirror_rollback(Mirror *m);

/*
 * What a feed's writer (a hub, docs/feed.md) does around each write
 * transaction of the mirror. before_commit runs inside the transaction,
 * just before its COMMIT: what it writes commits with it, and false rolls
 * the transaction back (the commit fails with its error text in err).
 * committed runs once the COMMIT succeeded, rolled_back after any
 * rollback of a write transaction. Any of them may be NULL.
 */
typedef struct MirrorCommitHooks {
	bool (*before_commit)(void *ctx, Mirror *m, ErrBuf *err);
	void (*committed)(void *ctx);
	void (*rolled_back)(void *ctx);
	void *ctx;
} MirrorCommitHooks;
/* hooks NULL: none (the default). */
void mirror_set_commit_hooks(Mirror *m, const MirrorCommitHooks *hooks);
/* Whether m's hooks are those of ctx: false on a mirror opened since (a
 * Mirror may be given the address of one closed before). */
bool mirror_commit_hooks_are(const Mirror *m, const void *ctx);
/*
 * With hooks set, in before_commit: whether the transaction changed what a
 * device of the feed holds: a mirror table, its rows, or pgmirror's tables
 * that describe them (a table made, dropped, renamed or altered, an index,
 * pgmirror_tables or pgmirror_columns), as opposed to what only this run
 * reads (pgmirror_state, the waiting and pending tables, pgmirror_feed).
 * Row changes are seen in tables with a row id (SQLite's update hook),
 * the rest through the schema's version.
 */
bool mirror_txn_changed_content(Mirror *m, bool *changed) PGM_MUST_CHECK;

/* pgmirror_feed's row (mirror_feed.c): the feed this mirror writes (a
 * hub) or reads (a device). */
typedef struct MirrorFeedState {
	bool present;             /* the row exists */
	bool hub;                 /* role 'hub'; else 'device' */
	char *location;           /* the directory, or the URL */
	char epoch[33];           /* 32 hex digits */
	uint64_t group;           /* the last group this mirror committed */
	uint64_t seq;             /* hub: of the last manifest written; device: the highest read */
	uint64_t end_group;       /* device: the feed's end when last read (0: unknown) */
	Lsn end_lsn;
	char *end_time;           /* UTC text, or NULL */
	char *read_time;          /* UTC text, or NULL */
	bool stale;               /* hub: the mirror changed outside the feed's groups */
} MirrorFeedState;

void mirror_feed_state_clear(MirrorFeedState *st);
/* Reads the row (st->present false when there is none); a value out of
 * range is damage, said in the error. */
bool mirror_feed_read(Mirror *m, MirrorFeedState *st) PGM_MUST_CHECK;
/* Writes the whole row; within a transaction. */
bool mirror_feed_write(Mirror *m, const MirrorFeedState *st) PGM_MUST_CHECK;
/* Sets feed_group; within a transaction (the group's own). */
bool mirror_feed_set_group(Mirror *m, uint64_t group) PGM_MUST_CHECK;
/* Marks the feed stale; within the transaction that made it so. */
bool mirror_feed_set_stale(Mirror *m) PGM_MUST_CHECK;
/* confirmed_lsn as the open transaction sees it. */
bool mirror_read_position(Mirror *m, Lsn *lsn) PGM_MUST_CHECK;

/* A feed's snapshot taken by a device (within a transaction): its
 * pgmirror_feed row becomes st (a device's), and the hub's health is
 * forgotten (the device keeps its own). */
bool mirror_feed_adopt(Mirror *m, const MirrorFeedState *st) PGM_MUST_CHECK;
/* Puts the closed mirror file fresh at path in place of what is there
 * (whose connections are closed): path's -wal and -shm removed, the
 * rename, the directory synced, fresh's -wal and -shm removed. False
 * with *errmsg (free it). */
bool mirror_install(const char *fresh, const char *path, char **errmsg) PGM_MUST_CHECK;

/* Writes the mirror as it stands, in one read transaction, to a new file
 * at path (which must not exist); outside any transaction. A feed's
 * snapshot (mirror_feed.c). */
bool mirror_snapshot_to(Mirror *m, const char *path) PGM_MUST_CHECK;
/*
 * A read transaction: every statement until mirror_rollback() (or
 * mirror_close()) sees the file as its first read found it, whatever a
 * writer commits meanwhile, so that many reads (--status's) make one
 * picture: a table listed is there to count.
 */
bool mirror_begin_read(Mirror *m) PGM_MUST_CHECK;

/* Removes every mirrored table and its metadata (a fresh start); within a
 * transaction. */
bool mirror_drop_all_tables(Mirror *m) PGM_MUST_CHECK;

/* One mirrored column, as described by the source. */
typedef struct MirrorColumnDef {
	const char *name;
	const char *pg_type;  /* source type name, for pgmirror_columns */
	uint32_t type_oid;
	int32_t type_mod;
	ColumnType type;      /* how values are stored */
	bool is_key;
	int attnum;           /* the source's attnum; 0 when unknown */
} MirrorColumnDef;

typedef struct MirrorTableDef {
	const char *name;          /* SQLite table name */
	const char *source_schema;
	const char *source_table;
	uint32_t relation_oid;
	char replident;            /* d, n, f or i */
	int ncols;
	const MirrorColumnDef *cols;
} MirrorTableDef;

/* How a column of the new definition gets its values from the old table. */
typedef enum ColumnConv {
	CONV_COPY,   /* the old column's values as they are */
	CONV_TEXT,   /* the old integers as text */
	CONV_REAL,   /* the old integers as reals */
	CONV_FILL,   /* a new column: one value for every existing row */
} ColumnConv;

/* What making the table match a definition takes. */
typedef struct MirrorPlan {
	bool exists;        /* the table is in the mirror */
	bool same;          /* and already matches: nothing to change */
	bool has_rows;      /* it holds rows that are kept */
	bool keep_rows;     /* false: another source table, start empty */
	int ncols;          /* of the new definition */
	ColumnConv *conv;   /* per new column */
	char **src;         /* per new column: the old column's name, or NULL */
	bool start_over;    /* refused: only a new mirror can take the change */
} MirrorPlan;

/*
 * Compares def with the table the mirror has under def->name. Columns are
 * the same column when their source attnums are (a rename keeps values, a
 * column dropped and added again does not); where an attnum is unknown,
 * by name, then a column whose name is gone by position and type. A source
 * table that is not the one the mirror table was made from (another OID)
 * starts the table empty.
 *
 * refill: the caller can refill any column from the source (a table with
 * a key), so a retyped column is planned as CONV_FILL. Otherwise a type
 * change is followed only where pgmirror reproduces the source's
 * conversion exactly, and false, with the error set, where it cannot; also
 * when another source table already has the name.
 */
bool mirror_table_plan(Mirror *m, const MirrorTableDef *def, bool refill,
		       MirrorPlan *plan) PGM_MUST_CHECK;
void mirror_plan_free(MirrorPlan *plan);

/*
 * Before a rebuild: renames in place (ALTER TABLE RENAME COLUMN) each
 * column that the plan keeps under a new name, so that the user's
 * indexes, views and triggers that name it follow it (SQLite rewrites
 * them), and the plan with it. Where SQLite refuses, the columns keep
 * their names (true all the same); false only on an error, such as an
 * interrupted statement. Within a transaction.
 */
bool mirror_table_rename_columns(Mirror *m, const MirrorTableDef *def, MirrorPlan *plan)
	PGM_MUST_CHECK;

/*
 * Makes the SQLite table match def as planned, creating it or rebuilding
 * it with its rows (fill[i] for CONV_FILL columns), and records it in
 * pgmirror_tables/pgmirror_columns; within a transaction. The handle
 * caches the table's prepared statements; free it with mirror_table_free()
 * before the table changes again.
 */
bool mirror_table_sync(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
		       const Value *fill, MirrorTable **out) PGM_MUST_CHECK;
void mirror_table_free(MirrorTable *t);

/*
 * Row changes. vals has one Value per column in source order. For updates
 * and deletes, match has one Value per column and match_used marks which
 * columns identify the row: the key columns, or every column for REPLICA
 * IDENTITY FULL (then exactly one matching row is changed, NULL-safe).
 * For updates, keep[i] true means the column was not sent (unchanged
 * TOASTed value) and keeps its current value. *nchanged is set to the
 * number of rows changed.
 */
bool mirror_table_insert(MirrorTable *t, const Value *vals) PGM_MUST_CHECK;
bool mirror_table_update(MirrorTable *t, const Value *match,
			 const bool *match_used, const Value *vals,
			 const bool *keep, int *nchanged) PGM_MUST_CHECK;
bool mirror_table_delete(MirrorTable *t, const Value *match,
			 const bool *match_used, int *nchanged) PGM_MUST_CHECK;
bool mirror_table_truncate(MirrorTable *t) PGM_MUST_CHECK;
/* Sets column col of the row whose key columns equal match[] (one Value
 * per column; only the key columns are read) to v. */
bool mirror_table_set_column(MirrorTable *t, int col, const Value *match, const Value *v)
	PGM_MUST_CHECK;

/*
 * A mirror table is known by its source relation's OID; its name follows
 * the source table's (naming.h). What pgmirror_tables records of one:
 */
typedef struct MirrorTableInfo {
	char *name;                /* SQLite table name */
	char *source_schema;       /* the source's names it was last given */
	char *source_table;
	uint32_t relation_oid;
	char replident;            /* the replica identity it was made with: d, n,
				    * f or i */
	Lsn sync_lsn;              /* its rows are a snapshot's at this LSN; its
				    * changes apply from transactions that commit
				    * at or after it (LSN_INVALID: all) */
	char *definition;          /* what made its published contents when it was
				    * last copied (SourceTable's); NULL: not known */
	char *copy_state;          /* a copy in parts: its key ranges (copy_ranges.h);
				    * NULL: copied whole */
	int64_t copy_rows;         /* rows that copy has stored so far */
	int64_t copy_estimate;     /* the source's estimate of the table's rows; -1 */
} MirrorTableInfo;

void mirror_table_info_clear(MirrorTableInfo *t);
void mirror_table_infos_free(MirrorTableInfo *t, int n);

/* Every mirror table (sorted by name). */
bool mirror_table_infos(Mirror *m, MirrorTableInfo **out, int *n) PGM_MUST_CHECK;
/* The mirror table of source relation oid; *found false when none. */
bool mirror_table_by_oid(Mirror *m, uint32_t oid, bool *found, MirrorTableInfo *out)
	PGM_MUST_CHECK;
/* The mirror table named name, ignoring (ASCII) case as SQLite does. */
bool mirror_table_by_name(Mirror *m, const char *name, bool *found, MirrorTableInfo *out)
	PGM_MUST_CHECK;

/* A new name for the mirror table of a source relation. */
typedef struct MirrorRename {
	uint32_t relation_oid;
	const char *name;          /* the new SQLite name */
	const char *source_schema; /* the source's names it comes from */
	const char *source_table;
} MirrorRename;

/*
 * Renames the mirror tables of the relations in rn[] to their new names,
 * within a transaction, keeping their rows, their indexes and triggers,
 * and the user's views and triggers that name them (SQLite rewrites
 * those), and records the names in pgmirror_tables and pgmirror_columns.
 * Names may move around among the tables of rn[] (a swap): all move out
 * of the way first. A new name that a mirror table outside rn[] holds, or
 * a table, view or index of the user's, is an error; then the
 * caller rolls back. Handles of the renamed tables (mirror_table_sync)
 * must be freed: their statements name the old table.
 */
bool mirror_tables_rename(Mirror *m, const MirrorRename *rn, int n) PGM_MUST_CHECK;

/* Removes the mirror table of relation oid (if any) and what pgmirror
 * records of it; within a transaction. The user's objects on it or naming
 * it go too, each with a warning (see mirror_user_objects_save). */
bool mirror_table_drop(Mirror *m, uint32_t oid) PGM_MUST_CHECK;

/* A source index the mirror copies (see mirror_index.c for the names). */
typedef struct MirrorIndexDef {
	uint32_t oid;              /* the source index's OID */
	const char *name;          /* and its name */
	int ncols;
	const char *const *cols;   /* key columns, in index order */
	const bool *desc;          /* per column: DESC */
} MirrorIndexDef;

/*
 * Makes pgmirror's indexes on mirror table `table` match: a non-unique
 * index for each of defs[0..n-1] whose columns the table has (others are
 * left out), the match index of a REPLICA IDENTITY FULL table; pgmirror's
 * indexes that are not (or no longer) wanted are dropped. The user's own
 * indexes are not touched. Within a transaction.
 */
bool mirror_table_indexes(Mirror *m, const char *table, const MirrorIndexDef *defs,
			  int n) PGM_MUST_CHECK;

/*
 * The user's own objects (indexes, views and triggers not named pgmirror_*
 * or sqlite_*), set aside while pgmirror remakes mirror tables and made
 * again after (mirror_userobj.c). Within one transaction:
 *
 *   mirror_user_objects_save(m, tables, n, &u)   before the tables change
 *   ... drop, rebuild, rename, fill the tables ...
 *   mirror_user_objects_restore(m, u, &dropped, &ndropped)
 *   mirror_user_objects_free(u)
 *
 * save() reads and drops the user's indexes on tables[0..n-1] (NULL: on
 * every mirror table) and every view and trigger of the user's, so that
 * no trigger of the user's fires and no view stands in the way while the
 * tables change. restore() makes them again in the order they were made;
 * one that no longer applies (it names a column or table that is gone, a
 * trigger that would make pgmirror's own changes fail, a unique index the
 * rows break) is left out, and *dropped gets a line for it, `view "v" (no
 * such column: b)`, for the caller to warn with (free with strv_free()).
 * After an error the caller rolls back, which puts everything back.
 * Saves may nest (a second one finds the views and triggers gone and
 * takes only its tables' indexes) when restored in reverse order, after
 * every table's rows are in.
 */
typedef struct MirrorUserObjects MirrorUserObjects;

bool mirror_user_objects_save(Mirror *m, const char *const *tables, int n,
			      MirrorUserObjects **out) PGM_MUST_CHECK;
bool mirror_user_objects_restore(Mirror *m, const MirrorUserObjects *u, char ***dropped,
				 int *ndropped) PGM_MUST_CHECK;
void mirror_user_objects_free(MirrorUserObjects *u);


/*
 * The device's health (mirror_health.c), for --status; NULL or false where
 * nothing is known yet. Times are UTC text.
 */
typedef struct MirrorHealth {
	char *last_sync_time;      /* a run last knew the mirror held all the source had committed */
	bool has_lag;              /* lag_bytes and lag_seconds were stored with it */
	int64_t lag_bytes;         /* the lag then */
	double lag_seconds;
	char *last_check_time;     /* the last integrity check */
	char *last_check_result;
	char *last_rebuild_time;   /* the last rebuild from a fresh copy */
	char *last_rebuild_reason;
	char *last_error;          /* the last run's error; NULL once a run succeeds */
	char *last_error_time;
} MirrorHealth;

bool mirror_read_health(Mirror *m, MirrorHealth *h) PGM_MUST_CHECK;
void mirror_health_clear(MirrorHealth *h);
/* The mirror held all the source had committed at `when` (UTC text), with
 * this lag at the moment it was stored; clears the last error (the run
 * succeeded). Outside a transaction (then one of its own) or within one. */
bool mirror_note_sync(Mirror *m, const char *when, int64_t lag_bytes, double lag_seconds)
	PGM_MUST_CHECK;
/* An integrity check found result now ("ok" or what it found). */
bool mirror_note_check(Mirror *m, const char *result) PGM_MUST_CHECK;
/* The mirror was rebuilt from a fresh copy now, for reason. */
bool mirror_note_rebuild(Mirror *m, const char *reason) PGM_MUST_CHECK;
/* The run fails with error. */
bool mirror_note_error(Mirror *m, const char *error) PGM_MUST_CHECK;
/* A new generation number for a table whose rows are replaced (never one
 * given before in this mirror); within a transaction. */
bool mirror_next_generation(Mirror *m, int64_t *out) PGM_MUST_CHECK;
/* The generation number of mirror table `table`. */
bool mirror_table_generation(Mirror *m, const char *table, int64_t *out) PGM_MUST_CHECK;

/*
 * Damage (mirror_check.c). SQLite reports it in any statement as
 * SQLITE_CORRUPT, SQLITE_NOTADB or an error reading the file.
 */
bool mirror_is_damage_code(int sqlite_code);
/* What SQLite reported of damage since the last forget, or what a reader
 * found in pgmirror's own tables (mirror_damage_own()), or NULL. */
const char *mirror_damage_seen(void);
bool mirror_damage_own(void);
void mirror_damage_forget(void);

/* Whether a file SQLite cannot read was made by pgmirror (it or its -wal
 * still holds the catalog entry of pgmirror_state). */
bool mirror_file_was_mirror(const char *path);

typedef enum MirrorCheckResult {
	MIRROR_CHECK_SOUND,
	MIRROR_CHECK_DAMAGED,
	MIRROR_CHECK_FAILED,     /* the check could not run (*found says why) */
} MirrorCheckResult;

/* SQLite's integrity check of the file at path, on a read-only connection
 * of its own; *found (free it): "ok", or what it found, on one line. */
MirrorCheckResult mirror_check_file(const char *path, char **found);

/* The same check in a thread of its own; NULL if it cannot start. */
typedef struct MirrorCheck MirrorCheck;
MirrorCheck *mirror_check_start(const char *path);
/* Whether it has finished; then its result, *found (free it) and how long
 * it took. */
bool mirror_check_done(MirrorCheck *c, MirrorCheckResult *res, char **found,
		       int64_t *usecs);
/* Stops it (if still running) and frees it. */
void mirror_check_free(MirrorCheck *c);

/* Whether a check is due: the last one is older than max_age_secs, none
 * was made, or the last one found damage that no rebuild has mended since
 * (--check records it and heals nothing: the run after it does). */
bool mirror_check_due(Mirror *m, int max_age_secs, bool *due) PGM_MUST_CHECK;

/*
 * A damaged mirror whose header SQLite cannot read: a copy of it at copy
 * with a header made anew, opened for reading (MIRROR_READ), or NULL when
 * that cannot be read either (then no copy is left). Close it, then
 * remove the copy (mirror_remove_files()).
 */
Mirror *mirror_open_repaired(const Mirror *damaged, const char *copy);
/* Whether the last error on m was a header SQLite cannot read (NOTADB, or
 * a schema format it does not know). */
bool mirror_header_unreadable(const Mirror *m);

/* Removes the file at path and what SQLite keeps beside it. */
void mirror_remove_files(const char *path);
/*
 * Sets the damaged mirror at path aside as path.damaged, its -wal as
 * path.damaged-wal (replacing older ones), removes its -shm, and (fresh
 * not NULL) renames the file fresh to path. Its connections must be
 * closed. False with *errmsg (free it).
 */
bool mirror_set_aside(const char *path, const char *fresh, char **errmsg);
/*
 * The end of a mirror_set_aside() that a kill interrupted between its
 * renames. Nothing at path, its -wal gone and path.damaged there: the
 * damaged file was set aside, and fresh (complete: it is set in place only
 * once built and closed) takes the name now, unless a process holds it
 * (a rebuild in hand); *finished says whether it did. With path there, a
 * -wal of fresh left without its file (the file took the name
 * checkpointed) is removed. False with *errmsg (free it) when a rename
 * fails.
 */
bool mirror_finish_set_aside(const char *path, const char *fresh, bool *finished,
			     char **errmsg);

/*
 * Reads the user's objects of a mirror (a damaged one: as far as it can
 * be read), without changing it: tables of the user's, and indexes, views
 * and triggers, as mirror_user_objects_save() takes them.
 */
bool mirror_user_objects_read(Mirror *m, MirrorUserObjects **out) PGM_MUST_CHECK;
/*
 * Makes them again in m, in one transaction of its own (none may be
 * open): the user's tables with the rows that can still be read from the
 * file from_path, then as mirror_user_objects_restore(). A table whose
 * rows cannot be read is made empty, with a line in *dropped.
 */
bool mirror_user_objects_restore_from(Mirror *m, const char *from_path,
				      const MirrorUserObjects *u, char ***dropped,
				      int *ndropped) PGM_MUST_CHECK;

/* Sets the sync LSN of the table of relation oid; within a transaction. */
bool mirror_set_sync_lsn(Mirror *m, uint32_t oid, Lsn lsn) PGM_MUST_CHECK;
/* Sets the publication definition of the table of relation oid (see
 * MirrorTableInfo); within a transaction. */
bool mirror_set_definition(Mirror *m, uint32_t oid, const char *definition) PGM_MUST_CHECK;
/* Sets how far the copy in parts of the table of relation oid got (see
 * MirrorTableInfo); within a transaction. */
bool mirror_set_copy_state(Mirror *m, uint32_t oid, const char *state, int64_t rows,
			   int64_t estimate) PGM_MUST_CHECK;

/*
 * The publications' fingerprint stored in the mirror (session.h's
 * PubFingerprint hash; *out NULL when none, when a mirror table lacks its
 * definition, which the detail fills in, when a table waits: what it
 * waits for, a GRANT say, is not in the fingerprint, and it is tried again
 * at every check, when a copy in parts is unfinished, or when a table is
 * set aside for a copy again (mirror_stage.h) that a stop cut short or
 * left to be put in place), and storing one, within a transaction: only
 * once everything it led to is committed.
 */
bool mirror_publication_fingerprint(Mirror *m, char **out) PGM_MUST_CHECK;
bool mirror_set_publication_fingerprint(Mirror *m, const char *hash) PGM_MUST_CHECK;
/*
 * The columns mirror table `table` records (pgmirror_columns), in order:
 * name, type_oid, type_mod, is_key and attnum set, the rest zero. Free
 * with mirror_table_columns_free().
 */
bool mirror_table_columns(Mirror *m, const char *table, MirrorColumnDef **cols, int *n)
	PGM_MUST_CHECK;
void mirror_table_columns_free(MirrorColumnDef *cols, int n);

/* The mirrored tables' names, sorted; free with free() each and the array. */
bool mirror_list_tables(Mirror *m, char ***names, int *n) PGM_MUST_CHECK;
bool mirror_count_rows(Mirror *m, const char *table, int64_t *count)
	PGM_MUST_CHECK;

#endif

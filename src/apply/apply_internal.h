/*
 * apply_internal.h: what the two files of the applier share: the Applier
 * struct, its relation cache and type cache. apply.c owns transactions,
 * grouping and the dispatch of messages and row changes; apply_schema.c
 * the relation and type caches, Relation and Type messages, and making
 * and changing mirror tables (with the refill of added and retyped
 * columns from the source's catalog); apply_rename.c a mirror table's
 * name, which follows its source table's.
 */
#ifndef PGMIRROR_APPLY_INTERNAL_H
#define PGMIRROR_APPLY_INTERNAL_H

#include "pgmirror/apply.h"
#include "pgmirror/copy_ranges.h"
#include "pgmirror/values.h"

typedef struct RelEntry {
	uint32_t oid;           /* 0: free slot */
	char *display;          /* "schema.table", for messages */
	MirrorTableDef def;     /* from the Relation message; strings owned */
	MirrorColumnDef *cols;  /* def.cols, owned */
	MirrorTable *table;     /* NULL until the first change (see rel_sync) */
	char replident;
	int ncols;
	ColumnType *types;
	bool *is_key;
	ValueBuf *newbufs;      /* scratch per column, new tuple */
	ValueBuf *oldbufs;      /* scratch per column, old tuple */
	Value *newvals;
	Value *oldvals;
	bool *keep;             /* new tuple: column not sent ('u') */
	bool *used;             /* old tuple: column identifies the row */
	bool big_bufs;          /* a scratch buffer outgrew VALUES_BUF_KEEP */
	bool sync_known;        /* in_mirror and sync_lsn were read */
	bool in_mirror;         /* a mirror table stands for this OID */
	Lsn sync_lsn;           /* its changes apply from here (LSN_INVALID: all) */
	CopyRanges *ranges;     /* copied in parts: its changes apply per key
				 * range (apply_ranges.c); NULL: per table */
	bool waiting;           /* not in the mirror: it waits (pgmirror_waiting),
				 * its changes are skipped without a note */
	Lsn watch_lsn;          /* it waits after a copy that met a value: its
				 * first change committed at or after this is
				 * noted (mirror_waiting_note_change()), since
				 * it may remove the value; LSN_INVALID: none */
	bool noted;             /* not in the mirror: noted for the table sync */
	bool needs_sync;        /* its mirror table must be copied again (a keyless
				 * table's newly published column, a row moved
				 * into a row filter without a value): its
				 * changes are skipped, and it is noted, until
				 * then */
	bool may_create;        /* apply_make_table() is making its table */
	bool gone;              /* gone from the source, its name another's:
				 * its changes are not applied (apply_rename.c) */
	bool said_no_row;       /* a change found no row: said once (apply.c) */
	bool said_row_made;     /* an Update made its row: said once */
} RelEntry;

typedef struct TypeEntry {
	uint32_t oid;
	char *name;             /* pg_type.typname; NULL: look it up (again) */
	char *sent_name;        /* the name its last Type message gave; or NULL */
	ColumnType type;        /* how its values are stored */
} TypeEntry;

struct Applier {
	Mirror *m;
	const Catalog *catalog;
	int server_version;      /* the source's, for values in binary (0: none) */
	RelEntry *rels;          /* open-addressing table, size nrels_cap */
	size_t nrels_cap;
	size_t nrels;
	TypeEntry *types;        /* Type messages seen */
	size_t ntypes;
	bool big_bufs;           /* some relation's big_bufs is set */

	bool in_txn;             /* between Begin and Commit */
	bool skipping;           /* this transaction was applied before */
	bool txn_changed;        /* it had a message other than Origin/Message */
	bool last_empty;         /* the last Commit ended an empty transaction */
	Lsn txn_final_lsn;       /* Begin: LSN of the commit record */
	uint32_t txn_xid;        /* Begin: its transaction ID */
	int64_t txn_time;

	Lsn durable;             /* committed in the mirror */
	Lsn applied;             /* end of the last applied transaction */
	int64_t applied_time;    /* its commit time; 0 when none yet */
	int pending;             /* transactions in the open SQLite transaction */
	bool group_open;         /* an SQLite transaction is open */
	bool position_pending;   /* applied > durable needs storing */
	bool source_lost;        /* the last error was not reaching the source */
	bool defer_indexes;      /* rel_sync leaves the indexes to the caller */
	bool sync_mode;          /* a table sync's copy: see apply_set_sync_mode() */
	bool bad_value;          /* the last error is of a value (apply.c) */
	uint32_t *unknown;       /* changed relations the mirror does not have */
	int nunknown;
	bool waiting_changed;    /* a change of a table that waits after its copy
				  * met a value was noted (apply_schema.c) */
	int nrecolumned;         /* mirror tables a Relation message changed
				  * (apply_recolumned()) */
	MirrorUserObjects *reset_saved; /* apply_reset set them aside: made again
					 * at that transaction's Commit */

	ApplyStats stats;
	ApplyCommandFn command;  /* a hint's command (apply_set_command()) */
	void *command_ctx;
	ErrBuf err;          /* the last error */
};

/* apply_common.c: "; to start over: " and the --drop-slot command of this
 * run (apply_set_command()), for an error that only a new mirror mends
 * (malloc'd). */
char *apply_start_over_hint(Applier *a);
/* apply_common.c: opens the group's SQLite transaction unless it is open. */
bool apply_open_group(Applier *a) PGM_MUST_CHECK;

/* apply_common.c: makes the user's objects u again (mirror_user_objects_restore)
 * and frees them, with a warning for each that no longer applies after
 * what (e.g. "mirror table \"t\" changed"). */
bool apply_restore_user_objects(Applier *a, MirrorUserObjects *u, const char *what)
	PGM_MUST_CHECK;
/* apply_common.c: a catalog question failed: remembers whether for want
 * of the source. */
void apply_catalog_failed(Applier *a);
/* apply_common.c: r's mirror table cannot be held any more (why: its name
 * or columns, naming.h): it is dropped and r waits (pgmirror_waiting,
 * invariant 14), in the open group; its changes are skipped until a check
 * syncs it as a joining table. False with a->err. */
bool apply_wait_table(Applier *a, RelEntry *r, const char *why) PGM_MUST_CHECK;
/* apply_common.c: whether r, which has no mirror table, waits (r->waiting),
 * and from where its changes are to be noted (r->watch_lsn: it waits after
 * a copy that met a value, and no change of it was noted since). False
 * with a->err. */
bool apply_watch_waiting(Applier *a, RelEntry *r) PGM_MUST_CHECK;
/* apply_common.c: a change of r, which waits after a copy that met a
 * value, came from a transaction that copy did not see: noted in the open
 * group, so that the next check copies r again (src/run/waiting.c). False
 * with a->err. */
bool apply_note_waiting_change(Applier *a, RelEntry *r) PGM_MUST_CHECK;
/*
 * Converts a change's tuple into r's newvals (is_new) or oldvals
 * (apply_tuple.c); kind is the tuple's ('N', 'K', 'O'). False with the
 * error set, a->bad_value telling a value the mirror cannot store.
 */
bool apply_convert_tuple(Applier *a, RelEntry *r, const PgoTuple *tup, char kind, bool is_new,
			 const char *what) PGM_MUST_CHECK;
/* After apply_convert_tuple() failed: true when r's table now waits for a
 * value it cannot store (the change skipped), else false, the error kept. */
bool apply_tuple_failed(Applier *a, RelEntry *r) PGM_MUST_CHECK;

/* apply_schema.c */
/* Frees every cached relation (their mirror tables' statements too). */
void apply_rels_clear(Applier *a);
/* Frees the relation and type caches. */
void apply_cache_free(Applier *a);
/* The relation oid, described by a Relation message; or NULL. */
RelEntry *apply_rel_find(Applier *a, uint32_t oid);
/*
 * The relation a change is for (what: "Insert", ...); its mirror table is
 * made (or brought in line) on first use. NULL with the error set, or with
 * *skip true: the change is not applied (the transaction was applied
 * before; the mirror has no table for the relation, which is noted for the
 * table sync; or the table's rows are a snapshot that holds the change).
 */
RelEntry *apply_rel_for_change(Applier *a, uint32_t relid, const char *what, bool *skip);
bool apply_relation(Applier *a, const PgoRelation *rel) PGM_MUST_CHECK;
bool apply_type(Applier *a, const PgoType *t) PGM_MUST_CHECK;
/* How a column of type oid (typmod) is stored, and the type's name (kept
 * by the cache); false, error set, when the catalog cannot say
 * (apply_types.c). depth: of domains and arrays, 0 at first. */
bool apply_resolve_type(Applier *a, uint32_t oid, int32_t typmod, int depth, ColumnType *out,
			const char **name) PGM_MUST_CHECK;
/* Frees the type cache. */
void apply_types_free(Applier *a);
/* values_convert() of column col of r into buf/out; a buffer a huge value
 * made large is noted for apply_trim_scratch(). */
bool apply_convert_value(Applier *a, RelEntry *r, int col, const char *text, size_t len,
			 ValueBuf *buf, Value *out, char *err, size_t errsize) PGM_MUST_CHECK;
/* Marks r's mirror table to be copied again, as a joining table is: its
 * changes are skipped from now on, and it is noted for the table sync; its
 * stored definition is changed in the open group, so that a run that ends
 * before the copy leaves it to the next run's check. False with a->err. */
bool apply_sync_again(Applier *a, RelEntry *r) PGM_MUST_CHECK;
/* Lets the initial copy make relation oid's table (the stream never
 * does), while on. */
void apply_mark_creatable(Applier *a, uint32_t oid, bool on);
/* Shrinks the scratch buffers that grew past VALUES_BUF_KEEP. */
void apply_trim_scratch(Applier *a);

/* apply_ranges.c: reads r's key ranges from state (NULL: none), of the
 * key shape they were written with; false with a->err when they are
 * damaged. */
bool apply_ranges_load(Applier *a, RelEntry *r, const char *state) PGM_MUST_CHECK;
/* Whether r's ranges can be asked of its rows in the open transaction
 * (past its sync LSN): not when they are to be asked and r's key (its
 * Relation message's) has another number of columns than their keys;
 * then it says so in the log, and the table is to be copied again
 * (apply_sync_again()). */
bool apply_ranges_fit(const Applier *a, const RelEntry *r);
/* Whether r's changes in the open transaction apply row by row, as the
 * key range of each row says (apply_ranges_row()). */
bool apply_ranges_active(const Applier *a, const RelEntry *r);
/* Whether a change to the row of r with values vals (its key columns set)
 * applies in the open transaction. */
bool apply_ranges_row(const Applier *a, const RelEntry *r, const Value *vals);

/*
 * apply_rename.c: gives r's mirror table (found by OID) the name the
 * source table has, before its definition is planned, moving aside tables
 * whose names it takes; sets r->def's names to the ones it is mirrored
 * under, or sets r->gone. Within the open group.
 */
bool apply_follow_name(Applier *a, RelEntry *r) PGM_MUST_CHECK;

#endif

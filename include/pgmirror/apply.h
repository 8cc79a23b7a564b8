/*
 * apply.h: the applier. Takes decoded pgoutput messages and changes the
 * mirror: transaction boundaries, the relation cache (OID -> table,
 * column types, prepared statements), tables made from Relation messages,
 * and the row changes. Knows nothing of sockets or of the wire format.
 *
 * Source transactions are applied whole. Several may be grouped into one
 * SQLite transaction; apply_flush() commits the group together with the
 * end LSN of its last transaction, and only then does that LSN become
 * durable (apply_durable_lsn()), the only position that may be confirmed
 * to the server.
 */
#ifndef PGMIRROR_APPLY_H
#define PGMIRROR_APPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/catalog.h"
#include "pgmirror/mirror.h"
#include "pgmirror/pgoutput.h"
#include "pgmirror/util.h"
#include "pgmirror/values.h"

typedef struct Applier Applier;

/*
 * durable: the mirror's confirmed_lsn; transactions whose commit record
 * lies before it were applied already and are skipped. catalog answers
 * the few questions the stream leaves open (types that are not built in,
 * values of added columns); it must outlive the applier.
 */
Applier *apply_new(Mirror *m, Lsn durable, const Catalog *catalog);
void apply_free(Applier *a);

/* The stream asked for values in binary format from a source of
 * server_version (PQserverVersion()): some types' text, which the values
 * read in binary must equal, depends on it. */
void apply_set_binary(Applier *a, int server_version);
/* How the applier names a command in a hint: command(ctx, option) gives
 * the whole command line that runs pgmirror with option as this run does
 * (malloc'd). Unset: the hint names the option alone. */
typedef char *(*ApplyCommandFn)(void *ctx, const char *option);
void apply_set_command(Applier *a, ApplyCommandFn command, void *ctx);
const char *apply_error(const Applier *a);

/* Applies one message; false on error (the open SQLite transaction is then
 * rolled back and nothing more may be applied). */
bool apply_message(Applier *a, const PgoMessage *msg) PGM_MUST_CHECK;

/* The last apply_message() failed because the catalog could not reach the
 * source (Catalog.lost): trying again on a new connection may succeed. */
bool apply_source_lost(const Applier *a);

/*
 * Drops every mirrored table and forgets the relations seen, inside the
 * open source transaction (after a Begin): the initial copy that follows
 * fills the mirror afresh, and readers see the old tables until the whole
 * copy commits.
 */
bool apply_reset(Applier *a) PGM_MUST_CHECK;

/*
 * Makes the mirror table of relation relid (described by a Relation
 * message) now, as its first change would: the initial copy makes every
 * published table, even an empty one. A valid sync_lsn is stored as the
 * table's sync LSN at once, before any row is copied into it (see
 * copy_table_parts()), and a non-NULL definition as its publication
 * definition (what the rows are copied for).
 */
bool apply_make_table(Applier *a, uint32_t relid, Lsn sync_lsn,
		      const char *definition) PGM_MUST_CHECK;

/*
 * A table sync's applier: its Begin and Commit (at the sync's LSN) make
 * one SQLite transaction that holds the table's copy but never moves the
 * mirror's own position, and every relation it is given a table for is
 * made, whatever the mirror holds.
 */
void apply_set_sync_mode(Applier *a);

/*
 * Relations that changes were for, but that the mirror has no table for
 * (their changes were skipped): each a candidate for a table sync, noted
 * once until apply_forget_table(). apply_clear_unknown() empties the list.
 */
int apply_unknown_relations(const Applier *a, const uint32_t **oids);
void apply_clear_unknown(Applier *a);

/* Whether a change came for a table that waits after its copy met a value
 * the mirror cannot store (noted in the mirror, for the next check: the
 * end of a run that is to end checks at once). */
bool apply_waiting_changed(const Applier *a);

/*
 * How many times a Relation message of the stream changed a mirror
 * table's columns or key since apply_clear_recolumned(). The stream may
 * bring a definition that the source has left since (a column added, a
 * row, the column dropped: no later change brings the last one), so the
 * run compares the mirror's columns with the source's once it has caught
 * up (reconcile.c). The SQLite transaction of such a change also drops
 * the publications' stored fingerprint, so that a run cut before it
 * compares them at its next check.
 */
int apply_recolumned(const Applier *a);
void apply_clear_recolumned(Applier *a);

/*
 * The mirror table of relation oid was made, replaced or dropped outside
 * this applier (a table sync, a table that left): forget its statements
 * and its sync LSN; the next change reads them again. Outside a group.
 */
void apply_forget_table(Applier *a, uint32_t oid);

/*
 * Frees every mirror table handle (and its prepared statements, which name
 * the table), keeping what the Relation messages described: each table's
 * next change finds its table again, by OID. For a caller that renamed or
 * removed mirror tables itself while this applier lives (renames at start,
 * run between groups).
 */
void apply_forget_tables(Applier *a);

/*
 * For --verify: the values an Insert of tup into relation relid (described
 * by a Relation message) would store, converted exactly as apply_message()
 * converts them, without touching the mirror. *vals (one per column) is
 * valid until the next call. apply_relation_types(): how each of its
 * *ncols columns is stored.
 */
bool apply_convert_row(Applier *a, uint32_t relid, const PgoTuple *tup, const Value **vals)
	PGM_MUST_CHECK;
bool apply_relation_types(Applier *a, uint32_t relid, const ColumnType **types, int *ncols)
	PGM_MUST_CHECK;

/*
 * Inserts nrows rows of relation relid (vals: nrows times its columns)
 * whose values values_convert() made with apply_relation_types(), as
 * Insert messages with their text would (the initial copy converts its
 * rows on a reader thread: the types stay as they are until the next
 * Relation message or apply_reset()). On a failure the rows before it
 * are in.
 */
bool apply_insert_rows(Applier *a, uint32_t relid, const Value *vals, int nrows)
	PGM_MUST_CHECK;

/*
 * The tables this applier makes get no indexes from it (the initial copy:
 * its caller makes them once the rows are in, with indexes_sync(), which
 * is faster than keeping them up to date row by row).
 */
void apply_defer_indexes(Applier *a);

/* The name the stream's last Type message gave type oid (the server sends
 * one before a Relation message with a type that is not built in), or
 * NULL; for messages. */
const char *apply_type_sent_name(Applier *a, uint32_t oid);

/* Between a Begin and its Commit. */
bool apply_in_transaction(const Applier *a);
/* The open source transaction is skipped: it commits before the mirror's
 * position (applied already). */
bool apply_skipping(const Applier *a);

/* The last Commit ended a transaction without changes (servers before 15
 * send those for changes to unpublished tables): it was not applied, and
 * its end LSN is a position like a keepalive's. */
bool apply_last_txn_empty(const Applier *a);

/* Source transactions applied but not yet committed to SQLite. */
int apply_pending(const Applier *a);

/* Commits the open group, if any, with its position; no-op inside a
 * source transaction. */
bool apply_flush(Applier *a) PGM_MUST_CHECK;

/*
 * Records that everything up to lsn was received and applied (a keepalive
 * outside any transaction): it becomes durable at the next flush; when
 * nothing is pending, it is stored at once in a transaction of its own.
 */
bool apply_advance(Applier *a, Lsn lsn) PGM_MUST_CHECK;

Lsn apply_durable_lsn(const Applier *a);
/* The end LSN of the last transaction applied, durable or not. */
Lsn apply_applied_lsn(const Applier *a);

/* Counters for progress logs. */
typedef struct ApplyStats {
	uint64_t txns;
	uint64_t rows;
	int64_t last_commit_time;  /* of the last applied transaction */
} ApplyStats;
void apply_stats(const Applier *a, ApplyStats *out);

#endif

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
 * published table, even an empty one.
 */
bool apply_make_table(Applier *a, uint32_t relid) PGM_MUST_CHECK;

/*
 * For a copy that converts its rows away from the applier (the initial
 * copy does so on a reader thread): the types the columns of relation
 * relid are stored as, once its table is made (apply_make_table()); NULL
 * when unknown. Read-only, and valid until the next Relation message for
 * it or apply_reset(), so another thread may read it meanwhile.
 */
const ColumnType *apply_column_types(Applier *a, uint32_t relid);

/*
 * Inserts one row of relation relid whose values values_convert() made
 * with apply_column_types(), as an Insert message with their text would.
 */
bool apply_insert_values(Applier *a, uint32_t relid, const Value *vals) PGM_MUST_CHECK;

/* Between a Begin and its Commit. */
bool apply_in_transaction(const Applier *a);

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

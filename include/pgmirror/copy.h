/*
 * copy.h: the initial copy. Reads every published table with COPY inside
 * the slot's snapshot and feeds it to the applier just as the stream would:
 * a Relation message built from the catalog, then one Insert per row, all
 * within one synthetic source transaction at the slot's consistent point.
 * So table naming, type mapping and pgmirror_columns stay in the applier,
 * and the copy and its position commit in one SQLite transaction.
 *
 * While a table is copied, a thread of the copier's alone uses the Session
 * (it reads and converts the rows) and the caller's thread alone uses the
 * applier and SQLite (it inserts them). stopping is asked on the caller's
 * thread only: after each row, and every 100 ms while rows are awaited; the
 * session's stop check is meanwhile the copier's own (the caller gave up),
 * and stopping again once the table is done. One copy runs at a time.
 */
#ifndef PGMIRROR_COPY_H
#define PGMIRROR_COPY_H

#include <stdbool.h>
#include <stddef.h>

#include "pgmirror/apply.h"
#include "pgmirror/pgoutput.h"
#include "pgmirror/session.h"
#include "pgmirror/util.h"

typedef struct Copier Copier;

/* stopping: asked before each table and after each row (the session asks
 * it too while it waits for rows); when it says true the copy gives up (an
 * error "stopped by a signal") and leaves the open transaction to be rolled
 * back. */
Copier *copy_new(Session *s, Applier *a, bool (*stopping)(void));
void copy_free(Copier *c);
/* Makes the tables but copies no rows (--no-initial-copy). */
void copy_set_schema_only(Copier *c);
/* The last error; owned by the copier. */
const char *copy_error(const Copier *c);
/* Whether copy_one_table() failed on a value of the table that the mirror
 * cannot store (values.h refused it): a reason of that table, not of the
 * source or the mirror. */
bool copy_failed_on_value(const Copier *c);

/*
 * For copy_tables(): a table whose rows the source refuses for want of a
 * privilege, or that hold a value the mirror cannot store, is handed to
 * fn (its error in copy_error()) instead of failing the copy; the source
 * goes back to before its COPY (a savepoint per table), and the copy goes
 * on with the others when fn, which drops what it made, says true
 * (privilege: the source refused it; else a value).
 */
typedef bool (*CopyRefusedFn)(void *ctx, const SourceTable *t, bool privilege);
void copy_set_refused(Copier *c, CopyRefusedFn fn, void *ctx);

/*
 * Begins a transaction at consistent_point, drops every mirrored table
 * (apply_reset()), makes the n tables, then copies their rows
 * (session_copy_begin() on each, in the caller's snapshot transaction), and
 * commits it at consistent_point.
 * The applier's SQLite transaction stays open for the caller to store what
 * belongs with it; apply_flush() then commits the lot. Reports progress on
 * stderr (at most once a second) when stderr is a terminal or with -v, and
 * a line per table.
 */
bool copy_tables(Copier *c, const SourceTable *tables, int n, Lsn consistent_point)
	PGM_MUST_CHECK;

/* The Relation message pgoutput would send for t, into *msg, with its
 * columns in cols (t->ncols of them); both borrow t's strings. */
void copy_relation_message(const SourceTable *t, PgoColumn *cols, PgoMessage *msg);

/*
 * The steps of copy_tables() for a table sync: a synthetic source
 * transaction at lsn (its Begin opens the applier's SQLite transaction),
 * one table copied into it (made afresh from t, with sync_lsn, unless
 * LSN_INVALID, as its sync LSN), and its Commit; the caller then stores
 * what belongs with it and flushes the applier.
 */
bool copy_begin_at(Copier *c, Lsn lsn) PGM_MUST_CHECK;
bool copy_one_table(Copier *c, const SourceTable *t, Lsn sync_lsn) PGM_MUST_CHECK;
bool copy_commit_at(Copier *c, Lsn lsn) PGM_MUST_CHECK;

#endif

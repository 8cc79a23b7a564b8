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
/* The last error; owned by the copier. */
const char *copy_error(const Copier *c);
/* Whether the last table's copy failed on a value of the table that the
 * mirror cannot store (values.h refused it): a reason of that table, not
 * of the source or the mirror. */
bool copy_failed_on_value(const Copier *c);

/* The Relation message pgoutput would send for t, into *msg, with its
 * columns in cols (t->ncols of them); both borrow t's strings. */
void copy_relation_message(const SourceTable *t, PgoColumn *cols, PgoMessage *msg);

/*
 * A synthetic source transaction at lsn: its Begin opens the applier's
 * SQLite transaction, and its Commit ends the source transaction there;
 * the caller then stores what belongs with it and flushes the applier
 * (apply_flush()). A table is copied between them by copy_table_parts()
 * (copy_parts.h).
 */
bool copy_begin_at(Copier *c, Lsn lsn) PGM_MUST_CHECK;
bool copy_commit_at(Copier *c, Lsn lsn) PGM_MUST_CHECK;

/*
 * A first run without a copy (--no-initial-copy): in one synthetic
 * transaction at consistent_point, drops every mirrored table
 * (apply_reset()) and makes the n tables, empty. The applier's SQLite
 * transaction stays open for the caller to store what belongs with it;
 * apply_flush() then commits the lot.
 */
bool copy_make_tables(Copier *c, const SourceTable *tables, int n, Lsn consistent_point)
	PGM_MUST_CHECK;

#endif

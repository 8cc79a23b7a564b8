/*
 * waiting.h: the published tables that wait (waiting.c): which, and what
 * the run does about them. Shared by the first run (firstrun.c), the
 * table sync (tablesync.c) and the run's end (replicate.c).
 */
#ifndef PGMIRROR_RUN_WAITING_H
#define PGMIRROR_RUN_WAITING_H

#include "replicate_internal.h"

/* Why t cannot be held in SQLite (its name, its columns: naming.h);
 * malloc'd, or NULL when it can. */
char *waiting_shape_problem(const SourceTable *t);

/*
 * For each of tables[0..n-1] to consider (consider NULL: all), why the
 * mirror cannot take it now, reasons[i] (malloc'd; NULL: it can): its
 * name or columns (naming.h), its mirror name held by a mirror table of
 * another relation (mt) or by a table before it in tables that is taken,
 * and (check_read) the role's SELECT privilege, asked on s (NULL: the
 * plain connection of run->lookup). False, with the error logged and
 * run->conn_failed set when the connection was lost, when the source could
 * not be asked (reasons then all NULL).
 */
bool waiting_sort(Run *run, Session *s, const SourceTable *tables, int n, const bool *consider,
		  const MirrorTableInfo *mt, int nmt, bool check_read, char **reasons)
	PGM_MUST_CHECK;
void waiting_reasons_free(char **reasons, int n);

/* Why t waits when the source refused its copy with err for want of a
 * privilege. malloc'd. */
char *waiting_copy_reason(const SourceTable *t, const char *err);

/*
 * Marks every table of tables[0..n-1] that has a reason as waiting, with a
 * warning when it begins to wait or its reason changed; in a transaction
 * of its own (own_txn), or in the caller's. False with the error logged.
 */
bool waiting_store(Run *run, const SourceTable *tables, int n, char *const *reasons,
		   bool own_txn) PGM_MUST_CHECK;

/*
 * t cannot be mirrored as it is now (why: its name or columns, naming.h):
 * its mirror table goes, and one set aside (mirror_stage.h), with a
 * warning, and it waits; in a transaction of its own. False logged.
 */
bool waiting_instead(Run *run, const SourceTable *t, char *why) PGM_MUST_CHECK;

/*
 * The copy of t at snapshot at met a value the mirror cannot store (err,
 * copy.h), and t waits whole (see waiting.c's top): the parts that copy
 * committed go; a table that was mirrored (mirrored: its mirror table was
 * being copied again), or is set aside already, keeps its old rows set
 * aside; and the copy is remembered for waiting_copy_due(). In a
 * transaction of its own, after the caller's is rolled back. False logged.
 */
bool waiting_copy_failed(Run *run, const SourceTable *t, Lsn at, const char *err,
			 bool mirrored) PGM_MUST_CHECK;

/* Whether t, which the mirror lacks and which has no other reason to wait,
 * is to be copied now (*due): always, unless it waits after a copy that met
 * a value and nothing that could change that copy's outcome changed since
 * (waiting.c's top); asked: --resync asks for it. False logged. */
bool waiting_copy_due(Run *run, const SourceTable *t, bool asked, bool *due) PGM_MUST_CHECK;

/* Forgets the waiting tables that pub (the tables published now) no
 * longer holds, and those the mirror has (mt: synced by an older
 * pgmirror, which knew nothing of waiting); false with the error logged. */
bool waiting_forget(Run *run, const SourceTable *pub, int npub, const MirrorTableInfo *mt,
		    int nmt) PGM_MUST_CHECK;

/* At the end of a run that is to end (--once, --endpos), everything else
 * applied and confirmed: EXIT_ERROR with one error for each waiting table,
 * naming it, why it waits and what to do; else EXIT_OK. */
int waiting_report(Run *run);

/* Stores tg[0..n-1], with the source's estimates of their rows, as the
 * tables a sync is to copy (pgmirror_pending, for --status; n 0: none);
 * in a transaction of its own. False with the error logged. */
bool waiting_note_pending(Run *run, const SyncTarget *tg, const int64_t *estimates, int n)
	PGM_MUST_CHECK;

#endif

/*
 * waiting.c: which published tables wait (DESIGN.md, invariant 14). A
 * table the mirror cannot take for a reason of its own (the role may not
 * read it, its mirror name is reserved or another table's, two of its
 * columns differ only in case, it has no column) must not stop the
 * others: it gets no mirror table, its changes are skipped (the applier's
 * skip rule: it is not in the mirror), the slot moves on, and it is tried
 * again at every start and every check (reconcile.c); once it can be
 * taken, it is synced at a snapshot as a joining table, which holds every
 * change skipped until then. pgmirror_waiting (mirror_waiting.h) says
 * which tables wait, why and since when, for --status and for the error
 * that ends a run that is to end (--once, --endpos).
 *
 * A table whose copy meets a value the mirror cannot store waits whole
 * (waiting_copy_failed()): the parts that copy committed go, since its
 * changes are skipped while it waits and they could not be gone on from;
 * a table mirrored before keeps its old rows, set aside (mirror_stage.h),
 * until a copy of it is whole. Such a copy would fail at the same row
 * until something that could change its outcome changed, so it is not
 * repeated at every check but once one of these is seen
 * (waiting_copy_due()): the table is published otherwise (its columns,
 * their types, its key, row filter or publications: the copy's shape,
 * copy_parts_signature()); the stream brought a change of its rows from a
 * transaction the copy did not see (the applier notes it in the mirror,
 * in that transaction's commit); --resync asks for it; or, for what
 * nothing shows (rows changed by an action the publications do not
 * publish, a pgmirror that stores more), a back-off: ten minutes after
 * the first failed copy, doubling with each, at most a day.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgmirror/copy_parts.h"
#include "pgmirror/mirror_pending.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/mirror_waiting.h"
#include "pgmirror/naming.h"
#include "replicate_internal.h"
#include "waiting.h"

char *waiting_shape_problem(const SourceTable *t)
{
	const char **cols = xcalloc((size_t)t->ncols + 1, sizeof(char *));
	char *why;

	for (int c = 0; c < t->ncols; c++)
		cols[c] = t->cols[c].name;
	why = naming_table_problem(t->nspname, t->relname, cols, t->ncols);
	free(cols);
	return why;
}

/* Why t cannot take its mirror name: a mirror table of another relation,
 * or a table taken before it (tables[0..i-1] without a reason), has it. */
static char *clash_problem(const SourceTable *tables, int i, char *const *reasons,
			   const MirrorTableInfo *mt, int nmt)
{
	const SourceTable *t = &tables[i];
	char *why = NULL;

	for (int j = 0; why == NULL && j < nmt; j++)
		if (mt[j].relation_oid != t->oid)
			why = naming_clash(mt[j].source_schema, mt[j].source_table, t->nspname,
					   t->relname);
	for (int j = 0; why == NULL && j < i; j++)
		if (reasons[j] == NULL && tables[j].oid != t->oid)
			why = naming_clash(tables[j].nspname, tables[j].relname, t->nspname,
					   t->relname);
	return why;
}

bool waiting_sort(Run *run, Session *s, const SourceTable *tables, int n, const bool *consider,
		  const MirrorTableInfo *mt, int nmt, bool check_read, char **reasons)
{
	SourceTable *ask = xcalloc((size_t)n + 1, sizeof(SourceTable));
	char **grants = xcalloc((size_t)n + 1, sizeof(char *));
	int *at = xcalloc((size_t)n + 1, sizeof(int));
	int nask = 0;
	bool ok = true;

	for (int i = 0; i < n; i++) {
		reasons[i] = NULL;
		if (consider != NULL && !consider[i])
			continue;
		reasons[i] = waiting_shape_problem(&tables[i]);
		if (reasons[i] == NULL && check_read) {
			at[nask] = i;
			ask[nask++] = tables[i]; /* borrowed: its OID and columns are read */
		}
	}
	if (nask > 0) {
		ok = s != NULL ? session_unreadable_tables(s, ask, nask, grants)
		     : lookup_unreadable_tables(run->lookup, ask, nask, grants);
		if (!ok) {
			if (s != NULL)
				replicate_log_session_error(s);
			else
				log_error("%s", run->catalog->error(run->catalog->ctx));
			run->conn_failed = s != NULL ? !session_connected(s)
					   : run->catalog->lost(run->catalog->ctx);
		}
	}
	for (int k = 0; ok && k < nask; k++)
		if (grants[k] != NULL)
			reasons[at[k]] = xasprintf("permission denied to read source table "
						   "\"%s\".\"%s\"; on the source, run: %s",
						   ask[k].nspname, ask[k].relname, grants[k]);
	/* names last: a table that waits for another reason holds none */
	for (int i = 0; ok && i < n; i++)
		if ((consider == NULL || consider[i]) && reasons[i] == NULL)
			reasons[i] = clash_problem(tables, i, reasons, mt, nmt);
	strv_free(grants, nask);
	free(ask);
	free(at);
	if (!ok)
		waiting_reasons_free(reasons, n);
	return ok;
}

char *waiting_copy_reason(const SourceTable *t, const char *err)
{
	return xasprintf("%s; on the source, give the role pgmirror connects as the privilege "
			 "the copy of \"%s\".\"%s\" lacks", err, t->nspname, t->relname);
}

void waiting_reasons_free(char **reasons, int n)
{
	for (int i = 0; i < n; i++) {
		free(reasons[i]);
		reasons[i] = NULL;
	}
}

static void say_waits(const SourceTable *t, const char *why)
{
	log_warning("source table \"%s.%s\" waits: %s; the other tables are mirrored, its "
		    "changes are skipped, and it is tried again at every start and every check",
		    t->nspname, t->relname, why);
}

bool waiting_store(Run *run, const SourceTable *tables, int n, char *const *reasons,
		   bool own_txn)
{
	bool ok = true, began = false;

	for (int i = 0; ok && i < n; i++) {
		const SourceTable *t = &tables[i];
		bool news, same;

		if (reasons[i] == NULL)
			continue;
		/* a check once a minute writes to the file only what changed */
		ok = mirror_waiting_same(run->mirror, t->oid, t->nspname, t->relname, reasons[i],
					 &same);
		if (ok && same) {
			log_debug("source table \"%s.%s\" still waits: %s", t->nspname, t->relname,
				  reasons[i]);
			continue;
		}
		if (ok && own_txn && !began)
			ok = began = mirror_begin(run->mirror);
		ok = ok && mirror_waiting_set(run->mirror, t->oid, t->nspname, t->relname,
					      reasons[i], &news);
		if (ok && news)
			say_waits(t, reasons[i]);
	}
	if (ok && began)
		ok = mirror_commit(run->mirror);
	if (!ok) {
		log_error("%s", mirror_error(run->mirror));
		if (began)
			mirror_rollback(run->mirror);
	}
	return ok;
}

bool waiting_forget(Run *run, const SourceTable *pub, int npub, const MirrorTableInfo *mt,
		    int nmt)
{
	MirrorWaiting *w = NULL;
	int nw = 0;
	bool ok = mirror_waiting_list(run->mirror, &w, &nw), any = false;

	for (int i = 0; ok && i < nw; i++) {
		bool published = source_table_find(pub, npub, w[i].relation_oid) != NULL;
		bool mirrored = false;

		for (int j = 0; j < nmt && !mirrored; j++)
			mirrored = mt[j].relation_oid == w[i].relation_oid;
		if (published && !mirrored)
			continue;
		ok = (any || mirror_begin(run->mirror)) &&
		     mirror_waiting_remove(run->mirror, w[i].relation_oid);
		any = true;
		if (ok && !published)
			log_info("source table \"%s.%s\", which waited, is no longer published",
				 w[i].source_schema, w[i].source_table);
	}
	if (ok && any)
		ok = mirror_commit(run->mirror);
	if (!ok) {
		log_error("%s", mirror_error(run->mirror));
		mirror_rollback(run->mirror);
	}
	mirror_waiting_free(w, nw);
	return ok;
}

int waiting_report(Run *run)
{
	MirrorWaiting *w = NULL;
	int nw = 0;

	if (!mirror_waiting_list(run->mirror, &w, &nw)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	for (int i = 0; i < nw; i++) {
		bool staged = false;
		char *old = NULL, *kept;

		/* one mirrored before may keep its old rows (waiting_copy_failed()) */
		if (!mirror_stage_of(run->mirror, w[i].relation_oid, &staged, &old))
			log_debug("%s", mirror_error(run->mirror));
		kept = staged ? xasprintf(" (mirror table \"%s\" keeps the rows of its last copy "
					  "meanwhile)", old) : xstrdup("");
		log_error("source table \"%s.%s\" is not in the mirror%s (waiting since %s UTC): "
			  "%s; every other table is mirrored and confirmed, and the table is "
			  "copied at the next run that can take it", w[i].source_schema,
			  w[i].source_table, kept, w[i].since, w[i].reason);
		free(kept);
		free(old);
	}
	mirror_waiting_free(w, nw);
	return nw > 0 ? EXIT_ERROR : EXIT_OK;
}

/* Stores tg[0..n-1] (with the source's estimates of their rows) as the
 * tables this sync is to copy, for --status; false logged. */
bool waiting_note_pending(Run *run, const SyncTarget *tg, const int64_t *estimates, int n)
{
	MirrorPending *pend = xcalloc((size_t)n + 1, sizeof(MirrorPending));
	bool ok;

	for (int i = 0; i < n; i++)
		pend[i] = (MirrorPending){tg[i].oid, (char *)tg[i].nspname, (char *)tg[i].relname,
					  estimates[i]};
	ok = mirror_pending_set(run->mirror, pend, n);
	if (!ok)
		log_error("%s", mirror_error(run->mirror));
	free(pend);
	return ok;
}

bool waiting_instead(Run *run, const SourceTable *t, char *why)
{
	MirrorTableInfo info = {0};
	char *old = NULL;
	bool found = false, staged = false;
	bool ok = mirror_begin(run->mirror) &&
		  mirror_table_by_oid(run->mirror, t->oid, &found, &info) &&
		  mirror_stage_of(run->mirror, t->oid, &staged, &old) &&
		  mirror_table_drop(run->mirror, t->oid) &&
		  mirror_stage_forget(run->mirror, t->oid);

	if (!ok)
		log_error("%s", mirror_error(run->mirror));
	ok = ok && waiting_store(run, t, 1, &why, false);
	if (ok && !mirror_commit(run->mirror)) {
		log_error("%s", mirror_error(run->mirror));
		ok = false;
	}
	mirror_rollback(run->mirror);
	if (ok && (found || staged))
		log_warning("mirror table \"%s\" is removed: source table \"%s.%s\" cannot be "
			    "mirrored as it is now", staged ? old : info.name, t->nspname, t->relname);
	mirror_table_info_clear(&info);
	free(old);
	return ok;
}

/* The back-off of a copy that met a value, when nothing that could change
 * its outcome is seen to change (see the top). */
#define COPY_RETRY_FIRST_SECS 600
#define COPY_RETRY_MAX_SECS 86400

/* The shape of t's copy as it is kept in pgmirror_waiting. */
static char *copy_shape(const SourceTable *t)
{
	return xasprintf("%016" PRIx64, copy_parts_signature(t));
}

bool waiting_copy_failed(Run *run, const SourceTable *t, Lsn at, const char *err,
			 bool mirrored)
{
	MirrorWaitCopy prev, c = {0};
	MirrorTableInfo info = {0};
	char retry[40], *old = NULL, *why;
	bool waits, found = false, staged = false, news = false;
	bool ok = mirror_waiting_copy(run->mirror, t->oid, &waits, &prev);
	int64_t secs = COPY_RETRY_FIRST_SECS;

	c.tries = (prev.shape != NULL ? prev.tries : 0) + 1;
	mirror_wait_copy_clear(&prev);
	for (int i = 1; i < c.tries && secs < COPY_RETRY_MAX_SECS; i++)
		secs *= 2;
	secs = secs < COPY_RETRY_MAX_SECS ? secs : COPY_RETRY_MAX_SECS;
	pgtime_format_utc(pgtime_now() + secs * INT64_C(1000000), retry, sizeof(retry));
	c.shape = copy_shape(t);
	c.lsn = at;
	c.retry = retry;
	why = xasprintf("%s, a value the mirror cannot store; it is copied again once its rows "
			"or what the publications publish of it change on the source, or at %s UTC",
			err, retry);
	/*
	 * One mirrored before keeps its old rows set aside (already, when the
	 * copy committed a part: it went into the staged table); what is left
	 * under the relation is the failed copy's parts, which go.
	 */
	ok = ok && mirror_begin(run->mirror) &&
	     (!mirrored || mirror_stage_begin(run->mirror, t->oid)) &&
	     mirror_table_by_oid(run->mirror, t->oid, &found, &info) &&
	     mirror_table_drop(run->mirror, t->oid) &&
	     mirror_stage_of(run->mirror, t->oid, &staged, &old) &&
	     mirror_waiting_set_copy(run->mirror, t->oid, t->nspname, t->relname, why, &c,
				     &news) &&
	     mirror_commit(run->mirror);
	if (!ok)
		log_error("%s", mirror_error(run->mirror));
	mirror_rollback(run->mirror);
	if (ok && news)
		log_warning("source table \"%s.%s\" waits: %s; the other tables are mirrored, and "
			    "its changes are skipped", t->nspname, t->relname, why);
	if (ok && staged)
		log_warning("mirror table \"%s\" keeps the rows of its last copy, and the source's "
			    "changes of them are skipped, until source table \"%s.%s\" can be copied "
			    "whole", old, t->nspname, t->relname);
	else if (ok && found)
		log_info("the %" PRId64 " rows that the copy of \"%s.%s\" stored are removed: a "
			 "table that waits is not in the mirror", info.copy_rows, t->nspname,
			 t->relname);
	mirror_table_info_clear(&info);
	free(old);
	free(c.shape);
	free(why);
	return ok;
}

bool waiting_copy_due(Run *run, const SourceTable *t, bool asked, bool *due)
{
	MirrorWaitCopy c;
	double retry = 0;
	char *shape;
	bool waits;

	*due = true;
	if (!mirror_waiting_copy(run->mirror, t->oid, &waits, &c)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	if (c.shape == NULL) {
		mirror_wait_copy_clear(&c);
		return true;
	}
	shape = copy_shape(t);
	if (asked)
		log_info("source table \"%s.%s\", whose copy met a value the mirror cannot store, "
			 "is copied again as asked", t->nspname, t->relname);
	else if (strcmp(shape, c.shape) != 0)
		log_info("source table \"%s.%s\", whose copy met a value the mirror cannot store, "
			 "is published otherwise now (its columns, key, row filter or publications "
			 "changed); it is copied again", t->nspname, t->relname);
	else if (c.changed)
		log_info("source table \"%s.%s\", whose copy met a value the mirror cannot store, "
			 "changed on the source since; it is copied again", t->nspname, t->relname);
	else if (c.retry == NULL || !pgtime_parse_utc(c.retry, &retry) ||
		 (double)time(NULL) >= retry)
		log_info("source table \"%s.%s\", whose copy met a value the mirror cannot store, "
			 "is copied again (its copy failed %d time%s, and no change of it was seen "
			 "since)", t->nspname, t->relname, c.tries, c.tries == 1 ? "" : "s");
	else {
		*due = false;
		log_debug("source table \"%s.%s\" still waits: its copy met a value the mirror "
			  "cannot store, and neither its rows nor what the publications publish of "
			  "it changed since; copied again once they do, or at %s UTC", t->nspname,
			  t->relname, c.retry);
	}
	free(shape);
	mirror_wait_copy_clear(&c);
	return true;
}

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
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

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

char *waiting_copy_reason(const SourceTable *t, const char *err, bool privilege)
{
	if (privilege)
		return xasprintf("%s; on the source, give the role pgmirror connects as the "
				 "privilege the copy of \"%s\".\"%s\" lacks", err, t->nspname,
				 t->relname);
	return xasprintf("%s, a value the mirror cannot store; its rows are copied once the "
			 "source holds no such value", err);
}

void waiting_reasons_free(char **reasons, int n)
{
	for (int i = 0; i < n; i++) {
		free(reasons[i]);
		reasons[i] = NULL;
	}
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
			log_warning("source table \"%s.%s\" waits: %s; the other tables are "
				    "mirrored, its changes are skipped, and it is tried again at every "
				    "start and every check", t->nspname, t->relname, reasons[i]);
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
	for (int i = 0; i < nw; i++)
		log_error("source table \"%s.%s\" is not in the mirror (waiting since %s UTC): "
			  "%s; every other table is mirrored and confirmed, and the table is "
			  "copied at the next run that can take it", w[i].source_schema,
			  w[i].source_table, w[i].since, w[i].reason);
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

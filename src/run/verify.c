/*
 * verify.c: --verify. Takes a snapshot of the source with its LSN (a
 * temporary slot made with USE_SNAPSHOT on a second replication
 * connection), has replicate.c bring the mirror to that LSN through the
 * mirror's own slot, then reads every published table with COPY inside the
 * snapshot, converts each row as the applier would store it, and has the
 * mirror (mirror_verify.c) count what differs. One line per table on
 * stdout, in table-name order; the speed of each table goes to stderr.
 *
 * The snapshot stays valid while its transaction is open and no other
 * command runs on that connection but the COPYs; the temporary slot goes
 * when the connection ends. The mirror's data changes only by the
 * catch-up: the comparison writes to a scratch database of its own.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy.h"
#include "pgmirror/copy_ranges.h"
#include "pgmirror/copy_text.h"
#include "pgmirror/mirror_pending.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/mirror_verify.h"
#include "pgmirror/mirror_waiting.h"
#include "pgmirror/naming.h"
#include "replicate_internal.h"
#include "waiting.h"

struct Verifier {
	Session *s;          /* the snapshot's replication connection */
	Lsn point;           /* the snapshot's consistent point */
};

/* One table's result, printed once every table is done. */
typedef struct Result {
	char *name;          /* the mirror table's name */
	MirrorDiff diff;
	bool absent;         /* a published table without a mirror table */
	bool waiting;        /* one that waits (pgmirror_waiting), or that the
			      * mirror cannot hold as it is now: not read */
} Result;

Verifier *verify_begin(Run *run, int *rc)
{
	Verifier *v = xcalloc(1, sizeof(*v));
	char slot[SLOT_NAME_SIZE], lsn[LSN_TEXT_SIZE];

	*rc = EXIT_ERROR;
	session_temp_slot_name(run->state.slot, "verify", slot);
	v->s = session_new();
	session_set_stop_check(v->s, replicate_stopping);
	if (!session_snapshot_slot(v->s, &run->opt->conn, slot, &v->point)) {
		if (session_error_stopped(v->s))
			log_error("%s; nothing was compared", session_error(v->s));
		else
			log_error("could not take the snapshot --verify compares at: %s",
				  session_error(v->s));
		verify_free(v);
		return NULL;
	}
	log_debug("verifying at %s (temporary slot \"%s\")", lsn_format(v->point, lsn), slot);
	*rc = EXIT_OK;
	return v;
}

void verify_tell_unfinished(Run *run)
{
	MirrorTableInfo *mt = NULL;
	MirrorPending *p = NULL;
	int nmt = 0, np = 0;
	bool staged;
	char *old;

	if (run->mirror == NULL || !mirror_table_infos(run->mirror, &mt, &nmt))
		return;
	for (int i = 0; i < nmt; i++) {
		char est[48] = "";

		if (!copy_state_unfinished(mt[i].copy_state))
			continue;
		/* a table copied again shows under the name readers see */
		if (mirror_stage_is_name(mt[i].name) && mirror_stage_of(run->mirror,
		    mt[i].relation_oid, &staged, &old) && staged) {
			free(mt[i].name);
			mt[i].name = old;
		}
		if (mt[i].copy_estimate >= 0)
			snprintf(est, sizeof(est), " of about %" PRId64, mt[i].copy_estimate);
		log_error("nothing was compared: mirror table \"%s\" is still copying (%" PRId64
			  "%s rows stored), and its copy goes on at the next run; run --verify "
			  "again once it is done", mt[i].name, mt[i].copy_rows, est);
	}
	mirror_table_infos_free(mt, nmt);
	if (!mirror_pending_list(run->mirror, &p, &np))
		return;
	for (int i = 0; i < np; i++)
		log_error("nothing was compared: source table \"%s.%s\" is still to copy",
			  p[i].source_schema, p[i].source_table);
	mirror_pending_free(p, np);
}

Lsn verify_point(const Verifier *v)
{
	return v->point;
}

void verify_free(Verifier *v)
{
	if (v == NULL)
		return;
	session_free(v->s); /* ends the snapshot; the temporary slot goes */
	free(v);
}

static bool verify_tick(void *ctx)
{
	(void)ctx;
	return !replicate_stopping();
}

/* Reads t's rows in the snapshot into cmp (NULL: only counts them). */
static bool copy_rows(Verifier *v, Applier *apply, const SourceTable *t, MirrorCompare *cmp,
		      Mirror *m, int64_t *nrows)
{
	PgoValue *cols = xcalloc((size_t)t->ncols + 1, sizeof(PgoValue));
	PgoTuple tup = {.ncols = (uint16_t)t->ncols, .cols = cols};
	const Value *vals;
	char err[256], *row;
	size_t len;
	bool ok = false;
	int r;

	*nrows = 0;
	if (!session_copy_begin(v->s, t, false)) {
		log_error("%s", session_error(v->s));
		goto done;
	}
	while ((r = session_copy_next(v->s, &row, &len)) > 0) {
		++*nrows;
		if (cmp == NULL)
			continue;
		if (!copy_parse_row(row, len, cols, t->ncols, err, sizeof(err))) {
			log_error("malformed COPY row %" PRId64 " of table \"%s.%s\": %s", *nrows,
				  t->nspname, t->relname, err);
			goto done;
		}
		if (!apply_convert_row(apply, t->oid, &tup, &vals)) {
			log_error("%s", apply_error(apply));
			goto done;
		}
		if (!mirror_compare_add(cmp, vals)) {
			log_error("%s", mirror_error(m));
			goto done;
		}
	}
	if (r < 0) {
		if (session_error_stopped(v->s))
			log_error("stopped by a signal while comparing \"%s.%s\"; nothing was "
				  "reported", t->nspname, t->relname);
		else
			log_error("%s", session_error(v->s));
		goto done;
	}
	ok = true;
done:
	free(cols);
	return ok;
}

/*
 * Compares source table t with its mirror table `name` (NULL: there is
 * none, and every source row is missing) into *diff.
 */
static bool compare_table(Verifier *v, Run *run, Applier *apply, const SourceTable *t,
			  const char *name, MirrorDiff *diff)
{
	Mirror *m = run->mirror;
	PgoColumn *pcols = xcalloc((size_t)t->ncols + 1, sizeof(PgoColumn));
	const char **names = xcalloc((size_t)t->ncols + 1, sizeof(char *));
	bool *is_key = xcalloc((size_t)t->ncols + 1, sizeof(bool));
	const ColumnType *types;
	MirrorCompare *cmp = NULL;
	PgoMessage msg;
	bool same = false, ok = false;
	int64_t nrows = 0, started = mono_usecs(), elapsed;
	int ntypes;

	memset(diff, 0, sizeof(*diff));
	for (int i = 0; i < t->ncols; i++) {
		names[i] = t->cols[i].name;
		/* REPLICA IDENTITY FULL flags every column: no key to match on */
		is_key[i] = t->cols[i].is_key && t->replident != 'f';
	}
	copy_relation_message(t, pcols, &msg);
	if (!apply_message(apply, &msg) ||
	    !apply_relation_types(apply, t->oid, &types, &ntypes)) {
		log_error("%s", apply_error(apply));
		goto done;
	}
	if (name != NULL && !mirror_table_has_columns(m, name, names, t->ncols, &same)) {
		log_error("%s", mirror_error(m));
		goto done;
	}
	if (name != NULL && !same)
		log_warning("mirror table \"%s\" does not have the columns of \"%s.%s\" on the "
			    "source: all its rows count as unexpected, all the source's as missing",
			    name, t->nspname, t->relname);
	else if (name == NULL)
		log_warning("published table \"%s.%s\" has no mirror table of its own: all its "
			    "rows count as missing", t->nspname, t->relname);
	if (same && !mirror_compare_begin(m, name, names, types, is_key, t->ncols, &cmp)) {
		log_error("%s", mirror_error(m));
		goto done;
	}
	if (!copy_rows(v, apply, t, cmp, m, &nrows))
		goto done;
	log_debug("read %" PRId64 " rows of \"%s.%s\" in %.1f s", nrows, t->nspname, t->relname,
		  (mono_usecs() - started) / 1e6);
	if (cmp != NULL && !mirror_compare_end(cmp, diff)) {
		log_error("%s", mirror_error(m));
		goto done;
	}
	if (cmp == NULL) {
		diff->missing = nrows;
		if (name != NULL && !mirror_count_rows(m, name, &diff->unexpected)) {
			log_error("%s", mirror_error(m));
			goto done;
		}
	}
	elapsed = mono_usecs() - started;
	log_info("compared %" PRId64 " %s of \"%s.%s\" in %.1f s (%.0f rows/s)", nrows,
		 nrows == 1 ? "row" : "rows", t->nspname, t->relname, elapsed / 1e6,
		 elapsed > 0 ? (double)nrows * 1e6 / (double)elapsed : 0.0);
	ok = true;
done:
	mirror_compare_free(cmp);
	free(pcols);
	free(names);
	free(is_key);
	return ok;
}

static int cmp_result(const void *a, const void *b)
{
	return strcmp(((const Result *)a)->name, ((const Result *)b)->name);
}

static bool has_name(const Result *res, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(res[i].name, name) == 0)
			return true;
	return false;
}

int verify_compare(Verifier *v, Run *run)
{
	char **pubs = NULL, **mnames = NULL;
	int npubs = strv_split(run->state.publications, ',', &pubs);
	SourceTable *tables = NULL;
	int ntables = 0, nmirror = 0, nres = 0, rc = EXIT_ERROR;
	Result *res = NULL;
	Applier *apply = apply_new(run->mirror, LSN_INVALID, run->catalog);
	bool differs = false;

	mirror_set_tick(run->mirror, verify_tick, NULL);
	if (!session_publication_tables(v->s, pubs, npubs, &tables, &ntables)) {
		log_error("%s", session_error(v->s));
		goto done;
	}
	if (!mirror_list_tables(run->mirror, &mnames, &nmirror)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	res = xcalloc((size_t)ntables + (size_t)nmirror + 1, sizeof(Result));
	for (int i = 0; i < ntables; i++) {
		const SourceTable *t = &tables[i];
		char *name, *why;

		if (!mirror_table_of_relation(run->mirror, t->oid, &name)) {
			log_error("%s", mirror_error(run->mirror));
			goto done;
		}
		res[nres].name = name != NULL ? name : naming_table(t->nspname, t->relname);
		res[nres].absent = name == NULL;
		/* the mirror cannot take it (nor perhaps read it): said, not compared */
		if (name == NULL && !mirror_waiting_has(run->mirror, t->oid, &res[nres].waiting)) {
			log_error("%s", mirror_error(run->mirror));
			goto done;
		}
		if (res[nres].waiting) {
			log_warning("published table \"%s.%s\" is not compared: it waits (pgmirror "
				    "--status says why)", t->nspname, t->relname);
			nres++;
			continue;
		}
		/* one the mirror cannot hold as it is now (no column: the COPY
		 * would name none), whose mirror table the next check removes */
		if ((why = waiting_shape_problem(t)) != NULL) {
			log_warning("published table \"%s.%s\" is not compared: %s; it waits from "
				    "the next run", t->nspname, t->relname, why);
			free(why);
			res[nres++].waiting = true;
			continue;
		}
		if (!compare_table(v, run, apply, t, name, &res[nres].diff))
			goto done;
		/* a mirror table of that name made from another relation (one
		 * dropped and made again on the source): its rows are unexpected */
		if (name == NULL && strv_contains(mnames, nmirror, res[nres].name) &&
		    !mirror_count_rows(run->mirror, res[nres].name, &res[nres].diff.unexpected)) {
			log_error("%s", mirror_error(run->mirror));
			goto done;
		}
		nres++;
	}
	/* mirror tables of relations that are no longer published */
	for (int i = 0; i < nmirror; i++) {
		if (has_name(res, nres, mnames[i]))
			continue;
		log_warning("mirror table \"%s\" has no published table on the source: all its "
			    "rows count as unexpected", mnames[i]);
		res[nres].name = xstrdup(mnames[i]);
		if (!mirror_count_rows(run->mirror, mnames[i], &res[nres++].diff.unexpected)) {
			log_error("%s", mirror_error(run->mirror));
			goto done;
		}
	}
	qsort(res, (size_t)nres, sizeof(Result), cmp_result);
	for (int i = 0; i < nres; i++) {
		const MirrorDiff *d = &res[i].diff;

		if (res[i].waiting) {
			printf("%s: waiting\n", res[i].name);
			differs = true;
		} else if (!res[i].absent && d->missing == 0 && d->unexpected == 0 &&
			   d->changed == 0) {
			printf("%s: ok\n", res[i].name);
		} else {
			printf("%s: differs (%" PRId64 " missing, %" PRId64 " unexpected, %" PRId64
			       " changed)\n", res[i].name, d->missing, d->unexpected, d->changed);
			differs = true;
		}
	}
	if (fflush(stdout) != 0) {
		log_error("could not write the results to stdout");
		goto done;
	}
	rc = differs ? EXIT_DIFFERS : EXIT_OK;
done:
	mirror_set_tick(run->mirror, NULL, NULL);
	apply_free(apply);
	for (int i = 0; res != NULL && i <= nres; i++)
		free(res[i].name); /* [nres]: the one in hand when it failed */
	free(res);
	strv_free(mnames, nmirror);
	strv_free(pubs, npubs);
	source_tables_free(tables, ntables);
	return rc;
}

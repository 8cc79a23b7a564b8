/*
 * pubcheck.c: the check of the publications, at start and in a service's
 * periodic check (and at SIGHUP). A quiet run asks one question: the
 * fingerprint of everything pgmirror follows of the publications and of
 * the published tables' columns and indexes (session_publication_
 * fingerprint(), computed by the server in one statement). When it equals
 * the one the mirror stored, nothing changed, and nothing more is asked.
 * Else the detail is read and followed as before: tables that joined, left,
 * were renamed, are published differently or have other columns
 * (reconcile_tables()), then the mirror's indexes made to match the
 * source's. A run whose stream changed a mirror table's columns
 * (apply_recolumned()) reads the detail whatever the fingerprint says: the
 * stream may have brought a definition the source had left already. The new fingerprint is stored in the SQLite transaction of the
 * indexes, the last of what it led to, and only when nothing was left for
 * later (a sync deferred, or columns the check at start left for after the
 * stream, run->columns_later: then none is): a fingerprint is never stored
 * whose consequences are not committed, so an interruption anywhere makes
 * the next check read the detail again. A --resync, and the tables the stream
 * noted as to be copied again, always read the detail.
 *
 * The fingerprint is asked before the detail is read: a change in between
 * makes the next check read it again, never the other way round.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pgmirror/indexes.h"
#include "pgmirror/notify.h"
#include "replicate_internal.h"

/* The tick of the stream that runs meanwhile (NULL at start). */
static TickFn check_tick;
static void *check_tick_ctx;

static bool check_stopping(void)
{
	return replicate_stopping() || (check_tick != NULL && !check_tick(check_tick_ctx));
}

/* The mirror's tick while the indexes are made at start: stop when asked to. */
static bool start_tick(void *ctx)
{
	(void)ctx;
	notify_alive(); /* SQLite works on them */
	return !replicate_stopping();
}

int pubcheck_sync_indexes(Run *run, bool store, const char *fingerprint)
{
	MirrorTableInfo *mt = NULL;
	char **names;
	uint32_t *oids;
	int n = 0, rc = EXIT_ERROR;
	ErrBuf err = {{0}};
	bool lost = false;

	if (run->mirror == NULL)
		return EXIT_OK;
	if (!mirror_table_infos(run->mirror, &mt, &n)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	names = xcalloc((size_t)n + 1, sizeof(char *));
	oids = xcalloc((size_t)n + 1, sizeof(uint32_t));
	for (int i = 0; i < n; i++) {
		names[i] = mt[i].name; /* borrowed from mt */
		oids[i] = mt[i].relation_oid;
	}
	if (check_tick == NULL) /* else the stream's stays */
		mirror_set_tick(run->mirror, start_tick, NULL);
	if (n == 0 && !store) {
		rc = EXIT_OK;
	} else if (!mirror_begin(run->mirror)) {
		log_error("%s", mirror_error(run->mirror));
	} else if (!indexes_sync(run->mirror, run->catalog, names, oids, n, 0, &err, &lost)) {
		mirror_rollback(run->mirror);
		run->conn_failed = lost;
		if (replicate_stopping()) {
			log_info("stopped by a signal while making the mirror's indexes; the next "
				 "run makes them");
			rc = EXIT_OK;
		} else
			log_error("%s", err.text);
	} else if ((store && !mirror_set_publication_fingerprint(run->mirror, fingerprint)) ||
		   !mirror_commit(run->mirror)) {
		log_error("%s", mirror_error(run->mirror));
		mirror_rollback(run->mirror);
	} else
		rc = EXIT_OK;
	if (check_tick == NULL)
		mirror_set_tick(run->mirror, NULL, NULL);
	free(names);
	free(oids);
	mirror_table_infos_free(mt, n);
	return rc;
}

bool pubcheck_fingerprint(Run *run, Session *s, PubFingerprint *fp)
{
	char **pubs = NULL;
	int npubs = strv_split(run->state.present ? run->state.publications : run->pubs_text, ',',
			       &pubs);
	bool ok = s != NULL ? session_publication_fingerprint(s, pubs, npubs, fp)
		  : lookup_publication_fingerprint(run->lookup, pubs, npubs, check_stopping, fp);

	strv_free(pubs, npubs);
	if (ok && s != NULL && s == run->session) {
		/* the stream of this connection chooses its format by them */
		free(run->pub_types);
		run->pub_types = xstrdup(fp->types);
	}
	if (!ok && s != NULL) {
		replicate_log_session_error(s);
		run->conn_failed = !session_connected(s);
	} else if (!ok) {
		log_error("%s", run->catalog->error(run->catalog->ctx));
		run->conn_failed = run->catalog->lost(run->catalog->ctx);
	}
	return ok;
}

int pubcheck_run(Run *run, Session *s, Applier *apply, char *const *resync, int nresync,
		 bool resync_all, TickFn tick, void *tick_ctx)
{
	PubFingerprint fp = {0};
	char *stored = NULL;
	const uint32_t *noted;
	/* a definition the stream applied may be one the source has left
	 * since: the fingerprint, stored before, would not show it */
	bool forced = nresync > 0 || resync_all || run->sync_deferred ||
		      (apply != NULL && (apply_unknown_relations(apply, &noted) > 0 ||
					 apply_recolumned(apply) > 0));
	int rc = EXIT_ERROR;

	check_tick = tick;
	check_tick_ctx = tick_ctx;
	if (!pubcheck_fingerprint(run, s, &fp))
		goto done;
	if (!mirror_publication_fingerprint(run->mirror, &stored)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	if (!forced && stored != NULL && strcmp(stored, fp.hash) == 0) {
		log_debug("the publications are as the mirror follows them (fingerprint %s)",
			  fp.hash);
		rc = EXIT_OK;
		goto done;
	}
	log_debug("the publications' fingerprint is %s (the mirror follows %s): reading them",
		  fp.hash, stored != NULL ? stored : "none");
	rc = reconcile_tables(run, s, apply, resync, nresync, resync_all, tick, tick_ctx);
	if (rc == EXIT_OK && !replicate_stopping()) {
		/* asked on s, as the publications were */
		if (s != NULL)
			lookup_use_session(run->lookup, s);
		/* a sync left for later, or columns to compare once the
		 * stream has caught up: the stored one goes too, so that the
		 * next check, or a restart, reads the detail again */
		rc = pubcheck_sync_indexes(run, true, run->sync_deferred || run->columns_later
						      ? NULL : fp.hash);
		if (s != NULL)
			lookup_use_session(run->lookup, NULL);
	}
done:
	check_tick = NULL;
	check_tick_ctx = NULL;
	free(stored);
	pub_fingerprint_clear(&fp);
	return rc;
}

/*
 * tablesync.c: tables that join and leave the publications, and resyncs.
 * Compares the publications' tables (by relation OID) with the mirror's:
 * a mirror table whose relation is no longer published is dropped with a
 * warning; a published relation the mirror lacks is synced the way
 * PostgreSQL's own subscriber syncs a table: a second replication
 * connection takes a snapshot with a known LSN (a temporary slot made with
 * USE_SNAPSHOT), COPY reads that one table in it, and the copy is stored
 * with that LSN as the table's sync LSN, all in one SQLite transaction.
 * The stream then applies that table's changes only from transactions
 * that commit at or after its sync LSN (the applier's skip rule): the
 * snapshot holds the others. A sync that does not finish leaves nothing,
 * and the next reconciliation starts that table over.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgmirror/copy.h"
#include "pgmirror/naming.h"
#include "replicate_internal.h"

/* The tick of the stream that runs meanwhile (NULL at start): answered
 * from the sync connection's waits and the copy's rows. One sync runs at a
 * time, in one thread. */
static TickFn sync_tick;
static void *sync_tick_ctx;

static bool sync_stopping(void)
{
	if (replicate_stopping())
		return true;
	return sync_tick != NULL && !sync_tick(sync_tick_ctx);
}

/*
 * Reads the publications' tables on s, or (s NULL) on the plain connection
 * of the catalog look-ups; false with the error logged and
 * run->conn_failed set when the connection was lost.
 */
static bool published_tables(Run *run, Session *s, SourceTable **tables, int *n)
{
	char **pubs = NULL;
	int npubs = strv_split(run->state.publications, ',', &pubs);
	bool ok = s != NULL ? session_publication_tables(s, pubs, npubs, tables, n)
		  : lookup_publication_tables(run->lookup, pubs, npubs, sync_stopping, tables, n);

	if (!ok) {
		log_error("%s", s != NULL ? session_error(s) : run->catalog->error(run->catalog->ctx));
		run->conn_failed = s != NULL ? !session_connected(s)
				   : run->catalog->lost(run->catalog->ctx);
	}
	strv_free(pubs, npubs);
	return ok;
}

static const SourceTable *find_published(const SourceTable *tables, int n, uint32_t oid)
{
	for (int i = 0; i < n; i++)
		if (tables[i].oid == oid)
			return &tables[i];
	return NULL;
}

/* Why t cannot be mirrored, or NULL; malloc'd. */
static char *table_problem(const SourceTable *t)
{
	const char **cols = xcalloc((size_t)t->ncols + 1, sizeof(char *));
	char *why;

	for (int c = 0; c < t->ncols; c++)
		cols[c] = t->cols[c].name;
	why = naming_table_problem(t->nspname, t->relname, cols, t->ncols);
	free(cols);
	return why;
}

/* Makes the user's objects of resynced table name again (see mirror.h),
 * with a warning for each that no longer applies. */
static bool restore_user_objects(Run *run, const MirrorUserObjects *u, const char *name)
{
	char **dropped;
	int n;

	if (!mirror_user_objects_restore(run->mirror, u, &dropped, &n)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	for (int i = 0; i < n; i++)
		log_warning("dropped the user's %s from the mirror: it no longer applies after "
			    "mirror table \"%s\" was synced again", dropped[i], name);
	strv_free(dropped, n);
	return true;
}

/*
 * Syncs the table of relation oid (source table nspname.relname, for
 * messages): copied at a snapshot of its own and stored with that
 * snapshot's LSN, replacing mirror table replace (NULL: none), in one
 * SQLite transaction. A table no longer published in the snapshot is left
 * alone.
 *
 * A service whose table joins when the server has no room for the sync's
 * connection or temporary slot (every walsender or replication slot in
 * use: many devices syncing the same new table at once) goes on without
 * the table, with a warning, and sets run->sync_deferred: the stream then
 * tries again with its next check, a minute later, and skips the table's
 * changes until then (the later snapshot holds them). A run that is to
 * end (--once) fails instead, as does a resync.
 */
static int sync_table(Run *run, Applier *apply, uint32_t oid, const char *nspname,
		      const char *relname, const char *replace)
{
	Session *ss = session_new();
	SourceTable *tables = NULL;
	int ntables = 0;
	const SourceTable *t;
	Applier *a = NULL;
	Copier *c = NULL;
	MirrorUserObjects *user = NULL; /* set aside over a resync */
	char slot[64], lsn[LSN_TEXT_SIZE], *why;
	Lsn at = LSN_INVALID;
	int64_t started = mono_usecs();
	int rc = EXIT_ERROR;
	bool copied;

	session_set_stop_check(ss, sync_stopping);
	snprintf(slot, sizeof(slot), "pgmirror_sync_%ld_%u", (long)getpid(), oid);
	if (!session_snapshot_slot(ss, run->opt->conninfo, slot, &at)) {
		if (session_error_stopped(ss)) {
			log_info("%s; the table is synced on the next run", session_error(ss));
			rc = EXIT_OK;
		} else if (replace == NULL && replicate_continuous(run) &&
			   (session_error_no_room(ss) || !session_connected(ss))) {
			log_warning("could not copy table \"%s.%s\", which joined the publications, "
				    "now: %s; the mirror goes on without it and tries again within "
				    "a minute", nspname, relname, session_error(ss));
			run->sync_deferred = true;
			rc = EXIT_OK;
		} else {
			log_error("could not take a snapshot to copy table \"%s.%s\": %s", nspname,
				  relname, session_error(ss));
			run->conn_failed = !session_connected(ss);
			rc = session_error_in_use(ss) ? EXIT_IN_USE : EXIT_ERROR;
		}
		goto done;
	}
	/* the table as the snapshot has it */
	if (!published_tables(run, ss, &tables, &ntables))
		goto done;
	t = find_published(tables, ntables, oid);
	if (t == NULL) {
		log_debug("relation OID %u is not published at %s; not synced", oid,
			  lsn_format(at, lsn));
		rc = EXIT_OK;
		goto done;
	}
	if ((why = table_problem(t)) != NULL) {
		log_error("%s", why);
		free(why);
		goto done;
	}
	a = apply_new(run->mirror, LSN_INVALID, run->catalog);
	apply_set_sync_mode(a);
	c = copy_new(ss, a, sync_stopping);
	if (!copy_begin_at(c, at))
		goto copy_failed;
	/* the user's objects on it are made again once the rows are in: its
	 * triggers see nothing of the copy */
	if (replace != NULL &&
	    (!mirror_user_objects_save(run->mirror, &replace, 1, &user) ||
	     !mirror_table_drop(run->mirror, oid))) {
		log_error("could not drop mirror table \"%s\" to sync it again: %s", replace,
			  mirror_error(run->mirror));
		goto done;
	}
	/* the copy's catalog questions on this connection, in the snapshot,
	 * as a first run's (firstrun.c): no plain connection is opened */
	lookup_use_session(run->lookup, ss);
	copied = copy_one_table(c, t, at) && copy_commit_at(c, at);
	lookup_use_session(run->lookup, NULL);
	if (!copied)
		goto copy_failed;
	if (user != NULL && !restore_user_objects(run, user, replace))
		goto done;
	if (!apply_flush(a)) {
		log_error("%s", apply_error(a));
		goto done;
	}
	if (apply != NULL)
		apply_forget_table(apply, oid);
	/* the rows are in the mirror: what is left is only the snapshot's end */
	if (!session_commit(ss))
		log_debug("%s", session_error(ss));
	log_info("table \"%s.%s\" %s at %s in %.1f s", t->nspname, t->relname,
		 replace != NULL ? "synced again" : "joined the mirror", lsn_format(at, lsn),
		 (double)(mono_usecs() - started) / 1e6);
	rc = EXIT_OK;
	goto done;
copy_failed:
	if (replicate_stopping()) {
		log_info("%s; the table is synced on the next run", copy_error(c));
		rc = EXIT_OK;
	} else if (sync_tick != NULL && !sync_tick(sync_tick_ctx)) {
		/* the stream's connection could not be answered: not a signal */
		log_error("lost the connection to the source while syncing table \"%s.%s\"; "
			  "the table is synced again from the start", t->nspname, t->relname);
		run->conn_failed = true;
	} else {
		log_error("%s", copy_error(c));
		run->conn_failed = !session_connected(ss);
	}
done:
	mirror_rollback(run->mirror); /* a sync that did not finish leaves nothing */
	mirror_user_objects_free(user);
	copy_free(c);
	apply_free(a);
	source_tables_free(tables, ntables);
	session_free(ss); /* its temporary slot goes with the connection */
	return rc;
}

/* Drops the mirror tables whose relation is no longer published. */
static int drop_leaves(Run *run, Applier *apply, const MirrorTableInfo *mt, int nmt,
		       const SourceTable *pub, int npub)
{
	bool any = false;

	for (int i = 0; i < nmt; i++) {
		if (find_published(pub, npub, mt[i].relation_oid) != NULL)
			continue;
		if (!any && !mirror_begin(run->mirror))
			goto failed;
		any = true;
		if (apply != NULL)
			apply_forget_table(apply, mt[i].relation_oid);
		if (!mirror_table_drop(run->mirror, mt[i].relation_oid))
			goto failed;
		log_warning("source table \"%s.%s\" is no longer published (it left the "
			    "publications or was dropped); mirror table \"%s\" removed",
			    mt[i].source_schema, mt[i].source_table, mt[i].name);
	}
	if (any && !mirror_commit(run->mirror))
		goto failed;
	return EXIT_OK;
failed:
	log_error("%s", mirror_error(run->mirror));
	mirror_rollback(run->mirror);
	return EXIT_ERROR;
}

int tablesync_reconcile(Run *run, Session *s, Applier *apply, char *const *resync,
			int nresync, bool resync_all, TickFn tick, void *tick_ctx)
{
	SourceTable *pub = NULL;
	int npub = 0, nmt = 0, rc = EXIT_ERROR;
	MirrorTableInfo *mt = NULL;

	sync_tick = tick;
	sync_tick_ctx = tick_ctx;
	run->sync_deferred = false;
	if (!published_tables(run, s, &pub, &npub))
		goto done;
	/*
	 * Renames first (renames.c): a published OID the mirror knows under
	 * another name is neither a join nor a leave, and leaves and joins
	 * then see the names as they are now.
	 */
	rc = renames_at_start(run, pub, npub);
	if (apply != NULL)
		apply_forget_tables(apply); /* its statements name the old tables */
	if (rc != EXIT_OK)
		goto done;
	rc = EXIT_ERROR;
	if (!mirror_table_infos(run->mirror, &mt, &nmt)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	/* Leaves before joins: a table dropped and made again under its old
	 * name has a new OID, and its old mirror table must go first. */
	if ((rc = drop_leaves(run, apply, mt, nmt, pub, npub)) != EXIT_OK)
		goto done;
	/* (no room for one sync: none for the next either) */
	for (int i = 0; i < npub && rc == EXIT_OK && !run->sync_deferred && !replicate_stopping();
	     i++) {
		bool known = false;

		for (int j = 0; j < nmt && !known; j++)
			known = mt[j].relation_oid == pub[i].oid;
		if (!known)
			rc = sync_table(run, apply, pub[i].oid, pub[i].nspname, pub[i].relname, NULL);
	}
	for (int j = 0; j < nmt && rc == EXIT_OK && !replicate_stopping(); j++) {
		if (!(resync_all || strv_contains(resync, nresync, mt[j].name)) ||
		    find_published(pub, npub, mt[j].relation_oid) == NULL)
			continue;
		rc = sync_table(run, apply, mt[j].relation_oid, mt[j].source_schema,
				mt[j].source_table, mt[j].name);
	}
	if (apply != NULL)
		apply_clear_unknown(apply);
done:
	sync_tick = NULL;
	sync_tick_ctx = NULL;
	mirror_table_infos_free(mt, nmt);
	source_tables_free(pub, npub);
	return rc;
}

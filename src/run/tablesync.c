/*
 * tablesync.c: syncs the tables that join the publications, or are copied
 * again (reconcile.c says which), the way PostgreSQL's own subscriber syncs
 * a table, but all in one snapshot: a second replication connection takes
 * a snapshot with a known LSN (a temporary slot made with USE_SNAPSHOT,
 * which on a busy source waits for the transactions in progress: once,
 * not once per table), COPY reads each table in it, smallest first, and
 * each table is stored with that LSN as its sync LSN (a table with a key in
 * parts, copy_parts.c). The stream then applies a table's changes only
 * from transactions that commit at or after its sync LSN (the applier's
 * skip rule): the snapshot holds the others. An interrupted sync keeps the
 * tables (and parts) it finished; the next reconciliation syncs the others.
 * A table the role may not read waits (waiting.c), and the others go on in
 * a snapshot of their own.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/notify.h"
#include "pgmirror/copy.h"
#include "pgmirror/copy_parts.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/mirror_waiting.h"
#include "replicate_internal.h"
#include "tablestage.h"
#include "waiting.h"

/* The tick of the stream that runs meanwhile (NULL at start): answered
 * from the sync connection's waits and the copy's rows, and the plain
 * connection's while it reads the publications. One reconciliation runs at
 * a time, in one thread. */
static TickFn sync_tick;
static void *sync_tick_ctx;

void tablesync_set_tick(TickFn tick, void *tick_ctx)
{
	sync_tick = tick;
	sync_tick_ctx = tick_ctx;
}

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
static bool read_published(Run *run, Session *s, SourceTable **tables, int *n)
{
	char **pubs = NULL;
	int npubs = strv_split(run->state.publications, ',', &pubs);
	bool ok = s != NULL ? session_publication_tables(s, pubs, npubs, tables, n)
		  : lookup_publication_tables(run->lookup, pubs, npubs, sync_stopping, tables, n);

	strv_free(pubs, npubs);
	return ok;
}

bool tablesync_published(Run *run, Session *s, SourceTable **tables, int *n)
{
	bool ok = read_published(run, s, tables, n);

	if (!ok) {
		log_error("%s", s != NULL ? session_error(s) : run->catalog->error(run->catalog->ctx));
		run->conn_failed = s != NULL ? !session_connected(s)
				   : run->catalog->lost(run->catalog->ctx);
	}
	return ok;
}

/* The tables of a sync (below) from the first not yet synced, for a
 * message: "table "s.t"" or "table "s.t" and N others". */
static char *pending_text(const SyncTarget *tg, int n)
{
	return n > 1 ? xasprintf("table \"%s.%s\" and %d other%s", tg->nspname, tg->relname,
				 n - 1, n > 2 ? "s" : "")
		     : xasprintf("table \"%s.%s\"", tg->nspname, tg->relname);
}

/*
 * A signal stopped the sync of tg[0..n-1] (the tables not synced yet). The
 * next run finds again the tables that joined or are published
 * differently, but not the ones --resync asked for: it says which to ask
 * for again.
 */
static void log_sync_stopped(const Run *run, const char *err, const SyncTarget *tg, int n)
{
	char **asked = xcalloc((size_t)n + 1, sizeof(char *));
	char *list;
	int k = 0;

	for (int i = 0; i < n; i++)
		if (tg[i].requested && tg[i].replace != NULL)
			asked[k++] = (char *)tg[i].replace;
	if (k == 0)
		log_info("%s; the tables not synced yet are synced on the next run", err);
	else {
		char *option, *cmd;

		list = strv_join(asked, k, ",");
		option = xasprintf("--resync=%s", list);
		cmd = replicate_command(run->opt, option, NULL);
		log_info("%s; --resync is not remembered: to sync the tables it named that are "
			 "not synced yet, run %s again", err, cmd);
		free(cmd);
		free(option);
		free(list);
	}
	free(asked);
}

/*
 * The sync of tg[0..n-1] (the tables not synced yet) failed on the sync's
 * own connection to the source: an exit code. A service goes on without
 * them when a later try may succeed (no room for the connection or the
 * temporary slot, a lost connection, a cancelled command, a taken name; a
 * fleet of devices syncing the same tables at once meets these), with a
 * warning, and sets run->sync_deferred: the stream tries again with its
 * next check, a minute later (or at SIGHUP), and skips the changes of a
 * table that joined until then (the later snapshot holds them); a table
 * synced again keeps its rows meanwhile. A run that is to end (--once)
 * fails instead, as does a sync the user asked for (--resync).
 */
static int sync_failed(Run *run, Session *ss, const char *err, const SyncTarget *tg, int n,
		       bool copying)
{
	bool requested = false;
	char *what;

	for (int i = 0; i < n; i++)
		requested = requested || tg[i].requested;
	/* a copy's own reader is stopped when its writer fails: not a signal */
	if ((!copying && session_error_stopped(ss)) || replicate_stopping()) {
		log_sync_stopped(run, err, tg, n);
		return EXIT_OK;
	}
	if (!requested && replicate_continuous(run) && session_error_transient(ss)) {
		what = pending_text(tg, n);
		if (n == 1 && tg->replace == NULL)
			log_warning("could not copy table \"%s.%s\", which joined the publications, "
				    "now: %s; the mirror goes on without it and tries again within "
				    "a minute", tg->nspname, tg->relname, err);
		else
			log_warning("could not sync %s now: %s; the mirror goes on without the "
				    "tables that joined (a table synced again keeps its rows "
				    "meanwhile) and tries again within a minute", what, err);
		free(what);
		run->sync_deferred = true;
		/* a copy that stored a part tries again at once; else the wait grows */
		if (copy_parts_stored() > 0)
			run->sync_backoff = 0;
		else
			run->sync_backoff = run->sync_backoff < 1000000 ? 1000000
					    : run->sync_backoff * 2;
		return EXIT_OK;
	}
	what = pending_text(tg, n);
	log_error("could not sync %s: %s", what, err);
	free(what);
	run->conn_failed = !session_connected(ss);
	return session_error_in_use(ss) ? EXIT_IN_USE : EXIT_ERROR;
}

/*
 * One table of a sync, in its own SQLite transaction: copied in the
 * snapshot of the sync's connection (c's) at its LSN, and stored with it
 * as its sync LSN, replacing mirror table tg->replace (NULL: none). A
 * table no longer published in the snapshot is left alone. *copy_failed:
 * the copy's error (copy_error()) is why it failed; else the failure was
 * logged.
 */
static bool sync_one(Run *run, Applier *apply, Applier *a, Copier *c, const SyncTarget *tg,
		     const SourceTable *tables, int ntables, Lsn at, int64_t estimate,
		     bool *copy_failed)
{
	const SourceTable *t = source_table_find(tables, ntables, tg->oid);
	const char *replace = tg->replace;
	char lsn[LSN_TEXT_SIZE], *why;
	int64_t started = mono_usecs();
	bool ok = false, again = false;

	*copy_failed = false;
	if (t == NULL) {
		log_debug("relation OID %u is not published at %s; not synced", tg->oid,
			  lsn_format(at, lsn));
		return true;
	}
	if ((why = waiting_shape_problem(t)) != NULL) {
		/* as it is in the snapshot: it waits (checked before, too), and
		 * its mirror table (its last column dropped, say) goes */
		ok = waiting_instead(run, t, why);
		free(why);
		if (apply != NULL)
			apply_forget_table(apply, tg->oid);
		return ok;
	}
	if (!copy_begin_at(c, at)) {
		*copy_failed = true;
		goto done;
	}
	/* one synced again is set aside, rows and all, until its new copy is
	 * done (mirror_stage.h): readers see the old rows, and its user's
	 * triggers nothing of the copy */
	if (replace != NULL && !mirror_stage_begin(run->mirror, tg->oid)) {
		log_error("could not set mirror table \"%s\" aside to sync it again: %s", replace,
			  mirror_error(run->mirror));
		goto done;
	}
	notify_status("copying table %s.%s (it joined, or is synced again)", t->nspname,
		      t->relname);
	/* copied in parts, going on from an earlier try's */
	if (!copy_table_parts(c, run->mirror, t, at, estimate)) {
		*copy_failed = true;
		goto done;
	}
	/* a table that waited joins with its rows, in their transaction */
	if (!mirror_waiting_remove(run->mirror, tg->oid)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	if (!copy_commit_at(c, at)) {
		*copy_failed = true;
		goto done;
	}
	if (!apply_flush(a)) {
		log_error("%s", apply_error(a));
		goto done;
	}
	if (apply != NULL)
		apply_forget_table(apply, tg->oid); /* its name may change */
	if (!tablestage_swap(run, tg->oid, &again))
		goto done;
	log_info("table \"%s.%s\" %s at %s in %.1f s", t->nspname, t->relname,
		 again || replace != NULL ? "synced again" : "joined the mirror",
		 lsn_format(at, lsn), (double)(mono_usecs() - started) / 1e6);
	run->worked = true; /* the copy made progress */
	ok = true;
done:
	/* a table that did not finish leaves only the parts it committed */
	mirror_rollback(run->mirror);
	if (apply != NULL)
		apply_forget_table(apply, tg->oid); /* its rows and ranges are new */
	return ok;
}

/*
 * The targets tg[0..n-1] in the order to copy them (copy_parts_order():
 * the smallest first, those that cannot resume and are bigger than a part
 * last), into *out (malloc'd), with the source's estimate of each one's
 * rows in *rows.
 */
static bool sync_order(Session *ss, const SyncTarget *tg, int n, const SourceTable *tables,
		       int ntables, SyncTarget **out, int64_t **rows)
{
	SourceTable *sel = xcalloc((size_t)n + 1, sizeof(SourceTable));
	int64_t *r = xcalloc((size_t)n + 1, sizeof(int64_t));
	int64_t *bytes = xcalloc((size_t)n + 1, sizeof(int64_t));
	int *perm = xcalloc((size_t)n + 1, sizeof(int));
	bool ok;

	/* a table no longer published is left alone (sync_one()): any place */
	for (int i = 0; i < n; i++) {
		const SourceTable *t = source_table_find(tables, ntables, tg[i].oid);

		sel[i] = t != NULL ? *t : (SourceTable){.oid = tg[i].oid, .replident = 'n'};
	}
	ok = session_table_sizes(ss, sel, n, r, bytes);
	if (ok) {
		copy_parts_order(ss, sel, bytes, n, perm);
		*out = xcalloc((size_t)n + 1, sizeof(SyncTarget));
		*rows = xcalloc((size_t)n + 1, sizeof(int64_t));
		for (int i = 0; i < n; i++) {
			(*out)[i] = tg[perm[i]];
			(*rows)[i] = r[perm[i]];
		}
	}
	free(sel);
	free(r);
	free(bytes);
	free(perm);
	return ok;
}

/*
 * The copy of table tg at snapshot at failed for a reason of that table: a
 * privilege the check before the snapshot did not see (granted then, or
 * on some columns only), or a value the mirror cannot store. It waits
 * (waiting.c) rather than stop the others, be it a table that joins or
 * one synced again (--resync, its definition changed), and its changes
 * are skipped until a check can copy it. For a value, it waits whole
 * (waiting_copy_failed()): not in the mirror, or, synced again, with its
 * old rows set aside. For a privilege, the mirror table of one synced
 * again goes, in the waiting row's transaction. True when it waits.
 */
static bool refused_table(Run *run, Applier *apply, Session *ss, Copier *c,
			  const SyncTarget *tg, const SourceTable *tables, int ntables, Lsn at)
{
	const SourceTable *t = source_table_find(tables, ntables, tg->oid);
	bool privilege = !copy_failed_on_value(c) && session_error_privilege(ss), ok, staged = false;
	char *why = NULL, *old = NULL;

	if (t == NULL || !(privilege || copy_failed_on_value(c)) || replicate_stopping())
		return false;
	mirror_rollback(run->mirror);
	if (!privilege) {
		ok = waiting_copy_failed(run, t, at, copy_error(c), tg->replace != NULL);
		if (ok && apply != NULL)
			apply_forget_table(apply, tg->oid);
		return ok;
	}
	/* the privilege check's reason gives the GRANT to run, when it sees
	 * what the server refused (a --resync after a REVOKE) */
	if (!waiting_sort(run, NULL, t, 1, NULL, NULL, 0, true, &why) || why == NULL)
		why = waiting_copy_reason(t, copy_error(c));
	/* a table synced again, or set aside to be (mirror_stage.h), goes */
	ok = mirror_begin(run->mirror) && mirror_stage_of(run->mirror, tg->oid, &staged, &old) &&
	     (tg->replace == NULL || staged || mirror_table_drop(run->mirror, tg->oid)) &&
	     (!staged || (mirror_table_drop(run->mirror, tg->oid) &&
			  mirror_stage_forget(run->mirror, tg->oid)));
	if (!ok)
		log_error("%s", mirror_error(run->mirror));
	ok = ok && waiting_store(run, t, 1, &why, false);
	if (ok && !mirror_commit(run->mirror)) {
		log_error("%s", mirror_error(run->mirror));
		ok = false;
	}
	mirror_rollback(run->mirror);
	if (ok && (tg->replace != NULL || staged))
		log_warning("mirror table \"%s\" is removed until source table \"%s.%s\" can be "
			    "copied again", staged ? old : tg->replace, t->nspname, t->relname);
	free(old);
	if (ok && apply != NULL)
		apply_forget_table(apply, tg->oid);
	free(why);
	return ok;
}

int tablesync_sync(Run *run, Applier *apply, const SyncTarget *given, int n)
{
	SyncTarget *tg = NULL;
	int64_t *estimates = NULL;
	Session *ss;
	SourceTable *tables = NULL;
	int ntables = 0, i = 0, rc = EXIT_ERROR;
	Applier *a = NULL;
	Copier *c = NULL;
	char slot[SLOT_NAME_SIZE], lsn[LSN_TEXT_SIZE];
	Lsn at = LSN_INVALID;
	bool copy_failed = false, ok = true;
	int rest = 0; /* tg[rest..n-1] are synced next (refused_table()) */

	if (n == 0)
		return waiting_note_pending(run, NULL, NULL, 0) ? EXIT_OK : EXIT_ERROR;
	copy_parts_stored_reset();
	tg = (SyncTarget *)given; /* until ordered below, for the messages */
	ss = session_new();
	session_set_stop_check(ss, sync_stopping);
	session_temp_slot_name(run->state.slot, "sync", slot);
	if (!session_snapshot_slot(ss, &run->opt->conn, slot, &at)) {
		rc = sync_failed(run, ss, session_error(ss), tg, n, false);
		goto done;
	}
	log_debug("syncing %d table%s at %s (temporary slot \"%s\")", n, n > 1 ? "s" : "",
		  lsn_format(at, lsn), slot);
	/* the tables as the snapshot has them */
	if (!read_published(run, ss, &tables, &ntables) ||
	    !sync_order(ss, given, n, tables, ntables, &tg, &estimates)) {
		tg = (SyncTarget *)given;
		rc = sync_failed(run, ss, session_error(ss), tg, n, false);
		goto done;
	}
	if (!waiting_note_pending(run, tg, estimates, n))
		goto done;
	a = apply_new(run->mirror, LSN_INVALID, run->catalog);
	apply_set_sync_mode(a);
	c = copy_new(ss, a, sync_stopping);
	/* the copy's catalog questions on this connection, in the snapshot,
	 * as a first run's (firstrun.c): no plain connection is opened */
	lookup_use_session(run->lookup, ss);
	for (i = 0; i < n && ok; i++)
		ok = sync_one(run, apply, a, c, &tg[i], tables, ntables, at, estimates[i],
			      &copy_failed);
	lookup_use_session(run->lookup, NULL);
	if (ok) {
		/* the rows are in the mirror: what is left is only the snapshot's end */
		if (!session_commit(ss))
			log_debug("%s", session_error(ss));
		rc = waiting_note_pending(run, NULL, NULL, 0) ? EXIT_OK : EXIT_ERROR;
	} else if (!copy_failed) {
		rc = EXIT_ERROR; /* logged */
	} else if (replicate_stopping()) {
		log_sync_stopped(run, copy_error(c), tg + i - 1, n - i + 1);
		rc = EXIT_OK;
	} else if (refused_table(run, apply, ss, c, &tg[i - 1], tables, ntables, at)) {
		/* it waits; the others, in a snapshot of their own */
		rest = i;
	} else if (sync_tick != NULL && !sync_tick(sync_tick_ctx)) {
		/* the stream's connection could not be answered: not a signal */
		log_error("lost the connection to the source while syncing table \"%s.%s\"; "
			  "the table is synced again from the start", tg[i - 1].nspname,
			  tg[i - 1].relname);
		run->conn_failed = true;
	} else
		rc = sync_failed(run, ss, copy_error(c), &tg[i - 1], n - (i - 1), true);
done:
	free(estimates);
	copy_free(c);
	apply_free(a);
	source_tables_free(tables, ntables);
	session_free(ss); /* its temporary slot goes with the connection */
	if (rest > 0)
		rc = tablesync_sync(run, apply, tg + rest, n - rest);
	if (tg != given)
		free(tg);
	return rc;
}

/*
 * firstrun.c: the first run and the initial copy. Reads the published
 * tables (those that cannot be mirrored wait: waiting.c), proves an existing slot is
 * the mirror's own before dropping it, creates the slot with its snapshot,
 * claims it in the mirror, and copies every table in one SQLite
 * transaction (copy.c does the rows).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pgmirror/notify.h"
#include "pgmirror/copy.h"
#include "pgmirror/copy_parts.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/naming.h"
#include "replicate_internal.h"
#include "tablestage.h"
#include "waiting.h"

/* Reads the published tables. */
static bool read_tables(Run *run, const char *pubs_text, SourceTable **tables, int *n)
{
	char **pubs = NULL;
	int npubs = strv_split(pubs_text, ',', &pubs);
	bool ok = session_publication_tables(run->session, pubs, npubs, tables, n);

	if (!ok)
		replicate_log_session_error(run->session);
	strv_free(pubs, npubs);
	return ok;
}

/*
 * Sorts the published tables into those the copy takes (*take, borrowed
 * from tables; copy: their privileges are checked too) and those that
 * wait (*reasons, one per table, NULL for a table taken). A publication
 * none of whose tables can be taken is refused: the whole mirror would
 * be waiting.
 */
static bool sort_tables(Run *run, const SourceTable *tables, int n, bool copy, char ***reasons,
			SourceTable **take, int *ntake)
{
	*reasons = xcalloc((size_t)n + 1, sizeof(char *));
	*take = xcalloc((size_t)n + 1, sizeof(SourceTable));
	*ntake = 0;
	if (!waiting_sort(run, run->session, tables, n, NULL, NULL, 0, copy, *reasons))
		return false;
	for (int i = 0; i < n; i++)
		if ((*reasons)[i] == NULL)
			(*take)[(*ntake)++] = tables[i];
	if (n == 0 || *ntake > 0)
		return true;
	for (int i = 0; i < n; i++)
		log_error("%s", (*reasons)[i]);
	log_error("no published table of publication(s) \"%s\" can be mirrored; nothing was "
		  "made", run->state.present ? run->state.publications : run->pubs_text);
	return false;
}

/* sort_tables()'s results, freed. */
static void sorted_free(char **reasons, int n, SourceTable *take)
{
	if (reasons != NULL)
		waiting_reasons_free(reasons, n);
	free(reasons);
	free(take);
}

/*
 * Whether an existing slot of the mirror's name is provably the one this
 * mirror made, and so may be dropped. A first run that did not finish
 * stored its slot's consistent point with its claim; a slot that nothing
 * has streamed from still has that as its confirmed position, and a slot
 * of the same name made later (by another mirror, after this one's was
 * dropped) has a later one. A rebuild may drop an invalidated slot, or one
 * this run streamed from until its WAL was found gone; either was never
 * confirmed past the mirror if it was this mirror's.
 */
static bool slot_is_ours(const Run *run, const SlotInfo *si, bool rebuild)
{
	if (!run->state.present)
		return false;
	/* made (or to be made) by a run cut before its claim (claim.c) */
	if (!rebuild && claim_owns(&run->state, si))
		return true;
	/* the damaged mirror's own slot (heal.c): it holds nothing else's */
	if (rebuild && run->healing)
		return true;
	if (rebuild)
		return (!si->usable || run->slot_unreadable) &&
		       si->confirmed_flush <= run->state.confirmed_lsn;
	return !run->state.initial_copy_done && si->confirmed_flush == run->state.confirmed_lsn;
}

/*
 * Whether a first run that did not finish can go on where it stopped: its
 * slot is there, usable, and provably its own, and every table the mirror
 * has was copied by it (sync LSN at or after the slot's consistent point).
 * A rebuild that did not finish leaves the old tables (no sync LSN, or an
 * older one): it starts over, in one transaction as before.
 */
static bool can_resume(Run *run, const SlotInfo *si, int *nkept)
{
	MirrorTableInfo *mt = NULL;
	int nmt = 0;
	bool ok;

	*nkept = 0;
	if (!run->state.present || run->state.initial_copy_done || claim_is_intent(&run->state) ||
	    !si->exists ||
	    !si->usable || si->active || !slot_is_ours(run, si, false))
		return false;
	if (!mirror_table_infos(run->mirror, &mt, &nmt)) {
		log_warning("%s", mirror_error(run->mirror));
		return false;
	}
	ok = true;
	for (int i = 0; i < nmt; i++)
		ok = ok && mt[i].sync_lsn != LSN_INVALID && mt[i].sync_lsn >= run->state.confirmed_lsn;
	mirror_table_infos_free(mt, nmt);
	*nkept = nmt;
	return ok;
}

/* Whether the mirror has tables (a failure to read says yes: a rebuild
 * then copies everything). */
static bool mirror_has_tables(Run *run)
{
	MirrorTableInfo *mt = NULL;
	int nmt = 0;

	if (run->mirror == NULL || !mirror_table_infos(run->mirror, &mt, &nmt))
		return run->mirror != NULL;
	mirror_table_infos_free(mt, nmt);
	return nmt > 0;
}

/* Marks the first run finished, keeping its position (the slot's start);
 * a rebuild's copies take the place of the old tables in the same
 * transaction (mirror_stage.h). */
static bool finish_first_run(Run *run, MirrorState *st)
{
	int nswapped = 0;

	if (!mirror_begin(run->mirror) || !mirror_write_state(run->mirror, st) ||
	    !tablestage_swap_in(run, 0, true, &nswapped) || !mirror_commit(run->mirror)) {
		if (mirror_error(run->mirror)[0] != '\0')
			log_error("%s", mirror_error(run->mirror));
		mirror_rollback(run->mirror);
		return false;
	}
	if (nswapped > 0)
		log_info("mirror \"%s\" rebuilt from a fresh copy (%d %s)", run->opt->mirror_path,
			 nswapped, nswapped == 1 ? "table" : "tables");
	mirror_state_clear(&run->state);
	if (!mirror_read_state(run->mirror, &run->state)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	return true;
}

/*
 * A first run that did not finish goes on: the tables it copied stay (each
 * consistent with the stream from the slot's start by its sync LSN), and
 * the others are synced all at one more snapshot (tablesync.c), as tables
 * that join are (one slot's wait for the source's running transactions,
 * not one per table); then the first run is finished and streams from the
 * slot's start.
 */
static int resume_first_run(Run *run, int nkept)
{
	MirrorState st = run->state;
	MirrorStaged *old = NULL;
	int rc, nold = 0;

	/* a rebuild's old tables, set aside (mirror_stage.h) */
	if (!mirror_stage_list(run->mirror, &old, &nold)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	mirror_stage_list_free(old, nold);
	log_warning("the %s of mirror \"%s\" did not finish; keeping the %d %s it copied%s "
		    "and copying the others", nold > 0 || run->healing ? "rebuild" : "first run",
		    run->opt->mirror_path, nkept, nkept == 1 ? "table" : "tables",
		    nold > 0 ? " (readers see the old ones until all are copied)" : "");
	rc = reconcile_tables(run, run->session, NULL, NULL, 0, false, NULL, NULL);
	if (rc != EXIT_OK || replicate_stopping()) {
		if (rc == EXIT_OK)
			log_info("stopped by a signal; the next run copies the tables still missing");
		return rc;
	}
	st.initial_copy_done = true;
	return finish_first_run(run, &st) ? EXIT_OK : EXIT_ERROR;
}

/*
 * A first run's copy: each table in its own SQLite transactions, stored
 * with the slot's consistent point as its sync LSN, so that a run that
 * does not finish keeps the tables it copied, and the parts it copied of a
 * table with a key (copy_parts.h), which resume_first_run() goes on from.
 * The smallest tables first, those that cannot resume and are bigger than
 * a part last (copy_parts_order()): a weak link brings the small ones at
 * its first try.
 */
static bool copy_each_table(Run *run, Copier *copier, Applier *apply, const SourceTable *tables,
			    int ntables, Lsn start, bool *copy_failed, const SourceTable **failed)
{
	int64_t *rows = xcalloc((size_t)ntables + 1, sizeof(int64_t));
	int64_t *bytes = xcalloc((size_t)ntables + 1, sizeof(int64_t));
	int *perm = xcalloc((size_t)ntables + 1, sizeof(int));
	SyncTarget *pend = NULL;
	bool ok = false;

	*copy_failed = false;
	*failed = NULL;
	if (!session_table_sizes(run->session, tables, ntables, rows, bytes)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	copy_parts_order(run->session, tables, bytes, ntables, perm);
	/* what is left to copy, for --status */
	pend = xcalloc((size_t)ntables + 1, sizeof(SyncTarget));
	for (int i = 0; i < ntables; i++)
		pend[i] = (SyncTarget){tables[i].oid, tables[i].nspname, tables[i].relname, NULL,
				       false};
	if (!waiting_note_pending(run, pend, rows, ntables))
		goto done;
	for (int k = 0; k < ntables; k++) {
		int i = perm[k];

		notify_status("copying table %d of %d: %s.%s", k + 1, ntables, tables[i].nspname,
			      tables[i].relname);
		*failed = &tables[i];
		if (!copy_begin_at(copier, start) ||
		    !copy_table_parts(copier, run->mirror, &tables[i], start, rows[i]) ||
		    !copy_commit_at(copier, start)) {
			*copy_failed = true;
			goto done;
		}
		if (!apply_flush(apply)) {
			log_error("%s", apply_error(apply));
			goto done;
		}
		run->worked = true; /* the copy made progress */
	}
	*failed = NULL;
	ok = waiting_note_pending(run, NULL, NULL, 0);
done:
	free(pend);
	free(rows);
	free(bytes);
	free(perm);
	return ok;
}

/*
 * A first run's copy of one table (failed, at the slot's snapshot start;
 * NULL: not known) was refused for want of a privilege the check before
 * could not see (a row security policy calling a function the role may
 * not run, say), or met a value the mirror cannot store. The tables
 * copied so far stay, those the check found wait, and the first run goes
 * on as one that did not finish (resume_first_run()): the others are
 * synced at a snapshot of their own, where the refused table waits
 * (tablesync.c). One that met a value waits at once, whole, without its
 * parts (waiting_copy_failed()): that snapshot does not copy it again. An
 * exit code.
 */
static int copy_refused(Run *run, Copier *copier, const SourceTable *failed, Lsn start,
			const SourceTable *tables, int ntables, char *const *reasons)
{
	MirrorTableInfo *mt = NULL;
	int nmt = 0;

	log_info("%s; the other tables are copied at a snapshot of their own", copy_error(copier));
	mirror_rollback(run->mirror); /* the part in flight */
	/* ends the failed snapshot's transaction */
	if (!session_commit(run->session)) {
		replicate_log_session_error(run->session);
		return EXIT_ERROR;
	}
	if (!waiting_store(run, tables, ntables, reasons, true) ||
	    (copy_failed_on_value(copier) && failed != NULL &&
	     !waiting_copy_failed(run, failed, start, copy_error(copier), false)))
		return EXIT_ERROR;
	mirror_state_clear(&run->state); /* the claim's, with the slot's start */
	if (!mirror_read_state(run->mirror, &run->state) ||
	    !mirror_table_infos(run->mirror, &mt, &nmt)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	mirror_table_infos_free(mt, nmt);
	return resume_first_run(run, nmt);
}

/*
 * Makes the mirror's slot and fills the mirror from its snapshot: on a
 * first run, on a first run that did not finish (restart), and when the
 * mirror's slot is gone (rebuild).
 *
 * Before the slot is dropped or made, the mirror records its intent
 * (claim.c), so that a kill or a power cut at any point leaves a slot the
 * next run knows as its own. The slot is claimed (the state row names it,
 * with initial_copy_done = 0 and the slot's consistent point) once
 * CREATE_REPLICATION_SLOT has returned, while the snapshot transaction
 * stays open. A run that made the slot and fails before the claim is
 * stored (its commit failed: a full disk, an I/O error) drops the slot
 * again; a first run's file then goes too, unless the slot could not be
 * dropped: the file keeps the intent, and the next run drops it.
 *
 * What the copy reads (tables, row filters, column lists, keys) is read
 * inside the slot's snapshot, after the creation, which may have waited
 * minutes for older transactions: a table added meanwhile is copied. The
 * same check runs once before the creation too, to fail early. Each table
 * is copied in parts (copy_parts.h), committed with how far it got, so a
 * cut loses at most a part and the next run goes on (resume_first_run()).
 * A rebuild (or a restart that cannot go on) first sets the old tables
 * aside, rows and all (mirror_stage.h), in the claim's transaction; the
 * new copies go into staged tables and take the old ones' place all at
 * once, with the first run's end, in one SQLite transaction: readers keep
 * the old contents until the new ones are complete, and nothing half-done
 * ever looks complete.
 *
 * --no-initial-copy applies to a mirror's very first run only: a rebuild
 * or a restart copies, since mirroring changes alone would leave it empty
 * (or partly stale) while it looks complete.
 */
int firstrun_run(Run *run, bool rebuild)
{
	bool fresh = !run->state.present;
	bool restart = run->state.present && !run->state.initial_copy_done;
	/* a first run, or one cut before it claimed its slot (claim.c) */
	bool first = fresh || (claim_is_intent(&run->state) && !mirror_has_tables(run));
	bool copy = !first || !run->opt->no_initial_copy;
	const char *slot = fresh ? run->opt->slot : run->state.slot;
	const char *pubs_text = fresh ? run->pubs_text : run->state.publications;
	SlotInfo si = {0};
	MirrorState st = {0};
	SourceTable *tables = NULL, *take = NULL; /* take: those not waiting */
	const SourceTable *failed = NULL;          /* the one whose copy failed */
	char **reasons = NULL;                     /* why each table waits, or NULL */
	int ntables = 0, ntake = 0;
	Applier *apply = NULL;
	Copier *copier = NULL;
	Lsn start = LSN_INVALID;
	char lsn[LSN_TEXT_SIZE], snapshot_time[40];
	int rc = EXIT_ERROR, nkept = 0;
	bool copy_failed = true, ok;
	bool opened = false, claimed = false; /* the file made here; the slot claimed in it */
	bool made = false;                    /* the slot made here */

	if (!session_slot_info(run->session, slot, &si) ||
	    !replicate_wait_slot(run->session, slot, &si, SLOT_WAIT_MS)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	if (si.exists && si.active) {
		log_error("replication slot \"%s\" is in use by another connection", slot);
		rc = EXIT_IN_USE;
		goto done;
	}
	/* a heal's new file too (heal.c), which no reader sees */
	if (restart && (!rebuild || run->healing) && can_resume(run, &si, &nkept)) {
		rc = resume_first_run(run, nkept);
		goto done;
	}
	if (si.exists && !slot_is_ours(run, &si, rebuild)) {
		char *cmd = replicate_command(run->opt, "--drop-slot", slot);

		if (fresh)
			log_error("replication slot \"%s\" already exists, but mirror \"%s\" did "
				  "not create it; choose another slot with -S, or drop it first "
				  "with %s (whatever used it loses its place)", slot,
				  run->opt->mirror_path, cmd);
		else
			log_error("replication slot \"%s\" exists, but it is not the one mirror "
				  "\"%s\" made (its first run or rebuild did not finish); if no "
				  "other mirror uses it, drop it with %s and run again", slot,
				  run->opt->mirror_path, cmd);
		free(cmd);
		goto done;
	}
	/* Fail early, before the slot exists, when no table can be taken. */
	if (!read_tables(run, pubs_text, &tables, &ntables) ||
	    !sort_tables(run, tables, ntables, copy, &reasons, &take, &ntake))
		goto done;
	sorted_free(reasons, ntables, take);
	reasons = NULL;
	take = NULL;
	source_tables_free(tables, ntables);
	tables = NULL;
	ntables = 0;
	if (run->mirror == NULL) {
		if ((rc = replicate_open_mirror(run, MIRROR_CREATE)) != EXIT_OK)
			goto done;
		opened = true;
	}
	rc = EXIT_ERROR;
	if (restart)
		log_warning("the first run of mirror \"%s\" did not finish; starting over",
			    run->opt->mirror_path);
	if (!first && run->opt->no_initial_copy)
		log_warning("ignoring --no-initial-copy: it applies only to the first run of a "
			    "mirror, and mirror \"%s\" is made again from a fresh copy",
			    run->opt->mirror_path);
	/* the intent, durable before the slot is dropped or made */
	if (!claim_intent(run, slot, pubs_text))
		goto done;
	if (si.exists && !session_drop_slot(run->session, slot)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	if (copy && !session_begin_snapshot(run->session)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	if (!session_create_slot(run->session, slot,
				 (copy ? SLOT_USE_SNAPSHOT : 0) |
				 (run->opt->failover ? SLOT_FAILOVER : 0), &start)) {
		if (session_error_stopped(run->session)) {
			log_info("%s; the next run starts over", session_error(run->session));
			rc = EXIT_OK;
		} else {
			replicate_log_session_error(run->session);
			rc = session_error_in_use(run->session) ? EXIT_IN_USE : EXIT_ERROR;
		}
		goto done;
	}
	made = true;
	log_info("created replication slot \"%s\" at %s", slot, lsn_format(start, lsn));
	pgtime_format_utc(pgtime_now(), snapshot_time, sizeof(snapshot_time));

	st.slot = (char *)slot;
	st.publications = (char *)pubs_text;
	st.system_identifier = run->sys.systemid;
	st.database = run->sys.dbname;
	st.confirmed_lsn = start; /* how a restart knows the slot (slot_is_ours()) */
	st.last_commit_time = first ? NULL : run->state.last_commit_time;
	st.initial_copy_done = false;
	/* the claim; without a copy the final state below, in one commit, is
	 * it. A rebuild sets every mirror table aside in it: readers keep the
	 * old ones until the copy of all is done (finish_first_run()) */
	if (copy && (!mirror_begin(run->mirror) || !mirror_write_state(run->mirror, &st) ||
		     (!first && !mirror_stage_all(run->mirror)) ||
		     (rebuild && !mirror_note_rebuild(run->mirror, run->rebuild_reason)) ||
		     !mirror_commit(run->mirror))) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	claimed = copy;
	if (copy && replicate_stopping()) {
		log_info("stopped by a signal before the initial copy; the next run starts the "
			 "copy over");
		rc = EXIT_OK;
		goto done;
	}
	/* The tables as the snapshot has them; checked again. Without a
	 * copy they are made empty: they belong to the mirror from the start,
	 * and only tables that join later are synced with their rows. */
	if (!read_tables(run, pubs_text, &tables, &ntables) ||
	    !sort_tables(run, tables, ntables, copy, &reasons, &take, &ntake))
		goto done;

	apply = apply_new(run->mirror, LSN_INVALID, run->catalog);
	apply_defer_indexes(apply); /* made after the copy (replicate.c) */
	copier = copy_new(run->session, apply, replicate_stopping);
	/*
	 * The applier's catalog questions (a type's, a column's attnum) are
	 * asked on this connection, in the snapshot: they see the tables as
	 * they are copied, and a first run connects once. Never during a
	 * COPY: they come with a table's definition, before its rows.
	 */
	lookup_use_session(run->lookup, run->session);
	/* each table in parts (a rebuild's set aside until all are done) */
	ok = copy ? copy_each_table(run, copier, apply, take, ntake, start, &copy_failed, &failed)
		  : copy_make_tables(copier, take, ntake, start);
	lookup_use_session(run->lookup, NULL);
	if (!ok) {
		/* (a failure to store a table was logged) */
		if (copy_failed && replicate_stopping()) {
			log_info("%s; the next run %s", copy_error(copier),
				 copy ? "keeps the tables copied and copies the others"
				      : "starts over");
			rc = EXIT_OK;
		} else if (copy_failed && copy &&
			   (session_error_privilege(run->session) || copy_failed_on_value(copier))) {
			rc = copy_refused(run, copier, failed, start, tables, ntables, reasons);
		} else if (copy_failed)
			log_error("%s", copy_error(copier));
		goto done;
	}
	if (copy && !session_commit(run->session)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	/* a snapshot has no commit time: the mirror holds every transaction
	 * committed before it was taken, which is the nearest thing */
	st.last_commit_time = snapshot_time;
	st.initial_copy_done = true;
	if (copy) {
		rc = waiting_store(run, tables, ntables, reasons, true) && finish_first_run(run, &st)
		     ? EXIT_OK : EXIT_ERROR;
		goto done;
	}
	/* in the copy's transaction: apply_reset() forgot the old ones */
	if (!waiting_store(run, tables, ntables, reasons, false))
		goto done;
	if (!mirror_write_state(run->mirror, &st) ||
	    (rebuild && !mirror_note_rebuild(run->mirror, run->rebuild_reason))) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	if (!apply_flush(apply)) {
		log_error("%s", apply_error(apply));
		goto done;
	}
	claimed = true;
	if (rebuild || restart)
		log_info("mirror \"%s\" rebuilt from a fresh copy", run->opt->mirror_path);
	mirror_state_clear(&run->state);
	if (!mirror_read_state(run->mirror, &run->state)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	rc = EXIT_OK;
done:
	if (run->mirror != NULL)
		mirror_rollback(run->mirror); /* a copy that did not finish */
	/* a slot made and not claimed is given back; where it cannot be,
	 * the file keeps the intent that owns it (claim.c) */
	if (made && !claimed && !claim_give_back(run, slot))
		opened = false;
	/* a service's next try (same process) starts from the claim stored
	 * here and the tables copied so far, not from the state before it */
	if (rc != EXIT_OK && claimed && run->mirror != NULL) {
		mirror_state_clear(&run->state);
		if (!mirror_read_state(run->mirror, &run->state))
			log_error("%s", mirror_error(run->mirror));
	}
	if (opened && !claimed) {
		/* a first run that made no slot of its own leaves no file */
		mirror_close(run->mirror);
		run->mirror = NULL;
		mirror_remove_files(run->opt->mirror_path);
	}
	copy_free(copier);
	apply_free(apply);
	sorted_free(reasons, ntables, take);
	source_tables_free(tables, ntables);
	slot_info_clear(&si);
	return rc;
}

/*
 * prepare.c: what a run does once connected, before it streams: checks
 * the source (a standby's version and settings, --failover), the
 * publications and the slot (gone, invalidated, or ahead of the mirror),
 * then runs the first run or rebuild (firstrun.c), the heal of a damaged
 * file (heal.c), or the check of the publications and --resync
 * (pubcheck.c), and makes the mirror's indexes match.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replicate_internal.h"

/*
 * What a standby source needs, and what --failover needs; exit code. A
 * standby without hot_standby_feedback only gets a warning: the slot works
 * until the primary removes rows it still needs, which then invalidates it.
 */
static int check_source_kind(const Run *run)
{
	int version = session_server_version(run->session);

	if (run->kind.standby && version < 160000) {
		log_error("the source is a standby of PostgreSQL %d, and logical replication from "
			  "a standby needs PostgreSQL 16 or later; connect to the primary",
			  version / 10000);
		return EXIT_ERROR;
	}
	if (run->opt->failover && version < 170000) {
		log_error("--failover needs PostgreSQL 17 or later, but the source is PostgreSQL "
			  "%d; run without --failover", version / 10000);
		return EXIT_ERROR;
	}
	if (run->opt->failover && run->kind.standby) {
		log_error("--failover makes the slot on the primary, and the source is a "
			  "standby; connect to the primary (a multi-host -d with "
			  "target_session_attrs=read-write finds it), or run without --failover");
		return EXIT_ERROR;
	}
	if (run->kind.standby && !run->kind.hs_feedback)
		log_warning("the source is a standby with hot_standby_feedback = off: the primary "
			    "may remove rows the slot still needs, and the standby then "
			    "invalidates the slot (the mirror is rebuilt from a fresh copy); set "
			    "hot_standby_feedback = on on the standby, with a physical slot on the "
			    "primary (primary_slot_name)");
	return EXIT_OK;
}

/* Connects and checks the source; exit code. */
static int connect_source(Run *run)
{
	int rc;

	system_info_clear(&run->sys);
	free(run->pub_types); /* of another connection */
	run->pub_types = NULL;
	run->conn_failed = run->unreachable = false;
	if (!session_connect(run->session, &run->opt->conn) ||
	    !session_identify(run->session, &run->sys)) {
		run->conn_failed = run->unreachable = true;
		if (session_error_stopped(run->session))
			log_info("%s", session_error(run->session));
		else if (!replicate_continuous(run))
			replicate_log_session_error(run->session);
		/* a service tries again (replicate_run() says so) */
		return EXIT_ERROR;
	}
	if (!session_source_kind(run->session, &run->kind)) {
		replicate_log_session_error(run->session);
		return EXIT_ERROR;
	}
	if ((rc = check_source_kind(run)) != EXIT_OK)
		return rc;
	if (run->state.present &&
	    (strcmp(run->state.system_identifier, run->sys.systemid) != 0 ||
	     strcmp(run->state.database, run->sys.dbname) != 0)) {
		log_error("mirror \"%s\" was made from database \"%s\" of system %s, but the "
			  "source is database \"%s\" of system %s; give the right -d, or start a "
			  "new mirror file", run->opt->mirror_path, run->state.database,
			  run->state.system_identifier, run->sys.dbname, run->sys.systemid);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static int check_publications(Run *run, char *const *pubs, int npubs)
{
	char *missing = NULL;

	if (!session_missing_publications(run->session, pubs, npubs, &missing)) {
		replicate_log_session_error(run->session);
		return EXIT_ERROR;
	}
	if (missing != NULL) {
		log_error("publication %s does not exist in database \"%s\"; create it on the "
			  "source (CREATE PUBLICATION ...) or fix -P", missing, run->sys.dbname);
		free(missing);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/*
 * Why the server invalidated a slot, from its invalidation_reason
 * (PostgreSQL 17+; NULL before): the reason recorded for the rebuild, and
 * what to change so that it does not happen again.
 */
static const struct {
	const char *reason;   /* invalidation_reason */
	const char *rebuild;  /* last_rebuild_reason (a constant) */
	const char *advice;
} invalidations[] = {
	{"wal_removed", "replication slot invalidated on the source: it fell behind by more "
	 "than max_slot_wal_keep_size",
	 "run pgmirror more often, or raise max_slot_wal_keep_size on the source"},
	{"idle_timeout", "replication slot invalidated on the source: unused for longer than "
	 "idle_replication_slot_timeout",
	 "run pgmirror more often than idle_replication_slot_timeout, or raise that setting on "
	 "the source"},
	{"rows_removed", "replication slot invalidated on the source: rows it needed were "
	 "removed by vacuum on the primary",
	 "on a standby source, set hot_standby_feedback = on and use a physical slot between "
	 "the primary and the standby"},
	{"wal_level_insufficient", "replication slot invalidated on the source: wal_level was "
	 "set below logical", "set wal_level = logical on the source"},
};

static void slot_invalidated(Run *run, const char *reason)
{
	const char *advice = "a slot is invalidated when it falls behind by more than "
			     "max_slot_wal_keep_size (or, from PostgreSQL 17 on, for the reason "
			     "pg_replication_slots.invalidation_reason gives)";

	run->rebuild_reason = "replication slot invalidated on the source";
	for (size_t i = 0; reason != NULL && i < sizeof(invalidations) / sizeof(invalidations[0]);
	     i++) {
		if (strcmp(reason, invalidations[i].reason) == 0) {
			run->rebuild_reason = invalidations[i].rebuild;
			advice = invalidations[i].advice;
			break;
		}
	}
	log_warning("replication slot \"%s\" of mirror \"%s\" was invalidated on the source "
		    "(%s); creating it again and rebuilding the mirror from a fresh copy (readers "
		    "keep the old contents until the new ones are complete); %s",
		    run->state.slot, run->opt->mirror_path, reason ? reason : "wal_status lost",
		    advice);
}

/*
 * An existing mirror: its slot must be there and not ahead of it. A slot
 * that is gone, invalidated, or whose WAL the stream found removed
 * (run->slot_unreadable) sets *rebuild: the mirror is made again from a
 * fresh copy. A slot ahead of the mirror cannot be mended that way without
 * the user's say (another mirror may be using it).
 */
static int check_slot(Run *run, bool *rebuild)
{
	SlotInfo si = {0};
	char a[LSN_TEXT_SIZE], b[LSN_TEXT_SIZE];
	int rc = EXIT_ERROR;

	*rebuild = false;
	if (!session_slot_info(run->session, run->state.slot, &si)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	/* checked first: an invalidated slot ahead of the mirror is not its own */
	if (si.exists && si.confirmed_flush > run->state.confirmed_lsn) {
		char *cmd = replicate_command(run->opt, "--drop-slot", run->state.slot);

		log_error("replication slot \"%s\" has moved past mirror \"%s\" (slot at %s, "
			  "mirror at %s): changes in between are gone from the source. The mirror "
			  "was restored from an older copy, another mirror uses the same slot, or "
			  "the mirror lost its last transactions (a damaged -wal file, whose "
			  "frames from the damage on SQLite drops without a word, or a disk that "
			  "does not keep what it was told to sync). To start over: %s, then "
			  "remove the mirror file and run again",
			  run->state.slot, run->opt->mirror_path,
			  lsn_format(si.confirmed_flush, a), lsn_format(run->state.confirmed_lsn, b),
			  cmd);
		free(cmd);
		goto done;
	}
	if (si.exists && !si.usable) {
		slot_invalidated(run, si.invalidated_by);
		*rebuild = true;
		rc = EXIT_OK;
		goto done;
	}
	if (!si.exists || run->slot_unreadable) {
		run->rebuild_reason = !si.exists ? "replication slot lost (dropped on the source)"
				      : "replication slot unreadable (its WAL was removed from the "
					"source)";
		log_warning("replication slot \"%s\" of mirror \"%s\" %s; creating it again and "
			    "rebuilding the mirror from a fresh copy (readers keep the old "
			    "contents until the new ones are complete)",
			    run->state.slot, run->opt->mirror_path,
			    !si.exists ? "no longer exists on the source"
			    : "cannot be read any more: WAL it needs was removed from the source");
		*rebuild = true;
		rc = EXIT_OK;
		goto done;
	}
	if (!replicate_wait_slot(run->session, run->state.slot, &si, SLOT_WAIT_MS)) {
		replicate_log_session_error(run->session);
		goto done;
	}
	if (si.active) {
		log_error("replication slot \"%s\" is in use by another connection (it stayed so "
			  "for %d s): another pgmirror runs with it", run->state.slot,
			  SLOT_WAIT_MS / 1000);
		rc = EXIT_IN_USE;
		goto done;
	}
	/* --failover on a later run: a slot made without it becomes one */
	if (run->opt->failover && !si.failover) {
		if (!session_set_slot_failover(run->session, run->state.slot)) {
			replicate_log_session_error(run->session);
			rc = session_error_in_use(run->session) ? EXIT_IN_USE : EXIT_ERROR;
			goto done;
		}
		log_info("replication slot \"%s\" is now a failover slot", run->state.slot);
	}
	rc = EXIT_OK;
done:
	slot_info_clear(&si);
	return rc;
}


int replicate_prepare(Run *run)
{
	char **pubs = NULL;
	int npubs;
	bool rebuild = false, heal = run->heal, checked = false;
	PubFingerprint fp = {0}; /* a first run's, stored once it is done */
	int rc = connect_source(run);

	if (rc == EXIT_OK) {
		const char *pubs_text = run->state.present ? run->state.publications
							   : run->pubs_text;

		npubs = strv_split(pubs_text, ',', &pubs);
		rc = check_publications(run, pubs, npubs);
		strv_free(pubs, npubs);
		/* the applier may ask whether a table is published from the
		 * syncs below on, before the first stream round */
		lookup_set_publications(run->lookup, pubs_text);
	}
	/* the checks below are what SIGHUP asks for */
	(void)replicate_take_check_request();
	if (rc == EXIT_OK && heal)
		rc = heal_rebuild(run); /* a damaged file: set aside, made again */
	else if (rc == EXIT_OK && run->state.present && run->state.initial_copy_done)
		rc = check_slot(run, &rebuild);
	if (heal || rc != EXIT_OK)
		;
	else if (rebuild || !run->state.present || !run->state.initial_copy_done)
		rc = pubcheck_fingerprint(run, run->session, &fp) ? firstrun_run(run, rebuild)
								   : EXIT_ERROR;
	else {
		/* what the publications publish, if it changed (with the
		 * indexes), and --resync (once) */
		bool resync = run->opt->resync && !run->resync_done;

		checked = true;
		rc = pubcheck_run(run, run->session, NULL, run->opt->resync_tables,
				  resync ? run->opt->nresync : 0, resync && run->opt->nresync == 0,
				  NULL, NULL);
		if (rc == EXIT_OK && !replicate_stopping())
			run->resync_done = true;
	}
	if (rc == EXIT_OK && rebuild)
		run->slot_unreadable = false;
	if (rc == EXIT_OK && !checked && !replicate_stopping()) {
		/* the indexes of a first run or a rebuild, asked on the
		 * replication connection, idle until the stream starts: a
		 * --once run with nothing more to ask connects once */
		lookup_use_session(run->lookup, run->session);
		rc = pubcheck_sync_indexes(run, fp.hash != NULL, fp.hash);
		lookup_use_session(run->lookup, NULL);
	}
	pub_fingerprint_clear(&fp);
	if (rc != EXIT_OK && !session_connected(run->session))
		run->conn_failed = true;
	return rc;
}

/*
 * replicate.c: pgmirror's main job and its checks. Opens the mirror,
 * checks it against the options and the source (system, publications,
 * slot), runs the first run (firstrun.c) when the mirror needs one, makes
 * the mirror's indexes match the source's (indexes.h), then
 * streams (stream.c), connecting again with backoff when a service loses
 * the source; --verify's catch-up to its snapshot (verify.c compares);
 * and --drop-slot. What the steps share (the stop and check requests,
 * opening the mirror, waiting for a slot) is in run.c, below them all.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgmirror/copy_parts.h"
#include "pgmirror/notify.h"
#include "replicate_internal.h"
#include "tablestage.h"
#include "waiting.h"

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Checks the options against what the mirror remembers; exit code. */
static int check_mirror_identity(Run *run)
{
	const ReplicateOptions *opt = run->opt;
	MirrorState *st = &run->state;

	if (!st->present)
		return EXIT_OK;
	if (opt->npubs > 0 && strcmp(run->pubs_text, st->publications) != 0) {
		log_error("mirror \"%s\" follows publication(s) \"%s\", not \"%s\"; run without "
			  "-P or with the same set, or start a new mirror file",
			  opt->mirror_path, st->publications, run->pubs_text);
		return EXIT_ERROR;
	}
	if (opt->slot_given && strcmp(opt->slot, st->slot) != 0) {
		log_error("mirror \"%s\" uses replication slot \"%s\", not \"%s\"; run without "
			  "-S or with -S %s", opt->mirror_path, st->slot, opt->slot, st->slot);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* Each table --resync names must be a mirror table; exit code. */
static int check_resync_names(Run *run)
{
	MirrorTableInfo *mt = NULL;
	int nmt = 0, rc = EXIT_OK;

	if (run->mirror != NULL && !mirror_table_infos(run->mirror, &mt, &nmt)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	for (int i = 0; i < run->opt->nresync && rc == EXIT_OK; i++) {
		bool found = false;
		uint32_t oid; /* a table copied again, set aside meanwhile */

		for (int j = 0; j < nmt && !found; j++)
			found = strcmp(mt[j].name, run->opt->resync_tables[i]) == 0;
		if (!found && !tablestage_oid_of(run, run->opt->resync_tables[i], &oid)) {
			char *cmd = replicate_command(run->opt, "--status", NULL);

			log_error("--resync: mirror \"%s\" has no table \"%s\"; name tables as the "
				  "mirror has them (%s lists them)", run->opt->mirror_path,
				  run->opt->resync_tables[i], cmd);
			free(cmd);
			rc = EXIT_USAGE;
		}
	}
	mirror_table_infos_free(mt, nmt);
	return rc;
}

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


/*
 * Connects and checks the source, the publications and the slot, and runs
 * the first run when the mirror needs one; an exit code. A step that
 * failed because the connection died sets run->conn_failed.
 */
static int prepare(Run *run)
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

/*
 * One streaming round from the mirror's confirmed position; afterwards the
 * state is read again (the round moved it). *rc is EXIT_ERROR when that
 * fails, and the round then counts as failed.
 */
static StreamEnd stream_round(Run *run, int *rc)
{
	Applier *apply = apply_new(run->mirror, run->state.confirmed_lsn, run->catalog);
	StreamEnd end;

	apply_set_command(apply, replicate_hint_command, run);
	end = stream_run(run, apply);

	mirror_rollback(run->mirror);
	apply_free(apply);
	session_disconnect(run->session);
	mirror_state_clear(&run->state);
	*rc = EXIT_OK;
	if (!mirror_read_state(run->mirror, &run->state)) {
		log_error("%s", mirror_error(run->mirror));
		*rc = EXIT_ERROR;
	}
	return end;
}

int replicate_run(const ReplicateOptions *opt)
{
	Run run = {.opt = opt};
	int rc;
	int backoff = 0; /* a service's next pause (replicate_retry_pause()) */
	bool continuous = replicate_continuous(&run);
	Verifier *verifier = NULL; /* --verify: the snapshot to compare with */
	bool reconnecting = false; /* a stream was lost: wait for the source */
	bool rebuilt_unreadable = false; /* a slot whose WAL was gone was made again,
					  * and has not streamed since */
	Lsn streamed_from;               /* the mirror's position before a round */

	run.pubs_text = strv_join(opt->pubs, opt->npubs, ",");
	run.lookup = lookup_new(&opt->conn);
	run.catalog = lookup_catalog(run.lookup);
	run.session = session_new();
	lookup_follow(run.lookup, run.session);
	session_set_stop_check(run.session, replicate_stopping);
	if (!heal_finish_interrupted(opt->mirror_path)) {
		rc = EXIT_ERROR;
		goto done;
	}
	if (opt->verify && !file_exists(opt->mirror_path)) {
		log_error("mirror \"%s\" does not exist; --verify compares an existing mirror "
			  "(check the path)", opt->mirror_path);
		rc = EXIT_ERROR;
		goto done;
	}
	if (file_exists(opt->mirror_path) &&
	    (rc = replicate_open_mirror(&run, MIRROR_WRITE)) != EXIT_OK)
		goto done;
	heal_resume(&run); /* a heal that did not finish */
	if (!continuous)
		heal_check_at_start(&run); /* at most once a day */
	if ((rc = check_mirror_identity(&run)) != EXIT_OK)
		goto done;
	if (opt->resync && !run.heal && (rc = check_resync_names(&run)) != EXIT_OK &&
	    !heal_after_failure(&run))
		goto done;
	if (!run.state.present && opt->npubs == 0 && run.heal) {
		log_error("the settings of damaged mirror \"%s\" cannot be read from it; run "
			  "pgmirror again with the -S and -P it was made with, and it is rebuilt",
			  opt->mirror_path);
		rc = EXIT_USAGE;
		goto done;
	}
	if (!run.state.present && opt->npubs == 0) {
		log_error("the first run of a mirror needs --publication (-P)");
		rc = EXIT_USAGE;
		goto done;
	}

	for (;;) {
		StreamEnd end;
		int64_t started;

		verify_free(verifier); /* after a slot made again: a new point */
		verifier = NULL;
		run.worked = false;
		copy_parts_stored_reset();
		rc = prepare(&run);
		run.worked = run.worked || copy_parts_stored() > 0; /* a part stored */
		if (rc != EXIT_OK && !replicate_stopping() && heal_after_failure(&run))
			continue; /* the mirror file is damaged: heal it */
		/* a service tries again, at start too: a restarting server, one not
		 * up yet, or (reconnecting) its old walsender not gone yet */
		if (rc != EXIT_OK && (reconnecting || continuous) && !replicate_stopping() &&
		    (run.conn_failed || (reconnecting && rc == EXIT_IN_USE))) {
			session_disconnect(run.session);
			if (!replicate_retry_pause(&run, &backoff, false)) {
				rc = EXIT_OK;
				break;
			}
			continue;
		}
		if (rc != EXIT_OK && replicate_stopping() && !opt->verify &&
		    (session_error_stopped(run.session) || (continuous && run.conn_failed)))
			rc = EXIT_OK; /* a command that the signal cancelled, or a
				       * service stopped while it waits for the source */
		if (rc != EXIT_OK && opt->verify)
			verify_tell_unfinished(&run); /* a copy it could not finish */
		if (rc != EXIT_OK || (replicate_stopping() && !opt->verify))
			goto done; /* a signal during the checks or the copy: exit 0 */
		/* --verify: the mirror is brought to the snapshot's point, that is,
		 * every transaction that commits before it, and none after */
		if (opt->verify && replicate_stopping()) {
			log_error("stopped by a signal; nothing was compared");
			rc = EXIT_ERROR;
			goto done;
		}
		if (opt->verify && (verifier = verify_begin(&run, &rc)) == NULL)
			goto done;
		if (opt->verify)
			run.endpos = verify_point(verifier) - 1;
		if (run.endpos == LSN_INVALID)
			run.endpos = opt->endpos != LSN_INVALID ? opt->endpos
				     : opt->once ? run.sys.xlogpos : LSN_INVALID;

		started = mono_usecs();
		streamed_from = run.state.confirmed_lsn;
		end = stream_round(&run, &rc);
		run.worked = run.worked || copy_parts_stored() > 0; /* a table that joined */
		if ((rc != EXIT_OK || end == STREAM_FAILED) && !replicate_stopping() &&
		    heal_after_failure(&run))
			end = STREAM_DAMAGED;
		if (end == STREAM_DAMAGED) {
			reconnecting = true; /* the stream's walsender may hold the slot */
			continue;
		}
		if (rc != EXIT_OK)
			goto done;
		/* a slot made again that has streamed is sound: WAL lost later
		 * is a new loss, mended the same way */
		if (run.state.confirmed_lsn > streamed_from)
			rebuilt_unreadable = false;
		if (end == STREAM_DONE && opt->verify && replicate_stopping()) {
			log_error("stopped by a signal; nothing was compared");
			rc = EXIT_ERROR;
			break;
		}
		if (end == STREAM_DONE) {
			rc = opt->verify ? verify_compare(verifier, &run) : EXIT_OK;
			/* a run that is to end says which tables wait, all else
			 * confirmed (a service's --status shows them) */
			if (rc == EXIT_OK && !opt->verify && !continuous && !replicate_stopping())
				rc = waiting_report(&run);
			break;
		}
		if (end == STREAM_SLOT_GONE && !rebuilt_unreadable) {
			/* made again at once, --once too: it can never stream */
			run.slot_unreadable = rebuilt_unreadable = true;
			continue;
		}
		if (end == STREAM_SLOT_GONE) {
			log_error("the replication slot made again for mirror \"%s\" cannot be read "
				  "either; check the source's WAL (pg_wal) and its server log",
				  opt->mirror_path);
			rc = EXIT_ERROR;
			break;
		}
		if (end == STREAM_RECONNECT) {
			lookup_disconnect(run.lookup); /* its buffer may be as big */
			/* the old walsender may hold the slot a moment longer */
			reconnecting = true;
			continue;
		}
		/* after a reconnect, the slot in use is most likely the old
		 * walsender's, not gone yet: tried again like a lost connection */
		if (end == STREAM_IN_USE && !(reconnecting && continuous)) {
			rc = EXIT_IN_USE;
			break;
		}
		if (end == STREAM_IN_USE)
			end = STREAM_LOST;
		if (end == STREAM_LOST && !continuous && !replicate_stopping())
			log_error("connection to the source lost; the mirror keeps every transaction "
				  "applied so far: run pgmirror again to continue");
		if (end != STREAM_LOST || !continuous || replicate_stopping()) {
			rc = replicate_stopping() && end == STREAM_LOST ? EXIT_OK : EXIT_ERROR;
			break;
		}
		/* a connection that lasted worked, even if it heard nothing */
		if (mono_usecs() - started > (int64_t)BACKOFF_MAX_SECS * 1000000)
			run.worked = true;
		reconnecting = true;
		if (!replicate_retry_pause(&run, &backoff, true)) {
			rc = EXIT_OK;
			break;
		}
	}
done:
	replicate_note_error(&run, rc);
	verify_free(verifier);
	lookup_free(run.lookup);
	session_free(run.session);
	system_info_clear(&run.sys);
	mirror_state_clear(&run.state);
	if (run.heal)
		mirror_close_as_is(run.mirror); /* damaged: not checkpointed */
	else
		mirror_close(run.mirror);
	heal_forget_copy(&run);
	free(run.heal_why);
	free(run.pub_types);
	free(run.pubs_text);
	return rc;
}

int replicate_drop_slot(const ReplicateOptions *opt)
{
	Run run = {.opt = opt};
	const char *slot = opt->slot;
	SlotInfo si = {0};
	int rc;

	run.session = session_new();
	/*
	 * Without -S the slot is the mirror's own; a mistyped mirror path must
	 * not fall back to the default name, which may be another device's.
	 */
	if (!opt->slot_given) {
		if (!file_exists(opt->mirror_path)) {
			log_error("mirror \"%s\" does not exist; to drop a replication slot "
				  "without its mirror, name the slot with -S", opt->mirror_path);
			rc = EXIT_USAGE;
			goto done;
		}
		if ((rc = replicate_open_mirror(&run, MIRROR_READ)) != EXIT_OK)
			goto done;
		if (!run.state.present) {
			log_error("mirror \"%s\" has no replication slot of its own (its first run "
				  "did not create one); name the slot to drop with -S",
				  opt->mirror_path);
			rc = EXIT_USAGE;
			goto done;
		}
		slot = run.state.slot;
	}
	rc = EXIT_ERROR;
	if (!session_connect(run.session, &opt->conn) ||
	    !session_slot_info(run.session, slot, &si)) {
		log_error("%s", session_error(run.session));
		goto done;
	}
	if (!si.exists) {
		log_error("replication slot \"%s\" does not exist on the source; nothing to drop "
			  "(check -S and -d)", slot);
		goto done;
	}
	if (si.active) {
		log_error("replication slot \"%s\" is in use by another connection; stop it first",
			  slot);
		rc = EXIT_IN_USE;
		goto done;
	}
	if (!session_drop_slot(run.session, slot)) {
		log_error("%s", session_error(run.session));
		rc = session_error_in_use(run.session) ? EXIT_IN_USE : EXIT_ERROR;
		goto done;
	}
	log_info("dropped replication slot \"%s\"", slot);
	rc = EXIT_OK;
done:
	slot_info_clear(&si);
	session_free(run.session);
	mirror_state_clear(&run.state);
	mirror_close(run.mirror);
	return rc;
}

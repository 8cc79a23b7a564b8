/*
 * replicate.c: pgmirror's main job and its checks. Opens the mirror,
 * checks it against the options (its identity, the tables --resync
 * names), connects and prepares the run (prepare.c: the source, the
 * publications, the slot, the first run when the mirror needs one), then
 * streams (stream.c), connecting again with backoff when a service loses
 * the source; --verify's catch-up to its snapshot (verify.c compares);
 * and --drop-slot. What the steps share (the stop and check requests,
 * opening the mirror, waiting for a slot) is in run.c, below them all.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pgmirror/copy_parts.h"
#include "hub.h"
#include "replicate_internal.h"
#include "tablestage.h"
#include "waiting.h"

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * A device's mirror is never run from the source (it would take the hub's
 * slot), and a hub's never without its feed (its devices would miss what
 * the run applies); exit code.
 */
static int check_mirror_feed(Run *run)
{
	MirrorFeedState fs;
	int rc = EXIT_OK;

	if (run->heal)
		return EXIT_OK; /* a damaged file, read no further: healed first */
	if (!mirror_feed_read(run->mirror, &fs)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	if (fs.present && !fs.hub) {
		log_error("mirror \"%s\" is a device of the feed at %s; run it with --from=%s, not "
			  "from the source", run->opt->mirror_path, fs.location, fs.location);
		rc = EXIT_ERROR;
	} else if (fs.present && run->opt->feed_dir == NULL) {
		log_error("mirror \"%s\" writes the feed in \"%s\"; run it with --feed=%s, so that "
			  "its devices miss nothing (to stop writing the feed, delete the row of "
			  "pgmirror_feed with sqlite3)", run->opt->mirror_path, fs.location,
			  fs.location);
		rc = EXIT_ERROR;
	}
	mirror_feed_state_clear(&fs);
	return rc;
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
	return check_mirror_feed(run);
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
	hub_tap(&run);
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
	if (!run.heal && (rc = hub_take_up(&run)) != EXIT_OK)
		goto done;

	for (;;) {
		StreamEnd end;
		int64_t started;

		verify_free(verifier); /* after a slot made again: a new point */
		verifier = NULL;
		run.worked = false;
		copy_parts_stored_reset();
		rc = replicate_prepare(&run);
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
		if ((rc = hub_ready(&run)) != EXIT_OK)
			goto done;
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
	rc = hub_finish(&run, rc);
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

/*
 * heal.c: a damaged mirror file mends itself, and --check.
 *
 * Damage is seen in three ways: SQLite reports it in any statement of any
 * run (mirror_damage_seen(): SQLITE_CORRUPT, SQLITE_NOTADB on a file that
 * was a mirror, an error reading the file), or the integrity check finds
 * it: at the start of a run that ends by itself when the last check is a
 * day old, in a service's background thread (stream.c) at the same age,
 * and on demand (--check, which only reports).
 *
 * Healing keeps the damaged file locked and in place while a new mirror
 * is built beside it (MIRROR.db.rebuild) from a fresh copy, exactly as
 * after a lost slot (firstrun_run(), the slot made again), with the
 * settings the damaged file still shows (else the command line's). The
 * user's tables, indexes, views and triggers that can still be read from
 * the damaged file are made again in it. Only then is the damaged file
 * set aside as MIRROR.db.damaged (its -wal with it, so that no new file
 * can ever read it) and the new one put in its place. A heal that does
 * not finish (it fails, a signal stops it, a kill) leaves the damaged file
 * where it was and the new one beside it, which tells the next run to heal
 * again at once (heal_resume()): the damage may lie where that run reads
 * nothing, and the slot, made again, may be ahead of the damaged file,
 * which would otherwise be refused as a restored old copy. A kill between
 * the set-aside and the new file's rename is finished by the next run
 * (heal_finish_interrupted()).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replicate_internal.h"

/*
 * One UPDATE, as last_sync_time's: on its own when no transaction is open,
 * else in the one a service's applier holds open between groups (the
 * stored positions of keepalives), which commits it with them.
 */
bool heal_record_check(Run *run, const char *result)
{
	if (!mirror_note_check(run->mirror, result)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	return true;
}

bool heal_take_check_result(Run *run, MirrorCheckResult res, const char *found,
			    int64_t usecs)
{
	log_info("integrity check of mirror \"%s\": %s (%.1f s)", run->opt->mirror_path,
		 res == MIRROR_CHECK_SOUND ? "ok" : res == MIRROR_CHECK_DAMAGED ? "damaged"
		 : "could not run", (double)usecs / 1e6);
	if (res == MIRROR_CHECK_DAMAGED) {
		heal_note(run, NULL, found);
		return false;
	}
	if (res == MIRROR_CHECK_FAILED) {
		/* tried again at the next occasion */
		log_warning("could not check mirror \"%s\": %s", run->opt->mirror_path, found);
		return true;
	}
	return heal_record_check(run, found);
}

void heal_check_at_start(Run *run)
{
	char *found = NULL;
	bool due = false;
	MirrorCheckResult res;
	int64_t started = mono_usecs();

	if (run->heal || run->mirror == NULL || !run->state.present)
		return;
	if (!mirror_check_due(run->mirror, HEAL_CHECK_MAX_AGE_SECS, &due)) {
		if (!heal_after_failure(run))
			log_warning("%s", mirror_error(run->mirror));
		return;
	}
	if (!due)
		return;
	res = mirror_check_file(run->opt->mirror_path, &found);
	if (!heal_take_check_result(run, res, found, mono_usecs() - started) && !run->heal)
		(void)heal_after_failure(run);
	mirror_damage_forget();
	free(found);
}

/*
 * The settings to rebuild with: the damaged file's, as far as it could be
 * read; else the command line's (-S, -P). False when there are none.
 */
static bool remember_settings(Run *run)
{
	MirrorState *st = &run->state;

	if (st->present) {
		st->initial_copy_done = true; /* a rebuild, not a first run */
		return true;
	}
	if (run->opt->npubs == 0) {
		log_error("the settings of damaged mirror \"%s\" cannot be read from it; run "
			  "pgmirror again with the -S and -P it was made with, and it is rebuilt",
			  run->opt->mirror_path);
		return false;
	}
	log_warning("the settings of damaged mirror \"%s\" cannot be read from it; rebuilding "
		    "it with slot \"%s\" and publication(s) \"%s\" of the command line",
		    run->opt->mirror_path, run->opt->slot, run->pubs_text);
	mirror_state_clear(st);
	st->present = true;
	st->slot = xstrdup(run->opt->slot);
	st->publications = xstrdup(run->pubs_text);
	st->system_identifier = xstrdup(run->sys.systemid);
	st->database = xstrdup(run->sys.dbname);
	st->confirmed_lsn = LSN_INVALID;
	st->initial_copy_done = true;
	return true;
}

/* Makes the damaged file's user objects again in the new mirror; warns
 * of each that could not be. */
static bool restore_user_objects(Run *run, const MirrorUserObjects *u, const char *from)
{
	char **dropped = NULL;
	int ndropped = 0;

	if (u == NULL)
		return true;
	if (!mirror_user_objects_restore_from(run->mirror, from, u, &dropped, &ndropped)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	for (int i = 0; i < ndropped; i++)
		log_warning("the user's %s could not be made again from damaged mirror \"%s\"",
			    dropped[i], run->opt->mirror_path);
	strv_free(dropped, ndropped);
	return true;
}

/* The file a heal builds the new mirror in, beside the damaged one; left
 * there by a heal that does not finish. */
static char *rebuild_path(const char *path)
{
	return xasprintf("%s.rebuild", path);
}

bool heal_finish_interrupted(const char *path)
{
	char *fresh = rebuild_path(path), *err = NULL;
	bool finished = false, ok = mirror_finish_set_aside(path, fresh, &finished, &err);

	if (!ok)
		log_error("mirror \"%s\" was rebuilt, but a kill stopped its heal before the new "
			  "file took its name, and it still cannot: %s; rename \"%s\" to \"%s\" by "
			  "hand", path, err, fresh, path);
	else if (finished)
		log_warning("a heal of mirror \"%s\" was stopped after it set the damaged file "
			    "aside as \"%s.damaged\" and before the new one took its name; the new "
			    "one has it now", path, path);
	free(err);
	free(fresh);
	return ok;
}

void heal_resume(Run *run)
{
	const char *path = run->opt->mirror_path;
	char *fresh;
	struct stat st;

	if (run->heal || run->mirror == NULL)
		return;
	fresh = rebuild_path(path);
	if (stat(fresh, &st) == 0) {
		run->heal = true;
		free(run->heal_why);
		run->heal_why = xstrdup("a run that found it damaged did not finish its rebuild");
		log_warning("mirror \"%s\" was found damaged by a run that did not finish rebuilding "
			    "it (\"%s\" is left of that); setting it aside as \"%s.damaged\" and "
			    "rebuilding it from a fresh copy", path, fresh, path);
	}
	free(fresh);
}

/*
 * The last check describes the file in place, not the one set aside: the
 * new file is checked as it takes the name (the finding that caused the
 * heal stays in last_rebuild_reason), so that monitoring does not flag a
 * healthy mirror, nor the next run check again.
 */
static bool check_rebuilt(Run *run)
{
	char *found = NULL;
	int64_t t0 = mono_usecs();
	MirrorCheckResult res = mirror_check_file(run->opt->mirror_path, &found);
	/* damage in the new file too (a failing disk): noted, healed next */
	bool ok = heal_take_check_result(run, res, found, mono_usecs() - t0) || run->heal;

	free(found);
	return ok;
}

/*
 * The new file of a heal that did not finish, when it holds the copy of
 * that heal, claimed with its slot (a first run's copy in parts, whose
 * tables and parts are kept): opened into run->mirror, its state into
 * run->state, so that firstrun_run() goes on with it. False (nothing
 * opened): the heal starts over.
 */
static bool resume_heal(Run *run, const char *fresh)
{
	Mirror *m = NULL;
	MirrorState st = {0};
	char *err = NULL;
	struct stat sb;
	bool ok;

	if (stat(fresh, &sb) != 0 || mirror_open(fresh, MIRROR_WRITE, &m, &err) != MIRROR_OPEN_OK) {
		free(err);
		return false;
	}
	ok = mirror_read_state(m, &st) && st.present && !st.initial_copy_done &&
	     !claim_is_intent(&st) && strcmp(st.slot, run->state.slot) == 0 &&
	     strcmp(st.publications, run->state.publications) == 0;
	if (!ok) {
		mirror_state_clear(&st);
		mirror_close(m);
		return false;
	}
	log_info("the copy of the heal that did not finish goes on in \"%s\"", fresh);
	mirror_state_clear(&run->state);
	run->state = st;
	run->mirror = m;
	return true;
}

int heal_rebuild(Run *run)
{
	const char *path = run->opt->mirror_path;
	char *fresh = rebuild_path(path), *err = NULL;
	char *reason = xasprintf("mirror damaged: %s", run->heal_why ? run->heal_why : "");
	Mirror *damaged = run->mirror;
	MirrorUserObjects *u = NULL;
	MirrorOpenResult r;
	int rc = EXIT_ERROR;
	bool stopped = false;

	if (run->heal_copy != NULL ? !mirror_user_objects_read(run->heal_copy, &u)
	    : damaged != NULL && !mirror_user_objects_read(damaged, &u))
		u = NULL;
	if (u == NULL && damaged != NULL)
		log_warning("the user's objects in damaged mirror \"%s\" cannot be read, so they "
			    "are not made again", path);
	if (!remember_settings(run))
		goto done;
	if (!resume_heal(run, fresh)) {
		mirror_remove_files(fresh); /* of a heal that did not finish */
		r = mirror_open(fresh, MIRROR_CREATE, &run->mirror, &err);
		if (r != MIRROR_OPEN_OK) {
			log_error("%s", err);
			run->mirror = NULL;
			goto done;
		}
	}
	/* firstrun_run() waits for the walsender of a stream that met the
	 * damage to let go of the slot (replicate_wait_slot()) */
	run->healing = true;
	run->rebuild_reason = reason;
	rc = firstrun_run(run, true);
	run->healing = false;
	run->rebuild_reason = NULL;
	/* a signal before the copy finished: exit 0, the next run heals */
	stopped = rc == EXIT_OK && replicate_stopping();
	if (rc == EXIT_OK && !stopped &&
	    !restore_user_objects(run, u, run->heal_copy ? run->heal_copy_path : path))
		rc = EXIT_ERROR;
	mirror_close(run->mirror); /* checkpointed: no -wal stays */
	run->mirror = NULL;
	/* the new file stays: it tells the next run to heal again
	 * (heal_resume()), since the damaged file may read as sound where
	 * nothing touches the damage, and its slot may now be ahead of it */
	if (rc != EXIT_OK || stopped)
		goto done;
	mirror_close_as_is(damaged);
	damaged = NULL;
	if (!mirror_set_aside(path, fresh, &err)) {
		log_error("%s", err);
		rc = EXIT_ERROR;
		goto done;
	}
	mirror_state_clear(&run->state);
	if ((rc = replicate_open_mirror(run, MIRROR_WRITE)) != EXIT_OK)
		goto done;
	run->heal = false;
	run->resync_done = true; /* every table was just copied */
	if (!check_rebuilt(run)) {
		rc = EXIT_ERROR;
		goto done;
	}
	log_warning("mirror \"%s\" was damaged and has been rebuilt from a fresh copy; the "
		    "damaged file is kept as \"%s.damaged\" (remove it when it is no longer "
		    "needed); readers must open the mirror again", path, path);
done:
	if (run->mirror == NULL && damaged != NULL)
		run->mirror = damaged; /* still damaged: the next try starts from it */
	mirror_damage_forget(); /* what reading the damaged file reported */
	if (rc == EXIT_OK && !stopped)
		heal_forget_copy(run);
	mirror_user_objects_free(u);
	free(err);
	free(reason);
	free(fresh);
	return rc;
}

int replicate_check(const char *path)
{
	Mirror *m = NULL;
	char *found = NULL, *err = NULL;
	MirrorCheckResult res;
	MirrorOpenResult r;
	MirrorState st = {0};
	struct stat sb;
	bool ours, recorded = false;
	int serr = stat(path, &sb) != 0 ? errno : 0;

	if (serr != 0 || !S_ISREG(sb.st_mode)) {
		log_error("cannot check \"%s\": %s; give the path of an existing mirror file", path,
			  serr != 0 ? strerror(serr) : "not a regular file");
		return EXIT_ERROR;
	}
	res = mirror_check_file(path, &found);
	/* a sound file is a mirror when it has pgmirror's state (read without
	 * writing: an empty file or someone else's database stays as it was);
	 * an unreadable one when it holds pgmirror's mark */
	if (res == MIRROR_CHECK_SOUND)
		ours = mirror_open(path, MIRROR_READ, &m, &err) == MIRROR_OPEN_OK &&
		       mirror_read_state(m, &st) && st.present;
	else
		ours = mirror_file_was_mirror(path);
	mirror_state_clear(&st);
	if (m != NULL)
		mirror_close(m);
	m = NULL;
	free(err);
	err = NULL;
	if (!ours) {
		log_error("\"%s\" is not a pgmirror mirror (%s); give the path of a mirror file",
			  path, res == MIRROR_CHECK_SOUND ? "it has no pgmirror_state" : found);
		free(found);
		return EXIT_ERROR;
	}
	if (res == MIRROR_CHECK_FAILED) {
		log_error("could not check mirror \"%s\": %s", path, found);
		free(found);
		return EXIT_ERROR;
	}
	printf("%s\n", found);
	/* recorded where the file can be written (not while a pgmirror runs) */
	r = mirror_open(path, MIRROR_WRITE, &m, &err);
	if (r == MIRROR_OPEN_OK) {
		recorded = mirror_begin(m) && mirror_note_check(m, found) && mirror_commit(m);
		if (!recorded)
			log_debug("the check's result is not recorded in mirror \"%s\": %s", path,
				  mirror_error(m));
	} else
		log_debug("the check's result is not recorded: %s", err);
	if (r == MIRROR_OPEN_DAMAGED || res == MIRROR_CHECK_DAMAGED)
		mirror_close_as_is(m);
	else
		mirror_close(m);
	free(err);
	/* a recorded finding makes the next run check, and heal */
	if (res == MIRROR_CHECK_DAMAGED)
		log_error("mirror \"%s\" is damaged; %s sets it aside as \"%s.damaged\" and "
			  "rebuilds it from a fresh copy", path, recorded ? "the next run of pgmirror"
			  : "the run of pgmirror that meets the damage, or its next daily check,",
			  path);
	free(found);
	return res == MIRROR_CHECK_SOUND ? EXIT_OK : EXIT_DAMAGED;
}

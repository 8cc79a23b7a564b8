/*
 * run.c: what the steps of a run share, below all of them (replicate.c on
 * top; firstrun.c, tablesync.c, stream.c, verify.c, heal.c): the SIGTERM
 * flag and SIGHUP's check request, opening the mirror for a run, whether
 * the run follows the source, the waits for the replication slot, and
 * marking a run whose mirror is damaged for heal.c's rebuild.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "replicate_internal.h"

/* Set by the signal handler, read by the copy's reader thread too: a
 * lock-free atomic, which a handler may store to. */
static atomic_int stop_requested;
/* Set by SIGHUP: check the publications now. */
static atomic_int check_requested;

void replicate_request_stop(void)
{
	stop_requested = 1;
}

void replicate_request_check(void)
{
	check_requested = 1;
}

bool replicate_take_check_request(void)
{
	return atomic_exchange(&check_requested, 0) != 0;
}

bool replicate_stopping(void)
{
	return stop_requested != 0;
}

void heal_note(Run *run, const char *why, const char *found_by_check)
{
	if (run->heal)
		return;
	run->heal = true;
	free(run->heal_why);
	run->heal_why = xstrdup(found_by_check ? found_by_check : why);
	log_warning("mirror \"%s\" is damaged (%s: %s); setting it aside as \"%s.damaged\" and "
		    "rebuilding it from a fresh copy", run->opt->mirror_path,
		    found_by_check ? "the integrity check found"
		    : mirror_damage_own() ? "pgmirror's own tables hold what pgmirror never writes"
		    : "SQLite reported", run->heal_why, run->opt->mirror_path);
}

bool heal_after_failure(Run *run)
{
	const char *why = mirror_damage_seen();

	if (why == NULL || run->heal || run->mirror == NULL)
		return false;
	heal_note(run, why, NULL);
	mirror_damage_forget();
	return true;
}

/*
 * --verify and --resync while a service holds the mirror: not the overlap
 * of a cron job (exit 3 all the same), but a step that needs the file to
 * itself; the error says so, and which unit to stop for it.
 */
static void log_in_use_hint(const ReplicateOptions *opt, const char *err)
{
	const char *what = opt->verify ? "--verify" : "--resync";
	char *unit = NULL;
	long pid;

	(void)mirror_holder(opt->mirror_path, &pid, &unit);
	if (unit != NULL)
		log_error("%s; %s needs the mirror to itself: stop that service first (systemctl "
			  "stop %s), run %s again, then start it (systemctl start %s)", err, what,
			  unit, what, unit);
	else
		log_error("%s; %s needs the mirror to itself: stop the pgmirror that holds it "
			  "first (under systemd: systemctl stop pgmirror@NAME, NAME being this "
			  "mirror's instance), run %s again, then start it again", err, what, what);
	free(unit);
}

void heal_read_settings(Run *run)
{
	const char *path = run->opt->mirror_path;

	if (run->state.present || run->heal_copy != NULL)
		return;
	/* the pages may be sound, and the header wrong (not a database, an
	 * unknown format, a page count past the end of the file): read them
	 * through a copy with a new header */
	run->heal_copy_path = xasprintf("%s.rebuild-src", path);
	run->heal_copy = mirror_open_repaired(run->mirror, run->heal_copy_path);
	if (run->heal_copy == NULL || !mirror_read_state(run->heal_copy, &run->state)) {
		mirror_state_clear(&run->state);
		heal_forget_copy(run);
		return;
	}
	log_info("the settings and the user's objects of damaged mirror \"%s\" are read from a "
		 "copy of it with its header made anew", path);
}

void heal_forget_copy(Run *run)
{
	mirror_close(run->heal_copy);
	run->heal_copy = NULL;
	if (run->heal_copy_path != NULL)
		mirror_remove_files(run->heal_copy_path);
	free(run->heal_copy_path);
	run->heal_copy_path = NULL;
}

int replicate_open_mirror(Run *run, MirrorMode mode)
{
	char *err = NULL;
	MirrorOpenResult r = mirror_open(run->opt->mirror_path, mode, &run->mirror, &err);

	if (r == MIRROR_OPEN_DAMAGED && mode != MIRROR_READ) {
		/* set aside and rebuilt once connected (heal.c) */
		heal_note(run, mirror_damage_seen() ? mirror_damage_seen()
			  : mirror_header_unreadable(run->mirror) ? "its header cannot be read" : err,
			  NULL);
		free(err);
		if (!mirror_read_state(run->mirror, &run->state)) {
			mirror_state_clear(&run->state);
			heal_read_settings(run);
		}
		mirror_damage_forget();
		return EXIT_OK;
	}
	if (r != MIRROR_OPEN_OK) {
		/* a cron job that overlaps itself: exit 3 says it, and -q
		 * keeps cron from mailing about it */
		if (r == MIRROR_OPEN_LOCKED && (run->opt->verify || run->opt->resync))
			log_in_use_hint(run->opt, err);
		else if (r == MIRROR_OPEN_LOCKED)
			log_info("%s", err);
		else
			log_error("%s", err);
		free(err);
		mirror_close(run->mirror);
		run->mirror = NULL;
		return r == MIRROR_OPEN_LOCKED ? EXIT_IN_USE : EXIT_ERROR;
	}
	if (mode != MIRROR_READ && mirror_sqlite_wal_reset_bug() && !run->wal_reset_told) {
		run->wal_reset_told = true;
		log_debug("SQLite %s has the WAL-reset bug (fixed in 3.51.3): while pgmirror runs, "
			  "readers of mirror \"%s\" must neither write to it nor run checkpoints "
			  "(docs/durability.md)", mirror_sqlite_version(), run->opt->mirror_path);
	}
	if (!mirror_read_state(run->mirror, &run->state)) {
		if (mode != MIRROR_READ && heal_after_failure(run))
			return EXIT_OK; /* its settings come from the command line */
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

void replicate_log_session_error(Session *s)
{
	/* a signal cancelled the command: the run ends with exit 0 */
	if (session_error_stopped(s) && replicate_stopping())
		log_info("%s", session_error(s));
	else
		log_error("%s", session_error(s));
}

bool replicate_wait_slot(Session *s, const char *slot, SlotInfo *si, int max_ms)
{
	for (int waited = 0; si->active && waited < max_ms && !stop_requested; waited += 100) {
		if (waited == 1000)
			log_info("replication slot \"%s\" is still held by a connection; waiting up "
				 "to %d s for it to let go (the walsender of a run that has ended "
				 "lets go once it notices)", slot, max_ms / 1000);
		usleep(100000);
		slot_info_clear(si);
		if (!session_slot_info(s, slot, si))
			return false;
	}
	return true;
}

bool replicate_slot_wal_lost(const Run *run)
{
	Session *s = session_new();
	SlotInfo si = {.active = true};
	bool lost = false;

	session_set_stop_check(s, replicate_stopping);
	/* the walsender that failed lets go of the slot as it exits */
	if (session_connect_plain(s, &run->opt->conn) &&
	    session_slot_info(s, run->state.slot, &si) &&
	    replicate_wait_slot(s, run->state.slot, &si, 2000) && !si.active)
		lost = si.exists && !si.usable;
	slot_info_clear(&si);
	session_free(s);
	return lost;
}

bool replicate_continuous(const Run *run)
{
	return !run->opt->once && run->opt->endpos == LSN_INVALID && !run->opt->verify;
}

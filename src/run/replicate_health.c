/*
 * replicate_health.c: what a run leaves in the mirror for a fleet's
 * monitoring besides its data (pgmirror_state's health columns, see
 * mirror_health.c): the error of a run that fails, the warning of a
 * service that tries again (and its pause before it does). stream.c notes when the mirror is in sync,
 * which clears them; firstrun.c notes a rebuild.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pgmirror/notify.h"
#include "replicate_internal.h"

/*
 * A run that fails leaves its error in the mirror (last_error, for
 * --status), when it has the mirror open: not when another pgmirror holds
 * it, nor for a usage error, nor in a damaged file (heal.c); a run that
 * gets the mirror in sync clears it (stream.c).
 */
void replicate_note_error(Run *run, int rc)
{
	const char *err = log_last_error();

	if (rc != EXIT_ERROR || err == NULL || run->mirror == NULL || !run->state.present ||
	    run->heal)
		return;
	mirror_rollback(run->mirror);
	if (!mirror_note_error(run->mirror, err))
		log_debug("could not store the error in the mirror: %s", mirror_error(run->mirror));
}

/* Sleeps up to secs, waking early when asked to stop. */
static void backoff_sleep(int secs)
{
	for (int i = 0; i < secs * 10 && !replicate_stopping(); i++) {
		notify_alive(); /* waiting for the source is its job now */
		usleep(100000);
	}
}

/*
 * A service that tries again warns, and keeps the warning as the mirror's
 * last_error meanwhile: a fleet's monitoring sees why the mirror is not in
 * sync (the next time it is, the error is cleared): that it lost its
 * connection (lost, or a try whose connection worked), or that the source
 * is not available (with why, when connecting failed). It waits *backoff
 * seconds: none after a try whose connection worked (run->worked: on a
 * link that drops every few seconds each connection works a while, and
 * waiting would only lose what the link could carry), else the next step,
 * up to BACKOFF_MAX_SECS (a server that refuses, or cannot be reached, is
 * not pressed).
 */
bool replicate_retry_pause(Run *run, int *backoff, bool lost)
{
	char *what, *text;

	if (run->worked)
		*backoff = 0;
	if (lost || run->worked)
		what = xstrdup("connection to the source lost; reconnecting");
	else
		what = xasprintf("the source is not available yet%s%s; trying again",
				 run->unreachable ? ": " : "",
				 run->unreachable ? session_error(run->session) : "");
	if (*backoff > 0)
		text = xasprintf("%s in %d s", what, *backoff);
	else
		text = xasprintf("%s now", what);
	free(what);
	/* stored before it is said: whoever reads the warning and then the
	 * mirror's last_error sees the same reason */
	if (run->mirror != NULL && run->state.present && !run->heal &&
	    !mirror_note_error(run->mirror, text))
		log_debug("could not store the warning in the mirror: %s", mirror_error(run->mirror));
	log_warning("%s", text);
	notify_status("waiting for the source: %s", text);
	free(text);
	backoff_sleep(*backoff);
	*backoff = backoff_next(*backoff, BACKOFF_MAX_SECS);
	return !replicate_stopping();
}

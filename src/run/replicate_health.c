/*
 * replicate_health.c: what a run leaves in the mirror for a fleet's
 * monitoring besides its data (pgmirror_state's health columns, see
 * mirror_health.c): the error of a run that fails, the warning of a
 * service that tries again. stream.c notes when the mirror is in sync,
 * which clears them; firstrun.c notes a rebuild.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

/*
 * A service that tries again warns, and keeps the warning as the mirror's
 * last_error meanwhile: a fleet's monitoring sees why the mirror is not in
 * sync (the next time it is, the error is cleared).
 */
void replicate_warn_retry(Run *run, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (text == NULL)
		return;
	log_warning("%s", text);
	notify_status("waiting for the source: %s", text);
	if (run->mirror != NULL && run->state.present && !run->heal &&
	    !mirror_note_error(run->mirror, text))
		log_debug("could not store the warning in the mirror: %s", mirror_error(run->mirror));
	free(text);
}

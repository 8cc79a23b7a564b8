/*
 * mirror_health.c: the device's health in pgmirror_state (format 3), for
 * --status and a fleet's monitoring: when the mirror was last known to be
 * in sync and the lag then, the last check and rebuild, the last run's
 * error; and the tables' generation numbers, drawn from one counter
 * (pgmirror_state.last_generation) so that a table dropped and made again
 * never gets a number an app has seen before.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

void mirror_health_clear(MirrorHealth *h)
{
	free(h->last_sync_time);
	free(h->last_check_time);
	free(h->last_check_result);
	free(h->last_rebuild_time);
	free(h->last_rebuild_reason);
	free(h->last_error);
	free(h->last_error_time);
	memset(h, 0, sizeof(*h));
}

/*
 * The last sync's lag from columns col (bytes) and col + 1 (seconds) of
 * q's row: known when both are there and can be a lag (a whole number of
 * bytes and a finite number of seconds, neither below 0). A figure that
 * cannot be one (a hand edit, 1e999) is shown as not known, with a
 * warning: it is a report, and the next sync writes it again.
 */
static void read_lag(Mirror *m, sqlite3_stmt *q, int col, MirrorHealth *h)
{
	int tb = sqlite3_column_type(q, col), ts = sqlite3_column_type(q, col + 1);
	double secs = sqlite3_column_double(q, col + 1);
	bool bytes_ok = tb == SQLITE_INTEGER && sqlite3_column_int64(q, col) >= 0;
	bool secs_ok = (ts == SQLITE_FLOAT || ts == SQLITE_INTEGER) && isfinite(secs) && secs >= 0;
	char shown[64];

	h->has_lag = bytes_ok && secs_ok;
	h->lag_bytes = h->has_lag ? sqlite3_column_int64(q, col) : 0;
	h->lag_seconds = h->has_lag ? secs : 0;
	if (h->has_lag || (tb == SQLITE_NULL && ts == SQLITE_NULL))
		return;
	mirror_own_show(q, bytes_ok ? col + 1 : col, bytes_ok ? ts : tb, shown, sizeof(shown));
	log_warning("mirror \"%s\": pgmirror_state.%s is %s, not a lag; the lag is shown as not "
		    "known until the next sync writes it again", m->path,
		    bytes_ok ? "last_sync_lag_seconds" : "last_sync_lag_bytes", shown);
}

bool mirror_read_health(Mirror *m, MirrorHealth *h)
{
	sqlite3_stmt *q;
	int rc;

	memset(h, 0, sizeof(*h));
	q = mirror_prepare(m,
		"SELECT last_sync_time, last_sync_lag_bytes, last_sync_lag_seconds, "
		"last_check_time, last_check_result, last_rebuild_time, last_rebuild_reason, "
		"last_error, last_error_time FROM pgmirror_state WHERE id = 1", false);
	if (q == NULL)
		return false;
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		h->last_sync_time = mirror_column_dup(q, 0);
		read_lag(m, q, 1, h);
		h->last_check_time = mirror_column_dup(q, 3);
		h->last_check_result = mirror_column_dup(q, 4);
		h->last_rebuild_time = mirror_column_dup(q, 5);
		h->last_rebuild_reason = mirror_column_dup(q, 6);
		h->last_error = mirror_column_dup(q, 7);
		h->last_error_time = mirror_column_dup(q, 8);
	} else if (rc != SQLITE_DONE)
		errbuf_set(&m->err, "could not read pgmirror_state from \"%s\": %s", m->path,
			   sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

/* Sets a time column of pgmirror_state to now (UTC, in the form of the
 * other times there) and its text column to text. */
static bool note_now(Mirror *m, const char *time_column, const char *text_column,
		     const char *text)
{
	char now[40];
	/* one line, no secret: what --status shows and monitoring parses */
	char *clean = text != NULL ? log_clean(text) : NULL;
	bool ok;

	pgtime_format_utc(pgtime_now(), now, sizeof(now));
	ok = mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_state SET %w = %Q, %w = %Q WHERE id = 1", time_column, now,
		text_column, clean));
	free(clean);
	return ok;
}

bool mirror_note_sync(Mirror *m, const char *when, int64_t lag_bytes, double lag_seconds)
{
	/* a run that got the mirror in sync succeeded: its error is gone */
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_state SET last_sync_time = %Q, last_sync_lag_bytes = %lld, "
		"last_sync_lag_seconds = %.3f, last_error = NULL, last_error_time = NULL "
		"WHERE id = 1", when, (long long)lag_bytes, lag_seconds));
}

bool mirror_note_check(Mirror *m, const char *result)
{
	return note_now(m, "last_check_time", "last_check_result", result);
}

bool mirror_note_rebuild(Mirror *m, const char *reason)
{
	return note_now(m, "last_rebuild_time", "last_rebuild_reason", reason);
}

bool mirror_note_error(Mirror *m, const char *error)
{
	return note_now(m, "last_error_time", "last_error", error);
}

/* a generation number as stored, or 0 where what is stored is none (text
 * compares above every number in max(), and would start the count anew) */
#define GENERATION(col) "(CASE typeof(" col ") WHEN 'integer' THEN " col " ELSE 0 END)"

bool mirror_next_generation(Mirror *m, int64_t *out)
{
	/* a mirror without its state row yet (never: the claim comes first)
	 * still numbers its tables */
	return mirror_exec(m, "UPDATE pgmirror_state SET last_generation = max("
			   GENERATION("last_generation") ", coalesce((SELECT max("
			   GENERATION("generation") ") FROM pgmirror_tables), 0)) + 1") &&
	       mirror_scalar(m, "SELECT coalesce((SELECT last_generation FROM pgmirror_state), "
			     "(SELECT max(" GENERATION("generation") ") + 1 FROM pgmirror_tables), "
			     "1)", "", out);
}

bool mirror_table_generation(Mirror *m, const char *table, int64_t *out)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT generation FROM pgmirror_tables "
					 "WHERE table_name = ?1", false);
	int rc;
	bool ok;

	*out = 0;
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	ok = rc == SQLITE_ROW && mirror_own_int(m, q, 0, "pgmirror_tables.generation", out);
	if (rc != SQLITE_ROW)
		errbuf_set(&m->err, "could not read the generation of table \"%s\": %s", table,
			   rc == SQLITE_DONE ? "it is not in pgmirror_tables" : sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return ok;
}

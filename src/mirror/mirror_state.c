/*
 * mirror_state.c: pgmirror_state's one row as a run knows it: the
 * mirror's identity (slot, publications, the source's system identifier
 * and database), the confirmed position with its commit time, written in
 * the same transaction as the changes it covers, and whether the initial
 * copy is done. The health columns of the same row are mirror_health.c's.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

void mirror_state_clear(MirrorState *st)
{
	free(st->slot);
	free(st->publications);
	free(st->system_identifier);
	free(st->database);
	free(st->last_commit_time);
	memset(st, 0, sizeof(*st));
}

bool mirror_read_state(Mirror *m, MirrorState *st)
{
	sqlite3_stmt *q;
	int rc;
	bool ok = false;

	memset(st, 0, sizeof(*st));
	q = mirror_prepare(m,
		"SELECT slot, publications, system_identifier, database, "
		"confirmed_lsn, last_commit_time, initial_copy_done "
		"FROM pgmirror_state WHERE id = 1", false);
	if (q == NULL)
		return false;
	rc = sqlite3_step(q);
	if (rc == SQLITE_DONE) {
		ok = true;
		goto done;
	}
	if (rc != SQLITE_ROW) {
		errbuf_set(&m->err, "could not read pgmirror_state from \"%s\": %s",
			  m->path, sqlite3_errmsg(m->db));
		goto done;
	}
	st->present = true;
	/* a damaged row is damage: a run heals it (with -S and -P) */
	if (!mirror_own_text(m, q, 0, "pgmirror_state.slot", &st->slot) ||
	    !mirror_own_text(m, q, 1, "pgmirror_state.publications", &st->publications) ||
	    !mirror_own_text(m, q, 2, "pgmirror_state.system_identifier",
			     &st->system_identifier) ||
	    !mirror_own_text(m, q, 3, "pgmirror_state.database", &st->database) ||
	    !mirror_own_lsn(m, q, 4, "pgmirror_state.confirmed_lsn", &st->confirmed_lsn)) {
		mirror_state_clear(st);
		goto done;
	}
	st->last_commit_time = mirror_column_dup(q, 5);
	st->initial_copy_done = sqlite3_column_int(q, 6) != 0;
	ok = true;
done:
	sqlite3_finalize(q);
	return ok;
}

bool mirror_write_state(Mirror *m, const MirrorState *st)
{
	char lsn[LSN_TEXT_SIZE];

	return mirror_exec_owned(m, sqlite3_mprintf(
		/* an upsert: the health columns stay as they are */
		"INSERT INTO pgmirror_state (id, slot, publications, "
		"system_identifier, database, confirmed_lsn, last_commit_time, "
		"initial_copy_done, format_version) VALUES (1, %Q, %Q, %Q, %Q, %Q, %Q, %d, %d) "
		"ON CONFLICT (id) DO UPDATE SET slot = excluded.slot, "
		"publications = excluded.publications, "
		"system_identifier = excluded.system_identifier, database = excluded.database, "
		"confirmed_lsn = excluded.confirmed_lsn, last_commit_time = excluded.last_commit_time, "
		"initial_copy_done = excluded.initial_copy_done, "
		"format_version = excluded.format_version",
		st->slot, st->publications, st->system_identifier, st->database,
		lsn_format(st->confirmed_lsn, lsn), st->last_commit_time,
		st->initial_copy_done ? 1 : 0, MIRROR_FORMAT_VERSION));
}

bool mirror_set_position(Mirror *m, Lsn lsn, const char *commit_time)
{
	char text[LSN_TEXT_SIZE];

	lsn_format(lsn, text);
	sqlite3_bind_text(m->set_pos, 1, text, -1, SQLITE_TRANSIENT);
	if (commit_time != NULL)
		sqlite3_bind_text(m->set_pos, 2, commit_time, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(m->set_pos, 2);
	return mirror_step_done(m, m->set_pos, "store the confirmed position");
}

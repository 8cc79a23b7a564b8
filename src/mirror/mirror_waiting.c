/*
 * mirror_waiting.c: pgmirror_waiting, the published tables that wait (see
 * mirror_waiting.h). The run decides which tables wait (src/run/waiting.c);
 * this file only keeps the rows (every source string quoted with %Q).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/mirror_waiting.h"

void mirror_waiting_free(MirrorWaiting *w, int n)
{
	for (int i = 0; i < n; i++) {
		free(w[i].source_schema);
		free(w[i].source_table);
		free(w[i].reason);
		free(w[i].since);
	}
	free(w);
}

/* Every row q (bound) yields into *out; q is finalized. */
static bool read_rows(Mirror *m, sqlite3_stmt *q, MirrorWaiting **out, int *n)
{
	int rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		MirrorWaiting *w;
		int64_t oid;

		*out = xreallocarray(*out, (size_t)*n + 1, sizeof(MirrorWaiting));
		w = memset(&(*out)[(*n)++], 0, sizeof(MirrorWaiting));
		if (!mirror_own_int(m, q, 0, "pgmirror_waiting.relation_oid", &oid) ||
		    !mirror_own_text(m, q, 1, "pgmirror_waiting.source_schema", &w->source_schema) ||
		    !mirror_own_text(m, q, 2, "pgmirror_waiting.source_table", &w->source_table) ||
		    !mirror_own_text(m, q, 3, "pgmirror_waiting.reason", &w->reason) ||
		    !mirror_own_text(m, q, 4, "pgmirror_waiting.since", &w->since))
			break; /* damaged: the error is set */
		w->relation_oid = (uint32_t)oid;
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return true;
	if (rc != SQLITE_ROW)
		errbuf_set(&m->err, "could not read pgmirror_waiting of mirror \"%s\": %s",
			   m->path, sqlite3_errmsg(m->db));
	mirror_waiting_free(*out, *n);
	*out = NULL;
	*n = 0;
	return false;
}

#define WAITING_COLUMNS "SELECT relation_oid, source_schema, source_table, reason, since " \
			"FROM pgmirror_waiting "

bool mirror_waiting_list(Mirror *m, MirrorWaiting **out, int *n)
{
	sqlite3_stmt *q;
	bool has;

	*out = NULL;
	*n = 0;
	if (!mirror_has_own_table(m, "pgmirror_waiting", &has))
		return false;
	if (!has)
		return true;
	q = mirror_prepare(m, WAITING_COLUMNS "ORDER BY source_schema, source_table, "
			   "relation_oid", false);
	return q != NULL && read_rows(m, q, out, n);
}

/* The row of oid into *w (*found false: none). */
static bool read_one(Mirror *m, uint32_t oid, bool *found, MirrorWaiting **w)
{
	sqlite3_stmt *q = mirror_prepare(m, WAITING_COLUMNS "WHERE relation_oid = ?1", false);
	int n = 0;

	*w = NULL;
	*found = false;
	if (q == NULL)
		return false;
	sqlite3_bind_int64(q, 1, oid);
	if (!read_rows(m, q, w, &n))
		return false;
	*found = n > 0;
	return true;
}

bool mirror_waiting_has(Mirror *m, uint32_t oid, bool *waiting)
{
	MirrorWaiting *w;
	bool ok = read_one(m, oid, waiting, &w);

	mirror_waiting_free(w, *waiting ? 1 : 0);
	return ok;
}

bool mirror_waiting_same(Mirror *m, uint32_t oid, const char *schema, const char *table,
			 const char *reason, bool *same)
{
	MirrorWaiting *w;
	char *clean;
	bool found;

	*same = false;
	if (!read_one(m, oid, &found, &w))
		return false;
	clean = log_clean(reason); /* as stored */
	*same = found && strcmp(w->source_schema, schema) == 0 &&
		strcmp(w->source_table, table) == 0 && strcmp(w->reason, clean) == 0;
	free(clean);
	mirror_waiting_free(w, found ? 1 : 0);
	return true;
}

bool mirror_waiting_set(Mirror *m, uint32_t oid, const char *schema, const char *table,
			const char *reason, bool *news)
{
	MirrorWaiting *w;
	/* one line, no secret: what --status shows (a server's message may
	 * hold line breaks) */
	char *clean, now[40];
	bool found, same, ok;

	if (!read_one(m, oid, &found, &w))
		return false;
	clean = log_clean(reason);
	same = found && strcmp(w->reason, clean) == 0;
	mirror_waiting_free(w, found ? 1 : 0);
	if (news != NULL)
		*news = !same;
	pgtime_format_utc(pgtime_now(), now, sizeof(now));
	/* (in the upsert's SET, a bare column is the row's old value) */
	ok = mirror_exec_owned(m, sqlite3_mprintf(
		"INSERT INTO pgmirror_waiting (relation_oid, source_schema, source_table, reason, "
		"since) VALUES (%u, %Q, %Q, %Q, %Q) ON CONFLICT (relation_oid) DO UPDATE SET "
		"source_schema = excluded.source_schema, source_table = excluded.source_table, "
		"reason = excluded.reason, copy_shape = CASE WHEN reason = excluded.reason THEN "
		"copy_shape END", oid, schema, table, clean, now));
	free(clean);
	return ok;
}

bool mirror_waiting_set_copy(Mirror *m, uint32_t oid, const char *schema, const char *table,
			     const char *reason, const MirrorWaitCopy *c, bool *news)
{
	char lsn[LSN_TEXT_SIZE];

	return mirror_waiting_set(m, oid, schema, table, reason, news) &&
	       mirror_exec_owned(m, sqlite3_mprintf(
		       "UPDATE pgmirror_waiting SET copy_shape = %Q, copy_lsn = %Q, copy_changed = 0, "
		       "copy_tries = %d, copy_retry = %Q WHERE relation_oid = %u", c->shape,
		       lsn_format(c->lsn, lsn), c->tries, c->retry, oid));
}

void mirror_wait_copy_clear(MirrorWaitCopy *c)
{
	free(c->shape);
	free(c->retry);
	memset(c, 0, sizeof(*c));
}

bool mirror_waiting_copy(Mirror *m, uint32_t oid, bool *waiting, MirrorWaitCopy *c)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT copy_shape, copy_lsn, copy_changed, "
					 "copy_tries, copy_retry FROM pgmirror_waiting WHERE "
					 "relation_oid = ?1", false);
	const char *lsn;
	int rc;

	memset(c, 0, sizeof(*c));
	*waiting = false;
	if (q == NULL)
		return false;
	sqlite3_bind_int64(q, 1, oid);
	rc = sqlite3_step(q);
	*waiting = rc == SQLITE_ROW;
	lsn = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 1) : NULL;
	/* a shape without a position (a damaged row) is no copy to go by */
	if (rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL && lsn != NULL &&
	    lsn_parse(lsn, &c->lsn)) {
		c->shape = mirror_column_dup(q, 0);
		c->changed = sqlite3_column_int(q, 2) != 0;
		c->tries = sqlite3_column_int(q, 3);
		c->retry = mirror_column_dup(q, 4);
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		errbuf_set(&m->err, "could not read pgmirror_waiting of mirror \"%s\": %s", m->path,
			   sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

bool mirror_waiting_note_change(Mirror *m, uint32_t oid)
{
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_waiting SET copy_changed = 1 WHERE relation_oid = %u AND "
		"copy_shape IS NOT NULL AND copy_changed = 0", oid));
}

bool mirror_waiting_remove(Mirror *m, uint32_t oid)
{
	return mirror_exec_owned(m, sqlite3_mprintf(
		"DELETE FROM pgmirror_waiting WHERE relation_oid = %u", oid));
}

bool mirror_has_own_table(Mirror *m, const char *name, bool *has)
{
	int64_t n = 0;

	*has = false;
	if (!mirror_scalar(m, "SELECT count(*) FROM sqlite_master WHERE name = %Q", name, &n))
		return false;
	*has = n > 0;
	return true;
}

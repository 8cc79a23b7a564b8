/*
 * mirror_sync.c: the tables' sync LSNs (pgmirror_tables.sync_lsn: the
 * snapshot a table's rows came from) and publication definitions
 * (pgmirror_tables.definition: what made them; mirror_names.c reads both
 * with the rest of a table's row), the publications' fingerprint and the
 * columns a table records (what a check compares with the source), and
 * the upgrade of an older mirror file's own tables to this format.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/copy_ranges.h"

/* the columns that newer formats added to pgmirror's own tables */
static const struct {
	const char *table, *column, *decl;
} added_columns[] = {
	/* format 2 (a mirror of format 1: every table applies every change) */
	{ "pgmirror_tables", "sync_lsn", "TEXT" },
	/* format 3 */
	{ "pgmirror_tables", "generation", "INTEGER NOT NULL DEFAULT 1" },
	{ "pgmirror_tables", "definition", "TEXT" },
	{ "pgmirror_state", "last_sync_time", "TEXT" },
	{ "pgmirror_state", "last_sync_lag_bytes", "INTEGER" },
	{ "pgmirror_state", "last_sync_lag_seconds", "REAL" },
	{ "pgmirror_state", "last_check_time", "TEXT" },
	{ "pgmirror_state", "last_check_result", "TEXT" },
	{ "pgmirror_state", "last_rebuild_time", "TEXT" },
	{ "pgmirror_state", "last_rebuild_reason", "TEXT" },
	{ "pgmirror_state", "last_error", "TEXT" },
	{ "pgmirror_state", "last_error_time", "TEXT" },
	{ "pgmirror_state", "last_generation", "INTEGER NOT NULL DEFAULT 1" },
	/* format 4 */
	{ "pgmirror_tables", "copy_state", "TEXT" },
	{ "pgmirror_tables", "copy_rows", "INTEGER NOT NULL DEFAULT 0" },
	{ "pgmirror_tables", "copy_estimate", "INTEGER" },
	{ "pgmirror_state", "publication_fingerprint", "TEXT" },
	/* format 5 (with pgmirror_feed, which the schema makes) */
	{ "pgmirror_waiting", "copy_shape", "TEXT" },
	{ "pgmirror_waiting", "copy_lsn", "TEXT" },
	{ "pgmirror_waiting", "copy_changed", "INTEGER NOT NULL DEFAULT 0" },
	{ "pgmirror_waiting", "copy_tries", "INTEGER NOT NULL DEFAULT 0" },
	{ "pgmirror_waiting", "copy_retry", "TEXT" },
};

bool mirror_upgrade(Mirror *m)
{
	for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
		/* the table is a constant; the column goes in as mirror_scalar()'s argument */
		char *fmt = sqlite3_mprintf("SELECT count(*) FROM pragma_table_info(%Q) "
					    "WHERE name = %%Q", added_columns[i].table);
		int64_t has = 0;
		bool ok;

		if (fmt == NULL)
			return false;
		ok = mirror_scalar(m, fmt, added_columns[i].column, &has);
		sqlite3_free(fmt);
		if (!ok)
			return false;
		if (has == 0 && !mirror_exec_owned(m, sqlite3_mprintf(
				"ALTER TABLE \"%w\" ADD COLUMN \"%w\" %s", added_columns[i].table,
				added_columns[i].column, added_columns[i].decl)))
			return false;
	}
	/* an older pgmirror would misread what a newer one wrote */
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_state SET format_version = %d WHERE format_version < %d",
		MIRROR_FORMAT_VERSION, MIRROR_FORMAT_VERSION));
}

bool mirror_set_definition(Mirror *m, uint32_t oid, const char *definition)
{
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_tables SET definition = %Q WHERE relation_oid = %u", definition,
		oid));
}

bool mirror_set_sync_lsn(Mirror *m, uint32_t oid, Lsn lsn)
{
	char text[LSN_TEXT_SIZE];

	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_tables SET sync_lsn = %Q WHERE relation_oid = %u",
		lsn == LSN_INVALID ? NULL : lsn_format(lsn, text), oid));
}

bool mirror_set_copy_state(Mirror *m, uint32_t oid, const char *state, int64_t rows,
			   int64_t estimate)
{
	char est[32] = "NULL";

	if (estimate >= 0)
		snprintf(est, sizeof(est), "%lld", (long long)estimate);
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_tables SET copy_state = %Q, copy_rows = %lld, copy_estimate = "
		"%s WHERE relation_oid = %u", state, (long long)rows, est, oid));
}

/* Sets *any when a table's copy in parts has not reached its end (its
 * copy_state parsed: copy_ranges.h). */
static bool any_copy_unfinished(Mirror *m, bool *any)
{
	sqlite3_stmt *q = mirror_prepare(
		m, "SELECT copy_state FROM pgmirror_tables WHERE copy_state IS NOT NULL", false);
	int rc;

	*any = false;
	if (q == NULL)
		return false;
	while (!*any && (rc = sqlite3_step(q)) == SQLITE_ROW)
		*any = copy_state_unfinished((const char *)sqlite3_column_text(q, 0));
	if (*any)
		rc = SQLITE_DONE;
	if (rc != SQLITE_DONE)
		errbuf_set(&m->err, "could not read the copies of mirror \"%s\": %s", m->path,
			   sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return rc == SQLITE_DONE;
}

bool mirror_publication_fingerprint(Mirror *m, char **out)
{
	sqlite3_stmt *q = mirror_prepare(
		m, "SELECT publication_fingerprint FROM pgmirror_state WHERE id = 1 AND NOT EXISTS "
		   "(SELECT 1 FROM pgmirror_tables WHERE definition IS NULL) AND NOT EXISTS "
		   "(SELECT 1 FROM pgmirror_waiting) AND NOT EXISTS (SELECT 1 FROM pgmirror_staged)",
		false);
	bool unfinished = false, ok;
	int rc;

	*out = NULL;
	if (q == NULL)
		return false;
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
		*out = xstrdup((const char *)sqlite3_column_text(q, 0));
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		errbuf_set(&m->err, "could not read the publications' fingerprint: %s",
			  sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return false;
	if (*out == NULL)
		return true;
	/* a copy that goes on is looked at by the check: no fingerprint */
	ok = any_copy_unfinished(m, &unfinished);
	if (!ok || unfinished) {
		free(*out);
		*out = NULL;
	}
	return ok;
}

bool mirror_set_publication_fingerprint(Mirror *m, const char *hash)
{
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_state SET publication_fingerprint = %Q WHERE id = 1 AND "
		"publication_fingerprint IS NOT %Q", hash, hash)); /* the same: nothing written */
}

void mirror_table_columns_free(MirrorColumnDef *cols, int n)
{
	for (int i = 0; i < n; i++)
		free((char *)cols[i].name);
	free(cols);
}

bool mirror_table_columns(Mirror *m, const char *table, MirrorColumnDef **cols, int *n)
{
	sqlite3_stmt *q = mirror_prepare(
		m, "SELECT column_name, type_oid, type_modifier, source_attnum, is_key "
		   "FROM pgmirror_columns WHERE table_name = ?1 ORDER BY position", false);
	int rc;

	*cols = NULL;
	*n = 0;
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		MirrorColumnDef *c;
		char *name;
		int64_t oid, mod, attnum, key;

		*cols = xreallocarray(*cols, (size_t)*n + 1, sizeof(MirrorColumnDef));
		c = memset(&(*cols)[(*n)++], 0, sizeof(MirrorColumnDef));
		if (!mirror_own_text(m, q, 0, "pgmirror_columns.column_name", &name) ||
		    !mirror_own_int(m, q, 1, "pgmirror_columns.type_oid", &oid) ||
		    !mirror_own_int(m, q, 2, "pgmirror_columns.type_modifier", &mod) ||
		    !mirror_own_int(m, q, 3, "pgmirror_columns.source_attnum", &attnum) ||
		    !mirror_own_int(m, q, 4, "pgmirror_columns.is_key", &key)) {
			c->name = name;
			break; /* damaged: the error is set */
		}
		/* each within its type's range (mirror_own.c's rules) */
		c->name = name;
		c->type_oid = (uint32_t)oid;
		c->type_mod = (int32_t)mod;
		c->attnum = (int)attnum;
		c->is_key = key != 0;
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return true;
	if (rc != SQLITE_ROW)
		errbuf_set(&m->err, "could not read the columns of mirror table \"%s\": %s",
			   table, sqlite3_errmsg(m->db));
	mirror_table_columns_free(*cols, *n);
	*cols = NULL;
	*n = 0;
	return false;
}

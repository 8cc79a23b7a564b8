/*
 * mirror_sync.c: the tables' sync LSNs (pgmirror_tables.sync_lsn: the
 * snapshot a table's rows came from) and publication definitions
 * (pgmirror_tables.definition: what made them; mirror_names.c reads both
 * with the rest of a table's row), and the upgrade of an older mirror file's own
 * tables to this format.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

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

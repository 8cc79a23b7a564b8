/*
 * mirror_sync.c: the tables' sync LSNs (pgmirror_tables.sync_lsn: the
 * snapshot a table's rows came from; mirror_names.c reads them with the
 * rest of a table's row), and the upgrade of an older mirror file's own
 * tables to this format.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

bool mirror_upgrade(Mirror *m)
{
	int64_t has = 0;

	if (!mirror_scalar(m, "SELECT count(*) FROM pragma_table_info('%w') "
			   "WHERE name = 'sync_lsn'", "pgmirror_tables", &has))
		return false;
	/* a mirror of format 1: every table applies every change (NULL) */
	if (has == 0 && !mirror_exec(m, "ALTER TABLE pgmirror_tables ADD COLUMN sync_lsn TEXT"))
		return false;
	/* an older pgmirror would apply changes a sync already holds */
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_state SET format_version = %d WHERE format_version < %d",
		MIRROR_FORMAT_VERSION, MIRROR_FORMAT_VERSION));
}

bool mirror_set_sync_lsn(Mirror *m, uint32_t oid, Lsn lsn)
{
	char text[LSN_TEXT_SIZE];

	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_tables SET sync_lsn = %Q WHERE relation_oid = %u",
		lsn == LSN_INVALID ? NULL : lsn_format(lsn, text), oid));
}

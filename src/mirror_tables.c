/*
 * mirror_tables.c: the mirror's list of tables (pgmirror_tables) as the
 * table sync sees it: which source relation each table stands for, its
 * sync LSN (the snapshot its rows came from), dropping one table, and the
 * upgrade of an older mirror file's own tables.
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

static bool parse_sync_lsn(Mirror *m, sqlite3_stmt *q, int col, const char *table, Lsn *out)
{
	const unsigned char *t = sqlite3_column_text(q, col);

	*out = LSN_INVALID;
	if (t == NULL)
		return true;
	if (lsn_parse((const char *)t, out))
		return true;
	errbuf_set(&m->err, "mirror \"%s\" has a damaged sync_lsn \"%s\" for table \"%s\" in "
		  "pgmirror_tables; resync it (--resync=%s) or start a new mirror", m->path,
		  (const char *)t, table, table);
	return false;
}

void mirror_table_infos_free(MirrorTableInfo *t, int n)
{
	for (int i = 0; i < n; i++) {
		free(t[i].name);
		free(t[i].source_schema);
		free(t[i].source_table);
	}
	free(t);
}

static char *text_dup(sqlite3_stmt *q, int col)
{
	const unsigned char *t = sqlite3_column_text(q, col);

	return xstrdup(t != NULL ? (const char *)t : "");
}

bool mirror_table_infos(Mirror *m, MirrorTableInfo **out, int *n)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT table_name, source_schema, source_table, "
					 "relation_oid, sync_lsn FROM pgmirror_tables ORDER BY 1",
					 false);
	MirrorTableInfo *t = NULL;
	int rc, count = 0;
	bool ok = false;

	*out = NULL;
	*n = 0;
	if (q == NULL)
		return false;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		MirrorTableInfo *e;

		t = xreallocarray(t, (size_t)count + 1, sizeof(*t));
		e = &t[count++];
		e->name = text_dup(q, 0);
		e->source_schema = text_dup(q, 1);
		e->source_table = text_dup(q, 2);
		e->relation_oid = (uint32_t)sqlite3_column_int64(q, 3);
		if (!parse_sync_lsn(m, q, 4, e->name, &e->sync_lsn))
			goto done;
	}
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read pgmirror_tables: %s", sqlite3_errmsg(m->db));
		goto done;
	}
	ok = true;
done:
	sqlite3_finalize(q);
	if (!ok) {
		mirror_table_infos_free(t, count);
		return false;
	}
	*out = t;
	*n = count;
	return true;
}

bool mirror_table_by_oid(Mirror *m, uint32_t oid, bool *found, Lsn *sync_lsn)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT table_name, sync_lsn FROM pgmirror_tables "
					 "WHERE relation_oid = ?1", false);
	int rc;
	bool ok = false;

	*found = false;
	*sync_lsn = LSN_INVALID;
	if (q == NULL)
		return false;
	sqlite3_bind_int64(q, 1, oid);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		*found = true;
		ok = parse_sync_lsn(m, q, 1, (const char *)sqlite3_column_text(q, 0), sync_lsn);
	} else if (rc == SQLITE_DONE)
		ok = true;
	else
		errbuf_set(&m->err, "could not read pgmirror_tables: %s", sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return ok;
}

bool mirror_set_sync_lsn(Mirror *m, uint32_t oid, Lsn lsn)
{
	char text[LSN_TEXT_SIZE];

	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_tables SET sync_lsn = %Q WHERE relation_oid = %u",
		lsn == LSN_INVALID ? NULL : lsn_format(lsn, text), oid));
}

bool mirror_drop_table(Mirror *m, const char *name)
{
	return mirror_exec_owned(m, sqlite3_mprintf(
		"DROP TABLE IF EXISTS \"%w\"; DELETE FROM pgmirror_columns WHERE table_name = %Q; "
		"DELETE FROM pgmirror_tables WHERE table_name = %Q", name, name, name));
}

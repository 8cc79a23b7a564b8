/*
 * mirror_names.c: which source relation each mirror table stands for, and
 * renaming mirror tables when their source tables are renamed or moved to
 * another schema. A mirror table is known by its source relation's OID
 * (pgmirror_tables.relation_oid); its name only follows.
 *
 * A rename is SQLite's ALTER TABLE ... RENAME TO, which keeps the rows,
 * the indexes and the triggers of the table, and (legacy_alter_table off,
 * set by mirror_open) rewrites the user's views and triggers that name it.
 * A set of renames goes through temporary names first (pgmirror_renaming_
 * and the OID: reserved, so no source table has it, and never left behind
 * since both passes run in the caller's transaction), so that names may
 * move around among the tables of the set, as in a swap.
 *
 * Every identifier that comes from the source is quoted with "%w" or
 * bound; no source string is spliced into SQL otherwise.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

void mirror_table_info_clear(MirrorTableInfo *t)
{
	free(t->name);
	free(t->source_schema);
	free(t->source_table);
	free(t->definition);
	free(t->copy_state);
	memset(t, 0, sizeof(*t));
}

void mirror_table_infos_free(MirrorTableInfo *t, int n)
{
	for (int i = 0; i < n; i++)
		mirror_table_info_clear(&t[i]);
	free(t);
}

static char *text_dup(sqlite3_stmt *q, int col)
{
	const unsigned char *t = sqlite3_column_text(q, col);

	return xstrdup(t ? (const char *)t : "");
}

/* One row of pgmirror_tables (INFO_COLUMNS) into t; false with the
 * damage set and noted when it is not what pgmirror writes. */
static bool read_info(Mirror *m, sqlite3_stmt *q, MirrorTableInfo *t)
{
	int64_t oid;
	char *ri = NULL;

	memset(t, 0, sizeof(*t));
	if (!mirror_own_text(m, q, 0, "pgmirror_tables.table_name", &t->name) ||
	    !mirror_own_text(m, q, 1, "pgmirror_tables.source_schema", &t->source_schema) ||
	    !mirror_own_text(m, q, 2, "pgmirror_tables.source_table", &t->source_table) ||
	    !mirror_own_int(m, q, 3, "pgmirror_tables.relation_oid", &oid) ||
	    !mirror_own_lsn(m, q, 4, "pgmirror_tables.sync_lsn", &t->sync_lsn) ||
	    !mirror_own_int(m, q, 7, "pgmirror_tables.copy_rows", &t->copy_rows) ||
	    !mirror_own_int(m, q, 8, "pgmirror_tables.copy_estimate", &t->copy_estimate) ||
	    !mirror_own_text(m, q, 9, "pgmirror_tables.replica_identity", &ri))
		return false;
	t->relation_oid = (uint32_t)oid;
	t->replident = ri[0]; /* one of d, n, f, i (mirror_own.c) */
	free(ri);
	if (t->copy_estimate < 0)
		t->copy_estimate = -1; /* not known */
	/* what the publications publish, compared with what they publish now
	 * (a difference copies the table again), and the copy's ranges, which
	 * copy_ranges_parse() reads as untrusted */
	t->definition = mirror_column_dup(q, 5);
	t->copy_state = mirror_column_dup(q, 6);
	return true;
}

/* Every row of pgmirror_tables that q (bound) yields, into *out. */
static bool read_infos(Mirror *m, sqlite3_stmt *q, MirrorTableInfo **out, int *n)
{
	int rc;
	bool damaged = false;

	*out = NULL;
	*n = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		*out = xreallocarray(*out, (size_t)*n + 1, sizeof(MirrorTableInfo));
		if (!read_info(m, q, &(*out)[(*n)++])) {
			damaged = true;
			break;
		}
	}
	sqlite3_finalize(q);
	if (damaged || rc != SQLITE_DONE) {
		if (!damaged)
			errbuf_set(&m->err, "could not read pgmirror_tables of mirror \"%s\": %s",
				  m->path, sqlite3_errmsg(m->db));
		mirror_table_infos_free(*out, *n);
		*out = NULL;
		*n = 0;
		return false;
	}
	return true;
}

#define INFO_COLUMNS "SELECT table_name, source_schema, source_table, relation_oid, " \
		     "sync_lsn, definition, copy_state, copy_rows, copy_estimate, " \
		     "replica_identity " \
		     "FROM pgmirror_tables "

bool mirror_table_infos(Mirror *m, MirrorTableInfo **out, int *n)
{
	sqlite3_stmt *q = mirror_prepare(m, INFO_COLUMNS "ORDER BY table_name", false);

	*out = NULL;
	*n = 0;
	return q != NULL && read_infos(m, q, out, n);
}

/* The one row that q (bound) yields, or *found false. */
static bool read_one(Mirror *m, sqlite3_stmt *q, bool *found, MirrorTableInfo *out)
{
	MirrorTableInfo *all;
	int n;

	*found = false;
	memset(out, 0, sizeof(*out));
	if (!read_infos(m, q, &all, &n))
		return false;
	if (n > 0) {
		*found = true;
		*out = all[0];
		memset(&all[0], 0, sizeof(all[0]));
	}
	mirror_table_infos_free(all, n);
	return true;
}

bool mirror_table_by_oid(Mirror *m, uint32_t oid, bool *found, MirrorTableInfo *out)
{
	sqlite3_stmt *q = mirror_prepare(m, INFO_COLUMNS "WHERE relation_oid = ?1", false);

	*found = false;
	memset(out, 0, sizeof(*out));
	if (q == NULL)
		return false;
	sqlite3_bind_int64(q, 1, oid);
	return read_one(m, q, found, out);
}

bool mirror_table_by_name(Mirror *m, const char *name, bool *found, MirrorTableInfo *out)
{
	/* SQLite does not tell names apart by (ASCII) case: neither may we */
	sqlite3_stmt *q = mirror_prepare(m, INFO_COLUMNS "WHERE table_name = ?1 COLLATE NOCASE",
					 false);

	*found = false;
	memset(out, 0, sizeof(*out));
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
	return read_one(m, q, found, out);
}

/* Renames table from to to, with its rows in pgmirror_tables and
 * pgmirror_columns (source names NULL: kept). */
static bool rename_one(Mirror *m, uint32_t oid, const char *from, const char *to,
		       const char *schema, const char *table)
{
	if (!mirror_exec_owned(m, sqlite3_mprintf("ALTER TABLE \"%w\" RENAME TO \"%w\"", from, to)) ||
	    !mirror_exec_owned(m, sqlite3_mprintf(
		    "UPDATE pgmirror_columns SET table_name = %Q WHERE table_name = %Q", to, from)))
		return false;
	if (schema == NULL)
		return mirror_exec_owned(m, sqlite3_mprintf(
			"UPDATE pgmirror_tables SET table_name = %Q WHERE relation_oid = %u", to, oid));
	return mirror_exec_owned(m, sqlite3_mprintf(
		"UPDATE pgmirror_tables SET table_name = %Q, source_schema = %Q, source_table = %Q "
		"WHERE relation_oid = %u", to, schema, table, oid));
}

/* What besides a mirror table holds name in the file (a table, view or
 * index of the user's: triggers have names of their own), as its type;
 * NULL when nothing. */
static bool other_holder(Mirror *m, const char *name, char **type)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT type FROM sqlite_master WHERE name = ?1 "
				      "COLLATE NOCASE AND type <> 'trigger'", false);
	int rc;

	*type = NULL;
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		*type = text_dup(q, 0);
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read the schema of mirror \"%s\": %s", m->path,
			  sqlite3_errmsg(m->db));
		return false;
	}
	return true;
}

bool mirror_tables_rename(Mirror *m, const MirrorRename *rn, int n)
{
	MirrorTableInfo *cur = xcalloc((size_t)n + 1, sizeof(MirrorTableInfo));
	bool ok = true;

	for (int i = 0; ok && i < n; i++) {
		bool found;

		ok = mirror_table_by_oid(m, rn[i].relation_oid, &found, &cur[i]);
		if (ok && !found) {
			errbuf_set(&m->err, "mirror \"%s\" has no table of source relation OID %u to "
				  "rename", m->path, rn[i].relation_oid);
			ok = false;
		}
	}
	/* first out of the way, then each to its name */
	for (int i = 0; ok && i < n; i++) {
		char tmp[48];

		snprintf(tmp, sizeof(tmp), "pgmirror_renaming_%u", rn[i].relation_oid);
		ok = rename_one(m, rn[i].relation_oid, cur[i].name, tmp, NULL, NULL);
	}
	for (int i = 0; ok && i < n; i++) {
		char tmp[48], *type = NULL;
		MirrorTableInfo holder = {0};
		bool held;

		snprintf(tmp, sizeof(tmp), "pgmirror_renaming_%u", rn[i].relation_oid);
		ok = mirror_table_by_name(m, rn[i].name, &held, &holder);
		if (ok && held) {
			errbuf_set(&m->err, "cannot rename mirror table \"%s\" to \"%s\": mirror table "
				  "\"%s\" (of source table \"%s\".\"%s\") has that name", cur[i].name,
				  rn[i].name, holder.name, holder.source_schema, holder.source_table);
			ok = false;
		}
		ok = ok && other_holder(m, rn[i].name, &type);
		if (ok && type != NULL) {
			errbuf_set(&m->err, "cannot rename mirror table \"%s\" to \"%s\", the new name of "
				  "its source table: the mirror file has a %s of that name, which is "
				  "not pgmirror's; rename or drop it", cur[i].name, rn[i].name, type);
			ok = false;
		}
		free(type);
		mirror_table_info_clear(&holder);
		ok = ok && rename_one(m, rn[i].relation_oid, tmp, rn[i].name, rn[i].source_schema,
				      rn[i].source_table);
	}
	mirror_table_infos_free(cur, n);
	return ok;
}

/*
 * The user's objects are set aside over the drop and made again at once:
 * those on the table, or naming it, go with it (a warning for each), and
 * none is left naming a table that is not there, which would make SQLite
 * refuse every later rename.
 */
bool mirror_table_drop(Mirror *m, uint32_t oid)
{
	MirrorTableInfo t;
	MirrorUserObjects *u = NULL;
	char **dropped = NULL;
	int ndropped = 0;
	bool found, ok;

	if (!mirror_table_by_oid(m, oid, &found, &t))
		return false;
	ok = !found ||
	     (mirror_user_objects_save(m, (const char *const *)&t.name, 1, &u) &&
	      mirror_exec_owned(m, sqlite3_mprintf(
		      "DROP TABLE IF EXISTS \"%w\"; DELETE FROM pgmirror_columns WHERE table_name = "
		      "%Q; DELETE FROM pgmirror_tables WHERE relation_oid = %u", t.name, t.name,
		      oid)) &&
	      mirror_user_objects_restore(m, u, &dropped, &ndropped));
	for (int i = 0; ok && i < ndropped; i++)
		log_warning("dropped the user's %s from the mirror: it no longer applies after "
			    "mirror table \"%s\" was removed", dropped[i], t.name);
	strv_free(dropped, ndropped);
	mirror_user_objects_free(u);
	mirror_table_info_clear(&t);
	return ok;
}

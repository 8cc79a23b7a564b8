/*
 * mirror_stage.c: mirror tables copied again behind the readers' backs
 * (see mirror_stage.h): the old table set aside under its own name
 * (pgmirror_staged), the new copy in pgmirror_stage_OID, and the swap.
 * Every name is quoted with "%w" or %Q.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/copy_ranges.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/naming.h"

const char *mirror_stage_name(uint32_t oid, char *buf)
{
	snprintf(buf, 32, MIRROR_STAGE_PREFIX "%u", oid);
	return buf;
}

bool mirror_stage_is_name(const char *name)
{
	return strncmp(name, MIRROR_STAGE_PREFIX, strlen(MIRROR_STAGE_PREFIX)) == 0;
}

bool mirror_stage_begin(Mirror *m, uint32_t oid)
{
	MirrorTableInfo t;
	bool found, ok;

	if (!mirror_table_by_oid(m, oid, &found, &t))
		return false;
	/* the old table keeps its rows, its indexes and the user's objects;
	 * pgmirror forgets it until the swap */
	ok = !found || mirror_stage_is_name(t.name) ||
	     mirror_exec_owned(m, sqlite3_mprintf(
		     "INSERT OR REPLACE INTO pgmirror_staged VALUES (%u, %Q); DELETE FROM "
		     "pgmirror_columns WHERE table_name = %Q; DELETE FROM pgmirror_tables WHERE "
		     "relation_oid = %u", oid, t.name, t.name, oid));
	mirror_table_info_clear(&t);
	return ok;
}

bool mirror_stage_all(Mirror *m)
{
	MirrorTableInfo *t = NULL;
	int n = 0;
	bool ok;

	if (!mirror_table_infos(m, &t, &n))
		return false;
	ok = true;
	for (int i = 0; ok && i < n; i++)
		ok = mirror_stage_is_name(t[i].name) ? mirror_table_drop(m, t[i].relation_oid)
		     : mirror_stage_begin(m, t[i].relation_oid);
	mirror_table_infos_free(t, n);
	return ok;
}

void mirror_stage_list_free(MirrorStaged *s, int n)
{
	for (int i = 0; i < n; i++) {
		free(s[i].old_name);
		free(s[i].staged);
	}
	free(s);
}

bool mirror_stage_list(Mirror *m, MirrorStaged **out, int *n)
{
	sqlite3_stmt *q;
	bool has;
	int rc;

	*out = NULL;
	*n = 0;
	if (!mirror_has_own_table(m, "pgmirror_staged", &has))
		return false;
	if (!has)
		return true;
	q = mirror_prepare(
		m, "SELECT s.relation_oid, s.old_name, t.table_name, t.copy_state FROM "
		   "pgmirror_staged s LEFT JOIN pgmirror_tables t ON t.relation_oid = "
		   "s.relation_oid ORDER BY s.old_name", false);
	if (q == NULL)
		return false;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		MirrorStaged *s;
		int64_t oid;

		*out = xreallocarray(*out, (size_t)*n + 1, sizeof(MirrorStaged));
		s = memset(&(*out)[(*n)++], 0, sizeof(MirrorStaged));
		if (!mirror_own_int(m, q, 0, "pgmirror_staged.relation_oid", &oid) ||
		    !mirror_own_text(m, q, 1, "pgmirror_staged.old_name", &s->old_name))
			break; /* damaged: the error is set */
		s->relation_oid = (uint32_t)oid;
		/* NULL when the staged table has no row (not begun): the join's */
		s->staged = mirror_column_dup(q, 2);
		/* done: copied whole, or its ranges (parsed, copy_ranges.h) reach
		 * the end */
		s->done = s->staged != NULL &&
			  !copy_state_unfinished((const char *)sqlite3_column_text(q, 3));
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return true;
	if (rc != SQLITE_ROW)
		errbuf_set(&m->err, "could not read pgmirror_staged of mirror \"%s\": %s",
			   m->path, sqlite3_errmsg(m->db));
	mirror_stage_list_free(*out, *n);
	*out = NULL;
	*n = 0;
	return false;
}

bool mirror_stage_of(Mirror *m, uint32_t oid, bool *staged, char **old_name)
{
	MirrorStaged *s = NULL;
	int n = 0;

	*staged = false;
	*old_name = NULL;
	if (!mirror_stage_list(m, &s, &n))
		return false;
	for (int i = 0; i < n && !*staged; i++)
		if (s[i].relation_oid == oid) {
			*staged = true;
			*old_name = xstrdup(s[i].old_name);
		}
	mirror_stage_list_free(s, n);
	return true;
}

/* Adds the lines of more to *dropped. */
static void add_dropped(char ***dropped, int *ndropped, char **more, int nmore)
{
	for (int i = 0; i < nmore; i++) {
		*dropped = xreallocarray(*dropped, (size_t)*ndropped + 1, sizeof(char *));
		(*dropped)[(*ndropped)++] = more[i];
	}
	free(more);
}

/*
 * Drops the table set aside for oid (old) and forgets it; then, unless
 * rename is NULL (its source names), the staged table takes the name of
 * its source table. The user's objects on old are made again after.
 */
static bool replace_old(Mirror *m, uint32_t oid, const char *old, const MirrorTableInfo *rename,
			char ***dropped, int *ndropped)
{
	MirrorUserObjects *u = NULL;
	char **more = NULL;
	int nmore = 0;
	bool ok = mirror_user_objects_save(m, &old, 1, &u) &&
		  mirror_exec_owned(m, sqlite3_mprintf(
			  "DROP TABLE IF EXISTS \"%w\"; DELETE FROM pgmirror_staged WHERE "
			  "relation_oid = %u", old, oid));

	if (ok && rename != NULL) {
		char *name = naming_table(rename->source_schema, rename->source_table);
		MirrorRename rn = {oid, name, rename->source_schema, rename->source_table};

		ok = mirror_tables_rename(m, &rn, 1);
		free(name);
	}
	ok = ok && mirror_user_objects_restore(m, u, &more, &nmore);
	add_dropped(dropped, ndropped, more, nmore);
	mirror_user_objects_free(u);
	return ok;
}

bool mirror_stage_swap(Mirror *m, uint32_t oid, bool finish, char ***dropped, int *ndropped,
		       int *nswapped)
{
	MirrorStaged *s = NULL;
	int n = 0;
	bool ok;

	*dropped = NULL;
	*ndropped = 0;
	*nswapped = 0;
	if (!mirror_stage_list(m, &s, &n))
		return false;
	ok = true;
	for (int i = 0; ok && i < n; i++) {
		MirrorTableInfo t = {0};
		bool found = false;

		if (oid != 0 && s[i].relation_oid != oid)
			continue;
		if (s[i].staged == NULL && finish) {
			/* no longer published, or waits: the old rows go */
			ok = replace_old(m, s[i].relation_oid, s[i].old_name, NULL, dropped, ndropped);
			continue;
		}
		if (!s[i].done)
			continue;
		ok = mirror_table_by_oid(m, s[i].relation_oid, &found, &t) && found &&
		     replace_old(m, s[i].relation_oid, s[i].old_name, &t, dropped, ndropped);
		*nswapped += ok ? 1 : 0;
		mirror_table_info_clear(&t);
	}
	mirror_stage_list_free(s, n);
	return ok;
}

bool mirror_stage_forget(Mirror *m, uint32_t oid)
{
	char **dropped = NULL, *old = NULL;
	int ndropped = 0;
	bool staged, ok = mirror_stage_of(m, oid, &staged, &old) &&
			  (!staged || replace_old(m, oid, old, NULL, &dropped, &ndropped));

	for (int i = 0; ok && i < ndropped; i++)
		log_warning("dropped the user's %s from the mirror: it no longer applies after "
			    "mirror table \"%s\" was removed", dropped[i], old);
	strv_free(dropped, ndropped);
	free(old);
	return ok;
}

/*
 * mirror_userobj.c: the user's own objects in the mirror file (indexes,
 * views and triggers whose names do not start with pgmirror_ or sqlite_),
 * kept through what pgmirror does to its tables: a rebuild for a schema
 * change, a start from a fresh copy, a resync.
 *
 * SQLite ties no view, and no trigger on another table, to the tables it
 * names, so which of them name a given table is not known without parsing
 * them; and while one names a table that is not there (dropped, not yet
 * renamed back), SQLite refuses every ALTER TABLE RENAME (it checks the
 * whole schema). So every view and trigger of the user's is set aside,
 * with the user's indexes of the tables concerned, before the work, and
 * made again once the rows are in: none of the user's triggers fires
 * while pgmirror copies rows, and each object is made again on the tables
 * as they are now. One that no longer applies (a column or table it names
 * is gone) is left out, with a line saying why for the caller's warning.
 * All of it runs in the caller's transaction: a rollback puts every object
 * back as it was.
 *
 * A mirror rebuilt because its file was damaged gets them from the damaged
 * file (mirror_user_objects_read, _restore_from): the user's tables too,
 * with the rows that can still be read, as far as its schema can be read.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

typedef struct UserObject {
	char *type;          /* index, view or trigger */
	char *name;
	char *tbl;           /* the table (or view) it is on; a view's own name */
	char *sql;           /* its CREATE statement */
} UserObject;

struct MirrorUserObjects {
	int n;
	UserObject *o;       /* indexes, views, triggers, each in the order made */
};

#define USER_NAME "name NOT LIKE 'pgmirror\\_%' ESCAPE '\\' " \
		  "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND sql IS NOT NULL "

static char *col_dup(sqlite3_stmt *q, int col)
{
	const unsigned char *t = sqlite3_column_text(q, col);

	return xstrdup(t ? (const char *)t : "");
}

/* Appends every object q (bound) yields. */
static bool read_objects(Mirror *m, sqlite3_stmt *q, MirrorUserObjects *u)
{
	int rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		UserObject *o;

		u->o = xreallocarray(u->o, (size_t)u->n + 1, sizeof(UserObject));
		o = &u->o[u->n++];
		o->type = col_dup(q, 0);
		o->name = col_dup(q, 1);
		o->tbl = col_dup(q, 2);
		o->sql = col_dup(q, 3);
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return true;
	errbuf_set(&m->err, "could not read the schema of mirror \"%s\": %s", m->path,
		  sqlite3_errmsg(m->db));
	return false;
}

void mirror_user_objects_free(MirrorUserObjects *u)
{
	if (u == NULL)
		return;
	for (int i = 0; i < u->n; i++) {
		free(u->o[i].type);
		free(u->o[i].name);
		free(u->o[i].tbl);
		free(u->o[i].sql);
	}
	free(u->o);
	free(u);
}

bool mirror_user_objects_save(Mirror *m, const char *const *tables, int ntables,
			      MirrorUserObjects **out)
{
	MirrorUserObjects *u = xcalloc(1, sizeof(*u));
	sqlite3_stmt *q;
	bool ok = true;

	*out = NULL;
	if (tables == NULL) {
		q = mirror_prepare(m, "SELECT type, name, tbl_name, sql FROM sqlite_master "
				   "WHERE type = 'index' AND " USER_NAME "AND tbl_name IN "
				   "(SELECT table_name FROM pgmirror_tables) ORDER BY rowid", false);
		ok = q != NULL && read_objects(m, q, u);
	}
	for (int i = 0; ok && tables != NULL && i < ntables; i++) {
		q = mirror_prepare(m, "SELECT type, name, tbl_name, sql FROM sqlite_master "
				   "WHERE type = 'index' AND " USER_NAME "AND tbl_name = ?1 "
				   "COLLATE NOCASE ORDER BY rowid", false);
		if (q != NULL)
			sqlite3_bind_text(q, 1, tables[i], -1, SQLITE_TRANSIENT);
		ok = q != NULL && read_objects(m, q, u);
	}
	if (ok) {
		q = mirror_prepare(m, "SELECT type, name, tbl_name, sql FROM sqlite_master "
				   "WHERE type IN ('view', 'trigger') AND " USER_NAME
				   "ORDER BY type = 'trigger', rowid", false);
		ok = q != NULL && read_objects(m, q, u);
	}
	/* triggers first: dropping a view drops its triggers */
	for (int i = u->n - 1; ok && i >= 0; i--)
		ok = mirror_exec_owned(m, sqlite3_mprintf("DROP %s IF EXISTS \"%w\"",
							  u->o[i].type, u->o[i].name));
	if (!ok) {
		mirror_user_objects_free(u);
		return false;
	}
	*out = u;
	return true;
}

/* Prepares (never runs) sql; NULL when it compiles, else SQLite's reason. */
static char *compile_error(Mirror *m, char *sql)
{
	sqlite3_stmt *st = NULL;
	char *why = NULL;

	if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) != SQLITE_OK)
		why = xstrdup(sqlite3_errmsg(m->db));
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return why;
}

/*
 * The statements that fire the triggers on tbl (prepared, never run: a
 * trigger's program is compiled into the statement that fires it, so a
 * trigger naming a column that is gone makes them fail). Into why[3] the
 * reason each fails, NULL when it compiles.
 */
static void probe_triggers(Mirror *m, const char *tbl, char *why[3])
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT name FROM pragma_table_info(?1)", false);
	sqlite3_str *set = sqlite3_str_new(NULL);
	char *assignments;

	if (q != NULL) {
		sqlite3_bind_text(q, 1, tbl, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(q, 0);

			sqlite3_str_appendf(set, "%s\"%w\" = \"%w\"",
					    sqlite3_str_length(set) ? ", " : "", c, c);
		}
		sqlite3_finalize(q);
	}
	assignments = sqlite3_str_finish(set);
	why[0] = compile_error(m, sqlite3_mprintf("INSERT INTO \"%w\" DEFAULT VALUES", tbl));
	why[1] = assignments == NULL ? xstrdup("no columns") :
		 compile_error(m, sqlite3_mprintf("UPDATE \"%w\" SET %s", tbl, assignments));
	why[2] = compile_error(m, sqlite3_mprintf("DELETE FROM \"%w\"", tbl));
	sqlite3_free(assignments);
}

/* Does a view fail for a reason of the schema (not, say, a function that
 * only the user's program defines, which pgmirror's connection lacks)? */
static bool schema_error(const char *why)
{
	return strncmp(why, "no such table", 13) == 0 || strncmp(why, "no such column", 14) == 0;
}

/* The reason view o no longer applies, or NULL. */
static char *view_error(Mirror *m, const UserObject *o)
{
	char *why = compile_error(m, sqlite3_mprintf("SELECT * FROM \"%w\"", o->name));

	if (why != NULL && !schema_error(why)) {
		free(why);
		why = NULL;
	}
	return why;
}

/*
 * The fence around stored SQL (from a file that may be damaged or
 * planted): what an object's statement may do while it runs. Making the
 * object itself (of its kind, under its name, in main), with the writes
 * into main's schema that come with it, and reading what a view or a
 * trigger names while SQLite checks it; nothing else (no ATTACH, PRAGMA,
 * other write, temporary object). The first thing refused is kept for the
 * reason.
 */
typedef struct Fence {
	const UserObject *o;
	char refused[160];
} Fence;

/* An action the fence refuses, in words (SQLite's names). */
static const char *fence_action_name(int action)
{
	switch (action) {
	case SQLITE_ATTACH: return "ATTACH";
	case SQLITE_DETACH: return "DETACH";
	case SQLITE_PRAGMA: return "PRAGMA";
	case SQLITE_INSERT: return "INSERT INTO";
	case SQLITE_UPDATE: return "UPDATE";
	case SQLITE_DELETE: return "DELETE FROM";
	case SQLITE_DROP_TABLE: return "DROP TABLE";
	case SQLITE_DROP_INDEX: return "DROP INDEX";
	case SQLITE_DROP_VIEW: return "DROP VIEW";
	case SQLITE_DROP_TRIGGER: return "DROP TRIGGER";
	case SQLITE_ALTER_TABLE: return "ALTER TABLE";
	case SQLITE_CREATE_TEMP_TABLE: return "CREATE TEMP TABLE";
	case SQLITE_CREATE_TEMP_INDEX: return "CREATE TEMP INDEX";
	case SQLITE_CREATE_TEMP_VIEW: return "CREATE TEMP VIEW";
	case SQLITE_CREATE_TEMP_TRIGGER: return "CREATE TEMP TRIGGER";
	case SQLITE_CREATE_TABLE: return "CREATE TABLE";
	case SQLITE_CREATE_INDEX: return "CREATE INDEX";
	case SQLITE_CREATE_VIEW: return "CREATE VIEW";
	case SQLITE_CREATE_TRIGGER: return "CREATE TRIGGER";
	case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
	case SQLITE_TRANSACTION: return "a transaction";
	case SQLITE_SAVEPOINT: return "SAVEPOINT";
	}
	return "another statement";
}

static int fence_check(void *arg, int action, const char *a1, const char *a2, const char *db,
		       const char *inner)
{
	static const struct { int action; const char *kind; } makes[] = {
		{ SQLITE_CREATE_INDEX, "index" }, { SQLITE_CREATE_TABLE, "table" },
		{ SQLITE_CREATE_VIEW, "view" }, { SQLITE_CREATE_TRIGGER, "trigger" },
		{ SQLITE_REINDEX, "index" }, /* filling the index made */
	};
	Fence *f = arg;
	bool in_main = db != NULL && strcmp(db, "main") == 0;

	(void)a2;
	(void)inner;
	for (size_t i = 0; i < sizeof(makes) / sizeof(makes[0]); i++)
		if (action == makes[i].action && in_main && strcmp(f->o->type, makes[i].kind) == 0 &&
		    a1 != NULL && sqlite3_stricmp(a1, f->o->name) == 0)
			return SQLITE_OK;
	if (((action == SQLITE_INSERT || action == SQLITE_UPDATE) && in_main && a1 != NULL &&
	     (sqlite3_stricmp(a1, "sqlite_master") == 0 ||
	      sqlite3_stricmp(a1, "sqlite_schema") == 0)) ||
	    action == SQLITE_READ || action == SQLITE_SELECT || action == SQLITE_FUNCTION ||
	    action == SQLITE_RECURSIVE)
		return SQLITE_OK;
	if (f->refused[0] == '\0')
		snprintf(f->refused, sizeof(f->refused), "%s \"%s\"", fence_action_name(action),
			 a1 ? a1 : "");
	return SQLITE_DENY;
}

/*
 * Runs o's stored SQL behind the fence, as one statement: a text that
 * goes on past it is refused before anything runs. SQLite's result code;
 * *why (malloc'd) the reason for a refusal, else NULL.
 */
static int run_fenced(Mirror *m, const UserObject *o, char **why)
{
	Fence fence = { .o = o };
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int defensive = 0, rc;

	*why = NULL;
	(void)sqlite3_db_config(m->db, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive);
	(void)sqlite3_db_config(m->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_set_authorizer(m->db, fence_check, &fence);
	rc = sqlite3_prepare_v2(m->db, o->sql, -1, &st, &tail);
	if (rc == SQLITE_OK && tail != NULL && tail[strspn(tail, " \t\r\n;")] != '\0')
		*why = xasprintf("its stored SQL holds more than one statement: \"%.60s\"",
				 tail + strspn(tail, " \t\r\n;"));
	else if (rc == SQLITE_OK && st == NULL)
		*why = xstrdup("its stored SQL holds no statement");
	else if (rc == SQLITE_AUTH || (rc != SQLITE_OK && fence.refused[0] != '\0'))
		*why = xasprintf("its stored SQL does more than make this %s (%s)",
				 o->type, fence.refused);
	else if (rc == SQLITE_OK)
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	sqlite3_finalize(st);
	sqlite3_set_authorizer(m->db, NULL, NULL);
	(void)sqlite3_db_config(m->db, SQLITE_DBCONFIG_DEFENSIVE, defensive, NULL);
	return rc;
}

/*
 * Makes object o again; *why the reason it no longer applies (then it is
 * not in the file), or NULL. A view is checked later (view_error).
 */
static bool restore_one(Mirror *m, const UserObject *o, char **why)
{
	char *before[3] = {NULL, NULL, NULL}, *after[3] = {NULL, NULL, NULL};
	bool trigger = strcmp(o->type, "trigger") == 0;
	bool ok = true;
	int rc;

	*why = NULL;
	if (trigger)
		probe_triggers(m, o->tbl, before);
	rc = run_fenced(m, o, why);
	if (*why != NULL)
		goto done; /* refused: nothing ran */
	if (rc == SQLITE_ERROR || rc == SQLITE_CONSTRAINT) {
		/* what it names is gone; a unique index the rows break */
		*why = xstrdup(sqlite3_errmsg(m->db));
		goto done;
	}
	if (rc != SQLITE_OK) {
		/* interrupted, out of space: not the object's fault */
		errbuf_set(&m->err, "could not make %s \"%s\" again in mirror \"%s\": %s", o->type,
			  o->name, m->path, sqlite3_errmsg(m->db));
		ok = false;
		goto done;
	}
	if (trigger) {
		/* a statement that compiled before it and not after fails
		 * because of it, and would fail pgmirror's changes */
		probe_triggers(m, o->tbl, after);
		for (int i = 0; i < 3 && *why == NULL; i++)
			if (after[i] != NULL && (before[i] == NULL || strcmp(before[i], after[i]) != 0))
				*why = xstrdup(after[i]);
	}
	if (*why != NULL)
		ok = mirror_exec_owned(m, sqlite3_mprintf("DROP %s IF EXISTS \"%w\"", o->type,
							  o->name));
done:
	for (int i = 0; i < 3; i++) {
		free(before[i]);
		free(after[i]);
	}
	return ok;
}

static void add_dropped(char ***dropped, int *n, const UserObject *o, char *why)
{
	*dropped = xreallocarray(*dropped, (size_t)*n + 1, sizeof(char *));
	(*dropped)[(*n)++] = xasprintf("%s \"%s\" (%s)", o->type, o->name, why);
	free(why);
}

bool mirror_user_objects_restore(Mirror *m, const MirrorUserObjects *u, char ***dropped,
				 int *ndropped)
{
	int n = u != NULL ? u->n : 0;
	bool *made = xcalloc((size_t)n + 1, sizeof(bool));
	bool ok = true, again = true;

	*dropped = NULL;
	*ndropped = 0;
	/* indexes and views; a view is checked once all are made, since it
	 * may name one made after it */
	for (int i = 0; ok && i < n; i++) {
		char *why;

		if (strcmp(u->o[i].type, "trigger") == 0)
			continue;
		ok = restore_one(m, &u->o[i], &why);
		made[i] = why == NULL;
		if (why != NULL)
			add_dropped(dropped, ndropped, &u->o[i], why);
	}
	/* until none goes: a view on a view that went goes too */
	while (ok && again) {
		again = false;
		for (int i = 0; ok && i < n; i++) {
			char *why;

			if (!made[i] || strcmp(u->o[i].type, "view") != 0 ||
			    (why = view_error(m, &u->o[i])) == NULL)
				continue;
			made[i] = false;
			again = true;
			add_dropped(dropped, ndropped, &u->o[i], why);
			ok = mirror_exec_owned(m, sqlite3_mprintf("DROP VIEW IF EXISTS \"%w\"",
								  u->o[i].name));
		}
	}
	/* triggers last, on the tables and views as they are now */
	for (int i = 0; ok && i < n; i++) {
		char *why;

		if (strcmp(u->o[i].type, "trigger") != 0)
			continue;
		ok = restore_one(m, &u->o[i], &why);
		if (why != NULL)
			add_dropped(dropped, ndropped, &u->o[i], why);
	}
	free(made);
	if (!ok) {
		strv_free(*dropped, *ndropped);
		*dropped = NULL;
		*ndropped = 0;
	}
	return ok;
}

/* The user's tables, indexes, views and triggers: every object not
 * pgmirror's or SQLite's, mirror tables left out where pgmirror_tables can
 * still be read. */
#define READ_SQL(where) "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE " \
	"type IN ('table', 'index', 'view', 'trigger') AND " USER_NAME where \
	"ORDER BY type = 'trigger', rowid"

bool mirror_user_objects_read(Mirror *m, MirrorUserObjects **out)
{
	MirrorUserObjects *u = xcalloc(1, sizeof(*u));
	/* a NULL in the list (damage) would make NOT IN never true: no
	 * table of the user's would be found, and a heal would lose them */
	sqlite3_stmt *q = mirror_prepare(m, READ_SQL("AND NOT (type = 'table' AND name IN "
						     "(SELECT table_name FROM pgmirror_tables "
						     "WHERE table_name IS NOT NULL)) "),
					 false);

	if (q == NULL || !read_objects(m, q, u)) {
		/* mirror tables that are there already are skipped in restore */
		mirror_user_objects_free(u);
		u = xcalloc(1, sizeof(*u));
		q = mirror_prepare(m, READ_SQL(""), false);
		if (q == NULL || !read_objects(m, q, u)) {
			mirror_user_objects_free(u);
			*out = NULL;
			return false;
		}
	}
	*out = u;
	return true;
}

/* Makes table o of the user's and copies its rows from heal_src; a line in
 * *dropped when they cannot be read. False on an error of the new file. */
static bool restore_table(Mirror *m, const UserObject *o, char ***dropped, int *ndropped)
{
	int64_t exists = 0;
	char *why = NULL;
	int rc;

	if (!mirror_scalar(m, "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' "
			   "AND name = '%q'", o->name, &exists))
		return false;
	if (exists > 0)
		return true; /* a mirror table again */
	if (!restore_one(m, o, &why))
		return false;
	if (why == NULL) {
		char *sql = sqlite3_mprintf("INSERT INTO main.\"%w\" SELECT * FROM "
					    "heal_src.\"%w\"", o->name, o->name);

		if (sql == NULL)
			return false;
		rc = sqlite3_exec(m->db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			why = xasprintf("its rows could not be read: %s", sqlite3_errmsg(m->db));
	}
	if (why != NULL)
		add_dropped(dropped, ndropped, o, why);
	return true;
}

bool mirror_user_objects_restore_from(Mirror *m, const char *from_path,
				      const MirrorUserObjects *u, char ***dropped,
				      int *ndropped)
{
	MirrorUserObjects rest = {0};
	char **lost = NULL, **more = NULL, *name;
	int nlost = 0, nmore = 0;
	bool ok;

	*dropped = NULL;
	*ndropped = 0;
	name = mirror_file_name(from_path);
	if (!mirror_exec_owned(m, sqlite3_mprintf("ATTACH %Q AS heal_src", name))) {
		sqlite3_free(name);
		return false;
	}
	sqlite3_free(name);
	ok = mirror_begin(m);
	rest.o = xcalloc((size_t)(u ? u->n : 0) + 1, sizeof(UserObject));
	for (int i = 0; ok && u != NULL && i < u->n; i++) {
		if (strcmp(u->o[i].type, "table") == 0)
			ok = restore_table(m, &u->o[i], &lost, &nlost);
		else
			rest.o[rest.n++] = u->o[i]; /* borrowed */
	}
	ok = ok && mirror_user_objects_restore(m, &rest, &more, &nmore) && mirror_commit(m);
	if (!ok)
		mirror_rollback(m);
	(void)sqlite3_exec(m->db, "DETACH heal_src", NULL, NULL, NULL);
	free(rest.o);
	for (int i = 0; i < nmore; i++) {
		lost = xreallocarray(lost, (size_t)nlost + 1, sizeof(char *));
		lost[nlost++] = more[i];
	}
	free(more);
	if (!ok) {
		strv_free(lost, nlost);
		return false;
	}
	*dropped = lost;
	*ndropped = nlost;
	return true;
}

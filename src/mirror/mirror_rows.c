/*
 * mirror_rows.c: the row statements of a mirrored table. Each is built
 * once per table with "%w", prepared with SQLITE_PREPARE_PERSISTENT on
 * first use and reused for every row; values are bound straight from the
 * applier's buffers. Under REPLICA IDENTITY FULL a change picks exactly
 * one of several equal rows through SQLite's row id (under whichever of
 * its names no column takes).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

/*
 * A name under which SQLite's row id of a table with def's columns is
 * reachable: a column named rowid, _rowid_ or oid (in any case) hides
 * that name of it. NULL when the table has all three.
 */
static const char *rowid_name(const MirrorTableDef *def)
{
	static const char *const names[] = {"rowid", "_rowid_", "oid"};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		bool taken = false;

		for (int i = 0; i < def->ncols && !taken; i++)
			taken = sqlite3_stricmp(def->cols[i].name, names[k]) == 0;
		if (!taken)
			return names[k];
	}
	return NULL;
}

MirrorTable *mirror_table_new(Mirror *m, const MirrorTableDef *def)
{
	MirrorTable *t = xcalloc(1, sizeof(*t));
	sqlite3_str *cols;

	t->m = m;
	t->name = xstrdup(def->name);
	t->ncols = def->ncols;
	t->full = def->replident == 'f';
	t->is_key = xcalloc((size_t)def->ncols + 1, sizeof(bool));
	t->qcols = xcalloc((size_t)def->ncols + 1, sizeof(char *));
	cols = sqlite3_str_new(NULL);
	for (int i = 0; i < def->ncols; i++) {
		t->is_key[i] = t->full || def->cols[i].is_key;
		t->qcols[i] = sqlite3_mprintf("\"%w\"", def->cols[i].name);
		sqlite3_str_appendf(cols, "%s%s", i ? ", " : "", t->qcols[i]);
	}
	t->collist = sqlite3_str_finish(cols);
	if (t->collist == NULL)
		t->collist = sqlite3_mprintf("%s", "");
	t->rowid = t->full ? rowid_name(def) : NULL;
	return t;
}

void mirror_table_free(MirrorTable *t)
{
	if (t == NULL)
		return;
	sqlite3_finalize(t->ins);
	sqlite3_finalize(t->upd);
	sqlite3_finalize(t->del);
	sqlite3_finalize(t->upd_all);
	sqlite3_finalize(t->del_all);
	sqlite3_finalize(t->sel);
	sqlite3_finalize(t->trunc);
	sqlite3_finalize(t->setcol);
	for (int i = 0; i < t->ncols; i++)
		sqlite3_free(t->qcols[i]);
	free(t->qcols);
	free(t->is_key);
	sqlite3_free(t->collist);
	free(t->name);
	free(t);
}

void mirror_bind_value(sqlite3_stmt *st, int idx, const Value *v)
{
	switch (v->kind) {
	case VAL_NULL:
		sqlite3_bind_null(st, idx);
		break;
	case VAL_INT:
		sqlite3_bind_int64(st, idx, v->i);
		break;
	case VAL_REAL:
		sqlite3_bind_double(st, idx, v->r);
		break;
	case VAL_TEXT:
		sqlite3_bind_text64(st, idx, v->p, v->len, SQLITE_STATIC, SQLITE_UTF8);
		break;
	case VAL_BLOB:
		sqlite3_bind_blob64(st, idx, v->len ? v->p : "", v->len, SQLITE_STATIC);
		break;
	}
}

/*
 * The row-matching condition. With a key: "k1" IS ?a AND ... (uses the
 * primary key). With REPLICA IDENTITY FULL: the row id of the first row
 * whose every sent column is equal, so that exactly one of several
 * identical rows changes (without a name for the row id, every such row:
 * see change_full_unnamed). first is the parameter number of column 0's
 * value; under FULL, the "not sent" flags follow the values, unless
 * all_sent: then every column is compared, plainly, so that SQLite finds
 * the row through an index (the table's match index, mirror_index.c)
 * instead of scanning the table.
 */
static void append_match_as(sqlite3_str *s, const MirrorTable *t, int first, bool all_sent)
{
	bool any = false, one = t->full && t->rowid != NULL;

	if (one)
		sqlite3_str_appendf(s, " WHERE %s = (SELECT %s FROM \"%w\" WHERE ",
				    t->rowid, t->rowid, t->name);
	else
		sqlite3_str_appendall(s, " WHERE ");
	for (int i = 0; i < t->ncols; i++) {
		if (!t->is_key[i])
			continue;
		if (t->full && !all_sent)
			sqlite3_str_appendf(s, "%s(%s IS ?%d OR ?%d)", any ? " AND " : "",
					    t->qcols[i], first + i, first + t->ncols + i);
		else
			sqlite3_str_appendf(s, "%s%s IS ?%d", any ? " AND " : "", t->qcols[i],
					    first + i);
		any = true;
	}
	if (!any)
		sqlite3_str_appendall(s, "0");
	if (one)
		sqlite3_str_appendall(s, " LIMIT 1)");
}

static void append_match(sqlite3_str *s, const MirrorTable *t, int first)
{
	append_match_as(s, t, first, false);
}

/* Under FULL: every column was sent (none unchanged-TOASTed). */
static bool all_sent(const MirrorTable *t, const bool *used)
{
	if (!t->full)
		return false;
	for (int i = 0; i < t->ncols; i++)
		if (!used[i])
			return false;
	return true;
}

static void bind_match_as(const MirrorTable *t, sqlite3_stmt *st, int first,
			  const Value *match, const bool *used, bool all)
{
	for (int i = 0; i < t->ncols; i++) {
		if (!t->is_key[i])
			continue;
		mirror_bind_value(st, first + i, &match[i]);
		if (t->full && !all)
			sqlite3_bind_int(st, first + t->ncols + i, !used[i]);
	}
}

static void bind_match(const MirrorTable *t, sqlite3_stmt *st, int first,
		       const Value *match, const bool *used)
{
	bind_match_as(t, st, first, match, used, false);
}

static sqlite3_stmt *table_stmt(MirrorTable *t, sqlite3_stmt **slot,
				char *(*build)(const MirrorTable *))
{
	if (*slot == NULL) {
		char *sql = build(t);

		*slot = mirror_prepare(t->m, sql, true);
		sqlite3_free(sql);
	}
	return *slot;
}

/* An insert whose key the mirror already holds replaces that row: a
 * publication that sends only inserts never sends the delete in between,
 * and the mirror holds the last version the source sent. */
static char *build_insert(const MirrorTable *t)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "INSERT OR REPLACE INTO \"%w\" (%s) VALUES (", t->name, t->collist);
	for (int i = 0; i < t->ncols; i++)
		sqlite3_str_appendf(s, "%s?%d", i ? ", " : "", i + 1);
	sqlite3_str_appendall(s, ")");
	return sqlite3_str_finish(s);
}

/* SET col = CASE WHEN ?keep THEN col ELSE ?value END, for every column:
 * one statement serves rows with and without unchanged TOASTed columns. */
static char *build_update_as(const MirrorTable *t, bool all)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "UPDATE \"%w\" SET ", t->name);
	for (int i = 0; i < t->ncols; i++)
		sqlite3_str_appendf(s, "%s%s = CASE WHEN ?%d THEN %s ELSE ?%d END",
				    i ? ", " : "", t->qcols[i], t->ncols + i + 1,
				    t->qcols[i], i + 1);
	append_match_as(s, t, 2 * t->ncols + 1, all);
	return sqlite3_str_finish(s);
}

static char *build_update(const MirrorTable *t)
{
	return build_update_as(t, false);
}

static char *build_update_all(const MirrorTable *t)
{
	return build_update_as(t, true);
}

static char *build_delete_as(const MirrorTable *t, bool all)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "DELETE FROM \"%w\"", t->name);
	append_match_as(s, t, 1, all);
	return sqlite3_str_finish(s);
}

static char *build_delete(const MirrorTable *t)
{
	return build_delete_as(t, false);
}

static char *build_delete_all(const MirrorTable *t)
{
	return build_delete_as(t, true);
}

static char *build_select(const MirrorTable *t)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "SELECT %s FROM \"%w\"", t->collist, t->name);
	append_match(s, t, 1);
	return sqlite3_str_finish(s);
}

static char *build_truncate(const MirrorTable *t)
{
	return sqlite3_mprintf("DELETE FROM \"%w\"", t->name);
}

bool mirror_table_insert(MirrorTable *t, const Value *vals)
{
	sqlite3_stmt *st = table_stmt(t, &t->ins, build_insert);

	if (st == NULL)
		return false;
	for (int i = 0; i < t->ncols; i++)
		mirror_bind_value(st, i + 1, &vals[i]);
	return mirror_step_done(t->m, st, "insert a row");
}

/*
 * A keyless table with columns named rowid, _rowid_ and oid has no name
 * left for SQLite's row id, so no statement can pick one of several equal
 * rows. Then every matching row is taken out, and all are put back but
 * the first, which is left out (vals NULL: a delete) or put back changed
 * (keep[i]: column i keeps its value). Rare, so it may allocate.
 */
static bool change_full_unnamed(MirrorTable *t, const Value *match, const bool *match_used,
				const Value *vals, const bool *keep, int *nchanged)
{
	sqlite3_stmt *sel = table_stmt(t, &t->sel, build_select);
	sqlite3_stmt *del = table_stmt(t, &t->del, build_delete);
	sqlite3_stmt *ins = table_stmt(t, &t->ins, build_insert);
	sqlite3_value **rows = NULL;
	size_t nrows = 0, n;
	bool ok = false;
	int rc;

	if (sel == NULL || del == NULL || ins == NULL)
		return false;
	bind_match(t, sel, 1, match, match_used);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		rows = xreallocarray(rows, (nrows + 1) * (size_t)t->ncols, sizeof(*rows));
		for (int i = 0; i < t->ncols; i++) {
			sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(sel, i));

			if (v == NULL) {
				fprintf(stderr, "pgmirror: out of memory\n");
				exit(1);
			}
			rows[nrows * (size_t)t->ncols + (size_t)i] = v;
		}
		nrows++;
	}
	sqlite3_reset(sel);
	if (rc != SQLITE_DONE) {
		errbuf_set(&t->m->err, "could not find a row in mirror \"%s\": %s", t->m->path,
			  sqlite3_errmsg(t->m->db));
		goto done;
	}
	*nchanged = nrows > 0;
	if (nrows == 0) {
		ok = true;
		goto done;
	}
	bind_match(t, del, 1, match, match_used);
	if (!mirror_step_done(t->m, del, "delete a row"))
		goto done;
	ok = true;
	for (size_t r = vals == NULL ? 1 : 0; ok && r < nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			if (r == 0 && !keep[i])
				mirror_bind_value(ins, i + 1, &vals[i]);
			else
				sqlite3_bind_value(ins, i + 1, rows[r * (size_t)t->ncols + (size_t)i]);
		}
		ok = mirror_step_done(t->m, ins, r == 0 ? "update a row" : "put back a row");
	}
done:
	n = nrows * (size_t)t->ncols;
	for (size_t i = 0; i < n; i++)
		sqlite3_value_free(rows[i]);
	free(rows);
	return ok;
}

bool mirror_table_update(MirrorTable *t, const Value *match, const bool *match_used,
			 const Value *vals, const bool *keep, int *nchanged)
{
	sqlite3_stmt *st;
	bool all;

	if (t->full && t->rowid == NULL)
		return change_full_unnamed(t, match, match_used, vals, keep, nchanged);
	all = all_sent(t, match_used);
	st = all ? table_stmt(t, &t->upd_all, build_update_all)
		 : table_stmt(t, &t->upd, build_update);
	if (st == NULL)
		return false;
	for (int i = 0; i < t->ncols; i++) {
		mirror_bind_value(st, i + 1, &vals[i]);
		sqlite3_bind_int(st, t->ncols + i + 1, keep[i]);
	}
	bind_match_as(t, st, 2 * t->ncols + 1, match, match_used, all);
	if (!mirror_step_done(t->m, st, "update a row"))
		return false;
	*nchanged = sqlite3_changes(t->m->db);
	return true;
}

bool mirror_table_delete(MirrorTable *t, const Value *match, const bool *match_used,
			 int *nchanged)
{
	sqlite3_stmt *st;
	bool all;

	if (t->full && t->rowid == NULL)
		return change_full_unnamed(t, match, match_used, NULL, NULL, nchanged);
	all = all_sent(t, match_used);
	st = all ? table_stmt(t, &t->del_all, build_delete_all)
		 : table_stmt(t, &t->del, build_delete);
	if (st == NULL)
		return false;
	bind_match_as(t, st, 1, match, match_used, all);
	if (!mirror_step_done(t->m, st, "delete a row"))
		return false;
	*nchanged = sqlite3_changes(t->m->db);
	return true;
}

bool mirror_table_truncate(MirrorTable *t)
{
	sqlite3_stmt *st = table_stmt(t, &t->trunc, build_truncate);

	return st != NULL && mirror_step_done(t->m, st, "truncate a table");
}

bool mirror_table_set_column(MirrorTable *t, int col, const Value *match, const Value *v)
{
	if (t->setcol != NULL && t->setcol_index != col) {
		sqlite3_finalize(t->setcol);
		t->setcol = NULL;
	}
	if (t->setcol == NULL) {
		sqlite3_str *s = sqlite3_str_new(NULL);
		char *sql;

		sqlite3_str_appendf(s, "UPDATE \"%w\" SET %s = ?%d", t->name, t->qcols[col],
				    2 * t->ncols + 1);
		append_match(s, t, 1);
		sql = sqlite3_str_finish(s);
		t->setcol = mirror_prepare(t->m, sql, false);
		sqlite3_free(sql);
		if (t->setcol == NULL)
			return false;
		t->setcol_index = col;
	}
	for (int i = 0; i < t->ncols; i++)
		if (t->is_key[i])
			mirror_bind_value(t->setcol, i + 1, &match[i]);
	mirror_bind_value(t->setcol, 2 * t->ncols + 1, v);
	return mirror_step_done(t->m, t->setcol, "fill an added column");
}


/*
 * mirror_index.c: the indexes pgmirror keeps on mirror tables. Two kinds,
 * both non-unique and named with the reserved prefix, so that no name can
 * be a mirror table's, a user's object's, or another index's:
 *
 *   pgmirror_index_OID_NAME  a source index (OID and NAME are the source
 *                            index's): the same columns, in the same
 *                            order, with the same ASC/DESC;
 *   pgmirror_match_OID       on a REPLICA IDENTITY FULL table (OID is the
 *                            source table's): lets a change find its row
 *                            without scanning the table (see match_columns).
 *
 * The digits of the OID end at the first "_" after the prefix, so two
 * different OIDs never give the same name, whatever the source names are.
 * A table rebuild (mirror_plan.c) drops the old table's indexes: they are
 * saved first and made again on the new table, but for an index on a
 * column that is gone.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/mirror_stage.h"

#define INDEX_PREFIX "pgmirror_index_"
#define MATCH_PREFIX "pgmirror_match_"
#define MATCH_MAX_COLUMNS 2 /* see want_match() */

/* Source type OIDs whose text is short whatever the value (pg_type.h). */
static bool short_text_type(uint32_t oid, int32_t typmod)
{
	switch (oid) {
	case 18:   /* char */
	case 19:   /* name */
	case 650:  /* cidr */
	case 774:  /* macaddr8 */
	case 790:  /* money */
	case 829:  /* macaddr */
	case 869:  /* inet */
	case 1083: /* time */
	case 1186: /* interval */
	case 1266: /* timetz */
	case 2950: /* uuid */
	case 3220: /* pg_lsn */
		return true;
	case 1042: /* bpchar(n) */
	case 1043: /* varchar(n) */
		return typmod >= 4 && typmod - 4 <= 64;
	default:
		return false;
	}
}

/* A column whose values are small enough for the match index. */
static bool short_column(int value_type, uint32_t type_oid, int32_t typmod)
{
	switch ((ValueType)value_type) {
	case VT_BOOL:
	case VT_INT:
	case VT_FLOAT:
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
	case VT_DATE:
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		return true;
	case VT_TEXT:
		return short_text_type(type_oid, typmod);
	default:
		return false; /* bytea, json, arrays: any size */
	}
}

/* What pgmirror_tables and pgmirror_columns record of a table. */
typedef struct TableInfo {
	char replident;
	uint32_t relation_oid;
	int ncols;
	char **names;
	bool *is_short;
} TableInfo;

static void table_info_free(TableInfo *t)
{
	for (int i = 0; i < t->ncols; i++)
		free(t->names[i]);
	free(t->names);
	free(t->is_short);
	memset(t, 0, sizeof(*t));
}

static bool read_table_info(Mirror *m, const char *table, TableInfo *t)
{
	sqlite3_stmt *q;
	int rc;

	memset(t, 0, sizeof(*t));
	q = mirror_prepare(m, "SELECT replica_identity, relation_oid FROM pgmirror_tables "
			   "WHERE table_name = ?1", false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		char *ri;
		int64_t oid;

		if (!mirror_own_text(m, q, 0, "pgmirror_tables.replica_identity", &ri) ||
		    !mirror_own_int(m, q, 1, "pgmirror_tables.relation_oid", &oid)) {
			sqlite3_finalize(q);
			return false; /* damaged: the error is set */
		}
		t->replident = ri[0];
		t->relation_oid = (uint32_t)oid;
		free(ri);
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto sqlerr;
	q = mirror_prepare(m, "SELECT column_name, value_type, type_oid, type_modifier "
			   "FROM pgmirror_columns WHERE table_name = ?1 ORDER BY position", false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t vt, oid, mod;

		t->names = xreallocarray(t->names, (size_t)t->ncols + 1, sizeof(char *));
		t->is_short = xreallocarray(t->is_short, (size_t)t->ncols + 1, sizeof(bool));
		if (!mirror_own_text(m, q, 0, "pgmirror_columns.column_name", &t->names[t->ncols]) ||
		    !mirror_own_int(m, q, 1, "pgmirror_columns.value_type", &vt) ||
		    !mirror_own_int(m, q, 2, "pgmirror_columns.type_oid", &oid) ||
		    !mirror_own_int(m, q, 3, "pgmirror_columns.type_modifier", &mod)) {
			t->ncols += t->names[t->ncols] != NULL;
			sqlite3_finalize(q);
			table_info_free(t);
			return false; /* damaged: the error is set */
		}
		t->is_short[t->ncols++] = short_column((int)vt, (uint32_t)oid, (int32_t)mod);
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return true;
sqlerr:
	errbuf_set(&m->err, "could not read the definition of table \"%s\": %s", table,
		  sqlite3_errmsg(m->db));
	table_info_free(t);
	return false;
}

/* An index as it should be: its name and its CREATE statement. */
typedef struct WantIndex {
	char *name;
	char *sql;
	bool exists;
} WantIndex;

static void want_free(WantIndex *w, int n)
{
	for (int i = 0; i < n; i++) {
		sqlite3_free(w[i].name);
		sqlite3_free(w[i].sql);
	}
	free(w);
}

static WantIndex *want_add(WantIndex **w, int *n, char *name, const char *table)
{
	WantIndex *x;

	*w = xreallocarray(*w, (size_t)*n + 1, sizeof(WantIndex));
	x = &(*w)[(*n)++];
	x->name = name;
	x->sql = sqlite3_mprintf("CREATE INDEX \"%w\" ON \"%w\" (", name, table);
	x->exists = false;
	return x;
}

static void want_finish(WantIndex *x, sqlite3_str *cols)
{
	char *c = sqlite3_str_finish(cols);
	char *sql = sqlite3_mprintf("%s%s)", x->sql, c ? c : "");

	sqlite3_free(c);
	sqlite3_free(x->sql);
	x->sql = sql;
}

static bool has_column(const TableInfo *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->names[i], name) == 0)
			return true;
	return false;
}

/*
 * The match index of a REPLICA IDENTITY FULL table: a change finds its row
 * with "col IS ?" on every column, and SQLite looks it up through an index
 * on any of them. Only columns whose values are small go in (numbers,
 * dates and times, uuid, short varchar, ...; not text, bytea, json or
 * arrays, which may be megabytes), the first MATCH_MAX_COLUMNS of them; a
 * table with none gets its first column. Two columns rather than all of
 * them: the index is rewritten with every change, and the bench's keyless
 * changes ran 1.9 times as long as keyed ones with three columns (a
 * timestamptz among them), 1.4 times with two; a second column still
 * helps where the first one has few distinct values.
 */
static void want_match(const TableInfo *t, const char *table, WantIndex **w, int *n)
{
	sqlite3_str *cols;
	int used = 0;
	WantIndex *x;

	if (t->replident != 'f' || t->ncols == 0)
		return;
	x = want_add(w, n, sqlite3_mprintf(MATCH_PREFIX "%u", t->relation_oid), table);
	cols = sqlite3_str_new(NULL);
	for (int i = 0; i < t->ncols && used < MATCH_MAX_COLUMNS; i++) {
		if (!t->is_short[i])
			continue;
		sqlite3_str_appendf(cols, "%s\"%w\"", used ? ", " : "", t->names[i]);
		used++;
	}
	if (used == 0)
		sqlite3_str_appendf(cols, "\"%w\"", t->names[0]);
	want_finish(x, cols);
}

/* Whether name starts with prefix, in any case (as SQLite compares names). */
static bool has_prefix(const char *name, const char *prefix)
{
	return sqlite3_strnicmp(name, prefix, (int)strlen(prefix)) == 0;
}

/*
 * Drops the indexes of table that pgmirror made and are not wanted (or
 * differ), makes the wanted ones that are missing. With source false,
 * pgmirror_index_* indexes are left as they are.
 */
static bool reconcile(Mirror *m, const char *table, WantIndex *w, int n, bool source)
{
	sqlite3_stmt *q;
	char **drop = NULL;
	int ndrop = 0, rc;
	bool ok = true;

	q = mirror_prepare(m, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND "
			   "tbl_name = ?1 COLLATE NOCASE", false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		const char *sql = (const char *)sqlite3_column_text(q, 1);
		bool keep = false;

		if (name == NULL || !(has_prefix(name, MATCH_PREFIX) ||
				      (source && has_prefix(name, INDEX_PREFIX))))
			continue;
		for (int i = 0; i < n && !keep; i++) {
			if (sqlite3_stricmp(w[i].name, name) == 0 && sql != NULL &&
			    strcmp(w[i].sql, sql) == 0)
				keep = w[i].exists = true;
		}
		if (!keep) {
			drop = xreallocarray(drop, (size_t)ndrop + 1, sizeof(char *));
			drop[ndrop++] = xstrdup(name);
		}
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read the indexes of table \"%s\": %s", table,
			  sqlite3_errmsg(m->db));
		ok = false;
	}
	for (int i = 0; ok && i < ndrop; i++) {
		ok = mirror_exec_owned(m, sqlite3_mprintf("DROP INDEX \"%w\"", drop[i]));
		if (ok && has_prefix(drop[i], INDEX_PREFIX))
			log_info("dropped index \"%s\" of mirror table \"%s\"", drop[i], table);
	}
	for (int i = 0; ok && i < n; i++) {
		if (w[i].exists)
			continue;
		ok = mirror_exec_owned(m, sqlite3_mprintf("DROP INDEX IF EXISTS \"%w\"", w[i].name)) &&
		     mirror_exec(m, w[i].sql);
		if (ok && has_prefix(w[i].name, INDEX_PREFIX))
			log_info("made index \"%s\" of mirror table \"%s\"", w[i].name, table);
	}
	strv_free(drop, ndrop);
	return ok;
}

bool mirror_table_indexes(Mirror *m, const char *table, const MirrorIndexDef *defs, int n)
{
	TableInfo t;
	WantIndex *w = NULL;
	int nw = 0;
	bool ok;

	/* a staged table's indexes would have the names of those of the
	 * table it replaces: made once it is swapped in (mirror_stage.h) */
	if (mirror_stage_is_name(table))
		return true;
	if (!read_table_info(m, table, &t))
		return false;
	for (int i = 0; i < n; i++) {
		const MirrorIndexDef *d = &defs[i];
		sqlite3_str *cols;
		WantIndex *x;
		bool all = d->ncols > 0;

		/* columns left out of the publication, or not in the mirror yet */
		for (int c = 0; c < d->ncols && all; c++)
			all = has_column(&t, d->cols[c]);
		if (!all)
			continue;
		x = want_add(&w, &nw, sqlite3_mprintf(INDEX_PREFIX "%u_%s", d->oid, d->name), table);
		cols = sqlite3_str_new(NULL);
		for (int c = 0; c < d->ncols; c++)
			sqlite3_str_appendf(cols, "%s\"%w\"%s", c ? ", " : "", d->cols[c],
					    d->desc[c] ? " DESC" : "");
		want_finish(x, cols);
	}
	want_match(&t, table, &w, &nw);
	ok = reconcile(m, table, w, nw, true);
	want_free(w, nw);
	table_info_free(&t);
	return ok;
}

/* --- rebuilds ------------------------------------------------------------ */

void mirror_saved_indexes_free(SavedIndexes *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->idx[i].name);
		strv_free(s->idx[i].cols, s->idx[i].ncols);
		free(s->idx[i].desc);
	}
	free(s->idx);
	memset(s, 0, sizeof(*s));
}

bool mirror_save_indexes(Mirror *m, const char *table, SavedIndexes *s)
{
	sqlite3_stmt *q, *cols = NULL;
	int rc;
	bool ok = false;

	memset(s, 0, sizeof(*s));
	q = mirror_prepare(m, "SELECT name FROM sqlite_master WHERE type = 'index' AND "
			   "tbl_name = ?1 COLLATE NOCASE ORDER BY name", false);
	cols = mirror_prepare(m, "SELECT name, desc FROM pragma_index_xinfo(?1) WHERE key "
			      "ORDER BY seqno", false);
	if (q == NULL || cols == NULL)
		goto done;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		SavedIndex *x;

		if (name == NULL || !has_prefix(name, INDEX_PREFIX))
			continue;
		s->idx = xreallocarray(s->idx, (size_t)s->n + 1, sizeof(SavedIndex));
		x = &s->idx[s->n++];
		memset(x, 0, sizeof(*x));
		x->name = xstrdup(name);
		sqlite3_bind_text(cols, 1, name, -1, SQLITE_TRANSIENT);
		while ((rc = sqlite3_step(cols)) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(cols, 0);

			x->cols = xreallocarray(x->cols, (size_t)x->ncols + 1, sizeof(char *));
			x->desc = xreallocarray(x->desc, (size_t)x->ncols + 1, sizeof(bool));
			x->cols[x->ncols] = xstrdup(c != NULL ? c : "");
			x->desc[x->ncols++] = sqlite3_column_int(cols, 1) != 0;
		}
		sqlite3_reset(cols);
		if (rc != SQLITE_DONE)
			goto sqlerr;
	}
	if (rc != SQLITE_DONE)
		goto sqlerr;
	ok = true;
	goto done;
sqlerr:
	errbuf_set(&m->err, "could not read the indexes of table \"%s\": %s", table,
		  sqlite3_errmsg(m->db));
done:
	sqlite3_finalize(q);
	sqlite3_finalize(cols);
	if (!ok)
		mirror_saved_indexes_free(s);
	return ok;
}

bool mirror_restore_indexes(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
			    const SavedIndexes *s)
{
	TableInfo t;
	WantIndex *w = NULL;
	int nw = 0;
	bool ok = true;

	/* another source table's rows are gone, and its indexes with them */
	for (int i = 0; ok && plan->keep_rows && i < s->n; i++) {
		const SavedIndex *x = &s->idx[i];
		sqlite3_str *cols = sqlite3_str_new(NULL);
		char *sql;
		bool all = true;

		sqlite3_str_appendf(cols, "CREATE INDEX \"%w\" ON \"%w\" (", x->name, def->name);
		for (int c = 0; c < x->ncols && all; c++) {
			const char *now = NULL;

			/* the new name of the column the index had (a rename) */
			for (int j = 0; j < def->ncols && now == NULL; j++)
				if (plan->src[j] != NULL &&
				    strcmp(plan->src[j], x->cols[c]) == 0)
					now = def->cols[j].name;
			if (now == NULL)
				all = false;
			else
				sqlite3_str_appendf(cols, "%s\"%w\"%s", c ? ", " : "", now,
						    x->desc[c] ? " DESC" : "");
		}
		sqlite3_str_appendall(cols, ")");
		sql = sqlite3_str_finish(cols);
		if (all)
			ok = mirror_exec(m, sql);
		else
			log_info("index \"%s\" of mirror table \"%s\" is dropped with its column",
				 x->name, def->name);
		sqlite3_free(sql);
	}
	if (!ok || !read_table_info(m, def->name, &t))
		return false;
	want_match(&t, def->name, &w, &nw);
	ok = reconcile(m, def->name, w, nw, false);
	want_free(w, nw);
	table_info_free(&t);
	return ok;
}


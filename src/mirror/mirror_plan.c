/*
 * mirror_plan.c: mirrored tables and their definitions. Compares a table's
 * new definition (from the source) with what pgmirror_tables and
 * pgmirror_columns record, plans how each column gets its values (kept,
 * converted, or filled), creates or rebuilds the SQLite table inside the
 * caller's transaction, and records the new definition.
 *
 * Every identifier that comes from the source is quoted with "%w" in
 * sqlite3_mprintf(); no source string is spliced into SQL otherwise.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/naming.h"

/* A column as recorded in pgmirror_columns. */
typedef struct OldColumn {
	char *name;
	uint32_t type_oid;
	int32_t type_mod;
	int value_type;
	bool is_key;
	int attnum;          /* 0: unknown */
	bool matched;
} OldColumn;

static void old_columns_free(OldColumn *cols, int n)
{
	for (int i = 0; i < n; i++)
		free(cols[i].name);
	free(cols);
}

/* One row of pgmirror_columns (column_name, type_oid, type_modifier,
 * value_type, is_key, source_attnum) into c; false with the damage set. */
static bool read_old_column(Mirror *m, sqlite3_stmt *q, OldColumn *c)
{
	int64_t oid, mod, vt, key, attnum;

	memset(c, 0, sizeof(*c));
	if (!mirror_own_text(m, q, 0, "pgmirror_columns.column_name", &c->name) ||
	    !mirror_own_int(m, q, 1, "pgmirror_columns.type_oid", &oid) ||
	    !mirror_own_int(m, q, 2, "pgmirror_columns.type_modifier", &mod) ||
	    !mirror_own_int(m, q, 3, "pgmirror_columns.value_type", &vt) ||
	    !mirror_own_int(m, q, 4, "pgmirror_columns.is_key", &key) ||
	    !mirror_own_int(m, q, 5, "pgmirror_columns.source_attnum", &attnum))
		return false;
	/* each within its type's range (mirror_own.c's rules) */
	c->type_oid = (uint32_t)oid;
	c->type_mod = (int32_t)mod;
	c->value_type = (int)vt;
	c->is_key = key != 0;
	c->attnum = (int)attnum;
	return true;
}

/*
 * Reads what the mirror records of def's source relation, found by its
 * OID; *exists false if nothing. Only when the mirror has no table of that
 * OID does the name count: a table of another OID under def->name is
 * another source table (*same_oid false), or a clash.
 */
static bool read_definition(Mirror *m, const MirrorTableDef *def, bool *exists,
			    bool *same_table, bool *same_oid, OldColumn **cols, int *ncols)
{
	sqlite3_stmt *q;
	MirrorTableInfo info;
	int rc;
	bool ok = false, found;

	*exists = false;
	*same_table = true;
	*same_oid = true;
	*cols = NULL;
	*ncols = 0;
	if (!mirror_table_by_oid(m, def->relation_oid, &found, &info))
		return false;
	if (found && strcmp(info.name, def->name) != 0) {
		/* the applier renames first (mirror_tables_rename) */
		errbuf_set(&m->err, "mirror table \"%s\" of source relation OID %u is not named "
			  "\"%s\" yet", info.name, def->relation_oid, def->name);
		mirror_table_info_clear(&info);
		return false;
	}
	if (!found) {
		char *why;

		mirror_table_info_clear(&info);
		if (!mirror_table_by_name(m, def->name, &found, &info))
			return false;
		why = found ? naming_clash(info.source_schema, info.source_table,
					   def->source_schema, def->source_table) : NULL;
		if (why != NULL) {
			/* the name is taken by another source table */
			errbuf_set(&m->err, "%s", why);
			free(why);
			mirror_table_info_clear(&info);
			return false;
		}
		*same_oid = !found;
	}
	mirror_table_info_clear(&info);
	if (!found)
		return true;
	*exists = true;
	q = mirror_prepare(m, "SELECT replica_identity FROM pgmirror_tables WHERE table_name = ?1 "
		    "COLLATE NOCASE", false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, def->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		char *ri;

		if (!mirror_own_text(m, q, 0, "pgmirror_tables.replica_identity", &ri))
			goto done; /* damaged: the error is set */
		*same_table = ri[0] == def->replident;
		free(ri);
	} else
		goto sqlerr;
	sqlite3_finalize(q);
	q = NULL;

	q = mirror_prepare(m, "SELECT column_name, type_oid, type_modifier, value_type, is_key, "
		    "source_attnum FROM pgmirror_columns WHERE table_name = ?1 ORDER BY position",
		    false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, def->name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		*cols = xreallocarray(*cols, (size_t)*ncols + 1, sizeof(OldColumn));
		if (!read_old_column(m, q, &(*cols)[(*ncols)++]))
			goto done; /* damaged: the error is set */
	}
	if (rc != SQLITE_DONE)
		goto sqlerr;
	ok = true;
	goto done;
sqlerr:
	errbuf_set(&m->err, "could not read the definition of table \"%s\": %s", def->name,
		  sqlite3_errmsg(m->db));
done:
	sqlite3_finalize(q);
	if (!ok) {
		old_columns_free(*cols, *ncols);
		*cols = NULL;
		*ncols = 0;
	}
	return ok;
}

/*
 * How values of old column o become values of new column c, or false when
 * the source's conversion cannot be reproduced from what the mirror holds
 * (the rules: values_retype()).
 */
static bool conversion(const OldColumn *o, const MirrorColumnDef *c, ColumnConv *conv)
{
	*conv = CONV_COPY;
	switch (values_retype(o->type_oid, o->type_mod, o->value_type, c->type_oid,
			      c->type_mod, c->type)) {
	case RETYPE_COPY:
		return true;
	case RETYPE_TEXT:
		*conv = CONV_TEXT;
		return true;
	case RETYPE_REAL:
		*conv = CONV_REAL;
		return true;
	default:
		return false;
	}
}

void mirror_plan_free(MirrorPlan *plan)
{
	if (plan->src != NULL)
		for (int i = 0; i < plan->ncols; i++)
			free(plan->src[i]);
	free(plan->src);
	free(plan->conv);
	memset(plan, 0, sizeof(*plan));
}

static bool table_has_rows(Mirror *m, const char *name, bool *has)
{
	int64_t v = 0;
	bool ok = mirror_scalar(m, "SELECT EXISTS (SELECT 1 FROM \"%w\")", name, &v);

	*has = v != 0;
	return ok;
}

/*
 * Is o the old version of new column c, by the rules of pass 0..2? With
 * refill, a column the source knows is read again rather than guessed to
 * be one whose source column was never known (its values may be stale).
 */
static bool same_column(const OldColumn *o, int i, const MirrorColumnDef *c, int j, int pass,
			bool refill)
{
	if (o->matched)
		return false;
	if (pass == 0) /* both attnums known */
		return o->attnum != 0 && c->attnum != 0 && o->attnum == c->attnum;
	if (o->attnum != 0 && c->attnum != 0)
		return false; /* known to be different columns */
	if (refill && c->attnum != 0 && !c->is_key)
		return false;
	if (pass == 1)
		return strcmp(o->name, c->name) == 0;
	return i == j && o->type_oid == c->type_oid && o->type_mod == c->type_mod;
}

bool mirror_table_plan(Mirror *m, const MirrorTableDef *def, bool refill, MirrorPlan *plan)
{
	OldColumn *old = NULL;
	int nold = 0;
	bool same_table, same_oid, ok = false;

	memset(plan, 0, sizeof(*plan));
	/* the four replica identities PostgreSQL knows (pg_class.relreplident) */
	if (def->replident == '\0' || strchr("dnfi", def->replident) == NULL) {
		errbuf_set(&m->err, "source table \"%s.%s\" has replica identity 0x%02x, which is "
			  "none of PostgreSQL's (d, n, f, i); check the source's catalog",
			  def->source_schema, def->source_table, (unsigned char)def->replident);
		return false;
	}
	plan->ncols = def->ncols;
	plan->conv = xcalloc((size_t)def->ncols + 1, sizeof(ColumnConv));
	plan->src = xcalloc((size_t)def->ncols + 1, sizeof(char *));
	if (!read_definition(m, def, &plan->exists, &same_table, &same_oid, &old, &nold))
		goto done;
	if (!plan->exists) {
		ok = true;
		goto done;
	}
	plan->same = same_table && same_oid && nold == def->ncols;
	/* another table of the same name: none of its rows are this one's */
	for (int pass = 0; same_oid && pass < 3; pass++) {
		for (int j = 0; j < def->ncols; j++) {
			const MirrorColumnDef *c = &def->cols[j];
			OldColumn *o = NULL;

			if (plan->src[j] != NULL)
				continue;
			for (int i = 0; i < nold && o == NULL; i++)
				if (same_column(&old[i], i, c, j, pass, refill))
					o = &old[i];
			if (o == NULL)
				continue;
			o->matched = true;
			if (!conversion(o, c, &plan->conv[j])) {
				if (!refill || c->is_key) {
					errbuf_set(&m->err, "column \"%s\" of mirror table \"%s\" changed type on "
						  "the source (type OID %u modifier %d to OID %u modifier %d), "
						  "and pgmirror cannot convert the rows it holds the way the "
						  "source did, so this mirror must start over", c->name,
						  def->name, o->type_oid, o->type_mod, c->type_oid,
						  c->type_mod);
					plan->start_over = true;
					goto done;
				}
				plan->same = false;
				continue; /* refilled from the source */
			}
			/* with a key, a retyped column is read again: the source may
			 * have converted it with USING */
			if (refill && !c->is_key &&
			    (o->type_oid != c->type_oid || o->type_mod != c->type_mod)) {
				plan->same = false;
				continue;
			}
			plan->src[j] = xstrdup(o->name);
			if (plan->conv[j] != CONV_COPY || strcmp(o->name, c->name) != 0 ||
			    o->type_oid != c->type_oid || o->type_mod != c->type_mod ||
			    o->is_key != c->is_key || o - old != j || o->attnum != c->attnum)
				plan->same = false;
		}
	}
	for (int j = 0; j < def->ncols; j++) {
		if (plan->src[j] == NULL) {
			plan->conv[j] = CONV_FILL;
			plan->same = false;
		}
	}
	plan->keep_rows = same_oid;
	ok = plan->same || !same_oid || table_has_rows(m, def->name, &plan->has_rows);
	for (int j = 0; ok && plan->has_rows && j < def->ncols; j++) {
		/* under REPLICA IDENTITY FULL every column is flagged; an added
		 * one is filled with what the source gave the rows */
		if (plan->conv[j] == CONV_FILL && def->cols[j].is_key && def->replident != 'f' &&
		    def->replident != 'n') {
			/* rows would be found by a key they do not have yet */
			errbuf_set(&m->err, "the key of mirror table \"%s\" now includes column \"%s\", "
				  "which its rows do not have, so this mirror must start over",
				  def->name, def->cols[j].name);
			plan->start_over = true;
			ok = false;
		}
	}
done:
	old_columns_free(old, nold);
	if (!ok)
		mirror_plan_free(plan);
	return ok;
}

/* Runs sql (sqlite3_mprintf'd, freed) where no tick may stop it. */
static void exec_uninterrupted(Mirror *m, char *sql)
{
	m->no_interrupt = true;
	(void)sqlite3_exec(m->db, sql, NULL, NULL, NULL);
	m->no_interrupt = false;
	sqlite3_free(sql);
}

/*
 * name as an ALTER TABLE RENAME COLUMN writes it: bare when it can be. A
 * quoted new name makes SQLite quote it in the user's views and triggers
 * too, and a double-quoted name that names no column is taken there for a
 * string (SQLite's "DQS" rule): once that column is dropped, the view
 * would show the name instead of failing and being dropped.
 */
static char *column_token(const char *name)
{
	bool bare = (name[0] < '0' || name[0] > '9') &&
		    sqlite3_keyword_check(name, (int)strlen(name)) == 0;

	for (const char *p = name; bare && *p != '\0'; p++)
		bare = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '_';
	return bare && name[0] != '\0' ? sqlite3_mprintf("%s", name) :
					   sqlite3_mprintf("\"%w\"", name);
}

bool mirror_table_rename_columns(Mirror *m, const MirrorTableDef *def, MirrorPlan *plan)
{
	static const char sp[] = "pgmirror_column_renames";
	int n = 0;
	bool ok;

	for (int j = 0; plan->exists && plan->keep_rows && j < def->ncols; j++)
		if (plan->src[j] != NULL && strcmp(plan->src[j], def->cols[j].name) != 0)
			n++;
	if (n == 0)
		return true;
	if (!mirror_exec_owned(m, sqlite3_mprintf("SAVEPOINT %s", sp)))
		return false;
	/* out of the way first, then each to its name: names may move */
	ok = true;
	for (int j = 0; ok && j < def->ncols; j++)
		if (plan->src[j] != NULL && strcmp(plan->src[j], def->cols[j].name) != 0)
			ok = mirror_exec_owned(m, sqlite3_mprintf(
				"ALTER TABLE \"%w\" RENAME COLUMN \"%w\" TO pgmirror_renaming_%d",
				def->name, plan->src[j], j));
	for (int j = 0; ok && j < def->ncols; j++) {
		char *to;

		if (plan->src[j] == NULL || strcmp(plan->src[j], def->cols[j].name) == 0)
			continue;
		to = column_token(def->cols[j].name);
		ok = mirror_exec_owned(m, sqlite3_mprintf(
			"ALTER TABLE \"%w\" RENAME COLUMN pgmirror_renaming_%d TO %s", def->name, j,
			to));
		sqlite3_free(to);
	}
	if (!ok) {
		bool stopped = sqlite3_errcode(m->db) == SQLITE_INTERRUPT;

		/* SQLite refused (a view of the user's that no longer worked,
		 * a name a dropped column still holds): the columns keep their
		 * names, and what names the old ones is dropped after the rebuild */
		exec_uninterrupted(m, sqlite3_mprintf("ROLLBACK TO %s", sp));
		exec_uninterrupted(m, sqlite3_mprintf("RELEASE %s", sp));
		return !stopped;
	}
	for (int j = 0; j < def->ncols; j++) {
		if (plan->src[j] != NULL && strcmp(plan->src[j], def->cols[j].name) != 0) {
			free(plan->src[j]);
			plan->src[j] = xstrdup(def->cols[j].name);
		}
	}
	return mirror_exec_owned(m, sqlite3_mprintf("RELEASE %s", sp));
}

/* CREATE TABLE "name" (...) for def. */
static char *create_table_sql(const MirrorTableDef *def, const char *name)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	bool first_key = true;

	sqlite3_str_appendf(s, "CREATE TABLE \"%w\" (", name);
	for (int i = 0; i < def->ncols; i++)
		sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", def->cols[i].name,
				    values_declared_type(def->cols[i].type));
	if (def->replident != 'f' && def->replident != 'n') {
		for (int i = 0; i < def->ncols; i++) {
			if (!def->cols[i].is_key)
				continue;
			sqlite3_str_appendf(s, "%s\"%w\"", first_key ? ", PRIMARY KEY (" : ", ",
					    def->cols[i].name);
			first_key = false;
		}
		if (!first_key)
			sqlite3_str_appendall(s, ")");
	}
	sqlite3_str_appendall(s, ")");
	return sqlite3_str_finish(s);
}

static bool record_definition(Mirror *m, const MirrorTableDef *def)
{
	sqlite3_stmt *ins;
	bool ok = true;
	int64_t generation;

	/* the table is made or remade with its rows, which no trigger of the
	 * user's sees: a new generation tells an app to read it again */
	if (!mirror_next_generation(m, &generation) ||
	    !mirror_exec_owned(m, sqlite3_mprintf(
		    "DELETE FROM pgmirror_columns WHERE table_name = %Q;"
		    "INSERT OR REPLACE INTO pgmirror_tables (table_name, source_schema, "
		    "source_table, relation_oid, replica_identity, sync_lsn, generation, "
		    "definition, copy_state, copy_rows, copy_estimate) SELECT %Q, %Q, %Q, %u, "
		    "%Q, o.sync_lsn, %lld, o.definition, o.copy_state, "
		    "coalesce(o.copy_rows, 0), o.copy_estimate "
		    "FROM (SELECT 1) LEFT JOIN pgmirror_tables o "
		    "ON o.table_name = %Q AND o.relation_oid = %u",
		    def->name, def->name, def->source_schema, def->source_table,
		    def->relation_oid, (char[2]){def->replident, '\0'}, (long long)generation,
		    def->name, def->relation_oid)))
		return false;
	ins = mirror_prepare(m, "INSERT INTO pgmirror_columns (table_name, column_name, position, "
		      "pg_type, type_modifier, is_key, type_oid, value_type, source_attnum) "
		      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", false);
	if (ins == NULL)
		return false;
	for (int i = 0; ok && i < def->ncols; i++) {
		const MirrorColumnDef *c = &def->cols[i];

		sqlite3_bind_text(ins, 1, def->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, c->name, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 3, i + 1);
		sqlite3_bind_text(ins, 4, c->pg_type, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 5, c->type_mod);
		sqlite3_bind_int(ins, 6, c->is_key);
		sqlite3_bind_int64(ins, 7, c->type_oid);
		sqlite3_bind_int(ins, 8, (int)c->type.vt);
		sqlite3_bind_int(ins, 9, c->attnum);
		ok = mirror_step_done(m, ins, "record a column");
	}
	sqlite3_finalize(ins);
	return ok;
}

/*
 * Rebuilds the table for a changed definition: a new table is filled from
 * the old one as planned, then takes its name. Runs inside the caller's
 * transaction, so readers see the old table or the new one, never a mix.
 */
static bool rebuild_table(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
			  const Value *fill)
{
	static const char tmp[] = "pgmirror_rebuild";
	sqlite3_str *s = sqlite3_str_new(NULL);
	sqlite3_stmt *st = NULL;
	char *sql;
	bool ok;

	sqlite3_str_appendf(s, "INSERT INTO %s SELECT ", tmp);
	for (int j = 0; j < def->ncols; j++) {
		const char *sep = j ? ", " : "";

		switch (plan->conv[j]) {
		case CONV_COPY:
			sqlite3_str_appendf(s, "%s\"%w\"", sep, plan->src[j]);
			break;
		case CONV_TEXT:
			sqlite3_str_appendf(s, "%sCAST(\"%w\" AS TEXT)", sep, plan->src[j]);
			break;
		case CONV_REAL:
			sqlite3_str_appendf(s, "%sCAST(\"%w\" AS REAL)", sep, plan->src[j]);
			break;
		case CONV_FILL:
			sqlite3_str_appendf(s, "%s?%d", sep, j + 1);
			break;
		}
	}
	sqlite3_str_appendf(s, " FROM \"%w\"", def->name);
	sql = sqlite3_str_finish(s);

	ok = mirror_exec_owned(m, sqlite3_mprintf("DROP TABLE IF EXISTS %s", tmp)) &&
	     mirror_exec_owned(m, create_table_sql(def, tmp)) &&
	     (!plan->keep_rows || (st = mirror_prepare(m, sql, false)) != NULL);
	sqlite3_free(sql);
	if (ok && plan->keep_rows) {
		for (int j = 0; j < def->ncols; j++)
			if (plan->conv[j] == CONV_FILL)
				mirror_bind_value(st, j + 1, &fill[j]);
		ok = mirror_step_done(m, st, "copy rows into the rebuilt table");
	}
	sqlite3_finalize(st);
	return ok &&
	       mirror_exec_owned(m, sqlite3_mprintf("DROP TABLE \"%w\"", def->name)) &&
	       mirror_exec_owned(m, sqlite3_mprintf("ALTER TABLE %s RENAME TO \"%w\"", tmp, def->name));
}


bool mirror_table_sync(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
		       const Value *fill, MirrorTable **out)
{

	*out = NULL;
	if (!plan->exists) {
		if (!mirror_exec_owned(m, create_table_sql(def, def->name)) ||
		    !record_definition(m, def))
			return false;
	} else if (!plan->same) {
		SavedIndexes saved;
		bool ok;

		if (!mirror_save_indexes(m, def->name, &saved))
			return false;
		ok = rebuild_table(m, def, plan, fill) && record_definition(m, def) &&
		     mirror_restore_indexes(m, def, plan, &saved);
		mirror_saved_indexes_free(&saved);
		if (!ok)
			return false;
	}

	*out = mirror_table_new(m, def);
	return true;
}

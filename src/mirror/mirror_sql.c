/*
 * mirror_sql.c: the SQL helpers every mirror file uses, below them all:
 * running SQL text, preparing and stepping a statement, one number or one
 * text column of a query, and the mirror's last error. Each sets the
 * mirror's error on failure, naming the file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

char *mirror_file_name(const char *path)
{
	/*
	 * SQLite takes a name that starts with "file:" for a URI (this build
	 * or another may have URIs on whatever the open's flags say): the
	 * mirror "file:x.db?mode=memory" would be a database in memory, and
	 * the file of that name stay empty. A relative one ("file:..." is
	 * never absolute) is named from "./", which SQLite takes as a path.
	 */
	return strncmp(path, "file:", 5) == 0 ? sqlite3_mprintf("./%s", path)
					       : sqlite3_mprintf("%s", path);
}

const char *mirror_error(const Mirror *m)
{
	return m->err.text;
}

/* Runs SQL text (one or more statements); false with the error set. */
bool mirror_exec(Mirror *m, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(m->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		errbuf_set(&m->err, "could not update mirror \"%s\": %s", m->path,
			  err ? err : sqlite3_errmsg(m->db));
		sqlite3_free(err);
		return false;
	}
	return true;
}

/* Like exec_sql, but frees the sqlite3_mprintf'd sql. */
bool mirror_exec_owned(Mirror *m, char *sql)
{
	bool ok;

	if (sql == NULL) {
		fprintf(stderr, "pgmirror: out of memory\n");
		exit(1);
	}
	ok = mirror_exec(m, sql);
	sqlite3_free(sql);
	return ok;
}

sqlite3_stmt *mirror_prepare(Mirror *m, const char *sql, bool persistent)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v3(m->db, sql, -1,
			       persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st,
			       NULL) != SQLITE_OK) {
		errbuf_set(&m->err, "could not prepare statement on mirror \"%s\": %s",
			  m->path, sqlite3_errmsg(m->db));
		return NULL;
	}
	return st;
}

/* Steps a statement to completion and resets it. */
bool mirror_step_done(Mirror *m, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	mirror_writeback_note(m, 1);
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not %s in mirror \"%s\": %s", what, m->path,
			  sqlite3_errmsg(m->db));
		return false;
	}
	return true;
}

char *mirror_column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}
/* The one integer sql (with a "%w" for the table name) yields on table. */
bool mirror_scalar(Mirror *m, const char *sql_fmt, const char *table, int64_t *out)
{
	char *sql = sqlite3_mprintf(sql_fmt, table);
	sqlite3_stmt *q = mirror_prepare(m, sql, false);
	bool ok = false;

	sqlite3_free(sql);
	if (q == NULL)
		return false;
	if (sqlite3_step(q) == SQLITE_ROW) {
		*out = sqlite3_column_int64(q, 0);
		ok = true;
	} else
		errbuf_set(&m->err, "could not read table \"%s\": %s", table, sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return ok;
}

bool mirror_count_rows(Mirror *m, const char *table, int64_t *count)
{
	return mirror_scalar(m, "SELECT count(*) FROM \"%w\"", table, count);
}

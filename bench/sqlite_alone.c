/*
 * sqlite_alone.c: the benchmark's "SQLite alone" figure for the initial
 * copy: the best pgmirror's writer could do with the same rows.
 *
 *   sqlite_alone MIRROR.db TABLE OUT.db [JOURNAL_MODE [PAGE_SIZE]]
 *
 * Reads every row of TABLE from a mirror pgmirror made (the values as
 * pgmirror stores them: integers, reals, text, blobs) into memory, then,
 * timed, does what pgmirror's first run does with them in SQLite: opens a
 * new OUT.db with the same settings (SQLite's memory statistics off, WAL,
 * synchronous = FULL, foreign_keys and trusted_schema off, no mutex on the
 * connection), creates the table
 * with the mirror's own CREATE TABLE, and inserts every row in one
 * transaction through the same prepared INSERT OR REPLACE, binding each
 * value as pgmirror does (text and blobs SQLITE_STATIC), then commits.
 * No value conversion, no network: the ceiling for pgmirror's copy rate.
 * JOURNAL_MODE (default WAL, what the mirror must use) and PAGE_SIZE
 * (default SQLite's, 4096, what a mirror has) measure what SQLite alone
 * would do outside the mirror's settings: DELETE (a rollback journal
 * writes new pages once, where the WAL writes them twice, into the WAL
 * and then into the file) and bigger pages (fewer, bigger writes).
 * Prints "ROWS SECONDS ROWS_PER_SECOND".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

typedef struct Val {
	int type;           /* SQLITE_INTEGER, _FLOAT, _TEXT, _BLOB, _NULL */
	sqlite3_int64 i;
	double r;
	size_t off, len;    /* text and blobs: bytes in the arena */
} Val;

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "sqlite_alone: %s: %s\n", what, db ? sqlite3_errmsg(db) : "failed");
	exit(1);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	while (*cap < need)
		*cap = *cap ? *cap * 2 : 4096;
	p = realloc(p, *cap * size);
	if (p == NULL) {
		fprintf(stderr, "sqlite_alone: out of memory\n");
		exit(1);
	}
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void exec(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(db, sql);
}

int main(int argc, char **argv)
{
	sqlite3 *src, *dst;
	sqlite3_stmt *st;
	char *ddl, *sql, *cols = NULL;
	Val *vals = NULL;
	char *arena = NULL;
	size_t nvals = 0, vcap = 0, alen = 0, acap = 0, nrows = 0;
	int ncols;
	const char *journal = argc > 4 ? argv[4] : "WAL";
	int page_size = argc > 5 ? atoi(argv[5]) : 0;
	double t0, t1;

	if (argc < 4 || argc > 6 ||
	    (argc > 5 && (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1))))) {
		fprintf(stderr, "usage: sqlite_alone MIRROR.db TABLE OUT.db [JOURNAL_MODE [PAGE_SIZE]]\n");
		return 2;
	}
	/* before SQLite's first use, as mirror_open() does */
	if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK)
		die(NULL, "turn SQLite's memory statistics off");
	if (sqlite3_open_v2(argv[1], &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		die(src, "open the mirror");
	sql = sqlite3_mprintf("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = %Q",
			      argv[2]);
	if (sqlite3_prepare_v2(src, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		die(src, "find the table");
	ddl = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_free(sql);

	/* the rows, as stored */
	sql = sqlite3_mprintf("SELECT * FROM \"%w\"", argv[2]);
	if (sqlite3_prepare_v2(src, sql, -1, &st, NULL) != SQLITE_OK)
		die(src, "read the table");
	sqlite3_free(sql);
	ncols = sqlite3_column_count(st);
	for (int i = 0; i < ncols; i++)
		cols = sqlite3_mprintf("%z%s\"%w\"", cols, i ? ", " : "", sqlite3_column_name(st, i));
	while (sqlite3_step(st) == SQLITE_ROW) {
		vals = grow(vals, &vcap, nvals + (size_t)ncols, sizeof(Val));
		for (int i = 0; i < ncols; i++) {
			Val *v = &vals[nvals++];

			v->type = sqlite3_column_type(st, i);
			if (v->type == SQLITE_INTEGER)
				v->i = sqlite3_column_int64(st, i);
			else if (v->type == SQLITE_FLOAT)
				v->r = sqlite3_column_double(st, i);
			else if (v->type == SQLITE_TEXT || v->type == SQLITE_BLOB) {
				const void *p = v->type == SQLITE_TEXT ?
					(const void *)sqlite3_column_text(st, i) :
					sqlite3_column_blob(st, i);

				v->len = (size_t)sqlite3_column_bytes(st, i);
				arena = grow(arena, &acap, alen + v->len + 1, 1);
				memcpy(arena + alen, p, v->len);
				v->off = alen;
				alen += v->len;
			}
		}
		nrows++;
	}
	sqlite3_finalize(st);
	sqlite3_close(src);

	remove(argv[3]);
	t0 = now();
	if (sqlite3_open_v2(argv[3], &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		die(dst, "create the output");
	if (page_size > 0) {
		sql = sqlite3_mprintf("PRAGMA page_size = %d", page_size);
		exec(dst, sql);
		sqlite3_free(sql);
	}
	/* SQLite answers with the mode it is in: an unknown one leaves it as it was */
	sql = sqlite3_mprintf("PRAGMA journal_mode = %Q", journal);
	if (sqlite3_prepare_v2(dst, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		die(dst, sql);
	if (sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), journal) != 0) {
		fprintf(stderr, "sqlite_alone: journal mode \"%s\" not taken (the file is in \"%s\"); "
			"give WAL, DELETE, TRUNCATE, PERSIST, MEMORY or OFF\n", journal,
			(const char *)sqlite3_column_text(st, 0));
		return 2;
	}
	sqlite3_finalize(st);
	sqlite3_free(sql);
	exec(dst, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF; PRAGMA trusted_schema = OFF");
	exec(dst, "BEGIN IMMEDIATE");
	exec(dst, ddl);
	sql = sqlite3_mprintf("INSERT OR REPLACE INTO \"%w\" (%s) VALUES (", argv[2], cols);
	for (int i = 0; i < ncols; i++)
		sql = sqlite3_mprintf("%z%s?%d", sql, i ? ", " : "", i + 1);
	sql = sqlite3_mprintf("%z)", sql);
	if (sqlite3_prepare_v3(dst, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		die(dst, sql);
	for (size_t r = 0; r < nrows; r++) {
		const Val *row = &vals[r * (size_t)ncols];

		for (int i = 0; i < ncols; i++) {
			const Val *v = &row[i];

			switch (v->type) {
			case SQLITE_INTEGER:
				sqlite3_bind_int64(st, i + 1, v->i);
				break;
			case SQLITE_FLOAT:
				sqlite3_bind_double(st, i + 1, v->r);
				break;
			case SQLITE_TEXT:
				sqlite3_bind_text64(st, i + 1, arena + v->off, v->len, SQLITE_STATIC,
						    SQLITE_UTF8);
				break;
			case SQLITE_BLOB:
				sqlite3_bind_blob64(st, i + 1, v->len ? arena + v->off : "", v->len,
						    SQLITE_STATIC);
				break;
			default:
				sqlite3_bind_null(st, i + 1);
				break;
			}
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			die(dst, "insert");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	exec(dst, "COMMIT");
	if (sqlite3_close(dst) != SQLITE_OK)
		die(dst, "close");
	t1 = now();
	printf("%zu %.6f %.0f\n", nrows, t1 - t0, t1 > t0 ? nrows / (t1 - t0) : 0.0);
	free(vals);
	free(arena);
	free(ddl);
	sqlite3_free(sql);
	sqlite3_free(cols);
	return 0;
}

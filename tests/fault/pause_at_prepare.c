/*
 * pause_at_prepare.c: an LD_PRELOAD shim for tests only: a reader of the
 * mirror held still at a known point, so that a test can change the file
 * meanwhile. It wraps SQLite's sqlite3_prepare_v2() and _v3(); the first
 * statement whose text contains PGMIRROR_PAUSE_SQL makes the file
 * PGMIRROR_PAUSE_FLAG and waits, before it is prepared, until the test
 * removes that file (60 s at most). Every other statement goes to SQLite.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

static void maybe_pause(const char *sql)
{
	static int done;
	const char *what = getenv("PGMIRROR_PAUSE_SQL"), *flag = getenv("PGMIRROR_PAUSE_FLAG");
	FILE *f;

	if (done || what == NULL || flag == NULL || sql == NULL || strstr(sql, what) == NULL)
		return;
	done = 1;
	f = fopen(flag, "w");
	if (f == NULL)
		return;
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
	for (int i = 0; i < 6000 && access(flag, F_OK) == 0; i++) {
		struct timespec ts = {0, 10000000L};

		nanosleep(&ts, NULL);
	}
}

int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **st, const char **tail)
{
	static int (*real)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "sqlite3_prepare_v2");
	if (real == NULL)
		return SQLITE_ERROR;
	maybe_pause(sql);
	return real(db, sql, n, st, tail);
}

int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int n, unsigned int flags,
		       sqlite3_stmt **st, const char **tail)
{
	static int (*real)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **,
			   const char **);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "sqlite3_prepare_v3");
	if (real == NULL)
		return SQLITE_ERROR;
	maybe_pause(sql);
	return real(db, sql, n, flags, st, tail);
}

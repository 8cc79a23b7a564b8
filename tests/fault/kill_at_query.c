/*
 * kill_at_query.c: an LD_PRELOAD shim for tests only: a crash at a known
 * point. It wraps libpq's PQsendQuery() and PQsendQueryParams(); the Nth
 * query (N: PGMIRROR_KILL_NTH, default 1) whose text contains
 * PGMIRROR_KILL_QUERY kills the process with SIGKILL before it is sent,
 * as kill -9 would, after a line on stderr saying so. Every other query
 * goes to libpq.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

static void maybe_kill(const char *query)
{
	static long seen;
	const char *what = getenv("PGMIRROR_KILL_QUERY"), *nth = getenv("PGMIRROR_KILL_NTH");

	if (what == NULL || query == NULL || strstr(query, what) == NULL)
		return;
	if (++seen != (nth != NULL ? strtol(nth, NULL, 10) : 1))
		return;
	fprintf(stderr, "kill_at_query: SIGKILL before query %ld with \"%s\"\n", seen, what);
	fflush(stderr);
	kill(getpid(), SIGKILL);
}

int PQsendQuery(PGconn *conn, const char *query)
{
	static int (*real)(PGconn *, const char *);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "PQsendQuery");
	maybe_kill(query);
	return real != NULL ? real(conn, query) : 0;
}

int PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
		      const char *const *paramValues, const int *paramLengths,
		      const int *paramFormats, int resultFormat)
{
	static int (*real)(PGconn *, const char *, int, const Oid *, const char *const *,
			   const int *, const int *, int);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "PQsendQueryParams");
	maybe_kill(command);
	return real != NULL ? real(conn, command, nParams, paramTypes, paramValues, paramLengths,
				   paramFormats, resultFormat) : 0;
}

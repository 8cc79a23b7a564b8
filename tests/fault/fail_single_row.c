/*
 * fail_single_row.c: a fault-injection shim for the integration tests,
 * loaded with LD_PRELOAD into pgmirror (never linked into it). It wraps
 * libpq's PQsetSingleRowMode() and makes the Nth call fail (return 0, as
 * libpq does when the mode cannot be set), N being the decimal value of
 * PGMIRROR_FAIL_SINGLE_ROW; every other call goes to libpq. It says so on
 * stderr, so that a test can tell that the fault did happen.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <libpq-fe.h>

int PQsetSingleRowMode(PGconn *conn)
{
	static int (*real)(PGconn *);
	static long calls;
	const char *nth = getenv("PGMIRROR_FAIL_SINGLE_ROW");

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "PQsetSingleRowMode");
	if (nth != NULL && ++calls == strtol(nth, NULL, 10)) {
		fprintf(stderr, "fail_single_row: PQsetSingleRowMode call %ld fails\n", calls);
		return 0;
	}
	return real != NULL ? real(conn) : 0;
}

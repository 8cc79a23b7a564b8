/*
 * slow_resolve.c: an LD_PRELOAD shim for tests only: a host name that
 * only this shim knows (no /etc/hosts, no DNS), whose look-ups are counted
 * and, after the first, slow. It wraps getaddrinfo(): a look-up of
 * PGMIRROR_RESOLVE_NAME is answered as one of PGMIRROR_RESOLVE_TO (a
 * numeric address) would be, after a line "NAME" appended to the file
 * PGMIRROR_RESOLVE_LOG; every look-up after the first waits
 * PGMIRROR_RESOLVE_DELAY_MS first (default 0), as a resolver that has
 * gone slow. Every other look-up goes to the C library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	static int (*real)(const char *, const char *, const struct addrinfo *,
			   struct addrinfo **);
	static int seen;
	const char *name = getenv("PGMIRROR_RESOLVE_NAME"), *to = getenv("PGMIRROR_RESOLVE_TO");
	const char *log = getenv("PGMIRROR_RESOLVE_LOG"), *delay = getenv("PGMIRROR_RESOLVE_DELAY_MS");

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
	if (real == NULL)
		return EAI_FAIL;
	if (node == NULL || name == NULL || to == NULL || strcmp(node, name) != 0)
		return real(node, service, hints, res);
	if (log != NULL) {
		FILE *f = fopen(log, "a");

		if (f != NULL) {
			fprintf(f, "%s\n", node);
			fclose(f);
		}
	}
	if (seen++ > 0 && delay != NULL && atol(delay) > 0) {
		long ms = atol(delay);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

		while (nanosleep(&ts, &ts) != 0)
			;
	}
	return real(to, service, hints, res);
}

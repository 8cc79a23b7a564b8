/*
 * kill_at_rename.c: an LD_PRELOAD shim for tests only: a crash between two
 * steps of pgmirror's file operations. It wraps rename(); the Nth call
 * (N: PGMIRROR_KILL_NTH, default 1) whose source path ends in
 * PGMIRROR_KILL_RENAME kills the process with SIGKILL, as kill -9 would:
 * before the rename, or after it when PGMIRROR_KILL_AFTER is set. A line
 * on stderr says so. Every other call goes to the C library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

static void die(const char *when, const char *from, const char *to)
{
	fprintf(stderr, "kill_at_rename: SIGKILL %s rename(\"%s\", \"%s\")\n", when, from, to);
	fflush(stderr);
	kill(getpid(), SIGKILL);
}

int rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);
	static long seen;
	const char *tail = getenv("PGMIRROR_KILL_RENAME"), *nth = getenv("PGMIRROR_KILL_NTH");
	int after = getenv("PGMIRROR_KILL_AFTER") != NULL, hit = 0, r;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "rename");
	if (tail != NULL && from != NULL && ends_with(from, tail))
		hit = ++seen == (nth != NULL ? strtol(nth, NULL, 10) : 1);
	if (hit && !after)
		die("before", from, to);
	r = real != NULL ? real(from, to) : -1;
	if (hit && after)
		die("after", from, to);
	return r;
}

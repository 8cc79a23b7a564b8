/*
 * slow_sync.c: an LD_PRELOAD shim for tests only: a disk whose syncs are
 * slow, as an SD card's or a busy machine's can be. fsync() and
 * fdatasync() wait PGMIRROR_SYNC_DELAY_MS (default 300) before they do
 * their work, so a commit's end comes well after its start, and a test
 * can tell what a run says before its commit from what it says after.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void slow(void)
{
	const char *delay = getenv("PGMIRROR_SYNC_DELAY_MS");
	long ms = delay != NULL ? atol(delay) : 300;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (ms > 0 && nanosleep(&ts, &ts) != 0)
		;
}

/* the C library's call name on fd, after the wait */
static int synced(const char *name, int fd)
{
	int (*real)(int);

	*(void **)&real = dlsym(RTLD_NEXT, name);
	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	slow();
	return real(fd);
}

int fsync(int fd)
{
	return synced("fsync", fd);
}

int fdatasync(int fd)
{
	return synced("fdatasync", fd);
}

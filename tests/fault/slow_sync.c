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

int fsync(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fsync");
	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	slow();
	return real(fd);
}

int fdatasync(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "fdatasync");
	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	slow();
	return real(fd);
}

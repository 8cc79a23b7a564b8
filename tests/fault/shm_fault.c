/*
 * shm_fault.c: an LD_PRELOAD shim for tests only. It makes every shared
 * mmap() of a file whose name ends in "-shm" fail with ENODEV, as on a
 * filesystem without shared memory mappings, where SQLite cannot keep the
 * wal-index of a WAL database. Nothing else is changed.
 */
#define _GNU_SOURCE
/* both entry points are defined below, each with its own offset type: the
 * build's large-file settings must not rename one into the other */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

static int is_shm_file(int fd)
{
	char link[64], target[4096];
	ssize_t n;

	if (fd < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 4)
		return 0;
	target[n] = '\0';
	return strcmp(target + n - 4, "-shm") == 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);

	if ((flags & MAP_SHARED) && is_shm_file(fd)) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	if (real == NULL)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	return real(addr, len, prot, flags, fd, off);
}

/* what a program built with 64-bit file offsets calls (on 32-bit systems
 * a function of its own; on 64-bit ones the same as mmap) */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off64_t);

	if ((flags & MAP_SHARED) && is_shm_file(fd)) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	if (real == NULL)
		real = (void *(*)(void *, size_t, int, int, int, off64_t))dlsym(RTLD_NEXT,
										"mmap64");
	return real(addr, len, prot, flags, fd, off);
}

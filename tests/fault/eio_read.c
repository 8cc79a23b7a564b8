/*
 * eio_read.c: an LD_PRELOAD shim for tests only: a failing card. Every
 * pread() of the file that PGMIRROR_EIO_FILE named when the process
 * started (that file, by inode: it keeps failing once renamed, and a new
 * file made under the name does not) that touches bytes PGMIRROR_EIO_OFFSET
 * to PGMIRROR_EIO_OFFSET + PGMIRROR_EIO_LEN fails with EIO. Nothing else
 * is changed.
 */
#define _GNU_SOURCE
/* both entry points are defined below, each with its own offset type */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static int known;        /* 1: the bad file was found at start */
static dev_t bad_dev;
static ino_t bad_ino;
static long long bad_off, bad_len;

/* at load, before any thread (a service's check reads in one of its own) */
__attribute__((constructor)) static void find_bad_file(void)
{
	const char *f = getenv("PGMIRROR_EIO_FILE"), *o = getenv("PGMIRROR_EIO_OFFSET"),
		   *l = getenv("PGMIRROR_EIO_LEN");
	struct stat st;

	if (f != NULL && o != NULL && l != NULL && stat(f, &st) == 0) {
		bad_dev = st.st_dev;
		bad_ino = st.st_ino;
		bad_off = atoll(o);
		bad_len = atoll(l);
		known = 1;
	}
}

static int is_bad(int fd, long long off, size_t n)
{
	struct stat st;

	if (!known || off + (long long)n <= bad_off || off >= bad_off + bad_len)
		return 0;
	return fstat(fd, &st) == 0 && st.st_dev == bad_dev && st.st_ino == bad_ino;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);

	if (is_bad(fd, (long long)off, n)) {
		errno = EIO;
		return -1;
	}
	if (real == NULL)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	return real(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	static ssize_t (*real)(int, void *, size_t, off64_t);

	if (is_bad(fd, (long long)off, n)) {
		errno = EIO;
		return -1;
	}
	if (real == NULL)
		real = (ssize_t (*)(int, void *, size_t, off64_t))dlsym(RTLD_NEXT, "pread64");
	return real(fd, buf, n, off);
}

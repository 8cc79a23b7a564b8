/*
 * powercut.c: an LD_PRELOAD shim for tests only: a power cut, for the
 * files of one directory (PGMIRROR_CUT_DIR, no subdirectories).
 *
 * A power cut keeps, of each file, what was last synced, and of the
 * directory, the names it had when it was last synced; everything else is
 * gone. The shim keeps that durable state beside the directory, in
 * PGMIRROR_CUT_SHADOW: "ino.DEV.INO", the content of a file as its last
 * fsync()/fdatasync() found it, and "names", the directory's names and
 * the files they named ("INO NAME" lines, DEV.INO) as its last sync found
 * them. A file made anew (open() with O_CREAT) has no durable content yet,
 * whatever an earlier file of the same inode number had. The state lasts
 * across runs; tests/integration/powercut.py makes it (settle) and puts
 * the directory back to it after a cut (rewind).
 *
 * The cut: the Nth event (PGMIRROR_CUT_NTH) of the kind PGMIRROR_CUT_OP
 * names kills the process with SIGKILL, before the event, or after it with
 * PGMIRROR_CUT_AFTER=1; or the first event PGMIRROR_CUT_MS milliseconds
 * after the start. Events, on the directory's files: "sync" (fsync or
 * fdatasync of a file), "dirsync" (of the directory), "rename", "unlink",
 * "create" (open with O_CREAT of a file not there before), or "any" of
 * them; PGMIRROR_CUT_MATCH limits them to paths that end so. A line on
 * stderr names the event. PGMIRROR_CUT_COUNT names a file where the
 * process, when it exits, writes how many events of each kind it met
 * ("KIND N" lines; a run with no cut counts the moments a cut can take).
 *
 * PGMIRROR_CUT_EIO=1 makes the cut's event fail with EIO instead (before
 * it happens), and the process go on: a full or failing disk.
 *
 * PGMIRROR_CUT_NOSYNC=1 turns fsync() and fdatasync() of the directory
 * and its files into no-ops that sync nothing, as a disk that lies about
 * its syncs: a cut must then find loss.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char dir[PATH_MAX], shadow[PATH_MAX];
static const char *op, *match;
static long nth, seen, cut_ms;
/* events of each kind met, for PGMIRROR_CUT_COUNT */
static const char *const kinds[] = {"sync", "dirsync", "rename", "unlink", "create"};
static long counts[5];
static int after, nosync, eio, ready;
static struct timespec started;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void load(void)
{
	const char *d = getenv("PGMIRROR_CUT_DIR"), *s = getenv("PGMIRROR_CUT_SHADOW");

	*(void **)&real_open = dlsym(RTLD_NEXT, "open");
	*(void **)&real_openat = dlsym(RTLD_NEXT, "openat");
	*(void **)&real_rename = dlsym(RTLD_NEXT, "rename");
	*(void **)&real_renameat = dlsym(RTLD_NEXT, "renameat");
	*(void **)&real_unlink = dlsym(RTLD_NEXT, "unlink");
	*(void **)&real_unlinkat = dlsym(RTLD_NEXT, "unlinkat");
	*(void **)&real_fsync = dlsym(RTLD_NEXT, "fsync");
	*(void **)&real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
	if (d == NULL || s == NULL || realpath(d, dir) == NULL || realpath(s, shadow) == NULL)
		return;
	op = getenv("PGMIRROR_CUT_OP");
	match = getenv("PGMIRROR_CUT_MATCH");
	nth = getenv("PGMIRROR_CUT_NTH") ? strtol(getenv("PGMIRROR_CUT_NTH"), NULL, 10) : 0;
	cut_ms = getenv("PGMIRROR_CUT_MS") ? strtol(getenv("PGMIRROR_CUT_MS"), NULL, 10) : -1;
	after = getenv("PGMIRROR_CUT_AFTER") != NULL && strcmp(getenv("PGMIRROR_CUT_AFTER"), "1") == 0;
	nosync = getenv("PGMIRROR_CUT_NOSYNC") != NULL &&
		 strcmp(getenv("PGMIRROR_CUT_NOSYNC"), "1") == 0;
	eio = getenv("PGMIRROR_CUT_EIO") != NULL && strcmp(getenv("PGMIRROR_CUT_EIO"), "1") == 0;
	clock_gettime(CLOCK_MONOTONIC, &started);
	ready = 1;
}

__attribute__((constructor)) static void init(void)
{
	load();
}

__attribute__((destructor)) static void fini(void)
{
	const char *count = getenv("PGMIRROR_CUT_COUNT");
	FILE *f;

	if (!ready || count == NULL || (f = fopen(count, "w")) == NULL)
		return;
	for (int i = 0; i < 5; i++)
		fprintf(f, "%s %ld\n", kinds[i], counts[i]);
	fclose(f);
}

/* Whether path (absolute, or relative to the working directory) names a
 * file right in the directory; *base its last part. */
static int in_dir(const char *path, const char **base)
{
	char buf[PATH_MAX], *slash;
	const char *b;

	if (!ready || path == NULL)
		return 0;
	if (path[0] == '/')
		snprintf(buf, sizeof(buf), "%s", path);
	else if (getcwd(buf, sizeof(buf)) != NULL)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%s", path);
	else
		return 0;
	slash = strrchr(buf, '/');
	b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	*slash = '\0';
	if (base != NULL)
		*base = b;
	if (strcmp(buf, dir) == 0)
		return 1;
	/* a relative or unresolved directory part: compare its real path */
	{
		char real[PATH_MAX];

		return realpath(buf, real) != NULL && strcmp(real, dir) == 0;
	}
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Counts an event of kind what on path; kills the process when it is the
 * cut's (before: whether the event has not happened yet), or returns 1
 * when the event must fail instead (PGMIRROR_CUT_EIO). */
static int event(const char *what, const char *path, int before)
{
	int hit = 0;

	for (int i = 0; ready && before && i < 5; i++)
		if (strcmp(kinds[i], what) == 0 && (match == NULL || ends_with(path, match)))
			__atomic_add_fetch(&counts[i], 1, __ATOMIC_SEQ_CST);
	if (!ready || (op != NULL && strcmp(op, "any") != 0 && strcmp(op, what) != 0) ||
	    (match != NULL && !ends_with(path, match)))
		return 0;
	pthread_mutex_lock(&mu);
	if (before) {
		seen++;
		if (nth > 0 && seen == nth)
			hit = 1;
		else if (cut_ms >= 0) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			hit = (now.tv_sec - started.tv_sec) * 1000 +
				      (now.tv_nsec - started.tv_nsec) / 1000000 >= cut_ms;
			if (hit)
				nth = seen;
		}
		hit = hit && !after;
	} else
		hit = seen == nth && after;
	if (hit && eio) {
		fprintf(stderr, "powercut: EIO for %s %ld of \"%s\"\n", what, seen, path);
		pthread_mutex_unlock(&mu);
		return 1;
	}
	if (hit) {
		fprintf(stderr, "powercut: cut %s %s %ld of \"%s\"\n", before ? "before" : "after",
			what, seen, path);
		fflush(stderr);
		kill(getpid(), SIGKILL);
		pause();
	}
	pthread_mutex_unlock(&mu);
	return 0;
}

static int fail_eio(void)
{
	errno = EIO;
	return -1;
}

/* Copies the open file fd's content to shadow/ino.DEV.INO (through a
 * temporary name, so that a cut never leaves half a copy). */
static void keep_content(int fd, const struct stat *st)
{
	char tmp[PATH_MAX + 80], name[PATH_MAX + 64], buf[1 << 16];
	off_t at = 0;
	int out;

	snprintf(name, sizeof(name), "%s/ino.%lu.%lu", shadow, (unsigned long)st->st_dev,
		 (unsigned long)st->st_ino);
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	out = real_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		return;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), at);

		if (n <= 0)
			break;
		if (write(out, buf, (size_t)n) != n)
			break;
		at += n;
	}
	close(out);
	real_rename(tmp, name);
}

/* Writes shadow/names: the directory's files as they are now. */
static void keep_names(void)
{
	char tmp[PATH_MAX + 16], name[PATH_MAX + 16];
	DIR *d = opendir(dir);
	struct dirent *e;
	FILE *f;

	if (d == NULL)
		return;
	snprintf(name, sizeof(name), "%s/names", shadow);
	snprintf(tmp, sizeof(tmp), "%s/names.tmp", shadow);
	f = fopen(tmp, "w");
	while (f != NULL && (e = readdir(d)) != NULL) {
		struct stat st;

		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			fprintf(f, "%lu.%lu %s\n", (unsigned long)st.st_dev,
				(unsigned long)st.st_ino, e->d_name);
	}
	closedir(d);
	if (f != NULL) {
		fclose(f);
		real_rename(tmp, name);
	}
}

/* fsync() or fdatasync() of fd: the event, the sync, the durable state. */
static int do_sync(int fd, int (*real)(int))
{
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int isdir, r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = ready ? readlink(link, path, sizeof(path) - 1) : -1;
	if (n <= 0 || fstat(fd, &st) != 0)
		return real(fd);
	path[n] = '\0';
	isdir = S_ISDIR(st.st_mode);
	if (isdir ? strcmp(path, dir) != 0 : !S_ISREG(st.st_mode) || !in_dir(path, NULL))
		return real(fd);
	if (event(isdir ? "dirsync" : "sync", path, 1))
		return fail_eio();
	if (nosync) {
		event(isdir ? "dirsync" : "sync", path, 0);
		return 0;
	}
	r = real(fd);
	if (r == 0) {
		pthread_mutex_lock(&mu);
		if (isdir)
			keep_names();
		else
			keep_content(fd, &st);
		pthread_mutex_unlock(&mu);
	}
	event(isdir ? "dirsync" : "sync", path, 0);
	return r;
}

int fsync(int fd)
{
	if (real_fsync == NULL)
		load();
	return do_sync(fd, real_fsync);
}

int fdatasync(int fd)
{
	if (real_fdatasync == NULL)
		load();
	return do_sync(fd, real_fdatasync);
}

/* A file made anew has no durable content, whatever its inode had. */
static void forget_content(int fd)
{
	struct stat st;
	char name[PATH_MAX + 64];

	if (fd < 0 || fstat(fd, &st) != 0)
		return;
	snprintf(name, sizeof(name), "%s/ino.%lu.%lu", shadow, (unsigned long)st.st_dev,
		 (unsigned long)st.st_ino);
	real_unlink(name);
}

static int open_common(int dirfd, const char *path, int flags, mode_t mode)
{
	int creating = 0, fd;
	struct stat st;

	if (real_open == NULL)
		load();
	if ((flags & O_CREAT) && dirfd == AT_FDCWD && in_dir(path, NULL) &&
	    lstat(path, &st) != 0) {
		creating = 1;
		if (event("create", path, 1))
			return fail_eio();
	}
	fd = dirfd == AT_FDCWD ? real_open(path, flags, mode) : real_openat(dirfd, path, flags, mode);
	if (creating && fd >= 0) {
		pthread_mutex_lock(&mu);
		forget_content(fd);
		pthread_mutex_unlock(&mu);
		event("create", path, 0);
	}
	return fd;
}

#define MODE_ARG(flags, mode)                                  \
	do {                                                   \
		if ((flags) & (O_CREAT | O_TMPFILE)) {         \
			va_list ap;                            \
			va_start(ap, flags);                   \
			mode = (mode_t)va_arg(ap, int);        \
			va_end(ap);                            \
		}                                              \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return open_common(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return open_common(AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return open_common(path[0] == '/' ? AT_FDCWD : dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return open_common(path[0] == '/' ? AT_FDCWD : dirfd, path, flags, mode);
}

int rename(const char *from, const char *to)
{
	int hit, r;

	if (real_rename == NULL)
		load();
	hit = in_dir(from, NULL) || in_dir(to, NULL);
	if (hit && event("rename", from, 1))
		return fail_eio();
	r = real_rename(from, to);
	if (hit)
		event("rename", from, 0);
	return r;
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	if (real_renameat == NULL)
		load();
	if (fromfd == AT_FDCWD && tofd == AT_FDCWD)
		return rename(from, to);
	return real_renameat(fromfd, from, tofd, to);
}

int unlink(const char *path)
{
	int hit, r;

	if (real_unlink == NULL)
		load();
	hit = in_dir(path, NULL);
	if (hit && event("unlink", path, 1))
		return fail_eio();
	r = real_unlink(path);
	if (hit)
		event("unlink", path, 0);
	return r;
}

int unlinkat(int dirfd, const char *path, int flags)
{
	if (real_unlinkat == NULL)
		load();
	if (dirfd == AT_FDCWD && flags == 0)
		return unlink(path);
	return real_unlinkat(dirfd, path, flags);
}

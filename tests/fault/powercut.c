/*
 * powercut.c: an LD_PRELOAD shim for tests only: a power cut, for the
 * files of one directory tree (PGMIRROR_CUT_DIR and every directory under
 * it, such as a mirror's directory with its feed in a subdirectory).
 *
 * A power cut keeps, of each file, what was last synced, and of each
 * directory, the names it had when it was last synced; everything else is
 * gone. The shim keeps that durable state beside the tree, in
 * PGMIRROR_CUT_SHADOW: "ino.DEV.INO", the content of a file as its last
 * fsync()/fdatasync() found it, and "names", the names of every directory
 * as its last sync found them: "DEV.INO PATH" for a file, "dir PATH" for a
 * directory, PATH relative to the top (a name in a subdirectory survives
 * only when every directory on its way does). A file made anew (open()
 * with O_CREAT, or fopen() "w" or "a") has no durable content yet,
 * whatever an earlier file of the same inode number had; a directory
 * made anew (mkdir()) has no durable names yet. The state lasts across
 * runs;
 * tests/integration/powercut.py makes it (settle) and puts the tree back
 * to it after a cut (rewind).
 *
 * The cut: the Nth event (PGMIRROR_CUT_NTH) of the kind PGMIRROR_CUT_OP
 * names kills the process with SIGKILL, before the event, or after it with
 * PGMIRROR_CUT_AFTER=1; or the first event PGMIRROR_CUT_MS milliseconds
 * after the start. Events, on the tree's files: "sync" (fsync or
 * fdatasync of a file), "dirsync" (of a directory), "rename", "unlink",
 * "create" (open with O_CREAT of a file not there before), or "any" of
 * them; PGMIRROR_CUT_MATCH limits them to paths that end so. A line on
 * stderr names the event. PGMIRROR_CUT_COUNT names a file where the
 * process, when it exits, writes how many events of each kind it met
 * ("KIND N" lines; a run with no cut counts the moments a cut can take).
 * A cut without a rewind is a kill -9 at that event. PGMIRROR_CUT_TRACE=1
 * writes a line on stderr for every event (of the kind, and the path) that
 * the count of PGMIRROR_CUT_NTH meets: "powercut: event N KIND PATH".
 *
 * PGMIRROR_CUT_EIO=1 makes the cut's event fail with EIO instead (before
 * it happens), and the process go on: a full or failing disk.
 *
 * PGMIRROR_CUT_NOSYNC=1 turns fsync() and fdatasync() of the tree's files
 * and directories into no-ops that sync nothing, as a disk that lies about
 * its syncs: a cut must then find loss. PGMIRROR_CUT_NOSYNC_MATCH limits
 * that to paths that end so.
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
static size_t dirlen;
static const char *op, *match, *nosync_match;
static long nth, seen, cut_ms;
/* events of each kind met, for PGMIRROR_CUT_COUNT */
static const char *const kinds[] = {"sync", "dirsync", "rename", "unlink", "create"};
static long counts[5];
static int after, nosync, eio, trace, ready;
static struct timespec started;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_mkdir)(const char *, mode_t);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);

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
	*(void **)&real_mkdir = dlsym(RTLD_NEXT, "mkdir");
	*(void **)&real_fopen = dlsym(RTLD_NEXT, "fopen");
	*(void **)&real_fopen64 = dlsym(RTLD_NEXT, "fopen64");
	if (d == NULL || s == NULL || realpath(d, dir) == NULL || realpath(s, shadow) == NULL)
		return;
	dirlen = strlen(dir);
	op = getenv("PGMIRROR_CUT_OP");
	match = getenv("PGMIRROR_CUT_MATCH");
	nth = getenv("PGMIRROR_CUT_NTH") ? strtol(getenv("PGMIRROR_CUT_NTH"), NULL, 10) : 0;
	cut_ms = getenv("PGMIRROR_CUT_MS") ? strtol(getenv("PGMIRROR_CUT_MS"), NULL, 10) : -1;
	after = getenv("PGMIRROR_CUT_AFTER") != NULL && strcmp(getenv("PGMIRROR_CUT_AFTER"), "1") == 0;
	nosync_match = getenv("PGMIRROR_CUT_NOSYNC_MATCH");
	nosync = getenv("PGMIRROR_CUT_NOSYNC") != NULL &&
		 strcmp(getenv("PGMIRROR_CUT_NOSYNC"), "1") == 0;
	eio = getenv("PGMIRROR_CUT_EIO") != NULL && strcmp(getenv("PGMIRROR_CUT_EIO"), "1") == 0;
	trace = getenv("PGMIRROR_CUT_TRACE") != NULL &&
		strcmp(getenv("PGMIRROR_CUT_TRACE"), "1") == 0;
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

/* Whether the real path real is the tree's top or inside it. */
static int under(const char *real)
{
	return strncmp(real, dir, dirlen) == 0 && (real[dirlen] == '\0' || real[dirlen] == '/');
}

/* Whether path (absolute, or relative to the working directory) names a
 * file in the tree (its directory is the top or under it); *base its last
 * part. */
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
	if (under(buf))
		return 1;
	/* a relative or unresolved directory part: compare its real path */
	{
		char real[PATH_MAX];

		return realpath(buf, real) != NULL && under(real);
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
		if (trace)
			fprintf(stderr, "powercut: event %ld %s %s\n", seen, what, path);
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
 * temporary name, so that a cut never leaves half a copy). A descriptor
 * opened for writing only is read through a descriptor of its own on the
 * same file. */
static void keep_content(int fd, const struct stat *st)
{
	char tmp[PATH_MAX + 80], name[PATH_MAX + 64], buf[1 << 16];
	off_t at = 0;
	int out, in = -1, mode = fcntl(fd, F_GETFL);

	if (mode >= 0 && (mode & O_ACCMODE) == O_WRONLY) {
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		in = real_open(self, O_RDONLY | O_CLOEXEC);
		if (in < 0)
			return;
		fd = in;
	}

	snprintf(name, sizeof(name), "%s/ino.%lu.%lu", shadow, (unsigned long)st->st_dev,
		 (unsigned long)st->st_ino);
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	out = real_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	while (out >= 0) {
		ssize_t n = pread(fd, buf, sizeof(buf), at);

		if (n <= 0)
			break;
		if (write(out, buf, (size_t)n) != n)
			break;
		at += n;
	}
	if (in >= 0)
		close(in);
	if (out >= 0) {
		close(out);
		real_rename(tmp, name);
	}
}

/* The path of real (under the tree) relative to its top: "" for the top. */
static const char *rel_of(const char *real)
{
	return real[dirlen] == '/' ? real + dirlen + 1 : real + dirlen;
}

/* Whether the names line (after its key) names an entry of directory rel
 * (within: or anything below it). */
static int line_in(const char *path, const char *rel, int within)
{
	size_t n = strlen(rel);

	if (within)
		return strncmp(path, rel, n) == 0 && path[n] == '/';
	if (n == 0)
		return strchr(path, '/') == NULL;
	return strncmp(path, rel, n) == 0 && path[n] == '/' && strchr(path + n + 1, '/') == NULL;
}

/* Rewrites shadow/names: the lines of entries of directory rel (within:
 * of anything below it) dropped, and, when d is not NULL, the entries d
 * lists now added. */
static void rewrite_names(const char *rel, int within, DIR *d)
{
	char tmp[PATH_MAX + 16], name[PATH_MAX + 16], line[2 * PATH_MAX];
	struct dirent *e;
	FILE *in, *f;

	snprintf(name, sizeof(name), "%s/names", shadow);
	snprintf(tmp, sizeof(tmp), "%s/names.tmp", shadow);
	f = fopen(tmp, "w");
	if (f == NULL)
		return;
	in = fopen(name, "r");
	while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
		char *path = strchr(line, ' ');

		if (path != NULL && !line_in(path + 1, rel, within))
			fputs(line, f);
	}
	if (in != NULL)
		fclose(in);
	while (d != NULL && (e = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode))
			fprintf(f, "%lu.%lu %s%s%s\n", (unsigned long)st.st_dev,
				(unsigned long)st.st_ino, rel, *rel ? "/" : "", e->d_name);
		else if (S_ISDIR(st.st_mode))
			fprintf(f, "dir %s%s%s\n", rel, *rel ? "/" : "", e->d_name);
	}
	fclose(f);
	real_rename(tmp, name);
}

/* The names of directory real (the top or under it) as they are now. */
static void keep_names(const char *real)
{
	DIR *d = opendir(real);

	if (d == NULL)
		return;
	rewrite_names(rel_of(real), 0, d);
	closedir(d);
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
	if (isdir ? !under(path) : !S_ISREG(st.st_mode) || !in_dir(path, NULL))
		return real(fd);
	if (event(isdir ? "dirsync" : "sync", path, 1))
		return fail_eio();
	if (nosync && (nosync_match == NULL || ends_with(path, nosync_match))) {
		event(isdir ? "dirsync" : "sync", path, 0);
		return 0;
	}
	r = real(fd);
	if (r == 0) {
		pthread_mutex_lock(&mu);
		if (isdir)
			keep_names(path);
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

/* fopen() opens through the C library's own open, which this shim does
 * not see: a file it makes ("w", "a": the hub's .hub/retired) is made
 * anew all the same, and must not take the durable content an earlier
 * file of its inode number left in the shadow. */
static FILE *fopen_common(FILE *(*real)(const char *, const char *), const char *path,
			  const char *mode)
{
	int creating = 0;
	struct stat st;
	FILE *f;

	if ((strchr(mode, 'w') != NULL || strchr(mode, 'a') != NULL) && in_dir(path, NULL) &&
	    lstat(path, &st) != 0) {
		creating = 1;
		if (event("create", path, 1)) {
			errno = EIO;
			return NULL;
		}
	}
	f = real(path, mode);
	if (creating && f != NULL) {
		pthread_mutex_lock(&mu);
		forget_content(fileno(f));
		pthread_mutex_unlock(&mu);
		event("create", path, 0);
	}
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	if (real_fopen == NULL)
		load();
	return fopen_common(real_fopen, path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	if (real_fopen64 == NULL)
		load();
	return fopen_common(real_fopen64, path, mode);
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

/* A directory made anew in the tree holds no durable name yet. */
int mkdir(const char *path, mode_t mode)
{
	char real[PATH_MAX];
	int r;

	if (real_mkdir == NULL)
		load();
	r = real_mkdir(path, mode);
	if (r == 0 && in_dir(path, NULL) && realpath(path, real) != NULL && under(real) &&
	    real[dirlen] == '/') {
		pthread_mutex_lock(&mu);
		rewrite_names(rel_of(real), 1, NULL);
		pthread_mutex_unlock(&mu);
	}
	return r;
}

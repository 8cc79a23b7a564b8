/*
 * mirror_check.c: whether the mirror file is sound, and setting a damaged
 * one aside.
 *
 * SQLite reports damage in whatever statement meets it: SQLITE_CORRUPT (a
 * page that makes no sense), SQLITE_NOTADB (a header that does not), or an
 * I/O error reading the file (a failing card). Every such report of the
 * process goes through SQLite's error log (SQLITE_CONFIG_LOG, set up with
 * the library in mirror.c), which raises a flag the run reads after any
 * failure (mirror_damage_seen()): one place, whatever step failed.
 *
 * The integrity check runs on a read-only connection of its own: it holds
 * back neither the writer (WAL mode: a reader never blocks it) nor readers.
 * A service runs it in a thread of its own (MirrorCheck), so the stream is
 * never held back either.
 *
 * A file SQLite cannot read at all may be someone else's. It was a mirror
 * when it (or its -wal) still holds the catalog entry of pgmirror_state:
 * SQLite stores that record's type, name and table name side by side, as
 * "tablepgmirror_statepgmirror_state", which no text file or other
 * database holds by chance.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mirror_internal.h"

/* the primary code of the first report of damage; 0: none */
static atomic_int damage_code;

bool mirror_is_damage_code(int code)
{
	switch (code & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return true;
	case SQLITE_IOERR:
#ifdef SQLITE_IOERR_CORRUPTFS /* SQLite 3.34 */
		if (code == SQLITE_IOERR_CORRUPTFS)
			return true;
#endif
		return code == SQLITE_IOERR_READ || code == SQLITE_IOERR_SHORT_READ;
	default:
		return false;
	}
}

void mirror_on_sqlite_log(void *arg, int code, const char *msg)
{
	int none = 0;

	(void)arg;
	(void)msg;
	if (mirror_is_damage_code(code))
		(void)atomic_compare_exchange_strong(&damage_code, &none, code);
}

const char *mirror_damage_seen(void)
{
	int code = damage_code;

	return code != 0 ? sqlite3_errstr(code) : NULL;
}

void mirror_damage_forget(void)
{
	damage_code = 0;
}

#define MIRROR_MARK "tablepgmirror_statepgmirror_state"

/* Whether the file open as fd holds MIRROR_MARK anywhere (read with
 * pread(), so the caller's descriptor may be the mirror's own). */
static bool fd_has_mark(int fd)
{
	enum { CHUNK = 1 << 20 };
	size_t marklen = strlen(MIRROR_MARK), have = 0;
	char *buf = xmalloc(CHUNK + marklen);
	off_t at = 0;
	bool found = false;

	for (;;) {
		ssize_t n = pread(fd, buf + have, CHUNK, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		at += n;
		have += (size_t)n;
		if (memmem(buf, have, MIRROR_MARK, marklen) != NULL) {
			found = true;
			break;
		}
		/* keep the tail: the mark may span two reads */
		if (have >= marklen) {
			memmove(buf, buf + have - (marklen - 1), marklen - 1);
			have = marklen - 1;
		}
	}
	free(buf);
	return found;
}

/*
 * Whether the file at path holds MIRROR_MARK. Never while a connection of
 * this process has the file open: closing any descriptor of a file drops
 * the process's POSIX locks on it, SQLite's too (mirror.c).
 */
static bool file_has_mark(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found;

	if (fd < 0)
		return false;
	found = fd_has_mark(fd);
	close(fd);
	return found;
}

bool mirror_file_was_mirror(const char *path)
{
	char *wal = xasprintf("%s-wal", path);
	bool found = file_has_mark(path) || file_has_mark(wal);

	free(wal);
	return found;
}

bool mirror_was_mirror(const Mirror *m)
{
	/* SQLite takes no POSIX lock on the -wal: its descriptor may close */
	char *wal = xasprintf("%s-wal", m->path);
	bool found = fd_has_mark(m->lock_fd) || file_has_mark(wal);

	free(wal);
	return found;
}

/* Appends a line of what the check found (one line of "; "s). */
static void add_found(sqlite3_str *s, const char *line)
{
	if (sqlite3_str_length(s) > 0)
		sqlite3_str_appendall(s, "; ");
	sqlite3_str_appendall(s, line);
}

/*
 * The integrity check on db; *found the result (malloc'd): "ok", or the
 * problems SQLite listed (at most 20) and the error it stopped with, if
 * any, on one line.
 */
static MirrorCheckResult check_db(sqlite3 *db, char **found)
{
	sqlite3_stmt *q = NULL;
	sqlite3_str *s = sqlite3_str_new(NULL);
	MirrorCheckResult res = MIRROR_CHECK_SOUND;
	char *text;
	int rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check(20)", -1, &q, NULL);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		if ((rc = sqlite3_step(q)) != SQLITE_ROW)
			break;
		const char *line = (const char *)sqlite3_column_text(q, 0);

		if (line == NULL || strcmp(line, "ok") != 0) {
			res = MIRROR_CHECK_DAMAGED;
			/* the heading of the main database's list says nothing */
			if (line == NULL || strncmp(line, "*** in database main", 20) != 0)
				add_found(s, line ? line : "(null)");
		}
	}
	if (rc != SQLITE_DONE) {
		int code = sqlite3_extended_errcode(db);

		res = mirror_is_damage_code(code) ? MIRROR_CHECK_DAMAGED : MIRROR_CHECK_FAILED;
		add_found(s, sqlite3_errmsg(db));
	}
	sqlite3_finalize(q);
	if (res == MIRROR_CHECK_SOUND)
		sqlite3_str_appendall(s, "ok");
	text = sqlite3_str_finish(s);
	*found = xstrdup(text ? text : "out of memory");
	sqlite3_free(text);
	return res;
}

/* A read-only connection of the check's own; NULL with *found set. */
static sqlite3 *open_for_check(const char *path, char **found)
{
	sqlite3 *db = NULL;

	mirror_library_init();
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		*found = xstrdup(db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, 10000);
	/*
	 * The check looks up every row in each of its table's indexes: with
	 * SQLite's default cache (2 MB) it reads the index pages again and
	 * again, each a system call (a 640 MB mirror: 14 s of system time,
	 * 1.4 s with 64 MB). Not mmap: a read error there is a SIGBUS.
	 */
	(void)sqlite3_exec(db, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
	return db;
}

MirrorCheckResult mirror_check_file(const char *path, char **found)
{
	sqlite3 *db = open_for_check(path, found);
	MirrorCheckResult res;

	if (db == NULL)
		return MIRROR_CHECK_FAILED;
	res = check_db(db, found);
	sqlite3_close(db);
	return res;
}

/* The check in a thread of its own (a service's). */
struct MirrorCheck {
	pthread_t thread;
	pthread_mutex_t lock;    /* db, for sqlite3_interrupt() */
	sqlite3 *db;
	char *path;
	atomic_bool done;
	bool joined;             /* mirror_check_done() took the result */
	MirrorCheckResult res;
	char *found;
	int64_t started;         /* mono_usecs() */
};

static void *check_main(void *arg)
{
	MirrorCheck *c = arg;
	sqlite3 *db = open_for_check(c->path, &c->found);

	if (db == NULL)
		c->res = MIRROR_CHECK_FAILED;
	else {
		pthread_mutex_lock(&c->lock);
		c->db = db;
		pthread_mutex_unlock(&c->lock);
		c->res = check_db(db, &c->found);
		pthread_mutex_lock(&c->lock);
		c->db = NULL;
		pthread_mutex_unlock(&c->lock);
		sqlite3_close(db);
	}
	c->done = true;
	return NULL;
}

MirrorCheck *mirror_check_start(const char *path)
{
	MirrorCheck *c = xcalloc(1, sizeof(*c));

	c->path = xstrdup(path);
	c->started = mono_usecs();
	pthread_mutex_init(&c->lock, NULL);
	if (thread_start_quiet(&c->thread, check_main, c) != 0) {
		pthread_mutex_destroy(&c->lock);
		free(c->path);
		free(c);
		return NULL;
	}
	return c;
}

bool mirror_check_done(MirrorCheck *c, MirrorCheckResult *res, char **found,
		       int64_t *usecs)
{
	if (!c->done)
		return false;
	pthread_join(c->thread, NULL);
	c->joined = true;
	*res = c->res;
	*found = c->found;
	c->found = NULL;
	*usecs = mono_usecs() - c->started;
	return true;
}

void mirror_check_free(MirrorCheck *c)
{
	if (c == NULL)
		return;
	if (!c->joined) {
		pthread_mutex_lock(&c->lock);
		if (c->db != NULL)
			sqlite3_interrupt(c->db);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
	}
	pthread_mutex_destroy(&c->lock);
	free(c->found);
	free(c->path);
	free(c);
}

bool mirror_check_due(Mirror *m, int max_age_secs, bool *due)
{
	sqlite3_stmt *q = mirror_prepare(m,
		"SELECT count(*) FROM pgmirror_state WHERE id = 1 AND (last_check_time IS NULL "
		"OR last_check_time < datetime('now', '-' || ?1 || ' seconds'))", false);
	bool ok = false;

	*due = false;
	if (q == NULL)
		return false;
	sqlite3_bind_int(q, 1, max_age_secs);
	if (sqlite3_step(q) == SQLITE_ROW) {
		*due = sqlite3_column_int(q, 0) > 0;
		ok = true;
	} else
		errbuf_set(&m->err, "could not read pgmirror_state from \"%s\": %s", m->path,
			  sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return ok;
}

/* Removes path+suffix; false (errno set) unless it is gone. */
static bool remove_one(const char *path, const char *suffix)
{
	char *name = xasprintf("%s%s", path, suffix);
	bool ok = unlink(name) == 0 || errno == ENOENT;

	free(name);
	return ok;
}

/* Renames from+suffix to to+suffix2 if it exists. */
static bool rename_one(const char *from, const char *suffix, const char *to,
		       const char *suffix2)
{
	char *a = xasprintf("%s%s", from, suffix), *b = xasprintf("%s%s", to, suffix2);
	bool ok = rename(a, b) == 0 || errno == ENOENT;

	free(a);
	free(b);
	return ok;
}

void mirror_remove_files(const char *path)
{
	static const char *const suffixes[] = {"-wal", "-shm", "-journal", ""};

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		(void)remove_one(path, suffixes[i]);
}

bool mirror_set_aside(const char *path, const char *fresh, char **errmsg)
{
	char *aside = xasprintf("%s.damaged", path);
	struct stat st;
	bool ok;

	/*
	 * The -wal goes first: a database file without its WAL is no worse,
	 * but a WAL left behind would be read into whatever file is made
	 * under the name next.
	 */
	/* the new file is for the same readers: the old one's mode and group */
	if (fresh != NULL && stat(path, &st) == 0) {
		(void)chmod(fresh, st.st_mode & 07777);
		if (chown(fresh, (uid_t)-1, st.st_gid) != 0)
			log_debug("could not give \"%s\" the group of \"%s\": %s", fresh, path,
				  strerror(errno));
	}
	ok = remove_one(aside, "-wal") && remove_one(aside, "-shm") &&
	     rename_one(path, "-wal", aside, "-wal") && remove_one(path, "-shm") &&
	     remove_one(path, "-journal") && rename_one(path, "", aside, "") &&
	     (fresh == NULL || rename(fresh, path) == 0);
	*errmsg = ok ? NULL : xasprintf("could not set mirror \"%s\" aside as \"%s\": %s", path,
					aside, strerror(errno));
	free(aside);
	return ok;
}

/*
 * A header SQLite cannot read (NOTADB) hides a file whose pages may all be
 * sound. The header says little that pgmirror's files do not share: the
 * page size (SQLite's default unless the -wal says another), UTF-8, the
 * schema format of today's SQLite. A copy with such a header, in rollback
 * mode and with no page count (taken from the file's size) or freelist,
 * reads as the mirror did, short of what only its -wal held.
 */
static void write_header(unsigned char h[100], int page_size)
{
	memset(h, 0, 100);
	memcpy(h, "SQLite format 3", 16);
	h[16] = (unsigned char)((page_size >> 8) & 0xff); /* 65536 is stored as 1 */
	h[17] = (unsigned char)(page_size == 65536 ? 1 : page_size & 0xff);
	h[18] = h[19] = 1;       /* rollback journal: the copy has no -wal */
	h[21] = 64;              /* payload fractions, fixed by the format */
	h[22] = 32;
	h[23] = 32;
	h[43] = 1;               /* schema cookie */
	h[47] = 4;               /* schema format */
	h[59] = 1;               /* UTF-8 */
}

/* The page size the -wal of path names (its header), or 0. */
static int wal_page_size(const char *path)
{
	char *wal = xasprintf("%s-wal", path);
	unsigned char h[12];
	int fd = open(wal, O_RDONLY | O_CLOEXEC), ps = 0;

	free(wal);
	if (fd < 0)
		return 0;
	if (read(fd, h, sizeof(h)) == (ssize_t)sizeof(h))
		ps = (h[8] << 24) | (h[9] << 16) | (h[10] << 8) | h[11];
	close(fd);
	return ps;
}

/* Copies the file open as in (read with pread(): the mirror's own
 * descriptor) to to, made anew; false with errno set. */
static bool copy_file(int in, const char *to)
{
	enum { CHUNK = 1 << 20 };
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	char *buf = NULL;
	off_t at = 0;
	bool ok = false;

	if (out < 0)
		return false;
	buf = xmalloc(CHUNK);
	for (;;) {
		ssize_t n = pread(in, buf, CHUNK, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto done;
		if (n == 0)
			break;
		at += n;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0 && errno != EINTR)
				goto done;
			w += k > 0 ? k : 0;
		}
	}
	ok = true;
done:
	free(buf);
	close(out);
	return ok;
}

bool mirror_header_unreadable(const Mirror *m)
{
	return m != NULL && m->db != NULL && sqlite3_errcode(m->db) == SQLITE_NOTADB;
}

Mirror *mirror_open_repaired(const Mirror *damaged, const char *copy)
{
	static const int sizes[] = {4096, 1024, 2048, 8192, 16384, 32768, 65536, 512};
	int from_wal = wal_page_size(damaged->path);

	if (!copy_file(damaged->lock_fd, copy)) {
		mirror_remove_files(copy);
		return NULL;
	}
	for (int i = -1; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
		int ps = i < 0 ? from_wal : sizes[i];
		unsigned char h[100];
		Mirror *m = NULL;
		char *err = NULL;
		MirrorState st;
		int fd;
		bool ok;

		if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0)
			continue;
		write_header(h, ps);
		fd = open(copy, O_WRONLY | O_CLOEXEC);
		ok = fd >= 0 && pwrite(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h);
		if (fd >= 0)
			close(fd);
		if (ok && mirror_open(copy, MIRROR_READ, &m, &err) == MIRROR_OPEN_OK &&
		    mirror_read_state(m, &st) && st.present) {
			mirror_state_clear(&st);
			free(err);
			return m;
		}
		mirror_close(m);
		free(err);
	}
	mirror_damage_forget();
	mirror_remove_files(copy);
	return NULL;
}

/*
 * mirror_check.c: whether the mirror file is sound (SQLite's integrity
 * check), and a damaged file's settings read through a copy with its
 * header made anew; above mirror.c, whose open it uses. Damage that
 * statements report, and setting a file aside, are in mirror_damage.c.
 *
 * The integrity check runs on a read-only connection of its own: it holds
 * back neither the writer (WAL mode: a reader never blocks it) nor readers.
 * A service runs it in a thread of its own (MirrorCheck), so the stream is
 * never held back either.
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

/* Appends a line of what the check found (one line of "; "s). */
static void add_found(sqlite3_str *s, const char *line)
{
	if (sqlite3_str_length(s) > 0)
		sqlite3_str_appendall(s, "; ");
	sqlite3_str_appendall(s, line);
}

/*
 * Appends what one row of the check says. A row may hold several lines
 * (SQLite puts a list of problems in one row, under a heading naming the
 * database): each goes on as a line of its own, the heading, which says
 * nothing, left out.
 */
static void add_found_lines(sqlite3_str *s, const char *text)
{
	while (*text != '\0') {
		size_t n = strcspn(text, "\n");

		if (n > 0 && strncmp(text, "*** in database ", 16) != 0)
			sqlite3_str_appendf(s, "%s%.*s", sqlite3_str_length(s) > 0 ? "; " : "",
					    (int)n, text);
		text += n;
		if (*text == '\n')
			text++;
	}
}

/*
 * The integrity check on db; *found the result (malloc'd): "ok", or the
 * problems SQLite listed (at most 20) and the error it stopped with, if
 * any, on one line; then, when SQLite found none, the values of
 * pgmirror's own tables that pgmirror never writes (mirror_own.c).
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
			add_found_lines(s, line ? line : "(null)");
		}
	}
	if (rc != SQLITE_DONE) {
		int code = sqlite3_extended_errcode(db);
		const char *msg = sqlite3_errmsg(db);

		res = mirror_is_damage_code(code) || mirror_header_error(db) ? MIRROR_CHECK_DAMAGED
									     : MIRROR_CHECK_FAILED;
		add_found(s, msg != NULL && *msg != '\0' ? msg : sqlite3_errstr(code));
	}
	if (res == MIRROR_CHECK_DAMAGED && sqlite3_str_length(s) == 0)
		add_found(s, "damaged, with no detail from SQLite");
	sqlite3_finalize(q);
	/* SQLite finds its own kind of damage; what it cannot see (a value in
	 * pgmirror's own tables that pgmirror never writes) is pgmirror's */
	if (res == MIRROR_CHECK_SOUND) {
		int n = mirror_own_sweep(db, s, 20);

		res = n > 0 ? MIRROR_CHECK_DAMAGED : n < 0 ? MIRROR_CHECK_FAILED : res;
	}
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
	char *name = mirror_file_name(path);
	int rc;

	mirror_library_init();
	rc = name != NULL ? sqlite3_open_v2(name, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
					    NULL) : SQLITE_NOMEM;
	sqlite3_free(name);
	if (rc != SQLITE_OK) {
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
	/* a stored time that is not one (damage, a hand edit) is none: as
	 * text it compares above every time, and would hold the check off */
	sqlite3_stmt *q = mirror_prepare(m,
		"SELECT count(*) FROM pgmirror_state WHERE id = 1 AND "
		"(julianday(last_check_time) IS NULL "
		"OR julianday(last_check_time) < julianday('now', '-' || ?1 || ' seconds') "
		"OR (last_check_result IS NOT 'ok' AND (julianday(last_rebuild_time) IS NULL OR "
		"last_check_time > last_rebuild_time)))", false);
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
 * descriptor) to to, made anew (what was there before, with its -wal and
 * -shm, removed; never written through a symlink someone put there);
 * false with errno set. */
static bool copy_file(int in, const char *to)
{
	enum { CHUNK = 1 << 20 };
	int out;
	char *buf = NULL;
	off_t at = 0;
	bool ok = false;

	mirror_remove_files(to);
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
	return m != NULL && mirror_header_error(m->db);
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
		fd = open(copy, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
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

/*
 * mirror_damage.c: damage SQLite reports, below the mirror's open: the
 * flag SQLite's error log raises for the process (mirror_damage_seen()),
 * whether a file SQLite cannot read was a mirror, and the file operations
 * on a mirror's files (removing them, setting a damaged one aside).
 *
 * SQLite reports damage in whatever statement meets it: SQLITE_CORRUPT (a
 * page that makes no sense), SQLITE_NOTADB (a header that does not), or an
 * I/O error reading the file (a failing card). Every such report of the
 * process goes through SQLite's error log (SQLITE_CONFIG_LOG, set up with
 * the library in mirror.c), which raises a flag the run reads after any
 * failure: one place, whatever step failed. A reader of pgmirror's own
 * tables that finds what pgmirror never writes there (mirror_own.c) raises
 * the same flag, with what it found.
 *
 * A file SQLite cannot read at all may be someone else's. It was a mirror
 * when its header has pgmirror's application ID (mirror_internal.h), or it
 * (or its -wal) still holds the catalog entry of pgmirror_state:
 * SQLite stores that record's type, name and table name side by side, as
 * "tablepgmirror_statepgmirror_state", which no text file or other
 * database holds by chance.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mirror_internal.h"
#include "pgmirror/durable.h"

/* the primary code of the first report of damage; 0: none; DAMAGE_OWN:
 * pgmirror's own tables hold what pgmirror never writes (damage_text) */
static atomic_int damage_code;
#define DAMAGE_OWN (-1)
static char damage_text[300];

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

bool mirror_header_error(sqlite3 *db)
{
	/* SQLite's words for a schema format above the highest it knows (4):
	 * no SQLite since 2006 makes another, so in a mirror it is damage */
	return db != NULL && (sqlite3_errcode(db) == SQLITE_NOTADB ||
			      (sqlite3_errcode(db) == SQLITE_ERROR &&
			       strcmp(sqlite3_errmsg(db), "unsupported file format") == 0));
}

void mirror_on_sqlite_log(void *arg, int code, const char *msg)
{
	int none = 0;

	(void)arg;
	(void)msg;
	if (mirror_is_damage_code(code))
		(void)atomic_compare_exchange_strong(&damage_code, &none, code);
}

void mirror_damage_note(const char *what)
{
	int none = 0;

	/* read by this thread only: the check's thread reports what it finds
	 * in its result, and SQLite's log only sets a code */
	if (damage_code != 0)
		return;
	snprintf(damage_text, sizeof(damage_text), "%s", what);
	(void)atomic_compare_exchange_strong(&damage_code, &none, DAMAGE_OWN);
}

const char *mirror_damage_seen(void)
{
	int code = damage_code;

	return code == DAMAGE_OWN ? damage_text : code != 0 ? sqlite3_errstr(code) : NULL;
}

bool mirror_damage_own(void)
{
	return damage_code == DAMAGE_OWN;
}

void mirror_damage_forget(void)
{
	damage_code = 0;
}

#define MIRROR_MARK "tablepgmirror_statepgmirror_state"

/* Whether the SQLite header of the file open as fd has pgmirror's
 * application ID (mirror_internal.h), whatever the rest says. */
static bool fd_has_application_id(int fd)
{
	unsigned char id[4];
	ssize_t n;

	do
		n = pread(fd, id, sizeof(id), 68);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(id) &&
	       ((uint32_t)id[0] << 24 | (uint32_t)id[1] << 16 | (uint32_t)id[2] << 8 | id[3]) ==
		       MIRROR_APPLICATION_ID;
}

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
 * Whether the file at path holds MIRROR_MARK (or, header: has pgmirror's
 * application ID). Never while a connection of
 * this process has the file open: closing any descriptor of a file drops
 * the process's POSIX locks on it, SQLite's too (mirror.c).
 */
static bool file_has_mark(const char *path, bool header)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found;

	if (fd < 0)
		return false;
	found = (header && fd_has_application_id(fd)) || fd_has_mark(fd);
	close(fd);
	return found;
}

bool mirror_file_was_mirror(const char *path)
{
	char *wal = xasprintf("%s-wal", path);
	bool found = file_has_mark(path, true) || file_has_mark(wal, false);

	free(wal);
	return found;
}

bool mirror_was_mirror(const Mirror *m)
{
	/* SQLite takes no POSIX lock on the -wal: its descriptor may close */
	char *wal = xasprintf("%s-wal", m->path);
	bool found = fd_has_application_id(m->lock_fd) || fd_has_mark(m->lock_fd) ||
		     file_has_mark(wal, false);

	free(wal);
	return found;
}

/* Removes path+suffix; false (errno set) unless it is gone. The
 * directory is synced by the caller (durable.h). */
static bool remove_one(const char *path, const char *suffix)
{
	char *name = xasprintf("%s%s", path, suffix);
	bool ok = durable_unlink(name);

	free(name);
	return ok;
}

/*
 * Renames from+suffix to to+suffix2 if it exists, its data synced first.
 * A damaged file set aside (!keep) is synced where it can be: a failing
 * card that refuses it must not keep its mirror from being rebuilt.
 */
static bool rename_one(const char *from, const char *suffix, const char *to,
		       const char *suffix2, bool keep)
{
	char *a = xasprintf("%s%s", from, suffix), *b = xasprintf("%s%s", to, suffix2);
	bool moved, ok = keep ? durable_rename(a, b, &moved)
			      : ((void)durable_sync_file(a), rename(a, b) == 0 || errno == ENOENT);

	free(a);
	free(b);
	return ok;
}

/*
 * The -wal goes first, and its removal is durable before the file's: a
 * -wal that outlived its file under the name would be read into whatever
 * file is made under it next (SQLite replays any -wal whose frames check
 * out, whatever database they were written for).
 */
void mirror_remove_files(const char *path)
{
	static const char *const suffixes[] = {"-wal", "-shm", "-journal"};

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		(void)remove_one(path, suffixes[i]);
	(void)durable_sync_dir(path);
	if (remove_one(path, ""))
		(void)durable_sync_dir(path);
}

/* The new file (fresh) takes path's name, its -wal after it (kept,
 * checkpointed, when it was closed: mirror_share.c): a -wal never waits
 * under the name without its file; its -shm, which indexes it, is made
 * anew. Both synced before they take the names, the directory after. */
static bool take_name(const char *fresh, const char *path)
{
	return remove_one(path, "-shm") && remove_one(fresh, "-shm") &&
	       rename_one(fresh, "", path, "", true) && rename_one(fresh, "-wal", path, "-wal", true) &&
	       durable_sync_dir(path);
}

bool mirror_set_aside(const char *path, const char *fresh, char **errmsg)
{
	char *aside = xasprintf("%s.damaged", path);
	struct stat st;
	bool ok, owned;

	/* the new file is for the same readers: the old one's mode and group */
	if (fresh != NULL && stat(path, &st) == 0 && mirror_share_like(fresh, &st, &owned) != 0)
		log_debug("could not give \"%s\" the group of \"%s\": %s", fresh, path,
			  strerror(errno));
	/*
	 * The -wal goes first, and is gone from the name (the directory
	 * synced) before the file goes: a database file without its WAL is
	 * no worse, but a WAL left behind would be read into whatever file is
	 * made under the name next.
	 */
	ok = remove_one(aside, "-wal") && remove_one(aside, "-shm") &&
	     rename_one(path, "-wal", aside, "-wal", false) && remove_one(path, "-shm") &&
	     remove_one(path, "-journal") && durable_sync_dir(path) &&
	     rename_one(path, "", aside, "", false);
	ok = ok && (fresh != NULL ? take_name(fresh, path) : durable_sync_dir(path));
	*errmsg = ok ? NULL : xasprintf("could not set mirror \"%s\" aside as \"%s\": %s", path,
					aside, strerror(errno));
	free(aside);
	return ok;
}

/* Whether path+suffix exists (anything but "no such file" counts). */
static bool exists_one(const char *path, const char *suffix)
{
	char *name = xasprintf("%s%s", path, suffix);
	struct stat st;
	bool found = lstat(name, &st) == 0 || errno != ENOENT;

	free(name);
	return found;
}

bool mirror_finish_set_aside(const char *path, const char *fresh, bool *finished,
			     char **errmsg)
{
	int fd;
	bool ok = true;

	*finished = false;
	*errmsg = NULL;
	if (exists_one(path, "")) {
		/* killed between the new file's rename and its -wal's: the file
		 * took the name checkpointed, and its -wal is of no use once
		 * the file is durable (never moved to the name: it may as well
		 * be the -wal of a rebuild whose file went, and path the
		 * damaged file) */
		if (!exists_one(fresh, "") && (exists_one(fresh, "-wal") || exists_one(fresh, "-shm")) &&
		    durable_sync_file(path) && durable_sync_dir(path) && remove_one(fresh, "-wal") &&
		    remove_one(fresh, "-shm"))
			(void)durable_sync_dir(path);
		return true;
	}
	/* the damaged file (after its -wal) went aside, fresh did not come:
	 * unless path's -wal is there, which would be read into fresh */
	if (!exists_one(fresh, "") || !exists_one(path, ".damaged") || exists_one(path, "-wal"))
		return true;
	/* a rebuild in hand keeps it locked (mirror_open()) */
	fd = open(fresh, O_RDWR | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (fd >= 0)
			close(fd);
		return true;
	}
	ok = take_name(fresh, path);
	close(fd);
	if (!ok)
		*errmsg = xasprintf("could not rename \"%s\" to \"%s\": %s", fresh, path,
				    strerror(errno));
	*finished = ok;
	return ok;
}

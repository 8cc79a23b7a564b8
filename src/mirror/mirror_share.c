/*
 * mirror_share.c: readers in other accounts. A reader needs to read the
 * mirror file and SQLite's -wal and -shm beside it. SQLite gives the two
 * the mirror file's mode when it creates them, but their group is the
 * creator's (only a root process gives them the file's owner and group),
 * so a reader in the mirror's group could not open them; pgmirror gives
 * them the file's group and mode after opening and after each commit, so
 * a chgrp or chmod of the mirror reaches them while it runs.
 *
 * The two are kept when pgmirror closes the mirror (SQLite's persistent
 * WAL, emptied): without them, a reader that may not create files in the
 * directory could not open the mirror while pgmirror is stopped ("unable
 * to open database file"), and one that may made them its own, which
 * pgmirror could then not write ("attempt to write a readonly database").
 * Such files, made by a reader under its own account, are replaced before
 * SQLite opens the mirror when nobody has it open: SQLite keeps a read
 * lock on the database's shared byte range for as long as a connection is
 * open, which pgmirror takes for writing while it removes them. A reader
 * writes nothing into them, so they hold nothing; an -wal with content in
 * it is left alone, with what to do.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mirror_internal.h"

/* SQLite's lock bytes (os_unix.c): the pending byte, the reserved byte and
 * the shared range that follow it. */
#define LOCK_FIRST 0x40000000
#define LOCK_SIZE 512

static const char *const companions[] = {"-wal", "-shm"};

/* A user's (group false) or a group's name, or its number. */
static const char *id_name(bool group, unsigned id, char *buf, size_t n)
{
	const char *name = NULL;

	if (group) {
		struct group *gr = getgrgid((gid_t)id);

		name = gr ? gr->gr_name : NULL;
	} else {
		struct passwd *pw = getpwuid((uid_t)id);

		name = pw ? pw->pw_name : NULL;
	}
	if (name != NULL)
		return name;
	snprintf(buf, n, "%u", id);
	return buf;
}

#define user_name(uid, buf, n) id_name(false, (unsigned)(uid), buf, n)

/* True when name exists and pgmirror may not write it (st: its lstat). */
static bool is_foreign(const char *name, struct stat *st)
{
	int fd;

	if (lstat(name, st) != 0)
		return false;
	/* before SQLite opens the mirror: no lock of ours to lose by closing */
	fd = open(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EACCES || errno == EPERM || errno == ELOOP;
}

static bool set_lock(Mirror *m, short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = LOCK_FIRST,
			   .l_len = LOCK_SIZE};

	return fcntl(m->lock_fd, F_SETLK, &fl) == 0;
}

/* The error for a foreign companion pgmirror must not remove: what to run. */
static void set_keep_error(Mirror *m, const char *name, const struct stat *st)
{
	char ub[16], mb[16];

	errbuf_set(&m->err, "could not open mirror \"%s\": \"%s\" belongs to user %s, pgmirror "
		  "may not write it, and %s; as root, run: chown %s \"%s-wal\" \"%s-shm\"", m->path,
		  name, user_name(st->st_uid, ub, sizeof(ub)),
		  S_ISREG(st->st_mode) ? "it holds changes" : "it is not a plain file",
		  user_name(geteuid(), mb, sizeof(mb)), m->path, m->path);
}

bool mirror_share_mend(Mirror *m)
{
	char *names[2];
	struct stat st[2];
	bool foreign[2], ok = true, locked = false;
	char ub[16];
	int first = -1;

	for (int i = 0; i < 2; i++) {
		names[i] = xasprintf("%s%s", m->path, companions[i]);
		foreign[i] = is_foreign(names[i], &st[i]);
		if (!foreign[i])
			continue;
		if (first < 0)
			first = i;
		/* -wal comes first: a reader's holds nothing */
		if (ok && (!S_ISREG(st[i].st_mode) || (i == 0 && st[i].st_size > 0))) {
			set_keep_error(m, names[i], &st[i]);
			ok = false;
		}
	}
	if (first < 0)
		goto done;
	if (ok && !(locked = set_lock(m, F_WRLCK))) {
		errbuf_set(&m->err, "could not open mirror \"%s\": \"%s\" belongs to user %s, who "
			  "made it by opening the mirror while pgmirror was not running, and pgmirror "
			  "may not write it; that account has the mirror open now: close it, and "
			  "pgmirror replaces the file on its next start", m->path, names[first],
			  user_name(st[first].st_uid, ub, sizeof(ub)));
		ok = false;
	}
	for (int i = 0; i < 2 && ok; i++) {
		if (!foreign[i])
			continue;
		if (unlink(names[i]) != 0) {
			errbuf_set(&m->err, "could not open mirror \"%s\": \"%s\" belongs to user %s "
				  "and pgmirror may neither write nor remove it (%s); as root, remove "
				  "\"%s-wal\" and \"%s-shm\" while nothing has the mirror open", m->path,
				  names[i], user_name(st[i].st_uid, ub, sizeof(ub)), strerror(errno),
				  m->path, m->path);
			ok = false;
		} else
			log_warning("removed \"%s\", which user %s had made by opening the mirror "
				    "while pgmirror was not running and which pgmirror could not write; "
				    "SQLite makes it again", names[i],
				    user_name(st[i].st_uid, ub, sizeof(ub)));
	}
	if (locked)
		(void)set_lock(m, F_UNLCK);
done:
	free(names[0]);
	free(names[1]);
	return ok;
}

int mirror_share_like(const char *name, const struct stat *like, bool *owned)
{
	char self[48];
	struct stat st;
	int fd, rc = 0, saved;
	uid_t me = geteuid();

	*owned = false;
	/*
	 * What is looked at is what is changed: a descriptor of the file
	 * itself (never of what a symlink names), changed through it. An
	 * O_PATH one, since closing one open for reading or writing would
	 * drop the POSIX locks SQLite holds on the file (-shm).
	 */
	fd = open(name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid != me && me != 0))
		goto done;
	*owned = true;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((st.st_mode & 07777) != (like->st_mode & 07777))
		(void)chmod(self, like->st_mode & 07777);
	if (st.st_gid != like->st_gid &&
	    fchownat(fd, "", (uid_t)-1, like->st_gid, AT_EMPTY_PATH) != 0)
		rc = -1;
done:
	saved = errno; /* of fchownat(), for the caller's message */
	close(fd);
	errno = saved;
	return rc;
}

void mirror_share_keep_wal(Mirror *m)
{
	int on = 1;

	(void)sqlite3_file_control(m->db, "main", SQLITE_FCNTL_PERSIST_WAL, &on);
}

/*
 * After the open and after each commit: SQLite makes -wal at the first
 * write and keeps both files while the mirror is open (PERSIST_WAL), so
 * once both are there and done, a commit costs one fstat(): they are done
 * again only when the mirror file's mode or group changes.
 */
void mirror_share_files(Mirror *m)
{
	struct stat db, f;
	uid_t me;
	int present = 0;

	if (fstat(m->lock_fd, &db) != 0)
		return;
	if (m->share_done && db.st_mode == m->share_mode && db.st_gid == m->share_gid)
		return;
	me = geteuid();
	for (size_t i = 0; i < 2; i++) {
		char *name = xasprintf("%s%s", m->path, companions[i]);
		struct stat like = db;
		bool owned;

		like.st_mode &= 0777;
		present += lstat(name, &f) == 0;
		if (mirror_share_like(name, &like, &owned) != 0 && owned && !m->share_warned) {
			char ub[16], gb[16];
			const char *u = user_name(me, ub, sizeof(ub));
			const char *g = id_name(true, (unsigned)db.st_gid, gb, sizeof(gb));

			log_warning("could not give \"%s\" the group of mirror \"%s\" (%s): %s; "
				    "readers in that group cannot open the mirror: add user %s "
				    "to group %s (adduser %s %s), or keep the mirror in a "
				    "directory of group %s with the set-group-ID bit (chmod g+s)",
				    name, m->path, g, strerror(errno), u, g, u, g, g);
			m->share_warned = true;
		}
		free(name);
	}
	m->share_done = present == 2;
	m->share_mode = db.st_mode;
	m->share_gid = db.st_gid;
}

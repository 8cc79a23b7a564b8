/*
 * durable.c: syncs for a power cut (include/pgmirror/durable.h). pgmirror
 * creates, renames and removes the mirror's files itself only when it
 * makes a mirror, sets a damaged one aside or removes one that never
 * became a mirror; SQLite syncs what it writes inside the files, and the
 * directory when it creates a -wal, but not the names pgmirror changes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgmirror/durable.h"
#include "pgmirror/util.h"

/* fsync() of path opened with flags; a missing path is no error when
 * missing_ok. errno is kept from the step that failed. */
static bool sync_path(const char *path, int flags, bool missing_ok)
{
	int fd, r, saved;

	do
		fd = open(path, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return missing_ok && errno == ENOENT;
	r = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return r == 0;
}

bool durable_sync_dir(const char *path)
{
	char *copy = xstrdup(path);
	bool ok = sync_path(dirname(copy), O_RDONLY | O_DIRECTORY, false);
	int saved = errno;

	free(copy);
	errno = saved;
	return ok;
}

bool durable_sync_file(const char *path)
{
	return sync_path(path, O_RDONLY | O_NOFOLLOW, true);
}

bool durable_rename(const char *from, const char *to, bool *moved)
{
	*moved = false;
	if (!durable_sync_file(from))
		return false;
	if (rename(from, to) != 0)
		return errno == ENOENT;
	*moved = true;
	return true;
}

bool durable_unlink(const char *path)
{
	return unlink(path) == 0 || errno == ENOENT;
}

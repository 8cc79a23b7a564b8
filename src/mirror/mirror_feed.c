/*
 * mirror_feed.c: the mirror's side of a feed (docs/feed.md): a snapshot,
 * the mirror file as it stands, written to a file of its own from one
 * read transaction while a writer may go on.
 */
#include "config.h"

#include "mirror_internal.h"

bool mirror_snapshot_to(Mirror *m, const char *path)
{
	/* VACUUM INTO reads the file in one read transaction of its own and
	 * writes a compact copy; it cannot run inside another transaction */
	if (m->in_txn) {
		errbuf_set(&m->err, "could not write a snapshot of the mirror: a transaction "
			   "is open");
		return false;
	}
	return mirror_exec_owned(m, sqlite3_mprintf("VACUUM INTO %Q", path));
}

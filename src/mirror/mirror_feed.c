/*
 * mirror_feed.c: the mirror's side of a feed (docs/feed.md): pgmirror_feed's
 * row (which feed a hub writes or a device reads, and the last group the
 * mirror committed, written in that group's own transaction), and a
 * snapshot, the mirror file as it stands, written to a file of its own
 * from one read transaction while a writer may go on.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <unistd.h>

#include "mirror_internal.h"
#include "pgmirror/durable.h"

void mirror_feed_state_clear(MirrorFeedState *st)
{
	free(st->location);
	free(st->end_time);
	free(st->read_time);
	memset(st, 0, sizeof(*st));
}

/* Column i as a count: a non-negative integer (NULL: 0 when nullable). */
static bool column_count(sqlite3_stmt *q, int i, bool nullable, uint64_t *out)
{
	int type = sqlite3_column_type(q, i);

	*out = 0;
	if (type == SQLITE_NULL)
		return nullable;
	if (type != SQLITE_INTEGER || sqlite3_column_int64(q, i) < 0)
		return false;
	*out = (uint64_t)sqlite3_column_int64(q, i);
	return true;
}

static bool is_hex32(const unsigned char *s)
{
	if (s == NULL || strlen((const char *)s) != 32)
		return false;
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool mirror_feed_read(Mirror *m, MirrorFeedState *st)
{
	sqlite3_stmt *q;
	const unsigned char *role, *epoch, *lsn;
	const char *bad = NULL;
	bool ok = false;
	int rc;

	memset(st, 0, sizeof(*st));
	q = mirror_prepare(m, "SELECT role, location, epoch, feed_group, seq, end_group, "
			      "end_lsn, end_time, read_time, stale FROM pgmirror_feed WHERE id = 1",
			   false);
	if (q == NULL)
		return false;
	rc = sqlite3_step(q);
	if (rc == SQLITE_DONE) {
		ok = true;
		goto done;
	}
	if (rc != SQLITE_ROW) {
		errbuf_set(&m->err, "could not read pgmirror_feed from \"%s\": %s", m->path,
			   sqlite3_errmsg(m->db));
		goto done;
	}
	role = sqlite3_column_text(q, 0);
	epoch = sqlite3_column_text(q, 2);
	lsn = sqlite3_column_text(q, 6);
	st->present = true;
	st->hub = role != NULL && strcmp((const char *)role, "hub") == 0;
	st->location = mirror_column_dup(q, 1);
	st->end_time = mirror_column_dup(q, 7);
	st->read_time = mirror_column_dup(q, 8);
	st->stale = sqlite3_column_int64(q, 9) != 0;
	if (role == NULL || (!st->hub && strcmp((const char *)role, "device") != 0))
		bad = "role";
	else if (st->location == NULL)
		bad = "location";
	else if (!is_hex32(epoch))
		bad = "epoch";
	else if (!column_count(q, 3, false, &st->group))
		bad = "feed_group";
	else if (!column_count(q, 4, false, &st->seq))
		bad = "seq";
	else if (!column_count(q, 5, true, &st->end_group))
		bad = "end_group";
	else if (lsn != NULL && !lsn_parse((const char *)lsn, &st->end_lsn))
		bad = "end_lsn";
	if (bad != NULL) {
		errbuf_set(&m->err, "mirror \"%s\" has a damaged pgmirror_feed row (%s); start a "
			   "new mirror file", m->path, bad);
		mirror_feed_state_clear(st);
		goto done;
	}
	memcpy(st->epoch, epoch, 33);
	ok = true;
done:
	sqlite3_finalize(q);
	return ok;
}

bool mirror_feed_write(Mirror *m, const MirrorFeedState *st)
{
	char lsn[LSN_TEXT_SIZE], end[24] = "NULL";

	if (st->end_group > 0)
		snprintf(end, sizeof(end), "%" PRIu64, st->end_group);
	return mirror_exec_owned(m, sqlite3_mprintf(
		"INSERT OR REPLACE INTO pgmirror_feed (id, role, location, epoch, feed_group, seq, "
		"end_group, end_lsn, end_time, read_time, stale) VALUES (1, %Q, %Q, %Q, "
		"%" PRIu64 ", %" PRIu64 ", %s, %Q, %Q, %Q, %d)",
		st->hub ? "hub" : "device", st->location, st->epoch, st->group, st->seq,
		end,
		st->end_lsn != LSN_INVALID ? lsn_format(st->end_lsn, lsn) : NULL, st->end_time,
		st->read_time, st->stale ? 1 : 0));
}

bool mirror_feed_set_stale(Mirror *m)
{
	return mirror_exec(m, "UPDATE pgmirror_feed SET stale = 1 WHERE id = 1");
}

/* A statement the hub runs at every group, prepared once (*st). */
static sqlite3_stmt *cached(Mirror *m, sqlite3_stmt **st, const char *sql)
{
	if (*st == NULL)
		*st = mirror_prepare(m, sql, true);
	return *st;
}

bool mirror_feed_set_group(Mirror *m, uint64_t group)
{
	sqlite3_stmt *q = cached(m, &m->feed_grp,
				 "UPDATE pgmirror_feed SET feed_group = ? WHERE id = 1");

	if (q == NULL)
		return false;
	sqlite3_bind_int64(q, 1, (sqlite3_int64)group);
	return mirror_step_done(m, q, "store the feed's group");
}

bool mirror_read_position(Mirror *m, Lsn *lsn)
{
	sqlite3_stmt *q = cached(m, &m->feed_pos,
				 "SELECT confirmed_lsn FROM pgmirror_state WHERE id = 1");
	const unsigned char *t;
	bool ok;

	*lsn = LSN_INVALID;
	if (q == NULL)
		return false;
	ok = sqlite3_step(q) == SQLITE_ROW && (t = sqlite3_column_text(q, 0)) != NULL &&
	     lsn_parse((const char *)t, lsn);
	sqlite3_reset(q);
	if (!ok)
		errbuf_set(&m->err, "could not read the confirmed position of mirror \"%s\"",
			   m->path);
	return ok;
}

bool mirror_snapshot_to(Mirror *m, const char *path)
{
	char *name;
	bool ok;

	/* VACUUM INTO reads the file in one read transaction of its own and
	 * writes a compact copy; it cannot run inside another transaction */
	if (m->in_txn) {
		errbuf_set(&m->err, "could not write a snapshot of the mirror: a transaction "
			   "is open");
		return false;
	}
	/* a path, never a URI: a feed's directory may begin with "file:" */
	name = mirror_file_name(path);
	if (name == NULL)
		abort();
	ok = mirror_exec_owned(m, sqlite3_mprintf("VACUUM INTO %Q", name));
	sqlite3_free(name);
	return ok;
}

bool mirror_feed_adopt(Mirror *m, const MirrorFeedState *st)
{
	return mirror_exec(m, "DELETE FROM pgmirror_feed") && mirror_feed_write(m, st) &&
	       mirror_exec(m, "UPDATE pgmirror_state SET last_sync_time = NULL, "
			      "last_sync_lag_bytes = NULL, last_sync_lag_seconds = NULL, "
			      "last_check_time = NULL, last_check_result = NULL, "
			      "last_rebuild_time = NULL, last_rebuild_reason = NULL, "
			      "last_error = NULL, last_error_time = NULL WHERE id = 1");
}

bool mirror_install(const char *fresh, const char *path, char **errmsg)
{
	const char *sides[] = {"-wal", "-shm"};
	bool moved = false;

	*errmsg = NULL;
	for (size_t i = 0; i < 2; i++) {
		char *side = sqlite3_mprintf("%s%s", path, sides[i]);

		if (side == NULL)
			abort();
		if (unlink(side) != 0 && errno != ENOENT)
			*errmsg = xasprintf("could not remove \"%s\": %s", side, strerror(errno));
		sqlite3_free(side);
		if (*errmsg != NULL)
			return false;
	}
	if (!durable_rename(fresh, path, &moved) || !moved || !durable_sync_dir(path)) {
		*errmsg = xasprintf("could not put \"%s\" in place of \"%s\": %s", fresh, path,
				    strerror(moved ? errno : ENOENT));
		return false;
	}
	/* fresh's own, of its closed (checkpointed) connection: nothing
	 * reads them now, and a -wal left there would be no file's */
	for (size_t i = 0; i < 2; i++) {
		char *side = sqlite3_mprintf("%s%s", fresh, sides[i]);

		if (side == NULL)
			abort();
		(void)unlink(side);
		sqlite3_free(side);
	}
	return true;
}

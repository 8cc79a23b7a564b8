/*
 * copy_tables.c: a copy's SQLite transaction, table by table: the copy's
 * Begin and Commit at the snapshot's position (as the applier sees a
 * source transaction), each table made and its rows pumped by copy.c, and
 * a table the source refuses or whose value the mirror cannot store
 * handed on (copy_set_refused()) under a source savepoint, so that the
 * others go on.
 */
#include "config.h"

#include <string.h>

#include "pgmirror/notify.h"
#include "copy_internal.h"

bool copy_begin_at(Copier *c, Lsn lsn)
{
	PgoMessage msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = PGO_BEGIN;
	msg.u.begin.final_lsn = lsn;
	return copy_feed(c, &msg);
}

bool copy_one_table(Copier *c, const SourceTable *t, Lsn sync_lsn)
{
	c->bad_value = false;
	return !copy_stopped(c, t) && copy_make_table(c, t, sync_lsn) &&
	       (c->schema_only || copy_table_rows(c, t));
}

bool copy_commit_at(Copier *c, Lsn lsn)
{
	PgoMessage msg;

	/* No source commit time: the copy is of a snapshot, not of a commit. */
	memset(&msg, 0, sizeof(msg));
	msg.type = PGO_COMMIT;
	msg.u.commit.commit_lsn = lsn;
	msg.u.commit.end_lsn = lsn;
	return copy_feed(c, &msg);
}

/* copy_table_rows() of one table of copy_tables(), under a savepoint when a
 * table refused is to be handed on (copy_set_refused()). */
static bool copy_rows_or_hand_on(Copier *c, const SourceTable *t)
{
	bool privilege;

	c->bad_value = false;
	if (c->refused == NULL)
		return copy_table_rows(c, t);
	if (!session_copy_savepoint(c->s, false)) {
		errbuf_set(&c->err, "%s", session_error(c->s));
		return false;
	}
	if (copy_table_rows(c, t))
		return true;
	privilege = !c->bad_value && session_error_privilege(c->s);
	if (copy_stopped(c, t) || !(c->bad_value || privilege) || !session_connected(c->s))
		return false;
	if (!session_copy_savepoint(c->s, true)) {
		errbuf_set(&c->err, "%s", session_error(c->s));
		return false;
	}
	return c->refused(c->refused_ctx, t, privilege);
}

bool copy_tables(Copier *c, const SourceTable *tables, int n, Lsn consistent_point)
{
	if (!copy_begin_at(c, consistent_point))
		return false;
	if (!apply_reset(c->a)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	/* every table first, then the rows (above); many small tables take a
	 * while too: look before each one */
	for (int i = 0; i < n; i++)
		if (copy_stopped(c, &tables[i]) || !copy_make_table(c, &tables[i], LSN_INVALID))
			return false;
	for (int i = 0; i < n && !c->schema_only; i++) {
		notify_status("copying table %d of %d: %s.%s", i + 1, n, tables[i].nspname,
			      tables[i].relname);
		if (copy_stopped(c, &tables[i]) || !copy_rows_or_hand_on(c, &tables[i]))
			return false;
	}
	return copy_commit_at(c, consistent_point);
}

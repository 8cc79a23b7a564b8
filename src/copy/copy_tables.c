/*
 * copy_tables.c: the synthetic source transaction a copy is applied in
 * (its Begin and Commit at the snapshot's position, as the applier sees a
 * source transaction), and a first run's tables made empty in one such
 * transaction when it copies no rows.
 */
#include "config.h"

#include <string.h>

#include "copy_internal.h"

bool copy_begin_at(Copier *c, Lsn lsn)
{
	PgoMessage msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = PGO_BEGIN;
	msg.u.begin.final_lsn = lsn;
	return copy_feed(c, &msg);
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

bool copy_make_tables(Copier *c, const SourceTable *tables, int n, Lsn consistent_point)
{
	if (!copy_begin_at(c, consistent_point))
		return false;
	if (!apply_reset(c->a)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	/* many small tables take a while too: look before each one */
	for (int i = 0; i < n; i++)
		if (copy_stopped(c, &tables[i]) || !copy_make_table(c, &tables[i], LSN_INVALID))
			return false;
	return copy_commit_at(c, consistent_point);
}

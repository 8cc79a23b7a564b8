/*
 * mirror_pending.c: pgmirror_pending, the tables a sync is still to copy
 * (see mirror_pending.h). The run says which (src/run/firstrun.c,
 * tablesync.c); this file only keeps the rows (every source string quoted
 * with %Q).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/mirror_pending.h"

void mirror_pending_free(MirrorPending *p, int n)
{
	for (int i = 0; i < n; i++) {
		free(p[i].source_schema);
		free(p[i].source_table);
	}
	free(p);
}

bool mirror_pending_list(Mirror *m, MirrorPending **out, int *n)
{
	sqlite3_stmt *q;
	bool has;
	int rc;

	*out = NULL;
	*n = 0;
	if (!mirror_has_own_table(m, "pgmirror_pending", &has))
		return false;
	if (!has)
		return true;
	q = mirror_prepare(m, "SELECT relation_oid, source_schema, source_table, estimate "
			   "FROM pgmirror_pending p WHERE NOT EXISTS (SELECT 1 FROM pgmirror_tables "
			   "WHERE relation_oid = p.relation_oid) AND NOT EXISTS (SELECT 1 FROM "
			   "pgmirror_waiting WHERE relation_oid = p.relation_oid) "
			   "ORDER BY source_schema, source_table, relation_oid", false);
	if (q == NULL)
		return false;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		MirrorPending *p;
		int64_t oid;

		*out = xreallocarray(*out, (size_t)*n + 1, sizeof(MirrorPending));
		p = memset(&(*out)[(*n)++], 0, sizeof(MirrorPending));
		if (!mirror_own_int(m, q, 0, "pgmirror_pending.relation_oid", &oid) ||
		    !mirror_own_text(m, q, 1, "pgmirror_pending.source_schema", &p->source_schema) ||
		    !mirror_own_text(m, q, 2, "pgmirror_pending.source_table", &p->source_table) ||
		    !mirror_own_int(m, q, 3, "pgmirror_pending.estimate", &p->estimate))
			break; /* damaged: the error is set */
		p->relation_oid = (uint32_t)oid;
		if (p->estimate < 0)
			p->estimate = -1; /* not known */
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return true;
	if (rc != SQLITE_ROW)
		errbuf_set(&m->err, "could not read pgmirror_pending of mirror \"%s\": %s",
			   m->path, sqlite3_errmsg(m->db));
	mirror_pending_free(*out, *n);
	*out = NULL;
	*n = 0;
	return false;
}

bool mirror_pending_set(Mirror *m, const MirrorPending *p, int n)
{
	int64_t had = 0;
	bool ok;

	/* a quiet check writes nothing */
	if (n == 0 && mirror_scalar(m, "SELECT count(*) FROM \"%w\"", "pgmirror_pending", &had) &&
	    had == 0)
		return true;
	ok = mirror_begin(m) && mirror_exec(m, "DELETE FROM pgmirror_pending");
	for (int i = 0; ok && i < n; i++)
		ok = mirror_exec_owned(m, p[i].estimate < 0 ? sqlite3_mprintf(
			"INSERT OR REPLACE INTO pgmirror_pending VALUES (%u, %Q, %Q, NULL)",
			p[i].relation_oid, p[i].source_schema, p[i].source_table)
			: sqlite3_mprintf(
			"INSERT OR REPLACE INTO pgmirror_pending VALUES (%u, %Q, %Q, %lld)",
			p[i].relation_oid, p[i].source_schema, p[i].source_table,
			(long long)p[i].estimate));
	if (ok && mirror_commit(m))
		return true;
	mirror_rollback(m);
	return false;
}

/*
 * session_catalog.c: what pgmirror asks of the source's catalog besides
 * the publications (session_published.c): a replication slot, and the
 * applier's look-ups (a type, the columns a table has now, what an added
 * column holds, a column's current values, the indexes the mirror
 * copies).
 *
 * The queries live in sql/source-*.sql, compiled in. On a walsender
 * connection only the simple query protocol is available, so their values
 * are quoted with PQescapeLiteral/PQescapeIdentifier and bound into the
 * text (session_sql_bind()); the look-ups, made over a plain connection,
 * pass them as parameters.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session_internal.h"

void slot_info_clear(SlotInfo *si)
{
	free(si->plugin);
	free(si->database);
	free(si->invalidated_by);
	memset(si, 0, sizeof(*si));
}

bool session_type_info(Session *s, uint32_t oid, SourceType *out)
{
	PGresult *res;
	char oidtext[16];
	const char *params[1] = {oidtext};
	bool ok = false;

	memset(out, 0, sizeof(*out));
	snprintf(oidtext, sizeof(oidtext), "%u", oid);
	if (!session_run(s, session_sql_type, 1, params, PGRES_TUPLES_OK, &res,
			 "look up a column type on the source"))
		return false;
	if (PQnfields(res) != 6 || PQntuples(res) > 1) {
		errbuf_set(&s->err, "unexpected answer to the look-up of the type with OID %u", oid);
	} else if (PQntuples(res) == 0) {
		ok = true; /* dropped since: out->name stays NULL */
	} else {
		out->name = xstrdup(PQgetvalue(res, 0, 0));
		out->typtype = PQgetvalue(res, 0, 1)[0];
		out->basetype = (uint32_t)strtoul(PQgetvalue(res, 0, 2), NULL, 10);
		out->typmod = (int32_t)strtol(PQgetvalue(res, 0, 3), NULL, 10);
		out->elemtype = (uint32_t)strtoul(PQgetvalue(res, 0, 4), NULL, 10);
		/* one byte, or the values code refuses it; "char" writes a
		 * byte past ASCII as \ooo */
		if (out->elemtype != 0)
			out->elemdelim = PQgetlength(res, 0, 5) == 1 ? PQgetvalue(res, 0, 5)[0]
								     : '\0';
		ok = true;
	}
	PQclear(res);
	return ok;
}

bool session_column_attnums(Session *s, uint32_t relid, const char *const *names, int n,
			    int *attnums)
{
	PGresult *res;
	char relidtext[16];
	const char *params[1] = {relidtext};

	snprintf(relidtext, sizeof(relidtext), "%u", relid);
	if (!session_run(s, session_sql_column_attnums, 1, params, PGRES_TUPLES_OK, &res,
			 "look up the columns of a table on the source"))
		return false;
	for (int i = 0; i < n; i++) {
		attnums[i] = 0;
		for (int r = 0; r < PQntuples(res); r++)
			if (strcmp(PQgetvalue(res, r, 0), names[i]) == 0)
				attnums[i] = atoi(PQgetvalue(res, r, 1));
	}
	PQclear(res);
	return true;
}

bool session_relation_name(Session *s, uint32_t relid, char **nspname, char **relname)
{
	PGresult *res;
	char relidtext[16];
	const char *params[1] = {relidtext};
	bool ok = true;

	*nspname = *relname = NULL;
	snprintf(relidtext, sizeof(relidtext), "%u", relid);
	if (!session_run(s, session_sql_relation_name, 1, params, PGRES_TUPLES_OK, &res,
			 "look up the name of a table on the source"))
		return false;
	if (PQnfields(res) != 2 || PQntuples(res) > 1) {
		errbuf_set(&s->err, "unexpected answer to the look-up of the relation with OID %u",
			  relid);
		ok = false;
	} else if (PQntuples(res) == 1) {
		*nspname = xstrdup(PQgetvalue(res, 0, 0));
		*relname = xstrdup(PQgetvalue(res, 0, 1));
	}
	PQclear(res);
	return ok;
}

/*
 * A transaction's commit record is in the WAL, so decoded and sent, a
 * moment before the committing backend leaves the list of running
 * transactions: until then, what it changed in the catalog is not visible
 * to a new snapshot. Waits until it is (or gives up after about half a
 * second: the next start reads the indexes again).
 */
#define XID_WAIT_TRIES 100
#define XID_WAIT_USECS 5000

static bool wait_visible(Session *s, uint32_t xid)
{
	char xidtext[16];
	const char *params[1] = {xidtext};

	snprintf(xidtext, sizeof(xidtext), "%u", xid);
	for (int i = 0; i < XID_WAIT_TRIES; i++) {
		PGresult *res;
		bool running;

		if (!session_run(s, session_sql_xid_visible, 1, params, PGRES_TUPLES_OK, &res,
				 "look up a transaction on the source"))
			return false;
		running = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
		if (!running)
			break;
		usleep(XID_WAIT_USECS);
	}
	return true;
}

bool session_indexes(Session *s, const uint32_t *relids, int n, uint32_t xid,
		     SourceIndex **out, int *nout)
{
	PGresult *res = NULL;
	char **oids = xcalloc((size_t)n + 1, sizeof(char *));
	char *list, *lit, *sql;
	const char *args[2];
	SourceIndex *idx = NULL;
	int nidx = 0;

	*out = NULL;
	*nout = 0;
	if (xid != 0 && !wait_visible(s, xid)) {
		free(oids);
		return false;
	}
	for (int i = 0; i < n; i++)
		oids[i] = xasprintf("%u", relids[i]);
	list = strv_join(oids, n, ",");
	strv_free(oids, n);
	lit = xasprintf("'{%s}'", list); /* digits and commas only */
	free(list);
	args[0] = lit;
	args[1] = session_server_version(s) >= 110000 ? "i.indnkeyatts" : "i.indnatts";
	sql = session_sql_bind(session_sql_indexes, args, 2);
	free(lit);
	if (!session_run(s, sql, 0, NULL, PGRES_TUPLES_OK, &res,
			 "look up the indexes of the mirrored tables on the source")) {
		free(sql);
		return false;
	}
	free(sql);
	if (PQnfields(res) != 5) {
		errbuf_set(&s->err, "unexpected answer to the look-up of the source's indexes");
		PQclear(res);
		return false;
	}
	for (int row = 0; row < PQntuples(res); row++) {
		uint32_t oid = (uint32_t)strtoul(PQgetvalue(res, row, 1), NULL, 10);
		SourceIndex *x = nidx > 0 ? &idx[nidx - 1] : NULL;

		if (x == NULL || x->oid != oid) {
			idx = xreallocarray(idx, (size_t)nidx + 1, sizeof(SourceIndex));
			x = &idx[nidx++];
			memset(x, 0, sizeof(*x));
			x->relid = (uint32_t)strtoul(PQgetvalue(res, row, 0), NULL, 10);
			x->oid = oid;
			x->name = xstrdup(PQgetvalue(res, row, 2));
		}
		x->cols = xreallocarray(x->cols, (size_t)x->ncols + 1, sizeof(char *));
		x->desc = xreallocarray(x->desc, (size_t)x->ncols + 1, sizeof(bool));
		x->cols[x->ncols] = xstrdup(PQgetvalue(res, row, 3));
		x->desc[x->ncols++] = strcmp(PQgetvalue(res, row, 4), "t") == 0;
	}
	PQclear(res);
	*out = idx;
	*nout = nidx;
	return true;
}

bool session_column_fill(Session *s, uint32_t relid, const char *column, SourceFill *out)
{
	PGresult *res;
	char relidtext[16];
	const char *params[2] = {relidtext, column};

	memset(out, 0, sizeof(*out));
	snprintf(relidtext, sizeof(relidtext), "%u", relid);
	if (!session_run(s, session_sql_column_fill, 2, params, PGRES_TUPLES_OK, &res,
			 "look up an added column on the source"))
		return false;
	if (PQntuples(res) == 1) {
		out->found = true;
		out->has_missing = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		if (out->has_missing && !PQgetisnull(res, 0, 1))
			out->missing = xstrdup(PQgetvalue(res, 0, 1));
		out->has_default = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
	}
	PQclear(res);
	return true;
}

bool session_slot_info(Session *s, const char *slot, SlotInfo *out)
{
	PGresult *res = NULL;
	char *lit = session_quote(s, slot, false), *sql;
	/* wal_status exists from PostgreSQL 13 on, failover and
	 * invalidation_reason from 17 on */
	const char *args[4] = {
		session_server_version(s) >= 130000 ? "wal_status = 'lost'" : "false", lit,
		session_server_version(s) >= 170000 ? "failover" : "false",
		session_server_version(s) >= 170000 ? "invalidation_reason" : "NULL::text"};
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (lit == NULL)
		return false;
	sql = session_sql_bind(session_sql_slot, args, 4);
	PQfreemem(lit);
	if (!session_run(s, sql, 0, NULL, PGRES_TUPLES_OK, &res, "read the replication slot"))
		goto done;
	if (PQntuples(res) == 0) {
		ok = true;
		goto done;
	}
	out->exists = true;
	out->active = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	out->plugin = xstrdup(PQgetvalue(res, 0, 1));
	out->database = xstrdup(PQgetvalue(res, 0, 2));
	out->usable = strcmp(PQgetvalue(res, 0, 4), "t") != 0;
	out->failover = strcmp(PQgetvalue(res, 0, 5), "t") == 0;
	if (!out->usable && !PQgetisnull(res, 0, 6))
		out->invalidated_by = xstrdup(PQgetvalue(res, 0, 6));
	ok = session_lsn_field(s, res, 0, 3, &out->confirmed_flush, "slot position");
done:
	free(sql);
	PQclear(res);
	return ok;
}

/*
 * The next result of the query in progress, calling tick(tick_ctx) at
 * least every TICK_WAIT_MS while the server has sent none (a query that
 * waits for a lock, or for a slow scan). *stopped when tick said stop;
 * *gone (error set) when the link seems gone (session_link_alive()).
 */
#define TICK_WAIT_MS 100

static PGresult *next_result(Session *s, TickFn tick, void *tick_ctx, bool *stopped, bool *gone)
{
	while (tick != NULL && PQisBusy(s->conn)) {
		struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
		int r;

		if (!tick(tick_ctx)) {
			*stopped = true;
			return NULL;
		}
		r = poll(&pfd, 1, TICK_WAIT_MS);
		if (r < 0 && errno != EINTR)
			break; /* PQgetResult reports what is wrong */
		if (r > 0)
			session_link_heard(s);
		else if (r == 0 && !session_link_alive(s)) {
			*gone = true;
			return NULL;
		}
		if (PQconsumeInput(s->conn) == 0)
			break;
	}
	return PQgetResult(s->conn);
}

/*
 * Ends the query in progress without reading its rows: the connection is
 * closed (the next look-up opens a new one). No cancel request: it would
 * wait to connect to a server that may be unreachable, and the backend
 * ends the query itself when it next sends to the closed connection.
 */
static void abandon_query(Session *s)
{
	session_disconnect(s);
}

bool session_column_values(Session *s, uint32_t relid, const char *const *keys, int nkeys,
			   const char *column, CatalogRowFn row, void *arg, TickFn tick,
			   void *tick_ctx)
{
	const char **names = xcalloc((size_t)nkeys + 1, sizeof(char *));
	const char **vals = xcalloc((size_t)nkeys + 1, sizeof(char *));
	int *lens = xcalloc((size_t)nkeys + 1, sizeof(int));
	char *list = NULL, *sql = NULL, *schema = NULL, *table = NULL;
	PGresult *res = NULL;
	bool ok = false, stop = false, gone = false;

	for (int i = 0; i < nkeys; i++)
		names[i] = keys[i];
	names[nkeys] = column;
	/* by its name now: the stream may be replaying history from before
	 * a rename */
	if (!session_relation_name(s, relid, &schema, &table))
		goto done;
	if (schema == NULL) {
		errbuf_set(&s->err, "the source has no relation with OID %u any more", relid);
		goto done;
	}
	if ((list = session_quote_list(s, names, nkeys + 1, true, ", ")) == NULL)
		goto done;
	{
		char *qs = session_quote(s, schema, true), *qt = session_quote(s, table, true);

		if (qs != NULL && qt != NULL)
			sql = xasprintf("SELECT %s FROM %s.%s", list, qs, qt);
		PQfreemem(qs);
		PQfreemem(qt);
		if (sql == NULL)
			goto done;
	}
	/* row by row, so that a big table is never held in memory */
	if (!PQsendQuery(s->conn, sql)) {
		errbuf_set(&s->err, "could not read %s.%s on the source: %s", schema, table,
			  PQerrorMessage(s->conn));
		goto done;
	}
	session_link_heard(s); /* the server's silence counts from here */
	if (!PQsetSingleRowMode(s->conn)) {
		/*
		 * The query is on its way, and its rows would now come in one
		 * result, all in memory; until they are read the connection
		 * takes no other query. Closing it is the bounded way out: the
		 * next look-up connects again.
		 */
		errbuf_set(&s->err, "could not read %s.%s on the source row by row: %s", schema, table,
			  PQerrorMessage(s->conn));
		session_disconnect(s);
		goto done;
	}
	ok = true;
	while (!stop && (res = next_result(s, tick, tick_ctx, &stop, &gone)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (st == PGRES_SINGLE_TUPLE && ok) {
			for (int i = 0; i <= nkeys; i++) {
				vals[i] = PQgetisnull(res, 0, i) ? NULL : PQgetvalue(res, 0, i);
				lens[i] = PQgetlength(res, 0, i);
			}
			stop = !row(arg, vals, lens) || (tick != NULL && !tick(tick_ctx));
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && ok) {
			errbuf_set(&s->err, "could not read %s.%s on the source: %s", schema, table,
				  PQresultErrorMessage(res));
			ok = false;
		}
		PQclear(res);
	}
	res = NULL;
	if (stop || gone) {
		/* the rest is not wanted (or will not come): end the query
		 * rather than read it */
		abandon_query(s);
		if (ok && !gone)
			errbuf_set(&s->err, "reading %s.%s on the source was stopped", schema, table);
		ok = false;
	}
done:
	free(names);
	free(vals);
	free(lens);
	free(list);
	free(sql);
	free(schema);
	free(table);
	return ok;
}

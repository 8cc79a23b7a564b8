/*
 * session_copy.c: the COPY commands of the initial copy, whole or in key
 * order from where a copy in parts got to, and the source's estimate of
 * each table's size (which orders the tables: smallest first).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/*
 * "WHERE (k1, k2) > ('v1', 'v2') ORDER BY k1, k2" for order (the WHERE
 * part only with order->after, joined to a row filter with AND); NULL,
 * error set, when a value cannot be quoted. The values go in as quoted
 * literals, which take the key columns' types.
 */
static char *order_clause(Session *s, const SourceTable *t, const SourceOrder *order)
{
	char **keys = xcalloc((size_t)order->nkeys + 1, sizeof(char *));
	char **vals = xcalloc((size_t)order->nkeys + 1, sizeof(char *));
	char *klist = NULL, *vlist = NULL, *out = NULL;
	bool ok = true;

	for (int k = 0; k < order->nkeys && ok; k++) {
		char *name = session_quote(s, t->cols[order->cols[k]].name, true);

		if (name == NULL) {
			ok = false;
			break;
		}
		keys[k] = xasprintf("%s%s", name, order->bytewise[k] ? " COLLATE \"C\"" : "");
		PQfreemem(name);
		if (order->after != NULL) {
			char *lit = session_quote(s, order->after[k], false);

			if (lit == NULL) {
				ok = false;
				break;
			}
			vals[k] = xstrdup(lit);
			PQfreemem(lit);
		}
	}
	if (ok) {
		klist = strv_join(keys, order->nkeys, ", ");
		if (order->after == NULL)
			out = xasprintf(" ORDER BY %s", klist);
		else {
			vlist = strv_join(vals, order->nkeys, ", ");
			out = xasprintf("%s(%s) > (%s) ORDER BY %s", t->rowfilter ? ") AND " : " WHERE ",
					klist, vlist, klist);
		}
	}
	strv_free(keys, order->nkeys);
	strv_free(vals, order->nkeys);
	free(klist);
	free(vlist);
	return out;
}

bool session_copy_begin_ordered(Session *s, const SourceTable *t, bool binary,
				const SourceOrder *order)
{
	const char **names = xcalloc((size_t)t->ncols + 1, sizeof(char *));
	char *nsp = session_quote(s, t->nspname, true), *rel = session_quote(s, t->relname, true);
	char *cols = NULL, *sql = NULL, *what = NULL, *tail = NULL;
	bool ok = false;

	if (nsp == NULL || rel == NULL)
		goto done;
	for (int i = 0; i < t->ncols; i++)
		names[i] = t->cols[i].name;
	if ((cols = session_quote_list(s, names, t->ncols, true, ", ")) == NULL)
		goto done;
	if (order != NULL && (tail = order_clause(s, t, order)) == NULL)
		goto done;
	/*
	 * A plain table without a row filter is read straight (COPY's own scan,
	 * without a query's, which is the server's cheaper way), which never
	 * takes the rows of inheritance children: they are not the table's in
	 * the stream. A query takes a row filter, a partitioned root
	 * (published via the root), which holds no rows of its own, a
	 * generated column, which COPY's column list refuses, and the key
	 * order of a copy in parts.
	 */
	if (t->partitioned || t->rowfilter || t->generated || order != NULL)
		sql = xasprintf("COPY (SELECT %s FROM %s%s.%s%s%s%s%s) TO STDOUT%s", cols,
				t->partitioned ? "" : "ONLY ", nsp, rel,
				t->rowfilter ? " WHERE (" : "", t->rowfilter ? t->rowfilter : "",
				t->rowfilter && (tail == NULL || order->after == NULL) ? ")" : "",
				tail != NULL ? tail : "", binary ? " (FORMAT binary)" : "");
	else
		sql = xasprintf("COPY %s.%s (%s) TO STDOUT%s", nsp, rel, cols,
				binary ? " (FORMAT binary)" : "");
	free(s->copying);
	s->copying = xasprintf("%s.%s", t->nspname, t->relname);
	what = xasprintf("copy table \"%s\"", s->copying);
	log_debug("copy query: %s", sql);
	ok = session_run(s, sql, 0, NULL, PGRES_COPY_OUT, NULL, what);
done:
	PQfreemem(nsp);
	PQfreemem(rel);
	free(names);
	free(cols);
	free(tail);
	free(sql);
	free(what);
	return ok;
}

bool session_copy_begin(Session *s, const SourceTable *t, bool binary)
{
	return session_copy_begin_ordered(s, t, binary, NULL);
}

bool session_server_utf8(Session *s)
{
	const char *enc = s->conn != NULL ? PQparameterStatus(s->conn, "server_encoding") : NULL;

	return enc != NULL && strcmp(enc, "UTF8") == 0;
}

bool session_table_sizes(Session *s, const SourceTable *t, int n, int64_t *est_rows,
			 int64_t *est_bytes)
{
	/* a partitioned root's own pg_class row says nothing of its rows; a
	 * table's bytes are its main fork's and its TOAST table's (a few
	 * rows of large values are a big table) */
	static const char sql_parts[] =
		"SELECT c.oid, CASE WHEN c.relkind = 'p' THEN "
		"  (SELECT coalesce(sum(greatest(p.reltuples, 0)), 0) FROM pg_catalog.pg_class p "
		"   JOIN pg_catalog.pg_partition_tree(c.oid) pt ON pt.relid = p.oid) "
		"ELSE greatest(c.reltuples, 0) END::int8, c.reltuples >= 0 OR c.relkind = 'p', "
		"CASE WHEN c.relkind = 'p' THEN "
		"  (SELECT coalesce(sum(pg_catalog.pg_relation_size(p.oid) + "
		"     coalesce(pg_catalog.pg_relation_size(nullif(p.reltoastrelid, 0)), 0)), 0) "
		"   FROM pg_catalog.pg_class p "
		"   JOIN pg_catalog.pg_partition_tree(c.oid) pt ON pt.relid = p.oid) "
		"ELSE pg_catalog.pg_relation_size(c.oid) + "
		"  coalesce(pg_catalog.pg_relation_size(nullif(c.reltoastrelid, 0)), 0) END::int8 "
		"FROM pg_catalog.pg_class c WHERE c.oid = ANY ($1::pg_catalog.oid[])";
	static const char sql_plain[] =
		"SELECT c.oid, greatest(c.reltuples, 0)::int8, c.reltuples >= 0, "
		"pg_catalog.pg_relation_size(c.oid) + "
		"coalesce(pg_catalog.pg_relation_size(nullif(c.reltoastrelid, 0)), 0) "
		"FROM pg_catalog.pg_class c WHERE c.oid = ANY ($1::pg_catalog.oid[])";
	char *array = session_oid_array(t, n);
	const char *params[1] = {array};
	PGresult *res;
	bool ok;

	for (int i = 0; i < n; i++) {
		est_rows[i] = -1;
		est_bytes[i] = 0;
	}
	ok = session_run(s, session_server_version(s) >= 120000 ? sql_parts : sql_plain, 1, params,
			 PGRES_TUPLES_OK, &res, "read the sizes of the published tables");
	for (int r = 0; ok && r < PQntuples(res); r++) {
		uint32_t oid = (uint32_t)strtoul(PQgetvalue(res, r, 0), NULL, 10);

		for (int i = 0; i < n; i++) {
			if (t[i].oid != oid)
				continue;
			est_rows[i] = strcmp(PQgetvalue(res, r, 2), "t") == 0
				      ? strtoll(PQgetvalue(res, r, 1), NULL, 10) : -1;
			est_bytes[i] = strtoll(PQgetvalue(res, r, 3), NULL, 10);
		}
	}
	if (ok)
		PQclear(res);
	free(array);
	return ok;
}

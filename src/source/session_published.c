/*
 * session_published.c: what the publications publish, asked of the
 * source's catalog: the published tables with their columns, keys, row
 * filters and definitions (sql/source-tables.sql), which of them the role
 * may not read (sql/source-unreadable-table.sql), and which publications
 * are missing. The queries are bound as session_catalog.c says.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

void source_tables_free(SourceTable *tables, int n)
{
	for (int i = 0; i < n; i++) {
		SourceTable *t = &tables[i];

		for (int j = 0; j < t->ncols; j++) {
			free(t->cols[j].name);
		}
		free(t->cols);
		free(t->nspname);
		free(t->relname);
		free(t->rowfilter);
		free(t->definition);
	}
	free(tables);
}

const SourceTable *source_table_find(const SourceTable *tables, int n, uint32_t oid)
{
	for (int i = 0; i < n; i++)
		if (tables[i].oid == oid)
			return &tables[i];
	return NULL;
}

/*
 * The published columns of tables[0..n-1] as a text[] literal of
 * "OID:name" elements (sql/source-unreadable-table.sql splits them at the
 * first colon), each double-quoted with its quotes and backslashes
 * escaped, as array_in() reads them.
 */
static char *column_array(const SourceTable *tables, int n)
{
	size_t len = 3, at = 0;
	char *out;

	for (int i = 0; i < n; i++)
		for (int c = 0; c < tables[i].ncols; c++)
			len += 16 + 2 * strlen(tables[i].cols[c].name) + 4;
	out = xmalloc(len);
	out[at++] = '{';
	for (int i = 0; i < n; i++) {
		for (int c = 0; c < tables[i].ncols; c++) {
			at += (size_t)snprintf(out + at, len - at, "%s\"%u:", at > 1 ? "," : "",
					       tables[i].oid);
			for (const char *p = tables[i].cols[c].name; *p != '\0'; p++) {
				if (*p == '"' || *p == '\\')
					out[at++] = '\\';
				out[at++] = *p;
			}
			out[at++] = '"';
		}
	}
	out[at++] = '}';
	out[at] = '\0';
	return out;
}

char *session_oid_array(const SourceTable *tables, int n)
{
	char **oids = xcalloc((size_t)n + 1, sizeof(char *));
	char *list, *array;

	for (int i = 0; i < n; i++)
		oids[i] = xasprintf("%u", tables[i].oid);
	list = strv_join(oids, n, ",");
	array = xasprintf("{%s}", list);
	strv_free(oids, n);
	free(list);
	return array;
}

bool session_unreadable_tables(Session *s, const SourceTable *tables, int n, char **grants)
{
	PGresult *res = NULL;
	char *array = session_oid_array(tables, n), *columns = column_array(tables, n);
	const char *params[2];
	bool ok;

	for (int i = 0; i < n; i++)
		grants[i] = NULL;
	params[0] = array;
	params[1] = columns;
	ok = session_run(s, session_sql_unreadable_table, 2, params, PGRES_TUPLES_OK, &res,
			 "check the privileges on the published tables");
	if (ok && PQnfields(res) != 2) {
		errbuf_set(&s->err, "unexpected answer to the check of the privileges on the "
			  "published tables");
		ok = false;
	}
	for (int r = 0; ok && r < PQntuples(res); r++) {
		uint32_t oid = (uint32_t)strtoul(PQgetvalue(res, r, 0), NULL, 10);

		for (int i = 0; i < n; i++)
			if (tables[i].oid == oid && grants[i] == NULL)
				grants[i] = xstrdup(PQgetvalue(res, r, 1));
	}
	PQclear(res);
	free(array);
	free(columns);
	return ok;
}

bool session_missing_publications(Session *s, char *const *names, int n, char **missing)
{
	PGresult *res = NULL;
	char *list = session_quote_list(s, (const char *const *)names, n, false, ", ");
	char *sql = NULL, **found = NULL;
	int nfound = 0;
	bool ok = false;

	*missing = NULL;
	if (list == NULL)
		goto done;
	sql = session_sql_bind(session_sql_missing_publications, (const char *const *)&list, 1);
	if (!session_run(s, sql, 0, NULL, PGRES_TUPLES_OK, &res, "look up the publications"))
		goto done;
	if (PQntuples(res) > 0) {
		found = xcalloc((size_t)PQntuples(res), sizeof(char *));
		for (nfound = 0; nfound < PQntuples(res); nfound++)
			found[nfound] = xasprintf("\"%s\"", PQgetvalue(res, nfound, 0));
		*missing = strv_join(found, nfound, ", ");
	}
	ok = true;
done:
	strv_free(found, nfound);
	free(list);
	free(sql);
	PQclear(res);
	return ok;
}

/* The parts of sql/source-tables.sql's definition that differ between
 * server versions (see there). */
static const char rel_filter_columns[] =
	"|| coalesce(' where ' || pg_catalog.pg_get_expr(r.prqual, r.prrelid), '') "
	"|| coalesce(' columns ' || r.prattrs::text, '')";
static const char schema_memberships[] =
	"SELECT up.relid, 'schema ' || pn.oid || ' of ' || pn.pnpubid || ' for ' || pn.pnnspid "
	"|| ' type ' || ty.xmin::text || ' via' || up.link "
	"FROM up JOIN pg_catalog.pg_class c2 ON c2.oid = up.anc "
	"JOIN pg_catalog.pg_publication_namespace pn ON pn.pnnspid = c2.relnamespace "
	"JOIN pg_catalog.pg_type ty ON ty.oid = c2.reltype "
	"JOIN pubs ON pubs.relid = up.relid AND pubs.oid = pn.pnpubid";
static const char no_schema_memberships[] = "SELECT NULL::oid, NULL::text WHERE false";

bool session_publication_tables(Session *s, char *const *pubs, int npubs,
				SourceTable **out, int *n)
{
	PGresult *res = NULL;
	char *list = session_quote_list(s, (const char *const *)pubs, npubs, false, ", ");
	char *sql = NULL;
	int version = session_server_version(s);
	const char *args[9] = {list, version >= 150000 ? "pt.rowfilter" : "NULL::text",
			       version >= 150000 ? "pt.attnames" : "NULL::name[]",
			       version >= 120000 && version < 180000 ? "AND a.attgenerated = ''" : "",
			       version >= 130000 ? "' via root ' || p.pubviaroot::text" : "''",
			       version >= 150000 ? rel_filter_columns : "",
			       version >= 150000 ? schema_memberships : no_schema_memberships,
			       version >= 120000 ? "a.attgenerated <> ''" : "false",
			       version >= 160000 && version < 180000 ? "AND a.attgenerated = ''" : ""};
	SourceTable *tables = NULL;
	int ntables = 0;
	bool ok = false;

	*out = NULL;
	*n = 0;
	if (list == NULL)
		goto done;
	sql = session_sql_bind(session_sql_tables, args, 9);
	if (!session_run(s, sql, 0, NULL, PGRES_TUPLES_OK, &res, "read the published tables"))
		goto done;
	for (int row = 0; row < PQntuples(res); row++) {
		uint32_t oid = (uint32_t)strtoul(PQgetvalue(res, row, 0), NULL, 10);
		SourceTable *t = ntables > 0 ? &tables[ntables - 1] : NULL;
		SourceColumn *c;

		if (t == NULL || t->oid != oid) {
			tables = xreallocarray(tables, (size_t)ntables + 1, sizeof(SourceTable));
			t = &tables[ntables++];
			memset(t, 0, sizeof(*t));
			t->oid = oid;
			t->nspname = xstrdup(PQgetvalue(res, row, 1));
			t->relname = xstrdup(PQgetvalue(res, row, 2));
			t->replident = PQgetvalue(res, row, 3)[0];
			t->partitioned = strcmp(PQgetvalue(res, row, 4), "t") == 0;
			if (!PQgetisnull(res, row, 5))
				t->rowfilter = xstrdup(PQgetvalue(res, row, 5));
			if (!PQgetisnull(res, row, 10))
				t->definition = xstrdup(PQgetvalue(res, row, 10));
			if (!PQgetisnull(res, row, 11)) {
				errbuf_set(&s->err, "source table \"%s.%s\" has different column lists "
					  "in publications %s: PostgreSQL cannot stream its changes "
					  "(\"cannot use different column lists\"); give it the same "
					  "column list (or none) in each of them, or leave it out of all "
					  "but one", t->nspname, t->relname, PQgetvalue(res, row, 11));
				goto done;
			}
		}
		if (PQgetisnull(res, row, 6))
			continue; /* no published column */
		t->cols = xreallocarray(t->cols, (size_t)t->ncols + 1, sizeof(SourceColumn));
		c = &t->cols[t->ncols++];
		c->name = xstrdup(PQgetvalue(res, row, 6));
		c->type_oid = (uint32_t)strtoul(PQgetvalue(res, row, 7), NULL, 10);
		c->type_mod = (int32_t)strtol(PQgetvalue(res, row, 8), NULL, 10);
		c->is_key = strcmp(PQgetvalue(res, row, 9), "t") == 0;
		c->attnum = atoi(PQgetvalue(res, row, 13));
		if (sscanf(PQgetvalue(res, row, 14), "%" SCNu32 " %" SCNd32, &c->base_oid,
			   &c->base_mod) != 2) {
			c->base_oid = c->type_oid;
			c->base_mod = c->type_mod;
		}
		t->generated = t->generated || strcmp(PQgetvalue(res, row, 12), "t") == 0;
	}
	*out = tables;
	*n = ntables;
	tables = NULL;
	ntables = 0;
	ok = true;
done:
	source_tables_free(tables, ntables);
	PQclear(res);
	free(sql);
	free(list);
	return ok;
}

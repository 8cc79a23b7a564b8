/*
 * session_fingerprint.c: the one question a quiet run asks the source about
 * its publications: a fingerprint of everything pgmirror follows of them
 * (sql/source-fingerprint.sql), computed on the server in one statement,
 * and the types of the published tables' columns. The detail
 * (session_publication_tables()) is read only when the fingerprint
 * differs from the one the mirror stored; the types let the stream choose
 * binary values without it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

void pub_fingerprint_clear(PubFingerprint *fp)
{
	free(fp->hash);
	free(fp->types);
	memset(fp, 0, sizeof(*fp));
}

/* The parts of sql/source-fingerprint.sql that differ between server
 * versions (see there). */
static const char server_tables[] =
	"SELECT pubs.oid, g.relid, coalesce(' columns ' || g.attrs::text, '') || "
	"coalesce(' where ' || g.qual::text, '') "
	"FROM pubs, LATERAL pg_catalog.pg_get_publication_tables(pubs.pubname::text) g";
static const char no_server_tables[] = "SELECT NULL::oid, NULL::oid, NULL::text WHERE false";
static const char schema_rows[] =
	"(SELECT oid, pnpubid, pnnspid FROM pg_catalog.pg_publication_namespace "
	"WHERE pnpubid IN (SELECT oid FROM pubs))";
static const char no_schema_rows[] =
	"(SELECT NULL::oid AS oid, NULL::oid AS pnpubid, NULL::oid AS pnnspid WHERE false)";

/* The newest major whose ways of publishing a table this build knows: on a
 * newer server the fingerprint also hashes the server's own list. */
#define KNOWN_MAJOR_LAST 180000

bool session_publication_fingerprint(Session *s, char *const *pubs, int npubs,
				     PubFingerprint *out)
{
	PGresult *res = NULL;
	char *list = session_quote_list(s, (const char *const *)pubs, npubs, false, ", ");
	char *sql = NULL;
	int version = session_server_version(s);
	const char *args[7] = {
		list, version >= KNOWN_MAJOR_LAST + 10000 ? server_tables : no_server_tables,
		version >= 150000 ? schema_rows : no_schema_rows,
		version >= 120000 ? "a.attgenerated" : "''",
		version >= 140000 ? "pg_catalog.hash_record_extended("
		: version >= 110000 ? "pg_catalog.hashtextextended("
		: "('x' || pg_catalog.substr(pg_catalog.md5(",
		version >= 140000 ? ", 0)" : version >= 110000 ? "::text, 0)"
		: "::text), 1, 16))::bit(64)::bigint",
		version >= 140000 ? "pg_catalog.hashint8extended(h, h)" : "h"};
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (list == NULL)
		goto done;
	sql = session_sql_bind(session_sql_fingerprint, args, 7);
	if (!session_run(s, sql, 0, NULL, PGRES_TUPLES_OK, &res,
			 "ask for the fingerprint of the publications"))
		goto done;
	if (PQntuples(res) != 1 || PQnfields(res) != 2 || PQgetisnull(res, 0, 0)) {
		errbuf_set(&s->err, "unexpected answer to the question for the fingerprint of the "
			  "publications (%d rows, %d fields)", PQntuples(res), PQnfields(res));
		goto done;
	}
	out->hash = xstrdup(PQgetvalue(res, 0, 0));
	out->types = xstrdup(PQgetisnull(res, 0, 1) ? "" : PQgetvalue(res, 0, 1));
	ok = true;
done:
	PQclear(res);
	free(sql);
	free(list);
	return ok;
}

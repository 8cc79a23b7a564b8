/*
 * session.c: the replication connection, over libpq.
 *
 * Only the simple query protocol is available on a walsender connection,
 * so the few catalog queries pgmirror makes are built as text with every
 * value passed through PQescapeLiteral/PQescapeIdentifier.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pgmirror/frame.h"
#include "pgmirror/session.h"

struct Session {
	PGconn *conn;
	char *copybuf;       /* last PQgetCopyData buffer, freed on next call */
	bool in_use;         /* last error was SQLSTATE 55006 */
	bool data_error;     /* last error: the stream hit data the source cannot send */
	bool (*stopping)(void); /* asked while waiting on the server; NULL: never */
	bool stopped;        /* last error: given up because stopping() said so */
	char *copying;       /* "schema.table" of the last copy begun, for messages */
	ErrBuf err;          /* the last error */
};

static char *quote(Session *s, const char *text, bool ident);

const char *session_error(const Session *s)
{
	return s->err.text;
}

bool session_error_in_use(const Session *s)
{
	return s->in_use;
}

bool session_error_data(const Session *s)
{
	return s->data_error;
}

bool session_error_stopped(const Session *s)
{
	return s->stopped;
}

void session_set_stop_check(Session *s, bool (*stopping)(void))
{
	s->stopping = stopping;
}

void system_info_clear(SystemInfo *si)
{
	free(si->systemid);
	free(si->dbname);
	memset(si, 0, sizeof(*si));
}

void slot_info_clear(SlotInfo *si)
{
	free(si->plugin);
	free(si->database);
	memset(si, 0, sizeof(*si));
}

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
	}
	free(tables);
}

Session *session_new(void)
{
	return xcalloc(1, sizeof(Session));
}

void session_free(Session *s)
{
	if (s == NULL)
		return;
	session_disconnect(s);
	free(s->copying);
	free(s);
}

void session_disconnect(Session *s)
{
	if (s->copybuf != NULL) {
		PQfreemem(s->copybuf);
		s->copybuf = NULL;
	}
	if (s->conn != NULL) {
		PQfinish(s->conn);
		s->conn = NULL;
	}
}

bool session_connected(const Session *s)
{
	return s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK;
}

int session_server_version(const Session *s)
{
	return PQserverVersion(s->conn);
}

int session_proto_version_for(int server_version)
{
	if (server_version >= 160000)
		return 4;
	if (server_version >= 150000)
		return 3;
	if (server_version >= 140000)
		return 2;
	return 1;
}

/* The length of a libpq message without its final newlines. */
static int trimmed(const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && msg[n - 1] == '\n')
		n--;
	return n > INT_MAX ? INT_MAX : (int)n;
}

/*
 * What to do about an error the server reported, where pgmirror knows
 * more than the server says; "" when it does not.
 */
static const char *error_hint(const PGresult *res, bool in_stream)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	/*
	 * character_not_in_repertoire: text the server could not convert to
	 * the UTF-8 pgmirror asks for. It stores what a SQL_ASCII database is
	 * given unchecked, and checks it only on the way out. In the stream
	 * the change stays in the WAL the slot must read, whatever the table
	 * holds now.
	 */
	if (state == NULL || strcmp(state, "22021") != 0)
		return "";
	return in_stream
	       ? "; a change holds text that is not valid in the source's encoding (a "
		 "SQL_ASCII database stores any bytes), so it cannot be mirrored as UTF-8, and "
		 "it stays in the WAL the slot must read: correct the value on the source, then "
		 "drop the slot (pgmirror --drop-slot) so that the next run rebuilds the mirror "
		 "from a fresh copy"
	       : "; the source holds text that is not valid in its encoding (a SQL_ASCII "
		 "database stores any bytes), so it cannot be mirrored as UTF-8: correct the "
		 "value on the source";
}

/*
 * Runs a command; true when its status is `want`. The result is returned in
 * *out when out is not NULL (PQclear it), else cleared here.
 */
static bool run(Session *s, const char *sql, ExecStatusType want, PGresult **out,
		const char *what)
{
	PGresult *res = PQexec(s->conn, sql);
	const char *state, *msg;

	s->in_use = false;
	if (out != NULL)
		*out = NULL;
	if (PQresultStatus(res) != want) {
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		s->in_use = state != NULL && strcmp(state, "55006") == 0;
		msg = res ? PQresultErrorMessage(res) : PQerrorMessage(s->conn);
		errbuf_set(&s->err, "could not %s: %.*s%s", what, trimmed(msg), msg, error_hint(res, false));
		PQclear(res);
		return false;
	}
	if (out != NULL)
		*out = res;
	else
		PQclear(res);
	return true;
}

/*
 * Server settings that a role or database may set and that must not reach
 * pgmirror's connections: each would kill a long initial copy, a catalog
 * look-up, or a wait for a lock or for the transactions that slot creation
 * waits for, on every run. They go in the startup packet, so that they
 * hold from the first statement on (transaction_timeout, which only 17+
 * knows and a server refuses to start a session with otherwise, is SET
 * right after connecting).
 */
static const char no_timeouts[] = "-c statement_timeout=0 -c lock_timeout=0 "
				  "-c idle_in_transaction_session_timeout=0";

/*
 * The startup "options" (malloc'd): the user's own, from the options of
 * conninfo or else PGOPTIONS, with ours after them so that ours win.
 */
static char *startup_options(const char *conninfo)
{
	PQconninfoOption *opts = NULL, *o;
	const char *user = getenv("PGOPTIONS");
	char *out;

	/* a plain database name is no connection string: NULL, PGOPTIONS */
	if (conninfo != NULL && (opts = PQconninfoParse(conninfo, NULL)) != NULL) {
		for (o = opts; o->keyword != NULL; o++)
			if (strcmp(o->keyword, "options") == 0 && o->val != NULL)
				user = o->val;
	}
	out = xasprintf("%s%s%s", user ? user : "", user ? " " : "", no_timeouts);
	PQconninfoFree(opts);
	return out;
}

/* Connects; replication: "database" for the walsender, NULL for plain. */
static bool connect_with(Session *s, const char *conninfo, const char *replication)
{
	const char *keys[7], *vals[7];
	char *options = startup_options(conninfo);
	const char *enc;
	int n = 0;
	bool ok;

	session_disconnect(s);
	/*
	 * A cron job must not hang on a host that does not answer: unless the
	 * user says otherwise (PGCONNECT_TIMEOUT, or connect_timeout in -d,
	 * which comes later and so wins), give up after 30 s.
	 */
	if (getenv("PGCONNECT_TIMEOUT") == NULL) {
		keys[n] = "connect_timeout";
		vals[n++] = "30";
	}
	/* without -d, the PG* environment alone: no dbname to expand */
	if (conninfo != NULL) {
		keys[n] = "dbname";
		vals[n++] = conninfo;
	}
	if (replication != NULL) {
		keys[n] = "replication";
		vals[n++] = replication;
	}
	keys[n] = "fallback_application_name";
	vals[n++] = "pgmirror";
	/*
	 * After dbname, so that these win over -d and the PG* variables
	 * (PGCLIENTENCODING, PGOPTIONS); a connection parameter also outranks
	 * a role's or database's client_encoding. The mirror's text is UTF-8
	 * whatever the database's encoding: the server converts.
	 */
	keys[n] = "client_encoding";
	vals[n++] = "UTF8";
	keys[n] = "options";
	vals[n++] = options;
	keys[n] = NULL;
	vals[n] = NULL;
	s->conn = PQconnectdbParams(keys, vals, 1);
	free(options);
	if (s->conn == NULL || PQstatus(s->conn) != CONNECTION_OK) {
		const char *msg = s->conn ? PQerrorMessage(s->conn) : "out of memory";
		const char *hint = NULL;
		int len = (int)strlen(msg);

		/*
		 * The server's words differ between versions: up to 15 "must
		 * be superuser or replication role to start walsender", from
		 * 16 on "permission denied to start WAL sender" with the
		 * detail "Only roles with the REPLICATION attribute may ...".
		 */
		if (strstr(msg, "replication role") != NULL ||
		    strstr(msg, "REPLICATION attribute") != NULL ||
		    (strstr(msg, "replication") != NULL && strstr(msg, "permission") != NULL))
			hint = "give the role the REPLICATION attribute on the source "
			       "(ALTER ROLE name REPLICATION)";
		else if (strstr(msg, "password authentication failed") != NULL ||
			 strstr(msg, "no password supplied") != NULL)
			hint = "check the password in -d, PGPASSWORD or ~/.pgpass";
		while (len > 0 && msg[len - 1] == '\n')
			len--;
		errbuf_set(&s->err, "could not connect to the source: %.*s%s%s", len, msg,
			  hint ? "; " : "", hint ? hint : "");
		return false;
	}
	enc = PQparameterStatus(s->conn, "client_encoding");
	if (enc == NULL || strcmp(enc, "UTF8") != 0) {
		errbuf_set(&s->err, "the source did not accept client_encoding UTF8 (it uses %s), "
			  "so text could not be mirrored as UTF-8; check the server's settings",
			  enc ? enc : "an unknown encoding");
		session_disconnect(s);
		return false;
	}
	/*
	 * pgoutput writes values with the walsender's own settings; these
	 * make the text forms independent of the server's and role's defaults.
	 */
	ok = run(s, "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; "
		 "SET IntervalStyle = 'postgres'; SET extra_float_digits = 3; "
		 "SET bytea_output = 'hex'",
		 PGRES_COMMAND_OK, NULL, "set the session's output settings");
	if (ok && PQserverVersion(s->conn) >= 170000)
		ok = run(s, "SET transaction_timeout = 0", PGRES_COMMAND_OK, NULL,
			 "turn off transaction_timeout");
	return ok;
}

bool session_connect(Session *s, const char *conninfo)
{
	return connect_with(s, conninfo, "database");
}

bool session_connect_plain(Session *s, const char *conninfo)
{
	return connect_with(s, conninfo, NULL);
}

void source_type_clear(SourceType *t)
{
	free(t->name);
	memset(t, 0, sizeof(*t));
}

void source_fill_clear(SourceFill *f)
{
	free(f->missing);
	memset(f, 0, sizeof(*f));
}

bool session_type_info(Session *s, uint32_t oid, SourceType *out)
{
	PGresult *res;
	char *sql;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	/* array_out separates elements with the element type's typdelim */
	sql = xasprintf("SELECT t.typname, t.typtype, t.typbasetype, t.typtypmod, "
			"CASE WHEN t.typlen = -1 AND t.typcategory = 'A' THEN t.typelem ELSE 0 END, "
			"e.typdelim "
			"FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem "
			"WHERE t.oid = %u", oid);
	if (!run(s, sql, PGRES_TUPLES_OK, &res, "look up a column type on the source"))
		goto done;
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
done:
	free(sql);
	return ok;
}

bool session_column_attnums(Session *s, uint32_t relid, const char *const *names, int n,
			    int *attnums)
{
	PGresult *res;
	char *sql = xasprintf("SELECT attname, attnum FROM pg_catalog.pg_attribute "
			      "WHERE attrelid = %u AND attnum > 0 AND NOT attisdropped", relid);
	bool ok = run(s, sql, PGRES_TUPLES_OK, &res, "look up the columns of a table on the source");

	free(sql);
	if (!ok)
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

bool session_column_fill(Session *s, uint32_t relid, const char *column, SourceFill *out)
{
	PGresult *res = NULL;
	char *lit = quote(s, column, false), *sql = NULL;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (lit == NULL)
		return false;
	/* attmissingval is an anyarray of one element; its text goes through
	 * text[] to get the element's own output. */
	sql = xasprintf("SELECT atthasmissing, (attmissingval::text::text[])[1], atthasdef "
			"FROM pg_catalog.pg_attribute WHERE attrelid = %u AND attname = %s "
			"AND NOT attisdropped", relid, lit);
	PQfreemem(lit);
	if (!run(s, sql, PGRES_TUPLES_OK, &res, "look up an added column on the source"))
		goto done;
	if (PQntuples(res) == 1) {
		out->found = true;
		out->has_missing = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		if (out->has_missing && !PQgetisnull(res, 0, 1))
			out->missing = xstrdup(PQgetvalue(res, 0, 1));
		out->has_default = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
	}
	ok = true;
done:
	free(sql);
	PQclear(res);
	return ok;
}

static bool parse_lsn_field(Session *s, PGresult *res, int row, int col, Lsn *out,
			    const char *what)
{
	if (PQgetisnull(res, row, col)) {
		*out = LSN_INVALID;
		return true;
	}
	if (!lsn_parse(PQgetvalue(res, row, col), out)) {
		errbuf_set(&s->err, "the server sent an invalid %s \"%s\"", what,
			  PQgetvalue(res, row, col));
		return false;
	}
	return true;
}

bool session_identify(Session *s, SystemInfo *out)
{
	PGresult *res;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (!run(s, "IDENTIFY_SYSTEM", PGRES_TUPLES_OK, &res, "identify the source system"))
		return false;
	if (PQntuples(res) != 1 || PQnfields(res) < 4 || PQgetisnull(res, 0, 3)) {
		errbuf_set(&s->err, "could not identify the source system: unexpected reply "
			  "(%d rows, %d fields); is this a logical replication connection?",
			  PQntuples(res), PQnfields(res));
		goto done;
	}
	if (!parse_lsn_field(s, res, 0, 2, &out->xlogpos, "WAL position"))
		goto done;
	out->systemid = xstrdup(PQgetvalue(res, 0, 0));
	out->timeline = (uint32_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
	out->dbname = xstrdup(PQgetvalue(res, 0, 3));
	ok = true;
done:
	PQclear(res);
	return ok;
}

bool session_check_wal_level(Session *s)
{
	PGresult *res;
	bool ok;

	if (!run(s, "SHOW wal_level", PGRES_TUPLES_OK, &res, "read wal_level"))
		return false;
	ok = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "logical") == 0;
	if (!ok)
		errbuf_set(&s->err, "the source has wal_level = %s, but logical replication needs "
			  "wal_level = logical: set it in postgresql.conf and restart the server",
			  PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "?");
	PQclear(res);
	return ok;
}

/* text as an SQL identifier or literal (PQfreemem it); NULL, error set, on failure. */
static char *quote(Session *s, const char *text, bool ident)
{
	char *q = ident ? PQescapeIdentifier(s->conn, text, strlen(text))
			: PQescapeLiteral(s->conn, text, strlen(text));

	if (q == NULL)
		errbuf_set(&s->err, "could not quote \"%s\": %s", text, PQerrorMessage(s->conn));
	return q;
}

bool session_slot_info(Session *s, const char *slot, SlotInfo *out)
{
	PGresult *res = NULL;
	char *lit = quote(s, slot, false), *sql;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (lit == NULL)
		return false;
	/* wal_status exists from PostgreSQL 13 on */
	sql = xasprintf("SELECT active, plugin, database, confirmed_flush_lsn, %s "
			"FROM pg_catalog.pg_replication_slots WHERE slot_name = %s",
			session_server_version(s) >= 130000 ? "wal_status = 'lost'" : "false",
			lit);
	PQfreemem(lit);
	if (!run(s, sql, PGRES_TUPLES_OK, &res, "read the replication slot"))
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
	ok = parse_lsn_field(s, res, 0, 3, &out->confirmed_flush, "slot position");
done:
	free(sql);
	PQclear(res);
	return ok;
}

/* "'a', 'b'" for an IN list; NULL (error set) when quoting fails. */
static char *literal_list(Session *s, char *const *names, int n)
{
	char *list = xstrdup(""), *tmp;

	for (int i = 0; i < n; i++) {
		char *lit = quote(s, names[i], false);

		if (lit == NULL) {
			free(list);
			return NULL;
		}
		tmp = xasprintf("%s%s%s", list, i ? ", " : "", lit);
		PQfreemem(lit);
		free(list);
		list = tmp;
	}
	return list;
}

bool session_missing_publications(Session *s, char *const *names, int n, char **missing)
{
	PGresult *res = NULL;
	char *sql = NULL, *list = literal_list(s, names, n), *tmp;
	bool ok = false;

	*missing = NULL;
	if (list == NULL)
		goto done;
	sql = xasprintf("SELECT v.name FROM unnest(ARRAY[%s]::text[]) AS v(name) WHERE NOT EXISTS "
			"(SELECT 1 FROM pg_catalog.pg_publication p WHERE p.pubname = v.name)",
			list);
	if (!run(s, sql, PGRES_TUPLES_OK, &res, "look up the publications"))
		goto done;
	for (int i = 0; i < PQntuples(res); i++) {
		tmp = xasprintf("%s%s\"%s\"", *missing ? *missing : "", *missing ? ", " : "",
				PQgetvalue(res, i, 0));
		free(*missing);
		*missing = tmp;
	}
	ok = true;
done:
	free(list);
	free(sql);
	PQclear(res);
	return ok;
}

/*
 * The next result of the query in progress, calling tick(tick_ctx) at
 * least every TICK_WAIT_MS while the server has sent none (a query that
 * waits for a lock, or for a slow scan). *stopped when tick said stop.
 */
#define TICK_WAIT_MS 100

static PGresult *next_result(Session *s, TickFn tick, void *tick_ctx, bool *stopped)
{
	while (tick != NULL && PQisBusy(s->conn)) {
		struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};

		if (!tick(tick_ctx)) {
			*stopped = true;
			return NULL;
		}
		if (poll(&pfd, 1, TICK_WAIT_MS) < 0 && errno != EINTR)
			break; /* PQgetResult reports what is wrong */
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

bool session_column_values(Session *s, const char *schema, const char *table,
			   const char *const *keys, int nkeys, const char *column,
			   CatalogRowFn row, void *arg, TickFn tick, void *tick_ctx)
{
	char *list = xstrdup(""), *sql = NULL, *tmp, *q;
	const char **vals = xcalloc((size_t)nkeys + 1, sizeof(char *));
	int *lens = xcalloc((size_t)nkeys + 1, sizeof(int));
	PGresult *res = NULL;
	bool ok = false, stop = false;

	for (int i = 0; i <= nkeys; i++) {
		if ((q = quote(s, i < nkeys ? keys[i] : column, true)) == NULL)
			goto done;
		tmp = xasprintf("%s%s%s", list, i ? ", " : "", q);
		PQfreemem(q);
		free(list);
		list = tmp;
	}
	{
		char *qs = quote(s, schema, true), *qt = quote(s, table, true);

		if (qs != NULL && qt != NULL)
			sql = xasprintf("SELECT %s FROM %s.%s", list, qs, qt);
		if (qs)
			PQfreemem(qs);
		if (qt)
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
	while (!stop && (res = next_result(s, tick, tick_ctx, &stop)) != NULL) {
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
	if (stop) {
		/* the rest is not wanted: end the query rather than read it */
		abandon_query(s);
		if (ok)
			errbuf_set(&s->err, "reading %s.%s on the source was stopped", schema, table);
		ok = false;
	}
done:
	free(vals);
	free(lens);
	free(list);
	free(sql);
	return ok;
}

/* How long a cancelled command may take to end before the connection is dropped. */
#define CANCEL_WAIT_MS 10000

/*
 * Waits, in steps of 100 ms, until the socket has something to read (or
 * timeout_ms, -1 for no limit, has passed) and reads it; false with the
 * error set when the connection failed. A signal (EINTR) ends the wait
 * early, so that the caller looks at its stop check at once.
 */
static bool wait_socket(Session *s, int timeout_ms)
{
	struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
	int r;

	if (pfd.fd < 0) {
		errbuf_set(&s->err, "could not wait for the source: %s", PQerrorMessage(s->conn));
		return false;
	}
	r = poll(&pfd, 1, timeout_ms < 0 || timeout_ms > 100 ? 100 : timeout_ms);
	if (r < 0 && errno != EINTR) {
		errbuf_set(&s->err, "could not wait for the source: %s", strerror(errno));
		return false;
	}
	if (PQconsumeInput(s->conn) == 0) {
		errbuf_set(&s->err, "could not read from the source: %s", PQerrorMessage(s->conn));
		return false;
	}
	return true;
}

/* Asks the server to cancel the command in progress; false, error set, on failure. */
static bool cancel_command(Session *s)
{
	PGcancel *cancel = PQgetCancel(s->conn);
	char err[256] = "";
	bool ok = cancel != NULL && PQcancel(cancel, err, sizeof(err)) == 1;

	PQfreeCancel(cancel);
	if (!ok)
		errbuf_set(&s->err, "could not cancel the command on the source: %s",
			  err[0] ? err : "out of memory");
	return ok;
}

/*
 * Like run(), for a command that may wait on the server for long (slot
 * creation waits for every transaction in progress to end): sends it, then
 * waits in steps of 100 ms and asks s->stopping() in between. When that says
 * stop, the command is cancelled and, once the server has answered, the call
 * fails with session_error_stopped() true -- unless the command had already
 * finished, which then counts as done. A server that does not answer the
 * cancel within CANCEL_WAIT_MS loses the connection.
 */
static bool run_stoppable(Session *s, const char *sql, ExecStatusType want, PGresult **out,
			  const char *what)
{
	PGresult *res = NULL, *r;
	const char *state;
	int cancel_waited = -1; /* ms waited since the cancel; -1: not cancelled */

	s->in_use = false;
	s->stopped = false;
	*out = NULL;
	if (!PQsendQuery(s->conn, sql)) {
		errbuf_set(&s->err, "could not %s: %s", what, PQerrorMessage(s->conn));
		return false;
	}
	for (;;) {
		while (PQisBusy(s->conn)) {
			if (cancel_waited < 0 && s->stopping != NULL && s->stopping()) {
				if (!cancel_command(s))
					goto lost;
				cancel_waited = 0;
			}
			if (cancel_waited >= CANCEL_WAIT_MS) {
				errbuf_set(&s->err, "the source did not answer the cancel of the command "
					  "to %s", what);
				goto lost;
			}
			if (!wait_socket(s, 100))
				goto lost;
			if (cancel_waited >= 0)
				cancel_waited += 100;
		}
		if ((r = PQgetResult(s->conn)) == NULL)
			break;
		if (res == NULL)
			res = r;
		else
			PQclear(r);
	}
	if (PQresultStatus(res) != want) {
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		s->in_use = state != NULL && strcmp(state, "55006") == 0;
		s->stopped = cancel_waited >= 0;
		if (s->stopped)
			errbuf_set(&s->err, "stopped by a signal while waiting to %s", what);
		else
			errbuf_set(&s->err, "could not %s: %s", what,
				  res ? PQresultErrorMessage(res) : PQerrorMessage(s->conn));
		PQclear(res);
		return false;
	}
	*out = res;
	return true;
lost:
	PQclear(res);
	s->stopped = cancel_waited >= 0;
	session_disconnect(s);
	return false;
}

bool session_create_slot(Session *s, const char *slot, bool use_snapshot,
			 Lsn *consistent_point)
{
	PGresult *res;
	char *id = quote(s, slot, true), *sql;
	bool ok = false;

	if (id == NULL)
		return false;
	/* the old spelling of the option, which every server from 10 on takes */
	sql = xasprintf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput %s", id,
			use_snapshot ? "USE_SNAPSHOT" : "NOEXPORT_SNAPSHOT");
	PQfreemem(id);
	if (run_stoppable(s, sql, PGRES_TUPLES_OK, &res, "create the replication slot")) {
		ok = PQntuples(res) == 1 && PQnfields(res) >= 2 &&
		     parse_lsn_field(s, res, 0, 1, consistent_point, "consistent point");
		if (!ok && PQntuples(res) != 1)
			errbuf_set(&s->err, "could not create the replication slot: unexpected reply");
		PQclear(res);
	}
	free(sql);
	return ok;
}

/*
 * One row per published column (or one with a NULL column for a table with
 * none), ordered by table then attnum. The key flags follow pgoutput's
 * RelationGetIdentityKeyBitmap(): the replica identity index for 'i', the
 * primary key for 'd', every column for 'f'. A table in several
 * publications gets the union of their column lists and the OR of their
 * row filters; one publication without a filter means no filter.
 */
static char *publication_tables_sql(int server_version, const char *publist)
{
	bool v15 = server_version >= 150000;

	return xasprintf(
		"WITH pubrel AS ("
		" SELECT c.oid AS relid, n.nspname, c.relname, c.relreplident, c.relkind,"
		"  %s AS rowfilter, %s AS attnames"
		" FROM pg_catalog.pg_publication_tables pt"
		" JOIN pg_catalog.pg_namespace n ON n.nspname = pt.schemaname"
		" JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename"
		" WHERE pt.pubname IN (%s)"
		"), t AS ("
		" SELECT relid, nspname, relname, relreplident, relkind,"
		"  CASE WHEN bool_or(rowfilter IS NULL) THEN NULL"
		"  ELSE string_agg('(' || rowfilter || ')', ' OR ') END AS rowfilter"
		" FROM pubrel GROUP BY relid, nspname, relname, relreplident, relkind"
		") "
		"SELECT t.relid, t.nspname, t.relname, t.relreplident, t.relkind = 'p',"
		" t.rowfilter, a.attname, a.atttypid, a.atttypmod,"
		" t.relreplident = 'f' OR EXISTS (SELECT 1 FROM pg_catalog.pg_index i"
		"  WHERE i.indrelid = t.relid AND a.attnum = ANY (i.indkey) AND"
		"  CASE t.relreplident WHEN 'i' THEN i.indisreplident"
		"  WHEN 'd' THEN i.indisprimary ELSE false END) "
		"FROM t LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = t.relid"
		" AND a.attnum > 0 AND NOT a.attisdropped %s"
		" AND EXISTS (SELECT 1 FROM pubrel p WHERE p.relid = t.relid"
		"  AND (p.attnames IS NULL OR a.attname = ANY (p.attnames)))"
		" ORDER BY t.nspname, t.relname, a.attnum",
		v15 ? "pt.rowfilter" : "NULL::text", v15 ? "pt.attnames" : "NULL::name[]",
		publist, server_version >= 120000 ? "AND a.attgenerated = ''" : "");
}

bool session_publication_tables(Session *s, char *const *pubs, int npubs,
				SourceTable **out, int *n)
{
	PGresult *res = NULL;
	char *list = literal_list(s, pubs, npubs), *sql = NULL;
	SourceTable *tables = NULL;
	int ntables = 0;
	bool ok = false;

	*out = NULL;
	*n = 0;
	if (list == NULL)
		goto done;
	sql = publication_tables_sql(session_server_version(s), list);
	if (!run(s, sql, PGRES_TUPLES_OK, &res, "read the published tables"))
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
		}
		if (PQgetisnull(res, row, 6))
			continue; /* no published column */
		t->cols = xreallocarray(t->cols, (size_t)t->ncols + 1, sizeof(SourceColumn));
		c = &t->cols[t->ncols++];
		c->name = xstrdup(PQgetvalue(res, row, 6));
		c->type_oid = (uint32_t)strtoul(PQgetvalue(res, row, 7), NULL, 10);
		c->type_mod = (int32_t)strtol(PQgetvalue(res, row, 8), NULL, 10);
		c->is_key = strcmp(PQgetvalue(res, row, 9), "t") == 0;
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

bool session_begin_snapshot(Session *s)
{
	return run(s, "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ", PGRES_COMMAND_OK,
		   NULL, "begin the initial copy's transaction");
}

bool session_commit(Session *s)
{
	return run(s, "COMMIT", PGRES_COMMAND_OK, NULL, "end the initial copy's transaction");
}

bool session_copy_begin(Session *s, const SourceTable *t)
{
	char *nsp = quote(s, t->nspname, true), *rel = quote(s, t->relname, true);
	char *cols = xstrdup(""), *sql = NULL, *what = NULL, *tmp;
	bool ok = false;

	if (nsp == NULL || rel == NULL)
		goto done;
	for (int i = 0; i < t->ncols; i++) {
		char *id = quote(s, t->cols[i].name, true);

		if (id == NULL)
			goto done;
		tmp = xasprintf("%s%s%s", cols, i ? ", " : "", id);
		PQfreemem(id);
		free(cols);
		cols = tmp;
	}
	/*
	 * ONLY: rows of inheritance children are not the table's in the stream;
	 * a partitioned root (published via the root) holds none of its own.
	 */
	sql = xasprintf("COPY (SELECT %s FROM %s%s.%s%s%s) TO STDOUT", cols,
			t->partitioned ? "" : "ONLY ", nsp, rel,
			t->rowfilter ? " WHERE " : "", t->rowfilter ? t->rowfilter : "");
	free(s->copying);
	s->copying = xasprintf("%s.%s", t->nspname, t->relname);
	what = xasprintf("copy table \"%s\"", s->copying);
	ok = run(s, sql, PGRES_COPY_OUT, NULL, what);
done:
	if (nsp)
		PQfreemem(nsp);
	if (rel)
		PQfreemem(rel);
	free(cols);
	free(sql);
	free(what);
	return ok;
}

int session_copy_next(Session *s, char **row, size_t *len)
{
	PGresult *res;
	int n;
	bool ok;

	s->stopped = false;
	if (s->copybuf != NULL) {
		PQfreemem(s->copybuf);
		s->copybuf = NULL;
	}
	/* without blocking, so that a stop request is seen while rows are slow */
	while ((n = PQgetCopyData(s->conn, &s->copybuf, 1)) == 0) {
		if (s->stopping != NULL && s->stopping()) {
			s->stopped = true;
			errbuf_set(&s->err, "stopped by a signal during the copy");
			return -1;
		}
		if (!wait_socket(s, 100))
			return -1;
	}
	if (n > 0) {
		*row = s->copybuf;
		*len = (size_t)n;
		return 1;
	}
	if (n == -2) {
		errbuf_set(&s->err, "could not read the copy of \"%s\" from the source: %s",
			  s->copying ? s->copying : "?", PQerrorMessage(s->conn));
		return -1;
	}
	/* the COPY ended: its result says how */
	res = PQgetResult(s->conn);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok) {
		const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(s->conn);

		errbuf_set(&s->err, "the copy of \"%s\" from the source failed: %.*s%s",
			  s->copying ? s->copying : "?", trimmed(msg), msg, error_hint(res, false));
	}
	PQclear(res);
	while ((res = PQgetResult(s->conn)) != NULL)
		PQclear(res);
	return ok ? 0 : -1;
}

bool session_drop_slot(Session *s, const char *slot)
{
	char *id = quote(s, slot, true), *sql;
	bool ok;

	if (id == NULL)
		return false;
	sql = xasprintf("DROP_REPLICATION_SLOT %s", id);
	PQfreemem(id);
	ok = run(s, sql, PGRES_COMMAND_OK, NULL, "drop the replication slot");
	free(sql);
	return ok;
}

bool session_start(Session *s, const char *slot, Lsn start, int proto_version,
		   char *const *pubs, int npubs)
{
	char *id = quote(s, slot, true), *names = xstrdup(""), *lit = NULL, *sql = NULL;
	char lsn[LSN_TEXT_SIZE];
	bool ok = false;

	if (id == NULL)
		goto done;
	/* publication_names is one string holding a list of identifiers */
	for (int i = 0; i < npubs; i++) {
		char *qi = quote(s, pubs[i], true), *tmp;

		if (qi == NULL)
			goto done;
		tmp = xasprintf("%s%s%s", names, i ? "," : "", qi);
		PQfreemem(qi);
		free(names);
		names = tmp;
	}
	lit = quote(s, names, false);
	if (lit == NULL)
		goto done;
	sql = xasprintf("START_REPLICATION SLOT %s LOGICAL %s "
			"(proto_version '%d', publication_names %s)",
			id, lsn_format(start, lsn), proto_version, lit);
	ok = run(s, sql, PGRES_COPY_BOTH, NULL, "start replication");
done:
	if (id)
		PQfreemem(id);
	if (lit)
		PQfreemem(lit);
	free(names);
	free(sql);
	return ok;
}

int session_receive(Session *s, const uint8_t **buf, size_t *len, int timeout_ms)
{
	bool waited = false;

	for (;;) {
		int n;

		if (s->copybuf != NULL) {
			PQfreemem(s->copybuf);
			s->copybuf = NULL;
		}
		n = PQgetCopyData(s->conn, &s->copybuf, 1);
		if (n > 0) {
			*buf = (const uint8_t *)s->copybuf;
			*len = (size_t)n;
			return 1;
		}
		if (n == -2) {
			errbuf_set(&s->err, "could not read from the source: %s", PQerrorMessage(s->conn));
			return -1;
		}
		if (n == -1) {
			PGresult *res = PQgetResult(s->conn);
			const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

			/* class 22, data exception: the same change fails every time */
			s->data_error = state != NULL && strncmp(state, "22", 2) == 0;
			if (PQresultStatus(res) == PGRES_COMMAND_OK) {
				errbuf_set(&s->err, "the source ended the replication stream");
			} else {
				const char *msg = res ? PQresultErrorMessage(res)
						      : PQerrorMessage(s->conn);

				errbuf_set(&s->err, "replication stream ended: %.*s%s", trimmed(msg), msg,
					  error_hint(res, true));
			}
			PQclear(res);
			return -1;
		}
		/* nothing buffered: wait for the socket (or just look, timeout 0) */
		if (waited)
			return 0; /* at most one wait and one read per call */
		waited = true;
		if (timeout_ms > 0) {
			struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
			int r = poll(&pfd, 1, timeout_ms);

			if (r < 0 && errno == EINTR)
				return 0; /* a signal: let the caller look at its flags */
			if (r < 0) {
				errbuf_set(&s->err, "could not wait for the source: %s", strerror(errno));
				return -1;
			}
			if (r == 0)
				return 0;
			timeout_ms = 0; /* data arrived: take it, but do not wait again */
		}
		if (PQconsumeInput(s->conn) == 0) {
			errbuf_set(&s->err, "could not read from the source: %s", PQerrorMessage(s->conn));
			return -1;
		}
	}
}

bool session_send_status(Session *s, Lsn write, Lsn flush, Lsn apply, bool reply_requested)
{
	uint8_t msg[FRAME_STATUS_UPDATE_SIZE];
	size_t n = frame_encode_status(msg, write, flush, apply, pgtime_now(), reply_requested);

	if (PQputCopyData(s->conn, (const char *)msg, (int)n) <= 0 || PQflush(s->conn) != 0) {
		errbuf_set(&s->err, "could not send feedback to the source: %s", PQerrorMessage(s->conn));
		return false;
	}
	return true;
}

/*
 * session_connect.c: connecting to the source, over libpq: the keywords of
 * pgmirror's connections (-d expanded in place, -h/-p/-U over it, the
 * link's bounds, UTF-8, a 30 s connect_timeout unless the user sets one),
 * the connection driven so that a signal ends it within a second, the
 * failure said with what to do, and the settings each session starts with.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/*
 * A notice or warning the server sends (a NOTICE of a command, a WARNING
 * before a slot is invalidated): through pgmirror's log, on one line, as
 * libpq would otherwise print it on stderr unprefixed.
 */
static void log_server_notice(void *arg, const PGresult *res)
{
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *msg = PQresultErrorMessage(res);

	(void)arg;
	log_msg(sev != NULL && strcmp(sev, "WARNING") == 0 ? LOG_WARNING
		: sev != NULL && strncmp(sev, "DEBUG", 5) == 0 ? LOG_DEBUG : LOG_INFO,
		"the source says: %.*s", session_trimmed(msg), msg);
}

/* The connect_timeout libpq took from the options (0: none). */
static int connect_timeout_secs(PGconn *conn)
{
	PQconninfoOption *opts = PQconninfo(conn);
	int secs = 0;

	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "connect_timeout") == 0 && o->val != NULL)
			secs = atoi(o->val);
	PQconninfoFree(opts);
	/* as libpq: a timeout of 1 s would be too short to mean anything */
	return secs > 0 && secs < 2 ? 2 : secs;
}

/*
 * Drives a connection begun with PQconnectStartParams() to its end: TCP,
 * TLS and authentication, each wait on the socket at most 100 ms, so that
 * SIGTERM (s->stopping()) ends it within a second rather than when
 * connect_timeout runs out (which is kept here, as PQconnectdb() would).
 * False with the error set; s->stopped when stopping() said stop.
 */
static bool connect_poll(Session *s)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	int timeout = connect_timeout_secs(s->conn);
	int64_t deadline = mono_usecs() + (int64_t)timeout * 1000000;

	while (st != PGRES_POLLING_OK) {
		struct pollfd pfd = {.fd = PQsocket(s->conn),
				     .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
		int r;

		if (st == PGRES_POLLING_FAILED)
			return false;
		if (s->stopping != NULL && s->stopping()) {
			s->stopped = true;
			errbuf_set(&s->err, "stopped by a signal while connecting to the source");
			return false;
		}
		if (timeout > 0 && mono_usecs() >= deadline) {
			errbuf_set(&s->err, "could not connect to the source: no answer within "
				   "connect_timeout (%d s); check that the host is up and reachable",
				   timeout);
			return false;
		}
		r = pfd.fd < 0 ? 0 : poll(&pfd, 1, 100);
		if (r < 0 && errno != EINTR) {
			errbuf_set(&s->err, "could not wait for the source: %s", strerror(errno));
			return false;
		}
		if (r > 0)
			st = PQconnectPoll(s->conn);
	}
	return true;
}

/*
 * libpq's keywords for cp (NULL-terminated; keys and vals hold at least
 * CONN_KEYWORDS entries): processed in order, a later keyword wins, and -d
 * is expanded in place (expand_dbname), so -h, -p and -U override what -d
 * says as in psql, and replication (when not NULL) and client_encoding
 * override both. An empty or NULL value is skipped by libpq.
 */
#define CONN_KEYWORDS (11 + SESSION_LINK_KEYWORDS + SESSION_PIN_KEYWORDS)
static void conn_keywords(const Session *s, const ConnParams *cp, const char *replication,
			  const char **keys, const char **vals)
{
	/* a link that vanishes is noticed in a bound (session_link.c) */
	int n = session_link_defaults(keys, vals);

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
	keys[n] = "dbname";
	vals[n++] = cp->dbname;
	keys[n] = "host";
	vals[n++] = cp->host;
	keys[n] = "port";
	vals[n++] = cp->port;
	keys[n] = "user";
	vals[n++] = cp->user;
	/* the address of a connection already made (session_pin_address()) */
	n += session_pin_keywords(s, keys + n, vals + n);
	keys[n] = "password";
	vals[n++] = cp->password;
	keys[n] = "replication";
	vals[n++] = replication;
	keys[n] = "fallback_application_name";
	vals[n++] = "pgmirror";
	/*
	 * After dbname, so that it wins over -d and PGCLIENTENCODING; a
	 * connection parameter also outranks a role's or database's
	 * client_encoding. The mirror's text is UTF-8 whatever the database's
	 * encoding: the server converts.
	 */
	keys[n] = "client_encoding";
	vals[n++] = "UTF8";
	keys[n] = NULL;
	vals[n] = NULL;
}

/*
 * Begins a connection (replication: "database" for the walsender, NULL for
 * plain), to be driven by PQconnectPoll(); false, error set, when libpq
 * cannot even begin it.
 */
bool session_connect_begin(Session *s, const ConnParams *cp, const char *replication)
{
	const char *keys[CONN_KEYWORDS], *vals[CONN_KEYWORDS];

	session_disconnect(s);
	s->sqlstate[0] = '\0';
	s->walsender = replication != NULL;
	s->stopped = false;
	conn_keywords(s, cp, replication, keys, vals);
	s->conn = PQconnectStartParams(keys, vals, 1);
	if (s->conn != NULL)
		session_hide_conn_password(s->conn);
	if (s->conn != NULL && PQstatus(s->conn) != CONNECTION_BAD) {
		PQsetNoticeReceiver(s->conn, log_server_notice, NULL);
		return true;
	}
	return session_connect_failed(s);
}

bool session_connect_failed(Session *s)
{
	const char *msg = s->conn ? PQerrorMessage(s->conn) : "out of memory";
	const char *hint = NULL;

	/*
	 * The server's words differ between versions: up to 15 "must be
	 * superuser or replication role to start walsender", from 16 on
	 * "permission denied to start WAL sender" with the detail "Only
	 * roles with the REPLICATION attribute may ...".
	 */
	if (strstr(msg, "replication role") != NULL || strstr(msg, "REPLICATION attribute") != NULL ||
	    (strstr(msg, "replication") != NULL && strstr(msg, "permission") != NULL))
		hint = "give the role the REPLICATION attribute on the source "
		       "(ALTER ROLE name REPLICATION)";
	else if (strstr(msg, "password authentication failed") != NULL ||
		 strstr(msg, "no password supplied") != NULL)
		hint = "check the password in -d, PGPASSWORD or ~/.pgpass (or the "
		       "file PGPASSFILE names), or give -W to be asked for it";
	if (s->stopped || (s->conn != NULL && PQstatus(s->conn) != CONNECTION_BAD))
		return false; /* stopped, timed out: the error is set */
	errbuf_set(&s->err, "could not connect to the source: %.*s%s%s", session_trimmed(msg), msg,
		   hint ? "; " : "", hint ? hint : "");
	return false;
}

bool session_check_encoding(Session *s)
{
	const char *enc = PQparameterStatus(s->conn, "client_encoding");

	if (enc != NULL && strcmp(enc, "UTF8") == 0)
		return true;
	errbuf_set(&s->err, "the source did not accept client_encoding UTF8 (it uses %s), "
		   "so text could not be mirrored as UTF-8; check the server's settings",
		   enc ? enc : "an unknown encoding");
	session_disconnect(s);
	return false;
}

/*
 * pgoutput writes values with the walsender's own settings; these make the
 * text forms independent of the server's and role's defaults. The timeouts
 * a role or database may set would kill a long initial copy, a catalog
 * look-up, or a wait for a lock or for the transactions that slot creation
 * waits for, on every run: they are turned off first thing (set here rather
 * than in the startup options, which would replace the user's own, from -d,
 * PGOPTIONS or a service file). transaction_timeout: only 17+ knows it.
 */
const char *session_settings_sql(const Session *s)
{
#define SETTINGS "SET statement_timeout = 0; SET lock_timeout = 0; " \
		 "SET idle_in_transaction_session_timeout = 0; " \
		 "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; " \
		 "SET IntervalStyle = 'postgres'; SET extra_float_digits = 3; " \
		 "SET bytea_output = 'hex'"
	return PQserverVersion(s->conn) >= 170000 ? SETTINGS "; SET transaction_timeout = 0"
						   : SETTINGS;
#undef SETTINGS
}

/* Connects; replication: "database" for the walsender, NULL for plain. */
static bool connect_with(Session *s, const ConnParams *cp, const char *replication)
{
	if (!session_connect_begin(s, cp, replication))
		return false;
	if (!connect_poll(s))
		return session_connect_failed(s);
	return session_check_encoding(s) &&
	       session_run(s, session_settings_sql(s), 0, NULL, PGRES_COMMAND_OK, NULL,
			   "set the session's settings");
}

bool session_connect(Session *s, const ConnParams *cp)
{
	return connect_with(s, cp, "database");
}

bool session_connect_plain(Session *s, const ConnParams *cp)
{
	return connect_with(s, cp, NULL);
}

const char *session_libpq_version(void)
{
	static char text[32];
	int v = PQlibVersion();

	/* 150004 is 15.4; before 10, 90624 was 9.6.24 */
	if (v >= 100000)
		snprintf(text, sizeof(text), "%d.%d", v / 10000, v % 10000);
	else
		snprintf(text, sizeof(text), "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	return text;
}

/*
 * session.c: the connection to the source, over libpq, once made
 * (session_connect.c makes it): running a command with its error and hint
 * set the one way, the kinds of error, quoting, waiting on the socket. The
 * replication protocol is in session_repl.c, the catalog queries in
 * session_catalog.c.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

const char *session_error(const Session *s)
{
	return s->err.text;
}

bool session_error_in_use(const Session *s)
{
	return strcmp(s->sqlstate, "55006") == 0;
}

bool session_error_data(const Session *s)
{
	return s->data_error;
}

bool session_error_wal_gone(const Session *s)
{
	return s->wal_gone;
}

bool session_error_server(const Session *s)
{
	return s->server_error;
}

bool session_error_bad_text(const Session *s)
{
	return s->server_error && strcmp(s->sqlstate, "22021") == 0;
}

bool session_error_publication_gone(const Session *s)
{
	return s->server_error && strcmp(s->sqlstate, "42704") == 0;
}

bool session_error_privilege(const Session *s)
{
	return strcmp(s->sqlstate, "42501") == 0;
}

bool session_error_stopped(const Session *s)
{
	return s->stopped;
}

void session_note_state(Session *s, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	size_t n = state != NULL ? strlen(state) : 0;

	if (n >= sizeof(s->sqlstate))
		n = sizeof(s->sqlstate) - 1;
	memcpy(s->sqlstate, state != NULL ? state : "", n);
	s->sqlstate[n] = '\0';
}

/*
 * What a later try may not meet again: a connection lost (class 08, or
 * gone), a server shutting down or a command cancelled (57), no room
 * (53), an object in use (55006) or locked (55P03), a name already
 * taken (42710: a temporary slot's, by a race), a transaction that lost
 * a conflict (40).
 */
bool session_error_transient(const Session *s)
{
	static const char *const states[] = {"08", "57", "53", "55006", "55P03", "42710", "40"};

	if (s->stopped)
		return false;
	if (!session_connected(s))
		return true;
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (s->sqlstate[0] != '\0' && strncmp(s->sqlstate, states[i], strlen(states[i])) == 0)
			return true;
	return false;
}

void session_set_stop_check(Session *s, bool (*stopping)(void))
{
	s->stopping = stopping;
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
	session_link_free(s);
	free(s->copying);
	free(s);
}

void session_free_copybuf(Session *s)
{
	PQfreemem(s->copybuf); /* free(): NULL is fine */
	s->copybuf = NULL;
}

void session_disconnect(Session *s)
{
	session_free_copybuf(s);
	s->standby = false;
	s->async = 0; /* what session_async.c had under way ends with it */
	session_link_heard(s); /* ends a probe */
	s->heard_at = 0;
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

int session_trimmed(const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && msg[n - 1] == '\n')
		n--;
	return n > INT_MAX ? INT_MAX : (int)n;
}

const char *session_error_hint(const PGresult *res, bool in_stream)
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
		 "drop the slot (the command follows) so that the next run rebuilds the mirror "
		 "from a fresh copy"
	       : "; the source holds text that is not valid in its encoding (a SQL_ASCII "
		 "database stores any bytes), so it cannot be mirrored as UTF-8: correct the "
		 "value on the source";
}

/* How long a cancelled command may take to end before the connection is dropped. */
#define CANCEL_WAIT_MS 10000
/* How long a command waits before its wait_note (session_run_noted()) is logged. */
#define WAIT_NOTE_MS 1000

bool session_wait_socket(Session *s, int timeout_ms)
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
	if (r > 0)
		session_link_heard(s);
	else if (!session_link_alive(s))
		return false;
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

static bool is_error(const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);

	return st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE;
}

static bool is_copy(const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);

	return st == PGRES_COPY_OUT || st == PGRES_COPY_IN || st == PGRES_COPY_BOTH;
}

/* Each of texts[0..n) quoted (malloc'd, freed with strv_free(v, n)); NULL,
 * the error set, if one cannot be. */
static char **quote_each(Session *s, const char *const *texts, int n, bool ident)
{
	char **quoted = xcalloc((size_t)n + 1, sizeof(char *)), *q;

	for (int i = 0; i < n; i++) {
		if ((q = session_quote(s, texts[i], ident)) == NULL) {
			strv_free(quoted, i);
			return NULL;
		}
		quoted[i] = xstrdup(q); /* freed with free(), as strv_free() does */
		PQfreemem(q);
	}
	return quoted;
}

/* sql with params[0..nparams) in place of $1.. as quoted literals, which
 * mean what the untyped parameters do; NULL (error set) if one cannot be
 * quoted. */
static char *bind_literals(Session *s, const char *sql, int nparams, const char *const *params)
{
	char **lits = quote_each(s, params, nparams, false), *bound;

	if (lits == NULL)
		return NULL;
	bound = session_sql_bind(sql, (const char *const *)lits, nparams);
	strv_free(lits, nparams);
	return bound;
}

bool session_run_noted(Session *s, const char *sql, int nparams, const char *const *params,
		       ExecStatusType want, PGresult **out, const char *what,
		       const char *wait_note)
{
	PGresult *res = NULL, *r;
	const char *msg;
	int cancel_waited = -1; /* ms waited since the cancel; -1: not cancelled */
	int64_t started = mono_usecs();
	bool sent;

	s->stopped = false;
	s->sqlstate[0] = '\0';
	if (out != NULL)
		*out = NULL;
	if (nparams > 0 && s->walsender) {
		char *bound = bind_literals(s, sql, nparams, params);
		bool ok = bound != NULL &&
			  session_run_noted(s, bound, 0, NULL, want, out, what, wait_note);

		free(bound);
		return ok;
	}
	sent = nparams > 0 ? PQsendQueryParams(s->conn, sql, nparams, NULL, params, NULL, NULL, 0)
			   : PQsendQuery(s->conn, sql);
	if (!sent) {
		errbuf_set(&s->err, "could not %s: %s", what, PQerrorMessage(s->conn));
		return false;
	}
	session_link_heard(s); /* the server's silence counts from here */
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
			if (!session_wait_socket(s, 100))
				goto lost;
			if (cancel_waited >= 0)
				cancel_waited += 100;
			if (wait_note != NULL && cancel_waited < 0 &&
			    mono_usecs() - started >= (int64_t)WAIT_NOTE_MS * 1000) {
				log_info("%s", wait_note);
				wait_note = NULL;
			}
		}
		if ((r = PQgetResult(s->conn)) == NULL)
			break;
		/* as PQexec(): the last result, or the first error */
		if (res != NULL && is_error(res)) {
			PQclear(r);
			continue;
		}
		PQclear(res);
		res = r;
		if (is_copy(res))
			break; /* the COPY's data follows */
	}
	if (PQresultStatus(res) != want) {
		session_note_state(s, res);
		s->stopped = cancel_waited >= 0;
		msg = res ? PQresultErrorMessage(res) : PQerrorMessage(s->conn);
		if (s->stopped)
			errbuf_set(&s->err, "stopped by a signal while waiting to %s", what);
		else
			errbuf_set(&s->err, "could not %s: %.*s%s", what, session_trimmed(msg), msg,
				   session_error_hint(res, false));
		PQclear(res);
		return false;
	}
	if (out != NULL)
		*out = res;
	else
		PQclear(res);
	return true;
lost:
	PQclear(res);
	s->stopped = cancel_waited >= 0;
	session_disconnect(s);
	return false;
}

bool session_run(Session *s, const char *sql, int nparams, const char *const *params,
		 ExecStatusType want, PGresult **out, const char *what)
{
	return session_run_noted(s, sql, nparams, params, want, out, what, NULL);
}

bool session_lsn_field(Session *s, PGresult *res, int row, int col, Lsn *out,
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

/* The index of the argument "$N" at p names, or -1: not one. */
static int bind_arg(const char *p, int nargs)
{
	return p[0] == '$' && p[1] >= '1' && p[1] <= '9' && p[1] - '1' < nargs ? p[1] - '1'
									       : -1;
}

/*
 * Copies sql into out (when not NULL) with the arguments in place; returns
 * the length. Inside a quoted literal or a -- comment, $N stays as it is:
 * a comment that took a value with a newline in it would end early.
 */
static size_t bind_copy(const char *sql, const char *const *args, int nargs, char *out)
{
	char quote = 0; /* ' or " while in one; - while in a comment */
	size_t len = 0, n;
	int a;

	for (const char *p = sql; *p != '\0'; p++) {
		if (quote == '-' ? *p == '\n' : quote != 0 ? *p == quote : false)
			quote = 0;
		else if (quote == 0 && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (quote == 0 && p[0] == '-' && p[1] == '-')
			quote = '-';
		else if (quote == 0 && (a = bind_arg(p, nargs)) >= 0) {
			n = strlen(args[a]);
			if (out != NULL)
				memcpy(out + len, args[a], n);
			len += n;
			p++;
			continue;
		}
		if (out != NULL)
			out[len] = *p;
		len++;
	}
	if (out != NULL)
		out[len] = '\0';
	return len;
}

char *session_sql_bind(const char *sql, const char *const *args, int nargs)
{
	/* measured first, so that the text is written in one allocation */
	char *out = xmalloc(bind_copy(sql, args, nargs, NULL) + 1);

	bind_copy(sql, args, nargs, out);
	return out;
}

char *session_quote(Session *s, const char *text, bool ident)
{
	char *q = ident ? PQescapeIdentifier(s->conn, text, strlen(text))
			: PQescapeLiteral(s->conn, text, strlen(text));

	if (q == NULL)
		errbuf_set(&s->err, "could not quote \"%s\": %s", text, PQerrorMessage(s->conn));
	return q;
}

char *session_quote_list(Session *s, const char *const *texts, int n, bool ident,
			 const char *sep)
{
	char **quoted = quote_each(s, texts, n, ident), *list;

	if (quoted == NULL)
		return NULL;
	list = strv_join(quoted, n, sep);
	strv_free(quoted, n);
	return list;
}

/*
 * session_async.c: the server's WAL position, asked on a plain connection
 * without ever waiting, for the stream's loop (its lag), which must not
 * stop for it (DESIGN.md, invariant 10). One question at a time moves
 * through states that each poll takes as far as it can without blocking:
 *
 *   connecting (PQconnectPoll) -> setting (the session's settings, as a
 *   blocking connect sends them) -> asking -> answered
 *
 * A link that freezes leaves the question where it was, and nothing waits
 * on it; a connection that fails is closed and the next question makes a
 * new one. Before the connection is used for anything else,
 * session_finish_async() gives what is under way a moment, then drops it.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "session_internal.h"

enum SessionAsync {
	ASYNC_NONE,       /* nothing under way */
	ASYNC_CONNECTING, /* PQconnectPoll() said: wait for async_write or read */
	ASYNC_SETTING,    /* the session's settings sent */
	ASYNC_ASKING,     /* the question sent */
	ASYNC_ANSWERED,   /* async_pos holds the answer */
};

/*
 * Up to where the server's walsenders can send: the flush position on a
 * primary, the replayed one on a standby (where logical decoding reads);
 * asked each time, as a standby may have been promoted since.
 */
static const char position_sql[] =
	"SELECT CASE WHEN pg_catalog.pg_is_in_recovery() "
	"THEN pg_catalog.pg_last_wal_replay_lsn() "
	"ELSE pg_catalog.pg_current_wal_flush_lsn() END";

static int async_fail(Session *s, const char *what)
{
	const char *msg = s->conn ? PQerrorMessage(s->conn) : "";

	errbuf_set(&s->err, "could not ask the source for its WAL position (%s): %.*s", what,
		   session_trimmed(msg), msg);
	session_disconnect(s); /* also ends what was under way */
	return -1;
}

/* Whether the socket is ready for what PQconnectPoll() waits for. */
static bool connect_ready(Session *s)
{
	struct pollfd pfd = {.fd = PQsocket(s->conn),
			     .events = s->async_write ? POLLOUT : POLLIN};

	return pfd.fd >= 0 && poll(&pfd, 1, 0) > 0;
}

/* Sends sql, the next state once sent. */
static int async_send(Session *s, const char *sql, int next, const char *what)
{
	if (!PQsendQuery(s->conn, sql))
		return async_fail(s, what);
	s->async = next;
	return 0;
}

/* A command's results, all read (none is left busy); false on an error. */
static bool take_results(Session *s, ExecStatusType want, Lsn *pos)
{
	PGresult *res;
	bool ok = true;

	while ((res = PQgetResult(s->conn)) != NULL) {
		if (PQresultStatus(res) != want)
			ok = false;
		else if (pos != NULL && (PQntuples(res) != 1 || PQnfields(res) != 1 ||
					 PQgetisnull(res, 0, 0) ||
					 !lsn_parse(PQgetvalue(res, 0, 0), pos)))
			ok = false;
		PQclear(res);
	}
	return ok;
}

/* Moves what is under way on without waiting: 1 answered (or nothing
 * under way), 0 under way, -1 failed (the connection closed). */
static int async_step(Session *s)
{
	for (;;) {
		switch (s->async) {
		case ASYNC_NONE:
		case ASYNC_ANSWERED:
			return 1;
		case ASYNC_CONNECTING: {
			PostgresPollingStatusType st;

			if (!connect_ready(s))
				return 0;
			st = PQconnectPoll(s->conn);
			if (st == PGRES_POLLING_FAILED)
				return async_fail(s, "connecting");
			if (st != PGRES_POLLING_OK) {
				s->async_write = st == PGRES_POLLING_WRITING;
				return 0;
			}
			if (!session_check_encoding(s))
				return -1;
			if (async_send(s, session_settings_sql(s), ASYNC_SETTING, "settings") < 0)
				return -1;
			break;
		}
		case ASYNC_SETTING:
		case ASYNC_ASKING:
			if (!PQconsumeInput(s->conn))
				return async_fail(s, "reading");
			if (PQisBusy(s->conn))
				return 0;
			if (s->async == ASYNC_SETTING) {
				if (!take_results(s, PGRES_COMMAND_OK, NULL))
					return async_fail(s, "settings");
				if (async_send(s, position_sql, ASYNC_ASKING, "asking") < 0)
					return -1;
			} else {
				if (!take_results(s, PGRES_TUPLES_OK, &s->async_pos))
					return async_fail(s, "unexpected answer");
				s->async = ASYNC_ANSWERED;
			}
			break;
		}
	}
}

bool session_ask_position(Session *s, const ConnParams *cp)
{
	if (s->async != ASYNC_NONE)
		return true; /* one question at a time */
	if (session_connected(s))
		return async_send(s, position_sql, ASYNC_ASKING, "asking") == 0;
	if (!session_connect_begin(s, cp, NULL))
		return false;
	s->async = ASYNC_CONNECTING;
	s->async_write = true; /* as PQconnectStart()'s caller must assume */
	return true;
}

int session_poll_position(Session *s, Lsn *pos)
{
	int r;

	if (s->async == ASYNC_NONE) {
		errbuf_set(&s->err, "no question of the WAL position is under way");
		return -1;
	}
	r = async_step(s);
	if (r <= 0)
		return r;
	*pos = s->async_pos;
	s->async = ASYNC_NONE;
	return 1;
}

void session_finish_async(Session *s, int max_ms)
{
	int64_t deadline = mono_usecs() + (int64_t)max_ms * 1000;

	while (async_step(s) == 0) {
		struct pollfd pfd = {.fd = PQsocket(s->conn),
				     .events = s->async == ASYNC_CONNECTING && s->async_write
					       ? POLLOUT : POLLIN};

		if (mono_usecs() >= deadline) {
			session_disconnect(s);
			return;
		}
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			(void)async_fail(s, "waiting");
			return;
		}
	}
}

/*
 * session_repl.c: the replication protocol on a walsender connection:
 * IDENTIFY_SYSTEM, slot creation (stoppable) and removal, the initial
 * copy's snapshot transaction and its COPY rows, START_REPLICATION,
 * CopyData in and standby status updates out.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/frame.h"
#include "session_internal.h"

void system_info_clear(SystemInfo *si)
{
	free(si->systemid);
	free(si->dbname);
	memset(si, 0, sizeof(*si));
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

bool session_identify(Session *s, SystemInfo *out)
{
	PGresult *res;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (!session_run(s, "IDENTIFY_SYSTEM", 0, NULL, PGRES_TUPLES_OK, &res,
			 "identify the source system"))
		return false;
	if (PQntuples(res) != 1 || PQnfields(res) < 4 || PQgetisnull(res, 0, 3)) {
		errbuf_set(&s->err, "could not identify the source system: unexpected reply "
			  "(%d rows, %d fields); is this a logical replication connection?",
			  PQntuples(res), PQnfields(res));
		goto done;
	}
	if (!session_lsn_field(s, res, 0, 2, &out->xlogpos, "WAL position"))
		goto done;
	out->systemid = xstrdup(PQgetvalue(res, 0, 0));
	out->timeline = (uint32_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
	out->dbname = xstrdup(PQgetvalue(res, 0, 3));
	ok = true;
done:
	PQclear(res);
	return ok;
}

bool session_source_kind(Session *s, SourceKind *out)
{
	PGresult *res;
	const char *level;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (!session_run(s, "SELECT pg_catalog.pg_is_in_recovery(), "
			 "pg_catalog.current_setting('hot_standby_feedback'), "
			 "pg_catalog.current_setting('wal_level')",
			 0, NULL, PGRES_TUPLES_OK, &res, "ask whether the source is a standby"))
		return false;
	ok = PQntuples(res) == 1 && PQnfields(res) == 3 && !PQgetisnull(res, 0, 0);
	level = ok ? PQgetvalue(res, 0, 2) : "?";
	if (ok && strcmp(level, "logical") != 0) {
		errbuf_set(&s->err, "the source has wal_level = %s, but logical replication needs "
			  "wal_level = logical: set it in postgresql.conf and restart the server",
			  level);
		ok = false;
	} else if (ok) {
		out->standby = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		out->hs_feedback = strcmp(PQgetvalue(res, 0, 1), "on") == 0;
	} else
		errbuf_set(&s->err, "could not ask whether the source is a standby: unexpected "
			  "reply");
	s->standby = ok && out->standby;
	PQclear(res);
	return ok;
}

/*
 * What a slot on a standby waits for: logical decoding starts from a
 * running-transactions record (xl_running_xacts), which only the primary
 * writes -- its background writer every 15 s or so while other WAL is being
 * written, and its checkpoints; an idle primary writes none by itself.
 */
static const char standby_wait_note[] =
	"waiting for the primary to log a running-transactions record: a slot on a standby "
	"can be made only from one, which a busy primary logs every 15 s or so and an idle "
	"one not at all; to go on now, run SELECT pg_log_standby_snapshot() on the primary";

bool session_create_slot(Session *s, const char *slot, unsigned flags, Lsn *consistent_point)
{
	PGresult *res;
	char *id = session_quote(s, slot, true), *sql;
	const char *temp = (flags & SLOT_TEMPORARY) ? " TEMPORARY" : "";
	bool ok = false;

	if (id == NULL)
		return false;
	if (session_server_version(s) >= 150000)
		/* the option list of 15+, which alone can say FAILOVER (17+) */
		sql = xasprintf("CREATE_REPLICATION_SLOT %s%s LOGICAL pgoutput (SNAPSHOT '%s'%s)",
				id, temp, (flags & SLOT_USE_SNAPSHOT) ? "use" : "nothing",
				(flags & SLOT_FAILOVER) ? ", FAILOVER true" : "");
	else if (flags & SLOT_FAILOVER) {
		errbuf_set(&s->err, "could not create the replication slot: a failover slot needs "
			  "PostgreSQL 17 or later");
		PQfreemem(id);
		return false;
	} else
		/* the old spelling, which every server from 10 on takes */
		sql = xasprintf("CREATE_REPLICATION_SLOT %s%s LOGICAL pgoutput %s", id, temp,
				(flags & SLOT_USE_SNAPSHOT) ? "USE_SNAPSHOT" : "NOEXPORT_SNAPSHOT");
	PQfreemem(id);
	if (session_run_noted(s, sql, 0, NULL, PGRES_TUPLES_OK, &res, "create the replication slot",
			  s->standby ? standby_wait_note : NULL)) {
		ok = PQntuples(res) == 1 && PQnfields(res) >= 2 &&
		     session_lsn_field(s, res, 0, 1, consistent_point, "consistent point");
		if (!ok && PQntuples(res) != 1)
			errbuf_set(&s->err, "could not create the replication slot: unexpected reply");
		PQclear(res);
	}
	free(sql);
	return ok;
}

bool session_begin_snapshot(Session *s)
{
	return session_run(s, "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ", 0, NULL,
			   PGRES_COMMAND_OK, NULL, "begin the initial copy's transaction");
}

/*
 * 64 random bits in hex (16 digits and a NUL): from /dev/urandom, or, on
 * a system without it, from the clock and the address space, which still
 * differ between two devices that run as the same pid.
 */
static void random_hex(char out[17])
{
	uint64_t r = 0;
	FILE *f = fopen("/dev/urandom", "rb");

	if (f == NULL || fread(&r, sizeof(r), 1, f) != 1)
		r = (uint64_t)mono_usecs() ^ ((uint64_t)pgtime_now() << 20) ^
		    (uint64_t)(uintptr_t)&r ^ (uint64_t)(uintptr_t)out;
	if (f != NULL)
		fclose(f);
	snprintf(out, 17, "%016" PRIx64, r);
}

void session_temp_slot_name(const char *base, const char *what, char name[SLOT_NAME_SIZE])
{
	char hex[17];
	/* base_what_HEX within the server's 63 bytes: base is cut short */
	int room = SLOT_NAME_SIZE - 1 - 2 - (int)strlen(what) - 16;

	random_hex(hex);
	snprintf(name, SLOT_NAME_SIZE, "%.*s_%s_%s", room > 0 ? room : 0, base, what, hex);
}

bool session_snapshot_slot(Session *s, const ConnParams *cp, const char *slot, Lsn *point)
{
	SourceKind kind;

	return session_connect(s, cp) && session_source_kind(s, &kind) &&
	       session_begin_snapshot(s) &&
	       session_create_slot(s, slot, SLOT_TEMPORARY | SLOT_USE_SNAPSHOT, point);
}

bool session_commit(Session *s)
{
	return session_run(s, "COMMIT", 0, NULL, PGRES_COMMAND_OK, NULL,
			   "end the initial copy's transaction");
}

int session_copy_next(Session *s, char **row, size_t *len)
{
	PGresult *res;
	int n;
	bool ok;

	s->stopped = false;
	session_free_copybuf(s);
	/* without blocking, so that a stop request is seen while rows are slow */
	while ((n = PQgetCopyData(s->conn, &s->copybuf, 1)) == 0) {
		if (s->stopping != NULL && s->stopping()) {
			s->stopped = true;
			errbuf_set(&s->err, "stopped by a signal during the copy");
			return -1;
		}
		if (!session_wait_socket(s, 100)) {
			char why[sizeof(s->err.text)];

			/* which copy the lost link or server stopped */
			snprintf(why, sizeof(why), "%s", s->err.text);
			errbuf_set(&s->err, "the copy of \"%s\" stopped: %s",
				   s->copying ? s->copying : "?", why);
			return -1;
		}
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

		session_note_state(s, res);
		errbuf_set(&s->err, "the copy of \"%s\" from the source failed: %.*s%s",
			  s->copying ? s->copying : "?", session_trimmed(msg), msg,
			   session_error_hint(res, false));
	}
	PQclear(res);
	while ((res = PQgetResult(s->conn)) != NULL)
		PQclear(res);
	return ok ? 0 : -1;
}

bool session_copy_drain(Session *s)
{
	char *row;
	size_t len;
	int r;

	while ((r = session_copy_next(s, &row, &len)) > 0)
		;
	return r == 0;
}

bool session_drop_slot(Session *s, const char *slot)
{
	char *id = session_quote(s, slot, true), *sql;
	bool ok;

	if (id == NULL)
		return false;
	sql = xasprintf("DROP_REPLICATION_SLOT %s", id);
	PQfreemem(id);
	ok = session_run(s, sql, 0, NULL, PGRES_COMMAND_OK, NULL, "drop the replication slot");
	free(sql);
	return ok;
}

bool session_set_slot_failover(Session *s, const char *slot)
{
	char *id = session_quote(s, slot, true), *sql;
	bool ok;

	if (id == NULL)
		return false;
	sql = xasprintf("ALTER_REPLICATION_SLOT %s (FAILOVER true)", id);
	PQfreemem(id);
	ok = session_run(s, sql, 0, NULL, PGRES_COMMAND_OK, NULL,
			 "make the replication slot a failover slot");
	free(sql);
	return ok;
}

bool session_start(Session *s, const char *slot, Lsn start, int proto_version,
		   char *const *pubs, int npubs, bool binary)
{
	char *id = session_quote(s, slot, true), *names = NULL, *lit = NULL, *sql = NULL;
	char lsn[LSN_TEXT_SIZE];
	bool ok = false;

	if (id == NULL)
		goto done;
	/* publication_names is one string holding a list of identifiers */
	names = session_quote_list(s, (const char *const *)pubs, npubs, true, ",");
	if (names == NULL || (lit = session_quote(s, names, false)) == NULL)
		goto done;
	sql = xasprintf("START_REPLICATION SLOT %s LOGICAL %s "
			"(proto_version '%d', publication_names %s%s)",
			id, lsn_format(start, lsn), proto_version, lit,
			binary ? ", binary 'true'" : "");
	ok = session_run(s, sql, 0, NULL, PGRES_COPY_BOTH, NULL, "start replication");
done:
	PQfreemem(id);
	PQfreemem(lit);
	free(names);
	free(sql);
	return ok;
}

/*
 * Whether the stream's error says that WAL the slot needs is gone from the
 * server ("requested WAL segment ... has already been removed"): the
 * SQLSTATE is undefined_file when the walsender could not open the file,
 * but it follows a stale errno when the server finds the segment removed
 * after reading it, and the message may be translated; the function that
 * raised it is neither.
 */
static bool wal_gone_error(const PGresult *res, const char *state)
{
	const char *fn = res ? PQresultErrorField(res, PG_DIAG_SOURCE_FUNCTION) : NULL;

	return (state != NULL && strcmp(state, "58P01") == 0) ||
	       (fn != NULL && (strcmp(fn, "CheckXLogRemoved") == 0 ||
			       strcmp(fn, "WalSndSegmentOpen") == 0));
}

int session_receive(Session *s, const uint8_t **buf, size_t *len, int timeout_ms)
{
	bool waited = false;

	/* only the stream's own end sets them */
	s->data_error = s->wal_gone = s->server_error = false;
	for (;;) {
		int n;

		session_free_copybuf(s);
		n = PQgetCopyData(s->conn, &s->copybuf, 1);
		if (n > 0) {
			session_link_heard(s);
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
			s->wal_gone = wal_gone_error(res, state);
			s->server_error = res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK;
			session_note_state(s, res);
			if (PQresultStatus(res) == PGRES_COMMAND_OK) {
				errbuf_set(&s->err, "the source ended the replication stream");
			} else {
				const char *msg = res ? PQresultErrorMessage(res)
						      : PQerrorMessage(s->conn);

				errbuf_set(&s->err, "replication stream ended: %.*s%s",
					   session_trimmed(msg), msg, session_error_hint(res, true));
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
			/* bytes came, maybe of a message not whole yet */
			session_link_heard(s);
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

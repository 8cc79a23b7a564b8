/*
 * session_internal.h: what the parts of the session module share (not for
 * other modules): the Session itself, running a command with the error
 * set the one way, quoting, and the catalog SQL compiled in from sql/.
 * session.c owns the connection; session_repl.c the replication protocol;
 * session_catalog.c the catalog queries.
 */
#ifndef PGMIRROR_SESSION_INTERNAL_H
#define PGMIRROR_SESSION_INTERNAL_H

#include <libpq-fe.h>

#include "pgmirror/session.h"

struct Session {
	PGconn *conn;
	char *copybuf;       /* last PQgetCopyData buffer, freed on next call */
	char sqlstate[6];    /* the last error's SQLSTATE; "": none, or not the server's */
	bool data_error;     /* last error: the stream hit data the source cannot send */
	bool wal_gone;       /* last error: the slot's WAL was removed (SQLSTATE 58P01) */
	bool server_error;   /* last error: the server ended the stream with an ERROR */
	bool (*stopping)(void); /* asked while waiting on the server; NULL: never */
	bool stopped;        /* last error: given up because stopping() said so */
	char *copying;       /* "schema.table" of the last copy begun, for messages */
	bool standby;        /* the server is in recovery (session_source_kind()) */
	bool walsender;      /* a replication connection: no extended protocol */
	int async;           /* what session_async.c has under way (SessionAsync) */
	bool async_write;    /* connecting: PQconnectPoll() waits to write */
	Lsn async_pos;       /* its answer, once it came */
	ErrBuf err;          /* the last error */
	int64_t heard_at;    /* when the server was last heard (session_link.c) */
	const PGconn *bound_for;   /* the connection link_bound_ms was read of */
	int link_bound_ms;         /* session_link_bound_ms(), read once a connection */
	PGconn *probe;       /* asks whether the link carries (session_link.c) */
	int64_t probe_at;    /* when it was begun */
	bool probe_write;    /* it waits to write (PQconnectPoll()) */
	char *pin_host;      /* session_pin_address(): the host, its address */
	char *pin_hostaddr;  /* ... (NULL: none), and port to connect to, */
	char *pin_port;      /* in place of what -d, -h and -p say */
};

/*
 * Connecting in steps (session.c), for connect_with() and for a
 * connection made without waiting (session_async.c):
 * session_connect_begin() starts one (replication: "database" for the
 * walsender, NULL for plain), PQconnectPoll() drives it,
 * session_connect_failed() sets the error of one that failed and returns
 * false, session_check_encoding() refuses a server that will not speak
 * UTF-8, and the commands of session_settings_sql() come first on it.
 */
bool session_connect_begin(Session *s, const ConnParams *cp, const char *replication);
/* The secrets libpq took for conn (password, sslpassword; a service file's
 * too), to log_hide(). */
void session_hide_conn_password(PGconn *conn);
bool session_connect_failed(Session *s);
bool session_check_encoding(Session *s);
const char *session_settings_sql(const Session *s);

/*
 * The link (session_link.c). session_link_defaults() fills keys[] and
 * vals[] with pgmirror's TCP keepalive and tcp_user_timeout defaults (to
 * come before -d, which wins) and returns how many; session_pin_keywords()
 * fills them with the pinned host, hostaddr and port (to come after -d,
 * -h and -p), none when nothing is pinned. session_link_heard() notes that
 * the server was heard (or a command sent); session_link_free() frees what
 * the link's checks keep.
 */
#define SESSION_LINK_KEYWORDS 5
#define SESSION_PIN_KEYWORDS 3
int session_link_defaults(const char **keys, const char **vals);
int session_pin_keywords(const Session *s, const char **keys, const char **vals);
void session_link_heard(Session *s);
void session_link_free(Session *s);

/* Notes the SQLSTATE of res (NULL: none) as the last error's. */
void session_note_state(Session *s, const PGresult *res);

/* Frees the last PQgetCopyData buffer, if any. */
void session_free_copybuf(Session *s);

/* The length of a libpq message without its final newlines. */
int session_trimmed(const char *msg);

/*
 * What to do about an error the server reported, where pgmirror knows
 * more than the server says; "" when it does not.
 */
const char *session_error_hint(const PGresult *res, bool in_stream);

/*
 * Runs a command; true when its status is `want`. The result is returned in
 * *out when out is not NULL (PQclear it), else cleared here; of several
 * statements, the last one's, or the first error, as PQexec() does. With
 * nparams > 0 the values go as parameters $1.. (on a walsender, which
 * takes the simple query protocol alone, as quoted literals in the text:
 * session_sql_bind()).
 *
 * Any command may wait on the server for long (slot creation waits for
 * every transaction in progress; a catalog query for a lock a DDL
 * statement holds): it waits in steps of 100 ms and asks s->stopping() in
 * between, which for a session used while a stream runs also answers that
 * stream's server. When stopping() says stop, the command is cancelled and,
 * once the server has answered, the call fails with
 * session_error_stopped() true -- unless the command had already
 * finished, which then counts as done. A server that does not answer the
 * cancel within 10 s loses the connection. session_run_noted() also logs
 * wait_note (unless NULL) once when the command has waited a second.
 */
bool session_run(Session *s, const char *sql, int nparams, const char *const *params,
		 ExecStatusType want, PGresult **out, const char *what);
bool session_run_noted(Session *s, const char *sql, int nparams, const char *const *params,
		       ExecStatusType want, PGresult **out, const char *what,
		       const char *wait_note);

/*
 * Waits up to timeout_ms (at most 100 ms; -1: 100 ms) until the socket has
 * something to read, and reads it; false with the error set when the
 * connection failed. A signal (EINTR) ends the wait early, so that the
 * caller looks at its stop check at once.
 */
bool session_wait_socket(Session *s, int timeout_ms);

/* The OIDs of tables[0..n-1] as an array literal's text, "{1,2}" (malloc'd). */
char *session_oid_array(const SourceTable *tables, int n);

/* text as an SQL identifier or literal (PQfreemem it); NULL, error set, on failure. */
char *session_quote(Session *s, const char *text, bool ident);

/* texts each quoted as session_quote() does, joined with sep (malloc'd);
 * NULL, error set, when one cannot be quoted. */
char *session_quote_list(Session *s, const char *const *texts, int n, bool ident,
			 const char *sep);

/*
 * The SQL text with each $1..$9 replaced by args[0..8] (malloc'd): for a
 * walsender connection, which takes no parameters. Every arg is either a
 * fixed fragment of pgmirror's own or quoted by session_quote(). A $N
 * beyond nargs, or inside a quoted literal or name or a -- comment, is
 * left as it is; what is put in is not looked into again.
 */
char *session_sql_bind(const char *sql, const char *const *args, int nargs);

/* An LSN column of res (NULL: LSN_INVALID); false, error set, when invalid. */
bool session_lsn_field(Session *s, PGresult *res, int row, int col, Lsn *out,
		       const char *what);

/* The catalog queries, from sql/source-*.sql (scripts/sql2c.sh). */
extern const char session_sql_tables[];
extern const char session_sql_slot[];
extern const char session_sql_missing_publications[];
extern const char session_sql_type[];
extern const char session_sql_column_fill[];
extern const char session_sql_column_attnums[];
extern const char session_sql_relation_name[];
extern const char session_sql_unreadable_table[];
extern const char session_sql_indexes[];
extern const char session_sql_xid_visible[];
extern const char session_sql_fingerprint[];

#endif

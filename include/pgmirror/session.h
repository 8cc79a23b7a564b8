/*
 * session.h: the connections to the source. The replication protocol
 * (IDENTIFY_SYSTEM, slot creation and removal, START_REPLICATION, CopyData
 * in and status updates out, the initial copy's COPY) and the catalog
 * queries pgmirror makes (published tables, slots, publications, and the
 * applier's look-ups). The only module that includes libpq-fe.h
 * (session.c, session_repl.c, session_catalog.c); it knows nothing of
 * SQLite or of what the messages mean.
 */
#ifndef PGMIRROR_SESSION_H
#define PGMIRROR_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/catalog.h"
#include "pgmirror/connparams.h"
#include "pgmirror/util.h"

typedef struct Session Session;

typedef struct SystemInfo {
	char *systemid;     /* IDENTIFY_SYSTEM systemid */
	uint32_t timeline;
	Lsn xlogpos;        /* WAL flush position when asked */
	char *dbname;
} SystemInfo;

typedef struct SlotInfo {
	bool exists;
	bool active;           /* a connection is streaming from it */
	bool usable;           /* not invalidated (wal_status <> 'lost') */
	bool failover;         /* a failover slot (17+) */
	char *invalidated_by;  /* invalidation_reason (17+), or NULL */
	char *plugin;
	char *database;
	Lsn confirmed_flush;
} SlotInfo;

/*
 * A published table as the catalog describes it: the columns pgoutput's
 * Relation message will list (not dropped, generated only where published,
 * within the publications' column lists), with the same types, typmods and key flags,
 * so the table the initial copy makes is the one the stream expects.
 */
typedef struct SourceColumn {
	char *name;
	uint32_t type_oid;
	int32_t type_mod;
	bool is_key;        /* replica identity column (all for FULL) */
	int attnum;         /* pg_attribute.attnum */
	uint32_t base_oid;  /* a domain's base type (its modifier base_mod), */
	int32_t base_mod;   /* else type_oid and type_mod */
} SourceColumn;

typedef struct SourceTable {
	uint32_t oid;
	char *nspname;
	char *relname;
	char replident;     /* d, n, f or i */
	bool partitioned;   /* a partitioned root: its rows are in the leaves */
	bool generated;     /* a published column is generated (PostgreSQL 18+:
			     * publish_generated_columns, a column list) */
	char *rowfilter;    /* the publications' row filters OR-ed; NULL: all rows */
	char *definition;   /* what makes its published contents, as text
			     * (sql/source-tables.sql); compared, not read */
	int ncols;
	SourceColumn *cols;
} SourceTable;

void system_info_clear(SystemInfo *si);
void slot_info_clear(SlotInfo *si);
void source_tables_free(SourceTable *tables, int n);
/* The table of relation oid among tables[0..n-1]; NULL: none. */
const SourceTable *source_table_find(const SourceTable *tables, int n, uint32_t oid);

Session *session_new(void);
void session_free(Session *s);

/* The last error, with what to do where that is known; owned by s. */
const char *session_error(const Session *s);
/* True when the last error was "object in use" (the slot is active). */
bool session_error_in_use(const Session *s);
/* True when the stream ended on data the source cannot send (SQLSTATE
 * class 22, e.g. text not valid in its encoding): a retry meets it again. */
bool session_error_data(const Session *s);
/* True when the stream ended because a file the slot needs, its WAL above
 * all, is gone from the source (SQLSTATE 58P01, "requested WAL segment ...
 * has already been removed"): that slot can never stream again. */
bool session_error_wal_gone(const Session *s);
/* True when the server ended the stream with an ERROR of its own (not a
 * connection that broke). */
bool session_error_server(const Session *s);
/* True when the server ended a stream that had started with "undefined
 * object" (SQLSTATE 42704): pgoutput found no publication of the mirror's
 * in the catalog as it was at a change (before PostgreSQL 18), which it
 * meets again on every try, even once the publication exists again. */
bool session_error_publication_gone(const Session *s);
/* True when the server refused the last command for want of a privilege
 * (SQLSTATE 42501, e.g. a COPY of a table the role may not read). */
bool session_error_privilege(const Session *s);
/* The last error: text the source cannot convert to UTF-8 (22021,
 * character_not_in_repertoire). */
bool session_error_bad_text(const Session *s);
/* True when the last call gave up because the stop check said so. */
bool session_error_stopped(const Session *s);
/*
 * True when the last error may not come again on a later try: the
 * connection was lost, the server had no room, was shutting down or
 * cancelled the command, a name or object was taken or locked. A table
 * sync that a service cannot make now is tried again later.
 */
bool session_error_transient(const Session *s);

/*
 * stopping (NULL: none) is asked every 100 ms or so while a command waits
 * on the server for long: slot creation and the rows of a copy. When it
 * says true the command is cancelled and the call fails with
 * session_error_stopped() true.
 */
void session_set_stop_check(Session *s, bool (*stopping)(void));

/*
 * Connects to the source cp names (connparams.h; a NULL or empty field:
 * what -d and the PG* environment say) with replication=database, with client_encoding UTF8 (checked) and with the
 * timeouts a role or database may set (statement_timeout, lock_timeout,
 * idle_in_transaction_session_timeout, transaction_timeout) turned off, and
 * fixes the settings that shape text output (TimeZone, DateStyle,
 * IntervalStyle, extra_float_digits, bytea_output).
 */
bool session_connect(Session *s, const ConnParams *cp) PGM_MUST_CHECK;
void session_disconnect(Session *s);
/* The connection is (still) up. */
bool session_connected(const Session *s);
/* PQserverVersion(), e.g. 150004. */
int session_server_version(const Session *s);

bool session_identify(Session *s, SystemInfo *out) PGM_MUST_CHECK;

/* What session_source_kind() found out about the server. */
typedef struct SourceKind {
	bool standby;        /* in recovery: a hot standby */
	bool hs_feedback;    /* hot_standby_feedback = on (meaningful on a standby) */
} SourceKind;

/*
 * Whether the source is a primary or a hot standby (pg_is_in_recovery()),
 * and the standby's hot_standby_feedback; an error when its wal_level is
 * not logical. Asked in one statement on each new replication
 * connection before any snapshot is taken; a standby promoted since answers
 * as a primary. The answer also makes session_create_slot() tell the user,
 * once it has waited a second, what a slot on a standby waits for.
 */
bool session_source_kind(Session *s, SourceKind *out) PGM_MUST_CHECK;
bool session_slot_info(Session *s, const char *slot, SlotInfo *out) PGM_MUST_CHECK;
/* Sets *missing to a malloc'd comma-separated list of the names that are
 * not publications of this database (NULL when all exist). */
bool session_missing_publications(Session *s, char *const *names, int n,
				  char **missing) PGM_MUST_CHECK;
/*
 * The tables of the publications (the root of a partitioned table when a
 * publication has publish_via_partition_root, else its leaves), sorted by
 * schema and name. *out is malloc'd (source_tables_free()).
 */
bool session_publication_tables(Session *s, char *const *pubs, int npubs,
				SourceTable **out, int *n) PGM_MUST_CHECK;

/*
 * The fingerprint of what pgmirror follows of the publications (their
 * tables by OID and name, row filters, column lists, options, partitions,
 * catalog rows, and the published tables' columns and indexes), computed
 * by the server in one statement from the catalog rows that decide them
 * (sql/source-fingerprint.sql: over a superset of the published tables);
 * equal fingerprints mean nothing pgmirror follows changed. types: the
 * distinct "typeoid:typmod" of those tables' columns, comma-separated.
 */
typedef struct PubFingerprint {
	char *hash;
	char *types;
} PubFingerprint;

void pub_fingerprint_clear(PubFingerprint *fp);
bool session_publication_fingerprint(Session *s, char *const *pubs, int npubs,
				     PubFingerprint *out) PGM_MUST_CHECK;

/* How session_create_slot() makes a slot (or-ed). */
enum {
	SLOT_USE_SNAPSHOT = 1, /* see below */
	SLOT_TEMPORARY = 2,    /* dropped when this connection ends (a table's
				* sync, --verify): it only gives a snapshot and
				* its LSN */
	SLOT_FAILOVER = 4,     /* a failover slot (PostgreSQL 17+), which standbys
				* with sync_replication_slots keep a copy of */
};

/*
 * SLOT_USE_SNAPSHOT: the slot's consistent snapshot becomes that of the open
 * transaction (session_begin_snapshot() just before), for a copy.
 * The server waits for every transaction in progress to end first, which
 * can take long: the stop check is honoured meanwhile (see above). A
 * creation cancelled that way leaves no slot; one that finished before the
 * cancel reached the server counts as done.
 *
 * On a standby (as session_source_kind() found) the server waits for the
 * primary's next running-transactions record instead, which an idle primary
 * does not write by itself: after a second of waiting this is logged once,
 * with the hint to run pg_log_standby_snapshot() on the primary.
 */
bool session_create_slot(Session *s, const char *slot, unsigned flags,
			 Lsn *consistent_point) PGM_MUST_CHECK;
bool session_drop_slot(Session *s, const char *slot) PGM_MUST_CHECK;
/* ALTER_REPLICATION_SLOT slot (FAILOVER true), PostgreSQL 17+. */
bool session_set_slot_failover(Session *s, const char *slot) PGM_MUST_CHECK;

/* BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ, for the initial copy. */
bool session_begin_snapshot(Session *s) PGM_MUST_CHECK;

/*
 * A snapshot with a known LSN, for a table's sync and for --verify:
 * connects s to cp, opens the snapshot's transaction and creates
 * the temporary slot `slot` (SLOT_TEMPORARY | SLOT_USE_SNAPSHOT) whose
 * consistent point is *point. The snapshot lasts while s runs nothing but
 * queries and COPYs in it; session_free() or session_disconnect() ends it
 * and the slot with it. On a standby the wait is announced as
 * session_create_slot() says.
 */
bool session_snapshot_slot(Session *s, const ConnParams *cp, const char *slot, Lsn *point)
	PGM_MUST_CHECK;

/* The size of a slot name with its NUL (the server's NAMEDATALEN). */
#define SLOT_NAME_SIZE 64

/*
 * A name for a temporary slot of the mirror whose slot is base: base (cut
 * short to fit), what ("sync", "verify"), and 64 random bits, in the
 * server's 63 bytes. Never built from the pid or the time alone: devices
 * in containers all run as the same pid, and two that sync the same table
 * at once must not take each other's name.
 */
void session_temp_slot_name(const char *base, const char *what, char name[SLOT_NAME_SIZE]);
bool session_commit(Session *s) PGM_MUST_CHECK;

/*
 * COPY (SELECT columns FROM table [WHERE rowfilter]) TO STDOUT in text
 * format, or in binary format when binary. Then session_copy_next() until
 * it returns 0 (the COPY ended well) or -1 (session_error();
 * session_error_stopped() when the stop check said so); 1 gives one
 * CopyData message in *row, *len bytes (a text row with its final
 * newline), writable and valid until the next call.
 */
bool session_copy_begin(Session *s, const SourceTable *t, bool binary) PGM_MUST_CHECK;

/* The key order of a copy in parts: the key columns, and where to go on. */
typedef struct SourceOrder {
	int nkeys;
	const int *cols;          /* the key columns, as indexes into t->cols */
	const bool *bytewise;     /* per key column: text, ordered COLLATE "C" */
	const char *const *after; /* NULL: from the first row; else each key
				   * column's last value copied, as text */
} SourceOrder;

/* session_copy_begin(), reading the rows after order->after in key order. */
bool session_copy_begin_ordered(Session *s, const SourceTable *t, bool binary,
				const SourceOrder *order) PGM_MUST_CHECK;
/* Whether the source's database encoding is UTF8 (its text then orders
 * COLLATE "C" as its UTF-8 bytes do here). */
bool session_server_utf8(Session *s);
/*
 * The source's estimate of each table's size: est_rows[i] (pg_class's
 * reltuples; -1 when it has none) and est_bytes[i] (the main fork's size
 * and its TOAST table's), a partitioned root's summed over its partitions.
 */
bool session_table_sizes(Session *s, const SourceTable *t, int n, int64_t *est_rows,
			 int64_t *est_bytes) PGM_MUST_CHECK;
int session_copy_next(Session *s, char **row, size_t *len);
/* Reads the rest of a COPY whose rows are no longer wanted and lets them
 * go, so that the connection serves the next command; false with the
 * error set. */
bool session_copy_drain(Session *s) PGM_MUST_CHECK;

/* START_REPLICATION ... LOGICAL start (proto_version, publication_names,
 * and binary 'true' when binary: PostgreSQL 14 or later). */
bool session_start(Session *s, const char *slot, Lsn start, int proto_version,
		   char *const *pubs, int npubs, bool binary);

/*
 * Waits up to timeout_ms (0: do not wait) for one CopyData message.
 * Returns 1 with *buf and *len set (valid until the next call), 0 when none
 * arrived in time, -1 when the stream ended or failed (session_error()).
 */
int session_receive(Session *s, const uint8_t **buf, size_t *len, int timeout_ms);

/* Sends a Standby status update. */
bool session_send_status(Session *s, Lsn write, Lsn flush, Lsn apply,
			 bool reply_requested) PGM_MUST_CHECK;

/*
 * A plain (non-replication) connection to the same database, for catalog
 * look-ups while the replication connection streams. Same settings.
 */
bool session_connect_plain(Session *s, const ConnParams *cp) PGM_MUST_CHECK;

/*
 * The server's WAL position, asked without waiting (session_async.c) on a
 * plain connection, for a loop that must never stop for it (the stream's
 * lag). session_ask_position() sends the question, first beginning a
 * plain connection (cp as session_connect_plain() takes it) when s has
 * none; false, error set, when that cannot begin. session_poll_position()
 * moves it on without waiting: 1 once answered (*pos: up to where the
 * server's walsenders can send, the flush position of a primary, the
 * replayed one of a standby), 0 while under way, -1 on failure (error set,
 * the connection closed). session_finish_async() frees the connection for
 * other commands: it waits at most max_ms for a question under way,
 * connecting included (its answer kept for the next poll), then closes
 * the connection.
 */
bool session_ask_position(Session *s, const ConnParams *cp) PGM_MUST_CHECK;
int session_poll_position(Session *s, Lsn *pos);
void session_finish_async(Session *s, int max_ms);

/*
 * Makes s's next connections go to the address from is connected to (its
 * host, the numeric address libpq resolved, and port) rather than to what
 * -d, -h and -p say: a connection begun without waiting then resolves no
 * host name, which would block (session_link.c). When from is not
 * connected (NULL, or a failover under way), s goes where -d says again.
 */
void session_pin_address(Session *s, const Session *from);

/*
 * The link's bound, in ms: the connection's tcp_user_timeout (pgmirror's
 * default 30 s unless -d sets one). A connection silent that long,
 * although asked (a stream) or checked on a new connection (a command
 * that waits: session_link.c), is given up.
 */
int session_link_bound_ms(Session *s);
/* When bytes last came from the server while s waited for them, or a
 * message was taken (mono_usecs(); 0: not since connecting). */
int64_t session_heard_at(const Session *s);

/*
 * Asked while s waits on a silent server (a command waits for its answer,
 * a stream for its next message): false, error set, once neither s nor a
 * new connection to the same address (the probe, begun after half the
 * link's bound of silence and given half the bound to be answered) has
 * heard from the server within the bound; true while the server is heard,
 * or answers the probe (it is only slow), or the bound has not run out.
 */
bool session_link_alive(Session *s);

/* The libpq in use (PQlibVersion()), as text: "15.4". */
const char *session_libpq_version(void);

/*
 * Hands every password cp, -d and PGPASSWORD carry to log_hide(), so that
 * no message, error or stored text shows one (conn_secret.c); true when -d
 * itself holds one (a password on the command line). Call it before
 * anything can log.
 */
bool session_hide_passwords(const ConnParams *cp);

/*
 * -d as a message may show it (malloc'd), in a command to run: a database
 * name as given; a connection string (keyword/value or URI) as libpq
 * parses it, written back in keyword/value form, the value of each option
 * libpq hides (password, sslpassword) replaced by LOG_SECRET_MASK before
 * it is quoted; LOG_SECRET_MASK alone for a string libpq cannot parse.
 */
char *session_conninfo_shown(const char *dbname);

/* The applier's look-ups below need a plain connection: they pass their
 * values as parameters, which a walsender does not take. */

/* Looks up a type by OID; out->name is NULL when there is no such type
 * (dropped since). False (error set) when the look-up fails. */
bool session_type_info(Session *s, uint32_t oid, SourceType *out) PGM_MUST_CHECK;

/* The attnums of the named columns of relid now (0: no such column). */
bool session_column_attnums(Session *s, uint32_t relid, const char *const *names, int n,
			    int *attnums) PGM_MUST_CHECK;

/*
 * The indexes of relids[0..n-1] the mirror copies (see Catalog.indexes).
 * With xid, first waits (up to about half a second) until that transaction
 * is visible on the source: the stream may bring a transaction a moment
 * before other sessions see it committed.
 */
bool session_indexes(Session *s, const uint32_t *relids, int n, uint32_t xid,
		     SourceIndex **out, int *nout) PGM_MUST_CHECK;

/* What existing rows hold in column of relid (looked up now). */
bool session_column_fill(Session *s, uint32_t relid, const char *column,
			 SourceFill *out) PGM_MUST_CHECK;

/* The schema and name relid has now (malloc'd); NULLs when there is no
 * such relation. */
bool session_relation_name(Session *s, uint32_t relid, char **nspname, char **relname)
	PGM_MUST_CHECK;

/* Which of tables[0..n-1] the connection's role cannot read (its schema,
 * or a published column: tables[i].cols): grants[i] (malloc'd) the GRANT
 * that lets it read table i, NULL when it can. */
bool session_unreadable_tables(Session *s, const SourceTable *tables, int n, char **grants)
	PGM_MUST_CHECK;

/*
 * The current values of column of relid (whatever its name is now, so
 * that a backlog replayed after a rename still finds it) with the given
 * key columns,
 * streamed row by row to row() (see CatalogRowFn). tick (unless NULL) is
 * called after each row and at least every 100 ms while no row comes;
 * when it or row() returns false, or the rows cannot be read one by one,
 * the connection is closed (ending the query) and false returned: the
 * caller connects again for its next look-up.
 */
bool session_column_values(Session *s, uint32_t relid, const char *const *keys, int nkeys,
			   const char *column,
			   CatalogRowFn row, void *arg, TickFn tick,
			   void *tick_ctx) PGM_MUST_CHECK;

/* Highest pgoutput protocol version a server of this version speaks. */
int session_proto_version_for(int server_version);

#endif

/*
 * pgoutput.h: decoder of the pgoutput logical replication messages,
 * protocol versions 1 to 4 (PostgreSQL manual, "Logical Replication Message
 * Formats").
 *
 * The decoder is pure: bytes of one message in, one typed PgoMessage out.
 * It touches no socket and no database. Strings and values in the result
 * BORROW from the message buffer and from arrays inside the PgoDecoder:
 * they stay valid until the next pgoutput_decode() on the same decoder or
 * until the buffer is freed, whichever comes first. Nothing is allocated
 * per column; the decoder's arrays grow to the widest message seen and are
 * reused.
 */
#ifndef PGMIRROR_PGOUTPUT_H
#define PGMIRROR_PGOUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"

/* The first byte of every message. */
typedef enum PgoMsgType {
	PGO_BEGIN = 'B',
	PGO_MESSAGE = 'M',
	PGO_COMMIT = 'C',
	PGO_ORIGIN = 'O',
	PGO_RELATION = 'R',
	PGO_TYPE = 'Y',
	PGO_INSERT = 'I',
	PGO_UPDATE = 'U',
	PGO_DELETE = 'D',
	PGO_TRUNCATE = 'T',
	PGO_STREAM_START = 'S',
	PGO_STREAM_STOP = 'E',
	PGO_STREAM_COMMIT = 'c',
	PGO_STREAM_ABORT = 'A',
	PGO_BEGIN_PREPARE = 'b',
	PGO_PREPARE = 'P',
	PGO_COMMIT_PREPARED = 'K',
	PGO_ROLLBACK_PREPARED = 'r',
	PGO_STREAM_PREPARE = 'p',
} PgoMsgType;

/* "Insert", "Stream Commit", ...; "unknown" for anything else. */
const char *pgoutput_msg_name(int type);

/* Kinds of a TupleData column. */
#define PGO_COL_NULL 'n'      /* NULL */
#define PGO_COL_UNCHANGED 'u' /* unchanged TOASTed value, not sent */
#define PGO_COL_TEXT 't'      /* text format */
#define PGO_COL_BINARY 'b'    /* binary format */

typedef struct PgoValue {
	char kind;           /* one of PGO_COL_* */
	uint32_t len;        /* bytes in data ('t' and 'b' only) */
	const uint8_t *data; /* borrowed, not NUL-terminated; NULL for n/u */
} PgoValue;

typedef struct PgoTuple {
	uint16_t ncols;  /* columns in this tuple */
	PgoValue *cols;  /* ncols values; decoder-owned array */
} PgoTuple;

/* Column flags in a Relation message. */
#define PGO_COLUMN_KEY 1

typedef struct PgoColumn {
	uint8_t flags;      /* PGO_COLUMN_KEY or 0 */
	const char *name;   /* borrowed */
	uint32_t type_oid;  /* pg_type OID */
	int32_t type_mod;   /* atttypmod */
} PgoColumn;

/* Truncate options. */
#define PGO_TRUNCATE_CASCADE 1
#define PGO_TRUNCATE_RESTART_IDENTITY 2

/* Message flags of a logical decoding message ('M'). */
#define PGO_MESSAGE_TRANSACTIONAL 1

typedef struct PgoBegin {
	Lsn final_lsn;       /* LSN of the commit record */
	int64_t commit_time; /* usecs since 2000-01-01 */
	uint32_t xid;
} PgoBegin;

typedef struct PgoCommit {
	uint8_t flags;
	Lsn commit_lsn;      /* LSN of the commit record */
	Lsn end_lsn;         /* end of the commit record: the resume point */
	int64_t commit_time;
} PgoCommit;

typedef struct PgoOrigin {
	Lsn origin_lsn;
	const char *name;
} PgoOrigin;

typedef struct PgoLogicalMsg {
	uint8_t flags;         /* PGO_MESSAGE_TRANSACTIONAL */
	Lsn lsn;
	const char *prefix;
	uint32_t content_len;
	const uint8_t *content;
} PgoLogicalMsg;

typedef struct PgoRelation {
	uint32_t oid;
	const char *nspname;  /* "" for pg_catalog */
	const char *relname;
	char replident;       /* 'd' default, 'n' nothing, 'f' full, 'i' index */
	uint16_t ncols;
	PgoColumn *cols;      /* decoder-owned array */
} PgoRelation;

typedef struct PgoType {
	uint32_t oid;
	const char *nspname;
	const char *typname;
} PgoType;

typedef struct PgoInsert {
	uint32_t relid;
	PgoTuple newtup;
} PgoInsert;

typedef struct PgoUpdate {
	uint32_t relid;
	char old_kind;        /* 0 (no old tuple), 'K' (key) or 'O' (old row) */
	PgoTuple oldtup;      /* valid when old_kind != 0 */
	PgoTuple newtup;
} PgoUpdate;

typedef struct PgoDelete {
	uint32_t relid;
	char old_kind;        /* 'K' or 'O' */
	PgoTuple oldtup;
} PgoDelete;

typedef struct PgoTruncate {
	uint8_t options;          /* PGO_TRUNCATE_* */
	uint32_t nrelids;
	const uint32_t *relids;   /* decoder-owned array */
} PgoTruncate;

typedef struct PgoStreamStart {
	uint32_t xid;
	uint8_t first_segment;    /* 1 for the first segment of this xid */
} PgoStreamStart;

typedef struct PgoStreamCommit {
	uint32_t xid;
	uint8_t flags;
	Lsn commit_lsn;
	Lsn end_lsn;
	int64_t commit_time;
} PgoStreamCommit;

typedef struct PgoStreamAbort {
	uint32_t xid;
	uint32_t subxid;          /* == xid when the whole transaction aborts */
	bool has_abort_info;      /* v4 with streaming = parallel */
	Lsn abort_lsn;
	int64_t abort_time;
} PgoStreamAbort;

/* Begin Prepare, Prepare and Stream Prepare share one layout. */
typedef struct PgoPrepare {
	uint8_t flags;            /* absent in Begin Prepare: 0 */
	Lsn prepare_lsn;
	Lsn end_lsn;
	int64_t prepare_time;
	uint32_t xid;
	const char *gid;
} PgoPrepare;

typedef struct PgoCommitPrepared {
	uint8_t flags;
	Lsn commit_lsn;
	Lsn end_lsn;
	int64_t commit_time;
	uint32_t xid;
	const char *gid;
} PgoCommitPrepared;

typedef struct PgoRollbackPrepared {
	uint8_t flags;
	Lsn prepare_end_lsn;
	Lsn rollback_end_lsn;
	int64_t prepare_time;
	int64_t rollback_time;
	uint32_t xid;
	const char *gid;
} PgoRollbackPrepared;

typedef struct PgoMessage {
	PgoMsgType type;
	bool has_xid;   /* the streamed-transaction Xid field was present */
	uint32_t xid;   /* that field (Relation..Truncate, Message in a stream) */
	union {
		PgoBegin begin;
		PgoCommit commit;
		PgoOrigin origin;
		PgoLogicalMsg message;
		PgoRelation relation;
		PgoType type;
		PgoInsert insert;
		PgoUpdate update;
		PgoDelete delete;
		PgoTruncate truncate;
		PgoStreamStart stream_start;
		PgoStreamCommit stream_commit;
		PgoStreamAbort stream_abort;
		PgoPrepare begin_prepare;
		PgoPrepare prepare;
		PgoPrepare stream_prepare;
		PgoCommitPrepared commit_prepared;
		PgoRollbackPrepared rollback_prepared;
	} u;
} PgoMessage;

typedef struct PgoDecoder PgoDecoder;

/*
 * A decoder for one replication stream.
 * proto_version: 1..4, as sent in START_REPLICATION.
 * abort_info: true when streaming = parallel was requested (v4), so that
 *   Stream Abort carries the abort LSN and time.
 */
PgoDecoder *pgoutput_decoder_new(int proto_version, bool abort_info);
void pgoutput_decoder_free(PgoDecoder *dec);

/*
 * Decodes one message of len bytes. The decoder follows Stream Start and
 * Stream Stop itself: between them, and with protocol version 2 or later,
 * the Xid field is read from Relation, Type, Insert, Update, Delete,
 * Truncate and Message. On success fills *msg and returns true.
 * On a malformed message returns false, leaves the stream state as it was,
 * and pgoutput_error() names the message type and byte offset, e.g.
 * "malformed Insert message: truncated at byte offset 9".
 */
bool pgoutput_decode(PgoDecoder *dec, const uint8_t *buf, size_t len,
		     PgoMessage *msg) PGM_MUST_CHECK;

/*
 * Whether the decoder is between a Stream Start and a Stream Stop; inside,
 * the Xid field is read from Relation, Type, Insert, Update, Delete,
 * Truncate and Message (protocol version 2 and later). The decoder tracks
 * this itself from the messages it decodes; the fuzzer and the unit tests
 * check that it does.
 */
bool pgoutput_in_stream(const PgoDecoder *dec);

/* Text of the last error; owned by the decoder. */
const char *pgoutput_error(const PgoDecoder *dec);

#endif

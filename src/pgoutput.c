/*
 * pgoutput.c: decoder of the pgoutput logical replication messages,
 * protocol versions 1 to 4.
 *
 * The format is the PostgreSQL manual's "Logical Replication Message
 * Formats" (section 55.9 in the version 16 manual, under "Frontend/Backend
 * Protocol"); the server's writer is src/backend/replication/logical/
 * proto.c. One message arrives as the data of one XLogData frame. It starts
 * with a type byte, the fields follow with no padding, integers are
 * big-endian, a String ends at its NUL. A worked example, an Insert of
 * (42, NULL, <unchanged toast>) into relation 16384, protocol version 1:
 *
 *	49                     Byte1 'I'      Insert
 *	00 00 40 00            Int32          relation OID 16384
 *	4e                     Byte1 'N'      a new tuple follows
 *	00 03                  Int16          TupleData: 3 columns
 *	74 00 00 00 02 34 32   't' Int32 Byten  column 1: text "42"
 *	6e                     'n'            column 2: NULL
 *	75                     'u'            column 3: unchanged TOASTed value
 *
 * Seventeen bytes. Cut to its first 11 it fails with "malformed Insert
 * message: truncated at byte offset 9": the length field of column 1
 * starts there and needs 4 bytes. Cut to 9 it fails sooner, with "3
 * columns but only 1 byte left at byte offset 6".
 *
 * Inside a streamed transaction (after Stream Start, before Stream Stop)
 * and with protocol version 2 or later, Relation, Type, Insert, Update,
 * Delete, Truncate and Message carry the transaction's Xid as an Int32
 * right after the type byte: "49 00 00 02 e9 00 00 40 00 ..." is the same
 * Insert streamed for xid 745. Nothing in the message says whether the Xid
 * is there, so the decoder follows Stream Start and Stream Stop itself.
 *
 * Version 2 adds the streaming messages (S, E, c, A), version 3 the
 * two-phase ones (b, P, K, r, p), version 4 the abort LSN and time in
 * Stream Abort when streaming = parallel. A message the negotiated version
 * cannot carry, and a message out of place around a stream, is rejected
 * like a malformed one: the server never sends either.
 *
 * Counts are checked against the bytes left before anything is allocated
 * or looped over: a TupleData column takes at least 1 byte, a Relation
 * column at least 10 (flags, an empty name's NUL, type OID, type modifier),
 * a Truncate relation OID 4. So a lying count fails at once, and the
 * decoder's arrays never grow past twice what a real message needed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/cursor.h"
#include "pgmirror/pgoutput.h"

#define PGO_ERROR_SIZE 256

/* First protocol version that carries each group of messages. */
#define PGO_PROTO_MIN 1
#define PGO_PROTO_STREAM 2
#define PGO_PROTO_TWOPHASE 3
#define PGO_PROTO_PARALLEL 4
#define PGO_PROTO_MAX 4

/* Smallest Relation column: flags, "" (its NUL), type OID, type modifier. */
#define PGO_RELATION_COLUMN_MIN 10

struct PgoDecoder {
	int proto_version;        /* as given to pgoutput_decoder_new() */
	bool abort_info;          /* Stream Abort carries LSN and time */
	bool in_stream;           /* between Stream Start and Stream Stop */
	int type;                 /* type byte of the message being decoded */
	PgoColumn *cols;          /* Relation columns */
	size_t cols_cap;          /* elements allocated in cols */
	PgoValue *oldvals;        /* old tuple of Update/Delete */
	size_t oldvals_cap;       /* elements allocated in oldvals */
	PgoValue *newvals;        /* new tuple of Insert/Update */
	size_t newvals_cap;       /* elements allocated in newvals */
	uint32_t *relids;         /* Truncate relation OIDs */
	size_t relids_cap;        /* elements allocated in relids */
	char err[PGO_ERROR_SIZE]; /* text of the last error */
};

const char *pgoutput_msg_name(int type)
{
	switch (type) {
	case PGO_BEGIN: return "Begin";
	case PGO_MESSAGE: return "Message";
	case PGO_COMMIT: return "Commit";
	case PGO_ORIGIN: return "Origin";
	case PGO_RELATION: return "Relation";
	case PGO_TYPE: return "Type";
	case PGO_INSERT: return "Insert";
	case PGO_UPDATE: return "Update";
	case PGO_DELETE: return "Delete";
	case PGO_TRUNCATE: return "Truncate";
	case PGO_STREAM_START: return "Stream Start";
	case PGO_STREAM_STOP: return "Stream Stop";
	case PGO_STREAM_COMMIT: return "Stream Commit";
	case PGO_STREAM_ABORT: return "Stream Abort";
	case PGO_BEGIN_PREPARE: return "Begin Prepare";
	case PGO_PREPARE: return "Prepare";
	case PGO_COMMIT_PREPARED: return "Commit Prepared";
	case PGO_ROLLBACK_PREPARED: return "Rollback Prepared";
	case PGO_STREAM_PREPARE: return "Stream Prepare";
	}
	return "unknown";
}

PgoDecoder *pgoutput_decoder_new(int proto_version, bool abort_info)
{
	PgoDecoder *dec = xcalloc(1, sizeof *dec);

	dec->proto_version = proto_version;
	/* The server sends the abort fields only to a version 4 client. */
	dec->abort_info = abort_info && proto_version >= PGO_PROTO_PARALLEL;
	return dec;
}

void pgoutput_decoder_free(PgoDecoder *dec)
{
	if (dec == NULL)
		return;
	free(dec->cols);
	free(dec->oldvals);
	free(dec->newvals);
	free(dec->relids);
	free(dec);
}

bool pgoutput_in_stream(const PgoDecoder *dec)
{
	return dec->in_stream;
}

const char *pgoutput_error(const PgoDecoder *dec)
{
	return dec->err;
}

/* "byte" or "bytes", as n asks. */
static const char *plural_s(size_t n)
{
	return n == 1 ? "" : "s";
}

/* An error not tied to one message's layout; the whole text is given. */
static PGM_PRINTF(2, 3) bool decode_error(PgoDecoder *dec, const char *fmt,
					  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dec->err, sizeof dec->err, fmt, ap);
	va_end(ap);
	return false;
}

/*
 * "malformed <type> message: <detail> at byte offset <at>", where at is
 * where the offending field starts.
 */
static PGM_PRINTF(3, 4) bool read_error(PgoDecoder *dec, size_t at,
					const char *fmt, ...)
{
	char detail[PGO_ERROR_SIZE / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	snprintf(dec->err, sizeof dec->err,
		 "malformed %s message: %s at byte offset %zu",
		 pgoutput_msg_name(dec->type), detail, at);
	return false;
}

/*
 * The cursor getters, reporting a short read as the truncation it is.
 */

static bool get_u8(PgoDecoder *dec, Cursor *c, uint8_t *out)
{
	if (!cursor_get_u8(c, out))
		return read_error(dec, c->pos, "truncated");
	return true;
}

static bool get_u16(PgoDecoder *dec, Cursor *c, uint16_t *out)
{
	if (!cursor_get_u16(c, out))
		return read_error(dec, c->pos, "truncated");
	return true;
}

static bool get_u32(PgoDecoder *dec, Cursor *c, uint32_t *out)
{
	if (!cursor_get_u32(c, out))
		return read_error(dec, c->pos, "truncated");
	return true;
}

static bool get_i32(PgoDecoder *dec, Cursor *c, int32_t *out)
{
	if (!cursor_get_i32(c, out))
		return read_error(dec, c->pos, "truncated");
	return true;
}

static bool get_u64(PgoDecoder *dec, Cursor *c, uint64_t *out)
{
	if (!cursor_get_u64(c, out))
		return read_error(dec, c->pos, "truncated");
	return true;
}

static bool get_i64(PgoDecoder *dec, Cursor *c, int64_t *out)
{
	if (!cursor_get_i64(c, out))
		return read_error(dec, c->pos, "truncated");
	return true;
}

static bool get_string(PgoDecoder *dec, Cursor *c, const char **out)
{
	if (cursor_left(c) == 0)
		return read_error(dec, c->pos, "truncated");
	if (!cursor_get_string(c, out, NULL))
		return read_error(dec, c->pos, "unterminated string");
	return true;
}

/* A flags byte that is 0 in every protocol version so far. */
static bool get_zero_flags(PgoDecoder *dec, Cursor *c, uint8_t *out)
{
	size_t at = c->pos;

	if (!get_u8(dec, c, out))
		return false;
	if (*out != 0)
		return read_error(dec, at, "unknown flags 0x%02x", *out);
	return true;
}

/*
 * Room for need elements in a decoder-owned array. Callers have checked
 * need against the message size, so this stays bounded by it.
 */
static void *reserve(void *arr, size_t *cap, size_t need, size_t size)
{
	size_t n;

	if (need <= *cap)
		return arr;
	n = *cap > 0 ? *cap : 16;
	while (n < need)
		n *= 2;
	arr = xreallocarray(arr, n, size);
	*cap = n;
	return arr;
}

/* The Xid of a change inside a stream (protocol version 2 and later). */
static bool read_stream_xid(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	if (!dec->in_stream || dec->proto_version < PGO_PROTO_STREAM)
		return true;
	if (!get_u32(dec, c, &msg->xid))
		return false;
	msg->has_xid = true;
	return true;
}

/*
 * TupleData: Int16 ncols, then per column a kind byte, and for 't' and
 * 'b' an Int32 length and that many bytes. Values point into the buffer.
 */
static bool read_tuple(PgoDecoder *dec, Cursor *c, PgoValue **vals,
		       size_t *cap, PgoTuple *tup)
{
	size_t at = c->pos;
	uint16_t ncols;
	uint16_t i;

	if (!get_u16(dec, c, &ncols))
		return false;
	if (ncols > cursor_left(c))
		return read_error(dec, at,
				  "%u columns but only %zu byte%s left",
				  (unsigned) ncols, cursor_left(c),
				  plural_s(cursor_left(c)));
	*vals = reserve(*vals, cap, ncols, sizeof **vals);

	for (i = 0; i < ncols; i++) {
		PgoValue *v = &(*vals)[i];
		uint8_t kind;
		int32_t len;

		at = c->pos;
		if (!get_u8(dec, c, &kind))
			return false;
		v->kind = (char) kind;
		v->len = 0;
		v->data = NULL;
		switch (kind) {
		case PGO_COL_NULL:
		case PGO_COL_UNCHANGED:
			break;
		case PGO_COL_TEXT:
		case PGO_COL_BINARY:
			at = c->pos;
			if (!get_i32(dec, c, &len))
				return false;
			if (len < 0)
				return read_error(dec, at,
						  "negative length %" PRId32
						  " of column %u",
						  len, (unsigned) i + 1);
			if ((uint32_t) len > cursor_left(c))
				return read_error(dec, at,
						  "length %" PRId32
						  " of column %u exceeds the %zu byte%s left",
						  len, (unsigned) i + 1,
						  cursor_left(c),
						  plural_s(cursor_left(c)));
			if (!cursor_get_bytes(c, (size_t) len, &v->data))
				return read_error(dec, at, "truncated");
			v->len = (uint32_t) len;
			break;
		default:
			return read_error(dec, at,
					  "unknown kind 0x%02x of column %u",
					  kind, (unsigned) i + 1);
		}
	}
	tup->ncols = ncols;
	tup->cols = *vals;
	return true;
}

/* Reads the tuple marker byte; at is set to where it was. */
static bool read_tuple_kind(PgoDecoder *dec, Cursor *c, uint8_t *kind,
			    size_t *at)
{
	*at = c->pos;
	return get_u8(dec, c, kind);
}

static bool pgoutput_read_begin(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoBegin *b = &msg->u.begin;

	return get_u64(dec, c, &b->final_lsn) &&
	       get_i64(dec, c, &b->commit_time) &&
	       get_u32(dec, c, &b->xid);
}

static bool pgoutput_read_message(PgoDecoder *dec, Cursor *c,
				  PgoMessage *msg)
{
	PgoLogicalMsg *m = &msg->u.message;
	int32_t len;
	size_t at;

	if (!read_stream_xid(dec, c, msg) ||
	    !get_u8(dec, c, &m->flags) ||
	    !get_u64(dec, c, &m->lsn) ||
	    !get_string(dec, c, &m->prefix))
		return false;
	at = c->pos;
	if (!get_i32(dec, c, &len))
		return false;
	if (len < 0)
		return read_error(dec, at, "negative content length %" PRId32,
				  len);
	if ((uint32_t) len > cursor_left(c))
		return read_error(dec, at,
				  "content length %" PRId32
				  " exceeds the %zu byte%s left",
				  len, cursor_left(c), plural_s(cursor_left(c)));
	if (!cursor_get_bytes(c, (size_t) len, &m->content))
		return read_error(dec, at, "truncated");
	m->content_len = (uint32_t) len;
	return true;
}

static bool pgoutput_read_commit(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoCommit *cm = &msg->u.commit;

	return get_zero_flags(dec, c, &cm->flags) &&
	       get_u64(dec, c, &cm->commit_lsn) &&
	       get_u64(dec, c, &cm->end_lsn) &&
	       get_i64(dec, c, &cm->commit_time);
}

static bool pgoutput_read_origin(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoOrigin *o = &msg->u.origin;

	return get_u64(dec, c, &o->origin_lsn) &&
	       get_string(dec, c, &o->name);
}

static bool pgoutput_read_relation(PgoDecoder *dec, Cursor *c,
				   PgoMessage *msg)
{
	PgoRelation *r = &msg->u.relation;
	uint8_t replident;
	uint16_t i;
	size_t at;

	if (!read_stream_xid(dec, c, msg) ||
	    !get_u32(dec, c, &r->oid) ||
	    !get_string(dec, c, &r->nspname) ||
	    !get_string(dec, c, &r->relname))
		return false;
	at = c->pos;
	if (!get_u8(dec, c, &replident))
		return false;
	switch (replident) {
	case 'd':
	case 'n':
	case 'f':
	case 'i':
		r->replident = (char) replident;
		break;
	default:
		return read_error(dec, at, "unknown replica identity 0x%02x",
				  replident);
	}

	at = c->pos;
	if (!get_u16(dec, c, &r->ncols))
		return false;
	if (r->ncols > cursor_left(c) / PGO_RELATION_COLUMN_MIN)
		return read_error(dec, at,
				  "%u columns but only %zu byte%s left",
				  (unsigned) r->ncols, cursor_left(c),
				  plural_s(cursor_left(c)));
	dec->cols = reserve(dec->cols, &dec->cols_cap, r->ncols,
			    sizeof *dec->cols);
	for (i = 0; i < r->ncols; i++) {
		PgoColumn *col = &dec->cols[i];
		uint32_t typmod;

		if (!get_u8(dec, c, &col->flags) ||
		    !get_string(dec, c, &col->name) ||
		    !get_u32(dec, c, &col->type_oid) ||
		    !get_u32(dec, c, &typmod))
			return false;
		col->type_mod = (int32_t) typmod;
	}
	r->cols = dec->cols;
	return true;
}

static bool pgoutput_read_type(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoType *t = &msg->u.type;

	return read_stream_xid(dec, c, msg) &&
	       get_u32(dec, c, &t->oid) &&
	       get_string(dec, c, &t->nspname) &&
	       get_string(dec, c, &t->typname);
}

static bool pgoutput_read_insert(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoInsert *ins = &msg->u.insert;
	uint8_t kind;
	size_t at;

	if (!read_stream_xid(dec, c, msg) ||
	    !get_u32(dec, c, &ins->relid) ||
	    !read_tuple_kind(dec, c, &kind, &at))
		return false;
	if (kind != 'N')
		return read_error(dec, at, "unexpected tuple type 0x%02x",
				  kind);
	return read_tuple(dec, c, &dec->newvals, &dec->newvals_cap,
			  &ins->newtup);
}

static bool pgoutput_read_update(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoUpdate *up = &msg->u.update;
	uint8_t kind;
	size_t at;

	if (!read_stream_xid(dec, c, msg) ||
	    !get_u32(dec, c, &up->relid) ||
	    !read_tuple_kind(dec, c, &kind, &at))
		return false;
	if (kind == 'K' || kind == 'O') {
		up->old_kind = (char) kind;
		if (!read_tuple(dec, c, &dec->oldvals, &dec->oldvals_cap,
				&up->oldtup) ||
		    !read_tuple_kind(dec, c, &kind, &at))
			return false;
	}
	if (kind != 'N')
		return read_error(dec, at, "unexpected tuple type 0x%02x",
				  kind);
	return read_tuple(dec, c, &dec->newvals, &dec->newvals_cap,
			  &up->newtup);
}

static bool pgoutput_read_delete(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoDelete *del = &msg->u.delete;
	uint8_t kind;
	size_t at;

	if (!read_stream_xid(dec, c, msg) ||
	    !get_u32(dec, c, &del->relid) ||
	    !read_tuple_kind(dec, c, &kind, &at))
		return false;
	if (kind != 'K' && kind != 'O')
		return read_error(dec, at, "unexpected tuple type 0x%02x",
				  kind);
	del->old_kind = (char) kind;
	return read_tuple(dec, c, &dec->oldvals, &dec->oldvals_cap,
			  &del->oldtup);
}

static bool pgoutput_read_truncate(PgoDecoder *dec, Cursor *c,
				   PgoMessage *msg)
{
	PgoTruncate *t = &msg->u.truncate;
	int32_t nrels;
	uint32_t i;
	size_t at;

	if (!read_stream_xid(dec, c, msg))
		return false;
	at = c->pos;
	if (!get_i32(dec, c, &nrels) ||
	    !get_u8(dec, c, &t->options))
		return false;
	if (nrels < 0)
		return read_error(dec, at, "negative relation count %" PRId32,
				  nrels);
	if ((uint32_t) nrels > cursor_left(c) / 4)
		return read_error(dec, at,
				  "%" PRId32
				  " relations but only %zu byte%s left",
				  nrels, cursor_left(c), plural_s(cursor_left(c)));
	t->nrelids = (uint32_t) nrels;
	dec->relids = reserve(dec->relids, &dec->relids_cap, t->nrelids,
			      sizeof *dec->relids);
	for (i = 0; i < t->nrelids; i++)
		if (!get_u32(dec, c, &dec->relids[i]))
			return false;
	t->relids = dec->relids;
	return true;
}

static bool pgoutput_read_stream_start(PgoDecoder *dec, Cursor *c,
				       PgoMessage *msg)
{
	PgoStreamStart *s = &msg->u.stream_start;

	return get_u32(dec, c, &s->xid) &&
	       get_u8(dec, c, &s->first_segment);
}

static bool pgoutput_read_stream_commit(PgoDecoder *dec, Cursor *c,
					PgoMessage *msg)
{
	PgoStreamCommit *s = &msg->u.stream_commit;

	return get_u32(dec, c, &s->xid) &&
	       get_zero_flags(dec, c, &s->flags) &&
	       get_u64(dec, c, &s->commit_lsn) &&
	       get_u64(dec, c, &s->end_lsn) &&
	       get_i64(dec, c, &s->commit_time);
}

static bool pgoutput_read_stream_abort(PgoDecoder *dec, Cursor *c,
				       PgoMessage *msg)
{
	PgoStreamAbort *a = &msg->u.stream_abort;

	if (!get_u32(dec, c, &a->xid) ||
	    !get_u32(dec, c, &a->subxid))
		return false;
	if (!dec->abort_info)
		return true;
	a->has_abort_info = true;
	return get_u64(dec, c, &a->abort_lsn) &&
	       get_i64(dec, c, &a->abort_time);
}

static bool pgoutput_read_begin_prepare(PgoDecoder *dec, Cursor *c,
					PgoMessage *msg)
{
	PgoPrepare *p = &msg->u.begin_prepare;

	p->flags = 0;
	return get_u64(dec, c, &p->prepare_lsn) &&
	       get_u64(dec, c, &p->end_lsn) &&
	       get_i64(dec, c, &p->prepare_time) &&
	       get_u32(dec, c, &p->xid) &&
	       get_string(dec, c, &p->gid);
}

/* Prepare and Stream Prepare: the same fields under two type bytes. */
static bool pgoutput_read_prepare(PgoDecoder *dec, Cursor *c, PgoPrepare *p)
{
	return get_zero_flags(dec, c, &p->flags) &&
	       get_u64(dec, c, &p->prepare_lsn) &&
	       get_u64(dec, c, &p->end_lsn) &&
	       get_i64(dec, c, &p->prepare_time) &&
	       get_u32(dec, c, &p->xid) &&
	       get_string(dec, c, &p->gid);
}

static bool pgoutput_read_commit_prepared(PgoDecoder *dec, Cursor *c,
					  PgoMessage *msg)
{
	PgoCommitPrepared *p = &msg->u.commit_prepared;

	return get_zero_flags(dec, c, &p->flags) &&
	       get_u64(dec, c, &p->commit_lsn) &&
	       get_u64(dec, c, &p->end_lsn) &&
	       get_i64(dec, c, &p->commit_time) &&
	       get_u32(dec, c, &p->xid) &&
	       get_string(dec, c, &p->gid);
}

static bool pgoutput_read_rollback_prepared(PgoDecoder *dec, Cursor *c,
					    PgoMessage *msg)
{
	PgoRollbackPrepared *p = &msg->u.rollback_prepared;

	return get_zero_flags(dec, c, &p->flags) &&
	       get_u64(dec, c, &p->prepare_end_lsn) &&
	       get_u64(dec, c, &p->rollback_end_lsn) &&
	       get_i64(dec, c, &p->prepare_time) &&
	       get_i64(dec, c, &p->rollback_time) &&
	       get_u32(dec, c, &p->xid) &&
	       get_string(dec, c, &p->gid);
}

/* The protocol version that introduced a message type; 0 if none did. */
static int pgoutput_min_version(int type)
{
	switch (type) {
	case PGO_BEGIN:
	case PGO_MESSAGE:
	case PGO_COMMIT:
	case PGO_ORIGIN:
	case PGO_RELATION:
	case PGO_TYPE:
	case PGO_INSERT:
	case PGO_UPDATE:
	case PGO_DELETE:
	case PGO_TRUNCATE:
		return PGO_PROTO_MIN;
	case PGO_STREAM_START:
	case PGO_STREAM_STOP:
	case PGO_STREAM_COMMIT:
	case PGO_STREAM_ABORT:
		return PGO_PROTO_STREAM;
	case PGO_BEGIN_PREPARE:
	case PGO_PREPARE:
	case PGO_COMMIT_PREPARED:
	case PGO_ROLLBACK_PREPARED:
	case PGO_STREAM_PREPARE:
		return PGO_PROTO_TWOPHASE;
	default:
		return 0;
	}
}

/*
 * Between Stream Start and Stream Stop the server sends only the changes
 * of the streamed transaction (and its Origin); transaction boundaries
 * come outside. walsender's pgoutput asserts as much, and the apply worker
 * rejects the same cases ("duplicate STREAM START message", "STREAM STOP
 * message without STREAM START", ...).
 */
static bool pgoutput_check_order(PgoDecoder *dec, int type)
{
	switch (type) {
	case PGO_STREAM_STOP:
		if (!dec->in_stream)
			return decode_error(dec,
					    "unexpected %s message outside a stream at byte offset 0",
					    pgoutput_msg_name(type));
		return true;
	case PGO_BEGIN:
	case PGO_COMMIT:
	case PGO_STREAM_START:
	case PGO_STREAM_COMMIT:
	case PGO_STREAM_ABORT:
	case PGO_BEGIN_PREPARE:
	case PGO_PREPARE:
	case PGO_COMMIT_PREPARED:
	case PGO_ROLLBACK_PREPARED:
	case PGO_STREAM_PREPARE:
		if (dec->in_stream)
			return decode_error(dec,
					    "unexpected %s message inside a stream at byte offset 0",
					    pgoutput_msg_name(type));
		return true;
	default:
		return true;
	}
}

bool pgoutput_decode(PgoDecoder *dec, const uint8_t *buf, size_t len,
		     PgoMessage *msg)
{
	Cursor c;
	uint8_t type;
	int min_version;
	bool ok;

	dec->err[0] = '\0';
	dec->type = 0;
	if (dec->proto_version < PGO_PROTO_MIN ||
	    dec->proto_version > PGO_PROTO_MAX)
		return decode_error(dec, "unsupported protocol version %d",
				    dec->proto_version);

	cursor_init(&c, buf, len);
	if (!cursor_get_u8(&c, &type))
		return decode_error(dec, "empty message at byte offset 0");
	min_version = pgoutput_min_version(type);
	if (min_version == 0)
		return decode_error(dec,
				    "unknown message type 0x%02x at byte offset 0",
				    type);
	dec->type = type;
	if (dec->proto_version < min_version)
		return decode_error(dec,
				    "unexpected %s message in protocol version %d at byte offset 0",
				    pgoutput_msg_name(type),
				    dec->proto_version);
	if (!pgoutput_check_order(dec, type))
		return false;

	memset(msg, 0, sizeof *msg);
	msg->type = (PgoMsgType) type;
	switch (type) {
	case PGO_BEGIN:
		ok = pgoutput_read_begin(dec, &c, msg);
		break;
	case PGO_MESSAGE:
		ok = pgoutput_read_message(dec, &c, msg);
		break;
	case PGO_COMMIT:
		ok = pgoutput_read_commit(dec, &c, msg);
		break;
	case PGO_ORIGIN:
		ok = pgoutput_read_origin(dec, &c, msg);
		break;
	case PGO_RELATION:
		ok = pgoutput_read_relation(dec, &c, msg);
		break;
	case PGO_TYPE:
		ok = pgoutput_read_type(dec, &c, msg);
		break;
	case PGO_INSERT:
		ok = pgoutput_read_insert(dec, &c, msg);
		break;
	case PGO_UPDATE:
		ok = pgoutput_read_update(dec, &c, msg);
		break;
	case PGO_DELETE:
		ok = pgoutput_read_delete(dec, &c, msg);
		break;
	case PGO_TRUNCATE:
		ok = pgoutput_read_truncate(dec, &c, msg);
		break;
	case PGO_STREAM_START:
		ok = pgoutput_read_stream_start(dec, &c, msg);
		break;
	case PGO_STREAM_STOP:
		ok = true;
		break;
	case PGO_STREAM_COMMIT:
		ok = pgoutput_read_stream_commit(dec, &c, msg);
		break;
	case PGO_STREAM_ABORT:
		ok = pgoutput_read_stream_abort(dec, &c, msg);
		break;
	case PGO_BEGIN_PREPARE:
		ok = pgoutput_read_begin_prepare(dec, &c, msg);
		break;
	case PGO_PREPARE:
		ok = pgoutput_read_prepare(dec, &c, &msg->u.prepare);
		break;
	case PGO_COMMIT_PREPARED:
		ok = pgoutput_read_commit_prepared(dec, &c, msg);
		break;
	case PGO_ROLLBACK_PREPARED:
		ok = pgoutput_read_rollback_prepared(dec, &c, msg);
		break;
	case PGO_STREAM_PREPARE:
		ok = pgoutput_read_prepare(dec, &c, &msg->u.stream_prepare);
		break;
	default:
		/* pgoutput_min_version() knew the type; so must this switch. */
		return decode_error(dec,
				    "unknown message type 0x%02x at byte offset 0",
				    type);
	}
	if (!ok)
		return false;
	if (cursor_left(&c) != 0)
		return read_error(dec, c.pos, "%zu trailing byte%s",
				  cursor_left(&c), plural_s(cursor_left(&c)));

	/* Only a message decoded whole moves the stream state. */
	if (type == PGO_STREAM_START)
		dec->in_stream = true;
	else if (type == PGO_STREAM_STOP)
		dec->in_stream = false;
	return true;
}

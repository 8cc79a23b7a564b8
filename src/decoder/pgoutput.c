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
 *
 * This file holds the table of message types (msg_descs: the one place a
 * type byte is named, versioned, placed around a stream and given its
 * reader), the dispatch, and the readers of the transaction boundaries;
 * pgoutput_change.c the readers of the changes and their TupleData.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgoutput_internal.h"

/* Where a message may come relative to Stream Start ... Stream Stop. */
typedef enum PgoPlace {
	PGO_ANYWHERE,        /* the changes of a transaction, and Origin */
	PGO_OUTSIDE_STREAM,  /* transaction boundaries, Stream Start */
	PGO_INSIDE_STREAM,   /* Stream Stop */
} PgoPlace;

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

static bool pgoutput_read_begin(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoBegin *b = &msg->u.begin;

	return get_u64(dec, c, &b->final_lsn) &&
	       get_i64(dec, c, &b->commit_time) &&
	       get_u32(dec, c, &b->xid);
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
static bool read_prepare_fields(PgoDecoder *dec, Cursor *c, PgoPrepare *p)
{
	return get_zero_flags(dec, c, &p->flags) &&
	       get_u64(dec, c, &p->prepare_lsn) &&
	       get_u64(dec, c, &p->end_lsn) &&
	       get_i64(dec, c, &p->prepare_time) &&
	       get_u32(dec, c, &p->xid) &&
	       get_string(dec, c, &p->gid);
}

static bool pgoutput_read_prepare(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	return read_prepare_fields(dec, c, &msg->u.prepare);
}

static bool pgoutput_read_stream_prepare(PgoDecoder *dec, Cursor *c,
					 PgoMessage *msg)
{
	return read_prepare_fields(dec, c, &msg->u.stream_prepare);
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

/*
 * Every message type, in one place: its name for messages and logs, the
 * protocol version that introduced it, where it may come around a stream,
 * and its reader (NULL: the type byte is all of it). Between Stream Start
 * and Stream Stop the server sends only the changes of the streamed
 * transaction (and its Origin); transaction boundaries come outside.
 * walsender's pgoutput asserts as much, and the apply worker rejects the
 * same cases ("duplicate STREAM START message", "STREAM STOP message
 * without STREAM START", ...).
 */
typedef struct PgoMsgDesc {
	uint8_t type;              /* the type byte */
	const char *name;          /* "Insert", "Stream Commit", ... */
	int min_version;           /* the protocol version that introduced it */
	PgoPlace place;            /* where it may come around a stream */
	bool (*read)(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
} PgoMsgDesc;

static const PgoMsgDesc msg_descs[] = {
	{ PGO_BEGIN, "Begin", PGO_PROTO_MIN, PGO_OUTSIDE_STREAM, pgoutput_read_begin },
	{ PGO_MESSAGE, "Message", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_message },
	{ PGO_COMMIT, "Commit", PGO_PROTO_MIN, PGO_OUTSIDE_STREAM, pgoutput_read_commit },
	{ PGO_ORIGIN, "Origin", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_origin },
	{ PGO_RELATION, "Relation", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_relation },
	{ PGO_TYPE, "Type", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_type },
	{ PGO_INSERT, "Insert", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_insert },
	{ PGO_UPDATE, "Update", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_update },
	{ PGO_DELETE, "Delete", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_delete },
	{ PGO_TRUNCATE, "Truncate", PGO_PROTO_MIN, PGO_ANYWHERE, pgoutput_read_truncate },
	{ PGO_STREAM_START, "Stream Start", PGO_PROTO_STREAM, PGO_OUTSIDE_STREAM,
	  pgoutput_read_stream_start },
	{ PGO_STREAM_STOP, "Stream Stop", PGO_PROTO_STREAM, PGO_INSIDE_STREAM, NULL },
	{ PGO_STREAM_COMMIT, "Stream Commit", PGO_PROTO_STREAM, PGO_OUTSIDE_STREAM,
	  pgoutput_read_stream_commit },
	{ PGO_STREAM_ABORT, "Stream Abort", PGO_PROTO_STREAM, PGO_OUTSIDE_STREAM,
	  pgoutput_read_stream_abort },
	{ PGO_BEGIN_PREPARE, "Begin Prepare", PGO_PROTO_TWOPHASE, PGO_OUTSIDE_STREAM,
	  pgoutput_read_begin_prepare },
	{ PGO_PREPARE, "Prepare", PGO_PROTO_TWOPHASE, PGO_OUTSIDE_STREAM,
	  pgoutput_read_prepare },
	{ PGO_COMMIT_PREPARED, "Commit Prepared", PGO_PROTO_TWOPHASE, PGO_OUTSIDE_STREAM,
	  pgoutput_read_commit_prepared },
	{ PGO_ROLLBACK_PREPARED, "Rollback Prepared", PGO_PROTO_TWOPHASE,
	  PGO_OUTSIDE_STREAM, pgoutput_read_rollback_prepared },
	{ PGO_STREAM_PREPARE, "Stream Prepare", PGO_PROTO_TWOPHASE, PGO_OUTSIDE_STREAM,
	  pgoutput_read_stream_prepare },
};

static const PgoMsgDesc *msg_desc(int type)
{
	for (size_t i = 0; i < sizeof msg_descs / sizeof msg_descs[0]; i++)
		if (msg_descs[i].type == type)
			return &msg_descs[i];
	return NULL;
}

const char *pgoutput_msg_name(int type)
{
	const PgoMsgDesc *d = msg_desc(type);

	return d != NULL ? d->name : "unknown";
}

bool pgoutput_decode(PgoDecoder *dec, const uint8_t *buf, size_t len,
		     PgoMessage *msg)
{
	const PgoMsgDesc *desc;
	Cursor c;
	uint8_t type;

	dec->err[0] = '\0';
	dec->type_name = "unknown";
	if (dec->proto_version < PGO_PROTO_MIN ||
	    dec->proto_version > PGO_PROTO_MAX)
		return decode_error(dec, "unsupported protocol version %d",
				    dec->proto_version);

	cursor_init(&c, buf, len);
	if (!cursor_get_u8(&c, &type))
		return decode_error(dec, "empty message at byte offset 0");
	desc = msg_desc(type);
	if (desc == NULL)
		return decode_error(dec,
				    "unknown message type 0x%02x at byte offset 0",
				    type);
	dec->type_name = desc->name;
	if (dec->proto_version < desc->min_version)
		return decode_error(dec,
				    "unexpected %s message in protocol version %d at byte offset 0",
				    desc->name, dec->proto_version);
	if (desc->place == PGO_INSIDE_STREAM && !dec->in_stream)
		return decode_error(dec,
				    "unexpected %s message outside a stream at byte offset 0",
				    desc->name);
	if (desc->place == PGO_OUTSIDE_STREAM && dec->in_stream)
		return decode_error(dec,
				    "unexpected %s message inside a stream at byte offset 0",
				    desc->name);

	memset(msg, 0, sizeof *msg);
	msg->type = (PgoMsgType) type;
	if (desc->read != NULL && !desc->read(dec, &c, msg))
		return false;
	if (cursor_left(&c) != 0)
		return pgoutput_malformed(dec, c.pos, "%zu trailing byte%s",
					  cursor_left(&c), plural_s(cursor_left(&c)));

	/* Only a message decoded whole moves the stream state. */
	if (type == PGO_STREAM_START)
		dec->in_stream = true;
	else if (type == PGO_STREAM_STOP)
		dec->in_stream = false;
	return true;
}

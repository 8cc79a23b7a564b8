/*
 * pgoutput_internal.h: what the two files of the pgoutput decoder share:
 * the decoder's state, the error it reports, and the field getters over
 * the bounds-checked cursor that report a short read as the truncation it
 * is. pgoutput.c owns the message table, the dispatch and the transaction
 * boundary messages; pgoutput_change.c the messages of changes (Relation,
 * Type, Insert, Update, Delete, Truncate, Message) and TupleData.
 */
#ifndef PGMIRROR_PGOUTPUT_INTERNAL_H
#define PGMIRROR_PGOUTPUT_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

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
	const char *type_name;    /* the message being decoded, for errors */
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

/*
 * Sets "malformed <type> message: <detail> at byte offset <at>", where at
 * is where the offending field starts; returns false. Here, below both
 * files of the decoder, so that the readers of pgoutput_change.c, which
 * pgoutput.c dispatches to, need nothing of pgoutput.c.
 */
static inline PGM_PRINTF(3, 4) bool pgoutput_malformed(PgoDecoder *dec, size_t at,
						       const char *fmt, ...)
{
	char detail[PGO_ERROR_SIZE / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	snprintf(dec->err, sizeof dec->err, "malformed %s message: %s at byte offset %zu",
		 dec->type_name, detail, at);
	return false;
}

/* "byte" or "bytes", as n asks. */
static inline const char *plural_s(size_t n)
{
	return n == 1 ? "" : "s";
}

/*
 * The cursor getters, reporting a short read as the truncation it is.
 */

static inline bool get_u8(PgoDecoder *dec, Cursor *c, uint8_t *out)
{
	if (!cursor_get_u8(c, out))
		return pgoutput_malformed(dec, c->pos, "truncated");
	return true;
}

static inline bool get_u16(PgoDecoder *dec, Cursor *c, uint16_t *out)
{
	if (!cursor_get_u16(c, out))
		return pgoutput_malformed(dec, c->pos, "truncated");
	return true;
}

static inline bool get_u32(PgoDecoder *dec, Cursor *c, uint32_t *out)
{
	if (!cursor_get_u32(c, out))
		return pgoutput_malformed(dec, c->pos, "truncated");
	return true;
}

static inline bool get_i32(PgoDecoder *dec, Cursor *c, int32_t *out)
{
	if (!cursor_get_i32(c, out))
		return pgoutput_malformed(dec, c->pos, "truncated");
	return true;
}

static inline bool get_u64(PgoDecoder *dec, Cursor *c, uint64_t *out)
{
	if (!cursor_get_u64(c, out))
		return pgoutput_malformed(dec, c->pos, "truncated");
	return true;
}

static inline bool get_i64(PgoDecoder *dec, Cursor *c, int64_t *out)
{
	if (!cursor_get_i64(c, out))
		return pgoutput_malformed(dec, c->pos, "truncated");
	return true;
}

static inline bool get_string(PgoDecoder *dec, Cursor *c, const char **out)
{
	if (cursor_left(c) == 0)
		return pgoutput_malformed(dec, c->pos, "truncated");
	if (!cursor_get_string(c, out, NULL))
		return pgoutput_malformed(dec, c->pos, "unterminated string");
	return true;
}

/* A flags byte that is 0 in every protocol version so far. */
static inline bool get_zero_flags(PgoDecoder *dec, Cursor *c, uint8_t *out)
{
	size_t at = c->pos;

	if (!get_u8(dec, c, out))
		return false;
	if (*out != 0)
		return pgoutput_malformed(dec, at, "unknown flags 0x%02x", *out);
	return true;
}

/* The readers of pgoutput_change.c, one per message of a change. */
bool pgoutput_read_message(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
bool pgoutput_read_relation(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
bool pgoutput_read_type(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
bool pgoutput_read_insert(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
bool pgoutput_read_update(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
bool pgoutput_read_delete(PgoDecoder *dec, Cursor *c, PgoMessage *msg);
bool pgoutput_read_truncate(PgoDecoder *dec, Cursor *c, PgoMessage *msg);

#endif

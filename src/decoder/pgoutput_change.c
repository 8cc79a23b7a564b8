/*
 * pgoutput_change.c: the readers of the messages that carry a change or
 * describe what a change refers to: Relation, Type, Insert, Update,
 * Delete, Truncate and Message, with their TupleData. The wire format and
 * the rules on counts are in pgoutput.c's opening comment; every count is
 * checked against the bytes left before anything is allocated for it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "pgoutput_internal.h"

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
		return pgoutput_malformed(dec, at,
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
				return pgoutput_malformed(dec, at,
							  "negative length %" PRId32
							  " of column %u",
							  len, (unsigned) i + 1);
			if ((uint32_t) len > cursor_left(c))
				return pgoutput_malformed(dec, at,
							  "length %" PRId32
							  " of column %u exceeds the %zu byte%s left",
							  len, (unsigned) i + 1,
							  cursor_left(c),
							  plural_s(cursor_left(c)));
			if (!cursor_get_bytes(c, (size_t) len, &v->data))
				return pgoutput_malformed(dec, at, "truncated");
			v->len = (uint32_t) len;
			break;
		default:
			return pgoutput_malformed(dec, at,
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

bool pgoutput_read_message(PgoDecoder *dec, Cursor *c,
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
		return pgoutput_malformed(dec, at, "negative content length %" PRId32,
					  len);
	if ((uint32_t) len > cursor_left(c))
		return pgoutput_malformed(dec, at,
					  "content length %" PRId32
					  " exceeds the %zu byte%s left",
					  len, cursor_left(c), plural_s(cursor_left(c)));
	if (!cursor_get_bytes(c, (size_t) len, &m->content))
		return pgoutput_malformed(dec, at, "truncated");
	m->content_len = (uint32_t) len;
	return true;
}

bool pgoutput_read_relation(PgoDecoder *dec, Cursor *c,
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
		return pgoutput_malformed(dec, at, "unknown replica identity 0x%02x",
					  replident);
	}

	at = c->pos;
	if (!get_u16(dec, c, &r->ncols))
		return false;
	if (r->ncols > cursor_left(c) / PGO_RELATION_COLUMN_MIN)
		return pgoutput_malformed(dec, at,
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

bool pgoutput_read_type(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoType *t = &msg->u.type;

	return read_stream_xid(dec, c, msg) &&
	       get_u32(dec, c, &t->oid) &&
	       get_string(dec, c, &t->nspname) &&
	       get_string(dec, c, &t->typname);
}

/* The start of Insert, Update and Delete: [Xid,] relation OID, and the
 * marker of the first tuple, which stood at *at. */
static bool read_change_head(PgoDecoder *dec, Cursor *c, PgoMessage *msg,
			     uint32_t *relid, uint8_t *kind, size_t *at)
{
	return read_stream_xid(dec, c, msg) &&
	       get_u32(dec, c, relid) &&
	       read_tuple_kind(dec, c, kind, at);
}

/* The new tuple, whose marker kind (at offset at) must be 'N'. */
static bool read_new_tuple(PgoDecoder *dec, Cursor *c, uint8_t kind,
			   size_t at, PgoTuple *tup)
{
	if (kind != 'N')
		return pgoutput_malformed(dec, at, "unexpected tuple type 0x%02x",
					  kind);
	return read_tuple(dec, c, &dec->newvals, &dec->newvals_cap, tup);
}

/* The old tuple, whose marker kind (at offset at) must be 'K' (its key)
 * or 'O' (the whole row). */
static bool read_old_tuple(PgoDecoder *dec, Cursor *c, uint8_t kind,
			   size_t at, char *old_kind, PgoTuple *tup)
{
	if (kind != 'K' && kind != 'O')
		return pgoutput_malformed(dec, at, "unexpected tuple type 0x%02x",
					  kind);
	*old_kind = (char) kind;
	return read_tuple(dec, c, &dec->oldvals, &dec->oldvals_cap, tup);
}

bool pgoutput_read_insert(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoInsert *ins = &msg->u.insert;
	uint8_t kind;
	size_t at;

	return read_change_head(dec, c, msg, &ins->relid, &kind, &at) &&
	       read_new_tuple(dec, c, kind, at, &ins->newtup);
}

bool pgoutput_read_update(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoUpdate *up = &msg->u.update;
	uint8_t kind;
	size_t at;

	if (!read_change_head(dec, c, msg, &up->relid, &kind, &at))
		return false;
	/* The old tuple is there only when the key changed or the
	 * identity is FULL. */
	if ((kind == 'K' || kind == 'O') &&
	    (!read_old_tuple(dec, c, kind, at, &up->old_kind, &up->oldtup) ||
	     !read_tuple_kind(dec, c, &kind, &at)))
		return false;
	return read_new_tuple(dec, c, kind, at, &up->newtup);
}

bool pgoutput_read_delete(PgoDecoder *dec, Cursor *c, PgoMessage *msg)
{
	PgoDelete *del = &msg->u.delete;
	uint8_t kind;
	size_t at;

	return read_change_head(dec, c, msg, &del->relid, &kind, &at) &&
	       read_old_tuple(dec, c, kind, at, &del->old_kind, &del->oldtup);
}

bool pgoutput_read_truncate(PgoDecoder *dec, Cursor *c,
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
		return pgoutput_malformed(dec, at, "negative relation count %" PRId32,
					  nrels);
	if ((uint32_t) nrels > cursor_left(c) / 4)
		return pgoutput_malformed(dec, at,
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


/*
 * feed_op.c: the mirror's own operations written and read
 * (include/pgmirror/feed_op.h; docs/feed.md, "Operations").
 *
 * A worked example: table 16384 takes the name "public"."t2":
 *
 *	4f                                    kind 'O'
 *	00 00 00 15                           length 21
 *	06                                    operation 6 (rename)
 *	00 00 40 00                           u32 relation OID 16384
 *	00 00 00 06 70 75 62 6c 69 63         str "public"
 *	00 00 00 02 74 32                     str "t2"
 *
 * Operation 7's count of relations is checked against the bytes left (4
 * apiece) before its array is allocated.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "feed_body.h"
#include "pgmirror/feed_op.h"

const char *feed_op_name(int op)
{
	switch (op) {
	case FEED_OP_RESET: return "reset";
	case FEED_OP_COPY_BEGIN: return "copy begin";
	case FEED_OP_COPY_PART: return "copy part";
	case FEED_OP_COPY_END: return "copy end";
	case FEED_OP_DROP: return "drop";
	case FEED_OP_RENAME: return "rename";
	case FEED_OP_INDEXES: return "indexes";
	default: return NULL;
	}
}

/* --- writing ----------------------------------------------------------- */

static size_t op_begin(FeedBuf *b, FeedOpKind op)
{
	size_t at = feed_record_begin(b, FEED_OP);

	feed_buf_put_u8(b, (uint8_t)op);
	return at;
}

/* An operation whose only field is the relation. */
static void put_relid_op(FeedBuf *b, FeedOpKind op, uint32_t relid)
{
	size_t at = op_begin(b, op);

	feed_buf_put_u32(b, relid);
	feed_record_end(b, at);
}

void feed_put_op_reset(FeedBuf *b)
{
	feed_record_end(b, op_begin(b, FEED_OP_RESET));
}

void feed_put_op_copy_begin(FeedBuf *b, uint32_t relid, Lsn sync_lsn, bool staged,
			    const char *definition)
{
	size_t at = op_begin(b, FEED_OP_COPY_BEGIN);

	feed_buf_put_u32(b, relid);
	feed_buf_put_u64(b, sync_lsn);
	feed_buf_put_u8(b, staged ? 1 : 0);
	feed_buf_put_ocstr(b, definition);
	feed_record_end(b, at);
}

void feed_put_op_copy_part(FeedBuf *b, uint32_t relid, const char *key_ranges, uint64_t rows)
{
	size_t at = op_begin(b, FEED_OP_COPY_PART);

	feed_buf_put_u32(b, relid);
	feed_buf_put_ocstr(b, key_ranges);
	feed_buf_put_u64(b, rows);
	feed_record_end(b, at);
}

void feed_put_op_copy_end(FeedBuf *b, uint32_t relid)
{
	put_relid_op(b, FEED_OP_COPY_END, relid);
}

void feed_put_op_drop(FeedBuf *b, uint32_t relid)
{
	put_relid_op(b, FEED_OP_DROP, relid);
}

void feed_put_op_rename(FeedBuf *b, uint32_t relid, const char *schema, const char *name)
{
	size_t at = op_begin(b, FEED_OP_RENAME);

	feed_buf_put_u32(b, relid);
	feed_buf_put_cstr(b, schema);
	feed_buf_put_cstr(b, name);
	feed_record_end(b, at);
}

void feed_put_op_indexes(FeedBuf *b, const uint32_t *relids, int n)
{
	size_t at = op_begin(b, FEED_OP_INDEXES);

	feed_buf_put_u32(b, (uint32_t)n);
	for (int i = 0; i < n; i++)
		feed_buf_put_u32(b, relids[i]);
	feed_record_end(b, at);
}

/* --- reading ------------------------------------------------------------ */

static bool read_relids(FeedBody *b, FeedOp *op)
{
	uint32_t n;

	if (!feed_body_count(b, &n, 4, "relations"))
		return false;
	op->relids = xcalloc(n, sizeof(uint32_t));
	op->nrelids = (int)n;
	for (uint32_t i = 0; i < n; i++)
		if (!feed_body_u32(b, &op->relids[i]))
			return false;
	return true;
}

bool feed_read_op(const FeedRecord *rec, FeedOp *out, ErrBuf *err)
{
	FeedBody b;
	uint8_t op;
	bool ok;

	memset(out, 0, sizeof *out);
	if (!feed_body_init(&b, rec, FEED_OP, err) || !feed_body_u8(&b, &op))
		return false;
	if (feed_op_name(op) == NULL)
		return feed_body_fail_at(&b, 0, "unknown operation %u (a feed of a later format "
					 "needs a later pgmirror)", op);
	out->op = (FeedOpKind)op;
	switch (out->op) {
	case FEED_OP_RESET:
		ok = true;
		break;
	case FEED_OP_COPY_BEGIN:
		ok = feed_body_u32(&b, &out->relid) && feed_body_u64(&b, &out->sync_lsn) &&
		     feed_body_flag(&b, &out->staged) && feed_body_ocstr(&b, &out->definition);
		break;
	case FEED_OP_COPY_PART:
		ok = feed_body_u32(&b, &out->relid) && feed_body_ocstr(&b, &out->key_ranges) &&
		     feed_body_u64(&b, &out->rows);
		break;
	case FEED_OP_RENAME:
		ok = feed_body_u32(&b, &out->relid) && feed_body_cstr(&b, &out->schema) &&
		     feed_body_cstr(&b, &out->name);
		break;
	case FEED_OP_INDEXES:
		ok = read_relids(&b, out);
		break;
	default: /* copy end, drop */
		ok = feed_body_u32(&b, &out->relid);
		break;
	}
	if (ok && feed_body_end(&b))
		return true;
	feed_op_clear(out);
	return false;
}

void feed_op_clear(FeedOp *op)
{
	free(op->definition);
	free(op->key_ranges);
	free(op->schema);
	free(op->name);
	free(op->relids);
	memset(op, 0, sizeof *op);
}

/*
 * feed_reader.c: a segment's contents walked one record at a time
 * (include/pgmirror/feed_format.h's FeedReader): the frame of each record
 * (kind, length, body inside the contents), then its place in the order
 * docs/feed.md gives:
 *
 *	H  (R | A)*  ( (A | M | O)*  C )+  E
 *
 * with each C numbered one more than the last (the first: the header's
 * first group) at or after the last one's position, and E counting what
 * was read. H, C and E are read whole here, by the readers of this file
 * (those of H, R, M, C and E); A and O are left to feed_answer.c and
 * feed_op.c, which feed_check.c calls for every record.
 *
 * Counts in bodies are checked against the bytes left, times the least
 * each item takes, before anything is allocated or looped over
 * (feed_body_count()), so a lying count fails at once.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "feed_body.h"

/* The reader's place in the order of records. */
enum {
	AT_START,       /* nothing read: the header comes first */
	AT_PREAMBLE,    /* after H: restated R and A records */
	AT_GROUP,       /* inside a group: A, M, O, then its C */
	AT_BETWEEN,     /* after a C: another group, or E */
	AT_END,         /* after E: nothing more */
	AT_FAILED,
};

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* --- the records read here ------------------------------------------------ */

bool feed_read_header(const FeedRecord *rec, FeedHeader *out, ErrBuf *err)
{
	FeedBody b;
	const char *epoch;
	size_t n, at;

	if (!feed_body_init(&b, rec, FEED_HEADER, err) || !feed_body_u16(&b, &out->version))
		return false;
	if (out->version != FEED_FORMAT_VERSION)
		return feed_body_fail_at(&b, 0, "feed format version %u (this pgmirror reads "
					 "version %d: a later pgmirror is needed)",
					 out->version, FEED_FORMAT_VERSION);
	at = b.c.pos;
	if (!feed_body_str(&b, &epoch, &n, false))
		return false;
	if (n != FEED_EPOCH_LEN || !feed_hex_lower(epoch, n))
		return feed_body_fail_at(&b, at, "epoch is not %d lower-case hex digits",
					 FEED_EPOCH_LEN);
	memcpy(out->epoch, epoch, n);
	out->epoch[n] = '\0';
	at = b.c.pos;
	if (!feed_body_u64(&b, &out->first_group))
		return false;
	if (out->first_group == 0)
		return feed_body_fail_at(&b, at, "first group 0 (groups are numbered from 1)");
	return feed_body_u64(&b, &out->start_lsn) && feed_body_u32(&b, &out->server_version) &&
	       feed_body_u8(&b, &out->proto_version) && feed_body_flag(&b, &out->binary) &&
	       feed_body_end(&b);
}

bool feed_read_message(const FeedRecord *rec, FeedMessage *out, ErrBuf *err)
{
	FeedBody b;
	bool relation = rec->kind == FEED_RELATION;

	if (!feed_body_init(&b, rec, relation ? FEED_RELATION : FEED_MESSAGE, err) ||
	    !feed_body_u64(&b, &out->lsn))
		return false;
	if (cursor_left(&b.c) == 0)
		return feed_body_fail_at(&b, b.c.pos, "no message");
	out->len = cursor_left(&b.c);
	out->data = b.c.buf + b.c.pos;
	if (relation && out->data[0] != 'R' && out->data[0] != 'Y')
		return feed_body_fail_at(&b, b.c.pos, "message type 0x%02x is neither Relation (R) "
					 "nor Type (Y)", out->data[0]);
	return true;
}

bool feed_read_group_end(const FeedRecord *rec, FeedGroupEnd *out, ErrBuf *err)
{
	FeedBody b;

	if (!feed_body_init(&b, rec, FEED_GROUP_END, err) || !feed_body_u64(&b, &out->group))
		return false;
	if (out->group == 0)
		return feed_body_fail_at(&b, 0, "group 0 (groups are numbered from 1)");
	return feed_body_u64(&b, &out->confirmed_lsn) && feed_body_i64(&b, &out->commit_time) &&
	       feed_body_end(&b);
}

bool feed_read_segment_end(const FeedRecord *rec, FeedSegmentEnd *out, ErrBuf *err)
{
	FeedBody b;

	return feed_body_init(&b, rec, FEED_SEGMENT_END, err) &&
	       feed_body_u64(&b, &out->ngroups) && feed_body_u64(&b, &out->last_group) &&
	       feed_body_u64(&b, &out->end_lsn) && feed_body_end(&b);
}

/* --- the reader ------------------------------------------------------------ */

void feed_reader_init(FeedReader *r, const uint8_t *contents, size_t len)
{
	memset(r, 0, sizeof *r);
	cursor_init(&r->c, contents, len);
	r->state = AT_START;
}

const char *feed_reader_error(const FeedReader *r)
{
	return r->err.text;
}

static FeedNext reader_fail(FeedReader *r, size_t at, const char *fmt, ...) PGM_PRINTF(3, 4);
static FeedNext reader_fail(FeedReader *r, size_t at, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	errbuf_set(&r->err, "malformed segment at offset %zu: %s", at, what);
	r->state = AT_FAILED;
	return FEED_NEXT_ERROR;
}

/* The body of a typed reader's error: the reader stays failed. */
static FeedNext reader_failed(FeedReader *r)
{
	r->state = AT_FAILED;
	return FEED_NEXT_ERROR;
}

/* A C record: the group after the last, at or after the last position. */
static FeedNext reader_group_end(FeedReader *r, const FeedRecord *rec)
{
	FeedGroupEnd c;
	uint64_t want = r->ngroups == 0 ? r->header.first_group : r->last.group + 1;
	Lsn before = r->ngroups == 0 ? r->header.start_lsn : r->last.confirmed_lsn;
	char a[LSN_TEXT_SIZE], b[LSN_TEXT_SIZE];

	if (!feed_read_group_end(rec, &c, &r->err))
		return reader_failed(r);
	if (c.group != want)
		return reader_fail(r, rec->offset, "group end (C) of group %llu where group %llu "
				   "was due", (unsigned long long)c.group, (unsigned long long)want);
	if (c.confirmed_lsn < before)
		return reader_fail(r, rec->offset, "group %llu ends at %s, before %s",
				   (unsigned long long)c.group, lsn_format(c.confirmed_lsn, a),
				   lsn_format(before, b));
	r->last = c;
	r->ngroups++;
	r->state = AT_BETWEEN;
	return FEED_NEXT_RECORD;
}

/* The E record: it says what was read. */
static FeedNext reader_segment_end(FeedReader *r, const FeedRecord *rec)
{
	FeedSegmentEnd *e = &r->end;
	char a[LSN_TEXT_SIZE], b[LSN_TEXT_SIZE];

	if (!feed_read_segment_end(rec, e, &r->err))
		return reader_failed(r);
	if (e->ngroups != r->ngroups || e->last_group != r->last.group)
		return reader_fail(r, rec->offset, "segment end (E) says %llu groups to group "
				   "%llu; read: %llu to group %llu",
				   (unsigned long long)e->ngroups, (unsigned long long)e->last_group,
				   (unsigned long long)r->ngroups, (unsigned long long)r->last.group);
	if (e->end_lsn != r->last.confirmed_lsn)
		return reader_fail(r, rec->offset, "segment end (E) at %s, but group %llu ends at %s",
				   lsn_format(e->end_lsn, a), (unsigned long long)r->last.group,
				   lsn_format(r->last.confirmed_lsn, b));
	r->state = AT_END;
	return FEED_NEXT_RECORD;
}

/* Whether rec may come where the reader stands, and the state after it. */
static FeedNext reader_place(FeedReader *r, const FeedRecord *rec)
{
	const char *name = feed_kind_name(rec->kind);

	if (r->state == AT_END)
		return reader_fail(r, rec->offset, "%s (%c) after the segment end (E)", name,
				   rec->kind);
	if (r->state == AT_START && rec->kind != FEED_HEADER)
		return reader_fail(r, rec->offset, "%s (%c) where the header (H) is due", name,
				   rec->kind);
	switch (rec->kind) {
	case FEED_HEADER:
		if (r->state != AT_START)
			return reader_fail(r, rec->offset, "a second header (H)");
		if (!feed_read_header(rec, &r->header, &r->err))
			return reader_failed(r);
		r->state = AT_PREAMBLE;
		return FEED_NEXT_RECORD;
	case FEED_RELATION:
		if (r->state != AT_PREAMBLE)
			return reader_fail(r, rec->offset, "relation (R) after the first group began");
		return FEED_NEXT_RECORD;
	case FEED_ANSWER:
		if (r->state == AT_BETWEEN)
			r->state = AT_GROUP;
		return FEED_NEXT_RECORD;
	case FEED_MESSAGE:
	case FEED_OP:
		r->state = AT_GROUP;
		return FEED_NEXT_RECORD;
	case FEED_GROUP_END:
		return reader_group_end(r, rec);
	default: /* FEED_SEGMENT_END */
		if (r->state != AT_BETWEEN)
			return reader_fail(r, rec->offset, "segment end (E) %s",
					   r->ngroups == 0 ? "before any group" : "inside a group");
		return reader_segment_end(r, rec);
	}
}

FeedNext feed_reader_next(FeedReader *r, FeedRecord *rec)
{
	size_t at = r->c.pos, left = cursor_left(&r->c);
	uint8_t kind;
	uint32_t len;

	if (r->state == AT_FAILED)
		return FEED_NEXT_ERROR;
	if (left == 0) {
		if (r->state == AT_END)
			return FEED_NEXT_DONE;
		return reader_fail(r, at, "contents end without %s",
				   r->state == AT_START ? "a header (H)" : "the segment end (E)");
	}
	if (left < FEED_RECORD_HEAD)
		return reader_fail(r, at, "truncated record (%zu byte%s left, a record takes at "
				   "least %d)", left, plural(left), FEED_RECORD_HEAD);
	if (!cursor_get_u8(&r->c, &kind) || !cursor_get_u32(&r->c, &len))
		return reader_fail(r, at, "truncated record");
	if (feed_kind_name(kind) == NULL)
		return reader_fail(r, at, "unknown record kind 0x%02x", kind);
	if (len > cursor_left(&r->c))
		return reader_fail(r, at, "record length %u but only %zu byte%s left", len,
				   cursor_left(&r->c), plural(cursor_left(&r->c)));
	rec->kind = kind;
	rec->offset = at;
	rec->len = len;
	if (!cursor_get_bytes(&r->c, len, &rec->body))
		return reader_fail(r, at, "truncated record");
	return reader_place(r, rec);
}

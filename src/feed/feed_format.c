/*
 * feed_format.c: a segment's records written (include/pgmirror/
 * feed_format.h; docs/feed.md, "A segment"): the growable buffer, the
 * frame of a record (kind, length filled in at its end), the writers of
 * H, R, M, C and E (A in feed_answer.c, O in feed_op.c), and the names of
 * the kinds. feed_reader.c reads them back.
 *
 * A worked example: the end of group 7, whose mirror confirmed 0/16B3778
 * and whose last source commit was at 2024-05-06 07:08:10.000001 UTC:
 *
 *	43                        kind 'C'
 *	00 00 00 18               length 24
 *	00 00 00 00 00 00 00 07   u64 group 7
 *	00 00 00 00 01 6b 37 78   u64 confirmed_lsn 0/16B3778
 *	00 02 ba c2 80 28 ca 81   i64 768294490000001 µs since 2000-01-01
 *
 * 29 bytes. Cut to its first 20, the reader fails with "malformed segment
 * at offset 0: record length 24 but only 15 bytes left"; handed only the
 * first 13 bytes of the body (a record of length 13), the group end
 * reader fails with "malformed group end record at offset 0: truncated at
 * body byte 8", where confirmed_lsn starts and needs 8 bytes.
 *
 * A length that does not fit its field is caught here, on the way in,
 * and fails the buffer (feed_buf_failed()), never wraps.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/feed_format.h"

const char *feed_kind_name(int kind)
{
	switch (kind) {
	case FEED_HEADER: return "header";
	case FEED_RELATION: return "relation";
	case FEED_ANSWER: return "catalog answer";
	case FEED_MESSAGE: return "message";
	case FEED_OP: return "operation";
	case FEED_GROUP_END: return "group end";
	case FEED_SEGMENT_END: return "segment end";
	default: return NULL;
	}
}

/* --- the buffer --------------------------------------------------------- */

void feed_buf_init(FeedBuf *b)
{
	memset(b, 0, sizeof *b);
}

void feed_buf_free(FeedBuf *b)
{
	free(b->data);
	feed_buf_init(b);
}

void feed_buf_reset(FeedBuf *b)
{
	b->len = 0;
	b->failed = false;
	b->err.text[0] = '\0';
}

void feed_buf_truncate(FeedBuf *b, size_t len)
{
	if (len < b->len)
		b->len = len;
}

void feed_buf_fail(FeedBuf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->failed)
		return;
	va_start(ap, fmt);
	errbuf_vset(&b->err, fmt, ap);
	va_end(ap);
	b->failed = true;
}

void feed_buf_put(FeedBuf *b, const void *p, size_t n)
{
	if (b->failed || n == 0)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap < 256 ? 256 : b->cap;

		if (n > SIZE_MAX - b->len) {
			feed_buf_fail(b, "feed buffer too long: %zu and %zu bytes", b->len, n);
			return;
		}
		while (cap - b->len < n)
			cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
		b->data = xreallocarray(b->data, cap, 1);
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* v's low n bytes, most significant first. */
static void put_be(FeedBuf *b, uint64_t v, int n)
{
	uint8_t bytes[8];

	for (int i = 0; i < n; i++)
		bytes[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	feed_buf_put(b, bytes, (size_t)n);
}

void feed_buf_put_u8(FeedBuf *b, uint8_t v)
{
	feed_buf_put(b, &v, 1);
}

void feed_buf_put_u16(FeedBuf *b, uint16_t v)
{
	put_be(b, v, 2);
}

void feed_buf_put_u32(FeedBuf *b, uint32_t v)
{
	put_be(b, v, 4);
}

void feed_buf_put_i32(FeedBuf *b, int32_t v)
{
	put_be(b, (uint32_t)v, 4);
}

void feed_buf_put_u64(FeedBuf *b, uint64_t v)
{
	put_be(b, v, 8);
}

void feed_buf_put_i64(FeedBuf *b, int64_t v)
{
	put_be(b, (uint64_t)v, 8);
}

void feed_buf_put_str(FeedBuf *b, const char *s, size_t n)
{
	uint64_t len = n; /* (size_t is 32 bits on armhf: no warning of a cast) */

	if (len > UINT32_MAX) {
		feed_buf_fail(b, "string too long for the feed: %zu bytes, at most %u", n, UINT32_MAX);
		return;
	}
	feed_buf_put_u32(b, (uint32_t)n);
	feed_buf_put(b, s, n);
}

void feed_buf_put_cstr(FeedBuf *b, const char *s)
{
	feed_buf_put_str(b, s, strlen(s));
}

void feed_buf_put_ostr(FeedBuf *b, const char *s, size_t n)
{
	if (s == NULL) {
		feed_buf_put_i32(b, -1);
		return;
	}
	if ((uint64_t)n > INT32_MAX) {
		feed_buf_fail(b, "string too long for the feed: %zu bytes, at most %d", n, INT32_MAX);
		return;
	}
	feed_buf_put_i32(b, (int32_t)n);
	feed_buf_put(b, s, n);
}

void feed_buf_put_ocstr(FeedBuf *b, const char *s)
{
	feed_buf_put_ostr(b, s, s != NULL ? strlen(s) : 0);
}

size_t feed_record_begin(FeedBuf *b, FeedKind kind)
{
	size_t start = b->len;

	feed_buf_put_u8(b, (uint8_t)kind);
	feed_buf_put_u32(b, 0);
	return start;
}

void feed_record_end(FeedBuf *b, size_t start)
{
	uint64_t body;

	if (b->failed)
		return;
	body = (uint64_t)(b->len - start - FEED_RECORD_HEAD);
	if (body > FEED_BODY_MAX) {
		feed_buf_fail(b, "%s record too long for the feed: %llu bytes, at most %u",
			 feed_kind_name(b->data[start]), (unsigned long long)body, FEED_BODY_MAX);
		return;
	}
	for (int i = 0; i < 4; i++)
		b->data[start + 1 + (size_t)i] = (uint8_t)(body >> (8 * (3 - i)));
}

/* --- writing this file's records ------------------------------------------ */

void feed_put_header(FeedBuf *b, const FeedHeader *h)
{
	size_t at = feed_record_begin(b, FEED_HEADER);

	feed_buf_put_u16(b, h->version);
	feed_buf_put_cstr(b, h->epoch);
	feed_buf_put_u64(b, h->first_group);
	feed_buf_put_u64(b, h->start_lsn);
	feed_buf_put_u32(b, h->server_version);
	feed_buf_put_u8(b, h->proto_version);
	feed_buf_put_u8(b, h->binary ? 1 : 0);
	feed_record_end(b, at);
}

static void put_lsn_message(FeedBuf *b, FeedKind kind, Lsn lsn, const uint8_t *msg, size_t len)
{
	size_t at = feed_record_begin(b, kind);

	feed_buf_put_u64(b, lsn);
	feed_buf_put(b, msg, len);
	feed_record_end(b, at);
}

void feed_put_relation(FeedBuf *b, Lsn lsn, const uint8_t *msg, size_t len)
{
	put_lsn_message(b, FEED_RELATION, lsn, msg, len);
}

void feed_put_message(FeedBuf *b, Lsn lsn, const uint8_t *msg, size_t len)
{
	put_lsn_message(b, FEED_MESSAGE, lsn, msg, len);
}

void feed_put_group_end(FeedBuf *b, const FeedGroupEnd *c)
{
	size_t at = feed_record_begin(b, FEED_GROUP_END);

	feed_buf_put_u64(b, c->group);
	feed_buf_put_u64(b, c->confirmed_lsn);
	feed_buf_put_i64(b, c->commit_time);
	feed_record_end(b, at);
}

void feed_put_segment_end(FeedBuf *b, const FeedSegmentEnd *e)
{
	size_t at = feed_record_begin(b, FEED_SEGMENT_END);

	feed_buf_put_u64(b, e->ngroups);
	feed_buf_put_u64(b, e->last_group);
	feed_buf_put_u64(b, e->end_lsn);
	feed_record_end(b, at);
}

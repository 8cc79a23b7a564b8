/*
 * feed_body.c: reading one record's body (src/feed/feed_body.h): the
 * cursor's getters (include/pgmirror/cursor.h), with a short read, a lying
 * length or count, a flag that is neither 0 nor 1 and bytes left over
 * reported as the record's damage, at the body byte where the field
 * starts.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_body.h"

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

bool feed_body_init(FeedBody *b, const FeedRecord *rec, FeedKind want, ErrBuf *err)
{
	cursor_init(&b->c, rec->body, rec->len);
	b->rec = rec;
	b->err = err;
	if (rec->kind != want) {
		errbuf_set(err, "record at offset %zu is not a %s record", rec->offset,
			   feed_kind_name(want));
		return false;
	}
	return true;
}

bool feed_body_fail_at(FeedBody *b, size_t at, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	errbuf_set(b->err, "malformed %s record at offset %zu: %s at body byte %zu",
		   feed_kind_name(b->rec->kind), b->rec->offset, what, at);
	return false;
}

static bool truncated(FeedBody *b)
{
	return feed_body_fail_at(b, b->c.pos, "truncated");
}

bool feed_body_u8(FeedBody *b, uint8_t *out)
{
	return cursor_get_u8(&b->c, out) || truncated(b);
}

bool feed_body_u16(FeedBody *b, uint16_t *out)
{
	return cursor_get_u16(&b->c, out) || truncated(b);
}

bool feed_body_u32(FeedBody *b, uint32_t *out)
{
	return cursor_get_u32(&b->c, out) || truncated(b);
}

bool feed_body_i32(FeedBody *b, int32_t *out)
{
	return cursor_get_i32(&b->c, out) || truncated(b);
}

bool feed_body_u64(FeedBody *b, uint64_t *out)
{
	return cursor_get_u64(&b->c, out) || truncated(b);
}

bool feed_body_i64(FeedBody *b, int64_t *out)
{
	return cursor_get_i64(&b->c, out) || truncated(b);
}

bool feed_body_flag(FeedBody *b, bool *out)
{
	size_t at = b->c.pos;
	uint8_t v;

	if (!feed_body_u8(b, &v))
		return false;
	if (v > 1)
		return feed_body_fail_at(b, at, "flag %u is neither 0 nor 1", v);
	*out = v == 1;
	return true;
}

/* n bytes of a string whose length field starts at at. */
static bool string_bytes(FeedBody *b, size_t at, uint64_t n, const char **s, bool nul_ok)
{
	const uint8_t *p;

	if (n > cursor_left(&b->c))
		return feed_body_fail_at(b, at, "string of %llu bytes but only %zu byte%s left",
					 (unsigned long long)n, cursor_left(&b->c),
					 plural(cursor_left(&b->c)));
	if (!cursor_get_bytes(&b->c, (size_t)n, &p))
		return truncated(b);
	if (!nul_ok && n > 0 && memchr(p, '\0', (size_t)n) != NULL)
		return feed_body_fail_at(b, at, "string holds a NUL byte");
	*s = (const char *)p;
	return true;
}

bool feed_body_str(FeedBody *b, const char **s, size_t *n, bool nul_ok)
{
	size_t at = b->c.pos;
	uint32_t len;

	if (!feed_body_u32(b, &len) || !string_bytes(b, at, len, s, nul_ok))
		return false;
	*n = len;
	return true;
}

bool feed_body_ostr(FeedBody *b, const char **s, size_t *n, bool nul_ok)
{
	size_t at = b->c.pos;
	int32_t len;

	if (!feed_body_i32(b, &len))
		return false;
	if (len == -1) {
		*s = NULL;
		*n = 0;
		return true;
	}
	if (len < 0)
		return feed_body_fail_at(b, at, "string length %d", (int)len);
	if (!string_bytes(b, at, (uint64_t)len, s, nul_ok))
		return false;
	*n = (size_t)len;
	return true;
}

bool feed_body_cstr(FeedBody *b, char **out)
{
	const char *s;
	size_t n;

	if (!feed_body_str(b, &s, &n, false))
		return false;
	*out = xstrndup(s, n);
	return true;
}

bool feed_body_ocstr(FeedBody *b, char **out)
{
	const char *s;
	size_t n;

	if (!feed_body_ostr(b, &s, &n, false))
		return false;
	*out = s != NULL ? xstrndup(s, n) : NULL;
	return true;
}

bool feed_body_count(FeedBody *b, uint32_t *n, uint64_t each, const char *what)
{
	size_t at = b->c.pos;

	if (!feed_body_u32(b, n))
		return false;
	if (*n > (uint64_t)cursor_left(&b->c) / each)
		return feed_body_fail_at(b, at, "%u %s but only %zu byte%s left", *n, what,
					 cursor_left(&b->c), plural(cursor_left(&b->c)));
	return true;
}

bool feed_body_end(FeedBody *b)
{
	if (cursor_left(&b->c) == 0)
		return true;
	return feed_body_fail_at(b, b->c.pos, "%zu trailing byte%s", cursor_left(&b->c),
				 plural(cursor_left(&b->c)));
}

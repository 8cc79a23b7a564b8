/*
 * cursor.c: bounds-checked big-endian reads from a byte buffer.
 *
 * Every getter first checks that the bytes it needs are there, comparing
 * as "n > len - pos" (pos never exceeds len, so the subtraction cannot
 * wrap and nothing is ever added to a size), and moves pos only on
 * success. Integers are assembled byte by byte, so alignment and host
 * byte order never matter.
 */
#include "config.h"

#include <string.h>

#include "pgmirror/cursor.h"

static bool cursor_has(const Cursor *c, size_t n)
{
	return !(n > c->len - c->pos);
}

/* The bytes at pos; never forms a pointer from a NULL buffer. */
static const uint8_t *cursor_here(const Cursor *c)
{
	return c->buf == NULL ? NULL : c->buf + c->pos;
}

bool cursor_get_u8(Cursor *c, uint8_t *out)
{
	if (!cursor_has(c, 1))
		return false;
	*out = c->buf[c->pos];
	c->pos += 1;
	return true;
}

bool cursor_get_u16(Cursor *c, uint16_t *out)
{
	const uint8_t *p;

	if (!cursor_has(c, 2))
		return false;
	p = c->buf + c->pos;
	*out = (uint16_t) ((uint16_t) p[0] << 8 | (uint16_t) p[1]);
	c->pos += 2;
	return true;
}

bool cursor_get_i16(Cursor *c, int16_t *out)
{
	uint16_t u;

	if (!cursor_get_u16(c, &u))
		return false;
	*out = (int16_t) u;
	return true;
}

bool cursor_get_u32(Cursor *c, uint32_t *out)
{
	const uint8_t *p;

	if (!cursor_has(c, 4))
		return false;
	p = c->buf + c->pos;
	*out = (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
	       (uint32_t) p[2] << 8 | (uint32_t) p[3];
	c->pos += 4;
	return true;
}

bool cursor_get_i32(Cursor *c, int32_t *out)
{
	uint32_t u;

	if (!cursor_get_u32(c, &u))
		return false;
	*out = (int32_t) u;
	return true;
}

bool cursor_get_u64(Cursor *c, uint64_t *out)
{
	const uint8_t *p;
	uint64_t v = 0;
	int i;

	if (!cursor_has(c, 8))
		return false;
	p = c->buf + c->pos;
	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	*out = v;
	c->pos += 8;
	return true;
}

bool cursor_get_i64(Cursor *c, int64_t *out)
{
	uint64_t u;

	if (!cursor_get_u64(c, &u))
		return false;
	*out = (int64_t) u;
	return true;
}

bool cursor_get_bytes(Cursor *c, size_t n, const uint8_t **out)
{
	if (!cursor_has(c, n))
		return false;
	*out = cursor_here(c);
	c->pos += n;
	return true;
}

bool cursor_get_string(Cursor *c, const char **out, size_t *len)
{
	const uint8_t *start;
	const uint8_t *nul;
	size_t n;

	/* memchr() must not see a NULL buffer, even with a zero length. */
	if (cursor_left(c) == 0)
		return false;
	start = c->buf + c->pos;
	nul = memchr(start, '\0', cursor_left(c));
	if (nul == NULL)
		return false;
	n = (size_t) (nul - start);
	*out = (const char *) start;
	if (len != NULL)
		*len = n;
	c->pos += n + 1;
	return true;
}

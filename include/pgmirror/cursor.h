/*
 * cursor.h: the one way network bytes are read.
 *
 * A Cursor is {buf, len, pos}. Every getter checks the bytes left before it
 * reads, compares as "n > len - pos" so nothing can overflow, advances only
 * on success and returns false otherwise. Integers are big-endian (network
 * order), as everywhere in the PostgreSQL protocol.
 */
#ifndef PGMIRROR_CURSOR_H
#define PGMIRROR_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"

typedef struct Cursor {
	const uint8_t *buf; /* bytes being read; not owned */
	size_t len;         /* number of bytes in buf */
	size_t pos;         /* next byte to read */
} Cursor;

static inline void cursor_init(Cursor *c, const void *buf, size_t len)
{
	c->buf = buf;
	c->len = len;
	c->pos = 0;
}

static inline size_t cursor_left(const Cursor *c)
{
	return c->len - c->pos;
}

bool cursor_get_u8(Cursor *c, uint8_t *out) PGM_MUST_CHECK;
bool cursor_get_u16(Cursor *c, uint16_t *out) PGM_MUST_CHECK;
bool cursor_get_i16(Cursor *c, int16_t *out) PGM_MUST_CHECK;
bool cursor_get_u32(Cursor *c, uint32_t *out) PGM_MUST_CHECK;
bool cursor_get_i32(Cursor *c, int32_t *out) PGM_MUST_CHECK;
bool cursor_get_u64(Cursor *c, uint64_t *out) PGM_MUST_CHECK;
bool cursor_get_i64(Cursor *c, int64_t *out) PGM_MUST_CHECK;
/* n bytes borrowed from the buffer. */
bool cursor_get_bytes(Cursor *c, size_t n, const uint8_t **out) PGM_MUST_CHECK;
/* A NUL-terminated string whose NUL lies inside the buffer; borrowed. */
bool cursor_get_string(Cursor *c, const char **out, size_t *len) PGM_MUST_CHECK;

#endif

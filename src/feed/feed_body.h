/*
 * feed_body.h: what the readers of record bodies share (feed_body.c;
 * feed_format.c, feed_answer.c and feed_op.c use it): a cursor over one
 * body whose getters report a short read, a lying length or count, a flag
 * that is neither 0 nor 1 and bytes left over as the record's damage, in
 * one shape: "malformed KIND record at offset N: WHAT at body byte P".
 */
#ifndef PGMIRROR_FEED_BODY_H
#define PGMIRROR_FEED_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/cursor.h"
#include "pgmirror/feed_format.h"
#include "pgmirror/util.h"

typedef struct FeedBody {
	Cursor c;                 /* over the record's body */
	const FeedRecord *rec;    /* for the kind and offset in messages */
	ErrBuf *err;
} FeedBody;

/* Over rec's body; false (damage) when rec is not of kind want. */
bool feed_body_init(FeedBody *b, const FeedRecord *rec, FeedKind want, ErrBuf *err);
/* Sets the record's damage, at the body byte at, and returns false. */
bool feed_body_fail_at(FeedBody *b, size_t at, const char *fmt, ...) PGM_PRINTF(3, 4);

bool feed_body_u8(FeedBody *b, uint8_t *out) PGM_MUST_CHECK;
bool feed_body_u16(FeedBody *b, uint16_t *out) PGM_MUST_CHECK;
bool feed_body_u32(FeedBody *b, uint32_t *out) PGM_MUST_CHECK;
bool feed_body_i32(FeedBody *b, int32_t *out) PGM_MUST_CHECK;
bool feed_body_u64(FeedBody *b, uint64_t *out) PGM_MUST_CHECK;
bool feed_body_i64(FeedBody *b, int64_t *out) PGM_MUST_CHECK;
/* A u8 that is 0 or 1. */
bool feed_body_flag(FeedBody *b, bool *out) PGM_MUST_CHECK;
/* A str borrowed from the body; with nul_ok false a NUL byte in it is
 * damage (the string is used as a C string). */
bool feed_body_str(FeedBody *b, const char **s, size_t *n, bool nul_ok) PGM_MUST_CHECK;
/* An ostr: *s NULL for -1. */
bool feed_body_ostr(FeedBody *b, const char **s, size_t *n, bool nul_ok) PGM_MUST_CHECK;
/* A str or ostr as a malloc'd C string (NULL for an ostr's -1). */
bool feed_body_cstr(FeedBody *b, char **out) PGM_MUST_CHECK;
bool feed_body_ocstr(FeedBody *b, char **out) PGM_MUST_CHECK;
/* A u32 count of items that take at least each bytes apiece, checked
 * against the bytes left before anyone allocates or loops on it; what
 * names the items in the message ("columns"). */
bool feed_body_count(FeedBody *b, uint32_t *n, uint64_t each, const char *what) PGM_MUST_CHECK;
/* The body read to its last byte; damage when bytes are left over. */
bool feed_body_end(FeedBody *b) PGM_MUST_CHECK;

#endif

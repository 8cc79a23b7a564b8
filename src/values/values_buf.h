/*
 * values_buf.h: what every file of the values module shares, below them all: the
 * error sink and its messages, the scratch buffer's writers, UTF-8
 * checking and the small lexical helpers (values_buf.c).
 */
#ifndef PGMIRROR_VALUES_BUF_H
#define PGMIRROR_VALUES_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pgmirror/values.h"

/* ---------------------------------------------------------------------
 * Errors (values_buf.c)
 * ------------------------------------------------------------------ */

/* Where a message goes; buf may be NULL when the caller does not care. */
typedef struct Err {
	char *buf;
	size_t size;
} Err;

/* Bytes of a bad value quoted in a message: enough to recognise it, few
 * enough to keep a log line one line. */
#define ERR_VALUE_MAX 40
/* Each quoted byte takes at most 4 characters (\xNN), plus quotes and
 * "..." and the NUL. */
#define ERR_QUOTED_SIZE (ERR_VALUE_MAX * 4 + 8)

/* s[0..n) as "...", C-escaped and cut at ERR_VALUE_MAX bytes. */
void values_quote(char out[ERR_QUOTED_SIZE], const char *s, size_t n);
/* Formats into e (if it has room); always returns false. */
bool values_fail(Err *e, const char *fmt, ...) PGM_PRINTF(2, 3);
/* "invalid input for type TYPE: "VALUE"" and "value out of range ...";
 * both return false. */
bool values_invalid(Err *e, ValueType vt, const char *s, size_t n);
bool values_out_of_range(Err *e, ValueType vt, const char *s, size_t n);

/* The SQL name of vt in messages ("integer", "numeric", ...): values_buf.c. */
const char *values_type_sql_name(ValueType vt);

/* ---------------------------------------------------------------------
 * The scratch buffer (values_buf.c)
 * ------------------------------------------------------------------ */

/* Room for extra more bytes; a size that overflows ends the program. */
void values_buf_reserve(ValueBuf *b, size_t extra);
void values_buf_put(ValueBuf *b, const char *p, size_t n);
void values_buf_puts(ValueBuf *b, const char *s);
void values_buf_putc(ValueBuf *b, char c);

/* A zero-length TEXT or BLOB must still have a pointer: SQLite binds a
 * NULL pointer as NULL, and an empty bytea is not NULL. */
extern const char values_empty[1];

/* out as kind with p[0..n) (values_empty when p is NULL), or b's bytes. */
void values_set_text(Value *out, ValueKind kind, const char *p, size_t n);
void values_set_from_buf(Value *out, ValueKind kind, const ValueBuf *b);

/* n * k + add and a + b, saturating: a saturated size fails in
 * values_buf_reserve. */
size_t values_size_mul_add(size_t n, size_t k, size_t add);
size_t values_size_add(size_t a, size_t b);

/*
 * UTF-8 checked one byte at a time, so that it can run over a stream that
 * is being unescaped. Rejects what RFC 3629 rejects: overlong forms,
 * surrogates, code points past U+10FFFF. Start from { 0 }; the text ended
 * well when need is 0.
 */
typedef struct Utf8State {
	int need;              /* continuation bytes still expected */
	unsigned char lo, hi;  /* allowed range of the next one */
} Utf8State;
bool values_utf8_step(Utf8State *st, unsigned char c);

/* ---------------------------------------------------------------------
 * Small lexical helpers (never the C locale's: its classes vary)
 * ------------------------------------------------------------------ */

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool equals(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && memcmp(s, word, n) == 0;
}

static inline bool equals_nocase(const char *s, size_t n, const char *word)
{
	if (n != strlen(word))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if (c != word[i])
			return false;
	}
	return true;
}

/* The byte c at *pos, stepping over it. */
static inline bool expect_char(const char *s, size_t n, size_t *pos, char c)
{
	if (*pos >= n || s[*pos] != c)
		return false;
	(*pos)++;
	return true;
}

#endif

/*
 * values_internal.h: what the files of the values module share, and no
 * other module sees: the error sink, the scratch buffer's writers, UTF-8
 * checking, and the parsers one kind of value borrows from another (an
 * array of numbers writes each element with the scalar parsers, an array
 * of json checks each element with the JSON validator).
 *
 *   values.c         the type table, declared SQLite types, retype rules,
 *                    and values_convert(), which dispatches to:
 *   values_buf.c     error messages, the ValueBuf writers, UTF-8 checking
 *   values_scalar.c  integers, decimals (float8, numeric), bytea, text
 *   values_time.c    timestamp and timestamptz text to the stored form
 *   values_json.c    JSON validation and JSON string escaping
 *   values_array.c   PostgreSQL array text to a JSON array
 *   values_binary.c  the binary format of some types to the same values
 */
#ifndef PGMIRROR_VALUES_INTERNAL_H
#define PGMIRROR_VALUES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pgmirror/values.h"

/* Built-in type OIDs the rules name (pg_type.dat). */
enum {
	OID_TEXT = 25, OID_FLOAT8 = 701, OID_VARCHAR = 1043, OID_NUMERIC = 1700,
};

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

/* The SQL name of vt in messages ("integer", "numeric", ...): values.c. */
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

/* ---------------------------------------------------------------------
 * Numbers (values_scalar.c)
 * ------------------------------------------------------------------ */

typedef enum ParseResult { PARSE_OK, PARSE_SYNTAX, PARSE_RANGE } ParseResult;

/* [+-]digits, the whole of s, into an int64. */
ParseResult values_int_parse(const char *s, size_t n, int64_t *out);
void values_int_append(ValueBuf *b, int64_t v);

/* A decimal as written: [+-]digits[.digits][e[+-]digits]. */
typedef struct Decimal {
	bool neg;
	const char *ip;       /* integer digits */
	size_t ilen;
	const char *fp;       /* fraction digits */
	size_t flen;
	const char *ep;       /* exponent after the 'e', with its sign */
	size_t elen;          /* 0: no exponent */
	int64_t exp;          /* its value, clamped to +-EXP_CLAMP */
} Decimal;

/* The whole of s as a decimal; an exponent only if allow_exp. */
bool values_decimal_parse(const char *s, size_t n, bool allow_exp, Decimal *d);
/* The double nearest d, correctly rounded, whatever the locale. */
ParseResult values_decimal_to_double(const Decimal *d, double *out);
/* d as a JSON number. */
void values_decimal_append_json(ValueBuf *b, const Decimal *d);

/* The words float8out and numeric_out write for the special values. */
bool values_is_nan(const char *s, size_t n);
bool values_is_infinity(const char *s, size_t n, bool *neg);

/* The scalar conversions values_convert() dispatches to. */
bool values_convert_int(const char *s, size_t n, Value *out, Err *e);
bool values_convert_float(const char *s, size_t n, Value *out, Err *e);
bool values_convert_numeric_num(const char *s, size_t n, Value *out, Err *e);
bool values_convert_numeric_text(const char *s, size_t n, Value *out, Err *e);
bool values_convert_bytea(const char *s, size_t n, ValueBuf *b, Value *out, Err *e);
/* Text stored as it came must be UTF-8. */
bool values_text_check_utf8(const char *s, size_t n, Err *e);

/* ---------------------------------------------------------------------
 * Timestamps (values_time.c)
 * ------------------------------------------------------------------ */

/* Longest stored form: 10 year digits, "-MM-DD HH:MM:SS", ".ffffff",
 * " BC". */
#define STAMP_TEXT_MAX 40

/* "infinity" or "-infinity", stored as they are. */
bool values_is_infinity_word(const char *s, size_t n);
/* Append the stored form of a timestamp / timestamptz (in UTC) to b. */
bool values_timestamp_append(ValueBuf *b, const char *s, size_t n, Err *e);
bool values_timestamptz_append(ValueBuf *b, const char *s, size_t n, Err *e);
/* From the binary forms, which count from 2000-01-01 (in range, not
 * infinity): the text date_out writes of a date, and the stored form of
 * a timestamp (UTC for a timestamptz). */
void values_date_append(ValueBuf *b, int32_t days);
void values_stamp_append(ValueBuf *b, int64_t usecs);

/* ---------------------------------------------------------------------
 * JSON (values_json.c)
 * ------------------------------------------------------------------ */

/* Whether s[0..n) is one JSON value (RFC 8259). */
bool values_json_valid(const char *s, size_t n);
/* Appends s as a JSON string; escaped: undo array_out's backslashes. */
bool values_json_string_append(ValueBuf *b, const char *s, size_t n,
			       bool escaped, Err *e);

/* ---------------------------------------------------------------------
 * Arrays (values_array.c)
 * ------------------------------------------------------------------ */

/* A delimiter array_out's text can be split on. */
bool values_array_delim_usable(char delim);
/* PostgreSQL's array text to a JSON array, appended to b. */
bool values_array_to_json(ValueType elem_vt, char delim, const char *s, size_t n,
			  ValueBuf *b, Err *e);

#endif

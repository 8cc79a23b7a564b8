/*
 * values_scalar.h: the number parsers and writers that the scalar
 * conversions and the arrays share (values_scalar.c).
 */
#ifndef PGMIRROR_VALUES_SCALAR_H
#define PGMIRROR_VALUES_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/values.h"
#include "values_buf.h"

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

#endif

/*
 * values_buf.c: what every conversion of the values module shares: value
 * errors ("invalid input for type integer: \"12x\""), the ValueBuf a
 * result is built in (grown as needed, reused from row to row), and UTF-8
 * checking one byte at a time.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values_buf.h"

/* ---------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------ */

/* The SQL name used in messages: the ValueType is all we are told, so an
 * int2 and an int8 column both say "integer". */
const char *values_type_sql_name(ValueType vt)
{
	switch (vt) {
	case VT_BOOL:
		return "boolean";
	case VT_INT:
		return "integer";
	case VT_FLOAT:
		return "double precision";
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
		return "numeric";
	case VT_BYTEA:
		return "bytea";
	case VT_DATE:
		return "date";
	case VT_TIMESTAMP:
		return "timestamp";
	case VT_TIMESTAMPTZ:
		return "timestamp with time zone";
	case VT_JSON:
		return "json";
	case VT_ARRAY:
		return "array";
	default:
		return "text";
	}
}

/*
 * s[0..n) as "...", C-escaped so that a message is one printable line
 * whatever the bytes, and cut at ERR_VALUE_MAX bytes.
 */
void values_quote(char out[ERR_QUOTED_SIZE], const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	size_t show = n > ERR_VALUE_MAX ? ERR_VALUE_MAX : n;

	out[k++] = '"';
	for (size_t i = 0; i < show; i++) {
		unsigned char c = (unsigned char) s[i];

		if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char) c;
		} else if (c >= 0x20 && c < 0x7f) {
			out[k++] = (char) c;
		} else {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 0xf];
		}
	}
	out[k++] = '"';
	if (show < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

bool values_fail(Err *e, const char *fmt, ...)
{
	va_list ap;

	if (e->buf != NULL && e->size > 0) {
		va_start(ap, fmt);
		vsnprintf(e->buf, e->size, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* "WHAT for type TYPE: "VALUE"", the form of every value error. */
static bool fail_value(Err *e, const char *what, ValueType vt,
		       const char *s, size_t n)
{
	char q[ERR_QUOTED_SIZE];

	values_quote(q, s, n);
	return values_fail(e, "%s for type %s: %s", what, values_type_sql_name(vt), q);
}

bool values_invalid(Err *e, ValueType vt, const char *s, size_t n)
{
	return fail_value(e, "invalid input", vt, s, n);
}

bool values_out_of_range(Err *e, ValueType vt, const char *s, size_t n)
{
	return fail_value(e, "value out of range", vt, s, n);
}

/* ---------------------------------------------------------------------
 * The output buffer
 * ------------------------------------------------------------------ */

void values_buf_reserve(ValueBuf *b, size_t extra)
{
	size_t need, cap;

	if (extra > SIZE_MAX - b->len)
		/* A size that overflows ends the program, as xreallocarray
		 * does; let it say so. */
		b->data = xreallocarray(b->data, SIZE_MAX, 2);
	need = b->len + extra;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	b->data = xreallocarray(b->data, cap, 1);
	b->cap = cap;
}

size_t values_size_mul_add(size_t n, size_t k, size_t add)
{
	if (n > (SIZE_MAX - add) / k)
		return SIZE_MAX;
	return n * k + add;
}

size_t values_size_add(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

void values_buf_put(ValueBuf *b, const char *p, size_t n)
{
	values_buf_reserve(b, n);
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

void values_buf_puts(ValueBuf *b, const char *s)
{
	values_buf_put(b, s, strlen(s));
}

void values_buf_putc(ValueBuf *b, char c)
{
	values_buf_reserve(b, 1);
	b->data[b->len++] = c;
}

const char values_empty[1] = "";

void values_set_text(Value *out, ValueKind kind, const char *p, size_t n)
{
	out->kind = kind;
	out->p = p != NULL ? p : values_empty;
	out->len = n;
}

void values_set_from_buf(Value *out, ValueKind kind, const ValueBuf *b)
{
	values_set_text(out, kind, b->data, b->len);
}

bool values_utf8_step(Utf8State *st, unsigned char c)
{
	if (st->need > 0) {
		if (c < st->lo || c > st->hi)
			return false;
		st->need--;
		st->lo = 0x80;
		st->hi = 0xbf;
		return true;
	}
	st->lo = 0x80;
	st->hi = 0xbf;
	if (c < 0x80)
		return true;
	if (c >= 0xc2 && c <= 0xdf) {
		st->need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		st->need = 2;
		if (c == 0xe0)
			st->lo = 0xa0;   /* overlong */
		else if (c == 0xed)
			st->hi = 0x9f;   /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		st->need = 3;
		if (c == 0xf0)
			st->lo = 0x90;   /* overlong */
		else if (c == 0xf4)
			st->hi = 0x8f;   /* past U+10FFFF */
	} else {
		return false;
	}
	return true;
}


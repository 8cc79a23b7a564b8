/*
 * values_array.c: PostgreSQL's array text (array_out) to the JSON array the
 * mirror stores: the structure checked as array_in checks it, each element
 * written in the JSON form of its type (numbers as numbers, timestamps in
 * the stored form, json as it is, the rest as strings).
 */
#include "config.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "values_array.h"
#include "values_json.h"
#include "values_scalar.h"
#include "values_time.h"

/* PostgreSQL's MAXDIM. */
#define ARRAY_DIM_MAX 6

/* array_in's idea of white space around elements and braces. */
static bool array_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* Undoes array_out's quoting: a backslash takes the next byte as is.
 * Returns the unescaped length (never more than n). */
static size_t array_unescape(char *dst, const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		dst[k++] = s[i];
	}
	return k;
}


/*
 * Most that value_json_append writes for an element of n bytes; the
 * escaped path of element_append relies on it being an upper bound.
 */
static size_t element_room(ValueType vt, size_t n)
{
	switch (vt) {
	case VT_BOOL:
		return 5;                    /* false */
	case VT_INT:
		return 20;                   /* -9223372036854775808 */
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		return STAMP_TEXT_MAX + 2;   /* quoted */
	case VT_JSON:
		return n;
	default:
		return values_size_add(n, 2);       /* "0" before ".5", or quotes */
	}
}

/* An element of a type JSON has a form for, from its plain text. */
static bool value_json_append(ValueType vt, const char *s, size_t n,
			      ValueBuf *b, Err *e)
{
	Decimal d;
	int64_t iv;
	double dv;
	bool neg;

	switch (vt) {
	case VT_BOOL:
		if (equals(s, n, "t"))
			values_buf_puts(b, "true");
		else if (equals(s, n, "f"))
			values_buf_puts(b, "false");
		else
			return values_invalid(e, vt, s, n);
		return true;
	case VT_INT:
		switch (values_int_parse(s, n, &iv)) {
		case PARSE_OK:
			values_int_append(b, iv);
			return true;
		case PARSE_RANGE:
			return values_out_of_range(e, vt, s, n);
		default:
			return values_invalid(e, vt, s, n);
		}
	case VT_FLOAT:
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
		/* JSON has no NaN or Infinity: keep PostgreSQL's word. */
		if (values_is_nan(s, n) || values_is_infinity(s, n, &neg)) {
			values_buf_putc(b, '"');
			values_buf_put(b, s, n);
			values_buf_putc(b, '"');
			return true;
		}
		if (!values_decimal_parse(s, n, vt == VT_FLOAT, &d))
			return values_invalid(e, vt, s, n);
		if (vt == VT_FLOAT && values_decimal_to_double(&d, &dv) != PARSE_OK)
			return values_out_of_range(e, vt, s, n);
		values_decimal_append_json(b, &d);
		return true;
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		values_buf_putc(b, '"');
		if (values_is_infinity_word(s, n))
			values_buf_put(b, s, n);
		else if (!(vt == VT_TIMESTAMP ? values_timestamp_append(b, s, n, e) :
			   values_timestamptz_append(b, s, n, e)))
			return false;
		values_buf_putc(b, '"');
		return true;
	case VT_JSON:
		if (!values_json_valid(s, n))
			return values_invalid(e, vt, s, n);
		values_buf_put(b, s, n);
		return true;
	default:
		return values_json_string_append(b, s, n, false, e);
	}
}

/* Appends one non-NULL element, s[0..n) as it stands in the array text. */
static bool element_append(ValueType vt, const char *s, size_t n,
			   bool escaped, ValueBuf *b, Err *e)
{
	size_t start = b->len, base, ulen, rn;
	const char *r, *data;
	bool ok;

	switch (vt) {
	case VT_BOOL:
	case VT_INT:
	case VT_FLOAT:
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
	case VT_JSON:
		break;
	case VT_BYTEA:
		/*
		 * Stays PostgreSQL's text, as a JSON string. The JSON form of
		 * valid hex text is exactly "\\x" and hex digits (any other
		 * byte would be written differently), so check that.
		 */
		if (!values_json_string_append(b, s, n, escaped, e))
			return false;
		r = b->data + start;
		rn = b->len - start;
		if (rn < 5 || memcmp(r, "\"\\\\x", 4) != 0 || (rn - 5) % 2 != 0)
			return values_invalid(e, vt, s, n);
		for (size_t i = 4; i < rn - 1; i++)
			if (hex_digit_value((unsigned char) r[i]) < 0)
				return values_invalid(e, vt, s, n);
		return true;
	case VT_DATE:
		if (!values_json_string_append(b, s, n, escaped, e))
			return false;
		if (b->len - start == 2)
			return values_invalid(e, vt, s, n);
		return true;
	default:
		return values_json_string_append(b, s, n, escaped, e);
	}
	if (!escaped)
		return value_json_append(vt, s, n, b, e);

	/*
	 * These types are parsed from their plain text, and a quoted element
	 * (always so for json) may have backslashes. Unescape it into the tail
	 * of b, convert from there to just past it, and move the result down
	 * over the copy. Room is reserved first so that b cannot move while
	 * the copy is read.
	 */
	values_buf_reserve(b, values_size_add(n, element_room(vt, n)));
	base = b->len;
	data = b->data;
	ulen = array_unescape(b->data + base, s, n);
	b->len = base + ulen;
	ok = value_json_append(vt, b->data + base, ulen, b, e);
	assert(b->data == data);
	if (ok)
		memmove(b->data + base, b->data + base + ulen,
			b->len - base - ulen);
	b->len = ok ? b->len - ulen : base;
	return ok;
}

bool values_array_element_append(ValueType vt, const char *s, size_t n, ValueBuf *b, Err *e)
{
	return element_append(vt, s, n, false, b, e);
}

static bool PGM_PRINTF(4, 5) array_malformed(Err *e, const char *s, size_t n,
					     const char *fmt, ...)
{
	char q[ERR_QUOTED_SIZE], why[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	values_quote(q, s, n);
	return values_fail(e, "malformed array literal: %s: %s", q, why);
}

/* One bound of "[lb:ub]": an int4, as array_out writes it. */
static bool array_bound(const char *s, size_t n, size_t *pos, int64_t *out)
{
	size_t start = *pos;

	if (*pos < n && (s[*pos] == '-' || s[*pos] == '+'))
		(*pos)++;
	while (*pos < n && is_digit(s[*pos]) && *pos - start <= 11)
		(*pos)++;
	return values_int_parse(s + start, *pos - start, out) == PARSE_OK &&
	       *out >= INT32_MIN && *out <= INT32_MAX;
}

static bool array_special(char c, char delim)
{
	return c == '{' || c == '}' || c == delim || c == '"' || c == '\\';
}

/* A delimiter array_out's text can be split on: not a byte with a
 * meaning of its own there. */
bool values_array_delim_usable(char delim)
{
	return delim != '\0' && !array_special(delim, '\0') && !array_space(delim);
}

/*
 * PostgreSQL's array text (array_out) to a JSON array: braces become
 * brackets, delim (the element type's typdelim) a comma, an unquoted NULL
 * null, and elements are written by element_append. The structure is checked as array_in checks it: at
 * most ARRAY_DIM_MAX dimensions, all elements at the same depth, sub-arrays
 * of one depth of equal length, and dimension information, when present,
 * matching the contents.
 */
bool values_array_to_json(ValueType elem_vt, char delim, const char *s, size_t n,
			  ValueBuf *b, Err *e)
{
	int64_t dim_len[ARRAY_DIM_MAX];
	size_t count[ARRAY_DIM_MAX + 1];   /* items so far, per open level */
	size_t expect[ARRAY_DIM_MAX + 1];  /* items per array at each depth */
	size_t ndims = 0, i = 0;
	int depth, leaf = 0;               /* depth of the elements; 0: none yet */
	bool after_item = false;

	/* "[lb:ub]...=" when a lower bound is not 1: JSON has no bounds. */
	while (i < n && s[i] == '[') {
		int64_t lb, ub;

		if (ndims == ARRAY_DIM_MAX)
			return array_malformed(e, s, n, "more than %d dimensions",
					       ARRAY_DIM_MAX);
		i++;
		if (!array_bound(s, n, &i, &lb) || !expect_char(s, n, &i, ':') ||
		    !array_bound(s, n, &i, &ub) || !expect_char(s, n, &i, ']') ||
		    ub < lb)
			return array_malformed(e, s, n, "invalid dimension information");
		dim_len[ndims++] = ub - lb + 1;
	}
	if (ndims > 0 && !expect_char(s, n, &i, '='))
		return array_malformed(e, s, n,
				       "missing \"=\" after dimension information");
	while (i < n && array_space(s[i]))
		i++;
	if (i >= n || s[i] != '{')
		return array_malformed(e, s, n,
				       "array value must start with \"{\" or dimension information");
	i++;
	depth = 1;
	count[1] = 0;
	for (int k = 0; k <= ARRAY_DIM_MAX; k++)
		expect[k] = SIZE_MAX;
	values_buf_putc(b, '[');

	/* {} is the empty array, whatever its type; nowhere else is a level
	 * empty. */
	while (i < n && array_space(s[i]))
		i++;
	if (i < n && s[i] == '}') {
		i++;
		depth = 0;
		values_buf_putc(b, ']');
	}

	while (depth > 0) {
		while (i < n && array_space(s[i]))
			i++;
		if (i >= n)
			return array_malformed(e, s, n, "unexpected end of input");

		if (after_item) {
			if (s[i] == delim) {
				values_buf_putc(b, ',');
				after_item = false;
			} else if (s[i] == '}') {
				if (expect[depth] == SIZE_MAX)
					expect[depth] = count[depth];
				else if (expect[depth] != count[depth])
					goto mismatch;
				values_buf_putc(b, ']');
				if (--depth > 0)
					count[depth]++;
			} else {
				goto unexpected;
			}
			i++;
			continue;
		}

		if (s[i] == '{') {
			if (leaf != 0 && depth >= leaf)
				goto mismatch;
			if (depth == ARRAY_DIM_MAX)
				return array_malformed(e, s, n, "more than %d dimensions",
						       ARRAY_DIM_MAX);
			count[++depth] = 0;
			values_buf_putc(b, '[');
			i++;
			continue;
		}
		if (s[i] == '}' || s[i] == delim)
			goto unexpected;

		if (leaf == 0)
			leaf = depth;
		else if (depth != leaf)
			goto mismatch;
		if (s[i] == '"') {
			/* Quoted: array_out escapes '"' and '\' with a backslash. */
			size_t start = ++i;
			bool escaped = false;

			while (i < n && s[i] != '"') {
				if (s[i] == '\\') {
					escaped = true;
					i++;
				}
				i++;
			}
			if (i >= n)
				return array_malformed(e, s, n, "unexpected end of input");
			if (!element_append(elem_vt, s + start, i - start, escaped, b, e))
				return false;
			i++;
		} else {
			/* Unquoted: up to the next special byte, less the white
			 * space array_in would trim. NULL in any case is NULL. */
			size_t start = i, end;

			while (i < n && !array_special(s[i], delim))
				i++;
			if (i >= n)
				return array_malformed(e, s, n, "unexpected end of input");
			if (s[i] == '{' || s[i] == '"' || s[i] == '\\')
				goto unexpected;
			for (end = i; end > start && array_space(s[end - 1]); end--)
				;
			if (equals_nocase(s + start, end - start, "null"))
				values_buf_puts(b, "null");
			else if (!element_append(elem_vt, s + start, end - start,
						 false, b, e))
				return false;
		}
		count[depth]++;
		after_item = true;
	}

	while (i < n && array_space(s[i]))
		i++;
	if (i != n)
		return array_malformed(e, s, n, "junk after closing right brace");
	if (ndims > 0) {
		if (ndims != (size_t) leaf)
			goto dims;
		for (size_t k = 0; k < ndims; k++)
			if ((uint64_t) dim_len[k] != expect[k + 1])
				goto dims;
	}
	return true;

unexpected:
	return array_malformed(e, s, n, "unexpected character at offset %zu", i);
mismatch:
	return array_malformed(e, s, n,
			       "sub-arrays must have matching dimensions");
dims:
	return array_malformed(e, s, n,
			       "dimension information does not match the contents");
}

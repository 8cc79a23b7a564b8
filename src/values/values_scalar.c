/*
 * values_scalar.c: the scalar conversions: integers, decimals (float8 and
 * numeric, whose double is correctly rounded whatever the locale), bytea
 * hex text to bytes, and the UTF-8 check of text stored as it came.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values_scalar.h"

/* ---------------------------------------------------------------------
 * Integers
 * ------------------------------------------------------------------ */

ParseResult values_int_parse(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false, range = false;
	uint64_t v = 0, limit;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == n)
		return PARSE_SYNTAX;
	limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
	for (; i < n; i++) {
		unsigned d;

		if (!is_digit(s[i]))
			return PARSE_SYNTAX;   /* a typo beats an overflow */
		d = (unsigned) (s[i] - '0');
		if (v > (limit - d) / 10)
			range = true;
		else
			v = v * 10 + d;
	}
	if (range)
		return PARSE_RANGE;
	/* INT64_MIN has no positive counterpart to negate. */
	if (neg)
		*out = v > (uint64_t) INT64_MAX ? INT64_MIN : -(int64_t) v;
	else
		*out = (int64_t) v;
	return PARSE_OK;
}

void values_int_append(ValueBuf *b, int64_t v)
{
	char tmp[24];
	size_t k = sizeof tmp;
	uint64_t u = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;

	do {
		tmp[--k] = (char) ('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		tmp[--k] = '-';
	values_buf_put(b, tmp + k, sizeof tmp - k);
}

/* ---------------------------------------------------------------------
 * Decimal numbers (float8 and numeric text)
 * ------------------------------------------------------------------ */

/* Far past any double's range, yet safe to add sizes to in int64. */
#define EXP_CLAMP INT64_C(100000000)

bool values_decimal_parse(const char *s, size_t n, bool allow_exp,
			  Decimal *d)
{
	size_t i = 0;

	memset(d, 0, sizeof *d);
	if (i < n && (s[i] == '-' || s[i] == '+'))
		d->neg = s[i++] == '-';
	d->ip = s + i;
	while (i < n && is_digit(s[i]))
		i++;
	d->ilen = (size_t) (s + i - d->ip);
	d->fp = s + i;
	if (i < n && s[i] == '.') {
		d->fp = s + ++i;
		while (i < n && is_digit(s[i]))
			i++;
		d->flen = (size_t) (s + i - d->fp);
	}
	if (d->ilen + d->flen == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;
		size_t start;

		if (!allow_exp)
			return false;
		d->ep = s + ++i;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		start = i;
		for (; i < n && is_digit(s[i]); i++)
			if (d->exp < EXP_CLAMP)
				d->exp = d->exp * 10 + (s[i] - '0');
		if (i == start)
			return false;
		if (d->exp > EXP_CLAMP)
			d->exp = EXP_CLAMP;
		if (eneg)
			d->exp = -d->exp;
		d->elen = (size_t) (s + i - d->ep);
	}
	return i == n;
}

/*
 * Significant digits handed to strtod. A double's rounding never depends
 * on more than 767 of them, so 800 plus a sticky digit for anything
 * nonzero beyond decides it exactly.
 */
#define SIG_DIGITS_MAX 800

/*
 * The double nearest d, correctly rounded. The digits are handed to strtod
 * as "DIGITSeEXP", without a decimal point: the point is the one thing the
 * C locale changes in strtod, so this is exact whatever LC_NUMERIC says.
 */
ParseResult values_decimal_to_double(const Decimal *d, double *out)
{
	char tmp[1 + SIG_DIGITS_MAX + 1 + 1 + 24];
	size_t k = 0, nsig = 0;
	int64_t exp10, dropped = 0;
	bool sticky = false;
	char *end;
	double v;
	int saved_errno = errno;

	if (d->neg)
		tmp[k++] = '-';
	/* value = DIGITS * 10^(exp - flen), DIGITS = integer ++ fraction */
	for (size_t i = 0; i < d->ilen + d->flen; i++) {
		char c = i < d->ilen ? d->ip[i] : d->fp[i - d->ilen];

		if (nsig == 0 && c == '0')
			continue;
		if (nsig == SIG_DIGITS_MAX) {
			dropped++;
			sticky |= c != '0';
			continue;
		}
		tmp[k++] = c;
		nsig++;
	}
	if (nsig == 0) {
		*out = d->neg ? -0.0 : 0.0;
		return PARSE_OK;
	}
	exp10 = d->exp - (int64_t) d->flen + dropped;
	/*
	 * Up to 15 digits are an exact double, and so is a power of ten up
	 * to 1e22: one multiplication or division rounds once, correctly,
	 * which is what strtod gives too (Clinger's fast path).
	 */
	if (nsig <= 15 && exp10 >= -22 && exp10 <= 22) {
		static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
						1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
						1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
		int64_t m = 0;

		for (size_t i = d->neg ? 1 : 0; i < k; i++)
			m = m * 10 + (tmp[i] - '0');
		v = exp10 >= 0 ? (double) m * pow10[exp10] : (double) m / pow10[-exp10];
		*out = d->neg ? -v : v;
		return PARSE_OK;
	}
	if (sticky) {
		tmp[k++] = '1';
		exp10--;
	}
	k += (size_t) snprintf(tmp + k, sizeof tmp - k, "e%" PRId64, exp10);

	errno = 0;
	v = strtod(tmp, &end);
	if (end != tmp + k) {
		errno = saved_errno;
		return PARSE_SYNTAX;
	}
	/* ERANGE also flags a subnormal result, which is a fine value; only
	 * overflow and underflow to zero are out of range (float8in). */
	if (errno == ERANGE && (v == 0.0 || isinf(v))) {
		errno = saved_errno;
		return PARSE_RANGE;
	}
	errno = saved_errno;
	*out = v;
	return PARSE_OK;
}

/*
 * d as a JSON number. PostgreSQL's output is JSON already; this also keeps
 * forms array_in would accept (".5", "+1", "1.", "007") valid JSON.
 */
void values_decimal_append_json(ValueBuf *b, const Decimal *d)
{
	size_t i = 0;

	if (d->neg)
		values_buf_putc(b, '-');
	while (i + 1 < d->ilen && d->ip[i] == '0')
		i++;
	if (d->ilen == 0)
		values_buf_putc(b, '0');
	else
		values_buf_put(b, d->ip + i, d->ilen - i);
	if (d->flen > 0) {
		values_buf_putc(b, '.');
		values_buf_put(b, d->fp, d->flen);
	}
	if (d->elen > 0) {
		values_buf_putc(b, 'e');
		values_buf_put(b, d->ep, d->elen);
	}
}

/* The words float8out and numeric_out write for the special values. */
bool values_is_nan(const char *s, size_t n)
{
	return equals(s, n, "NaN");
}

bool values_is_infinity(const char *s, size_t n, bool *neg)
{
	*neg = equals(s, n, "-Infinity");
	return *neg || equals(s, n, "Infinity");
}

/* ---------------------------------------------------------------------
 * Bytea
 * ------------------------------------------------------------------ */

/* Whether s is bytea_output=hex: "\x" and pairs of hex digits. */
/* numeric otherwise: the exact decimal text, once it is checked. */
bool values_convert_numeric_text(const char *s, size_t n, Value *out, Err *e)
{
	Decimal d;
	bool neg;

	if (!values_is_nan(s, n) && !values_is_infinity(s, n, &neg) &&
	    !values_decimal_parse(s, n, false, &d))
		return values_invalid(e, VT_NUMERIC_TEXT, s, n);
	values_set_text(out, VAL_TEXT, s, n);
	return true;
}

static bool bytea_hex_valid(const char *s, size_t n)
{
	if (n < 2 || s[0] != '\\' || s[1] != 'x' || (n - 2) % 2 != 0)
		return false;
	for (size_t i = 2; i < n; i++)
		if (hex_digit_value((unsigned char) s[i]) < 0)
			return false;
	return true;
}

/* ---------------------------------------------------------------------
 * Scalars
 * ------------------------------------------------------------------ */

bool values_convert_float(const char *s, size_t n, Value *out, Err *e)
{
	Decimal d;
	bool neg;

	if (values_is_nan(s, n)) {
		/* SQLite has no NaN: a REAL NaN would be stored as NULL. */
		values_set_text(out, VAL_TEXT, s, n);
		return true;
	}
	out->kind = VAL_REAL;
	if (values_is_infinity(s, n, &neg)) {
		out->r = neg ? -INFINITY : INFINITY;
		return true;
	}
	if (!values_decimal_parse(s, n, true, &d))
		return values_invalid(e, VT_FLOAT, s, n);
	if (values_decimal_to_double(&d, &out->r) != PARSE_OK)
		return values_out_of_range(e, VT_FLOAT, s, n);
	return true;
}

bool values_convert_int(const char *s, size_t n, Value *out, Err *e)
{
	out->kind = VAL_INT;
	switch (values_int_parse(s, n, &out->i)) {
	case PARSE_OK:
		return true;
	case PARSE_RANGE:
		return values_out_of_range(e, VT_INT, s, n);
	default:
		return values_invalid(e, VT_INT, s, n);
	}
}

/* numeric(p,s) with p <= 15: an integer when the value is one, else the
 * double, which holds any 15 significant digits exactly. */
bool values_convert_numeric_num(const char *s, size_t n, Value *out, Err *e)
{
	Decimal d;
	bool neg, integral = true;

	if (values_is_nan(s, n)) {
		values_set_text(out, VAL_TEXT, s, n);
		return true;
	}
	if (values_is_infinity(s, n, &neg)) {
		out->kind = VAL_REAL;
		out->r = neg ? -INFINITY : INFINITY;
		return true;
	}
	if (!values_decimal_parse(s, n, false, &d))
		return values_invalid(e, VT_NUMERIC_NUM, s, n);
	for (size_t i = 0; i < d.flen; i++)
		integral &= d.fp[i] == '0';
	if (integral) {
		out->kind = VAL_INT;
		if (d.ilen == 0)
			return true;                  /* ".00" */
		/* Sign and integer digits, which start the text. */
		if (values_int_parse(s, (size_t) (d.ip + d.ilen - s), &out->i) == PARSE_OK)
			return true;
		/* Past int64 the declared precision was not kept to (a
		 * retyped column, say): fall back to the nearest real, as
		 * SQLite's NUMERIC affinity itself would. */
	}
	out->kind = VAL_REAL;
	if (values_decimal_to_double(&d, &out->r) != PARSE_OK)
		return values_out_of_range(e, VT_NUMERIC_NUM, s, n);
	return true;
}

bool values_convert_bytea(const char *s, size_t n, ValueBuf *b, Value *out,
			  Err *e)
{
	size_t nbytes;

	if (!bytea_hex_valid(s, n))
		return values_invalid(e, VT_BYTEA, s, n);
	nbytes = (n - 2) / 2;
	values_buf_reserve(b, nbytes);
	for (size_t i = 0; i < nbytes; i++)
		b->data[i] = (char) (hex_digit_value((unsigned char) s[2 + 2 * i]) << 4 |
				     hex_digit_value((unsigned char) s[3 + 2 * i]));
	b->len = nbytes;
	values_set_from_buf(out, VAL_BLOB, b);
	return true;
}

/*
 * Text stored as it came must be UTF-8. The server converts to the UTF-8
 * the session asks for from any encoding but SQL_ASCII, whose bytes come
 * as stored, unchecked: those that are not UTF-8 are refused rather than
 * stored as TEXT that no reader can decode.
 */
bool values_text_check_utf8(const char *s, size_t n, Err *e)
{
	char q[ERR_QUOTED_SIZE];
	Utf8State st = { 0 };
	size_t i = 0;

	/* ASCII, most text, eight bytes at a time */
	for (; n - i >= 8; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (w & UINT64_C(0x8080808080808080))
			break;
	}
	for (; i < n; i++)
		if (!values_utf8_step(&st, (unsigned char) s[i]))
			goto invalid;
	if (st.need == 0)
		return true;
invalid:
	values_quote(q, s, n);
	return values_fail(e, "invalid UTF-8 in text %s: the source must send UTF-8, which a "
			   "SQL_ASCII database does not check; correct the value on the source", q);
}

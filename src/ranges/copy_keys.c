/*
 * copy_keys.c: the order of a key column of a copy in parts, per kind of
 * key (copy_keys.h), on the values as the mirror holds them.
 *
 * The order must be the source's exactly, or a change would be applied to
 * a row its range's snapshot already has, or not to one it lacks: numeric
 * compares by value whatever the scale (numeric_cmp: NaN after Infinity);
 * a date or timestamp by its time, an era's year first (1 BC is year 0,
 * 2 BC year -1); bpchar without its trailing blanks (bpcharcmp), byte by
 * byte as COLLATE "C" orders it; a float by value, NaN last; a bytea by
 * its bytes (its key kept as hex text); time and interval in
 * copy_keys_time.c. tests/integration/test_copy_key_order.py
 * has the server sort random and edge values and checks this order, and
 * the literals the copy goes on after, against it.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_keys_internal.h"
#include "pgmirror/copy_keys.h"

/* pg_type.dat OIDs of the key types that order here as on the source */
enum { T_BOOL = 16, T_BYTEA = 17, T_INT8 = 20, T_INT2 = 21, T_INT4 = 23, T_TEXT = 25, T_OID = 26,
       T_FLOAT4 = 700, T_FLOAT8 = 701, T_BPCHAR = 1042, T_VARCHAR = 1043, T_DATE = 1082,
       T_TIME = 1083, T_TIMESTAMP = 1114, T_TIMESTAMPTZ = 1184, T_INTERVAL = 1186,
       T_NUMERIC = 1700, T_UUID = 2950 };

/* PostgreSQL's VARHDRSZ, by which numeric's typmod is offset */
#define VARHDRSZ 4
/*
 * numeric(p,s) with p <= 15 is held as a real (values.c). Below about
 * 1e-307 a real loses digits, which a scale past 307 allows: such a key
 * could not be told apart from its neighbour, so it has no kind.
 */
#define REAL_SCALE_MAX 307

char copy_key_kind(uint32_t type_oid, int32_t type_mod, bool utf8)
{
	switch (type_oid) {
	case T_BOOL: case T_INT2: case T_INT4: case T_INT8: case T_OID:
		return COPY_KEY_INT;
	case T_UUID:
		return COPY_KEY_BYTES;
	case T_TEXT: case T_VARCHAR:
		return utf8 ? COPY_KEY_BYTES : 0;
	case T_BPCHAR:
		return utf8 ? COPY_KEY_BPCHAR : 0;
	case T_DATE: case T_TIMESTAMP: case T_TIMESTAMPTZ:
		return COPY_KEY_TIME;
	case T_FLOAT8:
		return COPY_KEY_FLOAT8;
	case T_FLOAT4:
		return COPY_KEY_FLOAT4;
	case T_TIME:
		return COPY_KEY_CLOCK;
	case T_INTERVAL:
		return COPY_KEY_INTERVAL;
	case T_BYTEA:
		return COPY_KEY_BYTEA;
	case T_NUMERIC:
		if (type_mod >= VARHDRSZ) {
			int32_t tm = type_mod - VARHDRSZ;
			int32_t precision = (tm >> 16) & 0xffff;
			/* an 11-bit signed scale (PostgreSQL 15 allows -1000 to 1000) */
			int32_t scale = ((tm & 0x7ff) ^ 1024) - 1024;

			if (precision <= 15 && scale > REAL_SCALE_MAX)
				return 0;
		}
		return COPY_KEY_NUMERIC;
	default:
		return 0;
	}
}

bool copy_key_collated(uint32_t type_oid)
{
	return type_oid == T_TEXT || type_oid == T_VARCHAR || type_oid == T_BPCHAR;
}

bool copy_key_kind_valid(char kind)
{
	return kind == COPY_KEY_INT || kind == COPY_KEY_BYTES || kind == COPY_KEY_BPCHAR ||
	       kind == COPY_KEY_NUMERIC || kind == COPY_KEY_TIME || kind == COPY_KEY_FLOAT8 ||
	       kind == COPY_KEY_FLOAT4 || kind == COPY_KEY_CLOCK || kind == COPY_KEY_INTERVAL ||
	       kind == COPY_KEY_BYTEA;
}

size_t copy_key_numeric_text(const Value *v, char *buf, const char **out)
{
	*out = buf;
	switch (v->kind) {
	case VAL_INT:
		return (size_t)snprintf(buf, COPY_KEY_NUMBER_SIZE, "%" PRId64, v->i);
	case VAL_REAL:
		if (isinf(v->r))
			return (size_t)snprintf(buf, COPY_KEY_NUMBER_SIZE, "%s",
						v->r < 0 ? "-Infinity" : "Infinity");
		/* at most 15 digits were stored in it: these are they */
		return (size_t)snprintf(buf, COPY_KEY_NUMBER_SIZE, "%.15g", v->r);
	default:
		*out = v->p != NULL ? v->p : "";
		return v->len;
	}
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Bytes, a shorter run first when it begins the longer (COLLATE "C"). */
static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n > 0 ? memcmp(a, b, n) : 0;

	if (c != 0)
		return c < 0 ? -1 : 1;
	return alen < blen ? -1 : alen > blen;
}

static bool same(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && memcmp(s, word, n) == 0;
}

/* A number as numeric's text writes it (or %.15g: an exponent too). */
typedef struct Num {
	int cls;              /* 0 -Infinity, 1 a number, 2 Infinity, 3 NaN */
	int sign;             /* -1, 0 (zero), 1 */
	const char *ip, *fp;  /* integer and fraction digits */
	size_t ilen, flen;
	size_t first, last;   /* the nonzero digits' span in ip ++ fp */
	int64_t mag;          /* the value is 0.DIGITS x 10^mag */
} Num;

static char num_digit(const Num *x, size_t i)
{
	return i < x->ilen ? x->ip[i] : x->fp[i - x->ilen];
}

static bool num_parse(const char *s, size_t n, Num *x)
{
	size_t i = 0;
	int64_t exp = 0;
	bool neg = false;

	memset(x, 0, sizeof(*x));
	x->cls = 1;
	if (same(s, n, "NaN") || same(s, n, "-Infinity") || same(s, n, "Infinity")) {
		x->cls = s[0] == 'N' ? 3 : s[0] == '-' ? 0 : 2;
		return true;
	}
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (x->ip = s + i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		x->ilen++;
	x->fp = s + i;
	if (i < n && s[i] == '.')
		for (x->fp = s + ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			x->flen++;
	if (x->ilen + x->flen == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;
		size_t start;

		if (++i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		for (start = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (exp < INT64_C(1000000000))
				exp = exp * 10 + (s[i] - '0');
		if (i == start)
			return false;
		exp = eneg ? -exp : exp;
	}
	if (i != n)
		return false;
	while (x->first < x->ilen + x->flen && num_digit(x, x->first) == '0')
		x->first++;
	if (x->first == x->ilen + x->flen)
		return true; /* zero, whatever its sign */
	x->sign = neg ? -1 : 1;
	for (x->last = x->ilen + x->flen - 1; num_digit(x, x->last) == '0'; x->last--)
		;
	x->mag = (int64_t)x->ilen - (int64_t)x->first + exp;
	return true;
}

static int cmp_numeric(const char *a, size_t alen, const char *b, size_t blen)
{
	Num x, y;
	int c = 0;

	if (!num_parse(a, alen, &x) || !num_parse(b, blen, &y))
		return cmp_bytes(a, alen, b, blen); /* never from the mirror's values */
	if (x.cls != y.cls || x.cls != 1) /* the special values, or a number */
		return cmp_i64(x.cls, y.cls);
	if (x.sign != y.sign || x.sign == 0)
		return cmp_i64(x.sign, y.sign);
	c = cmp_i64(x.mag, y.mag);
	for (size_t i = x.first, j = y.first; c == 0; i++, j++) {
		bool xend = i > x.last, yend = j > y.last;

		if (xend || yend) { /* one's digits begin the other's: it is less */
			c = xend && yend ? 0 : xend ? -1 : 1;
			break;
		}
		if (num_digit(&x, i) != num_digit(&y, j))
			c = num_digit(&x, i) < num_digit(&y, j) ? -1 : 1;
	}
	return c * x.sign;
}

/* A date or timestamp as the mirror holds it (values_time.c). */
typedef struct Stamp {
	int cls;              /* 0 -infinity, 1 a time, 2 infinity */
	int64_t year;         /* astronomical: 1 BC is 0 */
	const char *rest;     /* "-MM-DD[ HH:MM:SS[.ffffff]]", without the era */
	size_t rlen;
} Stamp;

static bool stamp_parse(const char *s, size_t n, Stamp *t)
{
	size_t i = 0;
	bool bc;

	memset(t, 0, sizeof(*t));
	t->cls = 1;
	if (same(s, n, "-infinity") || same(s, n, "infinity")) {
		t->cls = s[0] == '-' ? 0 : 2;
		return true;
	}
	for (; i < n && i < 18 && s[i] >= '0' && s[i] <= '9'; i++)
		t->year = t->year * 10 + (s[i] - '0');
	if (i == 0 || i == n || s[i] != '-')
		return false;
	bc = n - i >= 3 && memcmp(s + n - 3, " BC", 3) == 0;
	if (bc)
		t->year = 1 - t->year;
	t->rest = s + i;
	t->rlen = n - i - (bc ? 3 : 0);
	return true;
}

static int cmp_time(const char *a, size_t alen, const char *b, size_t blen)
{
	Stamp x, y;

	if (!stamp_parse(a, alen, &x) || !stamp_parse(b, blen, &y))
		return cmp_bytes(a, alen, b, blen); /* never from the mirror's values */
	if (x.cls != y.cls || x.cls != 1) /* the infinities, or a time */
		return cmp_i64(x.cls, y.cls);
	if (x.year != y.year)
		return cmp_i64(x.year, y.year);
	return copy_key_cmp_fixed(x.rest, x.rlen, y.rest, y.rlen);
}

/*
 * A float as the mirror holds it: a real, NaN as its text (values.h). A
 * float4 is held as the double nearest its decimal text (at most 9
 * digits), and so is a key's.
 */
static double float_of_text(const char *s, size_t n)
{
	ColumnType ct = {VT_FLOAT, VT_TEXT, ','};
	ValueBuf buf = {0};
	Value v;
	char err[128];
	double r = NAN;

	if (values_convert(ct, s, n, &buf, &v, err, sizeof(err)) && v.kind == VAL_REAL)
		r = v.r;
	values_buf_free(&buf);
	return r;
}

static double float_of(const Value *v)
{
	if (v->kind == VAL_REAL)
		return v->r;
	if (v->kind == VAL_INT)
		return (double)v->i;
	return float_of_text(v->p != NULL ? v->p : "", v->len);
}

/*
 * The float4 that a held double r stands for. Not (float)r: r is the
 * double nearest a decimal of at most 9 digits, and rounding twice
 * (decimal to double to float4) may land on the other float4 when that
 * decimal lies next to the midpoint of two. 15 digits give that decimal
 * back exactly (DBL_DIG), and strtof() rounds it once.
 */
static float float4_of(double r)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", r);
	return strtof(buf, NULL);
}

/* As float8_cmp_internal(): NaN after everything, equal to NaN; -0 = 0. */
static int cmp_float(double a, double b, bool single)
{
	bool an = isnan(a), bn = isnan(b);

	if (an || bn)
		return an == bn ? 0 : an ? 1 : -1;
	if (single && !isinf(a) && !isinf(b)) {
		a = float4_of(a);
		b = float4_of(b);
	}
	return a < b ? -1 : a > b;
}

/* The fewest digits that read back as r (a float4: as float4_of(r)). */
static char *float_text(double r, bool single, size_t *len)
{
	char buf[40];

	if (isnan(r) || isinf(r))
		snprintf(buf, sizeof(buf), "%s", isnan(r) ? "NaN" : r < 0 ? "-Infinity" : "Infinity");
	else if (single)
		for (int prec = 6; prec <= 9; prec++) {
			float f = float4_of(r);

			snprintf(buf, sizeof(buf), "%.*g", prec, (double)f);
			if (strtof(buf, NULL) == f)
				break;
		}
	else
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, r);
			if (strtod(buf, NULL) == r)
				break;
		}
	*len = strlen(buf);
	return xstrdup(buf);
}

/* Bytes against a bytea key's text, "\\x" and lower-case hex. */
static int cmp_blob_hex(const char *a, size_t alen, const char *hex, size_t hlen)
{
	size_t i = 0, j = 2;

	if (hlen < 2 || hex[0] != '\\' || hex[1] != 'x')
		return cmp_bytes(a, alen, hex, hlen); /* never a key of its own */
	for (; i < alen && j + 1 < hlen; i++, j += 2) {
		int b = hex_digit_value(hex[j]) << 4 | hex_digit_value(hex[j + 1]);

		if ((unsigned char)a[i] != b)
			return (unsigned char)a[i] < b ? -1 : 1;
	}
	return i < alen ? 1 : j + 1 < hlen ? -1 : 0;
}

char *copy_key_text(char kind, const Value *v, size_t *len)
{
	char buf[COPY_KEY_NUMBER_SIZE], *out;
	const char *text;

	switch (kind) {
	case COPY_KEY_NUMERIC:
		*len = copy_key_numeric_text(v, buf, &text);
		break;
	case COPY_KEY_FLOAT8: case COPY_KEY_FLOAT4:
		return float_text(float_of(v), kind == COPY_KEY_FLOAT4, len);
	case COPY_KEY_BYTEA:
		out = xmalloc(2 * v->len + 3);
		memcpy(out, "\\x", 2);
		for (size_t i = 0; i < v->len; i++)
			snprintf(out + 2 + 2 * i, 3, "%02x", (unsigned char)v->p[i]);
		out[2 + 2 * v->len] = '\0';
		*len = 2 + 2 * v->len;
		return out;
	default:
		text = v->p != NULL ? v->p : "";
		*len = v->len;
		break;
	}
	out = xmalloc(*len + 1);
	if (*len > 0)
		memcpy(out, text, *len);
	out[*len] = '\0';
	return out;
}

static size_t trim_blanks(const char *s, size_t n)
{
	while (n > 0 && s[n - 1] == ' ')
		n--;
	return n;
}

int copy_key_cmp_text(char kind, const char *a, size_t alen, const char *b, size_t blen)
{
	switch (kind) {
	case COPY_KEY_NUMERIC:
		return cmp_numeric(a, alen, b, blen);
	case COPY_KEY_TIME:
		return cmp_time(a, alen, b, blen);
	case COPY_KEY_BPCHAR:
		return cmp_bytes(a, trim_blanks(a, alen), b, trim_blanks(b, blen));
	case COPY_KEY_FLOAT8: case COPY_KEY_FLOAT4:
		return cmp_float(float_of_text(a, alen), float_of_text(b, blen),
				 kind == COPY_KEY_FLOAT4);
	case COPY_KEY_CLOCK:
		return copy_key_cmp_fixed(a, alen, b, blen);
	case COPY_KEY_INTERVAL:
		return copy_key_cmp_interval(a, alen, b, blen);
	default: /* a bytea's hex text orders as its bytes */
		return cmp_bytes(a, alen, b, blen);
	}
}

int copy_key_cmp_value(char kind, const Value *v, const char *key, size_t keylen)
{
	char buf[COPY_KEY_NUMBER_SIZE];
	const char *text;
	size_t len;

	switch (kind) {
	case COPY_KEY_NUMERIC:
		len = copy_key_numeric_text(v, buf, &text);
		return cmp_numeric(text, len, key, keylen);
	case COPY_KEY_FLOAT8: case COPY_KEY_FLOAT4:
		return cmp_float(float_of(v), float_of_text(key, keylen), kind == COPY_KEY_FLOAT4);
	case COPY_KEY_BYTEA:
		return cmp_blob_hex(v->p != NULL ? v->p : "", v->len, key, keylen);
	default:
		return copy_key_cmp_text(kind, v->p != NULL ? v->p : "", v->len, key, keylen);
	}
}

bool copy_key_text_valid(char kind, const char *s, size_t len)
{
	ColumnType ct = {VT_FLOAT, VT_TEXT, ','};
	ValueBuf buf = {0};
	Value v;
	char err[128];
	bool ok = true;

	switch (kind) {
	case COPY_KEY_FLOAT8: case COPY_KEY_FLOAT4:
		ok = values_convert(ct, s, len, &buf, &v, err, sizeof(err)) &&
		     (v.kind == VAL_REAL || same(s, len, "NaN"));
		values_buf_free(&buf);
		return ok;
	case COPY_KEY_BYTEA:
		if (len < 2 || len % 2 != 0 || s[0] != '\\' || s[1] != 'x')
			return false;
		for (size_t i = 2; i < len && ok; i++)
			ok = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
		return ok;
	case COPY_KEY_INTERVAL:
		return copy_key_interval_valid(s, len);
	default:
		return true;
	}
}

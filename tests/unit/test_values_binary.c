/*
 * test_values_binary.c: values_convert_binary() against values_convert():
 * for each type read in binary, the bytes its send function writes for a
 * value and the text its output function writes for the same value
 * (DateStyle=ISO, TimeZone=UTC, extra_float_digits=3) must give the same
 * Value, at the edges of each type's range too (float4s whose shortest
 * decimal is not their exact value, intervals of mixed signs, IPv6
 * shortening, arrays of one to three dimensions with NULLs and lower
 * bounds, whose JSON is also checked as written); bytes a send function
 * would not write are refused, every prefix of some values too. Then copy_binary_row(), the framing of
 * COPY's binary format. Every input is a heap copy of exactly its length,
 * so ASan and valgrind catch any read past it.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_binary.h"
#include "pgmirror/values.h"

enum {
	BOOL = 16, BYTEA = 17, NAME = 19, INT8 = 20, INT2 = 21, INT4 = 23, TEXT = 25, OID = 26,
	JSON = 114, FLOAT4 = 700, FLOAT8 = 701, BPCHAR = 1042, VARCHAR = 1043, DATE = 1082,
	TIME = 1083, TIMESTAMP = 1114, TIMESTAMPTZ = 1184, INTERVAL = 1186, NUMERIC = 1700,
	UUID = 2950, JSONB = 3802, INT4ARRAY = 1007, TIMETZ = 1266, INET = 869, CIDR = 650,
	BOX = 603, CHAR = 18,
};

/* A server that writes the shortest float texts, and one that does not. */
#define V15 150000
#define V11 110000

#define NUM(p, s) ((((p) << 16) | (s)) + 4)  /* numeric(p,s)'s typmod */
#define NUM_10_2 NUM(10, 2)

static ColumnType type_of(uint32_t oid, int32_t typmod)
{
	ColumnType t;

	assert_true(values_builtin_type(oid, typmod, &t));
	return t;
}

/* The server the bytes come from (the texts of floats and intervals
 * depend on it). */
static int server_version = 170000;

/* A Value and its bytes, kept past the buffer's next use. */
typedef struct Got {
	bool ok;
	Value v;
	char bytes[256];
	char err[256];
} Got;

static Got convert(bool binary, uint32_t oid, int32_t typmod, const void *in, size_t len)
{
	ColumnType t = type_of(oid, typmod);
	char *copy = malloc(len ? len : 1);
	ValueBuf buf = { 0 };
	Got g;

	memset(&g, 0, sizeof g);
	memcpy(copy, in, len);
	g.ok = binary ? values_convert_binary(oid, t, server_version, copy, len, &buf, &g.v, g.err,
					      sizeof g.err)
		      : values_convert(t, copy, len, &buf, &g.v, g.err, sizeof g.err);
	if (g.ok && (g.v.kind == VAL_TEXT || g.v.kind == VAL_BLOB)) {
		assert_true(g.v.len < sizeof g.bytes);
		memcpy(g.bytes, g.v.p, g.v.len);
	}
	values_buf_free(&buf);
	free(copy);
	return g;
}

/* bin (len bytes) in binary and text in text give one Value. */
static void same(uint32_t oid, int32_t typmod, const void *bin, size_t len, const char *text)
{
	Got b = convert(true, oid, typmod, bin, len);
	Got t = convert(false, oid, typmod, text, strlen(text));

	if (!b.ok || !t.ok)
		fail_msg("type %u, \"%s\": binary %s (%s), text %s (%s)", oid, text,
			 b.ok ? "ok" : "failed", b.err, t.ok ? "ok" : "failed", t.err);
	assert_int_equal(b.v.kind, t.v.kind);
	switch (t.v.kind) {
	case VAL_INT:
		assert_int_equal(b.v.i, t.v.i);
		break;
	case VAL_REAL:
		/* bit for bit: -0.0 is not 0.0 here */
		if (memcmp(&b.v.r, &t.v.r, sizeof t.v.r) != 0)
			fail_msg("type %u, \"%s\": binary gave %.17g, text %.17g", oid, text,
				 b.v.r, t.v.r);
		break;
	case VAL_TEXT:
	case VAL_BLOB:
		if (b.v.len != t.v.len || memcmp(b.bytes, t.bytes, t.v.len) != 0)
			fail_msg("type %u, \"%s\": binary gave \"%.*s\"", oid, text, (int)b.v.len,
				 b.bytes);
		break;
	case VAL_NULL:
		break;
	}
}

static void refused(uint32_t oid, int32_t typmod, const void *bin, size_t len, const char *want)
{
	Got b = convert(true, oid, typmod, bin, len);

	assert_false(b.ok);
	if (strstr(b.err, want) == NULL)
		fail_msg("type %u: error \"%s\" lacks \"%s\"", oid, b.err, want);
}

static size_t be(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	return (size_t)n;
}

static void same_int(uint32_t oid, int n, uint64_t v, const char *text)
{
	unsigned char b[8];

	same(oid, -1, b, be(b, v, n), text);
}

static void same_float8(double d, const char *text)
{
	unsigned char b[8];
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	same(FLOAT8, -1, b, be(b, bits, 8), text);
}

/* numeric_send's bytes: the header words, then the base-10000 digits. */
static size_t numeric(unsigned char *b, int weight, unsigned sign, int dscale, int ndigits, ...)
{
	size_t n = 0;
	va_list ap;

	n += be(b + n, (uint64_t)ndigits, 2);
	n += be(b + n, (uint64_t)(uint16_t)weight, 2);
	n += be(b + n, sign, 2);
	n += be(b + n, (uint64_t)dscale, 2);
	va_start(ap, ndigits);
	for (int i = 0; i < ndigits; i++)
		n += be(b + n, (uint64_t)va_arg(ap, int), 2);
	va_end(ap);
	return n;
}

#define POS 0x0000
#define NEG 0x4000

/* Whether long doubles carry 61 bits or more as computed here (not where
 * long double is double, as on armhf, nor under valgrind, which computes
 * them as doubles): float8 arrays are read in binary only then. */
static bool float8_text_exact(void)
{
	volatile long double one = 1.0L, x = one + 0x1p-60L;

	return x != one;
}

static void test_supported(void **state)
{
	static const uint32_t yes[] = {
		BOOL, BYTEA, NAME, INT8, INT2, INT4, TEXT, OID, JSON, FLOAT4, FLOAT8, BPCHAR,
		VARCHAR, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL, NUMERIC, UUID, JSONB,
		TIMETZ, INET, CIDR,
		/* their arrays */
		1000, 1001, 1003, 1016, 1005, 1007, 1009, 1028, 199, 1021, 1014, 1015,
		1182, 1183, 1115, 1185, 1187, 1231, 2951, 3807, 1270, 1041, 651,
	};

	(void)state;
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!values_binary_supported(yes[i], type_of(yes[i], -1), V15))
			fail_msg("type %u is not read in binary", yes[i]);
	assert_true(values_binary_supported(1022, type_of(1022, -1), V15) == float8_text_exact());
	assert_true(values_binary_supported(NUMERIC, type_of(NUMERIC, NUM_10_2), V15));
	assert_true(values_binary_supported(1231, type_of(1231, NUM_10_2), V15));
	/* before 12, float4's text is not its shortest decimal, nor a float
	 * array element's */
	assert_false(values_binary_supported(FLOAT4, type_of(FLOAT4, -1), V11));
	assert_false(values_binary_supported(1021, type_of(1021, -1), V11));
	assert_false(values_binary_supported(1022, type_of(1022, -1), V11));
	assert_true(values_binary_supported(FLOAT8, type_of(FLOAT8, -1), V11));
	assert_true(values_binary_supported(INT4ARRAY, type_of(INT4ARRAY, -1), V11));
	/* types outside the set, and their arrays */
	assert_false(values_binary_supported(CHAR, type_of(CHAR, -1), V15));
	assert_false(values_binary_supported(1002, type_of(1002, -1), V15));
	assert_false(values_binary_supported(BOX, type_of(BOX, -1), V15));
	assert_false(values_binary_supported(1020, type_of(1020, -1), V15));
	assert_false(values_binary_supported(829, type_of(829, -1), V15));    /* macaddr */
	/* an OID that does not match its ColumnType */
	assert_false(values_binary_supported(123456, type_of(INT8, -1), V15));
	assert_false(values_binary_supported(INT8, type_of(TEXT, -1), V15));
	assert_false(values_binary_supported(INT4ARRAY, type_of(INT8, -1), V15));
	assert_false(values_binary_supported(INT8, type_of(INT4ARRAY, -1), V15));
}

static void test_integers_and_bool(void **state)
{
	(void)state;
	same(BOOL, -1, "\1", 1, "t");
	same(BOOL, -1, "\0", 1, "f");
	refused(BOOL, -1, "\2", 1, "invalid binary value for type boolean: byte 2");
	refused(BOOL, -1, "\0\0", 2, "2 bytes");
	same_int(INT2, 2, 0x8000, "-32768");
	same_int(INT2, 2, 0x7fff, "32767");
	same_int(INT4, 4, 0x80000000, "-2147483648");
	same_int(INT4, 4, 0xffffffff, "-1");
	same_int(INT8, 8, UINT64_C(0x8000000000000000), "-9223372036854775808");
	same_int(INT8, 8, UINT64_C(0x7fffffffffffffff), "9223372036854775807");
	same_int(OID, 4, 0xffffffff, "4294967295");
	refused(INT8, -1, "\0\0\0\1", 4, "4 bytes");
	refused(INT4, -1, "", 0, "0 bytes");
}

static void test_float8(void **state)
{
	(void)state;
	same_float8(0.1, "0.1");
	same_float8(-0.0, "-0");
	same_float8(1e308, "1e+308");
	same_float8(5e-324, "5e-324");
	same_float8(2.2250738585072014e-308, "2.2250738585072014e-308");
	same_float8(123456789.125, "123456789.125");
	same_float8(INFINITY, "Infinity");
	same_float8(-INFINITY, "-Infinity");
	same_float8(NAN, "NaN");
	same_float8(-NAN, "NaN");
}

static void test_numeric(void **state)
{
	unsigned char b[64];

	(void)state;
	for (int k = 0; k < 2; k++) {
		int32_t tm = k ? NUM_10_2 : -1;

		same(NUMERIC, tm, b, numeric(b, 0, POS, 0, 0), "0");
		same(NUMERIC, tm, b, numeric(b, 0, POS, 2, 0), "0.00");
		same(NUMERIC, tm, b, numeric(b, 0, POS, 2, 2, 1, 5000), "1.50");
		same(NUMERIC, tm, b, numeric(b, 0, POS, 2, 1, 3), "3.00");
		same(NUMERIC, tm, b, numeric(b, 1, NEG, 2, 3, 1234, 5678, 9100), "-12345678.91");
		same(NUMERIC, tm, b, numeric(b, -1, NEG, 2, 1, 500), "-0.05");
		same(NUMERIC, tm, b, numeric(b, 1, POS, 0, 1, 1), "10000");
		same(NUMERIC, tm, b, numeric(b, 0, 0xC000, 0, 0), "NaN");
		same(NUMERIC, tm, b, numeric(b, 0, 0xD000, 0, 0), "Infinity");
		same(NUMERIC, tm, b, numeric(b, 0, 0xF000, 0, 0), "-Infinity");
	}
	/* unconstrained: any scale, any size, digits past the scale cut */
	same(NUMERIC, -1, b, numeric(b, 1, POS, 3, 3, 1, 2345, 6780), "12345.678");
	same(NUMERIC, -1, b, numeric(b, -1, NEG, 4, 1, 1), "-0.0001");
	same(NUMERIC, -1, b, numeric(b, -2, POS, 8, 1, 1), "0.00000001");
	same(NUMERIC, -1, b, numeric(b, 5, POS, 0, 1, 1), "100000000000000000000");
	same(NUMERIC, -1, b, numeric(b, 0, POS, 1, 2, 7, 1234), "7.1");
	same(NUMERIC, -1, b, numeric(b, 4, POS, 2, 6, 12, 3456, 7890, 1234, 5678, 9012),
	     "123456789012345678.90");
	/* numeric(10,2) of a value that left its precision (a retyped column) */
	same(NUMERIC, NUM_10_2, b, numeric(b, 4, POS, 2, 6, 12, 3456, 7890, 1234, 5678, 9012),
	     "123456789012345678.90");

	/* the ends of numeric(15,s), read without text */
	same(NUMERIC, NUM(15, 0), b, numeric(b, 3, NEG, 0, 4, 999, 9999, 9999, 9999),
	     "-999999999999999");
	same(NUMERIC, NUM(15, 15), b, numeric(b, -1, POS, 15, 4, 1234, 5678, 9012, 3450),
	     "0.123456789012345");
	same(NUMERIC, NUM(15, 15), b, numeric(b, -4, POS, 15, 1, 10), "0.000000000000001");
	same(NUMERIC, NUM(12, 4), b, numeric(b, 1, NEG, 4, 3, 1234, 5678, 1234),
	     "-12345678.1234");
	same(NUMERIC, NUM(15, 2), b, numeric(b, 3, POS, 2, 5, 1, 2345, 6789, 123, 4500),
	     "1234567890123.45");
	same(NUMERIC, NUM(15, 7), b, numeric(b, 0, POS, 7, 3, 9, 9999, 9990), "9.9999999");
	refused(NUMERIC, NUM_10_2, b, numeric(b, 0, POS, 0, 1, 10000), "digit 10000");
	refused(NUMERIC, -1, b, numeric(b, 0, POS, 0, 1, 10000), "digit 10000");
	refused(NUMERIC, -1, b, numeric(b, 0, 0x1234, 0, 0), "sign 0x1234");
	refused(NUMERIC, -1, b, numeric(b, 0, POS, 0x4000, 0), "scale 0x4000");
	refused(NUMERIC, -1, b, numeric(b, 0, POS, 0, 2, 1, 2) - 2, "10 bytes");
	refused(NUMERIC, -1, b, 7, "7 bytes");
}

/*
 * The widest numerics PostgreSQL holds: 131,072 digits before the point
 * (weight 32767) and 16,383 after, 36,864 base-10000 digits: numeric_send's
 * digit count and scale are unsigned 16-bit words, past int16's 32,767.
 * first, last: the first and last base-10000 digits (the others 9999);
 * the text must start with want_head, end with want_tail and hold 9s
 * between.
 */
static void numeric_at_limit(int ndigits, int dscale, unsigned first, unsigned last,
			     const char *want_head, const char *want_tail, size_t want_len)
{
	size_t len = 8 + 2 * (size_t)ndigits;
	unsigned char *b = calloc(len, 1);
	ValueBuf buf = { 0 };
	char err[256] = "";
	Value v;

	be(b, (uint64_t)ndigits, 2);
	be(b + 2, 32767, 2);
	be(b + 4, POS, 2);
	be(b + 6, (uint64_t)dscale, 2);
	for (int d = 0; d < ndigits; d++)
		be(b + 8 + 2 * d, d == 0 ? first : d == ndigits - 1 ? last : 9999, 2);
	if (!values_convert_binary(NUMERIC, type_of(NUMERIC, -1), server_version, (const char *)b, len, &buf,
				   &v, err, sizeof err))
		fail_msg("%d digits, scale %d: %s", ndigits, dscale, err);
	assert_int_equal(v.kind, VAL_TEXT);
	assert_int_equal(v.len, want_len);
	assert_memory_equal(v.p, want_head, strlen(want_head));
	assert_memory_equal((const char *)v.p + v.len - strlen(want_tail), want_tail,
			    strlen(want_tail));
	for (size_t i = strlen(want_head); i < v.len - strlen(want_tail); i++)
		if (((const char *)v.p)[i] != '9' && ((const char *)v.p)[i] != '.')
			fail_msg("%d digits: byte %zu is '%c'", ndigits, i, ((const char *)v.p)[i]);
	values_buf_free(&buf);
	free(b);
}

static void test_numeric_limits(void **state)
{
	(void)state;
	/* 9e131071 + 1: 32,768 digits, 65,544 bytes */
	numeric_at_limit(32768, 0, 9000, 1, "9000", "0001", 131072);
	/* every digit PostgreSQL allows, both sides */
	numeric_at_limit(36864, 16383, 9999, 9990, "9999", "999", 131072 + 1 + 16383);
}

static void test_text_types(void **state)
{
	static const unsigned char jsonb[] = "\1{\"a\": [1, 2]}";
	static const unsigned char uuid[16] = { 0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
						0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11 };

	(void)state;
	same(TEXT, -1, "h\xc3\xa9llo\n", 7, "h\xc3\xa9llo\n");
	same(VARCHAR, -1, "", 0, "");
	same(BPCHAR, -1, "ab  ", 4, "ab  ");
	same(NAME, -1, "pg_class", 8, "pg_class");
	refused(TEXT, -1, "\xff", 1, "UTF-8");
	same(JSON, -1, "{\"a\":1}", 7, "{\"a\":1}");
	same(JSONB, -1, jsonb, sizeof jsonb - 1, "{\"a\": [1, 2]}");
	refused(JSONB, -1, "\2{}", 3, "version 2");
	refused(JSONB, -1, "", 0, "version -1");
	same(UUID, -1, uuid, sizeof uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
	refused(UUID, -1, uuid, 15, "15 bytes");
	same(BYTEA, -1, "\0\1\xff", 3, "\\x0001ff");
	same(BYTEA, -1, "", 0, "\\x");
}

#define DAY_USECS (INT64_C(86400) * 1000000)

static void same_date(int32_t days, const char *text)
{
	unsigned char b[4];

	same(DATE, -1, b, be(b, (uint32_t)days, 4), text);
}

static void same_stamp(int64_t usecs, const char *text)
{
	unsigned char b[8];
	char tz[64];

	be(b, (uint64_t)usecs, 8);
	same(TIMESTAMP, -1, b, 8, text);
	/* timestamptz's text in UTC: the same with its offset, before the era */
	if (strcmp(text + strlen(text) - 3, " BC") == 0)
		snprintf(tz, sizeof tz, "%.*s+00 BC", (int)strlen(text) - 3, text);
	else if (strstr(text, "infinity") != NULL)
		snprintf(tz, sizeof tz, "%s", text);
	else
		snprintf(tz, sizeof tz, "%s+00", text);
	same(TIMESTAMPTZ, -1, b, 8, tz);
}

static void test_dates_and_times(void **state)
{
	unsigned char b[8];

	(void)state;
	same_date(0, "2000-01-01");
	same_date(-1, "1999-12-31");
	same_date(59, "2000-02-29");
	same_date(-730119, "0001-01-01");
	same_date(-730120, "0001-12-31 BC");
	same_date(-2451545, "4714-11-24 BC");       /* the first day */
	same_date(2145031948, "5874897-12-31");     /* the last */
	same_date(INT32_MAX, "infinity");
	same_date(INT32_MIN, "-infinity");
	refused(DATE, -1, b, be(b, (uint32_t)2145031949, 4), "date out of range");
	refused(DATE, -1, b, be(b, (uint32_t)-2451546, 4), "date out of range");

	same_stamp(0, "2000-01-01 00:00:00");
	same_stamp(-1, "1999-12-31 23:59:59.999999");
	same_stamp(1500000, "2000-01-01 00:00:01.5");
	same_stamp(INT64_C(1000), "2000-01-01 00:00:00.001");
	same_stamp(INT64_C(847080933123456), "2026-11-04 04:15:33.123456");
	same_stamp(-730120 * DAY_USECS + 86399 * INT64_C(1000000), "0001-12-31 23:59:59 BC");
	same_stamp(INT64_C(-211813488000000000), "4714-11-24 00:00:00 BC");
	same_stamp(INT64_C(9223371331200000000) - 1, "294276-12-31 23:59:59.999999");
	same_stamp(INT64_MAX, "infinity");
	same_stamp(INT64_MIN, "-infinity");
	refused(TIMESTAMP, -1, b, be(b, UINT64_C(9223371331200000000), 8), "out of range");
	refused(TIMESTAMPTZ, -1, b, be(b, (uint64_t)INT64_C(-211813488000000001), 8),
		"out of range");
	refused(TIMESTAMP, -1, b, 4, "4 bytes");
}

/* --- float4, and floats in arrays ------------------------------------------ */

static void same_float4(uint32_t bits, const char *text)
{
	unsigned char b[4];

	same(FLOAT4, -1, b, be(b, bits, 4), text);
}

static uint32_t f4bits(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof bits);
	return bits;
}

static void test_float4(void **state)
{
	unsigned char b[4];
	Got g;

	(void)state;
	/* float4out's shortest decimal, stored as the double nearest it: for
	 * 0.1 that is 0.1, not (double)0.1f */
	same_float4(f4bits(0.1f), "0.1");
	g = convert(true, FLOAT4, -1, b, be(b, f4bits(0.1f), 4));
	assert_true(g.ok && g.v.kind == VAL_REAL && g.v.r == 0.1);
	same_float4(1, "1e-45");                        /* the least subnormal */
	same_float4(0x007fffff, "1.1754942e-38");        /* the greatest */
	same_float4(0x00800000, "1.1754944e-38");        /* the least normal */
	same_float4(0x7f7fffff, "3.4028235e+38");        /* the greatest */
	same_float4(0x80000000, "-0");
	same_float4(0, "0");
	same_float4(0x7fc00000, "NaN");
	same_float4(0x7f800000, "Infinity");
	same_float4(0xff800000, "-Infinity");
	same_float4(f4bits(1.0f), "1");
	same_float4(f4bits(-2.5f), "-2.5");
	same_float4(f4bits(100000.0f), "100000");
	same_float4(f4bits(1e6f), "1e+06");
	same_float4(f4bits(0.0001f), "0.0001");
	same_float4(f4bits(1.5e-5f), "1.5e-05");
	same_float4(f4bits(3.14159274f), "3.1415927");
	same_float4(f4bits(16777216.0f), "1.6777216e+07");
	/* a shorter decimal lies on the rounding interval's end: Ryu as
	 * PostgreSQL builds it does not take it */
	same_float4(0x4ce09c58, "1.17760704e+08");
	refused(FLOAT4, -1, b, 3, "3 bytes");
	/* not from a server that writes 9 digits */
	server_version = V11;
	refused(FLOAT4, -1, b, be(b, f4bits(0.1f), 4), "not read in binary");
	server_version = 170000;
}

/* array_send's bytes: ndim dimensions of lengths dims (lower bounds lbs,
 * or all 1), then the elements, each a length (-1: NULL) and bytes. */
typedef struct Arr {
	unsigned char b[1024];
	size_t n;
} Arr;

static void arr_start(Arr *a, uint32_t elem, int ndim, const int *dims, const int *lbs,
		      bool hasnull)
{
	a->n = 0;
	a->n += be(a->b + a->n, (uint64_t)ndim, 4);
	a->n += be(a->b + a->n, hasnull, 4);
	a->n += be(a->b + a->n, elem, 4);
	for (int d = 0; d < ndim; d++) {
		a->n += be(a->b + a->n, (uint64_t)(uint32_t)dims[d], 4);
		a->n += be(a->b + a->n, (uint64_t)(uint32_t)(lbs ? lbs[d] : 1), 4);
	}
}

static void arr_elem(Arr *a, const void *p, int len)
{
	a->n += be(a->b + a->n, (uint64_t)(uint32_t)len, 4);
	if (len > 0) {
		memcpy(a->b + a->n, p, (size_t)len);
		a->n += (size_t)len;
	}
}

static void arr_int4(Arr *a, int32_t v)
{
	unsigned char b[4];

	arr_elem(a, b, (int)be(b, (uint32_t)v, 4));
}

static void arr_bits(Arr *a, uint64_t bits, int n)
{
	unsigned char b[8];

	arr_elem(a, b, (int)be(b, bits, n));
}

static void arr_text(Arr *a, const char *s)
{
	arr_elem(a, s, (int)strlen(s));
}

/* Every prefix of a value's bytes is refused, cleanly (ASan watches the
 * reads: each is a heap copy of exactly its length). */
static void every_prefix_refused(uint32_t oid, const void *bin, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		Got g = convert(true, oid, -1, bin, k);

		if (g.ok)
			fail_msg("type %u: the first %zu of %zu bytes were read", oid, k, len);
		assert_true(g.err[0] != '\0');
	}
}

/* The array in binary and array_out's text give the same JSON. */
static void same_array(uint32_t oid, const Arr *a, const char *text, const char *json)
{
	Got g;

	same(oid, -1, a->b, a->n, text);
	g = convert(true, oid, -1, a->b, a->n);
	assert_true(g.ok);
	if (g.v.len != strlen(json) || memcmp(g.bytes, json, g.v.len) != 0)
		fail_msg("array %u: \"%.*s\", not \"%s\"", oid, (int)g.v.len, g.bytes, json);
}

static void test_arrays(void **state)
{
	static const int two[] = { 2 }, two_by_two[] = { 2, 2 }, cube[] = { 2, 1, 2 };
	static const int three[] = { 3 }, zero_lb[] = { 0 }, neg_lbs[] = { -3, 5 };
	uint64_t bits;
	double d;
	Arr a;

	(void)state;
	arr_start(&a, INT4, 1, three, NULL, true);
	arr_int4(&a, 1);
	arr_elem(&a, NULL, -1);
	arr_int4(&a, -2147483647 - 1);
	same_array(INT4ARRAY, &a, "{1,NULL,-2147483648}", "[1,null,-2147483648]");

	arr_start(&a, INT4, 0, NULL, NULL, false);
	same_array(INT4ARRAY, &a, "{}", "[]");

	arr_start(&a, INT4, 2, two_by_two, NULL, false);
	for (int i = 1; i <= 4; i++)
		arr_int4(&a, i);
	same_array(INT4ARRAY, &a, "{{1,2},{3,4}}", "[[1,2],[3,4]]");

	/* lower bounds are not in the JSON */
	arr_start(&a, INT4, 2, two_by_two, neg_lbs, false);
	for (int i = 1; i <= 4; i++)
		arr_int4(&a, i);
	same_array(INT4ARRAY, &a, "[-3:-2][5:6]={{1,2},{3,4}}", "[[1,2],[3,4]]");

	arr_start(&a, TEXT, 3, cube, NULL, true);
	arr_text(&a, "a \"q\" \\");
	arr_elem(&a, NULL, -1);
	arr_text(&a, "");
	arr_text(&a, "NULL");
	every_prefix_refused(1009, a.b, a.n);
	same_array(1009, &a, "{{{\"a \\\"q\\\" \\\\\",NULL}},{{\"\",\"NULL\"}}}",
		   "[[[\"a \\\"q\\\" \\\\\",null]],[[\"\",\"NULL\"]]]");

	/* floats: the decimal as float4out and float8out write it */
	arr_start(&a, FLOAT4, 1, three, zero_lb, false);
	arr_bits(&a, f4bits(0.1f), 4);
	arr_bits(&a, 0x7fc00000, 4);
	arr_bits(&a, 0x80000000, 4);
	same_array(1021, &a, "[0:2]={0.1,NaN,-0}", "[0.1,\"NaN\",-0]");
	arr_start(&a, FLOAT4, 1, three, NULL, false);
	arr_bits(&a, 1, 4);
	arr_bits(&a, 0x7f7fffff, 4);
	arr_bits(&a, 0xff800000, 4);
	same_array(1021, &a, "{1e-45,3.4028235e+38,-Infinity}",
		   "[1e-45,3.4028235e+38,\"-Infinity\"]");
	if (float8_text_exact()) {
		arr_start(&a, FLOAT8, 1, three, NULL, false);
		d = 0.1;
		memcpy(&bits, &d, 8);
		arr_bits(&a, bits, 8);
		arr_bits(&a, 1, 8);
		arr_bits(&a, UINT64_C(0x435b702ab297ac10), 8);
		same_array(1022, &a, "{0.1,5e-324,3.0892612233637952e+16}",
			   "[0.1,5e-324,3.0892612233637952e+16]");
		arr_start(&a, FLOAT8, 1, two, NULL, false);
		d = 1e100;
		memcpy(&bits, &d, 8);
		arr_bits(&a, bits, 8);
		d = 123456789012345.6;
		memcpy(&bits, &d, 8);
		arr_bits(&a, bits, 8);
		same_array(1022, &a, "{1e+100,123456789012345.6}", "[1e+100,123456789012345.6]");
	}

	/* timestamps in their stored form, bool, bytea, jsonb, uuid */
	arr_start(&a, TIMESTAMPTZ, 1, three, NULL, false);
	arr_bits(&a, 1500000, 8);
	arr_bits(&a, (uint64_t)INT64_MAX, 8);
	arr_bits(&a, (uint64_t)INT64_C(-211813488000000000), 8);
	every_prefix_refused(1185, a.b, a.n);
	same_array(1185, &a,
		   "{\"2000-01-01 00:00:01.5+00\",infinity,\"4714-11-24 00:00:00+00 BC\"}",
		   "[\"2000-01-01 00:00:01.500000\",\"infinity\",\"4714-11-24 00:00:00 BC\"]");
	arr_start(&a, TIMESTAMP, 1, two, NULL, false);
	arr_bits(&a, 0, 8);
	arr_bits(&a, (uint64_t)INT64_MIN, 8);
	same_array(1115, &a, "{\"2000-01-01 00:00:00\",-infinity}",
		   "[\"2000-01-01 00:00:00\",\"-infinity\"]");
	arr_start(&a, BOOL, 1, two, NULL, false);
	arr_bits(&a, 1, 1);
	arr_bits(&a, 0, 1);
	same_array(1000, &a, "{t,f}", "[true,false]");
	arr_start(&a, BYTEA, 1, two, NULL, false);
	arr_elem(&a, "\x00\xff", 2);
	arr_elem(&a, "", 0);
	same_array(1001, &a, "{\"\\\\x00ff\",\"\\\\x\"}", "[\"\\\\x00ff\",\"\\\\x\"]");
	arr_start(&a, JSONB, 1, two, NULL, false);
	arr_elem(&a, "\001{\"a\": [1, 2]}", 14);
	arr_elem(&a, "\001null", 5);
	same_array(3807, &a, "{\"{\\\"a\\\": [1, 2]}\",null}", "[{\"a\": [1, 2]},null]");
	arr_start(&a, UUID, 1, two, NULL, false);
	arr_elem(&a, "\xa0\xee\xbc\x99\x9c\x0b\x4e\xf8\xbb\x6d\x6b\xb9\xbd\x38\x0a\x11", 16);
	arr_elem(&a, NULL, -1);
	same_array(2951, &a, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}",
		   "[\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\",null]");

	/* bytes array_send would not write */
	arr_start(&a, INT4, 1, two, NULL, false);
	arr_int4(&a, 1);
	refused(INT4ARRAY, -1, a.b, a.n, "array");           /* one element short */
	arr_int4(&a, 2);
	arr_int4(&a, 3);
	refused(INT4ARRAY, -1, a.b, a.n, "after the last");
	arr_start(&a, INT8, 1, two, NULL, false);
	refused(INT4ARRAY, -1, a.b, a.n, "element type 20");
	arr_start(&a, INT4, 7, (const int[]){ 1, 1, 1, 1, 1, 1, 1 }, NULL, false);
	refused(INT4ARRAY, -1, a.b, a.n, "7 dimensions");
	arr_start(&a, INT4, 1, (const int[]){ 0 }, NULL, false);
	refused(INT4ARRAY, -1, a.b, a.n, "invalid dimension");
	arr_start(&a, INT4, 1, (const int[]){ 1000000 }, NULL, false);
	refused(INT4ARRAY, -1, a.b, a.n, "array");
	arr_start(&a, INT4, 1, two, NULL, false);
	arr_bits(&a, 1, 2);                                   /* an int4 of 2 bytes */
	arr_int4(&a, 1);
	refused(INT4ARRAY, -1, a.b, a.n, "2 bytes");
	refused(INT4ARRAY, -1, a.b, 8, "8 bytes");
}

/* --- time, timetz, interval -------------------------------------------------- */

#define HOUR_USECS (INT64_C(3600) * 1000000)

static void same_time(int64_t usecs, const char *text)
{
	unsigned char b[8];

	same(TIME, -1, b, be(b, (uint64_t)usecs, 8), text);
}

static void same_timetz(int64_t usecs, int32_t zone, const char *text)
{
	unsigned char b[12];

	be(b, (uint64_t)usecs, 8);
	be(b + 8, (uint32_t)zone, 4);
	same(TIMETZ, -1, b, 12, text);
}

static void same_interval(int64_t usecs, int32_t days, int32_t months, const char *text)
{
	unsigned char b[16];

	be(b, (uint64_t)usecs, 8);
	be(b + 8, (uint32_t)days, 4);
	be(b + 12, (uint32_t)months, 4);
	same(INTERVAL, -1, b, 16, text);
}

static void test_time_interval(void **state)
{
	unsigned char b[16];

	(void)state;
	same_time(0, "00:00:00");
	same_time(1, "00:00:00.000001");
	same_time(45296789000, "12:34:56.789");
	same_time(DAY_USECS - 1, "23:59:59.999999");
	same_time(DAY_USECS, "24:00:00");
	refused(TIME, -1, b, be(b, (uint64_t)(DAY_USECS + 1), 8), "out of range");
	refused(TIME, -1, b, be(b, UINT64_MAX, 8), "out of range");
	refused(TIME, -1, b, 4, "4 bytes");

	/* the zone counts seconds west; the text shows the offset east */
	same_timetz(12 * HOUR_USECS, 0, "12:00:00+00");
	same_timetz(12 * HOUR_USECS, -19800, "12:00:00+05:30");
	same_timetz(12 * HOUR_USECS + 500000, 8 * 3600, "12:00:00.5-08");
	same_timetz(0, -14 * 3600, "00:00:00+14");
	same_timetz(DAY_USECS, 2079, "24:00:00-00:34:39");
	same_timetz(1, -(16 * 3600 - 1), "00:00:00.000001+15:59:59");
	same_timetz(1, 16 * 3600 - 60, "00:00:00.000001-15:59");
	be(b, 0, 8);
	be(b + 8, 16 * 3600, 4);
	refused(TIMETZ, -1, b, 12, "displacement out of range");
	refused(TIMETZ, -1, b, 8, "8 bytes");

	same_interval(0, 0, 0, "00:00:00");
	same_interval(0, 0, 1, "1 mon");
	same_interval(0, 0, 12, "1 year");
	same_interval(0, 0, 14, "1 year 2 mons");
	same_interval(0, 0, -14, "-1 years -2 mons");
	same_interval(0, 0, -1, "-1 mons");
	same_interval(0, 1, 0, "1 day");
	same_interval(0, -1, 0, "-1 days");
	same_interval(3723000001, 0, 0, "01:02:03.000001");
	same_interval(-3723000001, 3, -14, "-1 years -2 mons +3 days -01:02:03.000001");
	same_interval(HOUR_USECS, -1, 0, "-1 days +01:00:00");
	same_interval(-HOUR_USECS, 1, 0, "1 day -01:00:00");
	same_interval(HOUR_USECS, 1, -1, "-1 mons +1 day 01:00:00");
	same_interval(500000, 0, 25, "2 years 1 mon 00:00:00.5");
	same_interval(100 * HOUR_USECS, 0, 0, "100:00:00");
	same_interval(INT64_MIN + 1, INT32_MIN, INT32_MIN + 1,
		      "-178956970 years -7 mons -2147483648 days -2562047788:00:54.775807");
	same_interval(INT64_MAX - 1, INT32_MAX, INT32_MAX,
		      "178956970 years 7 mons 2147483647 days 2562047788:00:54.775806");
	/* PostgreSQL 17's infinite intervals, ordinary ones before */
	same_interval(INT64_MAX, INT32_MAX, INT32_MAX, "infinity");
	same_interval(INT64_MIN, INT32_MIN, INT32_MIN, "-infinity");
	server_version = V15;
	same_interval(INT64_MAX, INT32_MAX, INT32_MAX,
		      "178956970 years 7 mons 2147483647 days 2562047788:00:54.775807");
	same_interval(INT64_MIN, INT32_MIN, INT32_MIN,
		      "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808");
	server_version = 170000;
	refused(INTERVAL, -1, b, 12, "12 bytes");
}

/* --- inet, cidr ------------------------------------------------------------- */

static void same_inet(uint32_t oid, int family, int bits, const char *addr, const char *text)
{
	unsigned char b[20];
	int n = family == 2 ? 4 : 16;

	b[0] = (unsigned char)family;
	b[1] = (unsigned char)bits;
	b[2] = oid == CIDR;
	b[3] = (unsigned char)n;
	memcpy(b + 4, addr, (size_t)n);
	same(oid, -1, b, 4 + (size_t)n, text);
}

#define V6(...) ((const char[16]){ __VA_ARGS__ })

static void test_inet(void **state)
{
	unsigned char b[20];

	(void)state;
	same_inet(INET, 2, 32, "\xc0\xa8\x00\x01", "192.168.0.1");
	same_inet(INET, 2, 24, "\xc0\xa8\x00\x01", "192.168.0.1/24");
	same_inet(INET, 2, 0, "\0\0\0\0", "0.0.0.0/0");
	same_inet(CIDR, 2, 8, "\x0a\0\0\0", "10.0.0.0/8");
	same_inet(CIDR, 2, 32, "\x0a\x01\x02\x03", "10.1.2.3/32");
	same_inet(INET, 3, 128, V6(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), "::1");
	same_inet(INET, 3, 128, V6(0), "::");
	same_inet(CIDR, 3, 0, V6(0), "::/0");
	same_inet(CIDR, 3, 32, V6(0x20, 0x01, 0x0d, 0xb8), "2001:db8::/32");
	same_inet(INET, 3, 64, V6(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1),
		  "2001:db8::1/64");
	same_inet(CIDR, 3, 128, V6(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0xab, 0xcd),
		  "fe80::1234:0:0:abcd/128");
	/* the first of two equal runs; a run of one is not shortened */
	same_inet(INET, 3, 128, V6(0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0),
		  "1::2:0:0:3:0");
	same_inet(INET, 3, 128, V6(0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0),
		  "1:0:2:0:3:0:4:0");
	same_inet(INET, 3, 128, V6(0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3),
		  "1:0:0:2::3");
	same_inet(INET, 3, 128, V6(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
		  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	/* IPv4 inside: after ::ffff:, and after six zero words */
	same_inet(INET, 3, 128, V6(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4),
		  "::ffff:1.2.3.4");
	same_inet(INET, 3, 128, V6(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4), "::1.2.3.4");
	same_inet(INET, 3, 120, V6(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0),
		  "::1.2.0.0/120");
	same_inet(INET, 3, 128, V6(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 1, 2, 3, 4),
		  "::fffe:102:304");
	same_inet(INET, 3, 128, V6(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2), "::2");
	same_inet(INET, 3, 128, V6(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), "1::");

	memcpy(b, "\x03\x40\x00\x10\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 20);
	every_prefix_refused(INET, b, 20);
	memcpy(b, "\x02\x08\x01\x04\x0a\x00\x00\x01", 8);
	refused(CIDR, -1, b, 8, "bits set right of the 8-bit mask");
	memcpy(b, "\x02\x21\x00\x04\x0a\x00\x00\x01", 8);
	refused(INET, -1, b, 8, "33 bits");
	memcpy(b, "\x02\x20\x01\x04\x0a\x00\x00\x01", 8);
	refused(INET, -1, b, 8, "cidr flag 1");
	memcpy(b, "\x0a\x20\x00\x04\x0a\x00\x00\x01", 8);
	refused(INET, -1, b, 8, "address family 10");
	memcpy(b, "\x03\x20\x00\x04\x0a\x00\x00\x01", 8);
	refused(INET, -1, b, 8, "8 bytes");
}

/* --- copy_binary_row() ---------------------------------------------------- */

static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";

typedef struct Msg {
	unsigned char b[256];
	size_t n;
} Msg;

static void put(Msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put_field(Msg *m, const char *s)
{
	m->n += be(m->b + m->n, s ? strlen(s) : UINT64_C(0xffffffff), 4);
	if (s)
		put(m, s, strlen(s));
}

static int row(CopyBinary *st, const Msg *m, PgoValue *vals, int ncols, char *err)
{
	char *copy = malloc(m->n ? m->n : 1);
	int r;

	memcpy(copy, m->b, m->n);
	r = copy_binary_row(st, copy, m->n, vals, ncols, err, 256);
	free(copy);
	return r;
}

static void test_binary_rows(void **state)
{
	CopyBinary st;
	PgoValue vals[3];
	char err[256];
	Msg m = { .n = 0 };

	(void)state;
	copy_binary_start(&st);
	put(&m, header, sizeof header);
	m.n += be(m.b + m.n, 2, 2);
	put_field(&m, "ab");
	put_field(&m, NULL);
	assert_int_equal(row(&st, &m, vals, 2, err), 1);
	assert_int_equal(vals[0].kind, PGO_COL_BINARY);
	assert_int_equal(vals[0].len, 2);
	assert_int_equal(vals[1].kind, PGO_COL_NULL);

	/* later rows have no header */
	m.n = 0;
	m.n += be(m.b + m.n, 2, 2);
	put_field(&m, "");
	put_field(&m, "xyz");
	assert_int_equal(row(&st, &m, vals, 2, err), 1);
	assert_int_equal(vals[0].len, 0);
	assert_int_equal(vals[1].len, 3);

	/* a wrong count, a field past the end, bytes after the row */
	assert_int_equal(row(&st, &m, vals, 3, err), -1);
	assert_string_equal(err, "binary COPY row of 2 fields, not 3");
	m.n--;
	assert_int_equal(row(&st, &m, vals, 2, err), -1);
	assert_string_equal(err, "binary COPY field past the end of its row at byte 6");
	m.n += 2;
	assert_int_equal(row(&st, &m, vals, 2, err), -1);
	assert_string_equal(err, "bytes after the binary COPY row at byte 13");

	/* the trailer, then nothing */
	m.n = 0;
	m.n += be(m.b, 0xffff, 2);
	assert_int_equal(row(&st, &m, vals, 2, err), 0);
	assert_int_equal(row(&st, &m, vals, 2, err), -1);
	assert_string_equal(err, "data after the end of the binary COPY at byte 0");

	/* an empty table: header and trailer in one message */
	copy_binary_start(&st);
	m.n = 0;
	put(&m, header, sizeof header);
	m.n += be(m.b + m.n, 0xffff, 2);
	assert_int_equal(row(&st, &m, vals, 2, err), 0);

	/* a header alone, with an extension skipped */
	copy_binary_start(&st);
	m.n = 0;
	put(&m, header, 15);
	m.n += be(m.b + m.n, 3, 4);
	put(&m, "ext", 3);
	assert_int_equal(row(&st, &m, vals, 2, err), 0);

	/* not the format */
	copy_binary_start(&st);
	m.n = 0;
	put(&m, "1\tab\n", 5);
	assert_int_equal(row(&st, &m, vals, 2, err), -1);
	assert_string_equal(err, "no binary COPY signature at byte 0");
	m.n = 0;
	put(&m, header, sizeof header);
	m.b[14] = 1; /* flags: has OIDs */
	assert_int_equal(row(&st, &m, vals, 2, err), -1);
	assert_string_equal(err, "unknown binary COPY flags at byte 11");
	m.b[14] = 0;
	m.b[18] = 9; /* an extension longer than the message */
	assert_int_equal(row(&st, &m, vals, 2, err), -1);
	assert_string_equal(err, "binary COPY header extension past the end at byte 15");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_integers_and_bool),
		cmocka_unit_test(test_float8),
		cmocka_unit_test(test_numeric),
		cmocka_unit_test(test_numeric_limits),
		cmocka_unit_test(test_text_types),
		cmocka_unit_test(test_dates_and_times),
		cmocka_unit_test(test_float4),
		cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_time_interval),
		cmocka_unit_test(test_inet),
		cmocka_unit_test(test_binary_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_values_binary.c: values_convert_binary() against values_convert():
 * for each type read in binary, the bytes its send function writes for a
 * value and the text its output function writes for the same value
 * (DateStyle=ISO, TimeZone=UTC, extra_float_digits=3) must give the same
 * Value, at the edges of each type's range too; bytes a send function
 * would not write are refused. Then copy_binary_row(), the framing of
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
	UUID = 2950, JSONB = 3802, INT4ARRAY = 1007,
};

#define NUM(p, s) ((((p) << 16) | (s)) + 4)  /* numeric(p,s)'s typmod */
#define NUM_10_2 NUM(10, 2)

static ColumnType type_of(uint32_t oid, int32_t typmod)
{
	ColumnType t;

	assert_true(values_builtin_type(oid, typmod, &t));
	return t;
}

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
	g.ok = binary ? values_convert_binary(oid, t, copy, len, &buf, &g.v, g.err, sizeof g.err)
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

static void test_supported(void **state)
{
	(void)state;
	assert_true(values_binary_supported(INT8, type_of(INT8, -1)));
	assert_true(values_binary_supported(NUMERIC, type_of(NUMERIC, NUM_10_2)));
	assert_true(values_binary_supported(NUMERIC, type_of(NUMERIC, -1)));
	assert_true(values_binary_supported(TIMESTAMPTZ, type_of(TIMESTAMPTZ, -1)));
	assert_true(values_binary_supported(JSONB, type_of(JSONB, -1)));
	/* text output that binary does not say, or not plainly */
	assert_false(values_binary_supported(FLOAT4, type_of(FLOAT4, -1)));
	assert_false(values_binary_supported(TIME, type_of(TIME, -1)));
	assert_false(values_binary_supported(INTERVAL, type_of(INTERVAL, -1)));
	assert_false(values_binary_supported(INT4ARRAY, type_of(INT4ARRAY, -1)));
	/* a type whose ColumnType is not the one it would have (a domain's
	 * OID, say, mirrored as its base type) */
	assert_false(values_binary_supported(123456, type_of(INT8, -1)));
	assert_false(values_binary_supported(INT8, type_of(TEXT, -1)));
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
		cmocka_unit_test(test_text_types),
		cmocka_unit_test(test_dates_and_times),
		cmocka_unit_test(test_binary_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

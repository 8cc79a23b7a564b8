/*
 * test_values.c: src/values/values.c against the contract's Values table: type
 * mapping, every conversion with its edge values, the exact error text for
 * malformed input, and round trips checked against independent references
 * (libc's gmtime for time zones, SQLite's JSON functions for arrays).
 *
 * Every input is converted from a heap copy of exactly its length, so ASan
 * and valgrind catch any read past len.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "pgmirror/values.h"

static const ColumnType T_TEXT = { VT_TEXT, VT_TEXT, ',' };
static const ColumnType T_BOOL = { VT_BOOL, VT_TEXT, ',' };
static const ColumnType T_INT = { VT_INT, VT_TEXT, ',' };
static const ColumnType T_FLOAT = { VT_FLOAT, VT_TEXT, ',' };
static const ColumnType T_NUM = { VT_NUMERIC_NUM, VT_TEXT, ',' };
static const ColumnType T_NUMTEXT = { VT_NUMERIC_TEXT, VT_TEXT, ',' };
static const ColumnType T_BYTEA = { VT_BYTEA, VT_TEXT, ',' };
static const ColumnType T_DATE = { VT_DATE, VT_TEXT, ',' };
static const ColumnType T_TS = { VT_TIMESTAMP, VT_TEXT, ',' };
static const ColumnType T_TSTZ = { VT_TIMESTAMPTZ, VT_TEXT, ',' };
static const ColumnType T_JSON = { VT_JSON, VT_TEXT, ',' };

static ColumnType array_delim(ValueType elem, char delim)
{
	ColumnType t = { VT_ARRAY, elem, delim };

	return t;
}

static ColumnType array_of(ValueType elem)
{
	return array_delim(elem, ',');
}

/* numeric(p,s) as PostgreSQL encodes it in atttypmod. */
static int32_t numeric_typmod(int p, int s)
{
	return ((p << 16) | (s & 0x7ff)) + 4;
}

/* The buffer every helper converts into; freed after each test. */
static ValueBuf vb;
static char errbuf[256];

static int teardown(void **state)
{
	(void) state;
	values_buf_free(&vb);
	return 0;
}

/* Deterministic random numbers (xorshift64*), so a failure repeats. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static uint64_t rng_below(uint64_t n)
{
	return rng() % n;
}

/* Converts s[0..n) from a heap block of exactly n bytes. The caller frees
 * *copy once done with out (out may point into it). */
static bool convert_copy(ColumnType t, const char *s, size_t n, Value *out,
			 char **copy)
{
	*copy = malloc(n > 0 ? n : 1);
	assert_non_null(*copy);
	memcpy(*copy, s, n);
	errbuf[0] = '\0';
	return values_convert(t, n > 0 ? *copy : *copy, n, &vb, out, errbuf,
			      sizeof errbuf);
}

/* The result lies in the input or in the buffer, never elsewhere. */
static void assert_result_placed(const Value *v, const char *in, size_t n)
{
	if (v->kind != VAL_TEXT && v->kind != VAL_BLOB)
		return;
	assert_non_null(v->p);
	if (v->len == 0)
		return;
	if (v->p >= in && v->p + v->len <= in + n)
		return;
	assert_true(vb.data != NULL && v->p >= vb.data &&
		    v->p + v->len <= vb.data + vb.len);
}

static void check_kind_bytes(ColumnType t, const char *in, size_t n,
			     ValueKind kind, const char *want, size_t wn)
{
	Value v;
	char *copy;

	if (!convert_copy(t, in, n, &v, &copy))
		fail_msg("\"%.*s\": unexpected error: %s", (int) n, in, errbuf);
	assert_int_equal(v.kind, kind);
	assert_result_placed(&v, copy, n);
	if (v.len != wn || memcmp(v.p, want, wn) != 0)
		fail_msg("\"%.*s\": got \"%.*s\", want \"%.*s\"", (int) n, in,
			 (int) v.len, v.p, (int) wn, want);
	free(copy);
}

static void check_text(ColumnType t, const char *in, const char *want)
{
	check_kind_bytes(t, in, strlen(in), VAL_TEXT, want, strlen(want));
}

static void check_blob(const char *in, const char *want, size_t wn)
{
	check_kind_bytes(T_BYTEA, in, strlen(in), VAL_BLOB, want, wn);
}

static void check_int(ColumnType t, const char *in, int64_t want)
{
	Value v;
	char *copy;

	if (!convert_copy(t, in, strlen(in), &v, &copy))
		fail_msg("\"%s\": unexpected error: %s", in, errbuf);
	assert_int_equal(v.kind, VAL_INT);
	if (v.i != want)
		fail_msg("\"%s\": got %" PRId64 ", want %" PRId64, in, v.i, want);
	free(copy);
}

/* Same double, bit for bit (so -0.0 is not 0.0). */
static void check_real(ColumnType t, const char *in, double want)
{
	Value v;
	char *copy;

	if (!convert_copy(t, in, strlen(in), &v, &copy))
		fail_msg("\"%s\": unexpected error: %s", in, errbuf);
	assert_int_equal(v.kind, VAL_REAL);
	if (memcmp(&v.r, &want, sizeof want) != 0)
		fail_msg("\"%s\": got %.17g, want %.17g", in, v.r, want);
	free(copy);
}

static void check_error_bytes(ColumnType t, const char *in, size_t n,
			      const char *want)
{
	Value v;
	char *copy;

	if (convert_copy(t, in, n, &v, &copy))
		fail_msg("\"%.*s\": converted, want error %s", (int) n, in, want);
	if (strcmp(errbuf, want) != 0)
		fail_msg("\"%.*s\": got error\n  %s\nwant\n  %s", (int) n, in,
			 errbuf, want);
	free(copy);
}

static void check_error(ColumnType t, const char *in, const char *want)
{
	check_error_bytes(t, in, strlen(in), want);
}

/* ---------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------ */

static void check_type(uint32_t oid, int32_t typmod, ValueType vt,
		       ValueType elem_vt, const char *name)
{
	ColumnType t = { VT_TEXT, VT_TEXT, ',' };

	if (!values_builtin_type(oid, typmod, &t))
		fail_msg("oid %u not known", oid);
	assert_int_equal(t.vt, vt);
	if (vt == VT_ARRAY)
		assert_int_equal(t.elem_vt, elem_vt);
	assert_non_null(values_builtin_type_name(oid));
	assert_string_equal(values_builtin_type_name(oid), name);
}

static void test_builtin_scalars(void **state)
{
	(void) state;
	check_type(16, -1, VT_BOOL, 0, "bool");
	check_type(21, -1, VT_INT, 0, "int2");
	check_type(23, -1, VT_INT, 0, "int4");
	check_type(20, -1, VT_INT, 0, "int8");
	check_type(26, -1, VT_INT, 0, "oid");
	check_type(700, -1, VT_FLOAT, 0, "float4");
	check_type(701, -1, VT_FLOAT, 0, "float8");
	check_type(17, -1, VT_BYTEA, 0, "bytea");
	check_type(1082, -1, VT_DATE, 0, "date");
	check_type(1114, 6, VT_TIMESTAMP, 0, "timestamp");
	check_type(1184, -1, VT_TIMESTAMPTZ, 0, "timestamptz");
	check_type(114, -1, VT_JSON, 0, "json");
	check_type(3802, -1, VT_JSON, 0, "jsonb");
	check_type(25, -1, VT_TEXT, 0, "text");
	check_type(1043, 54, VT_TEXT, 0, "varchar");
	check_type(1042, 14, VT_TEXT, 0, "bpchar");
	check_type(19, -1, VT_TEXT, 0, "name");
	check_type(18, -1, VT_TEXT, 0, "char");
	check_type(2950, -1, VT_TEXT, 0, "uuid");
	check_type(1186, -1, VT_TEXT, 0, "interval");
	check_type(1083, -1, VT_TEXT, 0, "time");
	check_type(1266, -1, VT_TEXT, 0, "timetz");
	check_type(869, -1, VT_TEXT, 0, "inet");
	check_type(650, -1, VT_TEXT, 0, "cidr");
	check_type(829, -1, VT_TEXT, 0, "macaddr");
	check_type(790, -1, VT_TEXT, 0, "money");
	check_type(142, -1, VT_TEXT, 0, "xml");
	check_type(1560, -1, VT_TEXT, 0, "bit");
	check_type(1562, -1, VT_TEXT, 0, "varbit");
	check_type(600, -1, VT_TEXT, 0, "point");
	check_type(3614, -1, VT_TEXT, 0, "tsvector");
	check_type(3904, -1, VT_TEXT, 0, "int4range");
	check_type(3220, -1, VT_TEXT, 0, "pg_lsn");
}

static void test_builtin_unknown(void **state)
{
	ColumnType t = { VT_INT, VT_INT, ',' };

	(void) state;
	/* 0, an unused OID, pseudo-types, a typical user type OID. */
	assert_false(values_builtin_type(0, -1, &t));
	assert_false(values_builtin_type(31, -1, &t));
	assert_false(values_builtin_type(705, -1, &t));     /* unknown */
	assert_false(values_builtin_type(2249, -1, &t));    /* record */
	assert_false(values_builtin_type(2277, -1, &t));    /* anyarray */
	assert_false(values_builtin_type(16384, -1, &t));
	assert_false(values_builtin_type(UINT32_MAX, -1, &t));
	assert_int_equal(t.vt, VT_INT);                     /* untouched */
	assert_null(values_builtin_type_name(0));
	assert_null(values_builtin_type_name(16384));
}

static void test_builtin_numeric_typmod(void **state)
{
	(void) state;
	check_type(1700, -1, VT_NUMERIC_TEXT, 0, "numeric");
	check_type(1700, numeric_typmod(15, 2), VT_NUMERIC_NUM, 0, "numeric");
	check_type(1700, numeric_typmod(15, 0), VT_NUMERIC_NUM, 0, "numeric");
	check_type(1700, numeric_typmod(1, 0), VT_NUMERIC_NUM, 0, "numeric");
	check_type(1700, numeric_typmod(10, 2), VT_NUMERIC_NUM, 0, "numeric");
	check_type(1700, numeric_typmod(16, 2), VT_NUMERIC_TEXT, 0, "numeric");
	check_type(1700, numeric_typmod(1000, 0), VT_NUMERIC_TEXT, 0, "numeric");
	/* PostgreSQL 15's negative and over-precision scales. */
	check_type(1700, numeric_typmod(10, -3), VT_NUMERIC_NUM, 0, "numeric");
	check_type(1700, numeric_typmod(5, 8), VT_NUMERIC_NUM, 0, "numeric");
	/* numeric(p,s)[] carries the element's typmod. */
	check_type(1231, numeric_typmod(12, 4), VT_ARRAY, VT_NUMERIC_NUM, "_numeric");
	check_type(1231, -1, VT_ARRAY, VT_NUMERIC_TEXT, "_numeric");
	check_type(1231, numeric_typmod(20, 4), VT_ARRAY, VT_NUMERIC_TEXT, "_numeric");
}

static void test_builtin_arrays(void **state)
{
	ColumnType t;

	(void) state;
	check_type(1000, -1, VT_ARRAY, VT_BOOL, "_bool");
	check_type(1005, -1, VT_ARRAY, VT_INT, "_int2");
	check_type(1007, -1, VT_ARRAY, VT_INT, "_int4");
	check_type(1016, -1, VT_ARRAY, VT_INT, "_int8");
	check_type(1028, -1, VT_ARRAY, VT_INT, "_oid");
	check_type(1021, -1, VT_ARRAY, VT_FLOAT, "_float4");
	check_type(1022, -1, VT_ARRAY, VT_FLOAT, "_float8");
	check_type(1001, -1, VT_ARRAY, VT_BYTEA, "_bytea");
	check_type(1182, -1, VT_ARRAY, VT_DATE, "_date");
	check_type(1115, -1, VT_ARRAY, VT_TIMESTAMP, "_timestamp");
	check_type(1185, -1, VT_ARRAY, VT_TIMESTAMPTZ, "_timestamptz");
	check_type(199, -1, VT_ARRAY, VT_JSON, "_json");
	check_type(3807, -1, VT_ARRAY, VT_JSON, "_jsonb");
	check_type(1009, -1, VT_ARRAY, VT_TEXT, "_text");
	check_type(1015, -1, VT_ARRAY, VT_TEXT, "_varchar");
	check_type(1014, -1, VT_ARRAY, VT_TEXT, "_bpchar");
	check_type(1003, -1, VT_ARRAY, VT_TEXT, "_name");
	check_type(1002, -1, VT_ARRAY, VT_TEXT, "_char");
	check_type(2951, -1, VT_ARRAY, VT_TEXT, "_uuid");
	check_type(1183, -1, VT_ARRAY, VT_TEXT, "_time");
	check_type(1187, -1, VT_ARRAY, VT_TEXT, "_interval");
	check_type(1041, -1, VT_ARRAY, VT_TEXT, "_inet");
	check_type(1017, -1, VT_ARRAY, VT_TEXT, "_point");
	/* box arrays are delimited by ';', all others by ','. */
	check_type(1020, -1, VT_ARRAY, VT_TEXT, "_box");
	assert_true(values_builtin_type(1020, -1, &t));
	assert_int_equal(t.delim, ';');
	assert_true(values_builtin_type(1017, -1, &t));
	assert_int_equal(t.delim, ',');
	assert_true(values_builtin_type(1007, -1, &t));
	assert_int_equal(t.delim, ',');
}

/* Every OID in a range: a type has a name and a name has a type; array
 * names, and only they, start with '_'. */
static void test_builtin_table_consistent(void **state)
{
	int known = 0;

	(void) state;
	for (uint32_t oid = 0; oid < 10000; oid++) {
		ColumnType t;
		bool is = values_builtin_type(oid, -1, &t);
		const char *name = values_builtin_type_name(oid);

		assert_int_equal(is, name != NULL);
		if (!is)
			continue;
		known++;
		assert_int_equal(t.vt == VT_ARRAY, name[0] == '_');
	}
	assert_true(known > 140);
}

static void test_declared_type(void **state)
{
	static const struct {
		ValueType vt;
		const char *want;
	} cases[] = {
		{ VT_TEXT, "TEXT" }, { VT_BOOL, "INTEGER" }, { VT_INT, "INTEGER" },
		{ VT_FLOAT, "REAL" }, { VT_NUMERIC_NUM, "NUMERIC" },
		{ VT_NUMERIC_TEXT, "TEXT" }, { VT_BYTEA, "BLOB" },
		{ VT_DATE, "TEXT" }, { VT_TIMESTAMP, "TEXT" },
		{ VT_TIMESTAMPTZ, "TEXT" }, { VT_JSON, "TEXT" },
		{ VT_ARRAY, "TEXT" },
	};

	(void) state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ColumnType t = { cases[i].vt, VT_INT, ',' };

		assert_string_equal(values_declared_type(t), cases[i].want);
	}
}

/* ValueType is stored in mirrors (pgmirror_columns.value_type): its
 * numbers never change. */
static void test_value_type_numbers(void **state)
{
	(void) state;
	assert_int_equal(VT_TEXT, 0);
	assert_int_equal(VT_BOOL, 1);
	assert_int_equal(VT_INT, 2);
	assert_int_equal(VT_FLOAT, 3);
	assert_int_equal(VT_NUMERIC_NUM, 4);
	assert_int_equal(VT_NUMERIC_TEXT, 5);
	assert_int_equal(VT_BYTEA, 6);
	assert_int_equal(VT_DATE, 7);
	assert_int_equal(VT_TIMESTAMP, 8);
	assert_int_equal(VT_TIMESTAMPTZ, 9);
	assert_int_equal(VT_JSON, 10);
	assert_int_equal(VT_ARRAY, 11);
}

/* numeric(p,s)'s typmod, as atttypmod holds it. */
#define NUMERIC_TYPMOD(p, s) ((int32_t) ((((p) << 16) | ((s) & 0xffff)) + 4))

/* The retype rule for old -> new, both built-in types; the old ValueType
 * is what the old type is stored as. */
static ValueRetype retype(uint32_t old_oid, int32_t old_mod, uint32_t new_oid,
			  int32_t new_mod)
{
	ColumnType o, n;

	assert_true(values_builtin_type(old_oid, old_mod, &o));
	assert_true(values_builtin_type(new_oid, new_mod, &n));
	return values_retype(old_oid, old_mod, (int) o.vt, new_oid, new_mod, n);
}

static void test_retype(void **state)
{
	(void) state;
	/* The same type, and text to varchar and back: as they are. */
	assert_int_equal(retype(23, -1, 23, -1), RETYPE_COPY);
	assert_int_equal(retype(16, -1, 16, -1), RETYPE_COPY);
	assert_int_equal(retype(25, -1, 1043, 20), RETYPE_COPY);
	assert_int_equal(retype(1043, 10, 1043, 20), RETYPE_COPY);
	assert_int_equal(retype(1043, 10, 25, -1), RETYPE_COPY);
	/* Integers: widen as they are, to float8 as reals, to text and to
	 * unconstrained numeric as text; numeric(p<=15) stays a number. */
	assert_int_equal(retype(21, -1, 20, -1), RETYPE_COPY);
	assert_int_equal(retype(23, -1, 1700, NUMERIC_TYPMOD(10, 2)), RETYPE_COPY);
	assert_int_equal(retype(23, -1, 701, -1), RETYPE_REAL);
	assert_int_equal(retype(23, -1, 25, -1), RETYPE_TEXT);
	assert_int_equal(retype(20, -1, 1043, 30), RETYPE_TEXT);
	assert_int_equal(retype(23, -1, 1700, -1), RETYPE_TEXT);
	assert_int_equal(retype(23, -1, 1700, NUMERIC_TYPMOD(20, 0)), RETYPE_NONE);
	assert_int_equal(retype(23, -1, 700, -1), RETYPE_NONE);   /* float4 rounds */
	assert_int_equal(retype(23, -1, 16, -1), RETYPE_NONE);
	/* Numeric: the same storage and scale, or no typmod at all. */
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(10, 2), 1700, NUMERIC_TYPMOD(12, 2)),
			 RETYPE_COPY);
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(10, 2), 1700, NUMERIC_TYPMOD(12, 3)),
			 RETYPE_NONE);
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(10, 2), 1700, NUMERIC_TYPMOD(20, 2)),
			 RETYPE_NONE);                                   /* number to text */
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(20, 2), 1700, NUMERIC_TYPMOD(30, 2)),
			 RETYPE_COPY);
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(20, 2), 1700, -1), RETYPE_COPY);
	assert_int_equal(retype(1700, -1, 1700, NUMERIC_TYPMOD(20, 2)), RETYPE_NONE);
	/* A negative scale (PostgreSQL 15) is its own scale. */
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(10, -2), 1700, NUMERIC_TYPMOD(12, -2)),
			 RETYPE_COPY);
	assert_int_equal(retype(1700, NUMERIC_TYPMOD(10, -2), 1700, NUMERIC_TYPMOD(12, 2)),
			 RETYPE_NONE);
	/* What the source converts in a way the mirror cannot repeat. */
	assert_int_equal(retype(16, -1, 25, -1), RETYPE_NONE);      /* "true" vs 1 */
	assert_int_equal(retype(1043, 10, 1042, 20), RETYPE_NONE);  /* char(n) pads */
	assert_int_equal(retype(701, -1, 25, -1), RETYPE_NONE);
	/* A stored value type this build does not know is never copied. */
	assert_int_equal(values_retype(1700, NUMERIC_TYPMOD(10, 2), 99, 1700,
				       NUMERIC_TYPMOD(12, 2),
				       (ColumnType) { VT_NUMERIC_NUM, VT_TEXT, ',' }),
			 RETYPE_NONE);
}

/* ---------------------------------------------------------------------
 * Scalars
 * ------------------------------------------------------------------ */

static void test_text_json_as_is(void **state)
{
	Value v;
	char *copy;
	const char nul[] = "a\0b";

	(void) state;
	check_text(T_TEXT, "hello, world", "hello, world");
	check_text(T_TEXT, "{1,2}", "{1,2}");
	check_text(T_JSON, "{\"a\": [1, 2.5, null]}", "{\"a\": [1, 2.5, null]}");
	check_kind_bytes(T_TEXT, nul, 3, VAL_TEXT, nul, 3);
	check_kind_bytes(T_TEXT, "h\xc3\xa9 \xf0\x9f\x98\x80", 9, VAL_TEXT,
			 "h\xc3\xa9 \xf0\x9f\x98\x80", 9);

	/* The result borrows from the input; an empty one still has a
	 * pointer, since SQLite binds a NULL pointer as NULL. */
	assert_true(convert_copy(T_TEXT, "abc", 3, &v, &copy));
	assert_ptr_equal(v.p, copy);
	free(copy);
	assert_true(convert_copy(T_TEXT, "", 0, &v, &copy));
	assert_int_equal(v.kind, VAL_TEXT);
	assert_non_null(v.p);
	assert_int_equal(v.len, 0);
	free(copy);
	assert_true(values_convert(T_TEXT, NULL, 0, &vb, &v, errbuf, sizeof errbuf));
	assert_non_null(v.p);
	assert_int_equal(v.len, 0);
}

static void test_bool(void **state)
{
	(void) state;
	check_int(T_BOOL, "t", 1);
	check_int(T_BOOL, "f", 0);
	check_error(T_BOOL, "", "invalid input for type boolean: \"\"");
	check_error(T_BOOL, "true", "invalid input for type boolean: \"true\"");
	check_error(T_BOOL, "T", "invalid input for type boolean: \"T\"");
	check_error(T_BOOL, "tt", "invalid input for type boolean: \"tt\"");
	check_error(T_BOOL, "1", "invalid input for type boolean: \"1\"");
}

static void test_int(void **state)
{
	(void) state;
	check_int(T_INT, "0", 0);
	check_int(T_INT, "-0", 0);
	check_int(T_INT, "42", 42);
	check_int(T_INT, "-32768", -32768);
	check_int(T_INT, "4294967295", INT64_C(4294967295));
	check_int(T_INT, "9223372036854775807", INT64_MAX);
	check_int(T_INT, "-9223372036854775808", INT64_MIN);
	check_int(T_INT, "+7", 7);
	check_int(T_INT, "007", 7);
	check_error(T_INT, "9223372036854775808",
		    "value out of range for type integer: \"9223372036854775808\"");
	check_error(T_INT, "-9223372036854775809",
		    "value out of range for type integer: \"-9223372036854775809\"");
	check_error(T_INT, "99999999999999999999999",
		    "value out of range for type integer: \"99999999999999999999999\"");
	check_error(T_INT, "12x", "invalid input for type integer: \"12x\"");
	check_error(T_INT, "", "invalid input for type integer: \"\"");
	check_error(T_INT, "-", "invalid input for type integer: \"-\"");
	check_error(T_INT, " 1", "invalid input for type integer: \" 1\"");
	check_error(T_INT, "1 ", "invalid input for type integer: \"1 \"");
	check_error(T_INT, "1.0", "invalid input for type integer: \"1.0\"");
	check_error(T_INT, "--1", "invalid input for type integer: \"--1\"");
	check_error(T_INT, "0x10", "invalid input for type integer: \"0x10\"");
	/* A syntax error wins over an overflow before it. */
	check_error(T_INT, "99999999999999999999x",
		    "invalid input for type integer: \"99999999999999999999x\"");
}

static void test_float(void **state)
{
	Value v;
	char *copy;

	(void) state;
	check_real(T_FLOAT, "0", 0.0);
	check_real(T_FLOAT, "-0", -0.0);
	check_real(T_FLOAT, "1.5", 1.5);
	check_real(T_FLOAT, "0.1", 0.1);
	check_real(T_FLOAT, "-2.5e-05", -2.5e-05);
	check_real(T_FLOAT, "1e+308", 1e308);
	check_real(T_FLOAT, "1e308", 1e308);
	check_real(T_FLOAT, "1.7976931348623157e+308", DBL_MAX);
	check_real(T_FLOAT, "2.2250738585072014e-308", DBL_MIN);
	check_real(T_FLOAT, "5e-324", 5e-324);        /* smallest subnormal */
	check_real(T_FLOAT, "4.9406564584124654e-324", 5e-324);
	check_real(T_FLOAT, "1.2345678901234567e+20", 1.2345678901234567e+20);
	check_real(T_FLOAT, "3.4028235e+38", 3.4028235e+38);   /* float4 max */
	check_real(T_FLOAT, "Infinity", INFINITY);
	check_real(T_FLOAT, "-Infinity", -INFINITY);
	check_real(T_FLOAT, "1E5", 1e5);

	/* NaN is text: a REAL NaN would reach SQLite as NULL. */
	assert_true(convert_copy(T_FLOAT, "NaN", 3, &v, &copy));
	assert_int_equal(v.kind, VAL_TEXT);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.p, "NaN", 3);
	free(copy);

	check_error(T_FLOAT, "1e309",
		    "value out of range for type double precision: \"1e309\"");
	check_error(T_FLOAT, "-1e309",
		    "value out of range for type double precision: \"-1e309\"");
	check_error(T_FLOAT, "1e-400",
		    "value out of range for type double precision: \"1e-400\"");
	check_error(T_FLOAT, "1e99999999999999999999",
		    "value out of range for type double precision: \"1e99999999999999999999\"");
	check_error(T_FLOAT, "", "invalid input for type double precision: \"\"");
	check_error(T_FLOAT, "nan", "invalid input for type double precision: \"nan\"");
	check_error(T_FLOAT, "inf", "invalid input for type double precision: \"inf\"");
	check_error(T_FLOAT, "infinity",
		    "invalid input for type double precision: \"infinity\"");
	check_error(T_FLOAT, "0x1p3", "invalid input for type double precision: \"0x1p3\"");
	check_error(T_FLOAT, "1.5 ", "invalid input for type double precision: \"1.5 \"");
	check_error(T_FLOAT, " 1.5", "invalid input for type double precision: \" 1.5\"");
	check_error(T_FLOAT, "1e", "invalid input for type double precision: \"1e\"");
	check_error(T_FLOAT, "1e+", "invalid input for type double precision: \"1e+\"");
	check_error(T_FLOAT, ".", "invalid input for type double precision: \".\"");
	check_error(T_FLOAT, "-", "invalid input for type double precision: \"-\"");
	check_error(T_FLOAT, "1,5", "invalid input for type double precision: \"1,5\"");
	check_error(T_FLOAT, "--1", "invalid input for type double precision: \"--1\"");
}

/* Long inputs: exact whatever the number of digits. */
static void test_float_many_digits(void **state)
{
	char s[2048];
	size_t k;

	(void) state;
	/* 0.000...000123 with 300 zeros. */
	k = (size_t) sprintf(s, "0.");
	memset(s + k, '0', 300);
	k += 300;
	strcpy(s + k, "123");
	check_real(T_FLOAT, s, 1.23e-301);

	/* 1 and 900 zeros, scaled back: exactly 1. */
	s[0] = '1';
	memset(s + 1, '0', 900);
	strcpy(s + 901, "e-900");
	check_real(T_FLOAT, s, 1.0);

	/*
	 * 2^53 + 1 is halfway between two doubles and rounds to even, down;
	 * a 1 some 850 digits later puts it just above halfway, up. Reading
	 * only the first few hundred digits would round down.
	 */
	check_real(T_FLOAT, "9007199254740993", 9007199254740992.0);
	k = (size_t) sprintf(s, "9007199254740993");
	memset(s + k, '0', 850);
	k += 850;
	strcpy(s + k, "1e-851");
	check_real(T_FLOAT, s, 9007199254740994.0);
}

/* Any double printed with 17 digits comes back bit for bit. */
static void test_float_round_trip(void **state)
{
	(void) state;
	for (int i = 0; i < 20000; i++) {
		uint64_t bits = rng();
		double d;
		char s[64];

		memcpy(&d, &bits, sizeof d);
		if (!isfinite(d))
			continue;
		snprintf(s, sizeof s, i % 2 ? "%.17g" : "%.16e", d);
		check_real(T_FLOAT, s, d);
	}
}

/*
 * The decimal point strtod expects follows LC_NUMERIC; the conversion
 * must not. Runs under a comma locale when one is installed.
 */
static void test_float_locale(void **state)
{
	static const char *const locales[] = {
		"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
		"nl_NL.UTF-8", "ru_RU.UTF-8",
	};
	const char *saved = setlocale(LC_NUMERIC, NULL);
	char *restore = strdup(saved != NULL ? saved : "C");
	bool found = false;

	(void) state;
	for (size_t i = 0; i < sizeof locales / sizeof locales[0]; i++) {
		if (setlocale(LC_NUMERIC, locales[i]) != NULL &&
		    strcmp(localeconv()->decimal_point, ",") == 0) {
			found = true;
			break;
		}
	}
	if (!found)
		print_message("no comma-decimal locale installed: checked under \"%s\" only\n",
			      restore);
	check_real(T_FLOAT, "1.5", 1.5);
	check_real(T_FLOAT, "-0.25e-3", -0.25e-3);
	check_real(T_NUM, "-0.50", -0.5);
	check_error(T_FLOAT, "1,5",
		    "invalid input for type double precision: \"1,5\"");
	setlocale(LC_NUMERIC, restore);
	free(restore);
}

static void test_numeric_num(void **state)
{
	Value v;
	char *copy;

	(void) state;
	check_int(T_NUM, "12.00", 12);
	check_int(T_NUM, "12", 12);
	check_int(T_NUM, "0", 0);
	check_int(T_NUM, "-0.00", 0);
	check_int(T_NUM, "-12.0", -12);
	check_int(T_NUM, "999999999999999", INT64_C(999999999999999));
	check_int(T_NUM, "-99999999999999.0", INT64_C(-99999999999999));
	check_int(T_NUM, "1200", 1200);              /* numeric(10,-2) */
	check_real(T_NUM, "-0.50", -0.5);
	check_real(T_NUM, "12.34", 12.34);
	check_real(T_NUM, "0.01", 0.01);
	check_real(T_NUM, "1234567890123.45", 1234567890123.45);
	check_real(T_NUM, "0.00012", 0.00012);       /* numeric(2,5) */
	check_real(T_NUM, "Infinity", INFINITY);
	check_real(T_NUM, "-Infinity", -INFINITY);
	/* Past int64 (the declared precision was not kept): the real. */
	check_real(T_NUM, "123456789012345678901234567890",
		   123456789012345678901234567890.0);

	assert_true(convert_copy(T_NUM, "NaN", 3, &v, &copy));
	assert_int_equal(v.kind, VAL_TEXT);
	assert_memory_equal(v.p, "NaN", 3);
	free(copy);

	check_error(T_NUM, "", "invalid input for type numeric: \"\"");
	check_error(T_NUM, "1e5", "invalid input for type numeric: \"1e5\"");
	check_error(T_NUM, "12.3.4", "invalid input for type numeric: \"12.3.4\"");
	check_error(T_NUM, "abc", "invalid input for type numeric: \"abc\"");
	check_error(T_NUM, " 1", "invalid input for type numeric: \" 1\"");
	check_error(T_NUM, "1,5", "invalid input for type numeric: \"1,5\"");
	check_error(T_NUM, "nan", "invalid input for type numeric: \"nan\"");
	check_error(T_NUM, ".", "invalid input for type numeric: \".\"");
}

/*
 * Numbers of up to 15 significant digits take a short cut past strtod
 * (an exact integer times or divided by an exact power of ten); it must
 * give strtod's double, bit for bit, whatever the digits and the scale.
 */
static void test_numeric_fast_path(void **state)
{
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15);
	char text[64];
	Value v;
	char *copy;

	(void) state;
	for (int k = 0; k < 200000; k++) {
		int ndig, scale, len;
		uint64_t m;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ndig = 1 + (int) (x % 15);
		scale = (int) ((x >> 8) % 24);
		m = (x >> 16) % UINT64_C(1000000000000000);
		for (int d = ndig; d < 15; d++)
			m /= 10;
		if (scale == 0) {
			len = snprintf(text, sizeof text, "%s%" PRIu64 ".5",
				       (x >> 60) & 1 ? "-" : "", m);
		} else {
			char digits[32];
			int nd = snprintf(digits, sizeof digits, "%0*" PRIu64, scale + 1, m);

			len = snprintf(text, sizeof text, "%s%.*s.%s", (x >> 60) & 1 ? "-" : "",
				       nd - scale, digits, digits + nd - scale);
		}
		assert_true(len > 0 && len < (int) sizeof text);
		assert_true(convert_copy(T_FLOAT, text, (size_t) len, &v, &copy));
		free(copy);
		assert_int_equal(v.kind, VAL_REAL);
		if (memcmp(&v.r, &(double) { strtod(text, NULL) }, sizeof(double)) != 0)
			fail_msg("\"%s\": %.17g, strtod says %.17g", text, v.r, strtod(text, NULL));
	}
	check_real(T_FLOAT, "0.1", 0.1);
	check_real(T_FLOAT, "123456789012345e-22", 123456789012345e-22);
	check_real(T_FLOAT, "9007199254740993", 9007199254740993.0); /* 16 digits: strtod */
	check_real(T_NUM, "-999999999999.999", -999999999999.999);
}

static void test_numeric_text(void **state)
{
	static const char *const ok[] = {
		"123456789012345678901234567890",
		"-123456789012345678901234567890.000000000000000000000000000001",
		"0.000000000000000000000000000001", "-0", "42", "3.14",
		"NaN", "Infinity", "-Infinity", ".5", "5.",
	};
	Value v;
	char *copy;

	(void) state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		check_text(T_NUMTEXT, ok[i], ok[i]);
		/* The exact text: borrowed, not copied. */
		assert_true(convert_copy(T_NUMTEXT, ok[i], strlen(ok[i]), &v, &copy));
		assert_ptr_equal(v.p, copy);
		free(copy);
	}
	check_error(T_NUMTEXT, "", "invalid input for type numeric: \"\"");
	check_error(T_NUMTEXT, "1e10", "invalid input for type numeric: \"1e10\"");
	check_error(T_NUMTEXT, "12a", "invalid input for type numeric: \"12a\"");
	check_error(T_NUMTEXT, "+-1", "invalid input for type numeric: \"+-1\"");
	check_error(T_NUMTEXT, "inf", "invalid input for type numeric: \"inf\"");
	check_error(T_NUMTEXT, "1 000", "invalid input for type numeric: \"1 000\"");
}

static void test_bytea(void **state)
{
	Value v;
	char *copy;
	char big_in[2 + 2 * 1000 + 1], big_want[1000];

	(void) state;
	check_blob("\\x00ff80", "\x00\xff\x80", 3);
	check_blob("\\xdeadbeef", "\xde\xad\xbe\xef", 4);
	check_blob("\\xDEADBEEF", "\xde\xad\xbe\xef", 4);
	check_blob("\\x0000", "\0\0", 2);

	/* Empty bytea: a zero-length BLOB, with a pointer, not NULL. */
	assert_true(convert_copy(T_BYTEA, "\\x", 2, &v, &copy));
	assert_int_equal(v.kind, VAL_BLOB);
	assert_int_equal(v.len, 0);
	assert_non_null(v.p);
	free(copy);

	strcpy(big_in, "\\x");
	for (int i = 0; i < 1000; i++) {
		big_want[i] = (char) (i * 7);
		snprintf(big_in + 2 + 2 * i, 3, "%02x", (unsigned char) big_want[i]);
	}
	check_blob(big_in, big_want, sizeof big_want);

	check_error(T_BYTEA, "", "invalid input for type bytea: \"\"");
	check_error(T_BYTEA, "\\", "invalid input for type bytea: \"\\\\\"");
	check_error(T_BYTEA, "\\x0", "invalid input for type bytea: \"\\\\x0\"");
	check_error(T_BYTEA, "\\x0g", "invalid input for type bytea: \"\\\\x0g\"");
	check_error(T_BYTEA, "\\xzz", "invalid input for type bytea: \"\\\\xzz\"");
	check_error(T_BYTEA, "x00", "invalid input for type bytea: \"x00\"");
	check_error(T_BYTEA, "\\X00", "invalid input for type bytea: \"\\\\X00\"");
	check_error(T_BYTEA, "\\x00 ff", "invalid input for type bytea: \"\\\\x00 ff\"");
	/* The escape format is not what the session asks for. */
	check_error(T_BYTEA, "\\000", "invalid input for type bytea: \"\\\\000\"");
}

static void test_date(void **state)
{
	static const char *const ok[] = {
		"2024-02-29", "infinity", "-infinity", "0044-03-15 BC",
		"294276-12-31",
	};
	Value v;
	char *copy;

	(void) state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_true(convert_copy(T_DATE, ok[i], strlen(ok[i]), &v, &copy));
		assert_int_equal(v.kind, VAL_TEXT);
		assert_ptr_equal(v.p, copy);
		assert_int_equal(v.len, strlen(ok[i]));
		free(copy);
	}
	check_error(T_DATE, "", "invalid input for type date: \"\"");
}

static void test_timestamp(void **state)
{
	(void) state;
	check_text(T_TS, "2024-01-01 12:00:00", "2024-01-01 12:00:00");
	check_text(T_TS, "2024-01-01 12:00:00.5", "2024-01-01 12:00:00.500000");
	check_text(T_TS, "2024-01-01 12:00:00.05", "2024-01-01 12:00:00.050000");
	check_text(T_TS, "2024-01-01 12:00:00.123456", "2024-01-01 12:00:00.123456");
	check_text(T_TS, "2024-01-01 12:00:00.000001", "2024-01-01 12:00:00.000001");
	check_text(T_TS, "2024-02-29 23:59:59.999999", "2024-02-29 23:59:59.999999");
	check_text(T_TS, "2000-02-29 00:00:00", "2000-02-29 00:00:00");
	check_text(T_TS, "0044-03-15 12:00:00 BC", "0044-03-15 12:00:00 BC");
	check_text(T_TS, "0044-03-15 12:00:00.25 BC", "0044-03-15 12:00:00.250000 BC");
	check_text(T_TS, "4713-01-01 00:00:00 BC", "4713-01-01 00:00:00 BC");
	/* 1 BC is a leap year (astronomical year 0), 2 BC is not. */
	check_text(T_TS, "0001-02-29 00:00:00 BC", "0001-02-29 00:00:00 BC");
	check_text(T_TS, "0005-02-29 00:00:00 BC", "0005-02-29 00:00:00 BC");
	check_text(T_TS, "12345-06-07 08:09:10", "12345-06-07 08:09:10");
	check_text(T_TS, "294276-12-31 23:59:59.999999", "294276-12-31 23:59:59.999999");
	check_text(T_TS, "infinity", "infinity");
	check_text(T_TS, "-infinity", "-infinity");

#define BAD_TS(s) check_error(T_TS, s, "invalid input for type timestamp: \"" s "\"")
	BAD_TS("");
	BAD_TS("2023-02-29 00:00:00");
	BAD_TS("1900-02-29 00:00:00");
	BAD_TS("0002-02-29 00:00:00 BC");
	BAD_TS("2024-04-31 00:00:00");
	BAD_TS("2024-13-01 00:00:00");
	BAD_TS("2024-00-01 00:00:00");
	BAD_TS("2024-01-00 00:00:00");
	BAD_TS("2024-01-01 24:00:00");
	BAD_TS("2024-01-01 23:60:00");
	BAD_TS("2024-01-01 23:59:60");
	BAD_TS("2024-01-01 12:00:00.");
	BAD_TS("2024-01-01 12:00:00.1234567");
	BAD_TS("2024-01-01T12:00:00");
	BAD_TS("2024-01-01 12:00");
	BAD_TS("2024-01-01");
	BAD_TS("2024-1-01 12:00:00");
	BAD_TS("024-01-01 12:00:00");
	BAD_TS("0000-01-01 00:00:00");
	BAD_TS("0000-01-01 00:00:00 BC");
	BAD_TS("2024-01-01 12:00:00+00");
	BAD_TS("2024-01-01 12:00:00 AD");
	BAD_TS("2024-01-01 12:00:00 BCX");
	BAD_TS("2024-01-01 12:00:00 bc");
	BAD_TS("2024-01-01 12:00:00 ");
	BAD_TS("1234567890-01-01 00:00:00");
	BAD_TS("Infinity");
#undef BAD_TS
}

static void test_timestamptz(void **state)
{
	(void) state;
	/* The session's own zone, UTC: only the offset goes. */
	check_text(T_TSTZ, "2024-01-01 12:00:00+00", "2024-01-01 12:00:00");
	check_text(T_TSTZ, "2024-01-01 12:00:00.5+00", "2024-01-01 12:00:00.500000");
	check_text(T_TSTZ, "2024-01-01 12:00:00-00", "2024-01-01 12:00:00");
	check_text(T_TSTZ, "2024-01-01 12:00:00+00:00", "2024-01-01 12:00:00");
	check_text(T_TSTZ, "0044-03-15 12:00:00+00 BC", "0044-03-15 12:00:00 BC");
	check_text(T_TSTZ, "12345-06-07 08:09:10+00", "12345-06-07 08:09:10");
	check_text(T_TSTZ, "infinity", "infinity");
	check_text(T_TSTZ, "-infinity", "-infinity");

	/* Other offsets, across midnight, months, years, leap days. */
	check_text(T_TSTZ, "2024-06-15 12:00:00+02", "2024-06-15 10:00:00");
	check_text(T_TSTZ, "2024-06-15 03:00:00+05:30", "2024-06-14 21:30:00");
	check_text(T_TSTZ, "2024-01-01 01:00:00+05:30", "2023-12-31 19:30:00");
	check_text(T_TSTZ, "2023-12-31 20:00:00-08", "2024-01-01 04:00:00");
	check_text(T_TSTZ, "2024-06-30 22:30:00-03:30", "2024-07-01 02:00:00");
	check_text(T_TSTZ, "2024-03-01 02:00:00+05", "2024-02-29 21:00:00");
	check_text(T_TSTZ, "2023-03-01 02:00:00+05", "2023-02-28 21:00:00");
	check_text(T_TSTZ, "2024-02-28 22:00:00-03", "2024-02-29 01:00:00");
	check_text(T_TSTZ, "2100-02-28 23:00:00-02", "2100-03-01 01:00:00");
	check_text(T_TSTZ, "2000-02-28 23:00:00-02", "2000-02-29 01:00:00");
	check_text(T_TSTZ, "2024-06-15 12:00:00+05:30:15", "2024-06-15 06:29:45");
	check_text(T_TSTZ, "1883-11-18 12:03:58-04:56:02", "1883-11-18 17:00:00");
	check_text(T_TSTZ, "2024-01-01 00:00:00.123+01", "2023-12-31 23:00:00.123000");
	check_text(T_TSTZ, "2024-01-01 00:00:00.999999+14",
		   "2023-12-31 10:00:00.999999");
	check_text(T_TSTZ, "2024-12-31 23:59:59.5-12", "2025-01-01 11:59:59.500000");
	/* Past year 9999 and back. */
	check_text(T_TSTZ, "10000-01-01 01:00:00+05", "9999-12-31 20:00:00");
	check_text(T_TSTZ, "9999-12-31 23:00:00-02", "10000-01-01 01:00:00");
	/* Across the era: AD 1 follows 1 BC (astronomical year 0). */
	check_text(T_TSTZ, "0001-01-01 00:30:00+01", "0001-12-31 23:30:00 BC");
	check_text(T_TSTZ, "0001-12-31 23:00:00-02 BC", "0001-01-01 01:00:00");
	check_text(T_TSTZ, "0001-03-01 01:00:00+02 BC", "0001-02-29 23:00:00 BC");
	check_text(T_TSTZ, "0044-03-15 12:00:00+01 BC", "0044-03-15 11:00:00 BC");

#define BAD_TSTZ(s) check_error(T_TSTZ, s, \
	"invalid input for type timestamp with time zone: \"" s "\"")
	BAD_TSTZ("");
	BAD_TSTZ("2024-01-01 12:00:00");
	BAD_TSTZ("2024-01-01 12:00:00 BC");
	BAD_TSTZ("2024-01-01 12:00:00+5");
	BAD_TSTZ("2024-01-01 12:00:00+05:3");
	BAD_TSTZ("2024-01-01 12:00:00+05:30:");
	BAD_TSTZ("2024-01-01 12:00:00+05:30:1");
	BAD_TSTZ("2024-01-01 12:00:00+05:30:15:00");
	BAD_TSTZ("2024-01-01 12:00:00+24");
	BAD_TSTZ("2024-01-01 12:00:00+05:60");
	BAD_TSTZ("2024-01-01 12:00:00 +05");
	BAD_TSTZ("2024-01-01 12:00:00+00 AD");
	BAD_TSTZ("2024-01-01 12:00:00+00 BC ");
	BAD_TSTZ("2024-01-01 12:00:00 BC+00");
	BAD_TSTZ("2024-01-01 12:00:00Z");
	BAD_TSTZ("2024-01-01 12:00:00 UTC");
	BAD_TSTZ("2023-02-29 12:00:00+00");
	BAD_TSTZ("2024-01-01 12:00:00.+00");
	BAD_TSTZ("0000-01-01 12:00:00+00");
#undef BAD_TSTZ
}

/* An independent reference for the calendar: libc's gmtime (proleptic
 * Gregorian, astronomical years) on random instants and offsets. */
static void format_stamp(char *s, size_t size, const struct tm *tm,
			 const char *frac, const char *offset)
{
	long year = tm->tm_year + 1900L;
	bool bc = year <= 0;

	snprintf(s, size, "%04ld-%02d-%02d %02d:%02d:%02d%s%s%s",
		 bc ? 1 - year : year, tm->tm_mon + 1, tm->tm_mday,
		 tm->tm_hour, tm->tm_min, tm->tm_sec, frac, offset,
		 bc ? " BC" : "");
}

static void test_timestamptz_against_gmtime(void **state)
{
	/* About 4700 BC to AD 12000. */
	const int64_t lo = INT64_C(-210000000000), hi = INT64_C(316000000000);

	(void) state;
	if (sizeof(time_t) < 8)
		skip();
	for (int i = 0; i < 20000; i++) {
		int64_t t = lo + (int64_t) rng_below((uint64_t) (hi - lo));
		int off = (int) rng_below(16 * 3600 * 2 - 1) - (16 * 3600 - 1);
		int aoff = off < 0 ? -off : off;
		time_t local = (time_t) (t + off), utc = (time_t) t;
		struct tm ltm, utm;
		char offset[16], frac[8] = "", fracpad[8] = "", in[64], want[64];
		int nfrac = (int) rng_below(7);

		switch (rng_below(4)) {
		case 0:
			aoff -= aoff % 3600;
			off = off < 0 ? -aoff : aoff;
			break;
		case 1:
			aoff -= aoff % 60;
			off = off < 0 ? -aoff : aoff;
			break;
		default:
			break;
		}
		local = (time_t) (t + off);
		if (aoff % 60 != 0)
			snprintf(offset, sizeof offset, "%c%02d:%02d:%02d",
				 off < 0 ? '-' : '+', aoff / 3600, aoff / 60 % 60,
				 aoff % 60);
		else if (aoff % 3600 != 0)
			snprintf(offset, sizeof offset, "%c%02d:%02d",
				 off < 0 ? '-' : '+', aoff / 3600, aoff / 60 % 60);
		else
			snprintf(offset, sizeof offset, "%c%02d",
				 off < 0 ? '-' : '+', aoff / 3600);
		if (nfrac > 0) {
			frac[0] = fracpad[0] = '.';
			for (int k = 1; k <= 6; k++) {
				char c = (char) ('0' + rng_below(10));

				if (k <= nfrac)
					frac[k] = c;
				fracpad[k] = k <= nfrac ? c : '0';
			}
		}
		assert_non_null(gmtime_r(&local, &ltm));
		assert_non_null(gmtime_r(&utc, &utm));
		format_stamp(in, sizeof in, &ltm, frac, offset);
		format_stamp(want, sizeof want, &utm, fracpad, "");
		check_text(T_TSTZ, in, want);
	}
}

/* ---------------------------------------------------------------------
 * Arrays
 * ------------------------------------------------------------------ */

static void test_array_int(void **state)
{
	ColumnType t = array_of(VT_INT);

	(void) state;
	check_text(t, "{1,2,NULL}", "[1,2,null]");
	check_text(t, "{}", "[]");
	check_text(t, "{42}", "[42]");
	check_text(t, "{NULL}", "[null]");
	check_text(t, "{null,Null,nULL}", "[null,null,null]");
	check_text(t, "{{1,2},{3,4}}", "[[1,2],[3,4]]");
	check_text(t, "{{{1},{2}},{{3},{4}}}", "[[[1],[2]],[[3],[4]]]");
	check_text(t, "{{{{{{1}}}}}}", "[[[[[[1]]]]]]");
	check_text(t, "{{1,NULL},{NULL,4}}", "[[1,null],[null,4]]");
	check_text(t, "{-0,+5,007,9223372036854775807,-9223372036854775808}",
		   "[0,5,7,9223372036854775807,-9223372036854775808]");
	/* Bounds go: JSON arrays start at 0 whatever PostgreSQL says. */
	check_text(t, "[0:1]={1,2}", "[1,2]");
	check_text(t, "[-5:-4][1:2]={{1,2},{3,4}}", "[[1,2],[3,4]]");
	check_text(t, "[2:2]={7}", "[7]");
	/* White space array_in would skip; quoted numbers. */
	check_text(t, " { 1 , 2 } ", "[1,2]");
	check_text(t, "{\"1\",\"\\2\"}", "[1,2]");

	check_error(t, "{1,x}", "invalid input for type integer: \"x\"");
	check_error(t, "{1,99999999999999999999}",
		    "value out of range for type integer: \"99999999999999999999\"");
	check_error(t, "{1,\"\"}", "invalid input for type integer: \"\"");
	check_error(t, "{1.5}", "invalid input for type integer: \"1.5\"");
}

static void test_array_malformed(void **state)
{
	ColumnType t = array_of(VT_INT);

	(void) state;
#define BAD(s, why) check_error(t, s, "malformed array literal: \"" s "\": " why)
	BAD("", "array value must start with \"{\" or dimension information");
	BAD("1,2", "array value must start with \"{\" or dimension information");
	BAD("[1,2]", "invalid dimension information");
	BAD("{", "unexpected end of input");
	BAD("{1,2", "unexpected end of input");
	BAD("{1,2,", "unexpected end of input");
	BAD("{{1,2}", "unexpected end of input");
	BAD("{1,,2}", "unexpected character at offset 3");
	BAD("{,1}", "unexpected character at offset 1");
	BAD("{1,}", "unexpected character at offset 3");
	BAD("{1{2}}", "unexpected character at offset 2");
	BAD("{{1}2}", "unexpected character at offset 4");
	BAD("{1,2}}", "junk after closing right brace");
	BAD("{1,2}x", "junk after closing right brace");
	BAD("{} {}", "junk after closing right brace");
	BAD("{{1,2},{3}}", "sub-arrays must have matching dimensions");
	BAD("{{1},{2,3}}", "sub-arrays must have matching dimensions");
	BAD("{{1},2}", "sub-arrays must have matching dimensions");
	BAD("{1,{2}}", "sub-arrays must have matching dimensions");
	BAD("{{{1}},{2}}", "sub-arrays must have matching dimensions");
	BAD("{{}}", "unexpected character at offset 2");
	BAD("{{1},{}}", "unexpected character at offset 6");
	BAD("{{{{{{{1}}}}}}}", "more than 6 dimensions");
	BAD("[1:1][1:1][1:1][1:1][1:1][1:1][1:1]={1}", "more than 6 dimensions");
	BAD("[1:2]{1,2}", "missing \"=\" after dimension information");
	BAD("[1:2]", "missing \"=\" after dimension information");
	BAD("[1:2]=", "array value must start with \"{\" or dimension information");
	BAD("[1:2]={1,2,3}", "dimension information does not match the contents");
	BAD("[1:2]={{1,2},{3,4}}", "dimension information does not match the contents");
	BAD("[1:2][1:3]={{1,2},{3,4}}", "dimension information does not match the contents");
	BAD("[1:2]={}", "dimension information does not match the contents");
	BAD("[2:1]={1}", "invalid dimension information");
	BAD("[1]={1}", "invalid dimension information");
	BAD("[a:b]={1}", "invalid dimension information");
	BAD("[1:99999999999]={1}", "invalid dimension information");
	BAD("[1:2", "invalid dimension information");
#undef BAD
	/* Quotes in the value are escaped in the message. */
	check_error(t, "{\"1", "malformed array literal: \"{\\\"1\": unexpected end of input");
	check_error(t, "{\"1\\\"}",
		    "malformed array literal: \"{\\\"1\\\\\\\"}\": unexpected end of input");
	check_error(t, "{1\"2\"}",
		    "malformed array literal: \"{1\\\"2\\\"}\": unexpected character at offset 2");
	check_error(t, "{1\\2}",
		    "malformed array literal: \"{1\\\\2}\": unexpected character at offset 2");
	check_error(t, "{\"1\"2}",
		    "malformed array literal: \"{\\\"1\\\"2}\": unexpected character at offset 4");
}

/* Text that is not UTF-8 (from a SQL_ASCII source) is refused, never
 * stored: in text, json and date columns alike. */
static void test_text_not_utf8(void **state)
{
	static const char hint[] = ": the source must send UTF-8, which a SQL_ASCII "
				   "database does not check; correct the value on the source";
	char want[256];

	(void) state;
	snprintf(want, sizeof want, "invalid UTF-8 in text \"caf\\xe9\"%s", hint);
	check_error(T_TEXT, "caf\xe9", want);
	snprintf(want, sizeof want, "invalid UTF-8 in text \"\\xff\\xfe\"%s", hint);
	check_error_bytes(T_TEXT, "\xff\xfe", 2, want);
	/* cut short, overlong, a surrogate, past U+10FFFF */
	snprintf(want, sizeof want, "invalid UTF-8 in text \"a\\xc3\"%s", hint);
	check_error(T_TEXT, "a\xc3", want);
	snprintf(want, sizeof want, "invalid UTF-8 in text \"\\xc0\\xaf\"%s", hint);
	check_error(T_TEXT, "\xc0\xaf", want);
	snprintf(want, sizeof want, "invalid UTF-8 in text \"\\xed\\xa0\\x80\"%s", hint);
	check_error(T_JSON, "\xed\xa0\x80", want);
	snprintf(want, sizeof want, "invalid UTF-8 in text \"\\xf4\\x90\\x80\\x80\"%s", hint);
	check_error(T_DATE, "\xf4\x90\x80\x80", want);
	check_text(T_TEXT, "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");
}

/* Elements split on the element type's delimiter: box's is ';', and its
 * text has commas of its own. */
static void test_array_delimiter(void **state)
{
	ColumnType box = array_delim(VT_TEXT, ';');

	(void) state;
	check_text(box, "{(1,1),(0,0);(3,3),(2,2)}", "[\"(1,1),(0,0)\",\"(3,3),(2,2)\"]");
	check_text(box, "{NULL;(1e+20,2),(0,0)}", "[null,\"(1e+20,2),(0,0)\"]");
	check_text(box, "{{(1,1),(0,0);(2,2),(0,0)};{(3,3),(0,0);(4,4),(0,0)}}",
		   "[[\"(1,1),(0,0)\",\"(2,2),(0,0)\"],[\"(3,3),(0,0)\",\"(4,4),(0,0)\"]]");
	check_text(box, "[0:1]={(1,1),(0,0);(2,2),(1,1)}",
		   "[\"(1,1),(0,0)\",\"(2,2),(1,1)\"]");
	/* quoted when the element holds the delimiter */
	check_text(box, "{\"a;b\";c,d}", "[\"a;b\",\"c,d\"]");
	check_text(box, "{}", "[]");
	check_error(box, "{a;}",
		    "malformed array literal: \"{a;}\": unexpected character at offset 3");
	check_error(box, "{{a};b}",
		    "malformed array literal: \"{{a};b}\": sub-arrays must have matching dimensions");
	/* other element types split the same way */
	check_text(array_delim(VT_INT, ';'), "{1;-2;NULL}", "[1,-2,null]");
	check_text(array_delim(VT_INT, '|'), "{{1|2}|{3|4}}", "[[1,2],[3,4]]");
	/* a comma is then part of an element */
	check_error(array_delim(VT_INT, ';'), "{1,2}",
		    "invalid input for type integer: \"1,2\"");
	/* a delimiter that would have a meaning of its own is refused */
	check_error(array_delim(VT_INT, '"'), "{1}",
		    "arrays with element delimiter 34 are not supported");
	check_error(array_delim(VT_INT, '\0'), "{1}",
		    "arrays with element delimiter 0 are not supported");
	check_error(array_delim(VT_INT, ' '), "{1}",
		    "arrays with element delimiter 32 are not supported");
}

static void test_array_text(void **state)
{
	ColumnType t = array_of(VT_TEXT);

	(void) state;
	check_text(t, "{\"a b\",\"c\\\"d\",\"e\\\\f\",NULL,\"NULL\"}",
		   "[\"a b\",\"c\\\"d\",\"e\\\\f\",null,\"NULL\"]");
	check_text(t, "{abc,def}", "[\"abc\",\"def\"]");
	check_text(t, "{\"a,b\",\"{x}\",\"\"}", "[\"a,b\",\"{x}\",\"\"]");
	check_text(t, "{\"null\",NULLx,xNULL}", "[\"null\",\"NULLx\",\"xNULL\"]");
	/* array_in's unquoted white space: trimmed outside, kept inside. */
	check_text(t, "{ a , b c }", "[\"a\",\"b c\"]");
	/* A backslash takes any byte as is. */
	check_text(t, "{\"\\a\\b\"}", "[\"ab\"]");
	/* Control characters as \u00XX; UTF-8 passes through. */
	check_text(t, "{\"a\tb\",\"c\nd\",\"\x01\x1f\x7f\"}",
		   "[\"a\\u0009b\",\"c\\u000ad\",\"\\u0001\\u001f\x7f\"]");
	check_text(t, "{h\xc3\xa9llo,\"\xe6\x97\xa5\xe6\x9c\xac\",\xf0\x9f\x98\x80}",
		   "[\"h\xc3\xa9llo\",\"\xe6\x97\xa5\xe6\x9c\xac\",\"\xf0\x9f\x98\x80\"]");
	check_text(t, "{{a,b},{c,d}}", "[[\"a\",\"b\"],[\"c\",\"d\"]]");
	check_text(t, "{}", "[]");
	/* Point and other composite-looking text stays a string. */
	check_text(t, "{\"(1,2)\",\"(3,4)\"}", "[\"(1,2)\",\"(3,4)\"]");

	check_error(t, "{\"\xff\"}", "invalid UTF-8 in array element: \"\\xff\"");
	check_error(t, "{a\xc3}", "invalid UTF-8 in array element: \"a\\xc3\"");
	check_error(t, "{\"\xc0\xaf\"}", "invalid UTF-8 in array element: \"\\xc0\\xaf\"");
	check_error(t, "{\"\xed\xa0\x80\"}",
		    "invalid UTF-8 in array element: \"\\xed\\xa0\\x80\"");
	check_error(t, "{\"\xf4\x90\x80\x80\"}",
		    "invalid UTF-8 in array element: \"\\xf4\\x90\\x80\\x80\"");
}

static void test_array_bool(void **state)
{
	ColumnType t = array_of(VT_BOOL);

	(void) state;
	check_text(t, "{t,f,NULL}", "[true,false,null]");
	check_text(t, "{{t,f},{f,t}}", "[[true,false],[false,true]]");
	check_error(t, "{t,x}", "invalid input for type boolean: \"x\"");
	check_error(t, "{true}", "invalid input for type boolean: \"true\"");
}

static void test_array_float(void **state)
{
	ColumnType t = array_of(VT_FLOAT);

	(void) state;
	check_text(t, "{1.5,NaN,Infinity,-Infinity,-0,1e+308,5e-324,NULL}",
		   "[1.5,\"NaN\",\"Infinity\",\"-Infinity\",-0,1e+308,5e-324,null]");
	check_text(t, "{1.2345678901234567e-20,3}", "[1.2345678901234567e-20,3]");
	/* array_in's forms that are not JSON come out as JSON. */
	check_text(t, "{.5,-.5,+1,1.,007,1E5}", "[0.5,-0.5,1,1,7,1e5]");
	check_error(t, "{1e999}",
		    "value out of range for type double precision: \"1e999\"");
	check_error(t, "{nan}", "invalid input for type double precision: \"nan\"");
	check_error(t, "{0x10}", "invalid input for type double precision: \"0x10\"");
}

static void test_array_numeric(void **state)
{
	(void) state;
	check_text(array_of(VT_NUMERIC_NUM), "{12.00,NaN,-0.50,NULL}",
		   "[12.00,\"NaN\",-0.50,null]");
	check_text(array_of(VT_NUMERIC_TEXT),
		   "{123456789012345678901234567890,Infinity,-Infinity,0.000001}",
		   "[123456789012345678901234567890,\"Infinity\",\"-Infinity\",0.000001]");
	check_error(array_of(VT_NUMERIC_TEXT), "{1e5}",
		    "invalid input for type numeric: \"1e5\"");
	check_error(array_of(VT_NUMERIC_NUM), "{1,a}",
		    "invalid input for type numeric: \"a\"");
}

static void test_array_json(void **state)
{
	ColumnType t = array_of(VT_JSON);
	char *deep, *lit;
	size_t depth = 7000;

	(void) state;
	check_text(t, "{\"{\\\"a\\\": 1}\",\"[1, 2]\",3,\"\\\"s\\\"\",NULL,\"null\",true}",
		   "[{\"a\": 1},[1, 2],3,\"s\",null,null,true]");
	check_text(t, "{\"{\\\"a\\\": {\\\"b\\\": [1, {\\\"c\\\": \\\"x\\\\\\\\y\\\"}]}}\"}",
		   "[{\"a\": {\"b\": [1, {\"c\": \"x\\\\y\"}]}}]");
	check_text(t, "{\" { } \",\"[ ]\",-1.5e3,\"\\\"\\\\u00e9\\\"\"}",
		   "[ { } ,[ ],-1.5e3,\"\\u00e9\"]");
	check_text(t, "{{1,2},{3,4}}", "[[1,2],[3,4]]");

#define BAD_JSON(lit, elem) check_error(t, lit, "invalid input for type json: \"" elem "\"")
	BAD_JSON("{\"{bad\"}", "{bad");
	BAD_JSON("{\"{\\\"a\\\" 1}\"}", "{\\\"a\\\" 1}");
	BAD_JSON("{\"[1,]\"}", "[1,]");
	BAD_JSON("{\"[1}\"}", "[1}");
	BAD_JSON("{\"{\\\"a\\\":1]\"}", "{\\\"a\\\":1]");
	BAD_JSON("{\"1 2\"}", "1 2");
	BAD_JSON("{01}", "01");
	BAD_JSON("{tru}", "tru");
	BAD_JSON("{\"\\\"\\\\x\\\"\"}", "\\\"\\\\x\\\"");
	BAD_JSON("{\"\\\"\\\\u12\\\"\"}", "\\\"\\\\u12\\\"");
	BAD_JSON("{\"\\\"a\tb\\\"\"}", "\\\"a\\x09b\\\"");
	BAD_JSON("{\"\\\"\xff\\\"\"}", "\\\"\\xff\\\"");
	BAD_JSON("{\"{\\\"a\\\":1,}\"}", "{\\\"a\\\":1,}");
	BAD_JSON("{\"{1:2}\"}", "{1:2}");
#undef BAD_JSON

	/* Deep nesting: fine to PostgreSQL's depth, refused past it. */
	deep = malloc(2 * depth + 1);
	lit = malloc(2 * depth + 8);
	assert_non_null(deep);
	assert_non_null(lit);
	for (size_t d = 100; d <= depth; d += depth - 100) {
		memset(deep, '[', d);
		memset(deep + d, ']', d);
		deep[2 * d] = '\0';
		snprintf(lit, 2 * depth + 8, "{\"%s\"}", deep);
		if (d < 6400) {
			char *want = malloc(2 * d + 3);

			assert_non_null(want);
			snprintf(want, 2 * d + 3, "[%s]", deep);
			check_text(t, lit, want);
			free(want);
		} else {
			Value v;
			char *copy;

			assert_false(convert_copy(t, lit, strlen(lit), &v, &copy));
			free(copy);
			assert_non_null(strstr(errbuf, "invalid input for type json"));
		}
	}
	free(deep);
	free(lit);
}

static void test_array_bytea(void **state)
{
	ColumnType t = array_of(VT_BYTEA);

	(void) state;
	check_text(t, "{\"\\\\x01ff\",NULL,\"\\\\x\"}", "[\"\\\\x01ff\",null,\"\\\\x\"]");
	check_text(t, "{{\"\\\\x00\"},{\"\\\\xAB\"}}", "[[\"\\\\x00\"],[\"\\\\xAB\"]]");
	check_error(t, "{\"\\\\x0\"}", "invalid input for type bytea: \"\\\\\\\\x0\"");
	check_error(t, "{\"\\\\xzz\"}", "invalid input for type bytea: \"\\\\\\\\xzz\"");
	check_error(t, "{abc}", "invalid input for type bytea: \"abc\"");
	check_error(t, "{\"\"}", "invalid input for type bytea: \"\"");
}

static void test_array_dates_and_times(void **state)
{
	(void) state;
	check_text(array_of(VT_DATE), "{2024-02-29,infinity,\"0044-03-15 BC\",NULL}",
		   "[\"2024-02-29\",\"infinity\",\"0044-03-15 BC\",null]");
	check_error(array_of(VT_DATE), "{\"\"}", "invalid input for type date: \"\"");
	check_text(array_of(VT_TIMESTAMP),
		   "{\"2024-01-01 00:00:00.5\",infinity,\"0044-03-15 12:00:00 BC\",NULL}",
		   "[\"2024-01-01 00:00:00.500000\",\"infinity\",\"0044-03-15 12:00:00 BC\",null]");
	check_text(array_of(VT_TIMESTAMPTZ),
		   "{\"2024-01-01 01:00:00+05:30\",\"2024-01-01 00:00:00.25+00\",-infinity}",
		   "[\"2023-12-31 19:30:00\",\"2024-01-01 00:00:00.250000\",\"-infinity\"]");
	check_error(array_of(VT_TIMESTAMP), "{\"2023-02-29 00:00:00\"}",
		    "invalid input for type timestamp: \"2023-02-29 00:00:00\"");
	check_error(array_of(VT_TIMESTAMPTZ), "{\"2024-01-01 00:00:00\"}",
		    "invalid input for type timestamp with time zone: \"2024-01-01 00:00:00\"");
	/* The quoted path that unescapes first. */
	check_text(array_of(VT_TIMESTAMP), "{\"2024-01-01 00:00:0\\0\"}",
		   "[\"2024-01-01 00:00:00\"]");
}

/*
 * Writes an element as array_out would: quoted when empty, when it has
 * a special byte or white space, or when it reads NULL.
 */
static size_t pg_array_element(char *w, const char *s, size_t n)
{
	bool quote = n == 0 || (n == 4 && strncasecmp(s, "null", 4) == 0);
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (strchr("{}\",\\ \t\n\r\v\f", s[i]) != NULL)
			quote = true;
	if (quote)
		w[k++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (quote && (s[i] == '"' || s[i] == '\\'))
			w[k++] = '\\';
		w[k++] = s[i];
	}
	if (quote)
		w[k++] = '"';
	return k;
}

/*
 * Random text arrays, written as array_out writes them: SQLite's JSON
 * functions must read every element back exactly.
 */
static void test_array_text_round_trip(void **state)
{
	static const char *const pieces[] = {
		"a", "Z", "0", " ", "\t", "\n", "\x01", "\x1f", "\x7f", "\"", "\\",
		",", "{", "}", "NULL", "null", "\xc3\xa9", "\xe2\x82\xac",
		"\xf0\x9f\x98\x80", "[", "]", ":", "'",
	};
	sqlite3 *db;
	sqlite3_stmt *len_stmt, *get_stmt;

	(void) state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
		"SELECT json_valid(?1), json_array_length(?1)", -1, &len_stmt,
		NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
		"SELECT json_type(?1, '$[' || ?2 || ']'), json_extract(?1, '$[' || ?2 || ']')",
		-1, &get_stmt, NULL), SQLITE_OK);

	for (int round = 0; round < 500; round++) {
		enum { NELEM = 12, ELEM_MAX = 64 };
		char elems[NELEM][ELEM_MAX];
		size_t lens[NELEM];
		bool nulls[NELEM];
		char lit[NELEM * (2 * ELEM_MAX + 3) + 3];
		size_t k = 0;
		int nelem = (int) rng_below(NELEM) + 1;
		Value v;
		char *copy;

		lit[k++] = '{';
		for (int i = 0; i < nelem; i++) {
			size_t npieces = rng_below(8);

			lens[i] = 0;
			nulls[i] = rng_below(8) == 0;
			for (size_t p = 0; p < npieces; p++) {
				const char *piece = pieces[rng_below(sizeof pieces / sizeof pieces[0])];

				memcpy(elems[i] + lens[i], piece, strlen(piece));
				lens[i] += strlen(piece);
			}
			if (i > 0)
				lit[k++] = ',';
			if (nulls[i]) {
				memcpy(lit + k, "NULL", 4);
				k += 4;
			} else {
				k += pg_array_element(lit + k, elems[i], lens[i]);
			}
		}
		lit[k++] = '}';

		if (!convert_copy(array_of(VT_TEXT), lit, k, &v, &copy))
			fail_msg("\"%.*s\": %s", (int) k, lit, errbuf);
		assert_int_equal(v.kind, VAL_TEXT);

		sqlite3_bind_text(len_stmt, 1, v.p, (int) v.len, SQLITE_TRANSIENT);
		assert_int_equal(sqlite3_step(len_stmt), SQLITE_ROW);
		if (sqlite3_column_int(len_stmt, 0) != 1)
			fail_msg("not valid JSON: %.*s", (int) v.len, v.p);
		assert_int_equal(sqlite3_column_int(len_stmt, 1), nelem);
		sqlite3_reset(len_stmt);

		for (int i = 0; i < nelem; i++) {
			const unsigned char *type, *got;

			sqlite3_bind_text(get_stmt, 1, v.p, (int) v.len, SQLITE_TRANSIENT);
			sqlite3_bind_int(get_stmt, 2, i);
			assert_int_equal(sqlite3_step(get_stmt), SQLITE_ROW);
			type = sqlite3_column_text(get_stmt, 0);
			if (nulls[i]) {
				assert_string_equal((const char *) type, "null");
			} else {
				assert_string_equal((const char *) type, "text");
				got = sqlite3_column_text(get_stmt, 1);
				assert_int_equal(sqlite3_column_bytes(get_stmt, 1), lens[i]);
				assert_memory_equal(got, elems[i], lens[i]);
			}
			sqlite3_reset(get_stmt);
		}
		free(copy);
	}
	sqlite3_finalize(len_stmt);
	sqlite3_finalize(get_stmt);
	sqlite3_close(db);
}

/* ---------------------------------------------------------------------
 * Messages, buffers, robustness
 * ------------------------------------------------------------------ */

static void test_error_text(void **state)
{
	Value v;
	char small[16];

	(void) state;
	/* Non-printable bytes escaped, quotes and backslashes too. */
	check_error_bytes(T_INT, "1\0002", 3,
			  "invalid input for type integer: \"1\\x002\"");
	check_error(T_INT, "12\x01\xff\"\\",
		    "invalid input for type integer: \"12\\x01\\xff\\\"\\\\\"");
	/* Cut at 40 bytes. */
	check_error(T_INT, "1234567890123456789012345678901234567890x",
		    "invalid input for type integer: "
		    "\"1234567890123456789012345678901234567890\"...");
	check_error(T_INT, "123456789012345678901234567890123456789x",
		    "invalid input for type integer: "
		    "\"123456789012345678901234567890123456789x\"");
	/* A small buffer gets a cut message; no buffer gets none. */
	assert_false(values_convert(T_INT, "x", 1, &vb, &v, small, sizeof small));
	assert_string_equal(small, "invalid input f");
	assert_false(values_convert(T_INT, "x", 1, &vb, &v, NULL, 0));
	assert_false(values_convert(T_INT, "x", 1, &vb, &v, small, 0));
	/* An unknown ValueType is an error, not a crash. */
	{
		ColumnType bad = { (ValueType) 99, VT_TEXT, ',' };

		assert_false(values_convert(bad, "1", 1, &vb, &v, errbuf, sizeof errbuf));
		assert_string_equal(errbuf, "unknown value type 99");
	}
}

/* The buffer is reset for each value and only ever grows: once warm, no
 * allocation, and a result never outlives the next conversion's reset. */
static void test_buffer_reuse(void **state)
{
	char big[4096];
	size_t k = 0;
	Value v;
	char *data, *copy;
	size_t cap;

	(void) state;
	big[k++] = '{';
	for (int i = 0; i < 500; i++)
		k += (size_t) sprintf(big + k, "%s%d", i ? "," : "", i);
	big[k++] = '}';

	assert_true(convert_copy(array_of(VT_INT), big, k, &v, &copy));
	free(copy);
	data = vb.data;
	cap = vb.cap;
	assert_true(cap >= v.len);

	for (int round = 0; round < 3; round++) {
		check_text(array_of(VT_INT), "{1,2}", "[1,2]");
		assert_int_equal(vb.len, 5);
		check_int(T_INT, "5", 5);
		assert_int_equal(vb.len, 0);
		check_text(T_TSTZ, "2024-01-01 01:00:00+05:30", "2023-12-31 19:30:00");
		check_blob("\\x0102", "\x01\x02", 2);
		assert_true(convert_copy(array_of(VT_INT), big, k, &v, &copy));
		free(copy);
		assert_ptr_equal(vb.data, data);
		assert_int_equal(vb.cap, cap);
	}

	values_buf_free(&vb);
	assert_null(vb.data);
	assert_int_equal(vb.cap, 0);
	assert_int_equal(vb.len, 0);
	values_buf_free(&vb);     /* twice is fine */
}

/* Every strict prefix of a valid value: a clean answer, no over-read. */
static void test_prefixes(void **state)
{
	static const struct {
		ColumnType t;
		const char *s;
	} cases[] = {
		{ { VT_INT, VT_TEXT, ',' }, "-9223372036854775808" },
		{ { VT_FLOAT, VT_TEXT, ',' }, "-1.2345678901234567e-300" },
		{ { VT_NUMERIC_NUM, VT_TEXT, ',' }, "-12345.678" },
		{ { VT_NUMERIC_TEXT, VT_TEXT, ',' }, "-123456789012345678901234567890.5" },
		{ { VT_BYTEA, VT_TEXT, ',' }, "\\x00ff80" },
		{ { VT_TIMESTAMP, VT_TEXT, ',' }, "0044-03-15 12:00:00.25 BC" },
		{ { VT_TIMESTAMPTZ, VT_TEXT, ',' }, "0044-03-15 12:00:00.25+05:30:15 BC" },
		{ { VT_ARRAY, VT_INT, ',' }, "[0:1][1:2]={{1,2},{3,NULL}}" },
		{ { VT_ARRAY, VT_TEXT, ',' }, "{\"a\\\"b\",c,NULL,\"\xc3\xa9\"}" },
		{ { VT_ARRAY, VT_JSON, ',' }, "{\"{\\\"a\\\": [1, true, null, \\\"x\\\"]}\",2}" },
		{ { VT_ARRAY, VT_FLOAT, ',' }, "{1.5e+10,NaN,-Infinity}" },
		{ { VT_ARRAY, VT_BYTEA, ',' }, "{\"\\\\x01ff\"}" },
		{ { VT_ARRAY, VT_TIMESTAMPTZ, ',' }, "{\"2024-01-01 01:00:00.5+05:30\"}" },
		{ { VT_ARRAY, VT_TEXT, ';' }, "{{(1,1),(0,0);\"(2,2),(1,1)\"};{NULL;(3,3),(2,2)}}" },
		{ { VT_ARRAY, VT_BOOL, ',' }, "{{t,f},{f,t}}" },
	};

	(void) state;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t n = strlen(cases[c].s);
		Value v;
		char *copy;

		assert_true(convert_copy(cases[c].t, cases[c].s, n, &v, &copy));
		free(copy);
		for (size_t len = 0; len < n; len++) {
			bool ok = convert_copy(cases[c].t, cases[c].s, len, &v, &copy);

			if (ok)
				assert_result_placed(&v, copy, len);
			else
				assert_true(errbuf[0] != '\0');
			if (cases[c].t.vt == VT_ARRAY) {
				assert_false(ok);
				if (strstr(errbuf, "malformed array literal") == NULL)
					fail_msg("\"%.*s\": %s", (int) len, cases[c].s, errbuf);
			}
			free(copy);
		}
	}
}

/*
 * Random and mutated input for every type: no crash, no over-read, an
 * error message on failure, and arrays that convert are valid JSON.
 */
static void test_random_input(void **state)
{
	static const char *const seeds[] = {
		"{1,2,NULL}", "{{\"a\",\"b\"},{c,d}}", "[0:1]={t,f}",
		"{\"{\\\"k\\\": [1]}\"}", "{1.5,NaN}", "2024-01-01 01:00:00.5+05:30",
		"\\x00ff", "-12.50", "Infinity", "{\"\\\\x01\"}",
	};
	static const char alphabet[] = "{}[]:=,;\"\\ \t0123456789.-+eEtfNULxnaI\xc3\xa9\xff:BC";
	static const ValueType vts[] = {
		VT_TEXT, VT_BOOL, VT_INT, VT_FLOAT, VT_NUMERIC_NUM,
		VT_NUMERIC_TEXT, VT_BYTEA, VT_DATE, VT_TIMESTAMP,
		VT_TIMESTAMPTZ, VT_JSON, VT_ARRAY,
	};
	sqlite3 *db;
	sqlite3_stmt *stmt;

	(void) state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_valid(?1)", -1,
					    &stmt, NULL), SQLITE_OK);
	for (int i = 0; i < 60000; i++) {
		char in[64];
		size_t n;
		ColumnType t;
		Value v;
		char *copy;
		bool ok;

		if (rng_below(2)) {
			const char *seed = seeds[rng_below(sizeof seeds / sizeof seeds[0])];
			size_t edits = rng_below(4) + 1;

			n = strlen(seed);
			memcpy(in, seed, n);
			for (size_t e = 0; e < edits; e++) {
				size_t at = rng_below(n + 1);

				switch (rng_below(3)) {
				case 0:     /* replace */
					if (at < n)
						in[at] = alphabet[rng_below(sizeof alphabet - 1)];
					break;
				case 1:     /* delete */
					if (at < n) {
						memmove(in + at, in + at + 1, n - at - 1);
						n--;
					}
					break;
				default:    /* insert */
					if (n < sizeof in) {
						memmove(in + at + 1, in + at, n - at);
						in[at] = alphabet[rng_below(sizeof alphabet - 1)];
						n++;
					}
					break;
				}
			}
		} else {
			n = rng_below(sizeof in);
			for (size_t k = 0; k < n; k++)
				in[k] = alphabet[rng_below(sizeof alphabet - 1)];
		}
		t.vt = vts[rng_below(sizeof vts / sizeof vts[0])];
		t.elem_vt = vts[rng_below(sizeof vts / sizeof vts[0] - 1)];
		t.delim = rng_below(4) == 0 ? ';' : ',';

		ok = convert_copy(t, in, n, &v, &copy);
		if (!ok) {
			assert_true(errbuf[0] != '\0');
		} else {
			assert_result_placed(&v, copy, n);
			if (t.vt == VT_ARRAY) {
				sqlite3_bind_text(stmt, 1, v.p, (int) v.len, SQLITE_TRANSIENT);
				assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
				if (sqlite3_column_int(stmt, 0) != 1)
					fail_msg("\"%.*s\" gave invalid JSON \"%.*s\"",
						 (int) n, in, (int) v.len, v.p);
				sqlite3_reset(stmt);
			}
		}
		free(copy);
	}
	sqlite3_finalize(stmt);
	sqlite3_close(db);
}

/*
 * A buffer that a huge value grew is freed by values_buf_trim(); one of
 * the usual size is kept, so warm conversions allocate nothing, and a
 * trimmed buffer converts as before.
 */
static void test_buf_trim(void **state)
{
	size_t n = VALUES_BUF_KEEP + 1, hexlen = 2 + 2 * n;
	char *hex = malloc(hexlen);
	const char *kept;
	Value v;

	(void) state;
	assert_non_null(hex);
	memcpy(hex, "\\x", 2);
	memset(hex + 2, 'a', hexlen - 2);
	assert_true(values_convert(T_BYTEA, hex, hexlen, &vb, &v, errbuf, sizeof errbuf));
	assert_int_equal(v.kind, VAL_BLOB);
	assert_int_equal(v.len, n);
	assert_true(vb.cap > VALUES_BUF_KEEP);
	values_buf_trim(&vb);
	assert_null(vb.data);
	assert_int_equal(vb.cap, 0);

	/* the usual size stays */
	assert_true(values_convert(T_BYTEA, hex, 2 + 2 * 1000, &vb, &v, errbuf, sizeof errbuf));
	assert_int_equal(v.len, 1000);
	assert_int_equal((unsigned char)v.p[999], 0xaa);
	kept = vb.data;
	assert_non_null(kept);
	values_buf_trim(&vb);
	assert_ptr_equal(vb.data, kept);
	assert_true(values_convert(T_BYTEA, hex, 2 + 2 * 10, &vb, &v, errbuf, sizeof errbuf));
	assert_ptr_equal(vb.data, kept);
	assert_int_equal(v.len, 10);
	free(hex);
}

#define TEST(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_builtin_scalars),
		TEST(test_buf_trim),
		TEST(test_builtin_unknown),
		TEST(test_builtin_numeric_typmod),
		TEST(test_builtin_arrays),
		TEST(test_builtin_table_consistent),
		TEST(test_declared_type),
		TEST(test_value_type_numbers),
		TEST(test_retype),
		TEST(test_text_json_as_is),
		TEST(test_bool),
		TEST(test_int),
		TEST(test_float),
		TEST(test_float_many_digits),
		TEST(test_float_round_trip),
		TEST(test_float_locale),
		TEST(test_numeric_num),
		TEST(test_numeric_fast_path),
		TEST(test_numeric_text),
		TEST(test_bytea),
		TEST(test_date),
		TEST(test_timestamp),
		TEST(test_timestamptz),
		TEST(test_timestamptz_against_gmtime),
		TEST(test_array_int),
		TEST(test_array_malformed),
		TEST(test_text_not_utf8),
		TEST(test_array_delimiter),
		TEST(test_array_text),
		TEST(test_array_bool),
		TEST(test_array_float),
		TEST(test_array_numeric),
		TEST(test_array_json),
		TEST(test_array_bytea),
		TEST(test_array_dates_and_times),
		TEST(test_array_text_round_trip),
		TEST(test_error_text),
		TEST(test_buffer_reuse),
		TEST(test_prefixes),
		TEST(test_random_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

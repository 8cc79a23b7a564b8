/*
 * test_copy_ranges.c: the key ranges of a copy in parts (copy_ranges.c):
 * their text round trip, a clean error for every malformed or truncated
 * text (each parsed from a heap copy of exactly its length, so ASan sees a
 * read past it), key order (integers by value, text byte-wise, a prefix
 * first), and which changes apply by the range that holds their key.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "pgmirror/copy_keys.h"
#include "pgmirror/copy_ranges.h"

static Value int_val(int64_t i)
{
	Value v = {.kind = VAL_INT, .i = i};

	return v;
}

static Value text_val(const char *s)
{
	Value v = {.kind = VAL_TEXT, .p = s, .len = strlen(s)};

	return v;
}

/* Two tries: (-inf, (10,'b')] at 0/100, ((10,'b'), (20,'a\n:;')] at 0/200. */
static CopyRanges *two_tries(void)
{
	CopyRanges *cr = calloc(1, sizeof(*cr));
	Value k1[2] = {int_val(10), text_val("b")};
	Value k2[2] = {int_val(20), text_val("a\n:;")};
	Value k1b[2] = {int_val(5), text_val("zz")};

	cr->nkeys = 2;
	cr->signature = 0xabcdef;
	copy_ranges_reach(cr, 0x100, k1b); /* the first part of the first try */
	copy_ranges_reach(cr, 0x100, k1);  /* its second part moves the same range on */
	copy_ranges_reach(cr, 0x200, k2);
	return cr;
}

static void test_round_trip(void **state)
{
	CopyRanges *cr = two_tries(), *back;
	char *text, *again, err[128];

	(void)state;
	assert_int_equal(cr->n, 2);
	text = copy_ranges_format(cr);
	assert_string_equal(text, "pgmirror-copy 1 0000000000abcdef\n"
			    "0/100 i10;t1:b\n"
			    "0/200 i20;t4:a\n:;\n");
	assert_true(copy_state_unfinished(text));
	back = copy_ranges_parse(text, err, sizeof(err));
	assert_non_null(back);
	assert_int_equal(back->signature, 0xabcdef);
	again = copy_ranges_format(back);
	assert_string_equal(again, text);
	assert_false(copy_ranges_done(back));
	copy_ranges_reach(back, 0x300, NULL);
	assert_true(copy_ranges_done(back));
	assert_int_equal(copy_ranges_max_lsn(back), 0x300);
	free(again);
	again = copy_ranges_format(back);
	assert_false(copy_state_unfinished(again));
	assert_false(copy_state_unfinished(NULL));
	free(again);
	free(text);
	copy_ranges_free(back);
	copy_ranges_free(cr);
}

static void test_malformed(void **state)
{
	static const char *bad[] = {
		"", "pgmirror-copy 2 00\n", "pgmirror-copy 1 zz\n",
		"pgmirror-copy 1 01\n0/100\n", "pgmirror-copy 1 01\nx/1 i1;i2;\n",
		"pgmirror-copy 1 01\n0/100 i1;i2;\n0/200 i3;\n", /* two keys, then one */
		"pgmirror-copy 1 01\n0/100 i1;\n0/200 i3;i4;\n", /* one, then two */
		"pgmirror-copy 1 01\n0/100 \n",               /* a key of no item */
		"pgmirror-copy 1 01\n0/100 i1;",               /* no line end */
		"pgmirror-copy 1 01\n0/100 i1;t1:a",
		"pgmirror-copy 1 01\n0/100 i1;t9:ab\n",      /* text past the end */
		"pgmirror-copy 1 01\n0/100 i1;t-1:\n",
		"pgmirror-copy 1 01\n0/100 q1;i2;\n",
		"pgmirror-copy 1 01\n0/100 i99999999999999999999;i2;\n",
		"pgmirror-copy 1 01\n0/200 i1;i2;\n0/100 i3;i4;\n", /* an older try after */
		"pgmirror-copy 1 01\n0/100 *\n0/200 i3;i4;\n",      /* after the end */
		"pgmirror-copy 1 01\n0/100 i1;i2;x\n",
		"pgmirror-copy 1 01\n0/100 i1;z1:a\n",           /* no such kind */
		"pgmirror-copy 1 01\n0/100 i1;n1:1\n0/200 i2;d1:1\n", /* kinds differ */
		"pgmirror-copy 1 01\n0/100 i1;n1:1\n0/200 t1:2i2;\n",
		"pgmirror-copy 1 01\n0/100 i1;x3:\\x1\n",      /* an odd hex */
		"pgmirror-copy 1 01\n0/100 i1;x4:\\xAB\n",     /* not as written */
		"pgmirror-copy 1 01\n0/100 i1;x2:ab\n",
		"pgmirror-copy 1 01\n0/100 i1;f3:1.x\n",       /* no float */
		"pgmirror-copy 1 01\n0/100 i1;r0:\n",
		"pgmirror-copy 1 01\n0/100 i1;v5:1 mox\n", /* no interval */
		"pgmirror-copy 1 01\n0/100 i1;v9:1 fortnight\n",
	};
	const char *good = "pgmirror-copy 1 01\n0/100 i1;t2:ab\n0/200 *\n";
	static const char *kinds[] = {
		"pgmirror-copy 1 01\n0/100 x4:\\xabf3:1.5\n0/200 x2:\\xf3:NaN\n",
		"pgmirror-copy 1 01\n0/100 v8:-1 yearsh8:24:00:00\n0/200 v9:-infinityh8:00:00:00\n",
	};
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CopyRanges *cr = copy_ranges_parse(bad[i], err, sizeof(err));

		if (cr != NULL)
			fail_msg("parsed a malformed copy_state: %s", bad[i]);
		assert_non_null(strstr(err, "malformed near byte"));
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CopyRanges *cr = copy_ranges_parse(kinds[i], err, sizeof(err));

		if (cr == NULL)
			fail_msg("did not parse %s: %s", kinds[i], err);
		copy_ranges_free(cr);
	}
	/* every prefix of a good text: a clean error or a shorter good one */
	for (size_t len = 0; len < strlen(good); len++) {
		char *p = malloc(len + 1);
		CopyRanges *cr;

		memcpy(p, good, len);
		p[len] = '\0';
		cr = copy_ranges_parse(p, err, sizeof(err));
		if (cr != NULL) /* ends at a line's end */
			assert_int_equal(p[len - 1], '\n');
		copy_ranges_free(cr);
		free(p);
	}
}

static void test_key_order(void **state)
{
	CopyKeyItem it = {.kind = 'i', .i = 7};
	CopyKeyItem abc = {.kind = 't', .s = "abc", .len = 3};
	Value v;

	(void)state;
	v = int_val(6);
	assert_true(copy_key_compare(&v, &it, 1) < 0);
	v = int_val(7);
	assert_int_equal(copy_key_compare(&v, &it, 1), 0);
	v = int_val(INT64_MIN);
	assert_true(copy_key_compare(&v, &it, 1) < 0);
	v = text_val("ab");
	assert_true(copy_key_compare(&v, &abc, 1) < 0);  /* a prefix first */
	v = text_val("abd");
	assert_true(copy_key_compare(&v, &abc, 1) > 0);
	v = text_val("\xc3\xa9"); /* é after every ASCII byte, as COLLATE "C" */
	assert_true(copy_key_compare(&v, &abc, 1) > 0);
	v = text_val("abc");
	assert_int_equal(copy_key_compare(&v, &abc, 1), 0);
}

/* Each list in the source's order (equal neighbours marked by "="): every
 * pair compares as its places say. The server's own orderings of many
 * more values are test_copy_key_order.py's. */
static void check_sorted(char kind, const char *const *vals, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int want = 0, got;

			for (int k = i < j ? i : j; k < (i < j ? j : i); k++)
				if (strcmp(vals[k + 1], "=") != 0 && strcmp(vals[k], "=") != 0)
					want = i < j ? -1 : 1;
			if (strcmp(vals[i], "=") == 0 || strcmp(vals[j], "=") == 0)
				continue;
			got = copy_key_cmp_text(kind, vals[i], strlen(vals[i]), vals[j],
						strlen(vals[j]));
			if ((got > 0) - (got < 0) != want)
				fail_msg("kind %c: %s vs %s gave %d, expected %d", kind, vals[i], vals[j],
					 got, want);
		}
}

static void test_kind_order(void **state)
{
	static const char *const numeric[] = {
		"-Infinity", "-1e+20", "-100", "-99.5", "-1.01", "-1", "=", "-1.000", "-0.5",
		"-1.5e-05", "0", "=", "0.000", "=", "-0", "1e-300", "0.00001", "=", "1e-05",
		"0.1", "1", "=", "1.0", "=", "1.00", "1.0000000000000000001", "1.5", "9.99",
		"10", "=", "1e1", "99", "123456789012345678901234567890", "Infinity", "NaN",
	};
	static const char *const times[] = {
		"-infinity", "4713-01-01 00:00:00 BC", "0044-03-15 12:00:00 BC",
		"0001-12-31 23:59:59.999999 BC", "0001-01-01 00:00:00", "1999-12-31 23:59:59",
		"1999-12-31 23:59:59.000001", "2000-01-01 00:00:00", "=", "2000-01-01 00:00:00.000000",
		"2000-01-01 00:00:00.100000", "9999-12-31 23:59:59", "10000-01-01 00:00:00",
		"294276-12-31 23:59:59.999999", "infinity",
	};
	static const char *const dates[] = {
		"-infinity", "0002-01-01 BC", "0001-12-31 BC", "0001-01-01", "2024-02-29",
		"9999-12-31", "10000-01-01", "5874897-12-31", "infinity",
	};
	static const char *const floats[] = {
		"-Infinity", "-1e+300", "-1.5", "-5e-324", "-0", "=", "0", "4.9406564584124654e-324",
		"0.1", "=", "0.10000000000000001", "0.10000000000000002", "1", "=", "1.0", "1e+308", "Infinity",
		"NaN", "=", "NaN",
	};
	static const char *const float4s[] = {
		"-Infinity", "-3.4028235e+38", "-1", "0", "=", "-0", "1.4e-45", "0.1", "=",
		"0.100000001", "0.100000009", "1", "Infinity", "NaN",
	};
	static const char *const clocks[] = {
		"00:00:00", "=", "00:00:00.000", "00:00:00.000001", "00:00:01", "09:59:59.999999",
		"10:00:00", "23:59:59.999999", "24:00:00",
	};
	static const char *const intervals[] = {
		"-infinity", "-178000000 years", "-1 years -2 mons", "-1 days", "=", "-24:00:00",
		"-00:00:00.000001", "00:00:00", "=", "1 mon -30 days", "00:00:00.000001", "1 day",
		"=", "24:00:00", "=", "1 mon -29 days", "29 days 24:00:00", "=", "1 mon", "=",
		"30 days", "=", "720:00:00", "1 mon 00:00:00.5", "1 year", "=", "12 mons", "=",
		"360 days", "1 year 2 mons -3 days +04:05:06.5", "2562047788:00:54.775807",
		"178000000 years", "infinity",
	};
	static const char *const byteas[] = {
		"\\x", "\\x00", "\\x0000", "\\x01", "\\x0a", "\\x7f", "\\x80", "\\xff",
		"\\xff00",
	};
	static const char *const bpchars[] = {
		"", "=", "  ", "a", "=", "a  ", "a b", "ab", "=", "ab ", "b", "\xc3\xa9",
	};

	(void)state;
	check_sorted(COPY_KEY_NUMERIC, numeric, (int)(sizeof(numeric) / sizeof(numeric[0])));
	check_sorted(COPY_KEY_TIME, times, (int)(sizeof(times) / sizeof(times[0])));
	check_sorted(COPY_KEY_TIME, dates, (int)(sizeof(dates) / sizeof(dates[0])));
	check_sorted(COPY_KEY_FLOAT8, floats, (int)(sizeof(floats) / sizeof(floats[0])));
	check_sorted(COPY_KEY_FLOAT4, float4s, (int)(sizeof(float4s) / sizeof(float4s[0])));
	check_sorted(COPY_KEY_CLOCK, clocks, (int)(sizeof(clocks) / sizeof(clocks[0])));
	check_sorted(COPY_KEY_INTERVAL, intervals, (int)(sizeof(intervals) / sizeof(intervals[0])));
	check_sorted(COPY_KEY_BYTEA, byteas, (int)(sizeof(byteas) / sizeof(byteas[0])));
	check_sorted(COPY_KEY_BPCHAR, bpchars, (int)(sizeof(bpchars) / sizeof(bpchars[0])));
}

/* A numeric key as the mirror holds it (integer, real or text) is kept as
 * its exact text, and compares by value with every form. */
/*
 * Whether a copy is done is parsed, never read off the text's end: a text
 * key is the source's data, and may end as a done copy's line does (" *"),
 * or hold whole lines of its own.
 */
static void test_done_not_forged(void **state)
{
	static const char *unfinished[] = {
		"pgmirror-copy 1 01\n0/100 t13:item 010240 *\n",
		"pgmirror-copy 1 01\n0/100 t13:item 010240 *\n0/200 t13:item 020480 *\n",
		"pgmirror-copy 1 01\n0/100 i7;t2: *\n",
		/* a key whose bytes are a whole done line */
		"pgmirror-copy 1 01\n0/100 t8:a\n0/20 *\n",
		"pgmirror-copy 1 01\n0/100 t9:\n0/200 *\n\n",
		"pgmirror-copy 1 01\n", /* no range yet */
		/* damaged: taken as unfinished (its copy finds it so, starts over) */
		"pgmirror-copy 1 01\n0/100 t13:item 010240 \n0/200 *\n",
		"pgmirror-copy 9 01\n0/200 *\n",
		"0/200 *\n",
		" *\n",
	};
	static const char *done[] = {
		"pgmirror-copy 1 01\n0/100 t13:item 010240 *\n0/200 *\n",
		"pgmirror-copy 1 01\n0/100 t8:a\n0/20 *\n0/200 *\n",
		"pgmirror-copy 1 01\n0/200 *\n",
	};
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(unfinished) / sizeof(unfinished[0]); i++) {
		CopyRanges *cr = copy_ranges_parse(unfinished[i], err, sizeof(err));

		if (!copy_state_unfinished(unfinished[i]))
			fail_msg("taken as done: %s", unfinished[i]);
		if (cr != NULL && copy_ranges_done(cr))
			fail_msg("parsed as done: %s", unfinished[i]);
		copy_ranges_free(cr);
	}
	for (size_t i = 0; i < sizeof(done) / sizeof(done[0]); i++) {
		CopyRanges *cr = copy_ranges_parse(done[i], err, sizeof(err));

		if (cr == NULL)
			fail_msg("did not parse %s: %s", done[i], err);
		assert_true(copy_ranges_done(cr));
		assert_false(copy_state_unfinished(done[i]));
		copy_ranges_free(cr);
	}
	assert_false(copy_state_unfinished(NULL));
}

/*
 * The ranges' key shape is the text's own, whatever the table's key is
 * now: the number of key columns and their kinds come from the lines
 * (each item ends where its kind says), and every line must have them.
 */
static void test_shape_from_text(void **state)
{
	static const struct {
		const char *text;
		int nkeys;
		const char *kinds;
	} cases[] = {
		{"pgmirror-copy 1 0000000000000001\n0/100 i5;\n", 1, "i"},
		{"pgmirror-copy 1 0000000000000001\n0/100 i5;i7;\n0/200 i9;i1;\n0/300 *\n", 2, "ii"},
		{"pgmirror-copy 1 0000000000000001\n0/100 t3:a;bi-2;n3:1.5\n0/200 t1:ci0;n1:0\n", 3, "tin"},
		{"pgmirror-copy 1 0000000000000001\n0/100 i1;i2;i3;i4;i5;i6;i7;i8;i9;\n", 9, "iiiiiiiii"},
		{"pgmirror-copy 1 0000000000000001\n0/100 *\n", 0, NULL},
		{"pgmirror-copy 1 0000000000000001\n", 0, NULL},
	};
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CopyRanges *cr = copy_ranges_parse(cases[i].text, err, sizeof(err));
		char *again;

		if (cr == NULL)
			fail_msg("did not parse %s: %s", cases[i].text, err);
		assert_int_equal(cr->nkeys, cases[i].nkeys);
		if (cases[i].kinds == NULL)
			assert_null(cr->kinds);
		else
			assert_string_equal(cr->kinds, cases[i].kinds);
		again = copy_ranges_format(cr);
		assert_string_equal(again, cases[i].text);
		free(again);
		copy_ranges_free(cr);
	}
}

static void test_numeric_key(void **state)
{
	CopyRanges *cr = calloc(1, sizeof(*cr));
	Value k1 = {.kind = VAL_REAL, .r = 0.3};
	Value k2 = {.kind = VAL_INT, .i = 7};
	Value v;
	bool is_key[1] = {true};
	char *text, err[128];
	CopyRanges *back;

	(void)state;
	cr->nkeys = 1;
	cr->kinds = strdup("n");
	copy_ranges_reach(cr, 0x100, &k1);
	copy_ranges_reach(cr, 0x200, &k2);
	text = copy_ranges_format(cr);
	assert_string_equal(text, "pgmirror-copy 1 0000000000000000\n0/100 n3:0.3\n0/200 n1:7\n");
	back = copy_ranges_parse(text, err, sizeof(err));
	assert_non_null(back);
	assert_int_equal(back->kinds[0], 'n');
	v = (Value){.kind = VAL_REAL, .r = 0.3};
	assert_true(copy_ranges_applies(back, &v, is_key, 1, 0x100));
	v.r = 0.31; /* past the first range */
	assert_false(copy_ranges_applies(back, &v, is_key, 1, 0x100));
	assert_true(copy_ranges_applies(back, &v, is_key, 1, 0x200));
	v = (Value){.kind = VAL_INT, .i = 8};
	assert_false(copy_ranges_applies(back, &v, is_key, 1, 0x900));
	v = (Value){.kind = VAL_TEXT, .p = "NaN", .len = 3};
	assert_false(copy_ranges_applies(back, &v, is_key, 1, 0x900));
	v = (Value){.kind = VAL_TEXT, .p = "6.99", .len = 4};
	assert_true(copy_ranges_applies(back, &v, is_key, 1, 0x200));
	v = (Value){.kind = VAL_REAL, .r = -INFINITY};
	assert_false(copy_ranges_applies(back, &v, is_key, 1, 0xff));
	assert_true(copy_ranges_applies(back, &v, is_key, 1, 0x100));
	free(text);
	copy_ranges_free(back);
	copy_ranges_free(cr);
}

/* A bytea key (a NUL and a newline in it) is kept as its hex text; a
 * float key as its shortest text, NaN as the mirror's 'NaN'. */
static void test_bytea_float_keys(void **state)
{
	CopyRanges *cr = calloc(1, sizeof(*cr));
	Value k[2] = {{.kind = VAL_BLOB, .p = "a\n\0", .len = 3}, {.kind = VAL_REAL, .r = 0.1}};
	Value v[2];
	bool is_key[2] = {true, true};
	char *text, err[128];
	CopyRanges *back;

	(void)state;
	cr->nkeys = 2;
	cr->kinds = strdup("xf");
	copy_ranges_reach(cr, 0x100, k);
	text = copy_ranges_format(cr);
	assert_string_equal(text, "pgmirror-copy 1 0000000000000000\n0/100 x8:\\x610a00f3:0.1\n");
	back = copy_ranges_parse(text, err, sizeof(err));
	assert_non_null(back);
	v[0] = (Value){.kind = VAL_BLOB, .p = "a\n\0", .len = 3};
	v[1] = (Value){.kind = VAL_REAL, .r = 0.1};
	assert_true(copy_ranges_applies(back, v, is_key, 2, 0x100));
	v[1] = (Value){.kind = VAL_TEXT, .p = "NaN", .len = 3}; /* after 0.1 */
	assert_false(copy_ranges_applies(back, v, is_key, 2, 0x100));
	v[0].len = 2; /* a prefix of the key: before it */
	assert_true(copy_ranges_applies(back, v, is_key, 2, 0x100));
	v[0] = (Value){.kind = VAL_BLOB, .p = "a\n\1", .len = 3};
	v[1] = (Value){.kind = VAL_REAL, .r = -INFINITY};
	assert_false(copy_ranges_applies(back, v, is_key, 2, 0x100));
	free(text);
	copy_ranges_free(back);
	copy_ranges_free(cr);
}

/* An integer Value's len is not its own (the copy's batches reuse their
 * Values): an integer key is kept without it. */
static void test_int_key_len(void **state)
{
	CopyRanges *cr = calloc(1, sizeof(*cr));
	Value k = {.kind = VAL_INT, .i = 5, .len = SIZE_MAX / 2};
	char *text;

	(void)state;
	cr->nkeys = 1;
	cr->kinds = strdup("i");
	copy_ranges_reach(cr, 0x100, &k);
	text = copy_ranges_format(cr);
	assert_string_equal(text, "pgmirror-copy 1 0000000000000000\n0/100 i5;\n");
	free(text);
	copy_ranges_free(cr);
}

/* Which key types have a kind; a numeric(p,s) held as a real past 1e-307
 * has none, nor text off UTF8. */
static void test_kinds(void **state)
{
	(void)state;
	assert_int_equal(copy_key_kind(16, -1, false), 'i');
	assert_int_equal(copy_key_kind(1700, -1, false), 'n');
	assert_int_equal(copy_key_kind(1700, ((15 << 16) | 307) + 4, false), 'n');
	assert_int_equal(copy_key_kind(1700, ((15 << 16) | 308) + 4, false), 0);
	assert_int_equal(copy_key_kind(1700, ((16 << 16) | 400) + 4, false), 'n');
	assert_int_equal(copy_key_kind(1700, ((15 << 16) | (-5 & 0x7ff)) + 4, false), 'n');
	assert_int_equal(copy_key_kind(1184, -1, false), 'd');
	assert_int_equal(copy_key_kind(1042, 14, true), 'b');
	assert_int_equal(copy_key_kind(1042, 14, false), 0);
	assert_int_equal(copy_key_kind(701, -1, false), 'f');  /* float8 */
	assert_int_equal(copy_key_kind(700, -1, false), 'r');  /* float4 */
	assert_int_equal(copy_key_kind(1083, -1, false), 'h'); /* time */
	assert_int_equal(copy_key_kind(1186, -1, false), 'v'); /* interval */
	assert_int_equal(copy_key_kind(17, -1, false), 'x');   /* bytea */
	assert_int_equal(copy_key_kind(1266, -1, true), 0);    /* timetz */
	assert_int_equal(copy_key_kind(869, -1, true), 0);     /* inet */
	assert_true(copy_key_collated(1042));
	assert_false(copy_key_collated(2950));
}

static void test_applies(void **state)
{
	CopyRanges *cr = two_tries();
	/* a row (key a, value, key b): the key columns picked out */
	bool is_key[3] = {true, false, true};
	Value row[3] = {int_val(10), text_val("x"), text_val("b")};

	(void)state;
	/* in the first range: from its position on */
	assert_false(copy_ranges_applies(cr, row, is_key, 3, 0xff));
	assert_true(copy_ranges_applies(cr, row, is_key, 3, 0x100));
	/* just past it: the second range's position */
	row[2] = text_val("ba");
	assert_false(copy_ranges_applies(cr, row, is_key, 3, 0x1ff));
	assert_true(copy_ranges_applies(cr, row, is_key, 3, 0x200));
	/* the second range's last key, and past it: not the mirror's yet */
	row[0] = int_val(20);
	row[2] = text_val("a\n:;");
	assert_true(copy_ranges_applies(cr, row, is_key, 3, 0x200));
	row[2] = text_val("a\n:;!");
	assert_false(copy_ranges_applies(cr, row, is_key, 3, 0x900));
	/* once the copy reached the end, every key is in a range */
	copy_ranges_reach(cr, 0x300, NULL);
	assert_false(copy_ranges_applies(cr, row, is_key, 3, 0x2ff));
	assert_true(copy_ranges_applies(cr, row, is_key, 3, 0x300));
	copy_ranges_free(cr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_done_not_forged),
		cmocka_unit_test(test_shape_from_text),
		cmocka_unit_test(test_key_order),
		cmocka_unit_test(test_applies),
		cmocka_unit_test(test_kind_order),
		cmocka_unit_test(test_numeric_key),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_int_key_len),
		cmocka_unit_test(test_bytea_float_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

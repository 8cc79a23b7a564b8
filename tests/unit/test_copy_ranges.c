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
	back = copy_ranges_parse(text, 2, err, sizeof(err));
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
		"pgmirror-copy 1 01\n0/100 i1;\n",           /* one key of two */
		"pgmirror-copy 1 01\n0/100 i1;t9:ab\n",      /* text past the end */
		"pgmirror-copy 1 01\n0/100 i1;t-1:\n",
		"pgmirror-copy 1 01\n0/100 q1;i2;\n",
		"pgmirror-copy 1 01\n0/100 i99999999999999999999;i2;\n",
		"pgmirror-copy 1 01\n0/200 i1;i2;\n0/100 i3;i4;\n", /* an older try after */
		"pgmirror-copy 1 01\n0/100 *\n0/200 i3;i4;\n",      /* after the end */
		"pgmirror-copy 1 01\n0/100 i1;i2;x\n",
	};
	const char *good = "pgmirror-copy 1 01\n0/100 i1;t2:ab\n0/200 *\n";
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CopyRanges *cr = copy_ranges_parse(bad[i], 2, err, sizeof(err));

		if (cr != NULL)
			fail_msg("parsed a malformed copy_state: %s", bad[i]);
		assert_non_null(strstr(err, "malformed near byte"));
	}
	/* every prefix of a good text: a clean error or a shorter good one */
	for (size_t len = 0; len < strlen(good); len++) {
		char *p = malloc(len + 1);
		CopyRanges *cr;

		memcpy(p, good, len);
		p[len] = '\0';
		cr = copy_ranges_parse(p, 2, err, sizeof(err));
		if (cr != NULL) /* ends at a line's end */
			assert_int_equal(p[len - 1], '\n');
		copy_ranges_free(cr);
		free(p);
	}
}

static void test_key_order(void **state)
{
	CopyKeyItem it = {.is_int = true, .i = 7};
	CopyKeyItem abc = {.s = "abc", .len = 3};
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
		cmocka_unit_test(test_key_order),
		cmocka_unit_test(test_applies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_cursor.c: the bounds-checked byte cursor: big-endian values, reads
 * at and past the end, strings whose NUL is or is not inside the buffer,
 * and the rule that a failed read moves nothing.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pgmirror/cursor.h"

static const uint8_t bytes[] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8,
};

static void test_unsigned_big_endian(void **state)
{
	Cursor c;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	cursor_init(&c, bytes, sizeof bytes);
	assert_true(cursor_get_u8(&c, &u8));
	assert_int_equal(u8, 0x01);
	assert_true(cursor_get_u16(&c, &u16));
	assert_int_equal(u16, 0x0203);
	assert_true(cursor_get_u32(&c, &u32));
	assert_int_equal(u32, 0x04050607);
	assert_int_equal(c.pos, 7);
	assert_int_equal(cursor_left(&c), 9);
	assert_true(cursor_get_u64(&c, &u64));
	assert_int_equal(u64, UINT64_C(0x08fffefdfcfbfaf9));
	assert_int_equal(cursor_left(&c), 1);
	assert_true(cursor_get_u8(&c, &u8));
	assert_int_equal(u8, 0xf8);
	assert_int_equal(cursor_left(&c), 0);
}

static void test_signed_big_endian(void **state)
{
	Cursor c;
	int16_t i16;
	int32_t i32;
	int64_t i64;

	cursor_init(&c, bytes + 8, 8);
	assert_true(cursor_get_i16(&c, &i16));
	assert_int_equal(i16, -2);          /* ff fe */
	assert_true(cursor_get_i16(&c, &i16));
	assert_int_equal(i16, -516);        /* fd fc */
	cursor_init(&c, bytes + 8, 8);
	assert_true(cursor_get_i32(&c, &i32));
	assert_int_equal(i32, -66052);      /* ff fe fd fc */
	cursor_init(&c, bytes + 8, 8);
	assert_true(cursor_get_i64(&c, &i64));
	assert_true(i64 == INT64_C(-283686952306184));
	cursor_init(&c, bytes, 8);
	assert_true(cursor_get_i64(&c, &i64));
	assert_true(i64 == INT64_C(0x0102030405060708));
}

static void test_extremes(void **state)
{
	static const uint8_t ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t min[8] = { 0x80, 0, 0, 0, 0, 0, 0, 0 };
	Cursor c;
	uint64_t u64;
	int64_t i64;
	int32_t i32;

	cursor_init(&c, ones, sizeof ones);
	assert_true(cursor_get_u64(&c, &u64));
	assert_true(u64 == UINT64_MAX);
	cursor_init(&c, min, sizeof min);
	assert_true(cursor_get_i64(&c, &i64));
	assert_true(i64 == INT64_MIN);
	cursor_init(&c, min, sizeof min);
	assert_true(cursor_get_i32(&c, &i32));
	assert_true(i32 == INT32_MIN);
}

/* Every getter at every position that leaves it one byte short fails and
 * leaves pos where it was. */
static void test_short_reads_fail_and_keep_position(void **state)
{
	size_t len, start;

	for (len = 0; len <= 8; len++) {
		for (start = 0; start <= len; start++) {
			uint8_t *buf = len > 0 ? malloc(len) : NULL;
			size_t left = len - start;
			const uint8_t *p;
			uint8_t u8;
			uint16_t u16;
			int16_t i16;
			uint32_t u32;
			int32_t i32;
			uint64_t u64;
			int64_t i64;
			Cursor c;

			if (len > 0) {
				assert_non_null(buf);
				memset(buf, 0xaa, len);
			}
			cursor_init(&c, buf, len);
			c.pos = start;
			assert_int_equal(cursor_get_u8(&c, &u8), left >= 1);
			c.pos = start;
			assert_int_equal(cursor_get_u16(&c, &u16), left >= 2);
			c.pos = start;
			assert_int_equal(cursor_get_i16(&c, &i16), left >= 2);
			c.pos = start;
			assert_int_equal(cursor_get_u32(&c, &u32), left >= 4);
			c.pos = start;
			assert_int_equal(cursor_get_i32(&c, &i32), left >= 4);
			c.pos = start;
			assert_int_equal(cursor_get_u64(&c, &u64), left >= 8);
			c.pos = start;
			assert_int_equal(cursor_get_i64(&c, &i64), left >= 8);
			c.pos = start;
			assert_int_equal(cursor_get_bytes(&c, left + 1, &p),
					 false);
			assert_int_equal(c.pos, start);
			assert_true(cursor_get_bytes(&c, left, &p));
			assert_int_equal(c.pos, len);
			free(buf);
		}
	}
}

static void test_failed_read_does_not_move(void **state)
{
	Cursor c;
	uint32_t u32;
	uint64_t u64;

	cursor_init(&c, bytes, 7);
	assert_false(cursor_get_u64(&c, &u64));
	assert_int_equal(c.pos, 0);
	assert_true(cursor_get_u32(&c, &u32));
	assert_false(cursor_get_u32(&c, &u32));
	assert_int_equal(c.pos, 4);
	assert_int_equal(u32, 0x01020304);
}

static void test_bytes(void **state)
{
	Cursor c;
	const uint8_t *p = NULL;

	cursor_init(&c, bytes, sizeof bytes);
	assert_true(cursor_get_bytes(&c, 0, &p));
	assert_ptr_equal(p, bytes);
	assert_int_equal(c.pos, 0);
	assert_true(cursor_get_bytes(&c, 3, &p));
	assert_ptr_equal(p, bytes);
	assert_true(cursor_get_bytes(&c, 13, &p));
	assert_ptr_equal(p, bytes + 3);
	assert_int_equal(cursor_left(&c), 0);
	assert_true(cursor_get_bytes(&c, 0, &p));
	assert_false(cursor_get_bytes(&c, 1, &p));
}

/* A huge n must not wrap around: "n > len - pos", never "pos + n > len". */
static void test_bytes_huge_length(void **state)
{
	Cursor c;
	const uint8_t *p;

	cursor_init(&c, bytes, sizeof bytes);
	c.pos = 4;
	assert_false(cursor_get_bytes(&c, SIZE_MAX, &p));
	assert_false(cursor_get_bytes(&c, SIZE_MAX - 3, &p));
	assert_false(cursor_get_bytes(&c, (size_t) -4, &p));
	assert_int_equal(c.pos, 4);
}

static void test_empty_and_null_buffer(void **state)
{
	Cursor c;
	const uint8_t *p;
	const char *s;
	uint8_t u8;

	cursor_init(&c, NULL, 0);
	assert_int_equal(cursor_left(&c), 0);
	assert_false(cursor_get_u8(&c, &u8));
	assert_false(cursor_get_string(&c, &s, NULL));
	assert_false(cursor_get_bytes(&c, 1, &p));
	assert_true(cursor_get_bytes(&c, 0, &p));
	assert_null(p);
}

static void test_string(void **state)
{
	static const uint8_t msg[] = "public\0items\0\0x";
	Cursor c;
	const char *s;
	size_t len;

	/* sizeof includes the literal's own final NUL; leave it out. */
	cursor_init(&c, msg, sizeof msg - 1);
	assert_true(cursor_get_string(&c, &s, &len));
	assert_string_equal(s, "public");
	assert_int_equal(len, 6);
	assert_ptr_equal(s, msg);
	assert_int_equal(c.pos, 7);
	assert_true(cursor_get_string(&c, &s, NULL));
	assert_string_equal(s, "items");
	assert_true(cursor_get_string(&c, &s, &len));
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	assert_int_equal(c.pos, 14);
	/* "x" has no NUL inside the buffer. */
	assert_false(cursor_get_string(&c, &s, &len));
	assert_int_equal(c.pos, 14);
}

/* The NUL must lie inside [pos, len): one just past len does not count. */
static void test_string_nul_outside_buffer(void **state)
{
	static const uint8_t msg[] = { 'a', 'b', 'c', 0x00 };
	uint8_t *exact = malloc(3);
	Cursor c;
	const char *s;
	size_t len;

	assert_non_null(exact);
	memcpy(exact, msg, 3);
	cursor_init(&c, exact, 3);
	assert_false(cursor_get_string(&c, &s, &len));
	assert_int_equal(c.pos, 0);
	cursor_init(&c, msg, 3);
	assert_false(cursor_get_string(&c, &s, &len));
	cursor_init(&c, msg, 4);
	assert_true(cursor_get_string(&c, &s, &len));
	assert_int_equal(len, 3);
	assert_int_equal(cursor_left(&c), 0);
	free(exact);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsigned_big_endian),
		cmocka_unit_test(test_signed_big_endian),
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_short_reads_fail_and_keep_position),
		cmocka_unit_test(test_failed_read_does_not_move),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_bytes_huge_length),
		cmocka_unit_test(test_empty_and_null_buffer),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_string_nul_outside_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

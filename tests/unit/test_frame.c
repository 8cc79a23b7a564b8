/*
 * test_frame.c: CopyData frames of the replication stream: XLogData and
 * primary keepalive in, standby status update out, every prefix of each
 * frame rejected with a clean error.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pgmirror/frame.h"

/* XLogData carrying a Stream Stop message ('E'). */
static const uint8_t xlogdata[] = {
	0x77,                                           /* 'w' */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* start 0/16B3748 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end 0/16B3778 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* send time */
	0x45,                                           /* data: 'E' */
};

static const uint8_t keepalive[] = {
	0x6b,                                           /* 'k' */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, /* WAL end 1/10 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x28, 0xca, 0x81, /* send time */
	0x01,                                           /* reply requested */
};

/* Decodes a copy of exactly len bytes so ASan/valgrind see overreads. */
static bool decode_copy(const uint8_t *bytes, size_t len, Frame *f,
			char *err, size_t errsize)
{
	uint8_t *copy = len > 0 ? malloc(len) : NULL;
	bool ok;

	if (len > 0) {
		assert_non_null(copy);
		memcpy(copy, bytes, len);
	}
	ok = frame_decode(copy, len, f, err, errsize);
	free(copy);
	return ok;
}

static void test_xlogdata(void **state)
{
	char err[128] = "";
	Frame f;

	assert_true(frame_decode(xlogdata, sizeof xlogdata, &f, err,
				 sizeof err));
	assert_int_equal(f.type, FRAME_XLOGDATA);
	assert_int_equal(f.wal_start, UINT64_C(0x16B3748));
	assert_int_equal(f.wal_end, UINT64_C(0x16B3778));
	assert_true(f.send_time == INT64_C(768294489123456));
	assert_false(f.reply_requested);
	assert_int_equal(f.len, 1);
	assert_ptr_equal(f.data, xlogdata + 25);
	assert_string_equal(err, "");
}

static void test_xlogdata_empty_data(void **state)
{
	char err[128];
	Frame f;

	assert_true(frame_decode(xlogdata, 25, &f, err, sizeof err));
	assert_int_equal(f.len, 0);
}

static void test_keepalive(void **state)
{
	uint8_t quiet[sizeof keepalive];
	char err[128];
	Frame f;

	assert_true(frame_decode(keepalive, sizeof keepalive, &f, err,
				 sizeof err));
	assert_int_equal(f.type, FRAME_KEEPALIVE);
	assert_int_equal(f.wal_end, UINT64_C(0x100000010));
	assert_true(f.send_time == INT64_C(768294490000001));
	assert_true(f.reply_requested);
	assert_null(f.data);
	assert_int_equal(f.len, 0);

	memcpy(quiet, keepalive, sizeof keepalive);
	quiet[17] = 0;
	assert_true(frame_decode(quiet, sizeof quiet, &f, err, sizeof err));
	assert_false(f.reply_requested);
}

static void test_every_prefix_fails(void **state)
{
	static const struct {
		const uint8_t *bytes;
		size_t len;
		const char *name;
	} frames[] = {
		{ xlogdata, 25, "XLogData" },
		{ keepalive, sizeof keepalive, "primary keepalive" },
	};
	size_t i, len;

	for (i = 0; i < 2; i++) {
		for (len = 0; len < frames[i].len; len++) {
			char expected[128];
			char err[128];
			Frame f;

			assert_false(decode_copy(frames[i].bytes, len, &f, err,
						 sizeof err));
			if (len == 0)
				snprintf(expected, sizeof expected,
					 "empty frame at byte offset 0");
			else
				snprintf(expected, sizeof expected,
					 "malformed %s frame: truncated at byte offset %d",
					 frames[i].name,
					 len < 9 ? 1 : len < 17 ? 9 : 17);
			assert_string_equal(err, expected);
		}
	}
}

static void test_keepalive_trailing_bytes(void **state)
{
	uint8_t longer[sizeof keepalive + 2] = { 0 };
	char err[128];
	Frame f;

	memcpy(longer, keepalive, sizeof keepalive);
	assert_false(decode_copy(longer, sizeof keepalive + 1, &f, err,
				 sizeof err));
	assert_string_equal(err,
			    "malformed primary keepalive frame: 1 trailing byte at byte offset 18");
	assert_false(decode_copy(longer, sizeof longer, &f, err, sizeof err));
	assert_string_equal(err,
			    "malformed primary keepalive frame: 2 trailing bytes at byte offset 18");
}

static void test_unknown_frame(void **state)
{
	static const uint8_t r[] = { 0x72, 0x00 };
	static const uint8_t x[] = { 0x78 };
	char err[128];
	Frame f;

	assert_false(frame_decode(x, sizeof x, &f, err, sizeof err));
	assert_string_equal(err, "unknown frame type 0x78 at byte offset 0");
	/* 'r' goes the other way; the server never sends it. */
	assert_false(frame_decode(r, sizeof r, &f, err, sizeof err));
	assert_string_equal(err, "unknown frame type 0x72 at byte offset 0");
}

static void test_error_buffer_limits(void **state)
{
	char small[8];
	Frame f;

	/* A short buffer gets a truncated, terminated message. */
	assert_false(frame_decode(keepalive, 3, &f, small, sizeof small));
	assert_string_equal(small, "malform");
	/* No buffer at all is allowed. */
	assert_false(frame_decode(keepalive, 3, &f, NULL, 0));
	assert_false(frame_decode(NULL, 0, &f, NULL, 0));
}

static void test_encode_status(void **state)
{
	static const uint8_t expected[FRAME_STATUS_UPDATE_SIZE] = {
		0x72,                                           /* 'r' */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* write */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* flush */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x60, /* apply */
		0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* now */
		0x01,                                           /* reply */
	};
	uint8_t buf[FRAME_STATUS_UPDATE_SIZE];

	memset(buf, 0xee, sizeof buf);
	assert_int_equal(frame_encode_status(buf, 0x16B3778, 0x16B3748,
					     0x16B3760,
					     INT64_C(768294489123456), true),
			 FRAME_STATUS_UPDATE_SIZE);
	assert_memory_equal(buf, expected, sizeof expected);
}

static void test_encode_status_extremes(void **state)
{
	uint8_t buf[FRAME_STATUS_UPDATE_SIZE];
	size_t i;

	assert_int_equal(frame_encode_status(buf, UINT64_MAX, 0,
					     UINT64_C(0x0102030405060708),
					     -1, false),
			 FRAME_STATUS_UPDATE_SIZE);
	assert_int_equal(buf[0], 'r');
	for (i = 1; i <= 8; i++)
		assert_int_equal(buf[i], 0xff);
	for (i = 9; i <= 16; i++)
		assert_int_equal(buf[i], 0);
	for (i = 17; i <= 24; i++)
		assert_int_equal(buf[i], i - 16);
	for (i = 25; i <= 32; i++)
		assert_int_equal(buf[i], 0xff);
	assert_int_equal(buf[33], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xlogdata),
		cmocka_unit_test(test_xlogdata_empty_data),
		cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_every_prefix_fails),
		cmocka_unit_test(test_keepalive_trailing_bytes),
		cmocka_unit_test(test_unknown_frame),
		cmocka_unit_test(test_error_buffer_limits),
		cmocka_unit_test(test_encode_status),
		cmocka_unit_test(test_encode_status_extremes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

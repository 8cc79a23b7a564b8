/*
 * test_feed_name.c: the feed's names and texts (src/feed/feed_name.c):
 * new epochs, the names of segments and snapshots made and parsed back,
 * every shape a name must not have refused, and the manifest's UTC times
 * both ways, with the dates that do not exist refused.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pgmirror/feed_name.h"

#define EPOCH "5f0c2d6e9b1a47c3a8e4d2b6c9f01a37"
#define SHA "9c1e55d0a3b2f4170123456789abcdef0123456789abcdef0123456789abcdef"

static void test_hex(void **state)
{
	assert_true(feed_hex_lower("0123456789abcdef", 16));
	assert_false(feed_hex_lower("0123456789abcdeF", 16));
	assert_false(feed_hex_lower("g", 1));
	assert_false(feed_hex_lower("", 0));
	assert_true(feed_epoch_valid(EPOCH));
	assert_false(feed_epoch_valid(EPOCH "0"));
	assert_false(feed_epoch_valid("5F0c2d6e9b1a47c3a8e4d2b6c9f01a37"));
	assert_false(feed_epoch_valid(""));
	assert_true(feed_sha256_valid(SHA));
	assert_false(feed_sha256_valid(EPOCH));
}

static void test_epoch_new(void **state)
{
	char a[FEED_EPOCH_LEN + 1], b[FEED_EPOCH_LEN + 1];

	assert_true(feed_epoch_new(a));
	assert_true(feed_epoch_new(b));
	assert_true(feed_epoch_valid(a));
	assert_true(feed_epoch_valid(b));
	assert_string_not_equal(a, b);
}

static void test_segment_names(void **state)
{
	char *name = feed_segment_name(EPOCH, 3907, 4263, SHA);
	FeedName n;

	assert_string_equal(name, "seg/" EPOCH "/0000000000000f43-00000000000010a7-"
			    "9c1e55d0a3b2f417.pgmf.zst");
	assert_true(feed_segment_name_parse(name, &n));
	assert_string_equal(n.epoch, EPOCH);
	assert_int_equal(n.first, 3907);
	assert_int_equal(n.last, 4263);
	assert_string_equal(n.hash, "9c1e55d0a3b2f417");
	assert_false(feed_snapshot_name_parse(name, &n));
	free(name);
	name = feed_segment_name(EPOCH, 1, UINT64_MAX, SHA);
	assert_true(feed_segment_name_parse(name, &n));
	assert_int_equal(n.last, UINT64_MAX);
	free(name);
}

static void test_snapshot_names(void **state)
{
	char *name = feed_snapshot_name(EPOCH, 3906, SHA);
	FeedName n;

	assert_string_equal(name, "snap/" EPOCH "/0000000000000f42-9c1e55d0a3b2f417.sqlite.zst");
	assert_true(feed_snapshot_name_parse(name, &n));
	assert_string_equal(n.epoch, EPOCH);
	assert_int_equal(n.first, 3906);
	assert_int_equal(n.last, 3906);
	assert_string_equal(n.hash, "9c1e55d0a3b2f417");
	assert_false(feed_segment_name_parse(name, &n));
	free(name);
}

static void test_names_refused(void **state)
{
	static const char *const bad_segments[] = {
		"",
		"seg/",
		"../seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"/seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"seg/" EPOCH "/0000000000000F43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"seg/" EPOCH "/0000000000000f43-00000000000010a7-9C1e55d0a3b2f417.pgmf.zst",
		"seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zs",
		"seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zstx",
		"seg/" EPOCH "/0000000000000f43_00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"seg/" EPOCH "/000000000000f43-000000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f41.pgmf.zst",
		"seg/" EPOCH "x/0000000000000f43-00000000000010a7-9c1e55d0a3b2f41.pgmf.zst",
		"seg/" EPOCH "/../000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"seg/5f0c2d6e9b1a47c3a8e4d2b6c9f01a3/0000000000000f43-00000000000010a7-"
		"9c1e55d0a3b2f417.pgmf.zstx",
		"seg/" EPOCH "/+000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"seg/" EPOCH "/ 000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
		"snap/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst",
	};
	static const char *const bad_snapshots[] = {
		"snap/" EPOCH "/0000000000000f42-9c1e55d0a3b2f417.sqlite",
		"snap/" EPOCH "/0000000000000f42-9c1e55d0a3b2f417.sqlite.zst/",
		"snap/" EPOCH "//000000000000f42-9c1e55d0a3b2f417.sqlite.zst",
		"snap/" EPOCH "/0000000000000f42-9c1e55d0a3b2f417.pgmf.zst",
		"snap/" EPOCH "/0000000000000f42.9c1e55d0a3b2f417.sqlite.zst",
		"seg/" EPOCH "/0000000000000f42-9c1e55d0a3b2f417.sqlite.zst",
	};
	FeedName n;

	for (size_t i = 0; i < sizeof bad_segments / sizeof bad_segments[0]; i++)
		if (feed_segment_name_parse(bad_segments[i], &n))
			fail_msg("segment name taken: \"%s\"", bad_segments[i]);
	for (size_t i = 0; i < sizeof bad_snapshots / sizeof bad_snapshots[0]; i++)
		if (feed_snapshot_name_parse(bad_snapshots[i], &n))
			fail_msg("snapshot name taken: \"%s\"", bad_snapshots[i]);
}

static void test_times(void **state)
{
	static const struct {
		int64_t usecs;
		const char *text;
	} times[] = {
		{0, "2000-01-01T00:00:00Z"},
		{1, "2000-01-01T00:00:00.000001Z"},
		{INT64_C(849981731000000), "2026-12-07T18:02:11Z"},
		{INT64_C(849981730448000), "2026-12-07T18:02:10.448Z"},
		{INT64_C(768294489123456), "2024-05-06T07:08:09.123456Z"},
		{-1, "1999-12-31T23:59:59.999999Z"},
		{INT64_C(36244800000000), "2001-02-23T12:00:00Z"},
		{INT64_C(131328000000000), "2004-02-29T00:00:00Z"},
		{INT64_C(-63082281600000000), "0001-01-01T00:00:00Z"},
		{INT64_C(252455615999999999), "9999-12-31T23:59:59.999999Z"},
	};
	char buf[FEED_TIME_SIZE];
	int64_t back;

	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		assert_true(feed_time_format(times[i].usecs, buf));
		assert_string_equal(buf, times[i].text);
		assert_true(feed_time_parse(times[i].text, &back));
		assert_int_equal(back, times[i].usecs);
	}
	/* other shapes of the same times */
	assert_true(feed_time_parse("2026-12-07T18:02:10.4480Z", &back));
	assert_int_equal(back, INT64_C(849981730448000));
	assert_true(feed_time_parse("2026-12-07T18:02:11.0Z", &back));
	assert_int_equal(back, INT64_C(849981731000000));
	/* past the years a manifest writes */
	assert_false(feed_time_format(INT64_C(-63082281600000001), buf));
	assert_false(feed_time_format(INT64_C(252455616000000000), buf));
	assert_false(feed_time_format(INT64_MIN, buf));
	assert_false(feed_time_format(INT64_MAX, buf));
}

static void test_times_refused(void **state)
{
	static const char *const bad[] = {
		"", "2026-12-07", "2026-12-07T18:02:11", "2026-12-07 18:02:11Z",
		"2026-12-07T18:02:11z", "2026-12-07T18:02:11+00:00", "2026-12-07T18:02:11.Z",
		"2026-12-07T18:02:11.1234567Z", "2026-12-07T18:02:11ZZ", "2026-13-07T18:02:11Z",
		"2026-00-07T18:02:11Z", "2026-02-29T18:02:11Z", "2100-02-29T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-12-00T00:00:00Z", "2026-12-07T24:00:00Z",
		"2026-12-07T23:60:00Z", "2026-12-07T23:59:60Z", "0000-01-01T00:00:00Z",
		"+026-12-07T18:02:11Z", "2026-1-07T18:02:11Z", "20261-12-07T18:02:11Z",
		" 2026-12-07T18:02:11Z", "2026-12-07T18:02:11.-1Z",
	};
	int64_t t;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (feed_time_parse(bad[i], &t))
			fail_msg("time taken: \"%s\"", bad[i]);
	assert_true(feed_time_parse("2000-02-29T00:00:00Z", &t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_epoch_new),
		cmocka_unit_test(test_segment_names),
		cmocka_unit_test(test_snapshot_names),
		cmocka_unit_test(test_names_refused),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_times_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

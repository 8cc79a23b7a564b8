/*
 * test_lag.c: src/run/lag.c, the mirror's lag from the server's answers
 * (position, time asked), its messages' WAL end and the durable position.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/run/lag.h"

#define SEC INT64_C(1000000)

/* Nothing known: no bytes, no seconds. */
static void test_lag_unknown(void **state)
{
	Lag lag = {0};

	(void)state;
	assert_int_equal(lag_bytes(&lag, 100), 0);
	assert_true(lag_seconds(&lag, 50 * SEC) < 0);
}

/* A keepalive's WAL end the mirror has confirmed is no lag; an answer of
 * the server beyond it is, and says since when. */
static void test_lag_answer_ahead(void **state)
{
	Lag lag = {0};

	(void)state;
	lag_note_wal_end(&lag, 1000);
	lag_note_answer(&lag, 1000, 10 * SEC, 1000); /* reached at once */
	assert_int_equal(lag_bytes(&lag, 1000), 0);
	assert_true(lag_seconds(&lag, 12 * SEC) == 2.0);
	/* the walsender decodes unrelated WAL: its keepalives stay at 1000 */
	lag_note_answer(&lag, 5000, 13 * SEC, 1000);
	lag_note_wal_end(&lag, 1000);
	assert_int_equal(lag_bytes(&lag, 1000), 4000);
	assert_true(lag_seconds(&lag, 15 * SEC) == 5.0);
	lag_note_answer(&lag, 9000, 16 * SEC, 1000);
	/* the mirror passes the first answer, not the second */
	lag_note_durable(&lag, 6000);
	assert_int_equal(lag.npending, 1);
	assert_int_equal(lag_bytes(&lag, 6000), 3000);
	assert_true(lag_seconds(&lag, 17 * SEC) == 4.0);
	lag_note_durable(&lag, 9000);
	assert_int_equal(lag.npending, 0);
	assert_int_equal(lag_bytes(&lag, 9000), 0);
	assert_true(lag_seconds(&lag, 17 * SEC) == 1.0);
}

/* More answers than fit: the newest gives way, so the time the mirror is
 * known to be in sync is never later than the truth. */
static void test_lag_queue_full(void **state)
{
	Lag lag = {0};

	(void)state;
	for (int i = 1; i <= LAG_PENDING + 4; i++)
		lag_note_answer(&lag, (Lsn)i * 100, i * SEC, 0);
	assert_int_equal(lag.npending, LAG_PENDING);
	assert_int_equal(lag_bytes(&lag, 0), (LAG_PENDING + 4) * 100);
	lag_note_durable(&lag, (LAG_PENDING - 1) * 100);
	assert_int_equal(lag.synced_at, (LAG_PENDING - 1) * SEC);
	lag_note_durable(&lag, (LAG_PENDING + 4) * 100);
	assert_int_equal(lag.synced_at, (LAG_PENDING + 4) * SEC);
	assert_int_equal(lag.npending, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lag_unknown),
		cmocka_unit_test(test_lag_answer_ahead),
		cmocka_unit_test(test_lag_queue_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

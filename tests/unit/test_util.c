/*
 * test_util.c: LSN text both ways and PostgreSQL timestamps as UTC text.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "pgmirror/notify.h"
#include "pgmirror/util.h"

static void test_lsn_round_trip(void **state)
{
	static const Lsn lsns[] = {0, 1, 0x16B3748, UINT64_C(0x100000000),
				   UINT64_C(0xFFFFFFFFFFFFFFFF), UINT64_C(0x12345678ABCDEF0)};
	char buf[LSN_TEXT_SIZE];
	Lsn back;

	(void)state;
	for (size_t i = 0; i < sizeof(lsns) / sizeof(lsns[0]); i++) {
		lsn_format(lsns[i], buf);
		assert_true(lsn_parse(buf, &back));
		assert_int_equal(back, lsns[i]);
	}
	assert_string_equal(lsn_format(UINT64_C(0x1016B3748), buf), "1/16B3748");
	assert_string_equal(lsn_format(UINT64_C(0xFFFFFFFFFFFFFFFF), buf), "FFFFFFFF/FFFFFFFF");
}

static void test_lsn_parse_accepts(void **state)
{
	Lsn l;

	(void)state;
	assert_true(lsn_parse("0/0", &l));
	assert_int_equal(l, 0);
	assert_true(lsn_parse("a/b", &l));
	assert_int_equal(l, UINT64_C(0xA0000000B));
	assert_true(lsn_parse("00000001/0000000F", &l));
	assert_int_equal(l, UINT64_C(0x10000000F));
}

static void test_lsn_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"", "/", "0/", "/0", "0", "1/2/3", "g/0", "0/g", "0/ 1", " 0/1", "0/1 ",
		"123456789/0", "0/123456789", "-1/0", "0x1/0", "+1/0",
	};
	Lsn l = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(lsn_parse(bad[i], &l));
		assert_int_equal(l, 42); /* untouched on failure */
	}
}

static void test_pgtime(void **state)
{
	char buf[40];

	(void)state;
	assert_string_equal(pgtime_format_utc(0, buf, sizeof(buf)), "2000-01-01 00:00:00");
	assert_string_equal(pgtime_format_utc(1, buf, sizeof(buf)), "2000-01-01 00:00:00.000001");
	assert_string_equal(pgtime_format_utc(-1, buf, sizeof(buf)), "1999-12-31 23:59:59.999999");
	assert_string_equal(pgtime_format_utc(INT64_C(500000), buf, sizeof(buf)),
			    "2000-01-01 00:00:00.500000");
	/* 2024-02-29 12:34:56 UTC is 762525296 s after 2000-01-01 */
	assert_string_equal(pgtime_format_utc(INT64_C(762525296000000), buf, sizeof(buf)),
			    "2024-02-29 12:34:56");
	assert_true(pgtime_now() > INT64_C(762525296000000));
	/* past 2038-01-19, where a 32-bit time_t ends (armhf without 64-bit
	 * time_t): 2040-01-01 12:00:00 UTC is 1262347200 s after 2000-01-01 */
	assert_string_equal(pgtime_format_utc(INT64_C(1262347200000000), buf, sizeof(buf)),
			    "2040-01-01 12:00:00");
}

/* pgtime_parse_utc() reads what pgtime_format_utc() writes, as Unix time */
static void test_pgtime_parse(void **state)
{
	static const int64_t at[] = {0, 1, -1, INT64_C(500000), INT64_C(762525296000000),
				     INT64_C(1262347200000000), INT64_C(-946684800000000)};
	char buf[40];
	double secs;

	(void)state;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		assert_true(pgtime_parse_utc(pgtime_format_utc(at[i], buf, sizeof(buf)), &secs));
		double diff = secs - ((double)at[i] / 1e6 + 946684800.0);

		assert_true(diff < 1e-6 && diff > -1e-6);
	}
	assert_true(pgtime_parse_utc("1970-01-01 00:00:00", &secs) && secs == 0);
	assert_true(pgtime_parse_utc("2024-02-29 12:34:56.25", &secs) && secs == 1709210096.25);
	assert_false(pgtime_parse_utc(NULL, &secs));
	assert_false(pgtime_parse_utc("", &secs));
	assert_false(pgtime_parse_utc("2024-02-29", &secs));
	assert_false(pgtime_parse_utc("2024-02-29 12:34:56 ", &secs));
	assert_false(pgtime_parse_utc("2024-13-01 00:00:00", &secs));
	assert_false(pgtime_parse_utc("2024-02-29 24:00:00", &secs));
	assert_false(pgtime_parse_utc("2024-02-29 12:34:56.x", &secs));
	assert_false(pgtime_parse_utc("infinity", &secs));
}

static void test_strv_split_join(void **state)
{
	static const struct {
		const char *text;
		int n;
		const char *items[3];
	} cases[] = {
		{"a,b", 2, {"a", "b"}},
		{"one", 1, {"one"}},
		{"", 1, {""}},
		{"a,,b", 3, {"a", "", "b"}},
		{",", 2, {"", ""}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char **v, *joined;
		int n = strv_split(cases[i].text, ',', &v);

		assert_int_equal(n, cases[i].n);
		for (int j = 0; j < n; j++)
			assert_string_equal(v[j], cases[i].items[j]);
		joined = strv_join(v, n, ",");
		assert_string_equal(joined, cases[i].text);
		free(joined);
		for (int j = 0; j < n; j++)
			assert_true(strv_contains(v, n, cases[i].items[j]));
		assert_false(strv_contains(v, n, "x"));
		strv_free(v, n);
	}
	{
		char *none = strv_join(NULL, 0, ", ");

		assert_string_equal(none, "");
		assert_false(strv_contains(NULL, 0, ""));
		free(none);
	}
}

static void test_hex_digit_value(void **state)
{
	(void)state;
	assert_int_equal(hex_digit_value('0'), 0);
	assert_int_equal(hex_digit_value('9'), 9);
	assert_int_equal(hex_digit_value('a'), 10);
	assert_int_equal(hex_digit_value('F'), 15);
	assert_int_equal(hex_digit_value('g'), -1);
	assert_int_equal(hex_digit_value('/'), -1);
	assert_int_equal(hex_digit_value(0x80 | '1'), -1);
}

/* A deadline is ms ahead of the clock, its nanoseconds within a second,
 * whatever the clock's own nanoseconds (a whole second carried). */
static void test_mono_deadline(void **state)
{
	(void)state;
	for (int ms = 0; ms <= 2500; ms += 7) {
		int64_t before = mono_usecs();
		struct timespec at = mono_deadline(ms);
		int64_t at_us = (int64_t)at.tv_sec * 1000000 + at.tv_nsec / 1000;

		assert_true(at.tv_nsec >= 0 && at.tv_nsec < 1000000000L);
		assert_true(at_us >= before + (int64_t)ms * 1000);
		assert_true(at_us <= mono_usecs() + (int64_t)ms * 1000);
	}
}

static void test_backoff_next(void **state)
{
	int secs = 1, seen[8];

	(void)state;
	for (int i = 0; i < 8; i++)
		seen[i] = secs = backoff_next(secs, 60);
	assert_int_equal(seen[0], 2);
	assert_int_equal(seen[4], 32);
	assert_int_equal(seen[5], 60);
	assert_int_equal(seen[7], 60);
	assert_int_equal(backoff_next(31, 60), 60);
	assert_int_equal(backoff_next(30, 60), 60);
	assert_int_equal(backoff_next(29, 60), 58);
	assert_int_equal(backoff_next(0, 60), 1); /* after a try at once */
}

static void test_errbuf(void **state)
{
	ErrBuf e;
	char big[3000];

	(void)state;
	errbuf_set(&e, "could not %s: %s", "connect", "server closed the connection\n\n");
	assert_string_equal(e.text, "could not connect: server closed the connection");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errbuf_set(&e, "%s", big);
	assert_int_equal(strlen(e.text), sizeof(e.text) - 1);
}

/* A hidden secret is masked in every text shown or stored, on one line;
 * log_blank() keeps the text's length (argv's copy). */
static void test_log_hide(void **state)
{
	char arg[] = "postgresql://app:pw-long@h/db password=pw";
	char *clean;
	ErrBuf e;

	(void)state;
	clean = log_clean("a\tb\n\tc\r\n");
	assert_string_equal(clean, "a b; c");
	free(clean);
	log_hide("pw");
	log_hide("pw-long"); /* the longer first, whichever comes first */
	log_hide("");
	log_hide(NULL);
	clean = log_clean("x pw-long y pw\nz");
	assert_string_equal(clean, "x ******** y ********; z");
	free(clean);
	errbuf_set(&e, "could not parse \"%s\"\n", "u:pw-long@");
	assert_string_equal(e.text, "could not parse \"u:********@\"");
	log_blank(arg);
	assert_string_equal(arg, "postgresql://app:*******@h/db password=**");
}

/*
 * A text cut to its ErrBuf ends with no piece of a secret: masked whole,
 * then cut (cut first, the start of a secret at the end was no longer the
 * secret, and showed).
 */
static void test_errbuf_cut_secret(void **state)
{
	char pad[sizeof(((ErrBuf *)0)->text) - 5];
	ErrBuf e;

	(void)state;
	log_hide("Wx8SecretTail");
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	errbuf_set(&e, "%s%s", pad, "Wx8SecretTail");
	assert_null(strstr(e.text, "Wx8"));
	assert_int_equal(strlen(e.text), sizeof(e.text) - 1);
	assert_string_equal(e.text + sizeof(pad) - 1, "*****");
}

/*
 * The stream's loop waits for the next WATCHDOG=1's time, not for a whole
 * interval: a loop woken (by data) just before a ping was due slept a
 * whole interval more, and the pings came twice as far apart (a gap of
 * WATCHDOG_USEC / 2, the most systemd's contract allows, so load made it
 * late).
 */
static void test_notify_wait_until_due(void **state)
{
	struct timespec nap = {0, 60 * 1000 * 1000};
	int w;

	(void)state;
	setenv("NOTIFY_SOCKET", "/nonexistent/pgmirror-test-notify", 1);
	setenv("WATCHDOG_USEC", "400000", 1); /* a ping every 100 ms */
	unsetenv("WATCHDOG_PID");
	notify_init();
	assert_int_equal(notify_wait_ms(1000), 100);
	nanosleep(&nap, NULL);
	notify_alive(); /* 60 ms in: not due yet */
	w = notify_wait_ms(1000);
	assert_true(w >= 0 && w <= 41);
	assert_int_equal(notify_wait_ms(5), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lsn_round_trip),
		cmocka_unit_test(test_lsn_parse_accepts),
		cmocka_unit_test(test_lsn_parse_rejects),
		cmocka_unit_test(test_pgtime),
		cmocka_unit_test(test_pgtime_parse),
		cmocka_unit_test(test_strv_split_join),
		cmocka_unit_test(test_hex_digit_value),
		cmocka_unit_test(test_mono_deadline),
		cmocka_unit_test(test_backoff_next),
		cmocka_unit_test(test_errbuf),
		cmocka_unit_test(test_log_hide),
		cmocka_unit_test(test_errbuf_cut_secret),
		cmocka_unit_test(test_notify_wait_until_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

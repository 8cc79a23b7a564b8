/*
 * values_binary_text.c: the binary forms of time, timetz, interval, inet
 * and cidr to the text their output functions write with the session's
 * settings (DateStyle ISO, IntervalStyle postgres), which is what the
 * mirror stores of them:
 *
 *   time      "HH:MM:SS[.f]", the fraction without trailing zeros, up to
 *             "24:00:00";
 *   timetz    the same, then the offset east of UTC: "+HH", "+HH:MM" or
 *             "+HH:MM:SS", whichever is the shortest exact one;
 *   interval  "[N year[s]] [N mon[s]] [N day[s]] [[+-]HH:MM:SS[.f]]":
 *             the parts that are not zero (the clock part also when all
 *             are), a part's sign "+" only after a negative part;
 *             "infinity" and "-infinity" (PostgreSQL 17+: before, the
 *             same bytes are an ordinary interval);
 *   inet      IPv4 as four decimal bytes, IPv6 as hex words with the first
 *             longest run of two or more zero words as "::" (and the last
 *             four bytes as IPv4 after ::ffff: or a run of six zero
 *             words), then "/bits" unless the prefix is the whole
 *             address; cidr always writes "/bits".
 */
#include "config.h"

#include <string.h>

#include "values_binary.h"

#define USECS_PER_SEC INT64_C(1000000)
#define USECS_PER_MINUTE (60 * USECS_PER_SEC)
#define USECS_PER_HOUR (60 * USECS_PER_MINUTE)
#define USECS_PER_DAY (24 * USECS_PER_HOUR)
/* timetz_recv's bound on the zone, in seconds (TZDISP_LIMIT: offsets up to
 * 15:59:59) */
#define ZONE_LIMIT (16 * 3600)

/* PostgreSQL's address families in inet_send's first byte. */
enum { FAMILY_INET = 2, FAMILY_INET6 = 3 };

/* v >= 0 with at least two digits. */
static void put_2digits(ValueBuf *b, int64_t v)
{
	if (v < 10)
		values_buf_putc(b, '0');
	values_int_append(b, v);
}

/* "SS[.ffffff]": seconds of two digits, the fraction (0 to 999999) with
 * its trailing zeros dropped, none at all when it is 0. */
static void put_seconds(ValueBuf *b, int64_t sec, int64_t usec)
{
	char f[7];
	int n = 6;

	put_2digits(b, sec);
	if (usec == 0)
		return;
	for (int i = 5; i >= 0; i--, usec /= 10)
		f[i] = (char) ('0' + usec % 10);
	while (f[n - 1] == '0')
		n--;
	values_buf_putc(b, '.');
	values_buf_put(b, f, (size_t) n);
}

/* "HH:MM:SS[.f]" of t microseconds, 0 <= t. */
static void put_clock(ValueBuf *b, int64_t t)
{
	put_2digits(b, t / USECS_PER_HOUR);
	values_buf_putc(b, ':');
	put_2digits(b, t / USECS_PER_MINUTE % 60);
	values_buf_putc(b, ':');
	put_seconds(b, t / USECS_PER_SEC % 60, t % USECS_PER_SEC);
}

bool values_time_text(const unsigned char *p, size_t len, bool tz, ValueBuf *b, Err *e)
{
	int64_t t;
	int32_t zone = 0;

	if (len != (tz ? 12u : 8u))
		return values_binary_bad_length(e, tz ? "time with time zone" : "time", len);
	t = (int64_t) get64(p);
	if (tz)
		zone = (int32_t) get32(p + 8);
	if (t < 0 || t > USECS_PER_DAY)
		return values_fail(e, "time out of range: %lld microseconds", (long long) t);
	if (zone <= -ZONE_LIMIT || zone >= ZONE_LIMIT)
		return values_fail(e, "time zone displacement out of range: %ld seconds",
				   (long) zone);
	put_clock(b, t);
	if (tz) {
		/* the zone counts seconds west of UTC; the text shows east */
		int32_t a = zone < 0 ? -zone : zone;

		values_buf_putc(b, zone <= 0 ? '+' : '-');
		put_2digits(b, a / 3600);
		if (a % 60 != 0 || a / 60 % 60 != 0) {
			values_buf_putc(b, ':');
			put_2digits(b, a / 60 % 60);
		}
		if (a % 60 != 0) {
			values_buf_putc(b, ':');
			put_2digits(b, a % 60);
		}
	}
	return true;
}

/* One "N unit[s]" part of an interval, when N is not 0. */
static void interval_part(ValueBuf *b, int64_t v, const char *unit, bool *is_zero,
			  bool *is_before)
{
	if (v == 0)
		return;
	if (!*is_zero)
		values_buf_putc(b, ' ');
	if (*is_before && v > 0)
		values_buf_putc(b, '+');
	values_int_append(b, v);
	values_buf_putc(b, ' ');
	values_buf_puts(b, unit);
	if (v != 1)
		values_buf_putc(b, 's');
	*is_before = v < 0;
	*is_zero = false;
}

static uint64_t uabs(int64_t v)
{
	return v < 0 ? 0 - (uint64_t) v : (uint64_t) v;
}

/* PostgreSQL 17 made the intervals with every field at its end infinite. */
#define INFINITE_INTERVAL_VERSION 170000

bool values_interval_text(const unsigned char *p, size_t len, int version, ValueBuf *b,
			  Err *e)
{
	int64_t t, hour, min, sec, usec;
	int32_t day, month;
	bool is_zero = true, is_before = false;

	if (len != 16)
		return values_binary_bad_length(e, "interval", len);
	t = (int64_t) get64(p);
	day = (int32_t) get32(p + 8);
	month = (int32_t) get32(p + 12);
	if (version >= INFINITE_INTERVAL_VERSION && t == INT64_MAX && day == INT32_MAX &&
	    month == INT32_MAX) {
		values_buf_puts(b, "infinity");
		return true;
	}
	if (version >= INFINITE_INTERVAL_VERSION && t == INT64_MIN && day == INT32_MIN &&
	    month == INT32_MIN) {
		values_buf_puts(b, "-infinity");
		return true;
	}
	interval_part(b, month / 12, "year", &is_zero, &is_before);
	interval_part(b, month % 12, "mon", &is_zero, &is_before);
	interval_part(b, day, "day", &is_zero, &is_before);
	/* each field keeps t's sign (C's division truncates) */
	hour = t / USECS_PER_HOUR;
	min = t / USECS_PER_MINUTE % 60;
	sec = t / USECS_PER_SEC % 60;
	usec = t % USECS_PER_SEC;
	if (is_zero || t != 0) {
		if (!is_zero)
			values_buf_putc(b, ' ');
		if (t < 0)
			values_buf_putc(b, '-');
		else if (is_before)
			values_buf_putc(b, '+');
		if (uabs(hour) < 10)
			values_buf_putc(b, '0');
		/* |hour| < 2^63 / 3.6e9: an int64 either way */
		values_int_append(b, (int64_t) uabs(hour));
		values_buf_putc(b, ':');
		put_2digits(b, (int64_t) uabs(min));
		values_buf_putc(b, ':');
		put_seconds(b, (int64_t) uabs(sec), (int64_t) uabs(usec));
	}
	return true;
}

/* Whether no bit past the first bits of a (n bytes) is set: a cidr's
 * rule. */
static bool host_bits_zero(const unsigned char *a, int n, int bits)
{
	for (int i = bits / 8; i < n; i++) {
		unsigned mask = i == bits / 8 ? 0xffu >> (bits % 8) : 0xffu;

		if (a[i] & mask)
			return false;
	}
	return true;
}

static void inet6_text(ValueBuf *b, const unsigned char *a)
{
	static const char hex[] = "0123456789abcdef";
	unsigned w[8];
	int best = -1, best_len = 0, run = -1;

	for (int i = 0; i < 8; i++)
		w[i] = (unsigned) a[2 * i] << 8 | a[2 * i + 1];
	/* the first longest run of zero words, if two or longer */
	for (int i = 0; i <= 8; i++) {
		if (i < 8 && w[i] == 0) {
			if (run < 0)
				run = i;
		} else if (run >= 0) {
			if (i - run > best_len) {
				best = run;
				best_len = i - run;
			}
			run = -1;
		}
	}
	if (best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				values_buf_putc(b, ':');
			continue;
		}
		if (i != 0)
			values_buf_putc(b, ':');
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
			/* an IPv4 address inside */
			for (int k = 12; k < 16; k++) {
				values_int_append(b, a[k]);
				if (k < 15)
					values_buf_putc(b, '.');
			}
			return;
		}
		{
			char t[4];
			int n = 0;

			for (int s = 12; s >= 0; s -= 4)
				if ((w[i] >> s) != 0 || s == 0)
					t[n++] = hex[(w[i] >> s) & 15];
			values_buf_put(b, t, (size_t) n);
		}
	}
	if (best >= 0 && best + best_len == 8)
		values_buf_putc(b, ':');
}

bool values_inet_text(const unsigned char *p, size_t len, bool cidr, ValueBuf *b, Err *e)
{
	const char *type = cidr ? "cidr" : "inet";
	int family, bits, n, max;

	if (len < 4)
		return values_binary_bad_length(e, type, len);
	family = p[0];
	bits = p[1];
	n = p[3];
	if (family != FAMILY_INET && family != FAMILY_INET6)
		return values_fail(e, "invalid binary value for type %s: address family %d", type,
				   family);
	max = family == FAMILY_INET ? 32 : 128;
	if (n != max / 8 || len != 4 + (size_t) n)
		return values_binary_bad_length(e, type, len);
	if (bits > max || p[2] != (cidr ? 1 : 0))
		return values_fail(e, "invalid binary value for type %s: %d bits, cidr flag %d", type,
				   bits, p[2]);
	if (cidr && !host_bits_zero(p + 4, n, bits))
		return values_fail(e, "invalid binary value for type cidr: bits set right of the "
				   "%d-bit mask", bits);
	if (family == FAMILY_INET) {
		for (int k = 0; k < 4; k++) {
			values_int_append(b, p[4 + k]);
			if (k < 3)
				values_buf_putc(b, '.');
		}
	} else {
		inet6_text(b, p + 4);
	}
	if (cidr || bits != max) {
		values_buf_putc(b, '/');
		values_int_append(b, bits);
	}
	return true;
}

/*
 * copy_keys_time.c: the order of a time-of-day key ('h') and of an
 * interval key ('v'), on the text the mirror holds (copy_keys.h).
 *
 * A time is "HH:MM:SS[.ffffff]" (24:00:00 the last), its fields of fixed
 * width: byte order, a fraction of zeros being no fraction. An interval is
 * IntervalStyle postgres's text ("1 year -2 mons +3 days -04:05:06.5",
 * "00:00:00"; "infinity" and "-infinity" from PostgreSQL 17), and orders
 * as interval_cmp_value() orders it: by its span, a month 30 days and a
 * day 24 hours, so that '1 mon' and '30 days' are the same key (a unique
 * index refuses the second). The span is kept as whole days and the
 * microseconds of the day after them, which no interval overflows.
 */
#include "config.h"

#include <string.h>

#include "copy_keys_internal.h"

#define USECS_PER_DAY INT64_C(86400000000)

int copy_key_cmp_fixed(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n > 0 ? memcmp(a, b, n) : 0;

	if (c != 0)
		return c < 0 ? -1 : 1;
	for (size_t i = n; i < alen; i++)
		if (a[i] != '.' && a[i] != '0')
			return 1;
	for (size_t i = n; i < blen; i++)
		if (b[i] != '.' && b[i] != '0')
			return -1;
	return 0;
}

/* An interval's span: cls 0 -infinity, 1 days + usecs, 2 infinity. */
typedef struct Span {
	int cls;
	int64_t days;         /* months x 30 + days + the time's whole days */
	int64_t usecs;        /* of the day after them: [0, USECS_PER_DAY) */
} Span;

/* A decimal at *p (sign allowed); false when there is none. */
static bool span_number(const char **p, const char *end, bool *neg, int64_t *out)
{
	const char *s = *p;

	*neg = false;
	*out = 0;
	if (s < end && (*s == '-' || *s == '+'))
		*neg = *s++ == '-';
	if (s == end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (*out > INT64_C(100000000000000000))
			return false;
		*out = *out * 10 + (*s - '0');
	}
	*p = s;
	return true;
}

/* "[-+]H:MM:SS[.ffffff]" at *p, into days and the usecs of the day. */
static bool span_clock(const char **p, const char *end, int64_t *days, int64_t *usecs)
{
	int64_t h, m, sec, frac = 0, scale = 100000;
	bool neg, dummy;
	const char *s = *p;

	if (!span_number(&s, end, &neg, &h) || s == end || *s++ != ':' ||
	    !span_number(&s, end, &dummy, &m) || s == end || *s++ != ':' ||
	    !span_number(&s, end, &dummy, &sec))
		return false;
	if (s < end && *s == '.')
		for (s++; s < end && *s >= '0' && *s <= '9'; s++, scale /= 10)
			frac += (*s - '0') * scale;
	*days = (neg ? -1 : 1) * (h / 24);
	*usecs = (neg ? -1 : 1) * (((h % 24) * 60 + m) * 60 * 1000000 + sec * 1000000 + frac);
	*p = s;
	return true;
}

static bool span_word(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && memcmp(s, word, n) == 0;
}

static bool span_parse(const char *s, size_t n, Span *x)
{
	const char *p = s, *end = s + n;

	memset(x, 0, sizeof(*x));
	x->cls = 1;
	if (span_word(s, n, "-infinity") || span_word(s, n, "infinity")) {
		x->cls = s[0] == '-' ? 0 : 2;
		return true;
	}
	while (p < end) {
		const char *unit, *q;
		int64_t v, d, u;
		bool neg;

		for (q = p; q < end && *q != ' '; q++)
			if (*q == ':')
				break;
		if (q < end && *q == ':') { /* the time, last */
			if (!span_clock(&p, end, &d, &u) || p != end)
				return false;
			x->days += d;
			x->usecs += u;
			break;
		}
		/* a unit's count is an int32's: this bound keeps the sum exact */
		if (!span_number(&p, end, &neg, &v) || v > INT64_C(1000000000000) || p == end ||
		    *p++ != ' ')
			return false;
		for (unit = p; p < end && *p != ' '; p++)
			;
		v = neg ? -v : v;
		if (span_word(unit, (size_t)(p - unit), "year") ||
		    span_word(unit, (size_t)(p - unit), "years"))
			x->days += v * 12 * 30;
		else if (span_word(unit, (size_t)(p - unit), "mon") ||
			 span_word(unit, (size_t)(p - unit), "mons"))
			x->days += v * 30;
		else if (span_word(unit, (size_t)(p - unit), "day") ||
			 span_word(unit, (size_t)(p - unit), "days"))
			x->days += v;
		else
			return false;
		if (p < end && *p++ != ' ')
			return false;
	}
	if (x->usecs < 0) {
		x->usecs += USECS_PER_DAY;
		x->days--;
	}
	return true;
}

bool copy_key_interval_valid(const char *s, size_t n)
{
	Span x;

	return span_parse(s, n, &x);
}

int copy_key_cmp_interval(const char *a, size_t alen, const char *b, size_t blen)
{
	Span x, y;

	if (!span_parse(a, alen, &x) || !span_parse(b, blen, &y))
		return copy_key_cmp_fixed(a, alen, b, blen); /* never the mirror's values */
	if (x.cls != y.cls || x.cls != 1)
		return x.cls < y.cls ? -1 : x.cls > y.cls;
	if (x.days != y.days)
		return x.days < y.days ? -1 : 1;
	return x.usecs < y.usecs ? -1 : x.usecs > y.usecs;
}

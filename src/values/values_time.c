/*
 * values_time.c: timestamp and timestamptz text (DateStyle=ISO, TimeZone=
 * UTC) to the stored form "YYYY-MM-DD HH:MM:SS[.ffffff][ BC]", in UTC,
 * checked against the proleptic Gregorian calendar PostgreSQL uses; and
 * the binary form of dates and timestamps (days or microseconds from
 * 2000-01-01) to the same texts.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "values_time.h"

/* A timestamp's fields as written. */
typedef struct Stamp {
	int64_t year;         /* astronomical: 1 BC is 0, 2 BC is -1 */
	int mon, day, hour, min, sec;
	const char *frac;     /* digits after the point */
	size_t flen;          /* 0: no fraction */
} Stamp;

/* PostgreSQL writes at least four year digits; nine is far past its
 * limit (294276 AD) and keeps every sum below in int64 and our buffers. */
#define YEAR_DIGITS_MAX 9
/* Microseconds: what PostgreSQL keeps and writes. */
#define FRAC_DIGITS 6

/* Exactly count digits at *pos. */
static bool fixed_digits(const char *s, size_t n, size_t *pos, int count,
			 int *out)
{
	int v = 0;

	for (int k = 0; k < count; k++, (*pos)++) {
		if (*pos >= n || !is_digit(s[*pos]))
			return false;
		v = v * 10 + (s[*pos] - '0');
	}
	*out = v;
	return true;
}


/* "YYYY-MM-DD HH:MM:SS[.f...]" at *pos; the era is settled later. */
static bool stamp_parse_fields(const char *s, size_t n, size_t *pos, Stamp *t)
{
	size_t start = *pos;

	memset(t, 0, sizeof *t);
	while (*pos < n && is_digit(s[*pos])) {
		if (*pos - start == YEAR_DIGITS_MAX)
			return false;
		t->year = t->year * 10 + (s[(*pos)++] - '0');
	}
	if (*pos - start < 4)
		return false;
	if (!expect_char(s, n, pos, '-') ||
	    !fixed_digits(s, n, pos, 2, &t->mon) ||
	    !expect_char(s, n, pos, '-') ||
	    !fixed_digits(s, n, pos, 2, &t->day) ||
	    !expect_char(s, n, pos, ' ') ||
	    !fixed_digits(s, n, pos, 2, &t->hour) ||
	    !expect_char(s, n, pos, ':') ||
	    !fixed_digits(s, n, pos, 2, &t->min) ||
	    !expect_char(s, n, pos, ':') ||
	    !fixed_digits(s, n, pos, 2, &t->sec))
		return false;
	if (*pos < n && s[*pos] == '.') {
		t->frac = s + ++(*pos);
		while (*pos < n && is_digit(s[*pos]))
			(*pos)++;
		t->flen = (size_t) (s + *pos - t->frac);
		if (t->flen == 0 || t->flen > FRAC_DIGITS)
			return false;
	}
	return true;
}

/* The optional " BC" at *pos, then the end; applies the era and checks
 * the fields against the calendar. */
static bool stamp_finish(const char *s, size_t n, size_t *pos, Stamp *t)
{
	if (t->year == 0)
		return false;    /* neither era has a year 0 */
	if (n - *pos == 3 && memcmp(s + *pos, " BC", 3) == 0) {
		*pos = n;
		t->year = 1 - t->year;
	}
	if (*pos != n)
		return false;
	return t->mon >= 1 && t->mon <= 12 &&
	       t->day >= 1 && t->day <= civil_days_in_month(t->year, t->mon) &&
	       t->hour <= 23 && t->min <= 59 && t->sec <= 59;
}

/* PostgreSQL's calendar is util.h's proleptic Gregorian one (civil_days()). */
/* Moves t by -offset seconds, across days, months and years. */
static void stamp_shift(Stamp *t, int64_t offset)
{
	int64_t days = civil_days(t->year, t->mon, t->day);
	int64_t secs = t->hour * INT64_C(3600) + t->min * 60 + t->sec - offset;
	int64_t carry = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);

	secs -= carry * 86400;
	civil_from_days(days + carry, &t->year, &t->mon, &t->day);
	t->hour = (int) (secs / 3600);
	t->min = (int) (secs / 60 % 60);
	t->sec = (int) (secs % 60);
}

/* "00" to "99": two digits at a time, without a division each. */
static const char digit_pairs[] =
	"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
	"5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

static char *put2(char *p, int v)
{
	memcpy(p, digit_pairs + 2 * v, 2);
	return p + 2;
}

/* v (0 or more) in decimal, at least width digits (zeros before). */
static char *put_digits(char *p, int64_t v, int width)
{
	char rev[20];
	int k = 0;

	/* the usual cases first: month, day, time; year; microseconds (the
	 * unsigned compare keeps a negative v, which no caller gives, out of
	 * the table) */
	if (width == 2 && (uint64_t) v < 100)
		return put2(p, (int) v);
	if (width == 4 && (uint64_t) v < 10000)
		return put2(put2(p, (int) v / 100), (int) v % 100);
	if (width == 6 && (uint64_t) v < 1000000)
		return put2(put2(put2(p, (int) v / 10000), (int) v / 100 % 100), (int) v % 100);
	do {
		rev[k++] = (char) ('0' + v % 10);
		v /= 10;
	} while (v > 0 && k < (int) sizeof rev);
	while (k < width)
		rev[k++] = '0';
	while (k > 0)
		*p++ = rev[--k];
	return p;
}

/* "YYYY-MM-DD" of t's date (the year of its era) at p; returns its end. */
static char *put_date(char *p, const Stamp *t)
{
	/* by hand: snprintf was most of a timestamp's cost */
	p = put_digits(p, t->year <= 0 ? 1 - t->year : t->year, 4);
	*p++ = '-';
	p = put_digits(p, t->mon, 2);
	*p++ = '-';
	return put_digits(p, t->day, 2);
}

/* " BC" at p for a date of that era; returns its end. */
static char *put_era(char *p, const Stamp *t)
{
	if (t->year > 0)
		return p;
	memcpy(p, " BC", 3);
	return p + 3;
}

/* The stored form: "YYYY-MM-DD HH:MM:SS[.ffffff][ BC]", put at once. */
static void stamp_append(ValueBuf *b, const Stamp *t)
{
	char tmp[STAMP_TEXT_MAX + 24], *p = tmp;

	p = put_date(p, t);
	*p++ = ' ';
	p = put_digits(p, t->hour, 2);
	*p++ = ':';
	p = put_digits(p, t->min, 2);
	*p++ = ':';
	p = put_digits(p, t->sec, 2);
	if (t->flen > 0) { /* 1 to FRAC_DIGITS digits (stamp_parse_fields()) */
		*p++ = '.';
		memcpy(p, t->frac, t->flen);
		memset(p + t->flen, '0', FRAC_DIGITS - t->flen);
		p += FRAC_DIGITS;
	}
	p = put_era(p, t);
	values_buf_put(b, tmp, (size_t) (p - tmp));
}

bool values_is_infinity_word(const char *s, size_t n)
{
	return equals(s, n, "infinity") || equals(s, n, "-infinity");
}

/* timestamp: appends the stored form of s to b. */
bool values_timestamp_append(ValueBuf *b, const char *s, size_t n, Err *e)
{
	Stamp t;
	size_t pos = 0;

	if (!stamp_parse_fields(s, n, &pos, &t) ||
	    !stamp_finish(s, n, &pos, &t))
		return values_invalid(e, VT_TIMESTAMP, s, n);
	stamp_append(b, &t);
	return true;
}

/*
 * timestamptz: "...+HH[:MM[:SS]][ BC]" (the offset is PostgreSQL's, seconds
 * included for old local mean times) to the same form in UTC.
 */
bool values_timestamptz_append(ValueBuf *b, const char *s, size_t n, Err *e)
{
	Stamp t;
	size_t pos = 0;
	int oh, om = 0, os = 0;
	bool neg;
	int64_t offset;

	if (!stamp_parse_fields(s, n, &pos, &t) || pos >= n ||
	    (s[pos] != '+' && s[pos] != '-'))
		return values_invalid(e, VT_TIMESTAMPTZ, s, n);
	neg = s[pos++] == '-';
	if (!fixed_digits(s, n, &pos, 2, &oh))
		return values_invalid(e, VT_TIMESTAMPTZ, s, n);
	if (pos < n && s[pos] == ':') {
		pos++;
		if (!fixed_digits(s, n, &pos, 2, &om))
			return values_invalid(e, VT_TIMESTAMPTZ, s, n);
		if (pos < n && s[pos] == ':') {
			pos++;
			if (!fixed_digits(s, n, &pos, 2, &os))
				return values_invalid(e, VT_TIMESTAMPTZ, s, n);
		}
	}
	if (oh > 23 || om > 59 || os > 59 || !stamp_finish(s, n, &pos, &t))
		return values_invalid(e, VT_TIMESTAMPTZ, s, n);
	offset = oh * INT64_C(3600) + om * 60 + os;
	if (offset != 0)
		stamp_shift(&t, neg ? -offset : offset);
	stamp_append(b, &t);
	return true;
}

/* --- from the binary format (values_binary.c) ----------------------------- */

/* Days from 1970-01-01, where civil_from_days() counts, to 2000-01-01,
 * where PostgreSQL's binary dates and timestamps count. */
#define PG_EPOCH_DAYS 10957

void values_date_append(ValueBuf *b, int32_t days)
{
	char tmp[STAMP_TEXT_MAX], *p;
	Stamp t;

	memset(&t, 0, sizeof t);
	civil_from_days(days + (int64_t) PG_EPOCH_DAYS, &t.year, &t.mon, &t.day);
	p = put_era(put_date(tmp, &t), &t);
	values_buf_put(b, tmp, (size_t) (p - tmp));
}

void values_stamp_append(ValueBuf *b, int64_t usecs)
{
	/* floor division: a time before the epoch is in an earlier second */
	int64_t secs = usecs / 1000000 - (usecs % 1000000 < 0);
	int64_t frac = usecs - secs * 1000000;
	int64_t days = secs / 86400 - (secs % 86400 < 0);
	int64_t sod = secs - days * 86400;
	char digits[FRAC_DIGITS];
	Stamp t;

	memset(&t, 0, sizeof t);
	civil_from_days(days + PG_EPOCH_DAYS, &t.year, &t.mon, &t.day);
	t.hour = (int) (sod / 3600);
	t.min = (int) (sod / 60 % 60);
	t.sec = (int) (sod % 60);
	if (frac != 0) {
		/* all six digits: the form pads a shorter fraction to six */
		put_digits(digits, frac, FRAC_DIGITS);
		t.frac = digits;
		t.flen = FRAC_DIGITS;
	}
	stamp_append(b, &t);
}

/*
 * feed_name.c: the feed's names and texts (include/pgmirror/feed_name.h).
 *
 * A name is parsed by its exact length and the place of every character,
 * never by scanf() (which takes signs, blanks and short fields). Dates are
 * counted in days from 1970-01-01 in the proleptic Gregorian calendar
 * (util.h's civil_days() and civil_from_days()), with no time_t, which
 * is 32 bits on some armhf systems.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "pgmirror/feed_name.h"

#define SEG_PREFIX "seg/"
#define SEG_SUFFIX ".pgmf.zst"
#define SNAP_PREFIX "snap/"
#define SNAP_SUFFIX ".sqlite.zst"
#define GROUP_HEX 16

bool feed_hex_lower(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool feed_epoch_valid(const char *s)
{
	return strlen(s) == FEED_EPOCH_LEN && feed_hex_lower(s, FEED_EPOCH_LEN);
}

bool feed_sha256_valid(const char *s)
{
	return strlen(s) == FEED_SHA256_LEN && feed_hex_lower(s, FEED_SHA256_LEN);
}

bool feed_epoch_new(char out[FEED_EPOCH_LEN + 1])
{
	unsigned char bytes[FEED_EPOCH_LEN / 2];
	size_t got = 0;

	while (got < sizeof bytes) {
		ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof bytes; i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
	return true;
}

char *feed_segment_name(const char *epoch, uint64_t first, uint64_t last, const char *sha256)
{
	return xasprintf(SEG_PREFIX "%s/%016" PRIx64 "-%016" PRIx64 "-%.16s" SEG_SUFFIX, epoch,
			 first, last, sha256);
}

char *feed_snapshot_name(const char *epoch, uint64_t group, const char *sha256)
{
	return xasprintf(SNAP_PREFIX "%s/%016" PRIx64 "-%.16s" SNAP_SUFFIX, epoch, group, sha256);
}

/* 16 lower-case hex digits at s, as a number. */
static bool parse_group(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!feed_hex_lower(s, GROUP_HEX))
		return false;
	for (int i = 0; i < GROUP_HEX; i++)
		v = v << 4 | (uint64_t)hex_digit_value((unsigned char)s[i]);
	*out = v;
	return true;
}

/*
 * "PREFIX" EPOCH "/" then ngroups × (16 hex "-") then 16 hex and "SUFFIX",
 * and nothing else.
 */
static bool parse_name(const char *name, const char *prefix, int ngroups, const char *suffix,
		       FeedName *out)
{
	size_t plen = strlen(prefix), slen = strlen(suffix);
	size_t want = plen + FEED_EPOCH_LEN + 1 + (size_t)ngroups * (GROUP_HEX + 1) +
		      FEED_NAME_HASH_LEN + slen;
	const char *p = name + plen;

	if (strlen(name) != want || strncmp(name, prefix, plen) != 0 ||
	    !feed_hex_lower(p, FEED_EPOCH_LEN) || p[FEED_EPOCH_LEN] != '/')
		return false;
	memcpy(out->epoch, p, FEED_EPOCH_LEN);
	out->epoch[FEED_EPOCH_LEN] = '\0';
	p += FEED_EPOCH_LEN + 1;
	for (int i = 0; i < ngroups; i++, p += GROUP_HEX + 1)
		if (!parse_group(p, i == 0 ? &out->first : &out->last) || p[GROUP_HEX] != '-')
			return false;
	if (ngroups == 1)
		out->last = out->first;
	if (!feed_hex_lower(p, FEED_NAME_HASH_LEN) || strcmp(p + FEED_NAME_HASH_LEN, suffix) != 0)
		return false;
	memcpy(out->hash, p, FEED_NAME_HASH_LEN);
	out->hash[FEED_NAME_HASH_LEN] = '\0';
	return true;
}

bool feed_segment_name_parse(const char *name, FeedName *out)
{
	return parse_name(name, SEG_PREFIX, 2, SEG_SUFFIX, out);
}

bool feed_snapshot_name_parse(const char *name, FeedName *out)
{
	return parse_name(name, SNAP_PREFIX, 1, SNAP_SUFFIX, out);
}

/* --- times ------------------------------------------------------------ */

#define USECS_PER_DAY INT64_C(86400000000)
/* days from 1970-01-01 to 2000-01-01 */
#define PG_EPOCH_DAYS 10957




bool feed_time_format(int64_t pg_usecs, char buf[FEED_TIME_SIZE])
{
	int64_t days = pg_usecs / USECS_PER_DAY, rest = pg_usecs % USECS_PER_DAY, y;
	int m, d, secs, usecs, n;

	if (rest < 0) {
		rest += USECS_PER_DAY;
		days--;
	}
	civil_from_days(days + PG_EPOCH_DAYS, &y, &m, &d);
	if (y < 1 || y > 9999)
		return false;
	secs = (int)(rest / 1000000);
	usecs = (int)(rest % 1000000);
	n = snprintf(buf, FEED_TIME_SIZE, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, m, d,
		     secs / 3600, secs / 60 % 60, secs % 60);
	if (usecs != 0) {
		n += snprintf(buf + n, (size_t)(FEED_TIME_SIZE - n), ".%06d", usecs);
		while (buf[n - 1] == '0')
			n--;
	}
	snprintf(buf + n, (size_t)(FEED_TIME_SIZE - n), "Z");
	return true;
}

/* n decimal digits at s, as a number. */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

bool feed_time_parse(const char *text, int64_t *pg_usecs)
{
	int y, mo, d, h, mi, s, usecs = 0, scale = 100000;
	const char *p = text + 19;

	if (strlen(text) < 20 || !digits(text, 4, &y) || text[4] != '-' ||
	    !digits(text + 5, 2, &mo) || text[7] != '-' || !digits(text + 8, 2, &d) ||
	    text[10] != 'T' || !digits(text + 11, 2, &h) || text[13] != ':' ||
	    !digits(text + 14, 2, &mi) || text[16] != ':' || !digits(text + 17, 2, &s))
		return false;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && scale > 0; p++, scale /= 10)
			usecs += (*p - '0') * scale;
		if (scale == 100000)
			return false; /* a point without digits */
	}
	if (strcmp(p, "Z") != 0 || y < 1 || mo < 1 || mo > 12 || d < 1 ||
	    d > civil_days_in_month(y, mo) || h > 23 || mi > 59 || s > 59)
		return false;
	*pg_usecs = (civil_days(y, mo, d) - PG_EPOCH_DAYS) * USECS_PER_DAY +
		    ((int64_t)h * 3600 + mi * 60 + s) * 1000000 + usecs;
	return true;
}

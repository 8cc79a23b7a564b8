/*
 * values_binary_text.c: the binary form of each type read in binary to the
 * text its output function writes with the session's settings, which the
 * text path reads (values_binary_text(): the scalars that are stored from
 * their text, and every array element). numeric_out, uuid_out, byteaout
 * (hex) and the integers are plain; dates and timestamps are written in
 * the stored form (values_time.c), floats by values_float.c. Those whose
 * text is what the mirror stores (DateStyle ISO, IntervalStyle postgres):
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

#include "values_wire.h"

/* Microseconds and days from 2000-01-01, PostgreSQL's epoch, to the first
 * value past its range (timestamp.h: MIN_TIMESTAMP, END_TIMESTAMP; and
 * the Julian days of 4714-11-24 BC and 5874898-01-01 less 2451545). */
#define MIN_TIMESTAMP INT64_C(-211813488000000000)
#define END_TIMESTAMP INT64_C(9223371331200000000)
#define MIN_DATE (-2451545)
#define END_DATE 2145031949

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

/* --- the other types --------------------------------------------------------- */

/* The ValueType the text path gives type_oid; VT_ARRAY (never a scalar's)
 * for a type not read here. */
ValueType values_binary_vt(uint32_t type_oid, ValueType vt)
{
	switch (type_oid) {
	case OID_BOOL:
		return VT_BOOL;
	case OID_BYTEA:
		return VT_BYTEA;
	case OID_NAME: case OID_TEXT: case OID_BPCHAR: case OID_VARCHAR: case OID_UUID:
	case OID_TIME: case OID_TIMETZ: case OID_INTERVAL: case OID_INET: case OID_CIDR:
		return VT_TEXT;
	case OID_INT8: case OID_INT2: case OID_INT4: case OID_OID:
		return VT_INT;
	case OID_FLOAT4: case OID_FLOAT8:
		return VT_FLOAT;
	case OID_JSON: case OID_JSONB:
		return VT_JSON;
	case OID_NUMERIC:
		/* the typmod decides which; either reads the same text */
		return vt == VT_NUMERIC_NUM ? VT_NUMERIC_NUM : VT_NUMERIC_TEXT;
	case OID_DATE:
		return VT_DATE;
	case OID_TIMESTAMP:
		return VT_TIMESTAMP;
	case OID_TIMESTAMPTZ:
		return VT_TIMESTAMPTZ;
	}
	return VT_ARRAY;
}

bool values_binary_bad_length(Err *e, const char *type, size_t len)
{
	return values_fail(e, "invalid binary value for type %s: %zu bytes", type, len);
}

static bool bad_length(Err *e, ValueType vt, size_t len)
{
	return values_binary_bad_length(e, values_type_sql_name(vt), len);
}

/* The n-th base-10000 digit (0 past the stored ones, either side). */
unsigned values_numeric_digit(const Numeric *n, int d)
{
	return d >= 0 && d < n->ndigits ? get16(n->p + 8 + 2 * d) : 0;
}

/* Reads and checks a numeric_send value, as numeric_recv() does. */
bool values_numeric_read(const unsigned char *p, size_t len, Numeric *n, Err *e,
			 ValueType vt)
{
	if (len < 8)
		return bad_length(e, vt, len);
	/*
	 * numeric_recv()'s words: the digit count, sign and scale unsigned
	 * (131,072 digits before the point and 16,383 after are 36,864
	 * base-10000 digits, past int16), the weight signed.
	 */
	n->p = p;
	n->ndigits = get16(p);
	n->weight = (int16_t) get16(p + 2);
	n->sign = get16(p + 4);
	n->dscale = get16(p + 6);
	if (len != 8 + 2 * (size_t) n->ndigits)
		return bad_length(e, vt, len);
	if (n->sign == NUMERIC_NAN || n->sign == NUMERIC_PINF || n->sign == NUMERIC_NINF)
		return true;
	if ((n->sign != NUMERIC_POS && n->sign != NUMERIC_NEG) ||
	    (n->dscale & ~NUMERIC_DSCALE_MASK))
		return values_fail(e, "invalid binary value for type %s: sign 0x%04x, scale 0x%04x",
				   values_type_sql_name(vt), (unsigned) n->sign, (unsigned) n->dscale);
	for (int d = 0; d < n->ndigits; d++)
		if (values_numeric_digit(n, d) >= NBASE)
			return values_fail(e, "invalid binary value for type %s: digit %u",
					   values_type_sql_name(vt), values_numeric_digit(n, d));
	return true;
}

static void put_group(ValueBuf *b, unsigned dig, int from, int to)
{
	char g[4] = { (char) ('0' + dig / 1000), (char) ('0' + dig / 100 % 10),
		      (char) ('0' + dig / 10 % 10), (char) ('0' + dig % 10) };

	values_buf_put(b, g + from, (size_t) (to - from));
}

/* Appends numeric_out's text of n to b, as get_str_from_var() writes it:
 * the groups before the point (the first without its leading zeros), then
 * exactly dscale digits after it. */
void values_numeric_text(ValueBuf *b, const Numeric *n)
{
	if (n->sign != NUMERIC_POS && n->sign != NUMERIC_NEG) {
		values_buf_puts(b, n->sign == NUMERIC_NAN ? "NaN" :
				n->sign == NUMERIC_PINF ? "Infinity" : "-Infinity");
		return;
	}
	values_buf_reserve(b, 3 + 4 * (size_t) (n->weight >= 0 ? n->weight + 1 : 1) +
			   (size_t) n->dscale + 4);
	if (n->sign == NUMERIC_NEG)
		values_buf_putc(b, '-');
	if (n->weight < 0)
		values_buf_putc(b, '0');
	for (int d = 0; d <= n->weight; d++) {
		unsigned dig = values_numeric_digit(n, d);
		int skip = d > 0 ? 0 : dig >= 1000 ? 0 : dig >= 100 ? 1 : dig >= 10 ? 2 : 3;

		put_group(b, dig, skip, 4);
	}
	if (n->dscale > 0) {
		values_buf_putc(b, '.');
		for (int i = 0, d = n->weight + 1; i < n->dscale; i += 4, d++)
			put_group(b, values_numeric_digit(n, d), 0, n->dscale - i < 4 ? n->dscale - i : 4);
	}
}

static void uuid_text(ValueBuf *b, const unsigned char *p)
{
	static const char hex[] = "0123456789abcdef";
	char t[36], *w = t;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*w++ = '-';
		*w++ = hex[p[i] >> 4];
		*w++ = hex[p[i] & 15];
	}
	values_buf_put(b, t, sizeof t);
}

/*
 * A date (4 bytes: days) or a timestamp (8 bytes: microseconds) from
 * PostgreSQL's epoch into buf as date_out or timestamp_out writes it:
 * "infinity" and "-infinity" at the integer's ends, a value past the
 * type's range refused.
 */
static bool datetime_text(const unsigned char *p, size_t len, bool date, ValueBuf *buf, Err *e,
			  ValueType vt)
{
	int64_t v, top = date ? INT32_MAX : INT64_MAX;

	if (len != (date ? 4 : 8))
		return bad_length(e, vt, len);
	v = date ? (int32_t) get32(p) : (int64_t) get64(p);
	if (v == top || v == -top - 1)
		values_buf_puts(buf, v > 0 ? "infinity" : "-infinity");
	else if (v < (date ? MIN_DATE : MIN_TIMESTAMP) || v >= (date ? END_DATE : END_TIMESTAMP))
		return values_fail(e, "%s out of range: %lld %s", date ? "date" : "timestamp",
				   (long long) v, date ? "days" : "microseconds");
	else if (date)
		values_date_append(buf, (int32_t) v);
	else
		values_stamp_append(buf, v);
	return true;
}

static void bytea_text(ValueBuf *b, const unsigned char *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *w;

	values_buf_reserve(b, values_size_mul_add(len, 2, 2));
	w = b->data + b->len;
	*w++ = '\\';
	*w++ = 'x';
	for (size_t i = 0; i < len; i++) {
		*w++ = hex[p[i] >> 4];
		*w++ = hex[p[i] & 15];
	}
	b->len = (size_t) (w - b->data);
}

/* A fixed-size value's length, checked. */
static bool fixed_len(Err *e, uint32_t type_oid, size_t len, size_t want)
{
	if (len == want)
		return true;
	return values_binary_bad_length(e, values_builtin_type_name(type_oid), len);
}

bool values_binary_text(uint32_t type_oid, int version, const unsigned char *p, size_t len,
			ValueBuf *b, Err *e)
{
	switch (type_oid) {
	case OID_BOOL:
		if (!fixed_len(e, type_oid, len, 1))
			return false;
		if (p[0] > 1)
			return values_fail(e, "invalid binary value for type boolean: byte %u, not 0 or 1",
					   (unsigned) p[0]);
		values_buf_putc(b, p[0] ? 't' : 'f');
		return true;
	case OID_BYTEA:
		bytea_text(b, p, len);
		return true;
	case OID_INT2:
		if (!fixed_len(e, type_oid, len, 2))
			return false;
		values_int_append(b, (int16_t) get16(p));
		return true;
	case OID_INT4:
	case OID_OID:
		if (!fixed_len(e, type_oid, len, 4))
			return false;
		values_int_append(b, type_oid == OID_OID ? (int64_t) get32(p) : (int32_t) get32(p));
		return true;
	case OID_INT8:
		if (!fixed_len(e, type_oid, len, 8))
			return false;
		values_int_append(b, (int64_t) get64(p));
		return true;
	case OID_FLOAT4: {
		uint32_t bits;
		float f;

		if (!fixed_len(e, type_oid, len, 4))
			return false;
		bits = get32(p);
		memcpy(&f, &bits, sizeof f);
		values_float_text(b, f, true);
		return true;
	}
	case OID_FLOAT8: {
		uint64_t bits;
		double d;

		if (!fixed_len(e, type_oid, len, 8))
			return false;
		bits = get64(p);
		memcpy(&d, &bits, sizeof d);
		values_float_text(b, d, false);
		return true;
	}
	case OID_NUMERIC: {
		Numeric n = { 0 };

		if (!values_numeric_read(p, len, &n, e, VT_NUMERIC_TEXT))
			return false;
		values_numeric_text(b, &n);
		return true;
	}
	case OID_UUID:
		if (!fixed_len(e, type_oid, len, 16))
			return false;
		uuid_text(b, p);
		return true;
	case OID_DATE:
	case OID_TIMESTAMP:
	case OID_TIMESTAMPTZ:
		return datetime_text(p, len, type_oid == OID_DATE, b, e,
				     values_binary_vt(type_oid, VT_TEXT));
	case OID_TIME:
	case OID_TIMETZ:
		return values_time_text(p, len, type_oid == OID_TIMETZ, b, e);
	case OID_INTERVAL:
		return values_interval_text(p, len, version, b, e);
	case OID_INET:
	case OID_CIDR:
		return values_inet_text(p, len, type_oid == OID_CIDR, b, e);
	case OID_JSONB:
		/* a version byte, then the text jsonb_out writes */
		if (len < 1 || p[0] != 1)
			return values_fail(e, "invalid binary value for type jsonb: version %d",
					   len < 1 ? -1 : p[0]);
		values_buf_put(b, (const char *) p + 1, len - 1);
		return true;
	case OID_TEXT: case OID_VARCHAR: case OID_BPCHAR: case OID_NAME: case OID_JSON:
		values_buf_put(b, (const char *) p, len);
		return true;
	}
	return values_fail(e, "type %u is not read in binary", (unsigned) type_oid);
}

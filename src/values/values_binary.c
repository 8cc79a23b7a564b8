/*
 * values_binary.c: a source value in PostgreSQL's binary format (what the
 * type's send function writes, as COPY ... (FORMAT binary) sends it) to
 * the value the mirror stores: exactly the Value values_convert() makes of
 * the same value's text output, so that a table copied either way is the
 * same table.
 *
 * Only the types whose binary form says everything their text does, in a
 * way that is plain to check, are read here (values_binary_supported()).
 * Integers, booleans, float8, bytea and the common numeric(p,s) become
 * their Value directly; text types are their text; the other numerics,
 * float4, dates, timestamps, times, intervals, network addresses and
 * uuids are first written as the text PostgreSQL's output function would
 * write with the session's settings (values_binary_text()) and then take
 * the text path, so the rules for storing them stay in one place. Arrays
 * of these types become the JSON array the text path makes
 * (values_binary_array.c).
 *
 * float4's text is the shortest decimal that reads back as the float,
 * which the text path stores as the double nearest that decimal, not the
 * float's exact value: so float4 is read as its text too, and only from a
 * server that writes the shortest decimal (PostgreSQL 12+); so is a
 * float8 in an array, whose JSON keeps the decimal as written.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "values_binary.h"

/* numeric_send's sign word, and its display scale's bits. */
enum {
	NUMERIC_POS = 0x0000, NUMERIC_NEG = 0x4000, NUMERIC_NAN = 0xC000,
	NUMERIC_PINF = 0xD000, NUMERIC_NINF = 0xF000, NUMERIC_DSCALE_MASK = 0x3FFF,
};
#define NBASE 10000

/* Microseconds and days from 2000-01-01, PostgreSQL's epoch, to the first
 * value past its range (timestamp.h: MIN_TIMESTAMP, END_TIMESTAMP; and
 * the Julian days of 4714-11-24 BC and 5874898-01-01 less 2451545). */
#define MIN_TIMESTAMP INT64_C(-211813488000000000)
#define END_TIMESTAMP INT64_C(9223371331200000000)
#define MIN_DATE (-2451545)
#define END_DATE 2145031949

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

/* Before 12, float4out and float8out write 9 and 17 digits, not the
 * shortest decimal values_float_text() writes. */
#define SHORTEST_FLOAT_VERSION 120000

bool values_binary_supported(uint32_t type_oid, ColumnType type, int server_version)
{
	bool shortest = server_version >= SHORTEST_FLOAT_VERSION;

	if (type.vt == VT_ARRAY) {
		uint32_t elem = values_array_elem_oid(type_oid);

		return elem != 0 && type.delim == ',' &&
		       values_binary_vt(elem, type.elem_vt) == type.elem_vt &&
		       (shortest || (elem != OID_FLOAT4 && elem != OID_FLOAT8));
	}
	return values_binary_vt(type_oid, type.vt) == type.vt &&
	       (shortest || type_oid != OID_FLOAT4);
}

bool values_binary_bad_length(Err *e, const char *type, size_t len)
{
	return values_fail(e, "invalid binary value for type %s: %zu bytes", type, len);
}

static bool bad_length(Err *e, ValueType vt, size_t len)
{
	return values_binary_bad_length(e, values_type_sql_name(vt), len);
}

/* numeric_send's value: its header words, and its digits at p + 8. */
typedef struct Numeric {
	const unsigned char *p;
	int ndigits, weight, sign, dscale;
} Numeric;

/* The n-th base-10000 digit (0 past the stored ones, either side). */
static unsigned numeric_digit(const Numeric *n, int d)
{
	return d >= 0 && d < n->ndigits ? get16(n->p + 8 + 2 * d) : 0;
}

/* Reads and checks a numeric_send value, as numeric_recv() does. */
static bool numeric_read(const unsigned char *p, size_t len, Numeric *n, Err *e, ValueType vt)
{
	if (len < 8)
		return bad_length(e, vt, len);
	n->p = p;
	n->ndigits = (int16_t) get16(p);
	n->weight = (int16_t) get16(p + 2);
	n->sign = get16(p + 4);
	n->dscale = get16(p + 6);
	if (n->ndigits < 0 || len != 8 + 2 * (size_t) n->ndigits)
		return bad_length(e, vt, len);
	if (n->sign == NUMERIC_NAN || n->sign == NUMERIC_PINF || n->sign == NUMERIC_NINF)
		return true;
	if ((n->sign != NUMERIC_POS && n->sign != NUMERIC_NEG) ||
	    (n->dscale & ~NUMERIC_DSCALE_MASK))
		return values_fail(e, "invalid binary value for type %s: sign 0x%04x, scale 0x%04x",
				   values_type_sql_name(vt), (unsigned) n->sign, (unsigned) n->dscale);
	for (int d = 0; d < n->ndigits; d++)
		if (numeric_digit(n, d) >= NBASE)
			return values_fail(e, "invalid binary value for type %s: digit %u",
					   values_type_sql_name(vt), numeric_digit(n, d));
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
static void numeric_text(ValueBuf *b, const Numeric *n)
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
		unsigned dig = numeric_digit(n, d);
		int skip = d > 0 ? 0 : dig >= 1000 ? 0 : dig >= 100 ? 1 : dig >= 10 ? 2 : 3;

		put_group(b, dig, skip, 4);
	}
	if (n->dscale > 0) {
		values_buf_putc(b, '.');
		for (int i = 0, d = n->weight + 1; i < n->dscale; i += 4, d++)
			put_group(b, numeric_digit(n, d), 0, n->dscale - i < 4 ? n->dscale - i : 4);
	}
}

static const uint64_t pow10_u[16] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
	UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
};

/*
 * numeric(p,s), p <= 15, without its text: what values_convert_numeric_num()
 * stores of numeric_out's text, for a value of at most 15 digits. Whole,
 * the integer. Else M / 10^s, M the digits as an integer below 10^15: both
 * are exact doubles, so the quotient is the correctly rounded value of the
 * decimal, as strtod() gives it. False for any other value: the caller
 * then takes the text path.
 */
static bool numeric_num_direct(const Numeric *n, Value *out)
{
	uint64_t ip = 0, fp = 0, m;
	int fdigits = 0;

	if ((n->sign != NUMERIC_POS && n->sign != NUMERIC_NEG) || n->weight > 3 || n->dscale > 15)
		return false;
	for (int d = 0; d <= n->weight; d++)
		ip = ip * NBASE + numeric_digit(n, d);
	for (int d = n->weight + 1; fdigits < n->dscale; d++) {
		int take = n->dscale - fdigits < 4 ? n->dscale - fdigits : 4;

		fp = fp * pow10_u[take] + numeric_digit(n, d) / pow10_u[4 - take];
		fdigits += take;
	}
	if (fp == 0) {
		out->kind = VAL_INT;
		out->i = n->sign == NUMERIC_NEG ? -(int64_t) ip : (int64_t) ip;
		return true;
	}
	if (ip >= pow10_u[15 - n->dscale])
		return false;
	m = ip * pow10_u[n->dscale] + fp;
	out->kind = VAL_REAL;
	out->r = (double) m / (double) pow10_u[n->dscale];
	if (n->sign == NUMERIC_NEG)
		out->r = -out->r;
	return true;
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

		if (!numeric_read(p, len, &n, e, VT_NUMERIC_TEXT))
			return false;
		numeric_text(b, &n);
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

bool values_convert_binary(uint32_t type_oid, ColumnType type, int server_version,
			   const char *data, size_t len, ValueBuf *buf, Value *out, char *err,
			   size_t errsize)
{
	const unsigned char *p = (const unsigned char *) data;
	Err e = { err, errsize };
	ValueType vt = type.vt;

	if (!values_binary_supported(type_oid, type, server_version))
		return values_fail(&e, "type %u is not read in binary", (unsigned) type_oid);
	if (data == NULL) {
		if (len != 0)
			return values_fail(&e, "value of %zu bytes has no data", len);
		data = values_empty;
		p = (const unsigned char *) data;
	}
	buf->len = 0;
	if (vt == VT_ARRAY) {
		if (!values_binary_array_json(values_array_elem_oid(type_oid), type.elem_vt,
					      server_version, p, len, buf, &e))
			return false;
		values_set_from_buf(out, VAL_TEXT, buf);
		return true;
	}
	switch (type_oid) {
	case OID_BOOL:
		if (len != 1)
			return bad_length(&e, vt, len);
		if (p[0] > 1) /* boolrecv's own rule is any non-zero byte; boolsend writes 0 or 1 */
			return values_fail(&e, "invalid binary value for type boolean: byte %u, not 0 or 1",
					   (unsigned) p[0]);
		out->kind = VAL_INT;
		out->i = p[0];
		return true;
	case OID_BYTEA:
		values_set_text(out, VAL_BLOB, data, len);
		return true;
	case OID_INT2:
		if (len != 2)
			return bad_length(&e, vt, len);
		out->kind = VAL_INT;
		out->i = (int16_t) get16(p);
		return true;
	case OID_INT4:
	case OID_OID:
		if (len != 4)
			return bad_length(&e, vt, len);
		out->kind = VAL_INT;
		out->i = type_oid == OID_OID ? (int64_t) get32(p) : (int32_t) get32(p);
		return true;
	case OID_INT8:
		if (len != 8)
			return bad_length(&e, vt, len);
		out->kind = VAL_INT;
		out->i = (int64_t) get64(p);
		return true;
	case OID_FLOAT8: {
		uint64_t bits;

		if (len != 8)
			return bad_length(&e, vt, len);
		bits = get64(p);
		out->kind = VAL_REAL;
		memcpy(&out->r, &bits, sizeof out->r);
		if (isnan(out->r))
			values_set_text(out, VAL_TEXT, "NaN", 3); /* float8out's word */
		return true;
	}
	case OID_JSONB:
		/* a version byte, then the text jsonb_out writes */
		if (len < 1 || p[0] != 1)
			return values_fail(&e, "invalid binary value for type jsonb: version %d",
					   len < 1 ? -1 : p[0]);
		return values_convert(type, data + 1, len - 1, buf, out, err, errsize);
	case OID_UUID:
		if (len != 16)
			return bad_length(&e, vt, len);
		uuid_text(buf, p);
		values_set_from_buf(out, VAL_TEXT, buf);
		return true;
	case OID_NUMERIC: {
		Numeric n = { 0 };

		if (!numeric_read(p, len, &n, &e, vt))
			return false;
		if (vt == VT_NUMERIC_NUM && numeric_num_direct(&n, out))
			return true;
		/* the converters of numeric text leave buf alone */
		numeric_text(buf, &n);
		return vt == VT_NUMERIC_NUM ?
		       values_convert_numeric_num(buf->data, buf->len, out, &e) :
		       values_convert_numeric_text(buf->data, buf->len, out, &e);
	}
	case OID_FLOAT4:
		/* the shortest decimal, read as the text path reads it */
		if (!values_binary_text(type_oid, server_version, p, len, buf, &e))
			return false;
		return values_convert_float(buf->data, buf->len, out, &e);
	case OID_DATE:
	case OID_TIMESTAMP:
	case OID_TIMESTAMPTZ:
	case OID_TIME:
	case OID_TIMETZ:
	case OID_INTERVAL:
	case OID_INET:
	case OID_CIDR:
		/* the stored form, or the text: plain ASCII */
		if (!values_binary_text(type_oid, server_version, p, len, buf, &e))
			return false;
		values_set_from_buf(out, VAL_TEXT, buf);
		return true;
	default: /* text, varchar, bpchar, name, json: their text */
		return values_convert(type, data, len, buf, out, err, errsize);
	}
}

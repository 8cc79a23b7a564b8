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

#include "values_wire.h"

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
		       (shortest || (elem != OID_FLOAT4 && elem != OID_FLOAT8)) &&
		       (elem != OID_FLOAT8 || values_float8_text_exact());
	}
	return values_binary_vt(type_oid, type.vt) == type.vt &&
	       (shortest || type_oid != OID_FLOAT4);
}

static bool bad_length(Err *e, ValueType vt, size_t len)
{
	return values_binary_bad_length(e, values_type_sql_name(vt), len);
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
		ip = ip * NBASE + values_numeric_digit(n, d);
	for (int d = n->weight + 1; fdigits < n->dscale; d++) {
		int take = n->dscale - fdigits < 4 ? n->dscale - fdigits : 4;

		fp = fp * pow10_u[take] + values_numeric_digit(n, d) / pow10_u[4 - take];
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
	case OID_NUMERIC: {
		Numeric n = { 0 };

		if (!values_numeric_read(p, len, &n, &e, vt))
			return false;
		if (vt == VT_NUMERIC_NUM && numeric_num_direct(&n, out))
			return true;
		/* the converters of numeric text leave buf alone */
		values_numeric_text(buf, &n);
		return vt == VT_NUMERIC_NUM ?
		       values_convert_numeric_num(buf->data, buf->len, out, &e) :
		       values_convert_numeric_text(buf->data, buf->len, out, &e);
	}
	case OID_FLOAT4:
		/* the shortest decimal, read as the text path reads it */
		if (!values_binary_text(type_oid, server_version, p, len, buf, &e))
			return false;
		return values_convert_float(buf->data, buf->len, out, &e);
	case OID_UUID:
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

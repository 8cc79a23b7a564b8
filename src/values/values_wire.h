/*
 * values_wire.h: what the files that read PostgreSQL's binary format
 * share: big-endian readers, the texts output functions write (the
 * float texts in values_float.c, the time, interval and network address
 * texts in values_binary_text.c), and arrays (values_binary_array.c).
 */
#ifndef PGMIRROR_VALUES_WIRE_H
#define PGMIRROR_VALUES_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <float.h>

#include "values_internal.h"

/* Whether values_float_text() can write a float8: the midpoints between a
 * float8 and its neighbours must be exact long doubles (54 bits), also
 * when computed (valgrind, for one, computes long doubles as doubles);
 * where they are not, float8 arrays are not read in binary. */
bool values_float8_text_exact(void);

/* Built-in type OIDs read in binary (pg_type.dat). */
enum {
	OID_BOOL = 16, OID_BYTEA = 17, OID_NAME = 19, OID_INT8 = 20, OID_INT2 = 21,
	OID_INT4 = 23, OID_OID = 26, OID_JSON = 114, OID_CIDR = 650, OID_FLOAT4 = 700,
	OID_INET = 869, OID_BPCHAR = 1042, OID_DATE = 1082, OID_TIME = 1083,
	OID_TIMESTAMP = 1114, OID_TIMESTAMPTZ = 1184, OID_INTERVAL = 1186, OID_TIMETZ = 1266,
	OID_UUID = 2950, OID_JSONB = 3802,
};

static inline uint16_t get16(const unsigned char *p)
{
	return (uint16_t) (p[0] << 8 | p[1]);
}

static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static inline uint64_t get64(const unsigned char *p)
{
	return (uint64_t) get32(p) << 32 | get32(p + 4);
}

/* numeric_send's sign word, and its display scale's bits. */
enum {
	NUMERIC_POS = 0x0000, NUMERIC_NEG = 0x4000, NUMERIC_NAN = 0xC000,
	NUMERIC_PINF = 0xD000, NUMERIC_NINF = 0xF000, NUMERIC_DSCALE_MASK = 0x3FFF,
};
#define NBASE 10000

/* numeric_send's value: its header words, and its digits at p + 8. */
typedef struct Numeric {
	const unsigned char *p;
	int ndigits, weight, sign, dscale;
} Numeric;

/* Reads and checks a numeric_send value as numeric_recv() does (vt names
 * the type in messages); its n-th base-10000 digit (0 past the stored
 * ones, either side); numeric_out's text of it (values_binary_text.c). */
bool values_numeric_read(const unsigned char *p, size_t len, Numeric *n, Err *e,
			 ValueType vt);
unsigned values_numeric_digit(const Numeric *n, int d);
void values_numeric_text(ValueBuf *b, const Numeric *n);

/* "invalid binary value for type T: N bytes"; returns false. */
bool values_binary_bad_length(Err *e, const char *type, size_t len);

/* The ValueType the text path gives a type read in binary, VT_ARRAY for
 * one that is not (values_binary_text.c). */
ValueType values_binary_vt(uint32_t type_oid, ValueType vt);

/*
 * Appends to b the text type_oid's output function writes of the value
 * its send function wrote as p[0..len) (the session's settings: DateStyle
 * ISO, IntervalStyle postgres, TimeZone UTC, extra_float_digits 3 on
 * PostgreSQL 12+) on a server of that version, except that a timestamp is written in the stored form
 * (a fraction of six digits, and in UTC), which the array writer quotes
 * as the text path does (values_binary_text.c).
 */
bool values_binary_text(uint32_t type_oid, int version, const unsigned char *p, size_t len,
			ValueBuf *b, Err *e);

/* float4out / float8out (PostgreSQL 12+, extra_float_digits > 0) of v,
 * a float4's value when single (values_float.c); a float8 only where
 * values_float8_text_exact(). */
void values_float_text(ValueBuf *b, double v, bool single);

/* time_out, timetz_out, interval_out and inet_out/cidr_out of the send
 * functions' bytes (values_binary_text.c). */
bool values_time_text(const unsigned char *p, size_t len, bool tz, ValueBuf *b, Err *e);
bool values_interval_text(const unsigned char *p, size_t len, int version, ValueBuf *b,
			  Err *e);
bool values_inet_text(const unsigned char *p, size_t len, bool cidr, ValueBuf *b, Err *e);

/* array_send's bytes of an array of elem_oid elements, mirrored as
 * elem_vt, to the JSON array the text path stores (values_binary_array.c). */
bool values_binary_array_json(uint32_t elem_oid, ValueType elem_vt, int version,
			      const unsigned char *p, size_t len, ValueBuf *b, Err *e);

#endif

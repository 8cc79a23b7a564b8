/*
 * values.h: turning a source column value (PostgreSQL's text output, as
 * pgoutput sends it) into the value the mirror stores, per the Values table
 * of the contract (README.md, "How values are stored").
 *
 * Pure: no SQLite, no libpq. The replication session fixes the settings
 * that shape text output (TimeZone=UTC, DateStyle=ISO, IntervalStyle=
 * postgres, extra_float_digits=3, bytea_output=hex), so the input forms
 * are known.
 */
#ifndef PGMIRROR_VALUES_H
#define PGMIRROR_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"

/*
 * How a source type is mirrored; decided once per column.
 * Append only: stored in mirrors (pgmirror_columns.value_type), so a
 * member keeps its number for ever and a new one takes the next.
 */
typedef enum ValueType {
	VT_TEXT = 0,          /* PostgreSQL's text output, as is */
	VT_BOOL = 1,          /* INTEGER 0/1 */
	VT_INT = 2,           /* INTEGER: int2, int4, int8, oid */
	VT_FLOAT = 3,         /* REAL; NaN as text 'NaN', +-Infinity as +-Inf */
	VT_NUMERIC_NUM = 4,   /* numeric(p,s), p <= 15: NUMERIC, integer or real */
	VT_NUMERIC_TEXT = 5,  /* numeric otherwise: TEXT, exact decimal text */
	VT_BYTEA = 6,         /* BLOB: raw bytes from the hex form */
	VT_DATE = 7,          /* TEXT YYYY-MM-DD */
	VT_TIMESTAMP = 8,     /* TEXT YYYY-MM-DD HH:MM:SS[.ffffff] */
	VT_TIMESTAMPTZ = 9,   /* TEXT, same form, in UTC */
	VT_JSON = 10,         /* TEXT: the JSON text */
	VT_ARRAY = 11,        /* TEXT: a JSON array */
} ValueType;

/*
 * A column's type as the mirror sees it: the ValueType and, for arrays,
 * the ValueType of the elements (which decides how each element is written
 * in JSON) and the byte array_out puts between them: the element type's
 * pg_type.typdelim, ',' for every built-in type but box (';').
 */
typedef struct ColumnType {
	ValueType vt;        /* how the value is stored */
	ValueType elem_vt;   /* VT_ARRAY only: how elements are written */
	char delim;          /* VT_ARRAY only: the element delimiter */
} ColumnType;

/*
 * The ColumnType of a built-in type OID with its type modifier; false when
 * the OID is not a built-in type this module knows (the caller then
 * resolves it, e.g. a domain to its base type, an array to its element).
 */
bool values_builtin_type(uint32_t type_oid, int32_t typmod, ColumnType *out);

/* The pg_type.typname of a known built-in type OID, or NULL. */
const char *values_builtin_type_name(uint32_t type_oid);

/* The declared SQLite column type: "INTEGER", "REAL", "NUMERIC", "TEXT" or
 * "BLOB". */
const char *values_declared_type(ColumnType type);

/* What becomes of the values the mirror holds when the source retypes a
 * column (ALTER COLUMN ... TYPE). */
typedef enum ValueRetype {
	RETYPE_NONE,   /* not reproducible from the stored values (bool to
			* text gives "true" on the source, but 1 is stored; a
			* narrower numeric scale rounds; char(n) pads): read
			* them again */
	RETYPE_COPY,   /* the stored values as they are */
	RETYPE_TEXT,   /* the stored integers as text */
	RETYPE_REAL,   /* the stored integers as reals */
} ValueRetype;

/*
 * The rule for a column of type old_oid/old_typmod, stored as old_vt (the
 * pgmirror_columns.value_type number, which may be any integer), that the
 * source now has as new_oid/new_typmod, to be stored as new_type.
 */
ValueRetype values_retype(uint32_t old_oid, int32_t old_typmod, int old_vt,
			  uint32_t new_oid, int32_t new_typmod, ColumnType new_type);

/* A value ready to be bound. */
typedef enum ValueKind { VAL_NULL, VAL_INT, VAL_REAL, VAL_TEXT, VAL_BLOB } ValueKind;

typedef struct Value {
	ValueKind kind;
	int64_t i;       /* VAL_INT */
	double r;        /* VAL_REAL */
	const char *p;   /* VAL_TEXT / VAL_BLOB: borrowed from the input or
			  * from the ValueBuf; not NUL-terminated */
	size_t len;      /* bytes at p */
} Value;

/* Scratch memory for conversions that produce new bytes; one per column,
 * reused for every row, so nothing is allocated per row once warm. */
typedef struct ValueBuf {
	char *data;
	size_t len;
	size_t cap;
} ValueBuf;

void values_buf_free(ValueBuf *buf);

/* The most a ValueBuf keeps between values. A larger one, made by a huge
 * value, is freed by values_buf_trim() once that value is used, so that
 * the memory does not stay with the process; values up to this size
 * convert without allocating once the buffer is warm. */
#define VALUES_BUF_KEEP ((size_t)1 << 20)

/* Frees buf's memory if it holds more than VALUES_BUF_KEEP bytes; any
 * Value that points into it is then invalid. */
void values_buf_trim(ValueBuf *buf);

/*
 * Converts one text-format value (len bytes, not NUL-terminated) of the
 * given type. out may point into text or into buf, whichever holds the
 * result; it stays valid until buf is used again. On malformed input
 * returns false with a message in err, e.g.
 * "invalid input for type int4: \"12x\"". Text must be UTF-8 (the
 * session asks for it; only a SQL_ASCII source can send anything else):
 * other bytes are refused, never stored.
 */
bool values_convert(ColumnType type, const char *text, size_t len,
		    ValueBuf *buf, Value *out, char *err, size_t errsize)
		    PGM_MUST_CHECK;

/*
 * Whether a column of type type_oid, mirrored as type, can be read in
 * PostgreSQL's binary format (COPY ... (FORMAT binary), pgoutput's binary
 * tuple data) from a server of server_version (PQserverVersion()): the
 * built-in types whose binary form gives exactly what values_convert()
 * stores from their text: bool, bytea, int2/4/8, oid, float4 (from
 * PostgreSQL 12, whose text is the shortest decimal), float8, numeric,
 * text, varchar, bpchar, name, json, jsonb, uuid, date, time, timetz,
 * timestamp, timestamptz, interval, inet, cidr, and one- or
 * multi-dimensional arrays of any of them (of float4 or float8 from
 * PostgreSQL 12). The copy and the stream ask it of every column.
 */
bool values_binary_supported(uint32_t type_oid, ColumnType type, int server_version);

/*
 * Converts one binary-format value (len bytes, as the type's send function
 * wrote them) of a column values_binary_supported() accepts for
 * server_version: the same Value values_convert() makes of that value's
 * text output on that server (an interval whose fields are all at their
 * ends is "infinity" from PostgreSQL 17, an ordinary interval before),
 * with the same lifetime rules; on bytes the send function would not have
 * written, false with a message in err.
 */
bool values_convert_binary(uint32_t type_oid, ColumnType type, int server_version,
			   const char *data, size_t len, ValueBuf *buf, Value *out, char *err,
			   size_t errsize) PGM_MUST_CHECK;

#endif

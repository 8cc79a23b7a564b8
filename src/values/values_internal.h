/*
 * values_internal.h: what the files of the values module share, and no
 * other module sees, each part in the header of the file that owns it
 * (values_buf.h below them all), so that a helper takes only from files
 * below it: the parsers one kind of value borrows from another (an array
 * of numbers writes each element with the scalar parsers, an array of json
 * checks each element with the JSON validator).
 *
 *   values.c         the type table, declared SQLite types, retype rules,
 *                    and values_convert(), which dispatches to:
 *   values_buf.c     error messages, the ValueBuf writers, UTF-8 checking
 *   values_scalar.c  integers, decimals (float8, numeric), bytea, text
 *   values_time.c    timestamp and timestamptz text to the stored form
 *   values_json.c    JSON validation and JSON string escaping
 *   values_array.c   PostgreSQL array text to a JSON array
 *   values_binary.c  the binary format of some types to the same values,
 *                    over values_binary_array.c (arrays), over
 *                    values_binary_text.c (each type's output text), over
 *                    values_float.c (float texts); they share
 *                    values_wire.h
 */
#ifndef PGMIRROR_VALUES_INTERNAL_H
#define PGMIRROR_VALUES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pgmirror/values.h"

/* Built-in type OIDs the rules name (pg_type.dat). */
enum {
	OID_TEXT = 25, OID_FLOAT8 = 701, OID_VARCHAR = 1043, OID_NUMERIC = 1700,
};

/* An array type's element type OID; 0 for any other type (values.c). */
uint32_t values_array_elem_oid(uint32_t type_oid);

#include "values_buf.h"
#include "values_scalar.h"
#include "values_time.h"
#include "values_json.h"
#include "values_array.h"

#endif

/*
 * values_json.h: JSON validation and string escaping (values_json.c).
 */
#ifndef PGMIRROR_VALUES_JSON_H
#define PGMIRROR_VALUES_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/values.h"
#include "values_buf.h"

/* ---------------------------------------------------------------------
 * JSON (values_json.c)
 * ------------------------------------------------------------------ */

/* Whether s[0..n) is one JSON value (RFC 8259). */
bool values_json_valid(const char *s, size_t n);
/* Appends s as a JSON string; escaped: undo array_out's backslashes. */
bool values_json_string_append(ValueBuf *b, const char *s, size_t n,
			       bool escaped, Err *e);

#endif

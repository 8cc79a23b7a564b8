/*
 * values_array.h: PostgreSQL's array text to a JSON array (values_array.c).
 */
#ifndef PGMIRROR_VALUES_ARRAY_H
#define PGMIRROR_VALUES_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/values.h"
#include "values_buf.h"

/* ---------------------------------------------------------------------
 * Arrays (values_array.c)
 * ------------------------------------------------------------------ */

/* A delimiter array_out's text can be split on. */
bool values_array_delim_usable(char delim);
/* PostgreSQL's array text to a JSON array, appended to b. */
bool values_array_to_json(ValueType elem_vt, char delim, const char *s, size_t n,
			  ValueBuf *b, Err *e);
/* Appends the JSON of one non-NULL element of an array of vt, s[0..n)
 * its output function's text (unquoted); s must not point into b. */
bool values_array_element_append(ValueType vt, const char *s, size_t n, ValueBuf *b, Err *e);

#endif

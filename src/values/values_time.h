/*
 * values_time.h: timestamps' stored form, for the text and binary conversions and
 * the arrays (values_time.c).
 */
#ifndef PGMIRROR_VALUES_TIME_H
#define PGMIRROR_VALUES_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/values.h"
#include "values_buf.h"

/* ---------------------------------------------------------------------
 * Timestamps (values_time.c)
 * ------------------------------------------------------------------ */

/* Longest stored form: 10 year digits, "-MM-DD HH:MM:SS", ".ffffff",
 * " BC". */
#define STAMP_TEXT_MAX 40

/* "infinity" or "-infinity", stored as they are. */
bool values_is_infinity_word(const char *s, size_t n);
/* Append the stored form of a timestamp / timestamptz (in UTC) to b. */
bool values_timestamp_append(ValueBuf *b, const char *s, size_t n, Err *e);
bool values_timestamptz_append(ValueBuf *b, const char *s, size_t n, Err *e);
/* From the binary forms, which count from 2000-01-01 (in range, not
 * infinity): the text date_out writes of a date, and the stored form of
 * a timestamp (UTC for a timestamptz). */
void values_date_append(ValueBuf *b, int32_t days);
void values_stamp_append(ValueBuf *b, int64_t usecs);

#endif

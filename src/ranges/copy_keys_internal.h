/*
 * copy_keys_internal.h: what copy_keys_time.c lends copy_keys.c.
 */
#ifndef PGMIRROR_COPY_KEYS_INTERNAL_H
#define PGMIRROR_COPY_KEYS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Text of fixed-width fields byte by byte, then an optional fraction: a
 * fraction of zeros (or none) is zero. <0, 0, >0. */
int copy_key_cmp_fixed(const char *a, size_t alen, const char *b, size_t blen);
/* Two intervals' text by their span, as PostgreSQL compares them. */
int copy_key_cmp_interval(const char *a, size_t alen, const char *b, size_t blen);
/* Whether s is an interval's text as the mirror holds it. */
bool copy_key_interval_valid(const char *s, size_t n);

#endif

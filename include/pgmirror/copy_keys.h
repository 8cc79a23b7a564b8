/*
 * copy_keys.h: how a key column of a copy in parts orders, as the source
 * orders it in the copy's query (ORDER BY the key, its type's default
 * btree order; text COLLATE "C") and as the mirror holds its values
 * (values.h: the same Value whether the value came as text or binary).
 *
 * Each key column has a kind, kept with every key in copy_state:
 *
 *   'i'  integers: int2, int4, int8, oid, and bool (0 < 1), by value
 *   't'  bytes: text and varchar (UTF-8, COLLATE "C"), uuid (its text
 *        orders as its bytes), a shorter one first when it begins the other
 *   'b'  bpchar (char(n)): as 't', trailing blanks not counted
 *   'n'  numeric: by value (1.0 = 1.00), -Infinity first, then the
 *        numbers, Infinity, and NaN last; the mirror's integer, real
 *        (numeric(p,s) with p <= 15: at most 15 digits, so the real's
 *        15-digit text is the value exactly) or decimal text
 *   'd'  date, timestamp, timestamptz: the stored text (UTC, "YYYY-MM-DD
 *        [HH:MM:SS[.ffffff]][ BC]", years past 9999 with more digits),
 *        by time; '-infinity' first, 'infinity' last
 *   'f'  float8, 'r' float4: the text of the held real with the fewest
 *        digits that read back as it (a float4: as that float4), 'NaN',
 *        'Infinity', '-Infinity'; by value, NaN last and equal to NaN,
 *        -0 = 0 (float8_cmp_internal); a float4 compared as a float4
 *   'h'  time: "HH:MM:SS[.ffffff]", by its fields; 24:00:00 last
 *   'v'  interval: IntervalStyle postgres's text, by its span (a month
 *        30 days, a day 24 hours: interval_cmp_value()), '1 mon' = '30 days'
 *   'x'  bytea: kept as "\x" and lower-case hex (the text bytea reads);
 *        byte by byte, a shorter one first when it begins the other
 *
 * A domain's key has its base type's kind (the caller resolves it). Any
 * other type has no kind, and its table is copied whole: an enum (it
 * orders by its labels' creation, which its text does not say), text on a
 * database not in UTF8 (its bytes order otherwise), and those whose order
 * is not written here (timetz, inet, cidr, arrays, ranges, composites).
 * Pure code: no SQLite, no libpq.
 */
#ifndef PGMIRROR_COPY_KEYS_H
#define PGMIRROR_COPY_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/values.h"

#define COPY_KEY_INT 'i'
#define COPY_KEY_BYTES 't'
#define COPY_KEY_BPCHAR 'b'
#define COPY_KEY_NUMERIC 'n'
#define COPY_KEY_TIME 'd'
#define COPY_KEY_FLOAT8 'f'
#define COPY_KEY_FLOAT4 'r'
#define COPY_KEY_CLOCK 'h'
#define COPY_KEY_INTERVAL 'v'
#define COPY_KEY_BYTEA 'x'

/* The largest text copy_key_numeric_text() writes, NUL included. */
#define COPY_KEY_NUMBER_SIZE 32

/*
 * The kind (above) of a key column of type type_oid with type_mod, on a
 * source whose database encoding is UTF8 or not; 0 when it has none.
 */
char copy_key_kind(uint32_t type_oid, int32_t type_mod, bool utf8);

/* Whether the copy's query orders a key column of that type COLLATE "C". */
bool copy_key_collated(uint32_t type_oid);

/* Whether kind is one of the kinds above. */
bool copy_key_kind_valid(char kind);

/*
 * The text of a numeric key value v (VAL_INT, VAL_REAL or VAL_TEXT), the
 * form a key of kind 'n' is kept in and given back to the source: the
 * decimal text itself, or the integer's, or the real's 15 digits. A
 * VAL_TEXT value is not copied: *out points at it; otherwise at buf
 * (COPY_KEY_NUMBER_SIZE bytes). Returns its length.
 */
size_t copy_key_numeric_text(const Value *v, char *buf, const char **out);

/* Compares two key values of a kind held as text (all but 'i'; a numeric
 * one as copy_key_numeric_text() gives it): <0, 0, >0, as the source
 * orders them. */
int copy_key_cmp_text(char kind, const char *a, size_t alen, const char *b, size_t blen);

/* The text a key of kind (not 'i') keeps of value v, as copy_state holds
 * it and the source reads it back: malloc'd, its length in *len. */
char *copy_key_text(char kind, const Value *v, size_t *len);

/* Whether s (len bytes) is a key's text of kind as copy_key_text() writes
 * it: a float's, a bytea's hex, an interval's (other kinds: true). */
bool copy_key_text_valid(char kind, const char *s, size_t len);

/* Compares key value v (as the mirror holds it) with a key's text of that
 * kind: <0, 0, >0, as the source orders them. */
int copy_key_cmp_value(char kind, const Value *v, const char *key, size_t keylen);

#endif

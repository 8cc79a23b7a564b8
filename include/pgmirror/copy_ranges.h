/*
 * copy_ranges.h: how far a copy in parts got, and from where each part's
 * rows are the mirror's (DESIGN.md invariant 12).
 *
 * A table with a key is copied in key order, in tries: each try reads the
 * rows after the last key the one before reached, under a snapshot of its
 * own. Its key range, (the last try's key, the last key it reached], holds
 * rows as that snapshot had them, so a change to a row applies only from
 * a transaction that commits at or after that snapshot's LSN; a key past
 * every range is not the mirror's yet (the copy brings it). The ranges are
 * kept as text in pgmirror_tables.copy_state:
 *
 *     pgmirror-copy 1 SIGNATURE\n        (hex: what the rows were copied as)
 *     LSN KEY\n                          (one line per try, keys ascending)
 *
 * where KEY is '*' (the copy reached the table's end) or one item per key
 * column: 'i' decimal ';' for an integer, or its kind's letter (copy_keys.h:
 * 't', 'b', 'n', 'd', 'f', 'r', 'h', 'v', 'x') length ':' bytes for a key
 * held as text.
 *
 * The text is only ever read by parsing it whole (copy_ranges_parse()):
 * a key's bytes are the source's data, so what the text ends with, or
 * holds, says nothing (a text key may end in " *\n"). Each item ends
 * where its kind says, so the lines themselves say how many key columns
 * the ranges were written with, and their kinds: a reader takes that
 * shape from the text, never from the table as it is now (its key may
 * have changed since).
 * Pure code: no SQLite, no libpq.
 */
#ifndef PGMIRROR_COPY_RANGES_H
#define PGMIRROR_COPY_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"
#include "pgmirror/values.h"

/* One key column's value: an integer, or text (bytes owned). */
typedef struct CopyKeyItem {
	char kind;          /* its column's kind (copy_keys.h); 'i': i, else s */
	int64_t i;
	char *s;
	size_t len;
} CopyKeyItem;

typedef struct CopyRange {
	Lsn lsn;            /* the snapshot its rows came from */
	bool to_end;        /* it runs to the table's end */
	CopyKeyItem *key;   /* its last key, inclusive (nkeys items); NULL when to_end */
} CopyRange;

typedef struct CopyRanges {
	uint64_t signature; /* the table as it was copied (copy_ranges_signature()) */
	int nkeys;          /* key columns (parsed: of the lines with a key;
			     * 0 when no line has one) */
	char *kinds;        /* each key column's kind (copy_keys.h), malloc'd;
			     * NULL, or a column's 0: from its values (an
			     * integer 'i', else 't') */
	int n;              /* ranges, keys ascending */
	CopyRange *r;
} CopyRanges;

void copy_ranges_free(CopyRanges *cr);
/* Parses text (see above), its key columns' number and kinds as its lines
 * have them (nkeys, kinds); NULL with err set when it is malformed. */
CopyRanges *copy_ranges_parse(const char *text, char *err, size_t errsize);
/* The text of cr; malloc'd. */
char *copy_ranges_format(const CopyRanges *cr);

/* Whether state (pgmirror_tables.copy_state; NULL: none) is that of a
 * copy that has not reached the table's end, by a parse of it: a text
 * that does not parse counts as unfinished (its copy goes on, which finds
 * it damaged and starts over: copy_parts.c). */
bool copy_state_unfinished(const char *state);
/* Whether the copy reached the table's end. */
bool copy_ranges_done(const CopyRanges *cr);
/* The highest LSN of the ranges: from a transaction committed at or after
 * it (once done), every change applies. */
Lsn copy_ranges_max_lsn(const CopyRanges *cr);
/*
 * Sets the last key of the try at lsn to the key of vals (one per key
 * column, kept as its kind says: copy_ranges_kind()), or to the end (vals
 * NULL): the last range when it is that try's, else a new one after it.
 */
void copy_ranges_reach(CopyRanges *cr, Lsn lsn, const Value *vals);

/*
 * Whether a change to the row with key vals (is_key[ncols] picks the key
 * columns out of a row's ncols values) applies in a transaction committed
 * at commit_lsn: its key lies in a range whose LSN is at or before it. A
 * key past every range is not the mirror's yet: false.
 */
bool copy_ranges_applies(const CopyRanges *cr, const Value *vals, const bool *is_key, int ncols,
			 Lsn commit_lsn);

/* The kind of key column k of cr, whose value v is. */
char copy_ranges_kind(const CopyRanges *cr, int k, const Value *v);

/* The text of key item it that the source takes as a literal of its
 * column's type (the session's DateStyle ISO and TimeZone UTC read a time
 * as the mirror holds it); malloc'd. */
char *copy_key_literal(const CopyKeyItem *it);

/* Compares key vals (nkeys values) with key items: <0, 0, >0. */
int copy_key_compare(const Value *vals, const CopyKeyItem *key, int nkeys);

/* A 64-bit FNV-1a hash of len bytes, going on from h (start: 0). */
uint64_t copy_ranges_hash(uint64_t h, const void *p, size_t len);

#endif

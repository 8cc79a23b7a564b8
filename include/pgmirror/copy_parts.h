/*
 * copy_parts.h: a table copied in parts, each committed with how far it
 * got, so that a copy cut short (a lost connection, a kill, a power cut)
 * loses at most the part in flight and the next try goes on from there
 * under a snapshot of its own (DESIGN.md invariant 12; copy_ranges.h says
 * what is stored and how the stream uses it).
 *
 * A table can be copied in parts when it has a key (replica identity
 * DEFAULT or INDEX) whose every column orders on the source as it does
 * here (copy_keys.h): integers (int2, int4, int8, oid), bool, numeric,
 * date, timestamp, timestamptz, uuid, and text, varchar and char(n) on a
 * UTF8 database (read COLLATE "C"). Any other table is copied whole, in
 * one part.
 */
#ifndef PGMIRROR_COPY_PARTS_H
#define PGMIRROR_COPY_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/copy.h"
#include "pgmirror/mirror.h"

/* Whether t can be copied in parts (above) from source s. */
bool copy_parts_possible(Session *s, const SourceTable *t);

/*
 * Copies t into the mirror m at snapshot lsn at, inside the transaction
 * copy_begin_at(c, at) opened, in parts when it can: a part ends after about a second of copying or a few MB, and is
 * committed (with how far it got) before the next one begins at the same
 * lsn. When m holds an unfinished copy of t of the same shape, the copy
 * goes on after its last key; a half copy of another shape is dropped
 * first. estimate (the source's row count, -1: none) is stored for
 * --status. The last part's transaction is left open for the caller
 * (copy_commit_at(), then apply_flush()).
 */
bool copy_table_parts(Copier *c, Mirror *m, const SourceTable *t, Lsn at, int64_t estimate)
	PGM_MUST_CHECK;

/* What t's rows are copied as (its replica identity, definition, row
 * filter, columns with their types and keys), hashed: a copy of another
 * shape cannot go on from this one's parts, and may store values that
 * this one could not. */
uint64_t copy_parts_signature(const SourceTable *t);

/* The parts copy_table_parts() committed since copy_parts_stored_reset()
 * (the process's: one copy runs at a time). A try that stored one made
 * progress, and a cut of it is worth another try at once. */
uint64_t copy_parts_stored(void);
void copy_parts_stored_reset(void);

/*
 * Orders tables t[0..n-1] for a copy (est_bytes: the source's size of
 * each, reordered along): those that can be copied in parts, or that fit
 * in one part (4 MB, PART_BYTES) though they cannot, first; then the
 * others, which a cut sends back to their start; within each, the
 * smallest first. perm[i] gets the index into the original order of the
 * i-th table to copy.
 */
void copy_parts_order(Session *s, const SourceTable *t, const int64_t *est_bytes, int n,
		      int *perm);

#endif

/*
 * mirror_verify.h: the SQLite side of --verify. The source's rows of one
 * table, converted as the mirror stores them, go into a private temporary
 * on-disk database attached to the mirror's connection (never into the
 * mirror file, never held in memory); SQL then counts the rows that are
 * missing from the mirror table, unexpected in it, or changed, comparing
 * every value with its storage class.
 */
#ifndef PGMIRROR_MIRROR_VERIFY_H
#define PGMIRROR_MIRROR_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/mirror.h"
#include "pgmirror/values.h"

typedef struct MirrorCompare MirrorCompare;

/* What a comparison found. */
typedef struct MirrorDiff {
	int64_t missing;     /* source rows the mirror lacks */
	int64_t unexpected;  /* mirror rows the source lacks */
	int64_t changed;     /* same key, another value (tables with a key) */
} MirrorDiff;

/*
 * The mirror table of source relation oid (pgmirror_tables.relation_oid):
 * *name is malloc'd, or NULL when the mirror has none.
 */
bool mirror_table_of_relation(Mirror *m, uint32_t oid, char **name) PGM_MUST_CHECK;

/*
 * Whether mirror table `table` has exactly the columns names[0..ncols-1],
 * in that order (*same).
 */
bool mirror_table_has_columns(Mirror *m, const char *table, const char *const *names,
			      int ncols, bool *same) PGM_MUST_CHECK;

/*
 * Starts comparing mirror table `table`, whose source columns are
 * names[], stored as types[]; is_key marks the key columns (none: the
 * table is compared as a multiset of rows, duplicates counted). Attaches
 * the scratch database (temp_store is set to FILE first, so it is a file
 * even where SQLite's default keeps temporary data in memory) and opens a
 * transaction on it. The arrays must outlive the comparison.
 */
bool mirror_compare_begin(Mirror *m, const char *table, const char *const *names,
			  const ColumnType *types, const bool *is_key, int ncols,
			  MirrorCompare **out) PGM_MUST_CHECK;
/* Adds one source row (ncols values). */
bool mirror_compare_add(MirrorCompare *c, const Value *vals) PGM_MUST_CHECK;
/* Counts the differences; the scratch database stays until _free. */
bool mirror_compare_end(MirrorCompare *c, MirrorDiff *out) PGM_MUST_CHECK;
/* Rolls back what is open and detaches (deletes) the scratch database. */
void mirror_compare_free(MirrorCompare *c);

#endif

/*
 * mirror_pending.h: the tables a sync is still to copy (pgmirror_pending,
 * see sql/schema.sql): a first run, or tables that join, lists every table
 * it is to copy when it starts, so that --status (which reads the file
 * alone) shows those not begun yet, with the source's estimate of their
 * rows. A table's copy that has begun has a mirror table, and shows its
 * own progress (pgmirror_tables.copy_rows).
 */
#ifndef PGMIRROR_MIRROR_PENDING_H
#define PGMIRROR_MIRROR_PENDING_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/mirror.h"

typedef struct MirrorPending {
	uint32_t relation_oid;     /* the source relation */
	char *source_schema;       /* its names when the sync began */
	char *source_table;
	int64_t estimate;          /* the source's estimate of its rows; -1 */
} MirrorPending;

void mirror_pending_free(MirrorPending *p, int n);

/* The tables listed that have neither a mirror table nor a waiting row,
 * by source name (none in a file made by an older pgmirror). */
bool mirror_pending_list(Mirror *m, MirrorPending **out, int *n) PGM_MUST_CHECK;

/* Makes p[0..n-1] the list (n 0: empties it), in a transaction of its own
 * (no other may be open); writes nothing when the list is empty already. */
bool mirror_pending_set(Mirror *m, const MirrorPending *p, int n) PGM_MUST_CHECK;

#endif

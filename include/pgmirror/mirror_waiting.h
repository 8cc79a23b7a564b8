/*
 * mirror_waiting.h: the published tables that wait (pgmirror_waiting, see
 * sql/schema.sql and DESIGN.md's invariant 14): tables the publications
 * publish but the mirror cannot take now for a reason of their own (the
 * role may not read them, their name or columns cannot be held in
 * SQLite). Such a table has no mirror table; its changes are skipped
 * until it is synced as a joining table. Each row says why and since when;
 * that of a table whose copy met a value the mirror cannot store also
 * remembers that copy (MirrorWaitCopy), so that it is not repeated until
 * something that could change its outcome changed (src/run/waiting.c).
 */
#ifndef PGMIRROR_MIRROR_WAITING_H
#define PGMIRROR_MIRROR_WAITING_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/mirror.h"

typedef struct MirrorWaiting {
	uint32_t relation_oid;     /* the source relation */
	char *source_schema;       /* its names when it was last tried */
	char *source_table;
	char *reason;              /* why it waits, and what to do */
	char *since;               /* UTC text: when it began to wait */
} MirrorWaiting;

void mirror_waiting_free(MirrorWaiting *w, int n);

/* What a table remembers of the copy that met a value the mirror cannot
 * store (the row's copy_* columns). */
typedef struct MirrorWaitCopy {
	char *shape;               /* the table's shape as that copy read it
				    * (NULL: it waits for another reason) */
	Lsn lsn;                   /* that copy's snapshot */
	bool changed;              /* a change of its rows committed at or after
				    * lsn came in the stream since */
	int tries;                 /* copies that failed so, in a row */
	char *retry;               /* UTC text: copied again then at the latest */
} MirrorWaitCopy;

void mirror_wait_copy_clear(MirrorWaitCopy *c);

/* Every waiting table, by source name. */
bool mirror_waiting_list(Mirror *m, MirrorWaiting **out, int *n) PGM_MUST_CHECK;

/* Whether relation oid waits. */
bool mirror_waiting_has(Mirror *m, uint32_t oid, bool *waiting) PGM_MUST_CHECK;

/* Whether relation oid waits (*waiting), and what it remembers of a copy
 * that failed on a value (*c: zeroed when it waits for another reason;
 * cleared with mirror_wait_copy_clear()). A writer's: it reads the
 * columns that opening the mirror for writing adds to an older file. */
bool mirror_waiting_copy(Mirror *m, uint32_t oid, bool *waiting, MirrorWaitCopy *c)
	PGM_MUST_CHECK;

/* Whether relation oid waits already, under these names, for reason
 * (then mirror_waiting_set() would write nothing new). */
bool mirror_waiting_same(Mirror *m, uint32_t oid, const char *schema, const char *table,
			 const char *reason, bool *same) PGM_MUST_CHECK;

/*
 * Marks relation oid (schema.table) as waiting for reason; one that waited
 * already keeps its "since", and what it remembers of a failed copy unless
 * the reason changed. *news: it did not wait, or waited for another
 * reason (NULL: not asked). Within a transaction.
 */
bool mirror_waiting_set(Mirror *m, uint32_t oid, const char *schema, const char *table,
			const char *reason, bool *news) PGM_MUST_CHECK;

/* mirror_waiting_set(), and the copy that failed on a value, c, is
 * remembered (c->changed is stored false). Within a transaction. */
bool mirror_waiting_set_copy(Mirror *m, uint32_t oid, const char *schema, const char *table,
			     const char *reason, const MirrorWaitCopy *c, bool *news)
	PGM_MUST_CHECK;

/* A change of relation oid's rows came in the stream: noted on the copy
 * it remembers, if any (a later copy may succeed). Within a transaction. */
bool mirror_waiting_note_change(Mirror *m, uint32_t oid) PGM_MUST_CHECK;

/* Relation oid waits no longer (it was synced, or is no longer
 * published). Within a transaction. */
bool mirror_waiting_remove(Mirror *m, uint32_t oid) PGM_MUST_CHECK;

#endif

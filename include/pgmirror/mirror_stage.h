/*
 * mirror_stage.h: a mirror table copied again behind the readers' backs
 * (pgmirror_staged, see sql/schema.sql). A copy that replaces a table's
 * rows (--resync, a changed definition, a rebuild after a lost slot) is
 * committed in parts, like a first copy, so that a cut loses at most a
 * part; readers must see the old rows until the new ones are complete.
 * So the old table is set aside under its own name, rows and all, and is
 * no longer the mirror's (the stream leaves it: frozen, as during a copy
 * in one transaction); the source relation then has no mirror table, and
 * is synced as a joining table into its staged table, pgmirror_stage_OID
 * (the applier makes it under that name: apply_rename.c), which the
 * stream follows by its key ranges as any copy in parts. Once that copy is
 * done, the staged table takes the old one's place in one transaction,
 * with the user's objects on it. Staged tables get pgmirror's indexes
 * only once they are swapped in (their names are the source index's).
 */
#ifndef PGMIRROR_MIRROR_STAGE_H
#define PGMIRROR_MIRROR_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/mirror.h"

#define MIRROR_STAGE_PREFIX "pgmirror_stage_"

/* The staged table's name for relation oid (buf: 32 bytes). */
const char *mirror_stage_name(uint32_t oid, char *buf);
/* Whether name is that of a staged table. */
bool mirror_stage_is_name(const char *name);

/* Sets the mirror table of relation oid aside (see above), unless it is
 * set aside already or has no table; within a transaction. */
bool mirror_stage_begin(Mirror *m, uint32_t oid) PGM_MUST_CHECK;
/* Every mirror table set aside (a rebuild), a staged table of an earlier
 * rebuild's dropped; within a transaction. */
bool mirror_stage_all(Mirror *m) PGM_MUST_CHECK;
/* Whether relation oid is set aside (*staged), and under which name
 * (*old_name, malloc'd, or NULL). */
bool mirror_stage_of(Mirror *m, uint32_t oid, bool *staged, char **old_name) PGM_MUST_CHECK;

/* One table set aside (mirror_stage_list()). */
typedef struct MirrorStaged {
	uint32_t relation_oid;
	char *old_name;            /* the table readers see meanwhile */
	char *staged;              /* its staged table's name; NULL: not begun */
	bool done;                 /* that table's copy is complete */
} MirrorStaged;

bool mirror_stage_list(Mirror *m, MirrorStaged **out, int *n) PGM_MUST_CHECK;
void mirror_stage_list_free(MirrorStaged *s, int n);

/*
 * Puts the staged table of relation oid (0: of every table set aside) in
 * the old one's place, once its copy is done: the user's objects on the
 * old one are made again on it (*dropped: a line for each that no longer
 * applies), its name that of its source table. finish (a rebuild's end):
 * a table set aside that has no staged table (no longer published, or
 * waiting) goes too. *nswapped: how many. Within a transaction.
 */
bool mirror_stage_swap(Mirror *m, uint32_t oid, bool finish, char ***dropped, int *ndropped,
		       int *nswapped) PGM_MUST_CHECK;
/* Drops the table set aside for relation oid, if any (it is no longer
 * published, or waits); within a transaction. */
bool mirror_stage_forget(Mirror *m, uint32_t oid) PGM_MUST_CHECK;

#endif

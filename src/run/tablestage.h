/*
 * tablestage.h: the run's side of tables copied again behind the readers'
 * backs (mirror_stage.h): their swap once a copy is done, and the old
 * tables of those no longer published. Used by the table sync
 * (tablesync.c) and the first run's rebuild (firstrun.c).
 */
#ifndef PGMIRROR_RUN_TABLESTAGE_H
#define PGMIRROR_RUN_TABLESTAGE_H

#include "replicate_internal.h"

/*
 * Puts the staged tables of relation oid (0: all) whose copy is done in
 * the place of the old ones (mirror_stage_swap(), finish as there), with a
 * warning for each of the user's objects that no longer applies; within
 * the caller's transaction. False logged.
 */
bool tablestage_swap_in(Run *run, uint32_t oid, bool finish, int *nswapped) PGM_MUST_CHECK;

/* tablestage_swap_in() of oid (0: every one done) in a transaction of its
 * own, but for a rebuild's tables, which wait for its end (firstrun.c):
 * nothing then. *swapped (NULL: not asked): one was. False logged. */
bool tablestage_swap(Run *run, uint32_t oid, bool *swapped) PGM_MUST_CHECK;

/* Drops the old tables set aside whose source tables pub (the published
 * ones) no longer holds, with a warning each; false logged. */
bool tablestage_forget_unpublished(Run *run, const SourceTable *pub, int npub) PGM_MUST_CHECK;

/* Whether name is that of an old table set aside (its copy again not
 * done: --resync may name it), and its source relation's *oid. */
bool tablestage_oid_of(Run *run, const char *name, uint32_t *oid);

#endif

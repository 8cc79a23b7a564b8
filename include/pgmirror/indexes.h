/*
 * indexes.h: the source's indexes on the mirror. Asks the source's catalog
 * (catalog.h) which indexes of the given tables the mirror copies, and has
 * the mirror make its indexes match (mirror_table_indexes()). Used by the
 * applier when a Relation message describes a table again, and at each
 * start for every mirrored table.
 */
#ifndef PGMIRROR_INDEXES_H
#define PGMIRROR_INDEXES_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/catalog.h"
#include "pgmirror/mirror.h"
#include "pgmirror/util.h"

/*
 * For each mirror table tables[i], the mirror of source relation
 * relids[i]: its indexes made to match the source's now (once source
 * transaction xid, the one being applied, is visible there; 0: none);
 * within a transaction. A catalog without the indexes question leaves
 * them as they are. False with the error in *err (*lost: the source could
 * not be reached, see Catalog.lost).
 */
bool indexes_sync(Mirror *m, const Catalog *catalog, char *const *tables,
		  const uint32_t *relids, int n, uint32_t xid, ErrBuf *err,
		  bool *lost) PGM_MUST_CHECK;

#endif

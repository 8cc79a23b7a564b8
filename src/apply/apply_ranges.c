/*
 * apply_ranges.c: the stream's rule for a table copied in parts (DESIGN.md
 * invariant 12). Each try of its copy stored a key range with its
 * snapshot's LSN (copy_ranges.h): a change to a row applies only in a
 * transaction that commits at or after the LSN of the range that holds
 * the row's key, and not at all to a key past the copy's reach (the copy
 * brings that row). Once the copy is done and a transaction commits after
 * every range's LSN, the table's changes all apply, without a look at
 * their keys.
 *
 * The ranges hold keys of the shape the copy read (copy_ranges.h), which
 * need not be the shape of a change's Relation message: a transaction
 * that committed before the copy's snapshot may have had another key, and
 * is skipped by its position (apply_schema.c) before its key is compared;
 * one after it whose key has another number of columns (the key changed
 * and changed back between two tries) cannot be placed in them, and the
 * table is copied again.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "apply_internal.h"

bool apply_ranges_load(Applier *a, RelEntry *r, const char *state)
{
	char err[128];

	copy_ranges_free(r->ranges);
	r->ranges = NULL;
	if (state == NULL)
		return true;
	r->ranges = copy_ranges_parse(state, err, sizeof(err));
	if (r->ranges == NULL)
		errbuf_set(&a->err, "mirror table of \"%s\" has a damaged copy_state in "
			   "pgmirror_tables (%s); run pgmirror --resync=%s to copy it again",
			   r->display, err, r->def.name != NULL ? r->def.name : r->display);
	return r->ranges != NULL;
}

bool apply_ranges_fit(const Applier *a, const RelEntry *r)
{
	char lsn[LSN_TEXT_SIZE];
	int nkeys = 0;

	if (!apply_ranges_active(a, r) || r->ranges->nkeys == 0) /* no key to compare */
		return true;
	for (int i = 0; i < r->ncols; i++)
		nkeys += r->is_key[i] ? 1 : 0;
	if (nkeys == r->ranges->nkeys)
		return true;
	log_info("the key of \"%s\" in the transaction committed at %s is not the one its "
		 "copy in parts was made with (key columns: %d, the copy's: %d); mirror table "
		 "\"%s\" is synced again", r->display, lsn_format(a->txn_final_lsn, lsn), nkeys,
		 r->ranges->nkeys, r->def.name);
	return false;
}

bool apply_ranges_active(const Applier *a, const RelEntry *r)
{
	return r->ranges != NULL &&
	       !(copy_ranges_done(r->ranges) && a->txn_final_lsn >= copy_ranges_max_lsn(r->ranges));
}

bool apply_ranges_row(const Applier *a, const RelEntry *r, const Value *vals)
{
	return copy_ranges_applies(r->ranges, vals, r->is_key, r->ncols, a->txn_final_lsn);
}

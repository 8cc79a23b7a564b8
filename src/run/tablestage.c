/*
 * tablestage.c: the run's side of the tables copied again behind the
 * readers' backs (see mirror_stage.h and tablestage.h). A table synced
 * again (--resync, its definition changed) or rebuilt is set aside and
 * copied as a joining table into its staged table, in parts; this file
 * puts the staged table in the old one's place once its copy is done: a
 * sync's at once, a rebuild's all together at its end.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pgmirror/mirror_stage.h"
#include "tablestage.h"

bool tablestage_swap_in(Run *run, uint32_t oid, bool finish, int *nswapped)
{
	char **dropped = NULL;
	int ndropped = 0;
	bool ok = mirror_stage_swap(run->mirror, oid, finish, &dropped, &ndropped, nswapped);

	if (!ok)
		log_error("could not put a table copied again in the place of the old one: %s",
			  mirror_error(run->mirror));
	for (int i = 0; ok && i < ndropped; i++)
		log_warning("dropped the user's %s from the mirror: it no longer applies after "
			    "a mirror table was synced again", dropped[i]);
	strv_free(dropped, ndropped);
	return ok;
}

bool tablestage_swap(Run *run, uint32_t oid, bool *swapped)
{
	int nswapped = 0;
	bool ok = !run->state.present || !run->state.initial_copy_done ||
		  (mirror_begin(run->mirror) && tablestage_swap_in(run, oid, false, &nswapped) &&
		   mirror_commit(run->mirror));

	if (!ok && mirror_error(run->mirror)[0] != '\0')
		log_error("%s", mirror_error(run->mirror));
	mirror_rollback(run->mirror);
	if (swapped != NULL)
		*swapped = nswapped > 0;
	return ok;
}

bool tablestage_forget_unpublished(Run *run, const SourceTable *pub, int npub)
{
	MirrorStaged *st = NULL;
	int nst = 0;
	bool ok = mirror_stage_list(run->mirror, &st, &nst), began = false;

	for (int i = 0; ok && i < nst; i++) {
		if (source_table_find(pub, npub, st[i].relation_oid) != NULL)
			continue;
		ok = (began || (began = mirror_begin(run->mirror))) &&
		     mirror_table_drop(run->mirror, st[i].relation_oid) &&
		     mirror_stage_forget(run->mirror, st[i].relation_oid);
		if (ok)
			log_warning("mirror table \"%s\" removed: its source table is no longer "
				    "published", st[i].old_name);
	}
	ok = ok && (!began || mirror_commit(run->mirror));
	if (!ok) {
		log_error("%s", mirror_error(run->mirror));
		mirror_rollback(run->mirror);
	}
	mirror_stage_list_free(st, nst);
	return ok;
}

bool tablestage_oid_of(Run *run, const char *name, uint32_t *oid)
{
	MirrorStaged *st = NULL;
	int nst = 0;

	*oid = 0;
	if (run->mirror == NULL || !mirror_stage_list(run->mirror, &st, &nst))
		return false;
	for (int i = 0; i < nst && *oid == 0; i++)
		if (strcmp(st[i].old_name, name) == 0)
			*oid = st[i].relation_oid;
	mirror_stage_list_free(st, nst);
	return *oid != 0;
}

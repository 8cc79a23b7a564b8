/*
 * renames.c: at start, every mirror table takes the name its source table
 * has now. A table renamed (or moved to another schema) while pgmirror
 * was down may get no further change, so no Relation message would ever
 * reveal the rename: the publications' tables as they are now (with their
 * OIDs) say it instead. The stream then keeps those names (apply_rename.c
 * asks the source when a Relation message names a table otherwise).
 *
 * The whole new mapping is known here, so names may move around among
 * the renamed tables (a swap: mirror_tables_rename() goes through
 * temporary names). A new name held by a mirror table whose source table
 * is no longer published (it left, or was dropped) frees it: that table
 * is removed, as it would be right after; one held by a published table
 * that keeps the name is a real clash: the renamed table waits (waiting.c),
 * as does one renamed to a reserved name. All in one SQLite transaction,
 * or nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pgmirror/mirror_stage.h"
#include "pgmirror/mirror_waiting.h"
#include "pgmirror/naming.h"
#include "replicate_internal.h"

static int rename_index(const MirrorRename *rn, int n, uint32_t oid)
{
	for (int i = 0; i < n; i++)
		if (rn[i].relation_oid == oid)
			return i;
	return -1;
}

/*
 * The renames that cannot be made (waits[i]: the new name is reserved, or
 * a published table that keeps it holds it) make their tables wait
 * (waiting.c): the mirror table goes, and the table is synced again once
 * it can be taken. Takes them out of rn (and frees their names and
 * reasons); within the open transaction.
 */
static bool wait_instead(Run *run, MirrorRename *rn, char **waits, int *nrn)
{
	int k = 0;

	for (int i = 0; i < *nrn; i++) {
		if (waits[i] == NULL) {
			rn[k++] = rn[i];
			continue;
		}
		if (!mirror_table_drop(run->mirror, rn[i].relation_oid) ||
		    !mirror_waiting_set(run->mirror, rn[i].relation_oid, rn[i].source_schema,
					rn[i].source_table, waits[i], NULL))
			return false;
		log_warning("source table \"%s.%s\" waits: %s; its mirror table is removed, and "
			    "it is copied again once it can be taken (tried at every start and "
			    "every check)", rn[i].source_schema, rn[i].source_table, waits[i]);
		free((char *)rn[i].name);
		free(waits[i]);
		waits[i] = NULL;
	}
	*nrn = k;
	return true;
}

int renames_at_start(Run *run, const SourceTable *tables, int ntables)
{
	MirrorTableInfo *known = NULL;
	MirrorRename *rn = NULL;
	uint32_t *drop = NULL;
	int nknown = 0, nrn = 0, ndrop = 0, rc = EXIT_ERROR;
	char **waits = NULL; /* per rename: why it waits instead */

	if (!mirror_table_infos(run->mirror, &known, &nknown)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	rn = xcalloc((size_t)nknown + 1, sizeof(MirrorRename));
	waits = xcalloc((size_t)nknown + 1, sizeof(char *));
	drop = xcalloc((size_t)nknown + 1, sizeof(uint32_t));
	for (int i = 0; i < nknown; i++) {
		const SourceTable *t = source_table_find(tables, ntables, known[i].relation_oid);
		char *name;

		if (t == NULL || mirror_stage_is_name(known[i].name))
			continue; /* left the publications, or copied again: not a rename */
		name = naming_table(t->nspname, t->relname);
		if (strcmp(name, known[i].name) == 0) {
			free(name);
			continue;
		}
		waits[nrn] = naming_name_problem(t->nspname, t->relname);
		rn[nrn++] = (MirrorRename){t->oid, name, t->nspname, t->relname};
	}
	/* the holders of the new names: a clash with a table that keeps its
	 * name makes the renamed one wait */
	for (int i = 0; i < nrn; i++) {
		for (int j = 0; waits[i] == NULL && j < nknown; j++) {
			const MirrorTableInfo *h = &known[j];
			const SourceTable *ht;

			if (h->relation_oid == rn[i].relation_oid ||
			    strcasecmp(h->name, rn[i].name) != 0 ||
			    rename_index(rn, nrn, h->relation_oid) >= 0)
				continue; /* not a holder, or it moves too */
			ht = source_table_find(tables, ntables, h->relation_oid);
			if (ht != NULL) {
				waits[i] = naming_clash(ht->nspname, ht->relname, rn[i].source_schema,
							rn[i].source_table);
				continue;
			}
			log_warning("mirror table \"%s\" is removed: its source table \"%s\".\"%s\" is "
				    "no longer published, and source table \"%s\".\"%s\" takes its "
				    "name", h->name, h->source_schema, h->source_table,
				    rn[i].source_schema, rn[i].source_table);
			drop[ndrop++] = h->relation_oid;
		}
		for (int j = 0; waits[i] == NULL && j < i; j++)
			if (waits[j] == NULL && strcasecmp(rn[i].name, rn[j].name) == 0)
				waits[i] = naming_clash(rn[j].source_schema, rn[j].source_table,
							rn[i].source_schema, rn[i].source_table);
	}
	if (nrn == 0) {
		rc = EXIT_OK;
		goto done;
	}
	if (!mirror_begin(run->mirror))
		goto mirror_error;
	for (int i = 0; i < ndrop; i++)
		if (!mirror_table_drop(run->mirror, drop[i]))
			goto mirror_error;
	if (!wait_instead(run, rn, waits, &nrn) || !mirror_tables_rename(run->mirror, rn, nrn) ||
	    !mirror_commit(run->mirror))
		goto mirror_error;
	for (int i = 0; i < nrn; i++) {
		int k;

		for (k = 0; k < nknown && known[k].relation_oid != rn[i].relation_oid; k++)
			;
		log_info("mirror table \"%s\" is renamed \"%s\": its source table is \"%s\".\"%s\" "
			 "now", k < nknown ? known[k].name : "", rn[i].name, rn[i].source_schema,
			 rn[i].source_table);
	}
	rc = EXIT_OK;
	goto done;
mirror_error:
	log_error("%s", mirror_error(run->mirror));
	mirror_rollback(run->mirror);
done:
	for (int i = 0; i < nrn; i++)
		free((char *)rn[i].name);
	for (int i = 0; i < nknown; i++)
		free(waits[i]);
	free(waits);
	free(rn);
	free(drop);
	mirror_table_infos_free(known, nknown);
	return rc;
}

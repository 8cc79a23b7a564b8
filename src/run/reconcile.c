/*
 * reconcile.c: makes the mirror's tables those the publications publish
 * now. Compares the publications' tables (by relation OID) with the
 * mirror's, after the renames (renames.c): a mirror table whose relation is
 * no longer published is dropped with a warning; the published relations
 * the mirror lacks join, but those that cannot be taken now, which wait
 * (waiting.c); the mirror tables --resync names, those the stream noted,
 * and those published differently are synced again; a copy in parts that a
 * cut stopped goes on. All of them are synced together (tablesync.c).
 *
 * A table stays the same relation but may be published differently: each
 * mirror table stores the text of what made its published contents when it
 * was copied (SourceTable's definition: memberships by catalog row, row
 * filter, column list, publish_via_partition_root, a root's partitions);
 * a table whose text differs now is synced again, the same way. So is a
 * table whose columns on the source differ from the mirror's: the stream
 * would follow them only with the table's next change.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_ranges.h"
#include "pgmirror/mirror_stage.h"
#include "replicate_internal.h"
#include "tablestage.h"
#include "waiting.h"

/*
 * Drops the mirror tables whose relation is no longer published, and
 * stores the published definition of each that has none (a mirror made by
 * an older pgmirror: its rows were right when it last checked, so no sync
 * is needed), in one transaction.
 */
static int update_known(Run *run, Applier *apply, const MirrorTableInfo *mt, int nmt,
			const SourceTable *pub, int npub)
{
	bool any = false;

	for (int i = 0; i < nmt; i++) {
		const SourceTable *t = source_table_find(pub, npub, mt[i].relation_oid);

		if (t != NULL && (mt[i].definition != NULL || t->definition == NULL))
			continue;
		if (!any && !mirror_begin(run->mirror))
			goto failed;
		any = true;
		if (t != NULL) {
			if (!mirror_set_definition(run->mirror, t->oid, t->definition))
				goto failed;
			continue;
		}
		if (apply != NULL)
			apply_forget_table(apply, mt[i].relation_oid);
		if (!mirror_table_drop(run->mirror, mt[i].relation_oid) ||
		    !mirror_stage_forget(run->mirror, mt[i].relation_oid))
			goto failed;
		log_warning("source table \"%s.%s\" is no longer published (it left the "
			    "publications or was dropped); mirror table \"%s\" removed",
			    mt[i].source_schema, mt[i].source_table, mt[i].name);
	}
	if (any && !mirror_commit(run->mirror))
		goto failed;
	return tablestage_forget_unpublished(run, pub, npub) ? EXIT_OK : EXIT_ERROR;
failed:
	log_error("%s", mirror_error(run->mirror));
	mirror_rollback(run->mirror);
	return EXIT_ERROR;
}

/*
 * The relation OIDs of the mirror tables named in resync, read before the
 * renames: a name the table had before its source table was renamed
 * resyncs it under its new name. malloc'd; false with the error logged.
 */
static bool resync_oids(Run *run, char *const *resync, int nresync, uint32_t **oids, int *n)
{
	MirrorTableInfo *mt = NULL;
	int nmt = 0;

	*oids = NULL;
	*n = 0;
	if (nresync == 0)
		return true;
	if (!mirror_table_infos(run->mirror, &mt, &nmt)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	*oids = xcalloc((size_t)nmt + (size_t)nresync + 1, sizeof(uint32_t));
	for (int j = 0; j < nmt; j++)
		if (strv_contains(resync, nresync, mt[j].name))
			(*oids)[(*n)++] = mt[j].relation_oid;
	/* a table set aside, copied again already: its copy goes on */
	for (int j = 0; j < nresync; j++)
		if (tablestage_oid_of(run, resync[j], &(*oids)[*n]))
			++*n;
	mirror_table_infos_free(mt, nmt);
	return true;
}

/*
 * Which published tables the mirror lacks and can take now (*joins, one
 * per table of pub); the others wait (waiting.c), each tried again here at
 * every check (one whose copy met a value, only when something that could
 * change that changed, or --resync asks for it: asked, nasked OIDs, or
 * all), and the tables no longer published, or mirrored already, wait no
 * more. mt: the mirror tables; those still published hold their names. An
 * exit code.
 */
static int sort_joins(Run *run, Session *s, const SourceTable *pub, int npub,
		      const MirrorTableInfo *mt, int nmt, const uint32_t *asked, int nasked,
		      bool all, bool **joins)
{
	MirrorTableInfo *kept = xcalloc((size_t)nmt + 1, sizeof(MirrorTableInfo));
	char **reasons = xcalloc((size_t)npub + 1, sizeof(char *));
	int nkept = 0, rc = EXIT_ERROR;

	*joins = xcalloc((size_t)npub + 1, sizeof(bool));
	for (int i = 0; i < npub; i++) {
		bool known = false;

		for (int j = 0; j < nmt && !known; j++)
			known = mt[j].relation_oid == pub[i].oid;
		(*joins)[i] = !known;
	}
	for (int j = 0; j < nmt; j++)
		if (source_table_find(pub, npub, mt[j].relation_oid) != NULL)
			kept[nkept++] = mt[j]; /* borrowed */
	if (waiting_forget(run, pub, npub, kept, nkept) &&
	    waiting_sort(run, s, pub, npub, *joins, kept, nkept, true, reasons) &&
	    waiting_store(run, pub, npub, reasons, true))
		rc = EXIT_OK;
	for (int i = 0; i < npub; i++) {
		bool due = true, ask = all;

		for (int k = 0; k < nasked && !ask; k++)
			ask = asked[k] == pub[i].oid;
		(*joins)[i] = (*joins)[i] && reasons[i] == NULL;
		if ((*joins)[i] && rc == EXIT_OK && !waiting_copy_due(run, &pub[i], ask, &due))
			rc = EXIT_ERROR;
		(*joins)[i] = (*joins)[i] && due;
	}
	waiting_reasons_free(reasons, npub);
	free(reasons);
	free(kept);
	return rc;
}

/* Whether the publications publish mirror table mt differently from when
 * it was last copied (t: its relation as published now). */
static bool definition_changed(const MirrorTableInfo *mt, const SourceTable *t)
{
	return mt->definition != NULL && t->definition != NULL &&
	       strcmp(mt->definition, t->definition) != 0;
}

/*
 * Whether the published columns of t (number, name, type, typmod, key
 * flag) or its replica identity differ from those mirror table mt
 * records: a column added, dropped, renamed or retyped on the source, or
 * its key changed (REPLICA IDENTITY, the identity index, the primary
 * key), which the stream follows only with the table's next change. An
 * attnum the mirror does not know (0) matches any. False with the error
 * logged when the mirror cannot be read.
 */
static bool columns_changed(Run *run, const MirrorTableInfo *mt, const SourceTable *t,
			    bool *changed)
{
	MirrorColumnDef *cols;
	int n;

	if (!mirror_table_columns(run->mirror, mt->name, &cols, &n)) {
		log_error("%s", mirror_error(run->mirror));
		return false;
	}
	*changed = n != t->ncols || mt->replident != t->replident;
	for (int i = 0; i < n && !*changed; i++)
		*changed = strcmp(cols[i].name, t->cols[i].name) != 0 ||
			   cols[i].type_oid != t->cols[i].type_oid ||
			   cols[i].type_mod != t->cols[i].type_mod ||
			   cols[i].is_key != t->cols[i].is_key ||
			   (cols[i].attnum != 0 && cols[i].attnum != t->cols[i].attnum);
	mirror_table_columns_free(cols, n);
	return true;
}

int reconcile_tables(Run *run, Session *s, Applier *apply, char *const *resync,
		     int nresync, bool resync_all, TickFn tick, void *tick_ctx)
{
	SourceTable *pub = NULL;
	int npub = 0, nmt = 0, noids = 0, nnoted = 0, ntargets = 0, rc = EXIT_ERROR;
	MirrorTableInfo *mt = NULL;
	uint32_t *oids = NULL; /* those of resync */
	const uint32_t *noted = NULL; /* the stream's, to be synced (apply.h) */
	SyncTarget *targets = NULL;
	bool *joins = NULL; /* per published table: it joins now */
	bool swapped;

	tablesync_set_tick(tick, tick_ctx);
	run->sync_deferred = false;
	run->columns_later = false;
	if (!tablesync_published(run, s, &pub, &npub) ||
	    !resync_oids(run, resync, nresync, &oids, &noids))
		goto done;
	/*
	 * Renames first (renames.c): a published OID the mirror knows under
	 * another name is neither a join nor a leave, and leaves and joins
	 * then see the names as they are now.
	 */
	rc = renames_at_start(run, pub, npub);
	if (apply != NULL)
		apply_forget_tables(apply); /* its statements name the old tables */
	if (rc != EXIT_OK)
		goto done;
	rc = EXIT_ERROR;
	/* a copy done whose swap a kill stopped (mirror_stage.h): swapped
	 * before the mirror's tables are read, which it renames */
	if (!tablestage_swap(run, 0, &swapped))
		goto done;
	if (swapped)
		log_info("a copy again that a stop left complete took the old table's place");
	if (!mirror_table_infos(run->mirror, &mt, &nmt)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	/* Leaves before joins: a table dropped and made again under its old
	 * name has a new OID, and its old mirror table must go first. */
	if ((rc = update_known(run, apply, mt, nmt, pub, npub)) != EXIT_OK)
		goto done;
	/* the tables that joined (but those that wait), then those to copy
	 * again: all in one snapshot */
	if ((rc = sort_joins(run, s, pub, npub, mt, nmt, oids, noids, resync_all, &joins)) !=
	    EXIT_OK)
		goto done;
	rc = EXIT_ERROR;
	targets = xcalloc((size_t)npub + (size_t)nmt + 1, sizeof(SyncTarget));
	for (int i = 0; i < npub; i++)
		if (joins[i])
			targets[ntargets++] = (SyncTarget){pub[i].oid, pub[i].nspname,
							   pub[i].relname, NULL, false};
	/* tables resynced, and those whose definition changed or that the
	 * stream cannot follow (a keyless table it cannot fill a column of,
	 * apply_schema.c): copied again in the same snapshot, as a joining
	 * table is */
	if (apply != NULL)
		nnoted = apply_unknown_relations(apply, &noted);
	for (int j = 0; j < nmt; j++) {
		const SourceTable *t = source_table_find(pub, npub, mt[j].relation_oid);
		bool asked = resync_all, needed = t != NULL && definition_changed(&mt[j], t);
		bool recolumned = false;

		for (int k = 0; k < noids && !asked; k++)
			asked = oids[k] == mt[j].relation_oid;
		for (int k = 0; k < nnoted && !needed; k++)
			needed = noted[k] == mt[j].relation_oid;
		/* a copy in parts that a cut stopped goes on (copy_parts.c) */
		if (t != NULL && !asked && !needed && copy_state_unfinished(mt[j].copy_state)) {
			targets[ntargets++] = (SyncTarget){mt[j].relation_oid, mt[j].source_schema,
							   mt[j].source_table, NULL, false};
			continue;
		}
		/* columns changed with no change of rows to bring them: synced
		 * again only once the stream has run (a check of a service, or
		 * the one after a run's end position, stream.c), since at start
		 * the stream may yet bring them with the rows' changes, which a
		 * copy would replace without the user's triggers */
		if (t != NULL && !(asked || needed) &&
		    !columns_changed(run, &mt[j], t, &recolumned)) {
			rc = EXIT_ERROR;
			goto done;
		}
		if (recolumned && tick == NULL) {
			log_debug("the columns of source table \"%s.%s\" differ from mirror table "
				  "\"%s\"'s; compared again once the stream has applied what came "
				  "before (at the run's end position, or a service's next check)",
				  t->nspname, t->relname, mt[j].name);
			run->columns_later = true;
			continue;
		}
		if (t == NULL || !(asked || needed || recolumned))
			continue;
		if (!asked && definition_changed(&mt[j], t))
			log_info("the publications changed what they publish of source table "
				 "\"%s.%s\" (its memberships, row filter, column list or "
				 "partitions); mirror table \"%s\" is synced again", t->nspname,
				 t->relname, mt[j].name);
		else if (recolumned)
			log_info("the columns of source table \"%s.%s\" changed (added, dropped, "
				 "renamed or retyped, or its key) and no change of its rows brought "
				 "them; mirror table \"%s\" is synced again", t->nspname, t->relname,
				 mt[j].name);
		targets[ntargets++] = (SyncTarget){mt[j].relation_oid, mt[j].source_schema,
						   mt[j].source_table, mt[j].name, asked};
	}
	if (!replicate_stopping())
		rc = tablesync_sync(run, apply, targets, ntargets);
	if (apply != NULL) {
		apply_clear_unknown(apply);
		apply_clear_recolumned(apply); /* compared above */
	}
done:
	tablesync_set_tick(NULL, NULL);
	free(targets);
	free(joins);
	mirror_table_infos_free(mt, nmt);
	source_tables_free(pub, npub);
	free(oids);
	return rc;
}

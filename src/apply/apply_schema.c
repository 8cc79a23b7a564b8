/*
 * apply_schema.c: the applier's relation cache, and the mirror tables it
 * stands for (the types of their columns: apply_types.c). A Relation
 * message (with the Type messages before it) describes a source table; the first change for it makes or
 * changes the mirror table to match (rel_sync): the naming rule and its
 * checks (naming.h), the plan (mirror_table_plan), and the values of
 * added or retyped columns, refilled from the source's catalog (catalog.h)
 * or taken from the constant it gave existing rows; and its indexes
 * (indexes.h).
 *
 * The relation cache maps a source relation OID to its mirror table and
 * to per-column scratch (converted values, buffers), allocated when the
 * Relation message arrives and reused for every row, so applying a row
 * allocates nothing once warm.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply_internal.h"
#include "pgmirror/indexes.h"
#include "pgmirror/mirror_waiting.h"
#include "pgmirror/naming.h"

static void rel_clear(RelEntry *r)
{
	mirror_table_free(r->table);
	for (int i = 0; i < r->ncols; i++) {
		values_buf_free(&r->newbufs[i]);
		values_buf_free(&r->oldbufs[i]);
		free((char *)r->cols[i].name);
		free((char *)r->cols[i].pg_type);
	}
	free(r->cols);
	free((char *)r->def.name);
	free((char *)r->def.source_schema);
	free((char *)r->def.source_table);
	free(r->display);
	free(r->types);
	free(r->is_key);
	free(r->newbufs);
	free(r->oldbufs);
	free(r->newvals);
	free(r->oldvals);
	free(r->keep);
	free(r->used);
	copy_ranges_free(r->ranges);
	memset(r, 0, sizeof(*r));
}


void apply_rels_clear(Applier *a)
{
	for (size_t i = 0; i < a->nrels_cap; i++)
		if (a->rels[i].oid != 0)
			rel_clear(&a->rels[i]);
	a->nrels = 0;
}

void apply_forget_tables(Applier *a)
{
	for (size_t i = 0; i < a->nrels_cap; i++) {
		if (a->rels[i].oid != 0) {
			mirror_table_free(a->rels[i].table);
			a->rels[i].table = NULL;
			a->rels[i].gone = false;
			a->rels[i].sync_known = false;
			a->rels[i].noted = false;
		}
	}
}

void apply_cache_free(Applier *a)
{
	apply_rels_clear(a);
	apply_types_free(a);
	free(a->rels);
}

/* --- relation cache ---------------------------------------------------- */

static RelEntry *rel_slot(RelEntry *rels, size_t cap, uint32_t oid)
{
	size_t i = (oid * 2654435761u) & (cap - 1);

	while (rels[i].oid != 0 && rels[i].oid != oid)
		i = (i + 1) & (cap - 1);
	return &rels[i];
}

static RelEntry *rel_find(Applier *a, uint32_t oid)
{
	RelEntry *r = rel_slot(a->rels, a->nrels_cap, oid);

	return r->oid == oid ? r : NULL;
}

RelEntry *apply_rel_find(Applier *a, uint32_t oid)
{
	RelEntry *r = rel_find(a, oid);

	return r != NULL && r->display != NULL ? r : NULL;
}

/* The entry for oid, new and empty if it was not there. */
static RelEntry *rel_get(Applier *a, uint32_t oid)
{
	RelEntry *r;

	if ((a->nrels + 1) * 2 > a->nrels_cap) {
		size_t ncap = a->nrels_cap * 2;
		RelEntry *nrels = xcalloc(ncap, sizeof(RelEntry));

		for (size_t i = 0; i < a->nrels_cap; i++)
			if (a->rels[i].oid != 0)
				*rel_slot(nrels, ncap, a->rels[i].oid) = a->rels[i];
		free(a->rels);
		a->rels = nrels;
		a->nrels_cap = ncap;
	}
	r = rel_slot(a->rels, a->nrels_cap, oid);
	if (r->oid == 0) {
		r->oid = oid;
		a->nrels++;
	}
	return r;
}

/* --- relations ---------------------------------------------------------- */

/*
 * values_convert() into one of r's scratch buffers. A buffer that a huge
 * value made large is noted, and freed once the message is applied
 * (trim_scratch), so that its memory does not stay with the process.
 */
bool apply_convert_value(Applier *a, RelEntry *r, int col, const char *text, size_t len,
			  ValueBuf *buf, Value *out, char *err, size_t errsize)
{
	bool ok = values_convert(r->types[col], text, len, buf, out, err, errsize);

	if (buf->cap > VALUES_BUF_KEEP)
		a->big_bufs = r->big_bufs = true;
	return ok;
}

void apply_trim_scratch(Applier *a)
{
	for (size_t i = 0; i < a->nrels_cap; i++) {
		RelEntry *r = &a->rels[i];

		if (r->oid == 0 || !r->big_bufs)
			continue;
		for (int c = 0; c < r->ncols; c++) {
			values_buf_trim(&r->newbufs[c]);
			values_buf_trim(&r->oldbufs[c]);
		}
		r->big_bufs = false;
	}
	a->big_bufs = false;
}

static bool has_key(const RelEntry *r)
{
	if (r->replident == 'f' || r->replident == 'n')
		return false;
	for (int i = 0; i < r->ncols; i++)
		if (r->is_key[i])
			return true;
	return false;
}

/*
 * The values existing rows get in a column a schema change adds, for a
 * table without a key: the constant the source gave them (stored once as
 * the column's "missing value"), or NULL when it gave them nothing. A
 * default computed row by row cannot be seen without a key to match rows.
 */
static bool fill_constant(Applier *a, RelEntry *r, int col, const char *name, SourceFill *fill,
			  Value *out)
{
	SourceFill f = {0};
	char err[256], *hint;
	bool ok = true;

	out->kind = VAL_NULL;
	if (!a->catalog->column_fill(a->catalog->ctx, r->oid, name, &f)) {
		apply_catalog_failed(a);
		errbuf_set(&a->err, "could not look up column \"%s\" added to \"%s\": %s", name,
			  r->display, a->catalog->error(a->catalog->ctx));
		return false;
	}
	if (f.has_missing && f.missing != NULL) {
		ok = apply_convert_value(a, r, col, f.missing, strlen(f.missing), &r->newbufs[col],
				   out, err, sizeof(err));
		if (!ok)
			errbuf_set(&a->err, "could not use the value of column \"%s\" added to \"%s\": %s",
				  name, r->display, err);
	} else if (f.found && !f.has_missing && f.has_default) {
		errbuf_set(&a->err, "column \"%s\" was added to \"%s\", which has no key, with a "
			  "default the source computed row by row (or set later), so pgmirror cannot "
			  "tell what the existing rows hold, and this mirror must start over%s", name,
			  r->display, hint = apply_start_over_hint(a));
		free(hint);
		ok = false;
	}
	*fill = f; /* *out may point into its text: the caller clears it after use */
	return ok;
}

static void note_unknown(Applier *a, RelEntry *r);

/*
 * Sets *set when plan fills a column that a column list may have left out
 * until now (the definition the table was copied with has one): its rows
 * hold values then, which a keyless table cannot match, so the table must
 * be copied again rather than filled with NULL or a default. A column that
 * ALTER TABLE just added is not in a column list yet.
 */
static bool column_list_was_set(Applier *a, const RelEntry *r, const MirrorPlan *plan, bool *set)
{
	MirrorTableInfo info;
	bool found, fills = false;

	*set = false;
	for (int i = 0; i < r->def.ncols; i++)
		fills = fills || plan->conv[i] == CONV_FILL;
	if (!fills)
		return true;
	if (!mirror_table_by_oid(a->m, r->oid, &found, &info)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	*set = found && info.definition != NULL && strstr(info.definition, " columns ") != NULL;
	mirror_table_info_clear(&info);
	if (*set)
		log_info("a column of \"%s\" is published now whose values its existing rows "
			 "cannot be matched for (it has no key): the table is synced again", r->display);
	return true;
}

typedef struct FillRows {
	Applier *a;
	RelEntry *r;
	int col;             /* the added column */
	const char *name;
	int *keys;           /* key column indexes */
	int nkeys;
} FillRows;

static bool fill_one_row(void *arg, const char *const *vals, const int *lens)
{
	FillRows *f = arg;
	RelEntry *r = f->r;
	char err[256];

	for (int k = 0; k <= f->nkeys; k++) {
		int c = k < f->nkeys ? f->keys[k] : f->col;
		Value *v = k < f->nkeys ? &r->oldvals[c] : &r->newvals[c];
		ValueBuf *b = k < f->nkeys ? &r->oldbufs[c] : &r->newbufs[c];

		if (vals[k] == NULL)
			v->kind = VAL_NULL;
		else if (!apply_convert_value(f->a, r, c, vals[k], (size_t)lens[k], b, v, err,
					sizeof(err))) {
			errbuf_set(&f->a->err, "could not fill column \"%s\" added to \"%s\": column "
				  "\"%s\": %s", f->name, r->display, r->cols[c].name, err);
			return false;
		}
	}
	if (!mirror_table_set_column(r->table, f->col, r->oldvals, &r->newvals[f->col])) {
		errbuf_set(&f->a->err, "could not fill column \"%s\" added to \"%s\": %s", f->name,
			  r->display, mirror_error(f->a->m));
		return false;
	}
	return true;
}

/*
 * Whether column col of def, whose attnum was asked a moment ago, is gone
 * from the source now (dropped by a transaction that committed since, or
 * with its table): the stream then brings a definition the source has
 * left already, which the run compares once it has caught up
 * (apply_recolumned()). False also when the source cannot say.
 */
static bool column_gone(Applier *a, const RelEntry *r, const MirrorTableDef *def, int col)
{
	const char *name = def->cols[col].name;
	int attnum = 0;

	return a->catalog->column_attnums(a->catalog->ctx, r->oid, &name, 1, &attnum) &&
	       attnum != def->cols[col].attnum;
}

/*
 * Gives the existing rows of a keyed table the values the source holds
 * now in a column that was added (a default, constant or computed row by
 * row) or retyped (perhaps converted USING an expression). Where a row
 * changed after the schema change, the stream brings that change again,
 * so the mirror ends up equal.
 */
static bool fill_from_source(Applier *a, RelEntry *r, const MirrorTableDef *def, int col)
{
	const char **keynames;
	FillRows f = {a, r, col, def->cols[col].name, NULL, 0};
	bool ok;

	if (def->cols[col].attnum == 0)
		return true; /* gone on the source since: a later Relation will say so */
	keynames = xcalloc((size_t)r->ncols, sizeof(char *));
	f.keys = xcalloc((size_t)r->ncols, sizeof(int));
	for (int i = 0; i < r->ncols; i++) {
		if (r->is_key[i]) {
			keynames[f.nkeys] = def->cols[i].name;
			f.keys[f.nkeys++] = i;
		}
	}
	a->err.text[0] = '\0';
	ok = a->catalog->column_values(a->catalog->ctx, r->oid, keynames, f.nkeys, f.name,
				       fill_one_row, &f);
	if (!ok)
		apply_catalog_failed(a);
	if (!ok && a->err.text[0] == '\0')
		errbuf_set(&a->err, "could not read column \"%s\" of \"%s\" on the source: %s",
			  f.name, r->display, a->catalog->error(a->catalog->ctx));
	if (!ok && !a->source_lost && column_gone(a, r, def, col)) {
		log_debug("column \"%s\" of \"%s\" was dropped on the source while it was read: "
			  "the table is compared with the source's once the stream has caught up",
			  f.name, r->display);
		a->err.text[0] = '\0';
		ok = true;
	}
	free(keynames);
	free(f.keys);
	return ok;
}

/*
 * A Relation message describes a table, but does not mean it is
 * published: with publish_via_partition_root the server describes the
 * partition as well as the root it publishes changes as. So the mirror
 * table is made or changed (rel_sync) when the first change for it comes.
 */
bool apply_relation(Applier *a, const PgoRelation *rel)
{
	RelEntry *r = rel_get(a, rel->oid);
	uint32_t oid = r->oid;

	if (r->display != NULL)
		rel_clear(r);
	r->oid = oid;
	r->display = xasprintf("%s.%s", rel->nspname, rel->relname);
	r->replident = rel->replident;
	r->ncols = rel->ncols;
	r->types = xcalloc(rel->ncols, sizeof(ColumnType));
	r->is_key = xcalloc(rel->ncols, sizeof(bool));
	r->newbufs = xcalloc(rel->ncols, sizeof(ValueBuf));
	r->oldbufs = xcalloc(rel->ncols, sizeof(ValueBuf));
	r->newvals = xcalloc(rel->ncols, sizeof(Value));
	r->oldvals = xcalloc(rel->ncols, sizeof(Value));
	r->keep = xcalloc(rel->ncols, sizeof(bool));
	r->used = xcalloc(rel->ncols, sizeof(bool));
	r->cols = xcalloc(rel->ncols, sizeof(MirrorColumnDef));
	for (int i = 0; i < rel->ncols; i++) {
		const PgoColumn *c = &rel->cols[i];
		const char *pg_type;

		if (!apply_resolve_type(a, c->type_oid, c->type_mod, 0, &r->types[i], &pg_type))
			return false;
		r->is_key[i] = (c->flags & PGO_COLUMN_KEY) != 0;
		r->cols[i].name = xstrdup(c->name);
		r->cols[i].pg_type = xstrdup(pg_type);
		r->cols[i].type_oid = c->type_oid;
		r->cols[i].type_mod = c->type_mod;
		r->cols[i].type = r->types[i];
		r->cols[i].is_key = r->is_key[i];
	}
	r->def.name = naming_table(rel->nspname, rel->relname);
	r->def.source_schema = xstrdup(rel->nspname);
	r->def.source_table = xstrdup(rel->relname);
	r->def.relation_oid = rel->oid;
	r->def.replident = rel->replident;
	r->def.ncols = rel->ncols;
	r->def.cols = r->cols;
	return true;
}

/* Makes the mirror table match the relation's last description. */
static bool rel_sync(Applier *a, RelEntry *r)
{
	const MirrorTableDef *def = &r->def;
	MirrorPlan plan = {0};
	const char **names;
	int *attnums = NULL;
	SourceFill *fills = NULL; /* what existing rows of a keyless table get */
	MirrorUserObjects *user = NULL; /* set aside over a rebuild */
	char *why;
	bool ok = false;

	names = xcalloc((size_t)def->ncols + 1, sizeof(char *));
	for (int i = 0; i < def->ncols; i++)
		names[i] = def->cols[i].name;
	why = naming_table_problem(def->source_schema, def->source_table, names, def->ncols);
	if (why != NULL) {
		/* a copy takes only tables that can be held (waiting.c) */
		ok = !a->sync_mode && !r->may_create && apply_wait_table(a, r, why);
		if (!ok && a->err.text[0] == '\0')
			errbuf_set(&a->err, "%s", why);
		free(why);
		goto done;
	}
	if (!apply_open_group(a) || !apply_follow_name(a, r))
		goto done;
	if (r->gone || r->waiting) {
		ok = true;
		goto done;
	}
	attnums = xcalloc((size_t)def->ncols + 1, sizeof(int));
	if (!a->catalog->column_attnums(a->catalog->ctx, r->oid, names, def->ncols, attnums)) {
		apply_catalog_failed(a);
		errbuf_set(&a->err, "could not look up the columns of \"%s\" on the source: %s",
			  r->display, a->catalog->error(a->catalog->ctx));
		goto done;
	}
	for (int i = 0; i < def->ncols; i++)
		r->cols[i].attnum = attnums[i];
	if (!mirror_table_plan(a->m, def, has_key(r), &plan)) {
		char *hint = plan.start_over ? apply_start_over_hint(a) : xstrdup("");

		errbuf_set(&a->err, "could not mirror table \"%s\": %s%s", r->display,
			  mirror_error(a->m), hint);
		free(hint);
		goto done;
	}
	if (plan.has_rows && !has_key(r)) {
		if (!column_list_was_set(a, r, &plan, &r->needs_sync))
			goto done;
		if (r->needs_sync) {
			note_unknown(a, r);
			ok = true;
			goto done;
		}
	}
	fills = xcalloc((size_t)def->ncols + 1, sizeof(SourceFill));
	for (int i = 0; i < def->ncols; i++) {
		r->newvals[i].kind = VAL_NULL;
		if (plan.conv[i] == CONV_FILL && plan.has_rows && !has_key(r) &&
		    !fill_constant(a, r, i, def->cols[i].name, &fills[i], &r->newvals[i]))
			goto done;
	}
	/* the user's objects follow renamed columns; the user's triggers must
	 * see neither the rebuild nor the refill */
	if (plan.exists && !plan.same &&
	    (!mirror_table_rename_columns(a->m, def, &plan) ||
	     !mirror_user_objects_save(a->m, &def->name, 1, &user))) {
		errbuf_set(&a->err, "could not mirror table \"%s\": %s", r->display,
			  mirror_error(a->m));
		goto done;
	}
	if (!mirror_table_sync(a->m, def, &plan, r->newvals, &r->table)) {
		errbuf_set(&a->err, "could not mirror table \"%s\": %s", r->display,
			  mirror_error(a->m));
		goto done;
	}
	for (int i = 0; i < def->ncols; i++)
		if (plan.conv[i] == CONV_FILL && plan.has_rows && has_key(r) &&
		    !fill_from_source(a, r, def, i))
			goto done;
	if (user != NULL) {
		char *what = xasprintf("mirror table \"%s\" changed", def->name);
		bool restored = apply_restore_user_objects(a, user, what);

		user = NULL;
		free(what);
		if (!restored)
			goto done;
	}
	/* a Relation message also follows CREATE INDEX and DROP INDEX, made
	 * perhaps by this very transaction */
	if (!a->defer_indexes) {
		char *name = (char *)def->name;
		bool lost;

		if (!indexes_sync(a->m, a->catalog, &name, &r->oid, 1, a->txn_xid, &a->err,
				  &lost)) {
			a->source_lost = lost;
			goto done;
		}
	}
	if (plan.exists && !plan.same && !a->sync_mode && !r->may_create) {
		/* perhaps a definition the source has left since: compared
		 * with the source's once the run has caught up, and at the
		 * next check if this run ends first (apply.h) */
		if (!mirror_set_publication_fingerprint(a->m, NULL)) {
			errbuf_set(&a->err, "could not mirror table \"%s\": %s", r->display,
				  mirror_error(a->m));
			goto done;
		}
		a->nrecolumned++;
	}
	if (plan.exists && !plan.same)
		log_info("table \"%s\" changed on the source; mirror table \"%s\" follows",
			 r->display, def->name);
	ok = true;
done:
	mirror_user_objects_free(user);
	if (fills != NULL) {
		for (int i = 0; i < def->ncols; i++)
			source_fill_clear(&fills[i]);
		free(fills);
	}
	mirror_plan_free(&plan);
	free(names);
	free(attnums);
	return ok;
}

/* Notes a relation that changed but has no mirror table, or one that must
 * be synced again, once. */
static void note_unknown(Applier *a, RelEntry *r)
{
	if (r->noted)
		return;
	r->noted = true;
	a->unknown = xreallocarray(a->unknown, (size_t)a->nunknown + 1, sizeof(uint32_t));
	a->unknown[a->nunknown++] = r->oid;
	log_debug("changes to \"%s\" (OID %u), which the mirror %s, are skipped until it is "
		  "synced", r->display, r->oid, r->needs_sync ? "must copy again" : "does not have");
}

bool apply_sync_again(Applier *a, RelEntry *r)
{
	/* stored with the changes skipped: a run killed before the copy
	 * leaves the next run's check a definition that differs, and no
	 * publications' fingerprint, so that the check reads the definitions
	 * (a fingerprint that matches would skip them) */
	if (!apply_open_group(a) ||
	    !mirror_set_definition(a->m, r->oid, "(to be synced again: a change came "
				   "without a value)") ||
	    !mirror_set_publication_fingerprint(a->m, NULL)) {
		errbuf_set(&a->err, "could not mark mirror table \"%s\" to be synced again: %s",
			  r->def.name, mirror_error(a->m));
		return false;
	}
	r->needs_sync = true;
	note_unknown(a, r);
	return true;
}

/*
 * Decides whether the change, in the open transaction, is left out: sets
 * *skip; false on an error (a->err), from the mirror's look-up. The stream
 * replays history: a relation the mirror has no table for joins through
 * the table sync, whose snapshot holds every change before its sync LSN;
 * so do the changes to a synced table from transactions that commit
 * before that LSN (the snapshot has them). A table that waits (its row in
 * pgmirror_waiting: invariant 14) has no mirror table either, and joins
 * the same way once it can be taken; its changes are skipped without
 * asking for a sync, which the next check tries (after a copy that met a
 * value, once something changed: apply_watch_waiting()). A Relation message
 * seen then is kept: the first change applied brings the table in line
 * with it.
 * Position comes first: a transaction before the sync LSN is skipped
 * whatever its key was then (the copy may have read another one). One
 * after it whose key has another number of columns than the keys of the
 * table's copy in parts, while they are to be asked, cannot be placed in
 * them: the table is copied again.
 */
static bool decide_skip(Applier *a, RelEntry *r, bool *skip)
{
	*skip = false;
	if (a->sync_mode || r->may_create)
		return true;
	if (!r->sync_known) {
		MirrorTableInfo info;

		if (!mirror_table_by_oid(a->m, r->oid, &r->in_mirror, &info)) {
			errbuf_set(&a->err, "%s", mirror_error(a->m));
			return false;
		}
		r->sync_lsn = r->in_mirror ? info.sync_lsn : LSN_INVALID;
		if (!apply_ranges_load(a, r, r->in_mirror ? info.copy_state : NULL)) {
			mirror_table_info_clear(&info);
			return false;
		}
		mirror_table_info_clear(&info);
		r->waiting = false;
		r->watch_lsn = LSN_INVALID;
		if (!r->in_mirror && !apply_watch_waiting(a, r))
			return false;
		r->sync_known = true;
	}
	if (r->waiting) {
		*skip = true; /* tried again at the next check, not at its changes */
		if (r->watch_lsn != LSN_INVALID && a->txn_final_lsn >= r->watch_lsn &&
		    !apply_note_waiting_change(a, r))
			return false;
	} else if (!r->in_mirror || r->needs_sync) {
		note_unknown(a, r);
		*skip = true;
	} else if (r->sync_lsn != LSN_INVALID && a->txn_final_lsn < r->sync_lsn) {
		*skip = true; /* by position, whatever its key then */
	} else if (!apply_ranges_fit(a, r)) {
		*skip = true;
		return apply_sync_again(a, r);
	}
	return true;
}

RelEntry *apply_rel_for_change(Applier *a, uint32_t relid, const char *what, bool *skip)
{
	RelEntry *r = rel_find(a, relid);

	*skip = false;
	if (r == NULL || r->display == NULL) {
		errbuf_set(&a->err, "protocol error: %s for relation OID %u, which no Relation "
			  "message described", what, relid);
		return NULL;
	}
	if (!a->in_txn) {
		errbuf_set(&a->err, "protocol error: %s for \"%s\" outside a transaction", what,
			  r->display);
		return NULL;
	}
	if (a->skipping || r->gone) {
		*skip = true;
		return NULL;
	}
	if (!decide_skip(a, r, skip) || *skip)
		return NULL;
	if (r->table == NULL && !rel_sync(a, r))
		return NULL;
	/* its name is another's now (apply_rename.c), it is to be synced, or
	 * it cannot be held any more and waits */
	*skip = r->gone || r->needs_sync || r->waiting;
	return *skip ? NULL : r;
}

void apply_set_sync_mode(Applier *a)
{
	a->sync_mode = true;
}

void apply_forget_table(Applier *a, uint32_t oid)
{
	RelEntry *r = rel_find(a, oid);

	if (r == NULL)
		return;
	mirror_table_free(r->table);
	r->table = NULL;
	r->sync_known = false;
	r->noted = false;
	r->needs_sync = false;
}

void apply_mark_creatable(Applier *a, uint32_t oid, bool on)
{
	RelEntry *r = rel_find(a, oid);

	if (r != NULL)
		r->may_create = on;
}

/*
 * apply.c: from decoded messages to mirror changes.
 *
 * One apply_X() per message kind behind a switch, as PostgreSQL's
 * apply_dispatch() does. The relation cache maps a source relation OID to
 * its mirror table and to per-column scratch (converted values, buffers),
 * allocated when the Relation message arrives and reused for every row,
 * so applying a row allocates nothing once warm.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/apply.h"
#include "pgmirror/naming.h"
#include "pgmirror/values.h"

typedef struct RelEntry {
	uint32_t oid;           /* 0: free slot */
	char *display;          /* "schema.table", for messages */
	MirrorTableDef def;     /* from the Relation message; strings owned */
	MirrorColumnDef *cols;  /* def.cols, owned */
	MirrorTable *table;     /* NULL until the first change (see rel_sync) */
	char replident;
	int ncols;
	ColumnType *types;
	bool *is_key;
	ValueBuf *newbufs;      /* scratch per column, new tuple */
	ValueBuf *oldbufs;      /* scratch per column, old tuple */
	Value *newvals;
	Value *oldvals;
	bool *keep;             /* new tuple: column not sent ('u') */
	bool *used;             /* old tuple: column identifies the row */
	bool big_bufs;          /* a scratch buffer outgrew VALUES_BUF_KEEP */
} RelEntry;

typedef struct TypeEntry {
	uint32_t oid;
	char *name;             /* pg_type.typname; NULL: look it up (again) */
	char *sent_name;        /* the name its last Type message gave; or NULL */
	ColumnType type;        /* how its values are stored */
} TypeEntry;

struct Applier {
	Mirror *m;
	const Catalog *catalog;
	RelEntry *rels;          /* open-addressing table, size nrels_cap */
	size_t nrels_cap;
	size_t nrels;
	TypeEntry *types;        /* Type messages seen */
	size_t ntypes;
	bool big_bufs;           /* some relation's big_bufs is set */

	bool in_txn;             /* between Begin and Commit */
	bool skipping;           /* this transaction was applied before */
	bool txn_changed;        /* it had a message other than Origin/Message */
	bool last_empty;         /* the last Commit ended an empty transaction */
	Lsn txn_final_lsn;       /* Begin: LSN of the commit record */
	int64_t txn_time;

	Lsn durable;             /* committed in the mirror */
	Lsn applied;             /* end of the last applied transaction */
	int64_t applied_time;    /* its commit time; 0 when none yet */
	int pending;             /* transactions in the open SQLite transaction */
	bool group_open;         /* an SQLite transaction is open */
	bool position_pending;   /* applied > durable needs storing */
	bool source_lost;        /* the last error was not reaching the source */

	ApplyStats stats;
	ErrBuf err;          /* the last error */
};

const char *apply_error(const Applier *a)
{
	return a->err.text;
}

Applier *apply_new(Mirror *m, Lsn durable, const Catalog *catalog)
{
	Applier *a = xcalloc(1, sizeof(*a));

	a->m = m;
	a->catalog = catalog;
	a->durable = a->applied = durable;
	a->nrels_cap = 64;
	a->rels = xcalloc(a->nrels_cap, sizeof(RelEntry));
	return a;
}

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
	memset(r, 0, sizeof(*r));
}

void apply_free(Applier *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->nrels_cap; i++)
		if (a->rels[i].oid != 0)
			rel_clear(&a->rels[i]);
	for (size_t i = 0; i < a->ntypes; i++) {
		free(a->types[i].name);
		free(a->types[i].sent_name);
	}
	free(a->types);
	free(a->rels);
	free(a);
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

static TypeEntry *type_find(Applier *a, uint32_t oid)
{
	for (size_t i = 0; i < a->ntypes; i++)
		if (a->types[i].oid == oid)
			return &a->types[i];
	return NULL;
}

static TypeEntry *type_get(Applier *a, uint32_t oid)
{
	TypeEntry *t = type_find(a, oid);

	if (t == NULL) {
		a->types = xreallocarray(a->types, a->ntypes + 1, sizeof(TypeEntry));
		t = &a->types[a->ntypes++];
		memset(t, 0, sizeof(*t));
		t->oid = oid;
	}
	return t;
}

/* A catalog question failed: remember whether for want of the source. */
static void catalog_failed(Applier *a)
{
	a->source_lost = a->catalog->lost != NULL && a->catalog->lost(a->catalog->ctx);
}

bool apply_source_lost(const Applier *a)
{
	return a->source_lost;
}

/*
 * How a column of type oid is stored, and the type's name. Built-in types
 * are known; others are asked of the source's catalog once: a domain is
 * stored as its base type, an array of anything as a JSON array, enums and
 * the rest as text.
 *
 * The stream replays history, so the type may have been dropped since
 * (with the column, or after a retype). Then its values are stored as the
 * text the stream sends, under the name the Type message before the
 * Relation gave: the column is gone or retyped on the source by now, and
 * a later Relation message says so.
 */
static bool resolve_type(Applier *a, uint32_t oid, int32_t typmod, int depth,
			 ColumnType *out, const char **name)
{
	TypeEntry *t;
	SourceType st = {0};
	ColumnType ct = {VT_TEXT, VT_TEXT, ','};
	const char *dummy;
	bool ok = true;

	if (values_builtin_type(oid, typmod, out)) {
		*name = values_builtin_type_name(oid);
		return true;
	}
	if ((t = type_find(a, oid)) != NULL && t->name != NULL) {
		*out = t->type;
		*name = t->name;
		return true;
	}
	if (depth > 8) {
		errbuf_set(&a->err, "type with OID %u nests domains or arrays too deeply", oid);
		return false;
	}
	if (!a->catalog->type_info(a->catalog->ctx, oid, &st)) {
		catalog_failed(a);
		errbuf_set(&a->err, "could not look up the type with OID %u on the source: %s", oid,
			  a->catalog->error(a->catalog->ctx));
		return false;
	}
	if (st.name == NULL) {
		t = type_find(a, oid);
		if (t == NULL || t->sent_name == NULL) {
			errbuf_set(&a->err, "type with OID %u no longer exists on the source, and the "
				  "stream did not name it", oid);
			return false;
		}
		st.name = xstrdup(t->sent_name); /* stored as text, as sent */
	} else if (st.typtype == 'd') {
		ok = resolve_type(a, st.basetype, st.typmod, depth + 1, &ct, &dummy);
	} else if (st.elemtype != 0) {
		ColumnType elem;

		ok = resolve_type(a, st.elemtype, typmod, depth + 1, &elem, &dummy);
		ct.vt = VT_ARRAY;
		ct.elem_vt = elem.vt == VT_ARRAY ? VT_TEXT : elem.vt;
		ct.delim = st.elemdelim;
	}
	if (ok) {
		t = type_get(a, oid); /* the recursion may have moved the array */
		free(t->name);
		t->name = st.name;
		st.name = NULL;
		t->type = ct;
		*out = ct;
		*name = t->name;
	}
	source_type_clear(&st);
	return ok;
}

/* --- transactions ------------------------------------------------------- */

static bool open_group(Applier *a)
{
	if (a->group_open)
		return true;
	if (!mirror_begin(a->m)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	a->group_open = true;
	return true;
}

bool apply_flush(Applier *a)
{
	char when[40];

	if (a->in_txn || !a->group_open)
		return true;
	if (a->position_pending &&
	    !mirror_set_position(a->m, a->applied,
				 a->applied_time ? pgtime_format_utc(a->applied_time, when,
								     sizeof(when))
						 : NULL)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	if (!mirror_commit(a->m)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		a->group_open = false;
		return false;
	}
	a->group_open = false;
	a->position_pending = false;
	a->applied_time = 0;
	a->durable = a->applied;
	a->pending = 0;
	return true;
}

bool apply_advance(Applier *a, Lsn lsn)
{
	if (a->in_txn || lsn <= a->applied)
		return true;
	a->applied = lsn;
	a->position_pending = true;
	return open_group(a) && apply_flush(a);
}

static bool apply_begin(Applier *a, const PgoBegin *b)
{
	if (a->in_txn) {
		errbuf_set(&a->err, "protocol error: Begin at %X/%X inside a transaction",
			  (unsigned)(b->final_lsn >> 32), (unsigned)b->final_lsn);
		return false;
	}
	a->in_txn = true;
	a->txn_changed = false;
	a->last_empty = false;
	a->txn_final_lsn = b->final_lsn;
	a->txn_time = b->commit_time;
	/* Its commit record lies before what the mirror holds: applied already. */
	a->skipping = b->final_lsn < a->durable;
	return a->skipping || open_group(a);
}

static bool apply_commit(Applier *a, const PgoCommit *c)
{
	char lsn[LSN_TEXT_SIZE];

	if (!a->in_txn) {
		errbuf_set(&a->err, "protocol error: Commit at %s outside a transaction",
			  lsn_format(c->commit_lsn, lsn));
		return false;
	}
	a->in_txn = false;
	if (a->skipping) {
		a->skipping = false;
		return true;
	}
	if (!a->txn_changed) {
		/*
		 * Servers before 15 send Begin and Commit also for transactions
		 * that changed no published table; 15+ skip those and move the
		 * position with keepalives. So does this: not a transaction of
		 * the mirror (not counted, no commit time), and its end is left
		 * to the caller as a keepalive position (apply_last_txn_empty).
		 */
		a->last_empty = true;
		return true;
	}
	if (c->end_lsn > a->applied)
		a->applied = c->end_lsn;
	a->applied_time = c->commit_time;
	a->stats.last_commit_time = c->commit_time;
	a->position_pending = true;
	a->pending++;
	a->stats.txns++;
	return true;
}

/* --- relations ---------------------------------------------------------- */

/*
 * values_convert() into one of r's scratch buffers. A buffer that a huge
 * value made large is noted, and freed once the message is applied
 * (trim_scratch), so that its memory does not stay with the process.
 */
static bool convert_value(Applier *a, RelEntry *r, int col, const char *text, size_t len,
			  ValueBuf *buf, Value *out, char *err, size_t errsize)
{
	bool ok = values_convert(r->types[col], text, len, buf, out, err, errsize);

	if (buf->cap > VALUES_BUF_KEEP)
		a->big_bufs = r->big_bufs = true;
	return ok;
}

static void trim_scratch(Applier *a)
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
static bool fill_constant(Applier *a, RelEntry *r, int col, const char *name, Value *out)
{
	SourceFill f = {0};
	char err[256];
	bool ok = true;

	out->kind = VAL_NULL;
	if (!a->catalog->column_fill(a->catalog->ctx, r->oid, name, &f)) {
		catalog_failed(a);
		errbuf_set(&a->err, "could not look up column \"%s\" added to \"%s\": %s", name,
			  r->display, a->catalog->error(a->catalog->ctx));
		return false;
	}
	if (f.has_missing && f.missing != NULL) {
		ok = convert_value(a, r, col, f.missing, strlen(f.missing), &r->newbufs[col],
				   out, err, sizeof(err));
		if (!ok)
			errbuf_set(&a->err, "could not use the value of column \"%s\" added to \"%s\": %s",
				  name, r->display, err);
	} else if (f.found && !f.has_missing && f.has_default) {
		errbuf_set(&a->err, "column \"%s\" was added to \"%s\", which has no key, with a "
			  "default the source computed row by row (or set later), so pgmirror cannot "
			  "tell what the existing rows hold; start this mirror over (--drop-slot, "
			  "remove the file, run again)", name, r->display);
		ok = false;
	}
	source_fill_clear(&f);
	return ok;
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
		else if (!convert_value(f->a, r, c, vals[k], (size_t)lens[k], b, v, err,
					sizeof(err))) {
			errbuf_set(&f->a->err, "could not fill column \"%s\" added to \"%s\": column %d: %s",
				  f->name, r->display, c + 1, err);
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
	ok = a->catalog->column_values(a->catalog->ctx, def->source_schema, def->source_table,
				       keynames, f.nkeys, f.name, fill_one_row, &f);
	if (!ok)
		catalog_failed(a);
	if (!ok && a->err.text[0] == '\0')
		errbuf_set(&a->err, "could not read column \"%s\" of \"%s\" on the source: %s",
			  f.name, r->display, a->catalog->error(a->catalog->ctx));
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
static bool apply_relation(Applier *a, const PgoRelation *rel)
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

		if (!resolve_type(a, c->type_oid, c->type_mod, 0, &r->types[i], &pg_type))
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
	char *why;
	bool ok = false;

	names = xcalloc((size_t)def->ncols + 1, sizeof(char *));
	for (int i = 0; i < def->ncols; i++)
		names[i] = def->cols[i].name;
	why = naming_table_problem(def->source_schema, def->source_table, names, def->ncols);
	if (why != NULL) {
		errbuf_set(&a->err, "%s", why);
		free(why);
		goto done;
	}
	if (!open_group(a))
		goto done;
	attnums = xcalloc((size_t)def->ncols + 1, sizeof(int));
	if (!a->catalog->column_attnums(a->catalog->ctx, r->oid, names, def->ncols, attnums)) {
		catalog_failed(a);
		errbuf_set(&a->err, "could not look up the columns of \"%s\" on the source: %s",
			  r->display, a->catalog->error(a->catalog->ctx));
		goto done;
	}
	for (int i = 0; i < def->ncols; i++)
		r->cols[i].attnum = attnums[i];
	if (!mirror_table_plan(a->m, def, has_key(r), &plan)) {
		errbuf_set(&a->err, "could not mirror table \"%s\": %s", r->display, mirror_error(a->m));
		goto done;
	}
	for (int i = 0; i < def->ncols; i++) {
		r->newvals[i].kind = VAL_NULL;
		if (plan.conv[i] == CONV_FILL && plan.has_rows && !has_key(r) &&
		    !fill_constant(a, r, i, def->cols[i].name, &r->newvals[i]))
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
	if (plan.exists && !plan.same)
		log_info("table \"%s\" changed on the source; mirror table \"%s\" follows",
			 r->display, def->name);
	ok = true;
done:
	mirror_plan_free(&plan);
	free(names);
	free(attnums);
	return ok;
}

/*
 * A Type message comes before a Relation message whose columns have a type
 * that is not built in. It may have changed: look it up again. Its name is
 * kept for a type dropped since (the name of a domain's base type, as
 * pgoutput sends it).
 */
static bool apply_type(Applier *a, const PgoType *t)
{
	TypeEntry *e = type_get(a, t->oid);

	free(e->name);
	e->name = NULL;
	free(e->sent_name);
	e->sent_name = xstrdup(t->typname);
	return true;
}

/* --- rows --------------------------------------------------------------- */

/* The relation a change is for; its mirror table is made on first use. */
static RelEntry *rel_for_change(Applier *a, uint32_t relid, const char *what)
{
	RelEntry *r = rel_find(a, relid);

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
	if (r->table == NULL && !rel_sync(a, r))
		return NULL;
	return r;
}

/*
 * Converts a tuple into vals. is_new: 'u' means "keep the current value"
 * (keep[i]); in an old tuple it means the column cannot identify the row
 * (used[i] false). For a key tuple ('K'), only key columns identify the
 * row; the others are sent as NULL and mean nothing.
 */
static bool convert_tuple(Applier *a, RelEntry *r, const PgoTuple *tup, char kind,
			  bool is_new, const char *what)
{
	Value *vals = is_new ? r->newvals : r->oldvals;
	ValueBuf *bufs = is_new ? r->newbufs : r->oldbufs;
	char err[256];

	if (tup->ncols != r->ncols) {
		errbuf_set(&a->err, "protocol error: %s for \"%s\" has %u columns, its Relation "
			  "message %d", what, r->display, tup->ncols, r->ncols);
		return false;
	}
	for (int i = 0; i < r->ncols; i++) {
		const PgoValue *v = &tup->cols[i];

		if (is_new)
			r->keep[i] = false;
		else
			r->used[i] = kind == 'O' || r->is_key[i];
		switch (v->kind) {
		case PGO_COL_NULL:
			vals[i].kind = VAL_NULL;
			break;
		case PGO_COL_UNCHANGED:
			vals[i].kind = VAL_NULL;
			if (is_new)
				r->keep[i] = true;
			else
				r->used[i] = false;
			break;
		case PGO_COL_TEXT:
			if (!convert_value(a, r, i, (const char *)v->data, v->len, &bufs[i],
					   &vals[i], err, sizeof(err))) {
				errbuf_set(&a->err, "could not apply %s to \"%s\": column %d: %s", what,
					  r->display, i + 1, err);
				return false;
			}
			break;
		default:
			errbuf_set(&a->err, "could not apply %s to \"%s\": column %d is in binary "
				  "format, which pgmirror does not request", what, r->display, i + 1);
			return false;
		}
	}
	return true;
}

static bool mirror_failed(Applier *a, const RelEntry *r, const char *what)
{
	char lsn[LSN_TEXT_SIZE];

	errbuf_set(&a->err, "could not apply %s to \"%s\" in the transaction committed at %s: %s",
		  what, r->display, lsn_format(a->txn_final_lsn, lsn), mirror_error(a->m));
	return false;
}

static void no_row(Applier *a, const RelEntry *r, const char *what)
{
	char lsn[LSN_TEXT_SIZE];

	log_warning("%s on \"%s\" (transaction committed at %s) found no matching row "
		    "in the mirror: the mirror differs from the source", what, r->display,
		    lsn_format(a->txn_final_lsn, lsn));
}

static bool apply_insert(Applier *a, const PgoInsert *ins)
{
	RelEntry *r = rel_for_change(a, ins->relid, "Insert");

	if (r == NULL)
		return false;
	if (a->skipping)
		return true;
	if (!convert_tuple(a, r, &ins->newtup, 'N', true, "Insert"))
		return false;
	for (int i = 0; i < r->ncols; i++) {
		if (r->keep[i]) {
			errbuf_set(&a->err, "protocol error: Insert for \"%s\" has an unchanged-value "
				  "marker in column %d", r->display, i + 1);
			return false;
		}
	}
	if (!mirror_table_insert(r->table, r->newvals))
		return mirror_failed(a, r, "Insert");
	a->stats.rows++;
	return true;
}

/* The key must be complete to find a row; a key column that was not sent
 * would silently match NULL. */
static bool check_key(Applier *a, const RelEntry *r, const char *what)
{
	for (int i = 0; i < r->ncols; i++) {
		if (r->is_key[i] && !r->used[i] && r->replident != 'f') {
			errbuf_set(&a->err, "protocol error: %s for \"%s\" lacks key column %d", what,
				  r->display, i + 1);
			return false;
		}
	}
	return true;
}

static bool apply_update(Applier *a, const PgoUpdate *up)
{
	RelEntry *r = rel_for_change(a, up->relid, "Update");
	const Value *match;
	int n;

	if (r == NULL)
		return false;
	if (a->skipping)
		return true;
	if (!convert_tuple(a, r, &up->newtup, 'N', true, "Update"))
		return false;
	if (up->old_kind != 0) {
		if (!convert_tuple(a, r, &up->oldtup, up->old_kind, false, "Update"))
			return false;
		match = r->oldvals;
	} else {
		/* The key did not change: the new tuple holds it. */
		for (int i = 0; i < r->ncols; i++)
			r->used[i] = r->is_key[i] && !r->keep[i];
		match = r->newvals;
	}
	if (!check_key(a, r, "Update"))
		return false;
	if (!mirror_table_update(r->table, match, r->used, r->newvals, r->keep, &n))
		return mirror_failed(a, r, "Update");
	if (n == 0)
		no_row(a, r, "Update");
	a->stats.rows++;
	return true;
}

static bool apply_delete(Applier *a, const PgoDelete *del)
{
	RelEntry *r = rel_for_change(a, del->relid, "Delete");
	int n;

	if (r == NULL)
		return false;
	if (a->skipping)
		return true;
	if (!convert_tuple(a, r, &del->oldtup, del->old_kind, false, "Delete") ||
	    !check_key(a, r, "Delete"))
		return false;
	if (!mirror_table_delete(r->table, r->oldvals, r->used, &n))
		return mirror_failed(a, r, "Delete");
	if (n == 0)
		no_row(a, r, "Delete");
	a->stats.rows++;
	return true;
}

static bool apply_truncate(Applier *a, const PgoTruncate *tr)
{
	for (uint32_t i = 0; i < tr->nrelids; i++) {
		RelEntry *r = rel_for_change(a, tr->relids[i], "Truncate");

		if (r == NULL)
			return false;
		if (a->skipping)
			continue;
		if (!mirror_table_truncate(r->table))
			return mirror_failed(a, r, "Truncate");
	}
	return true;
}

/* After an error: nothing of the open group may be committed. */
static void abort_group(Applier *a)
{
	if (!a->group_open)
		return;
	mirror_rollback(a->m);
	a->group_open = false;
	a->in_txn = false;
	a->pending = 0;
	a->applied = a->durable;
	a->position_pending = false;
}

bool apply_reset(Applier *a)
{
	if (!a->in_txn || a->skipping || !a->group_open) {
		errbuf_set(&a->err, "cannot reset the mirror outside a transaction being applied");
		return false;
	}
	/* The cached tables hold statements on the tables about to go. */
	for (size_t i = 0; i < a->nrels_cap; i++)
		if (a->rels[i].oid != 0)
			rel_clear(&a->rels[i]);
	a->nrels = 0;
	if (!mirror_drop_all_tables(a->m)) {
		errbuf_set(&a->err, "could not drop the mirrored tables: %s", mirror_error(a->m));
		abort_group(a);
		return false;
	}
	return true;
}

bool apply_message(Applier *a, const PgoMessage *msg)
{
	bool ok;

	a->source_lost = false;
	switch (msg->type) {
	case PGO_BEGIN:
		ok = apply_begin(a, &msg->u.begin);
		break;
	case PGO_COMMIT:
		ok = apply_commit(a, &msg->u.commit);
		break;
	case PGO_RELATION:
		ok = apply_relation(a, &msg->u.relation);
		break;
	case PGO_TYPE:
		ok = apply_type(a, &msg->u.type);
		break;
	case PGO_INSERT:
		ok = apply_insert(a, &msg->u.insert);
		break;
	case PGO_UPDATE:
		ok = apply_update(a, &msg->u.update);
		break;
	case PGO_DELETE:
		ok = apply_delete(a, &msg->u.delete);
		break;
	case PGO_TRUNCATE:
		ok = apply_truncate(a, &msg->u.truncate);
		break;
	case PGO_ORIGIN:
	case PGO_MESSAGE:
		ok = true; /* nothing to mirror */
		break;
	default:
		errbuf_set(&a->err, "protocol error: unexpected %s message (pgmirror asks for "
			  "neither streaming nor two-phase transactions)",
			  pgoutput_msg_name(msg->type));
		ok = false;
		break;
	}
	if (a->big_bufs)
		trim_scratch(a);
	if (!ok)
		abort_group(a);
	else if (a->in_txn && msg->type != PGO_BEGIN && msg->type != PGO_ORIGIN &&
		 msg->type != PGO_MESSAGE)
		a->txn_changed = true;
	return ok;
}

bool apply_last_txn_empty(const Applier *a)
{
	return a->last_empty;
}

bool apply_in_transaction(const Applier *a)
{
	return a->in_txn;
}

int apply_pending(const Applier *a)
{
	return a->pending;
}

Lsn apply_durable_lsn(const Applier *a)
{
	return a->durable;
}

Lsn apply_applied_lsn(const Applier *a)
{
	return a->applied;
}

void apply_stats(const Applier *a, ApplyStats *out)
{
	*out = a->stats;
}

bool apply_make_table(Applier *a, uint32_t relid)
{
	if (rel_for_change(a, relid, "the initial copy") == NULL) {
		abort_group(a);
		return false;
	}
	return true;
}

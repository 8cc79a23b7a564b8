/*
 * apply.c: from decoded messages to mirror changes: transaction
 * boundaries, the grouping of source transactions into SQLite ones, the
 * dispatch of messages, and the row changes. A change's tuple is made
 * into values in apply_tuple.c; the relation cache and the making of
 * mirror tables are in apply_schema.c.
 *
 * One apply_X() per message kind behind a switch, as PostgreSQL's
 * apply_dispatch() does.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply_internal.h"

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

void apply_set_binary(Applier *a, int server_version)
{
	a->server_version = server_version;
}

void apply_set_command(Applier *a, ApplyCommandFn command, void *ctx)
{
	a->command = command;
	a->command_ctx = ctx;
}

void apply_free(Applier *a)
{
	if (a == NULL)
		return;
	apply_cache_free(a);
	free(a->unknown);
	mirror_user_objects_free(a->reset_saved);
	free(a);
}

bool apply_source_lost(const Applier *a)
{
	return a->source_lost;
}

/* --- transactions ------------------------------------------------------- */

bool apply_flush(Applier *a)
{
	char when[40];

	if (a->in_txn || !a->group_open)
		return true;
	if (a->position_pending && !a->sync_mode &&
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
	return apply_open_group(a) && apply_flush(a);
}

static bool apply_begin(Applier *a, const PgoBegin *b)
{
	char lsn[LSN_TEXT_SIZE];

	if (a->in_txn) {
		errbuf_set(&a->err, "protocol error: Begin at %s inside a transaction",
			  lsn_format(b->final_lsn, lsn));
		return false;
	}
	a->in_txn = true;
	a->txn_changed = false;
	a->last_empty = false;
	a->txn_final_lsn = b->final_lsn;
	a->txn_xid = b->xid;
	a->txn_time = b->commit_time;
	/* Its commit record lies before what the mirror holds: applied already. */
	a->skipping = b->final_lsn < a->durable;
	return a->skipping || apply_open_group(a);
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
	/* the rows of a fresh copy are in: the user's triggers come back now,
	 * so none of them saw the copy */
	if (a->reset_saved != NULL) {
		MirrorUserObjects *u = a->reset_saved;

		a->reset_saved = NULL;
		if (!apply_restore_user_objects(a, u, "a fresh copy"))
			return false;
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

/* --- rows --------------------------------------------------------------- */

static void abort_group(Applier *a);

static bool mirror_failed(Applier *a, const RelEntry *r, const char *what)
{
	char lsn[LSN_TEXT_SIZE];

	errbuf_set(&a->err, "could not apply %s to \"%s\" in the transaction committed at %s: %s",
		  what, r->display, lsn_format(a->txn_final_lsn, lsn), mirror_error(a->m));
	return false;
}

/*
 * An Update or Delete that found no row: the mirror lacks rows the source
 * has. The usual cause is --no-initial-copy (rows older than the first run
 * were never copied), else a change made by hand. Said once per table, with
 * what mends it, not once per row: a device made without a copy would
 * otherwise say it for every old row that changes.
 */
static void no_row(Applier *a, RelEntry *r, const char *what)
{
	char lsn[LSN_TEXT_SIZE], *option, *cmd;

	if (r->said_no_row)
		return;
	r->said_no_row = true;
	option = xasprintf("--resync=%s", r->def.name);
	cmd = a->command != NULL ? a->command(a->command_ctx, option) : xstrdup(option);
	log_warning("%s on \"%s\" (transaction committed at %s) found no matching row in "
		    "the mirror: rows of the source are missing from mirror table \"%s\" (it "
		    "was made with --no-initial-copy, which copies no row that existed before, "
		    "or it was changed by hand); to copy the table, run %s (said once per "
		    "table)", what, r->display, lsn_format(a->txn_final_lsn, lsn), r->def.name, cmd);
	free(cmd);
	free(option);
}

/*
 * An Update that found no row but carries the whole new row (no column
 * left out as unchanged) makes it: the row is then as on the source, which
 * is what a user of --no-initial-copy expects of a row that changes.
 * Without the whole row there is nothing to make it from (no_row()).
 */
static bool update_no_row(Applier *a, RelEntry *r)
{
	for (int i = 0; i < r->ncols; i++) {
		if (r->keep[i]) {
			no_row(a, r, "Update");
			return true;
		}
	}
	if (!r->said_row_made)
		log_info("an Update on \"%s\" found no row in the mirror and carried the whole "
			 "new row, which is inserted (a row older than the first run, made with "
			 "--no-initial-copy; said once per table)", r->display);
	r->said_row_made = true;
	return mirror_table_insert(r->table, r->newvals) || mirror_failed(a, r, "Update");
}

/*
 * Inserts r's new tuple, the row a change of what (an "Insert", an
 * "Update") moved where (e.g. "into its row filter"). A column sent as
 * unchanged (a large value stored apart) has no value in any change: the
 * table is then copied again, at a snapshot that holds this change, and
 * its changes until then are skipped.
 */
static bool insert_new_row(Applier *a, RelEntry *r, const char *what, const char *where)
{
	for (int i = 0; i < r->ncols; i++) {
		if (r->keep[i]) {
			char lsn[LSN_TEXT_SIZE];

			log_info("an update in the transaction committed at %s moved a row of "
				 "\"%s\" %s without the value of its unchanged column \"%s\" (a "
				 "large value stored apart); mirror table \"%s\" is synced again",
				 lsn_format(a->txn_final_lsn, lsn), r->display, where,
				 r->cols[i].name, r->def.name);
			return apply_sync_again(a, r);
		}
	}
	if (!mirror_table_insert(r->table, r->newvals))
		return mirror_failed(a, r, what);
	a->stats.rows++;
	return true;
}

static bool apply_insert(Applier *a, const PgoInsert *ins)
{
	bool skip;
	RelEntry *r = apply_rel_for_change(a, ins->relid, "Insert", &skip);

	if (r == NULL)
		return skip;
	if (!apply_convert_tuple(a, r, &ins->newtup, 'N', true, "Insert"))
		return apply_tuple_failed(a, r);
	if (apply_ranges_active(a, r) && !apply_ranges_row(a, r, r->newvals))
		return true; /* its range's snapshot, or the copy to come, has it */
	/*
	 * An UPDATE that moved a row into a row filter comes as an Insert
	 * (PostgreSQL 15+); when it changed the key but not a TOASTed column,
	 * the server has only the old key to go by, and sends that column as
	 * unchanged.
	 */
	return insert_new_row(a, r, "Insert", "into its row filter");
}

bool apply_insert_rows(Applier *a, uint32_t relid, const Value *vals, int nrows)
{
	bool skip, ok;
	RelEntry *r = apply_rel_for_change(a, relid, "Insert", &skip);

	if (r == NULL) {
		ok = skip;
	} else {
		ok = true;
		for (int i = 0; i < nrows && ok; i++) {
			ok = mirror_table_insert(r->table, vals + (size_t)i * (size_t)r->ncols) ||
			     mirror_failed(a, r, "Insert");
			if (ok)
				a->stats.rows++;
		}
	}
	if (!ok)
		abort_group(a);
	else if (a->in_txn)
		a->txn_changed = true;
	return ok;
}

/* The key must be complete to find a row; a key column that was not sent
 * would silently match NULL. */
static bool check_key(Applier *a, const RelEntry *r, const char *what)
{
	for (int i = 0; i < r->ncols; i++) {
		if (r->is_key[i] && !r->used[i] && r->replident != 'f') {
			errbuf_set(&a->err, "protocol error: %s for \"%s\" lacks key column \"%s\"",
				  what, r->display, r->cols[i].name);
			return false;
		}
	}
	return true;
}

/*
 * An Update of a table copied in parts (apply_ranges.c): its delete half
 * applies by the old key's range, its insert half by the new key's. 2:
 * both apply, as one update; 1: done (a half applied, or none); 0: failed.
 */
static int update_halves(Applier *a, RelEntry *r, bool key_changed, const Value *match)
{
	bool old_ok = apply_ranges_row(a, r, match);
	bool new_ok = key_changed ? apply_ranges_row(a, r, r->newvals) : old_ok;
	int n;

	if (old_ok && new_ok)
		return 2;
	if (old_ok && !mirror_table_delete(r->table, match, r->used, &n))
		return mirror_failed(a, r, "Update") ? 1 : 0;
	if (old_ok && n == 0)
		no_row(a, r, "Update");
	a->stats.rows += old_ok;
	if (old_ok || !new_ok)
		return 1;
	return insert_new_row(a, r, "Update", "into a part of its copy older than its old key's")
	       ? 1 : 0;
}

static bool apply_update(Applier *a, const PgoUpdate *up)
{
	bool skip;
	RelEntry *r = apply_rel_for_change(a, up->relid, "Update", &skip);
	const Value *match;
	int n;

	if (r == NULL)
		return skip;
	if (!apply_convert_tuple(a, r, &up->newtup, 'N', true, "Update"))
		return apply_tuple_failed(a, r);
	if (up->old_kind != 0) {
		if (!apply_convert_tuple(a, r, &up->oldtup, up->old_kind, false, "Update"))
			return apply_tuple_failed(a, r);
		match = r->oldvals;
	} else {
		/* The key did not change: the new tuple holds it. */
		for (int i = 0; i < r->ncols; i++)
			r->used[i] = r->is_key[i] && !r->keep[i];
		match = r->newvals;
	}
	if (!check_key(a, r, "Update"))
		return false;
	if (apply_ranges_active(a, r)) {
		int half = update_halves(a, r, up->old_kind != 0, match);

		if (half <= 1)
			return half == 1;
	}
	if (!mirror_table_update(r->table, match, r->used, r->newvals, r->keep, &n))
		return mirror_failed(a, r, "Update");
	if (n == 0 && !update_no_row(a, r))
		return false;
	a->stats.rows++;
	return true;
}

static bool apply_delete(Applier *a, const PgoDelete *del)
{
	bool skip;
	RelEntry *r = apply_rel_for_change(a, del->relid, "Delete", &skip);
	int n;

	if (r == NULL)
		return skip;
	if (!apply_convert_tuple(a, r, &del->oldtup, del->old_kind, false, "Delete"))
		return apply_tuple_failed(a, r);
	if (!check_key(a, r, "Delete"))
		return false;
	if (apply_ranges_active(a, r) && !apply_ranges_row(a, r, r->oldvals))
		return true;
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
		bool skip;
		RelEntry *r = apply_rel_for_change(a, tr->relids[i], "Truncate", &skip);

		if (r == NULL && skip)
			continue;
		if (r == NULL)
			return false;
		/* a range copied after it keeps its rows: copied again */
		if (apply_ranges_active(a, r) && a->txn_final_lsn < copy_ranges_max_lsn(r->ranges)) {
			if (!apply_sync_again(a, r))
				return false;
			continue;
		}
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
	mirror_user_objects_free(a->reset_saved); /* back in place */
	a->reset_saved = NULL;
}

bool apply_reset(Applier *a)
{
	if (!a->in_txn || a->skipping || !a->group_open) {
		errbuf_set(&a->err, "cannot reset the mirror outside a transaction being applied");
		return false;
	}
	/* The cached tables hold statements on the tables about to go. */
	apply_rels_clear(a);
	mirror_user_objects_free(a->reset_saved);
	a->reset_saved = NULL;
	if (!mirror_user_objects_save(a->m, NULL, 0, &a->reset_saved)) {
		errbuf_set(&a->err, "could not set the user's objects aside: %s", mirror_error(a->m));
		abort_group(a);
		return false;
	}
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
		apply_trim_scratch(a);
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

bool apply_skipping(const Applier *a)
{
	return a->in_txn && a->skipping;
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

void apply_defer_indexes(Applier *a)
{
	a->defer_indexes = true;
}

bool apply_make_table(Applier *a, uint32_t relid, Lsn sync_lsn, const char *definition)
{
	bool skip;
	RelEntry *r;

	apply_mark_creatable(a, relid, true);
	r = apply_rel_for_change(a, relid, "the initial copy", &skip);
	apply_mark_creatable(a, relid, false);
	if (r == NULL) {
		if (skip)
			errbuf_set(&a->err, "the initial copy began in a transaction applied before");
		abort_group(a);
		return false;
	}
	if (sync_lsn != LSN_INVALID) {
		if (!mirror_set_sync_lsn(a->m, relid, sync_lsn)) {
			errbuf_set(&a->err, "%s", mirror_error(a->m));
			abort_group(a);
			return false;
		}
		r->sync_known = false; /* read again with the next change */
	}
	if (definition != NULL && !mirror_set_definition(a->m, relid, definition)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		abort_group(a);
		return false;
	}
	return true;
}

int apply_unknown_relations(const Applier *a, const uint32_t **oids)
{
	*oids = a->unknown;
	return a->nunknown;
}

void apply_clear_unknown(Applier *a)
{
	a->nunknown = 0;
}

bool apply_waiting_changed(const Applier *a)
{
	return a->waiting_changed;
}

int apply_recolumned(const Applier *a)
{
	return a->nrecolumned;
}

void apply_clear_recolumned(Applier *a)
{
	a->nrecolumned = 0;
}

/*
 * copy_parts.c: a table copied in key order and committed in parts, each
 * with its last key and its snapshot's LSN (copy_parts.h); a later try
 * goes on after that key under a snapshot of its own.
 *
 * A part ends after PART_USECS of copying or PART_BYTES of values, so a
 * cut wastes about a second of the link. Its commit is one SQLite
 * transaction: its rows and the ranges (pgmirror_tables.copy_state, with
 * the rows copied so far); the stream applies a change to a row only from
 * the position of the range that holds its key (apply_schema.c).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_keys.h"
#include "pgmirror/copy_parts.h"
#include "pgmirror/copy_ranges.h"
#include "copy_internal.h"

#define PART_USECS 1000000
#define PART_BYTES ((size_t)4 << 20)

/* One table's copy in parts, for the batch hook. */
typedef struct Parts {
	Copier *c;
	Mirror *m;
	const SourceTable *t;
	Lsn at;                  /* this try's snapshot */
	int64_t estimate;
	CopyRanges *ranges;
	int *keycols;            /* the key columns, as indexes into t->cols */
	Value *key;              /* the last row's key (nkeys), borrowed */
	int64_t rows;            /* rows stored, by earlier tries too */
	int64_t part_rows;       /* of the part in flight */
	size_t part_bytes;
	int64_t part_started;    /* mono_usecs() */
	int64_t test_rows;       /* PGMIRROR_TEST_PART_ROWS: a part every N rows */
} Parts;

/* The kind of key column col: a domain's is its base type's. */
static char key_kind(const SourceColumn *col, bool utf8)
{
	if (col->base_oid != 0)
		return copy_key_kind(col->base_oid, col->base_mod, utf8);
	return copy_key_kind(col->type_oid, col->type_mod, utf8);
}

bool copy_parts_possible(Session *s, const SourceTable *t)
{
	bool utf8 = session_server_utf8(s);
	int nkeys = 0;

	if (t->replident != 'd' && t->replident != 'i')
		return false;
	for (int i = 0; i < t->ncols; i++) {
		if (!t->cols[i].is_key)
			continue;
		if (key_kind(&t->cols[i], utf8) == 0)
			return false;
		nkeys++;
	}
	return nkeys > 0;
}

uint64_t copy_parts_signature(const SourceTable *t)
{
	uint64_t h = copy_ranges_hash(0, &t->replident, 1);

	if (t->definition != NULL)
		h = copy_ranges_hash(h, t->definition, strlen(t->definition) + 1);
	if (t->rowfilter != NULL)
		h = copy_ranges_hash(h, t->rowfilter, strlen(t->rowfilter) + 1);
	for (int i = 0; i < t->ncols; i++) {
		const SourceColumn *col = &t->cols[i];
		char buf[64];
		int n = snprintf(buf, sizeof(buf), "%u %d %d", col->type_oid, col->type_mod,
				 col->is_key ? 1 : 0);

		h = copy_ranges_hash(h, col->name, strlen(col->name) + 1);
		h = copy_ranges_hash(h, buf, (size_t)n + 1);
	}
	return h;
}

/* parts committed: see copy_parts_stored() */
static uint64_t nstored;

uint64_t copy_parts_stored(void)
{
	return nstored;
}

void copy_parts_stored_reset(void)
{
	nstored = 0;
}

/* Stores the ranges and the rows so far; within the open transaction. */
static bool store(Parts *p)
{
	char *text = copy_ranges_format(p->ranges);
	bool ok;

	/* a table copied in one go needs no ranges: its sync LSN says it all */
	if (copy_ranges_done(p->ranges) && p->ranges->n == 1)
		ok = mirror_set_copy_state(p->m, p->t->oid, NULL, p->rows, p->estimate);
	else
		ok = mirror_set_copy_state(p->m, p->t->oid, text, p->rows, p->estimate);
	free(text);
	if (!ok) {
		char *msg = xasprintf("could not store how far the copy of \"%s.%s\" got: %s",
				      p->t->nspname, p->t->relname, mirror_error(p->m));

		copy_set_error(p->c, msg);
		free(msg);
	}
	return ok;
}

/* Commits the part in flight, and begins the next one. */
static bool end_part(Parts *p)
{
	Applier *a = copy_applier(p->c);
	char lsn[LSN_TEXT_SIZE];

	if (!store(p) || !copy_commit_at(p->c, p->at))
		return false;
	if (!apply_flush(a)) {
		copy_set_error(p->c, apply_error(a));
		return false;
	}
	/* -v: the progress --status shows */
	if (p->estimate >= 0)
		log_debug("copying \"%s.%s\": %" PRId64 " of about %" PRId64 " rows stored (a part "
			  "of %" PRId64 " rows committed at %s)", p->t->nspname, p->t->relname,
			  p->rows, p->estimate, p->part_rows, lsn_format(p->at, lsn));
	else
		log_debug("copying \"%s.%s\": %" PRId64 " rows stored (a part of %" PRId64
			  " rows committed at %s)", p->t->nspname, p->t->relname, p->rows,
			  p->part_rows, lsn_format(p->at, lsn));
	nstored++;
	p->part_rows = 0;
	p->part_bytes = 0;
	p->part_started = mono_usecs();
	return copy_begin_at(p->c, p->at);
}

static bool after_batch(void *ctx, const Value *vals, int nrows, size_t bytes)
{
	Parts *p = ctx;
	const Value *last;

	if (nrows <= 0)
		return true;
	last = vals + (size_t)(nrows - 1) * (size_t)p->t->ncols;
	p->rows += nrows;
	p->part_rows += nrows;
	p->part_bytes += bytes;
	if (!(p->test_rows > 0 ? p->part_rows >= p->test_rows
	      : p->part_bytes >= PART_BYTES || mono_usecs() - p->part_started >= PART_USECS))
		return true;
	for (int k = 0; k < p->ranges->nkeys; k++)
		p->key[k] = last[p->keycols[k]];
	copy_ranges_reach(p->ranges, p->at, p->key);
	return end_part(p);
}

/* The ranges of an unfinished copy of t in m that this try can go on
 * from, or NULL (none, or of another shape: dropped). */
static bool earlier_ranges(Parts *p, bool possible, uint64_t sig, CopyRanges **out)
{
	MirrorTableInfo info;
	bool found;
	char err[128];

	*out = NULL;
	if (!mirror_table_by_oid(p->m, p->t->oid, &found, &info)) {
		copy_set_error(p->c, mirror_error(p->m));
		return false;
	}
	if (found && possible && info.copy_state != NULL) {
		*out = copy_ranges_parse(info.copy_state, err, sizeof(err));
		if (*out == NULL)
			log_warning("mirror table \"%s\" has a damaged copy_state (%s); it is copied "
				    "again from the start", info.name, err);
		else if ((*out)->signature != sig || copy_ranges_done(*out) ||
			 (*out)->kinds == NULL || (*out)->nkeys != p->ranges->nkeys ||
			 memcmp((*out)->kinds, p->ranges->kinds, (size_t)p->ranges->nkeys) != 0) {
			copy_ranges_free(*out);
			*out = NULL;
		} else
			p->rows = info.copy_rows;
	}
	if (found && *out == NULL) {
		log_info("mirror table \"%s\" holds part of a copy that cannot go on (the table "
			 "changed); it is copied again from the start", info.name);
		apply_forget_table(copy_applier(p->c), p->t->oid);
		if (!mirror_table_drop(p->m, p->t->oid)) {
			copy_set_error(p->c, mirror_error(p->m));
			mirror_table_info_clear(&info);
			return false;
		}
	}
	mirror_table_info_clear(&info);
	return true;
}

bool copy_table_parts(Copier *c, Mirror *m, const SourceTable *t, Lsn at, int64_t estimate)
{
	Parts p = {.c = c, .m = m, .t = t, .at = at, .estimate = estimate};
	bool possible = copy_parts_possible(copy_session(c), t), ok = false;
	uint64_t sig = copy_parts_signature(t);
	CopyRanges *earlier = NULL;
	SourceOrder order = {0};
	bool *bytewise = NULL;
	char **after = NULL;
	const char *knob = getenv("PGMIRROR_TEST_PART_ROWS"); /* tests only */

	p.ranges = xcalloc(1, sizeof(CopyRanges));
	p.ranges->signature = sig;
	p.keycols = xcalloc((size_t)t->ncols + 1, sizeof(int));
	for (int i = 0; i < t->ncols; i++)
		if (t->cols[i].is_key)
			p.keycols[p.ranges->nkeys++] = i;
	p.key = xcalloc((size_t)p.ranges->nkeys + 1, sizeof(Value));
	p.ranges->kinds = xcalloc((size_t)p.ranges->nkeys + 1, 1);
	for (int k = 0; k < p.ranges->nkeys; k++) {
		const SourceColumn *col = &t->cols[p.keycols[k]];

		p.ranges->kinds[k] = key_kind(col, session_server_utf8(copy_session(c)));
	}
	p.test_rows = knob != NULL ? strtoll(knob, NULL, 10) : 0;
	if (!earlier_ranges(&p, possible, sig, &earlier))
		goto done;
	if (earlier == NULL) {
		if (!copy_make_table(c, t, at))
			goto done;
		if (!possible) {
			ok = copy_rows_ordered(c, t, NULL, NULL, NULL);
			goto done;
		}
	} else {
		const CopyRange *last = &earlier->r[earlier->n - 1];
		char lsn[LSN_TEXT_SIZE];

		/* its table as it is (the same shape): the rows go on */
		if (!copy_make_table(c, t, LSN_INVALID))
			goto done;
		copy_ranges_free(p.ranges);
		p.ranges = earlier;
		after = xcalloc((size_t)earlier->nkeys + 1, sizeof(char *));
		for (int k = 0; k < earlier->nkeys; k++)
			after[k] = copy_key_literal(&last->key[k]);
		order.after = (const char *const *)after;
		log_info("copy of \"%s.%s\" goes on after the %" PRId64 " rows stored, at %s",
			 t->nspname, t->relname, p.rows, lsn_format(at, lsn));
	}
	bytewise = xcalloc((size_t)p.ranges->nkeys + 1, sizeof(bool));
	for (int k = 0; k < p.ranges->nkeys; k++) {
		const SourceColumn *col = &t->cols[p.keycols[k]];

		bytewise[k] = copy_key_collated(col->base_oid != 0 ? col->base_oid : col->type_oid);
	}
	order.nkeys = p.ranges->nkeys;
	order.cols = p.keycols;
	order.bytewise = bytewise;
	p.part_started = mono_usecs();
	if (!copy_rows_ordered(c, t, &order, after_batch, &p))
		goto done;
	copy_ranges_reach(p.ranges, at, NULL);
	ok = store(&p);
done:
	if (after != NULL)
		strv_free(after, p.ranges->nkeys);
	free(bytewise);
	free(p.key);
	free(p.keycols);
	copy_ranges_free(p.ranges);
	return ok;
}

/* The order of copy_parts_order(): those a cut sends back to their start
 * (whole) last, each part by size. */
typedef struct OrderItem {
	int index;
	bool whole;
	int64_t bytes;
} OrderItem;

static int order_cmp(const void *x, const void *y)
{
	const OrderItem *a = x, *b = y;

	if (a->whole != b->whole)
		return a->whole ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	return a->index - b->index;
}

void copy_parts_order(Session *s, const SourceTable *t, const int64_t *est_bytes, int n,
		      int *perm)
{
	OrderItem *items = xcalloc((size_t)n + 1, sizeof(OrderItem));

	/* a table that cannot resume but fits in one part loses no more to
	 * a cut than a part of another: its place is its size's, so that a
	 * small keyless table does not wait behind a big keyed one */
	for (int i = 0; i < n; i++)
		items[i] = (OrderItem){i, est_bytes[i] > (int64_t)PART_BYTES &&
					   !copy_parts_possible(s, &t[i]), est_bytes[i]};
	qsort(items, (size_t)n, sizeof(OrderItem), order_cmp);
	for (int i = 0; i < n; i++)
		perm[i] = items[i].index;
	free(items);
}

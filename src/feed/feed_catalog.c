/*
 * feed_catalog.c: a hub's tap on its catalog, and a device's catalog of
 * answers read from the feed (feed_catalog.h).
 *
 * Which answers a later segment restates (feed_writer_take()'s key): those
 * a reader that starts there may need for a Relation message it is handed
 * again, and that do not depend on the moment they were asked: a type,
 * the attnums of a relation's columns, a relation's name, whether it is
 * published, and the newest indexes of a set of relations. The values and
 * fill of an added column are asked of one moment and kept only in their
 * group.
 *
 * The applier asks for a table's indexes as of the transaction that
 * brought its Relation message (its xid). A reader that hands a Relation
 * message again in another transaction asks with another xid: it is
 * answered with the newest answer for the same relations, which is what
 * the hub's mirror holds at that point.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/feed_catalog.h"

/* --- the hub's tap ------------------------------------------------------ */

struct FeedTap {
	const Catalog *inner;
	FeedWriter *w;
	Catalog cat;
	FeedBuf key;              /* a question's canonical key */
};

static FeedTap *tap_of(void *ctx)
{
	return ctx;
}

/* The key of the question put into t->key, for feed_writer_take(). */
static void take_keyed(FeedTap *t)
{
	feed_writer_take(t->w, feed_buf_failed(&t->key) ? NULL : t->key.data, t->key.len);
}

static bool tap_type_info(void *ctx, uint32_t oid, SourceType *out)
{
	FeedTap *t = tap_of(ctx);

	if (!t->inner->type_info(t->inner->ctx, oid, out))
		return false;
	if (t->w == NULL)
		return true;
	feed_put_answer_type(feed_writer_buf(t->w), oid, out);
	feed_buf_reset(&t->key);
	feed_key_type(&t->key, oid);
	take_keyed(t);
	return true;
}

static bool tap_column_fill(void *ctx, uint32_t relid, const char *column, SourceFill *out)
{
	FeedTap *t = tap_of(ctx);

	if (!t->inner->column_fill(t->inner->ctx, relid, column, out))
		return false;
	if (t->w == NULL)
		return true;
	feed_put_answer_fill(feed_writer_buf(t->w), relid, column, out);
	feed_writer_take(t->w, NULL, 0);
	return true;
}

static bool tap_column_attnums(void *ctx, uint32_t relid, const char *const *names, int n,
			       int *attnums)
{
	FeedTap *t = tap_of(ctx);

	if (!t->inner->column_attnums(t->inner->ctx, relid, names, n, attnums))
		return false;
	if (t->w == NULL)
		return true;
	feed_put_answer_attnums(feed_writer_buf(t->w), relid, names, n, attnums);
	feed_buf_reset(&t->key);
	feed_key_attnums(&t->key, relid, names, n);
	take_keyed(t);
	return true;
}

/* column_values' rows, written as they pass to the applier's callback. */
typedef struct ValuesPass {
	FeedBuf *b;
	FeedValuesWriter vw;
	CatalogRowFn row;
	void *arg;
} ValuesPass;

static bool pass_row(void *arg, const char *const *vals, const int *lens)
{
	ValuesPass *p = arg;

	feed_put_answer_values_row(p->b, &p->vw, vals, lens);
	return p->row(p->arg, vals, lens);
}

static bool tap_column_values(void *ctx, uint32_t relid, const char *const *keys, int nkeys,
			      const char *column, CatalogRowFn row, void *arg)
{
	FeedTap *t = tap_of(ctx);
	ValuesPass p = {NULL, {0}, row, arg};

	if (t->w == NULL)
		return t->inner->column_values(t->inner->ctx, relid, keys, nkeys, column, row, arg);
	p.b = feed_writer_buf(t->w);
	feed_put_answer_values_begin(p.b, &p.vw, relid, keys, nkeys, column);
	if (!t->inner->column_values(t->inner->ctx, relid, keys, nkeys, column, pass_row, &p))
		return false;
	feed_put_answer_values_end(p.b, &p.vw);
	feed_writer_take(t->w, NULL, 0);
	return true;
}

static bool tap_relation_name(void *ctx, uint32_t relid, char **nspname, char **relname)
{
	FeedTap *t = tap_of(ctx);

	if (!t->inner->relation_name(t->inner->ctx, relid, nspname, relname))
		return false;
	if (t->w == NULL)
		return true;
	feed_put_answer_relname(feed_writer_buf(t->w), relid, *nspname, *relname);
	feed_buf_reset(&t->key);
	feed_key_relname(&t->key, relid);
	take_keyed(t);
	return true;
}

static bool tap_indexes(void *ctx, const uint32_t *relids, int n, uint32_t xid,
			SourceIndex **out, int *nout)
{
	FeedTap *t = tap_of(ctx);

	if (!t->inner->indexes(t->inner->ctx, relids, n, xid, out, nout))
		return false;
	if (t->w == NULL)
		return true;
	feed_put_answer_indexes(feed_writer_buf(t->w), relids, n, xid, *out, *nout);
	/* restated whatever the transaction: see answer_indexes() */
	feed_buf_reset(&t->key);
	feed_key_indexes(&t->key, relids, n, 0);
	take_keyed(t);
	return true;
}

static bool tap_relation_published(void *ctx, uint32_t relid, bool *published)
{
	FeedTap *t = tap_of(ctx);

	if (!t->inner->relation_published(t->inner->ctx, relid, published))
		return false;
	if (t->w == NULL)
		return true;
	feed_put_answer_published(feed_writer_buf(t->w), relid, *published);
	feed_buf_reset(&t->key);
	feed_key_published(&t->key, relid);
	take_keyed(t);
	return true;
}

static const char *tap_error(void *ctx)
{
	FeedTap *t = tap_of(ctx);

	return t->inner->error(t->inner->ctx);
}

static bool tap_lost(void *ctx)
{
	FeedTap *t = tap_of(ctx);

	return t->inner->lost(t->inner->ctx);
}

FeedTap *feed_tap_new(const Catalog *inner, FeedWriter *w)
{
	FeedTap *t = xcalloc(1, sizeof(*t));

	t->inner = inner;
	t->w = w;
	feed_buf_init(&t->key);
	t->cat.ctx = t;
	t->cat.type_info = tap_type_info;
	t->cat.column_fill = tap_column_fill;
	t->cat.column_attnums = tap_column_attnums;
	t->cat.column_values = tap_column_values;
	t->cat.error = tap_error;
	/* an optional question stays unasked where inner leaves it so */
	t->cat.lost = inner->lost != NULL ? tap_lost : NULL;
	t->cat.relation_name = inner->relation_name != NULL ? tap_relation_name : NULL;
	t->cat.indexes = inner->indexes != NULL ? tap_indexes : NULL;
	t->cat.relation_published = inner->relation_published != NULL
		? tap_relation_published : NULL;
	return t;
}

void feed_tap_set_writer(FeedTap *t, FeedWriter *w)
{
	t->w = w;
}

void feed_tap_free(FeedTap *t)
{
	if (t == NULL)
		return;
	feed_buf_free(&t->key);
	free(t);
}

const Catalog *feed_tap_catalog(FeedTap *t)
{
	return &t->cat;
}

/* --- a device's answers ------------------------------------------------- */

/* An answer kept: its decoded form, and the record it borrows from. */
typedef struct Kept {
	uint8_t *rec;             /* a copy of the record's body */
	FeedAnswer a;             /* its key and question 4's rows point into rec */
	uint64_t added;           /* when it was read (the newest: the highest) */
} Kept;

struct FeedAnswers {
	Kept *kept;
	size_t n;
	uint64_t nadded;
	Catalog cat;
	FeedBuf key;
	ErrBuf err;
};

static void kept_clear(Kept *k)
{
	feed_answer_clear(&k->a);
	free(k->rec);
}

bool feed_answers_add(FeedAnswers *s, const FeedRecord *rec, ErrBuf *err)
{
	Kept k;
	FeedRecord copy = *rec;
	size_t i;

	/* the answer borrows from its body: keep a copy of it */
	k.rec = xmalloc(rec->len > 0 ? rec->len : 1);
	memcpy(k.rec, rec->body, rec->len);
	copy.body = k.rec;
	if (!feed_read_answer(&copy, &k.a, err)) {
		free(k.rec);
		return false;
	}
	for (i = 0; i < s->n; i++)
		if (s->kept[i].a.key_len == k.a.key_len &&
		    memcmp(s->kept[i].a.key, k.a.key, k.a.key_len) == 0)
			break;
	if (i == s->n) {
		s->kept = xreallocarray(s->kept, s->n + 1, sizeof(Kept));
		s->n++;
	} else {
		kept_clear(&s->kept[i]);
	}
	k.added = ++s->nadded;
	s->kept[i] = k;
	return true;
}

/* The answer to the question whose key is in s->key, or NULL (the error
 * set, naming the question). */
static const FeedAnswer *answer(FeedAnswers *s, const char *what)
{
	if (!feed_buf_failed(&s->key))
		for (size_t i = 0; i < s->n; i++)
			if (s->kept[i].a.key_len == s->key.len &&
			    memcmp(s->kept[i].a.key, s->key.data, s->key.len) == 0)
				return &s->kept[i].a;
	errbuf_set(&s->err, "the feed holds no answer to the catalog question the applier asked "
		   "(%s); the feed is damaged or was written by another version of pgmirror", what);
	return NULL;
}

/* The answer to the indexes question in s->key: of its transaction, or
 * the newest for the same relations (a key differs only in its last four
 * bytes, the xid). */
static const FeedAnswer *answer_indexes(FeedAnswers *s)
{
	const FeedAnswer *best = NULL;
	uint64_t added = 0;

	for (size_t i = 0; !feed_buf_failed(&s->key) && i < s->n; i++) {
		const FeedAnswer *a = &s->kept[i].a;

		if (a->question != FEED_Q_INDEXES || a->key_len != s->key.len ||
		    a->key_len < 4 || memcmp(a->key, s->key.data, a->key_len - 4) != 0)
			continue;
		if (memcmp(a->key, s->key.data, a->key_len) == 0)
			return a;
		if (s->kept[i].added > added) {
			best = a;
			added = s->kept[i].added;
		}
	}
	return best != NULL ? best : answer(s, "the source's indexes");
}

static FeedAnswers *answers_of(void *ctx)
{
	FeedAnswers *s = ctx;

	feed_buf_reset(&s->key);
	return s;
}

static char *dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static bool ans_type_info(void *ctx, uint32_t oid, SourceType *out)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;
	char what[48];

	snprintf(what, sizeof(what), "the type with OID %u", oid);
	feed_key_type(&s->key, oid);
	if ((a = answer(s, what)) == NULL)
		return false;
	*out = a->u.type;
	out->name = dup_or_null(a->u.type.name);
	return true;
}

static bool ans_column_fill(void *ctx, uint32_t relid, const char *column, SourceFill *out)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;

	feed_key_fill(&s->key, relid, column);
	if ((a = answer(s, "what existing rows hold in an added column")) == NULL)
		return false;
	*out = a->u.fill;
	out->missing = dup_or_null(a->u.fill.missing);
	return true;
}

static bool ans_column_attnums(void *ctx, uint32_t relid, const char *const *names, int n,
			       int *attnums)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;

	feed_key_attnums(&s->key, relid, names, n);
	if ((a = answer(s, "the numbers of a table's columns")) == NULL)
		return false;
	memcpy(attnums, a->u.attnums.attnums, (size_t)n * sizeof(int));
	return true;
}

static bool ans_column_values(void *ctx, uint32_t relid, const char *const *keys, int nkeys,
			      const char *column, CatalogRowFn row, void *arg)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;

	feed_key_values(&s->key, relid, keys, nkeys, column);
	if ((a = answer(s, "the values of an added column")) == NULL)
		return false;
	if (!feed_answer_values_each(a, row, arg)) {
		errbuf_set(&s->err, "the values of an added column were not taken");
		return false;
	}
	return true;
}

static bool ans_relation_name(void *ctx, uint32_t relid, char **nspname, char **relname)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;

	feed_key_relname(&s->key, relid);
	if ((a = answer(s, "a relation's name")) == NULL)
		return false;
	*nspname = dup_or_null(a->u.relname.nspname);
	*relname = dup_or_null(a->u.relname.relname);
	return true;
}

static bool ans_indexes(void *ctx, const uint32_t *relids, int n, uint32_t xid,
			SourceIndex **out, int *nout)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;
	SourceIndex *idx;

	feed_key_indexes(&s->key, relids, n, xid);
	if ((a = answer_indexes(s)) == NULL)
		return false;
	idx = xcalloc((size_t)a->u.indexes.n + 1, sizeof(SourceIndex));
	for (int i = 0; i < a->u.indexes.n; i++) {
		const SourceIndex *from = &a->u.indexes.idx[i];

		idx[i] = *from;
		idx[i].name = xstrdup(from->name);
		idx[i].cols = xcalloc((size_t)from->ncols + 1, sizeof(char *));
		idx[i].desc = xcalloc((size_t)from->ncols + 1, sizeof(bool));
		for (int c = 0; c < from->ncols; c++) {
			idx[i].cols[c] = xstrdup(from->cols[c]);
			idx[i].desc[c] = from->desc[c];
		}
	}
	*out = idx;
	*nout = a->u.indexes.n;
	return true;
}

static bool ans_relation_published(void *ctx, uint32_t relid, bool *published)
{
	FeedAnswers *s = answers_of(ctx);
	const FeedAnswer *a;

	feed_key_published(&s->key, relid);
	if ((a = answer(s, "whether a table is published")) == NULL)
		return false;
	*published = a->u.published;
	return true;
}

static const char *ans_error(void *ctx)
{
	return ((FeedAnswers *)ctx)->err.text;
}

static bool ans_lost(void *ctx)
{
	(void)ctx;
	return false;
}

FeedAnswers *feed_answers_new(void)
{
	FeedAnswers *s = xcalloc(1, sizeof(*s));

	feed_buf_init(&s->key);
	s->cat = (Catalog){
		.ctx = s,
		.type_info = ans_type_info,
		.column_fill = ans_column_fill,
		.column_attnums = ans_column_attnums,
		.column_values = ans_column_values,
		.error = ans_error,
		.lost = ans_lost,
		.relation_name = ans_relation_name,
		.indexes = ans_indexes,
		.relation_published = ans_relation_published,
	};
	return s;
}

void feed_answers_free(FeedAnswers *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		kept_clear(&s->kept[i]);
	free(s->kept);
	feed_buf_free(&s->key);
	free(s);
}

const Catalog *feed_answers_catalog(FeedAnswers *s)
{
	return &s->cat;
}

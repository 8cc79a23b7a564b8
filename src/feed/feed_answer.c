/*
 * feed_answer.c: catalog answers written and read
 * (include/pgmirror/feed_answer.h; docs/feed.md, "Catalog answers").
 *
 * A worked example: question 5, relation 16384 is now "public"."t2":
 *
 *	41                 kind 'A'
 *	00 00 00 15        length 21
 *	05                 question 5 (relation name)   } the canonical key
 *	00 00 40 00        u32 relation OID 16384       }
 *	00 00 00 06 70 75 62 6c 69 63   ostr "public"
 *	00 00 00 02 74 32  ostr "t2"
 *
 * The least each item of a count takes, by which the count is checked
 * before anything is allocated: a str or ostr 4 bytes (its length), an
 * attnum 4, a row 4 per value, an index 16 (relation, OID, its name's
 * length, its column count), an index column 5 (a name's length, DESC).
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "feed_body.h"
#include "pgmirror/feed_answer.h"

const char *feed_question_name(int question)
{
	switch (question) {
	case FEED_Q_TYPE: return "type";
	case FEED_Q_FILL: return "column fill";
	case FEED_Q_ATTNUMS: return "column numbers";
	case FEED_Q_VALUES: return "column values";
	case FEED_Q_RELNAME: return "relation name";
	case FEED_Q_INDEXES: return "indexes";
	case FEED_Q_PUBLISHED: return "published";
	default: return NULL;
	}
}

/* --- keys --------------------------------------------------------------- */

/* The question byte and the relation OID most keys start with. */
static void key_start(FeedBuf *b, FeedQuestion q, uint32_t relid)
{
	feed_buf_put_u8(b, (uint8_t)q);
	feed_buf_put_u32(b, relid);
}

void feed_key_type(FeedBuf *b, uint32_t oid)
{
	key_start(b, FEED_Q_TYPE, oid);
}

void feed_key_fill(FeedBuf *b, uint32_t relid, const char *column)
{
	key_start(b, FEED_Q_FILL, relid);
	feed_buf_put_cstr(b, column);
}

void feed_key_attnums(FeedBuf *b, uint32_t relid, const char *const *names, int n)
{
	key_start(b, FEED_Q_ATTNUMS, relid);
	feed_buf_put_u32(b, (uint32_t)n);
	for (int i = 0; i < n; i++)
		feed_buf_put_cstr(b, names[i]);
}

void feed_key_values(FeedBuf *b, uint32_t relid, const char *const *keys, int nkeys,
		     const char *column)
{
	key_start(b, FEED_Q_VALUES, relid);
	feed_buf_put_u32(b, (uint32_t)nkeys);
	for (int i = 0; i < nkeys; i++)
		feed_buf_put_cstr(b, keys[i]);
	feed_buf_put_cstr(b, column);
}

void feed_key_relname(FeedBuf *b, uint32_t relid)
{
	key_start(b, FEED_Q_RELNAME, relid);
}

void feed_key_indexes(FeedBuf *b, const uint32_t *relids, int n, uint32_t xid)
{
	feed_buf_put_u8(b, FEED_Q_INDEXES);
	feed_buf_put_u32(b, (uint32_t)n);
	for (int i = 0; i < n; i++)
		feed_buf_put_u32(b, relids[i]);
	feed_buf_put_u32(b, xid);
}

void feed_key_published(FeedBuf *b, uint32_t relid)
{
	key_start(b, FEED_Q_PUBLISHED, relid);
}

/* --- writing answers -------------------------------------------------- */

void feed_put_answer_type(FeedBuf *b, uint32_t oid, const SourceType *t)
{
	size_t at = feed_record_begin(b, FEED_ANSWER);

	feed_key_type(b, oid);
	feed_buf_put_ocstr(b, t->name);
	feed_buf_put_u8(b, (uint8_t)t->typtype);
	feed_buf_put_u32(b, t->basetype);
	feed_buf_put_i32(b, t->typmod);
	feed_buf_put_u32(b, t->elemtype);
	feed_buf_put_u8(b, (uint8_t)t->elemdelim);
	feed_record_end(b, at);
}

void feed_put_answer_fill(FeedBuf *b, uint32_t relid, const char *column, const SourceFill *f)
{
	size_t at = feed_record_begin(b, FEED_ANSWER);

	feed_key_fill(b, relid, column);
	feed_buf_put_u8(b, f->found ? 1 : 0);
	feed_buf_put_u8(b, f->has_missing ? 1 : 0);
	feed_buf_put_ocstr(b, f->missing);
	feed_buf_put_u8(b, f->has_default ? 1 : 0);
	feed_record_end(b, at);
}

void feed_put_answer_attnums(FeedBuf *b, uint32_t relid, const char *const *names, int n,
			     const int *attnums)
{
	size_t at = feed_record_begin(b, FEED_ANSWER);

	feed_key_attnums(b, relid, names, n);
	for (int i = 0; i < n; i++)
		feed_buf_put_i32(b, attnums[i]);
	feed_record_end(b, at);
}

void feed_put_answer_relname(FeedBuf *b, uint32_t relid, const char *nspname,
			     const char *relname)
{
	size_t at = feed_record_begin(b, FEED_ANSWER);

	feed_key_relname(b, relid);
	feed_buf_put_ocstr(b, nspname);
	feed_buf_put_ocstr(b, relname);
	feed_record_end(b, at);
}

void feed_put_answer_indexes(FeedBuf *b, const uint32_t *relids, int n, uint32_t xid,
			     const SourceIndex *idx, int nidx)
{
	size_t at = feed_record_begin(b, FEED_ANSWER);

	feed_key_indexes(b, relids, n, xid);
	feed_buf_put_u32(b, (uint32_t)nidx);
	for (int i = 0; i < nidx; i++) {
		feed_buf_put_u32(b, idx[i].relid);
		feed_buf_put_u32(b, idx[i].oid);
		feed_buf_put_cstr(b, idx[i].name);
		feed_buf_put_u32(b, (uint32_t)idx[i].ncols);
		for (int c = 0; c < idx[i].ncols; c++) {
			feed_buf_put_cstr(b, idx[i].cols[c]);
			feed_buf_put_u8(b, idx[i].desc[c] ? 1 : 0);
		}
	}
	feed_record_end(b, at);
}

void feed_put_answer_published(FeedBuf *b, uint32_t relid, bool published)
{
	size_t at = feed_record_begin(b, FEED_ANSWER);

	feed_key_published(b, relid);
	feed_buf_put_u8(b, published ? 1 : 0);
	feed_record_end(b, at);
}

void feed_put_answer_values_begin(FeedBuf *b, FeedValuesWriter *w, uint32_t relid,
				  const char *const *keys, int nkeys, const char *column)
{
	w->start = feed_record_begin(b, FEED_ANSWER);
	feed_key_values(b, relid, keys, nkeys, column);
	w->rows_at = b->len;
	w->nrows = 0;
	w->nkeys = nkeys;
	feed_buf_put_u32(b, 0);
}

void feed_put_answer_values_row(FeedBuf *b, FeedValuesWriter *w, const char *const *vals,
				const int *lens)
{
	for (int i = 0; i <= w->nkeys; i++)
		feed_buf_put_ostr(b, vals[i], vals[i] != NULL ? (size_t)lens[i] : 0);
	w->nrows++;
}

void feed_put_answer_values_end(FeedBuf *b, FeedValuesWriter *w)
{
	if (w->nrows > UINT32_MAX)
		feed_buf_fail(b, "column values answer too long for the feed: %llu rows, at most %u",
			      (unsigned long long)w->nrows, UINT32_MAX);
	if (b->failed)
		return;
	for (int i = 0; i < 4; i++)
		b->data[w->rows_at + (size_t)i] = (uint8_t)(w->nrows >> (8 * (3 - i)));
	feed_record_end(b, w->start);
}

/* --- reading answers ------------------------------------------------- */

/* A str of the key: only the length is checked and the bytes skipped. */
static bool key_str(FeedBody *b)
{
	const char *s;
	size_t n;

	return feed_body_str(b, &s, &n, false);
}

/* Reads the key of question q, leaving the cursor at the answer. For
 * questions 3 and 4, *n is the count the key gives. */
static bool read_key(FeedBody *b, FeedQuestion q, uint32_t *n)
{
	uint32_t relid;

	*n = 0;
	if (q == FEED_Q_INDEXES) {
		if (!feed_body_count(b, n, 4, "relations"))
			return false;
		for (uint32_t i = 0; i < *n; i++)
			if (!feed_body_u32(b, &relid))
				return false;
		return feed_body_u32(b, &relid); /* the xid */
	}
	if (!feed_body_u32(b, &relid))
		return false;
	if (q == FEED_Q_ATTNUMS || q == FEED_Q_VALUES) {
		if (!feed_body_count(b, n, 4, q == FEED_Q_ATTNUMS ? "columns" : "key columns"))
			return false;
		for (uint32_t i = 0; i < *n; i++)
			if (!key_str(b))
				return false;
	}
	return q != FEED_Q_FILL && q != FEED_Q_VALUES ? true : key_str(b);
}

static bool read_type(FeedBody *b, SourceType *t)
{
	uint8_t typtype, delim;

	if (!feed_body_ocstr(b, &t->name) || !feed_body_u8(b, &typtype) ||
	    !feed_body_u32(b, &t->basetype) || !feed_body_i32(b, &t->typmod) ||
	    !feed_body_u32(b, &t->elemtype) || !feed_body_u8(b, &delim))
		return false;
	t->typtype = (char)typtype;
	t->elemdelim = (char)delim;
	return true;
}

static bool read_fill(FeedBody *b, SourceFill *f)
{
	return feed_body_flag(b, &f->found) && feed_body_flag(b, &f->has_missing) &&
	       feed_body_ocstr(b, &f->missing) && feed_body_flag(b, &f->has_default);
}

static bool read_attnums(FeedBody *b, uint32_t n, FeedAnswer *a)
{
	if (n > cursor_left(&b->c) / 4)
		return feed_body_fail_at(b, b->c.pos, "%u column numbers but only %zu bytes left",
					 n, cursor_left(&b->c));
	a->u.attnums.attnums = xcalloc(n, sizeof(int));
	for (uint32_t i = 0; i < n; i++) {
		size_t at = b->c.pos;
		int32_t v;

		if (!feed_body_i32(b, &v))
			return false;
		if (v < 0)
			return feed_body_fail_at(b, at, "attnum %d is negative", (int)v);
		a->u.attnums.attnums[i] = v;
	}
	a->u.attnums.n = (int)n;
	return true;
}

static bool read_values(FeedBody *b, uint32_t nkeys, FeedAnswer *a)
{
	uint32_t nrows;
	size_t start;

	if (!feed_body_count(b, &nrows, ((uint64_t)nkeys + 1) * 4, "rows"))
		return false;
	start = b->c.pos;
	for (uint64_t v = 0; v < (uint64_t)nrows * (nkeys + 1); v++) {
		const char *s;
		size_t n;

		if (!feed_body_ostr(b, &s, &n, false))
			return false;
	}
	a->u.values.nkeys = (int)nkeys;
	a->u.values.nrows = nrows;
	a->u.values.rows = b->c.buf + start;
	a->u.values.len = b->c.pos - start;
	return true;
}

static bool read_relname(FeedBody *b, FeedAnswer *a)
{
	size_t at = b->c.pos;

	if (!feed_body_ocstr(b, &a->u.relname.nspname) ||
	    !feed_body_ocstr(b, &a->u.relname.relname))
		return false;
	if ((a->u.relname.nspname == NULL) != (a->u.relname.relname == NULL))
		return feed_body_fail_at(b, at, "a schema without a name, or a name without a "
					 "schema");
	return true;
}

static bool read_index(FeedBody *b, SourceIndex *x)
{
	uint32_t ncols;

	if (!feed_body_u32(b, &x->relid) || !feed_body_u32(b, &x->oid) ||
	    !feed_body_cstr(b, &x->name) || !feed_body_count(b, &ncols, 5, "index columns"))
		return false;
	x->cols = xcalloc(ncols, sizeof(char *));
	x->desc = xcalloc(ncols, sizeof(bool));
	for (uint32_t c = 0; c < ncols; c++) {
		if (!feed_body_cstr(b, &x->cols[c]))
			return false;
		x->ncols = (int)c + 1;
		if (!feed_body_flag(b, &x->desc[c]))
			return false;
	}
	return true;
}

static bool read_indexes(FeedBody *b, FeedAnswer *a)
{
	uint32_t n;

	if (!feed_body_count(b, &n, 16, "indexes"))
		return false;
	a->u.indexes.idx = xcalloc(n, sizeof(SourceIndex));
	a->u.indexes.n = (int)n;
	for (uint32_t i = 0; i < n; i++)
		if (!read_index(b, &a->u.indexes.idx[i]))
			return false;
	return true;
}

/* The answer after the key; n: the count the key gave (questions 3, 4). */
static bool read_answer(FeedBody *b, uint32_t n, FeedAnswer *a)
{
	switch (a->question) {
	case FEED_Q_TYPE: return read_type(b, &a->u.type);
	case FEED_Q_FILL: return read_fill(b, &a->u.fill);
	case FEED_Q_ATTNUMS: return read_attnums(b, n, a);
	case FEED_Q_VALUES: return read_values(b, n, a);
	case FEED_Q_RELNAME: return read_relname(b, a);
	case FEED_Q_INDEXES: return read_indexes(b, a);
	default: return feed_body_flag(b, &a->u.published);
	}
}

bool feed_read_answer(const FeedRecord *rec, FeedAnswer *out, ErrBuf *err)
{
	FeedBody b;
	uint8_t q;
	uint32_t n;
	bool ok;

	memset(out, 0, sizeof *out);
	if (!feed_body_init(&b, rec, FEED_ANSWER, err) || !feed_body_u8(&b, &q))
		return false;
	if (feed_question_name(q) == NULL)
		return feed_body_fail_at(&b, 0, "unknown question %u", q);
	out->question = (FeedQuestion)q;
	ok = read_key(&b, out->question, &n);
	out->key = b.c.buf;
	out->key_len = b.c.pos;
	if (ok)
		ok = read_answer(&b, n, out);
	if (ok && feed_body_end(&b))
		return true;
	feed_answer_clear(out);
	return false;
}

void feed_answer_clear(FeedAnswer *a)
{
	switch (a->question) {
	case FEED_Q_TYPE: source_type_clear(&a->u.type); break;
	case FEED_Q_FILL: source_fill_clear(&a->u.fill); break;
	case FEED_Q_ATTNUMS: free(a->u.attnums.attnums); break;
	case FEED_Q_RELNAME:
		free(a->u.relname.nspname);
		free(a->u.relname.relname);
		break;
	case FEED_Q_INDEXES: source_indexes_free(a->u.indexes.idx, a->u.indexes.n); break;
	default: break;
	}
	memset(a, 0, sizeof *a);
}

bool feed_answer_values_each(const FeedAnswer *a, CatalogRowFn fn, void *arg)
{
	int nv = a->u.values.nkeys + 1;
	const char **vals = xcalloc((size_t)nv, sizeof(char *));
	int *lens = xcalloc((size_t)nv, sizeof(int));
	bool ok = true;
	Cursor c;

	cursor_init(&c, a->u.values.rows, a->u.values.len);
	for (uint32_t r = 0; ok && r < a->u.values.nrows; r++) {
		for (int i = 0; ok && i < nv; i++) {
			const uint8_t *p = NULL;
			int32_t len = -1;

			/* read whole by feed_read_answer(): these cannot fail */
			ok = cursor_get_i32(&c, &len) &&
			     (len == -1 || cursor_get_bytes(&c, (size_t)len, &p));
			vals[i] = ok && len >= 0 ? (const char *)p : NULL;
			lens[i] = ok && len >= 0 ? len : 0;
		}
		ok = ok && fn(arg, vals, lens);
	}
	free(vals);
	free(lens);
	return ok;
}

/*
 * test_feed_answer.c: catalog answers (src/feed/feed_answer.c) against A
 * records written by hand from docs/feed.md, one or two per question: the
 * writer gives their bytes, the reader their fields and the canonical key
 * that feed_key_*() gives for the same question; every strict prefix of
 * every body and a byte too many fail cleanly; lying counts, unknown
 * questions, flags, NULs and negative attnums have their exact messages;
 * bigger answers go round trip.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pgmirror/feed_answer.h"
#include "feed_vectors.h"

/* 1: type 25 is no type (dropped). */
static const uint8_t vec_type_none[] = {
	0x41, 0x00, 0x00, 0x00, 0x17, 0x01, 0x00, 0x00, 0x00, 0x19,
	0xff, 0xff, 0xff, 0xff,                         /* ostr NULL */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* 2: column "c" of 16384 exists, existing rows hold the constant '42',
 * no default. */
static const uint8_t vec_fill[] = {
	0x41, 0x00, 0x00, 0x00, 0x13, 0x02, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x63,                   /* str "c" */
	0x01, 0x01,                                     /* found, has a constant */
	0x00, 0x00, 0x00, 0x02, 0x34, 0x32,             /* ostr "42" */
	0x00,                                           /* no default */
};

/* 3: columns "a" and "b" of 16384 are attnums 1 and none. */
static const uint8_t vec_attnums[] = {
	0x41, 0x00, 0x00, 0x00, 0x1b, 0x03, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x02,                         /* 2 columns */
	0x00, 0x00, 0x00, 0x01, 0x61, 0x00, 0x00, 0x00, 0x01, 0x62,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* 1, 0 */
};

/* 4: column "c" of 16384 keyed by "id": rows (1, 'x') and (2, NULL). */
static const uint8_t vec_values[] = {
	0x41, 0x00, 0x00, 0x00, 0x2b, 0x04, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x01,                         /* 1 key column */
	0x00, 0x00, 0x00, 0x02, 0x69, 0x64,             /* "id" */
	0x00, 0x00, 0x00, 0x01, 0x63,                   /* "c" */
	0x00, 0x00, 0x00, 0x02,                         /* 2 rows */
	0x00, 0x00, 0x00, 0x01, 0x31, 0x00, 0x00, 0x00, 0x01, 0x78,
	0x00, 0x00, 0x00, 0x01, 0x32, 0xff, 0xff, 0xff, 0xff,
};

/* 5: 16384 is "public"."t2" now; 16999 is no relation. */
static const uint8_t vec_relname[] = {
	0x41, 0x00, 0x00, 0x00, 0x15, 0x05, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x06, 0x70, 0x75, 0x62, 0x6c, 0x69, 0x63,
	0x00, 0x00, 0x00, 0x02, 0x74, 0x32,
};
static const uint8_t vec_relname_none[] = {
	0x41, 0x00, 0x00, 0x00, 0x0d, 0x05, 0x00, 0x00, 0x42, 0x67,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* 6: the indexes of 16384 once xid 745 is visible: "t_pkey" (16390) on
 * (a, b DESC). */
static const uint8_t vec_indexes[] = {
	0x41, 0x00, 0x00, 0x00, 0x33, 0x06,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00, /* 1 relation: 16384 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x00, 0x00, 0x00, 0x01,                         /* 1 index */
	0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x40, 0x06, /* of 16384, OID 16390 */
	0x00, 0x00, 0x00, 0x06, 0x74, 0x5f, 0x70, 0x6b, 0x65, 0x79,
	0x00, 0x00, 0x00, 0x02,                         /* 2 columns */
	0x00, 0x00, 0x00, 0x01, 0x61, 0x00,             /* a */
	0x00, 0x00, 0x00, 0x01, 0x62, 0x01,             /* b DESC */
};

/* 7: 16384 is published. */
static const uint8_t vec_published[] = {
	0x41, 0x00, 0x00, 0x00, 0x06, 0x07, 0x00, 0x00, 0x40, 0x00, 0x01,
};

static const Vec answers[] = {
	VEC(vec_answer), VEC(vec_type_none), VEC(vec_fill), VEC(vec_attnums), VEC(vec_values),
	VEC(vec_relname), VEC(vec_relname_none), VEC(vec_indexes), VEC(vec_published),
};
#define N_ANSWERS (sizeof answers / sizeof answers[0])

static const char *const ab[] = {"a", "b"};
static const char *const id[] = {"id"};

static void assert_bytes(const FeedBuf *b, const uint8_t *v, size_t n)
{
	assert_false(feed_buf_failed(b));
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, v, n);
}

/* Reads the vector; the caller clears *a and frees *rec. */
static void read_vector(const uint8_t *v, size_t n, FeedRecord *rec, FeedAnswer *a)
{
	ErrBuf err;

	*rec = record_of(v, n);
	if (!feed_read_answer(rec, a, &err))
		fail_msg("%s", err.text);
}

/* The answer's key is what feed_key_*() wrote into key. */
static void assert_key(const FeedAnswer *a, FeedBuf *key)
{
	assert_false(feed_buf_failed(key));
	assert_int_equal(a->key_len, key->len);
	assert_memory_equal(a->key, key->data, key->len);
	feed_buf_free(key);
}

static void test_vectors_sane(void **state)
{
	for (size_t i = 0; i < N_ANSWERS; i++)
		assert_int_equal(vector_length_field(answers[i].bytes),
				 answers[i].len - FEED_RECORD_HEAD);
}

static void test_write(void **state)
{
	SourceType mood = {"mood", 'e', 0, -1, 0, ','}, none = {NULL, 0, 0, 0, 0, 0};
	SourceFill fill = {true, true, "42", false};
	int attnums[] = {1, 0};
	char *cols[] = {"a", "b"};
	bool desc[] = {false, true};
	SourceIndex idx = {16384, 16390, "t_pkey", 2, cols, desc};
	uint32_t relid = 16384;
	const char *row1[] = {"1", "x"}, *row2[] = {"2", NULL};
	int lens[] = {1, 1};
	FeedValuesWriter w;
	FeedBuf b = FEED_BUF_INIT;

	feed_put_answer_type(&b, 16385, &mood);
	assert_bytes(&b, vec_answer, sizeof vec_answer);
	feed_buf_reset(&b);
	feed_put_answer_type(&b, 25, &none);
	assert_bytes(&b, vec_type_none, sizeof vec_type_none);
	feed_buf_reset(&b);
	feed_put_answer_fill(&b, 16384, "c", &fill);
	assert_bytes(&b, vec_fill, sizeof vec_fill);
	feed_buf_reset(&b);
	feed_put_answer_attnums(&b, 16384, ab, 2, attnums);
	assert_bytes(&b, vec_attnums, sizeof vec_attnums);
	feed_buf_reset(&b);
	feed_put_answer_values_begin(&b, &w, 16384, id, 1, "c");
	feed_put_answer_values_row(&b, &w, row1, lens);
	feed_put_answer_values_row(&b, &w, row2, lens);
	feed_put_answer_values_end(&b, &w);
	assert_bytes(&b, vec_values, sizeof vec_values);
	feed_buf_reset(&b);
	feed_put_answer_relname(&b, 16384, "public", "t2");
	assert_bytes(&b, vec_relname, sizeof vec_relname);
	feed_buf_reset(&b);
	feed_put_answer_relname(&b, 16999, NULL, NULL);
	assert_bytes(&b, vec_relname_none, sizeof vec_relname_none);
	feed_buf_reset(&b);
	feed_put_answer_indexes(&b, &relid, 1, 745, &idx, 1);
	assert_bytes(&b, vec_indexes, sizeof vec_indexes);
	feed_buf_reset(&b);
	feed_put_answer_published(&b, 16384, true);
	assert_bytes(&b, vec_published, sizeof vec_published);
	feed_buf_free(&b);
}

static void test_read_type_and_fill(void **state)
{
	FeedBuf key = FEED_BUF_INIT;
	FeedRecord rec;
	FeedAnswer a;

	read_vector(vec_answer, sizeof vec_answer, &rec, &a);
	assert_int_equal(a.question, FEED_Q_TYPE);
	assert_string_equal(a.u.type.name, "mood");
	assert_int_equal(a.u.type.typtype, 'e');
	assert_int_equal(a.u.type.basetype, 0);
	assert_int_equal(a.u.type.typmod, -1);
	assert_int_equal(a.u.type.elemtype, 0);
	assert_int_equal(a.u.type.elemdelim, ',');
	feed_key_type(&key, 16385);
	assert_key(&a, &key);
	feed_answer_clear(&a);
	record_free(&rec);

	read_vector(vec_type_none, sizeof vec_type_none, &rec, &a);
	assert_null(a.u.type.name);
	feed_answer_clear(&a);
	record_free(&rec);

	read_vector(vec_fill, sizeof vec_fill, &rec, &a);
	assert_int_equal(a.question, FEED_Q_FILL);
	assert_true(a.u.fill.found);
	assert_true(a.u.fill.has_missing);
	assert_string_equal(a.u.fill.missing, "42");
	assert_false(a.u.fill.has_default);
	feed_key_fill(&key, 16384, "c");
	assert_key(&a, &key);
	feed_answer_clear(&a);
	record_free(&rec);
}

static void test_read_attnums_and_relname(void **state)
{
	FeedBuf key = FEED_BUF_INIT;
	FeedRecord rec;
	FeedAnswer a;

	read_vector(vec_attnums, sizeof vec_attnums, &rec, &a);
	assert_int_equal(a.question, FEED_Q_ATTNUMS);
	assert_int_equal(a.u.attnums.n, 2);
	assert_int_equal(a.u.attnums.attnums[0], 1);
	assert_int_equal(a.u.attnums.attnums[1], 0);
	feed_key_attnums(&key, 16384, ab, 2);
	assert_key(&a, &key);
	feed_answer_clear(&a);
	record_free(&rec);

	read_vector(vec_relname, sizeof vec_relname, &rec, &a);
	assert_string_equal(a.u.relname.nspname, "public");
	assert_string_equal(a.u.relname.relname, "t2");
	feed_key_relname(&key, 16384);
	assert_key(&a, &key);
	feed_answer_clear(&a);
	record_free(&rec);

	read_vector(vec_relname_none, sizeof vec_relname_none, &rec, &a);
	assert_null(a.u.relname.nspname);
	assert_null(a.u.relname.relname);
	feed_answer_clear(&a);
	record_free(&rec);

	read_vector(vec_published, sizeof vec_published, &rec, &a);
	assert_int_equal(a.question, FEED_Q_PUBLISHED);
	assert_true(a.u.published);
	feed_key_published(&key, 16384);
	assert_key(&a, &key);
	feed_answer_clear(&a);
	record_free(&rec);
}

static void test_read_indexes(void **state)
{
	FeedBuf key = FEED_BUF_INIT;
	uint32_t relid = 16384;
	FeedRecord rec;
	FeedAnswer a;
	SourceIndex *x;

	read_vector(vec_indexes, sizeof vec_indexes, &rec, &a);
	assert_int_equal(a.question, FEED_Q_INDEXES);
	assert_int_equal(a.u.indexes.n, 1);
	x = &a.u.indexes.idx[0];
	assert_int_equal(x->relid, 16384);
	assert_int_equal(x->oid, 16390);
	assert_string_equal(x->name, "t_pkey");
	assert_int_equal(x->ncols, 2);
	assert_string_equal(x->cols[0], "a");
	assert_string_equal(x->cols[1], "b");
	assert_false(x->desc[0]);
	assert_true(x->desc[1]);
	feed_key_indexes(&key, &relid, 1, 745);
	assert_key(&a, &key);
	feed_answer_clear(&a);
	record_free(&rec);
}

/* What values_each() handed over, as text. */
typedef struct Rows {
	char text[256];
	int stop_after;   /* 0: never */
	int n;
} Rows;

static bool collect_row(void *arg, const char *const *vals, const int *lens)
{
	Rows *r = arg;
	size_t at = strlen(r->text);

	for (int i = 0; i < 2; i++)
		at += (size_t)snprintf(r->text + at, sizeof r->text - at, "%s%.*s", i ? "," : "(",
				       vals[i] != NULL ? lens[i] : 4,
				       vals[i] != NULL ? vals[i] : "NULL");
	snprintf(r->text + at, sizeof r->text - at, ")");
	return ++r->n != r->stop_after;
}

static void test_read_values(void **state)
{
	FeedBuf key = FEED_BUF_INIT;
	Rows rows = {"", 0, 0};
	FeedRecord rec;
	FeedAnswer a;

	read_vector(vec_values, sizeof vec_values, &rec, &a);
	assert_int_equal(a.question, FEED_Q_VALUES);
	assert_int_equal(a.u.values.nkeys, 1);
	assert_int_equal(a.u.values.nrows, 2);
	feed_key_values(&key, 16384, id, 1, "c");
	assert_key(&a, &key);
	assert_true(feed_answer_values_each(&a, collect_row, &rows));
	assert_string_equal(rows.text, "(1,x)(2,NULL)");
	rows = (Rows){"", 1, 0};
	assert_false(feed_answer_values_each(&a, collect_row, &rows));
	assert_string_equal(rows.text, "(1,x)");
	feed_answer_clear(&a);
	record_free(&rec);
}

/* --- damage ---------------------------------------------------------------- */

static void test_every_prefix_fails(void **state)
{
	static const char want[] = "malformed catalog answer record at offset 0: ";

	for (size_t v = 0; v < N_ANSWERS; v++) {
		for (size_t n = 0; n < answers[v].len - FEED_RECORD_HEAD; n++) {
			FeedRecord rec = record_copy('A', answers[v].bytes + FEED_RECORD_HEAD, n);
			ErrBuf err = {{0}};
			FeedAnswer a;

			if (feed_read_answer(&rec, &a, &err))
				fail_msg("%s: a body of %zu bytes was read", answers[v].name, n);
			if (strncmp(err.text, want, strlen(want)) != 0)
				fail_msg("%s, %zu bytes: \"%s\"", answers[v].name, n, err.text);
			assert_int_equal(a.question, 0); /* left empty */
			record_free(&rec);
		}
	}
}

static void test_trailing_byte_fails(void **state)
{
	for (size_t v = 0; v < N_ANSWERS; v++) {
		size_t n = answers[v].len - FEED_RECORD_HEAD;
		uint8_t *body = malloc(n + 1);
		FeedRecord rec;
		ErrBuf err;
		FeedAnswer a;
		char want[128];

		memcpy(body, answers[v].bytes + FEED_RECORD_HEAD, n);
		body[n] = 0;
		rec = record_copy('A', body, n + 1);
		snprintf(want, sizeof want, "malformed catalog answer record at offset 0: 1 trailing "
			 "byte at body byte %zu", n);
		assert_false(feed_read_answer(&rec, &a, &err));
		assert_string_equal(err.text, want);
		record_free(&rec);
		free(body);
	}
}

/* The body (of the given bytes) fails with exactly want, after "malformed
 * catalog answer record at offset 0: ". */
static void assert_answer_error(const uint8_t *body, size_t n, const char *want)
{
	FeedRecord rec = record_copy('A', body, n);
	ErrBuf err;
	FeedAnswer a;
	char full[512];

	snprintf(full, sizeof full, "malformed catalog answer record at offset 0: %s", want);
	assert_false(feed_read_answer(&rec, &a, &err));
	assert_string_equal(err.text, full);
	record_free(&rec);
}

/* A copy of a vector's body with byte at set to v. */
static const uint8_t *patched(const uint8_t *vec, size_t n, size_t at, uint8_t v)
{
	static uint8_t body[128];

	memcpy(body, vec + FEED_RECORD_HEAD, n - FEED_RECORD_HEAD);
	body[at] = v;
	return body;
}

#define BODY(vec, at, v) patched(vec, sizeof vec, at, v), sizeof vec - FEED_RECORD_HEAD

static void test_errors(void **state)
{
	static const uint8_t q0[] = {0x00}, q8[] = {0x08, 0, 0, 0, 0};
	static const uint8_t lying_attnums[] = {0x03, 0, 0, 0x40, 0, 0xff, 0xff, 0xff, 0xff, 0};
	static const uint8_t lying_indexes[] = {0x06, 0x40, 0, 0, 0};
	static const uint8_t bad_ostr[] = {0x05, 0, 0, 0x40, 0, 0xff, 0xff, 0xff, 0xfe};

	assert_answer_error(q0, sizeof q0, "unknown question 0 at body byte 0");
	assert_answer_error(q8, sizeof q8, "unknown question 8 at body byte 0");
	assert_answer_error(lying_attnums, sizeof lying_attnums,
			    "4294967295 columns but only 1 byte left at body byte 5");
	assert_answer_error(lying_indexes, sizeof lying_indexes,
			    "1073741824 relations but only 0 bytes left at body byte 1");
	assert_answer_error(bad_ostr, sizeof bad_ostr, "string length -2 at body byte 5");
	/* a flag that is 2 */
	assert_answer_error(BODY(vec_fill, 10, 2), "flag 2 is neither 0 nor 1 at body byte 10");
	assert_answer_error(BODY(vec_published, 5, 2), "flag 2 is neither 0 nor 1 at body byte 5");
	assert_answer_error(BODY(vec_indexes, 44, 7), "flag 7 is neither 0 nor 1 at body byte 44");
	/* a NUL in a name, in a value */
	assert_answer_error(BODY(vec_fill, 9, 0), "string holds a NUL byte at body byte 5");
	assert_answer_error(BODY(vec_values, 33, 0), "string holds a NUL byte at body byte 29");
	/* an attnum below 0 */
	assert_answer_error(BODY(vec_attnums, 19, 0xff), "attnum -16777215 is negative at body "
			    "byte 19");
	/* a string's length below -1 */
	assert_answer_error(BODY(vec_relname_none, 8, 0x00), "string length -256 at body byte 5");
	/* counts larger than the bytes left */
	assert_answer_error(BODY(vec_values, 23, 0x09), "9 rows but only 19 bytes left at body "
			    "byte 20");
	assert_answer_error(BODY(vec_indexes, 16, 0x05), "5 indexes but only 34 bytes left at body "
			    "byte 13");
	assert_answer_error(BODY(vec_indexes, 38, 0x03), "3 index columns but only 12 bytes left "
			    "at body byte 35");
	assert_answer_error(BODY(vec_attnums, 8, 0x10), "16 columns but only 18 bytes left at body "
			    "byte 5");
}

static void test_relname_half_null(void **state)
{
	static const uint8_t half[] = {0x05, 0, 0, 0x40, 0, 0xff, 0xff, 0xff, 0xff,
				       0, 0, 0, 1, 0x74};

	assert_answer_error(half, sizeof half, "a schema without a name, or a name without a "
			    "schema at body byte 5");
}

/* --- round trips ------------------------------------------------------------- */

static void test_values_round_trip(void **state)
{
	static const char *const keys[] = {"k1", "k2"};
	FeedValuesWriter w;
	FeedBuf b = FEED_BUF_INIT, key = FEED_BUF_INIT;
	FeedRecord rec;
	FeedAnswer a;
	ErrBuf err;
	Cursor c;

	feed_put_answer_values_begin(&b, &w, 77, keys, 2, "v");
	for (int r = 0; r < 1000; r++) {
		char k1[16], v[16];
		const char *vals[] = {k1, r % 7 == 0 ? NULL : "same", r % 3 == 0 ? "" : v};
		int lens[3];

		snprintf(k1, sizeof k1, "%d", r);
		snprintf(v, sizeof v, "v%d", r * r);
		lens[0] = (int)strlen(k1);
		lens[1] = 4;
		lens[2] = (int)strlen(vals[2]);
		feed_put_answer_values_row(&b, &w, vals, lens);
	}
	feed_put_answer_values_end(&b, &w);
	assert_false(feed_buf_failed(&b));
	rec = record_of(b.data, b.len);
	assert_int_equal(vector_length_field(b.data), b.len - FEED_RECORD_HEAD);
	assert_true(feed_read_answer(&rec, &a, &err));
	assert_int_equal(a.u.values.nrows, 1000);
	assert_int_equal(a.u.values.nkeys, 2);
	feed_key_values(&key, 77, keys, 2, "v");
	assert_key(&a, &key);
	/* the rows' bytes, read back by hand */
	cursor_init(&c, a.u.values.rows, a.u.values.len);
	for (int r = 0; r < 1000; r++) {
		int32_t len;
		const uint8_t *p;
		char k1[16];

		snprintf(k1, sizeof k1, "%d", r);
		assert_true(cursor_get_i32(&c, &len));
		assert_int_equal(len, (int32_t)strlen(k1));
		assert_true(cursor_get_bytes(&c, (size_t)len, &p));
		assert_memory_equal(p, k1, (size_t)len);
		assert_true(cursor_get_i32(&c, &len));
		assert_int_equal(len, r % 7 == 0 ? -1 : 4);
		if (len > 0)
			assert_true(cursor_get_bytes(&c, (size_t)len, &p));
		assert_true(cursor_get_i32(&c, &len));
		if (r % 3 == 0)
			assert_int_equal(len, 0);
		else
			assert_true(cursor_get_bytes(&c, (size_t)len, &p));
	}
	assert_int_equal(cursor_left(&c), 0);
	feed_answer_clear(&a);
	record_free(&rec);
	/* no row at all */
	feed_buf_reset(&b);
	feed_put_answer_values_begin(&b, &w, 77, keys, 0, "v");
	feed_put_answer_values_end(&b, &w);
	rec = record_of(b.data, b.len);
	assert_true(feed_read_answer(&rec, &a, &err));
	assert_int_equal(a.u.values.nrows, 0);
	assert_int_equal(a.u.values.nkeys, 0);
	feed_answer_clear(&a);
	record_free(&rec);
	feed_buf_free(&b);
}

static void test_indexes_round_trip(void **state)
{
	uint32_t relids[] = {1, 2, 3, 4294967295u};
	char *c1[] = {"x"}, *c3[] = {"p", "q", "r"};
	bool d1[] = {true}, d3[] = {false, true, false};
	SourceIndex idx[] = {
		{1, 10, "i1", 1, c1, d1}, {1, 11, "", 0, NULL, NULL}, {3, 12, "i3", 3, c3, d3},
	};
	FeedBuf b = FEED_BUF_INIT, key = FEED_BUF_INIT;
	FeedRecord rec;
	FeedAnswer a;
	ErrBuf err;

	for (int nidx = 0; nidx <= 3; nidx += 3) {
		feed_buf_reset(&b);
		feed_put_answer_indexes(&b, relids, 4, 0, idx, nidx);
		rec = record_of(b.data, b.len);
		assert_true(feed_read_answer(&rec, &a, &err));
		assert_int_equal(a.u.indexes.n, nidx);
		for (int i = 0; i < nidx; i++) {
			SourceIndex *x = &a.u.indexes.idx[i];

			assert_int_equal(x->relid, idx[i].relid);
			assert_int_equal(x->oid, idx[i].oid);
			assert_string_equal(x->name, idx[i].name);
			assert_int_equal(x->ncols, idx[i].ncols);
			for (int c = 0; c < x->ncols; c++) {
				assert_string_equal(x->cols[c], idx[i].cols[c]);
				assert_int_equal(x->desc[c], idx[i].desc[c]);
			}
		}
		feed_key_indexes(&key, relids, 4, 0);
		assert_key(&a, &key);
		feed_answer_clear(&a);
		record_free(&rec);
	}
	feed_buf_free(&b);
}

static void test_fill_round_trip(void **state)
{
	/* a constant that is NULL; a default and no constant */
	SourceFill fills[] = {{true, true, NULL, false}, {true, false, NULL, true},
			      {false, false, NULL, false}};
	FeedBuf b = FEED_BUF_INIT;
	FeedRecord rec;
	FeedAnswer a;
	ErrBuf err;

	for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++) {
		feed_buf_reset(&b);
		feed_put_answer_fill(&b, 9, "a column", &fills[i]);
		rec = record_of(b.data, b.len);
		assert_true(feed_read_answer(&rec, &a, &err));
		assert_int_equal(a.u.fill.found, fills[i].found);
		assert_int_equal(a.u.fill.has_missing, fills[i].has_missing);
		assert_null(a.u.fill.missing);
		assert_int_equal(a.u.fill.has_default, fills[i].has_default);
		feed_answer_clear(&a);
		record_free(&rec);
	}
	feed_buf_free(&b);
}

static void test_keys_differ(void **state)
{
	/* the key is canonical: a different question never gives the same bytes */
	FeedBuf k1 = FEED_BUF_INIT, k2 = FEED_BUF_INIT;
	static const char *const x[] = {"ab"}, *const y[] = {"a", "b"};

	feed_key_attnums(&k1, 1, x, 1);
	feed_key_attnums(&k2, 1, y, 2);
	assert_true(k1.len != k2.len || memcmp(k1.data, k2.data, k1.len) != 0);
	feed_buf_reset(&k1);
	feed_buf_reset(&k2);
	feed_key_relname(&k1, 5);
	feed_key_published(&k2, 5);
	assert_int_equal(k1.len, k2.len);
	assert_true(memcmp(k1.data, k2.data, k1.len) != 0);
	feed_buf_free(&k1);
	feed_buf_free(&k2);
}

static void test_question_names(void **state)
{
	assert_string_equal(feed_question_name(1), "type");
	assert_string_equal(feed_question_name(4), "column values");
	assert_string_equal(feed_question_name(7), "published");
	assert_null(feed_question_name(0));
	assert_null(feed_question_name(8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_sane),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_read_type_and_fill),
		cmocka_unit_test(test_read_attnums_and_relname),
		cmocka_unit_test(test_read_indexes),
		cmocka_unit_test(test_read_values),
		cmocka_unit_test(test_every_prefix_fails),
		cmocka_unit_test(test_trailing_byte_fails),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_relname_half_null),
		cmocka_unit_test(test_values_round_trip),
		cmocka_unit_test(test_indexes_round_trip),
		cmocka_unit_test(test_fill_round_trip),
		cmocka_unit_test(test_keys_differ),
		cmocka_unit_test(test_question_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_feed_op.c: the mirror's own operations (src/feed/feed_op.c)
 * against O records written by hand from docs/feed.md, one or two per
 * operation: the writer gives their bytes, the reader their fields; every
 * strict prefix of every body and a byte too many fail cleanly; an
 * unknown operation, a lying count, a flag and a NUL have their exact
 * messages.
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

#include "pgmirror/feed_op.h"
#include "feed_vectors.h"

static const uint8_t vec_reset[] = {0x4f, 0x00, 0x00, 0x00, 0x01, 0x01};

/* 2: 16384 copied at 0/16B3700 into a staged table, defined as "def". */
static const uint8_t vec_copy_begin[] = {
	0x4f, 0x00, 0x00, 0x00, 0x15, 0x02, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x00, /* u64 sync LSN */
	0x01,                                           /* staged */
	0x00, 0x00, 0x00, 0x03, 0x64, 0x65, 0x66,       /* ostr "def" */
};
/* the same, not staged, with no definition */
static const uint8_t vec_copy_begin_plain[] = {
	0x4f, 0x00, 0x00, 0x00, 0x12, 0x02, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
};

/* 3: 16384's copy holds ranges "r1", 1000 rows so far. */
static const uint8_t vec_copy_part[] = {
	0x4f, 0x00, 0x00, 0x00, 0x13, 0x03, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x02, 0x72, 0x31,             /* ostr "r1" */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* u64 1000 */
};

static const uint8_t vec_drop[] = {0x4f, 0x00, 0x00, 0x00, 0x05, 0x05, 0x00, 0x00, 0x40, 0x00};

/* 6: the worked example of feed_op.c */
static const uint8_t vec_rename[] = {
	0x4f, 0x00, 0x00, 0x00, 0x15, 0x06, 0x00, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x06, 0x70, 0x75, 0x62, 0x6c, 0x69, 0x63,
	0x00, 0x00, 0x00, 0x02, 0x74, 0x32,
};

/* 7: the indexes of 16384 and 16385. */
static const uint8_t vec_indexes_op[] = {
	0x4f, 0x00, 0x00, 0x00, 0x0d, 0x07, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x40, 0x01,
};

static const Vec ops[] = {
	VEC(vec_reset), VEC(vec_copy_begin), VEC(vec_copy_begin_plain), VEC(vec_copy_part),
	VEC(vec_op), VEC(vec_drop), VEC(vec_rename), VEC(vec_indexes_op),
};
#define N_OPS (sizeof ops / sizeof ops[0])

static void assert_bytes(const FeedBuf *b, const uint8_t *v, size_t n)
{
	assert_false(feed_buf_failed(b));
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, v, n);
}

static void read_vector(const uint8_t *v, size_t n, FeedOp *op)
{
	FeedRecord rec = record_of(v, n);
	ErrBuf err;

	if (!feed_read_op(&rec, op, &err))
		fail_msg("%s", err.text);
	record_free(&rec);
}

static void test_vectors_sane(void **state)
{
	for (size_t i = 0; i < N_OPS; i++)
		assert_int_equal(vector_length_field(ops[i].bytes), ops[i].len - FEED_RECORD_HEAD);
}

static void test_write(void **state)
{
	uint32_t relids[] = {16384, 16385};
	FeedBuf b = FEED_BUF_INIT;

	feed_put_op_reset(&b);
	assert_bytes(&b, vec_reset, sizeof vec_reset);
	feed_buf_reset(&b);
	feed_put_op_copy_begin(&b, 16384, 0x16B3700, true, "def");
	assert_bytes(&b, vec_copy_begin, sizeof vec_copy_begin);
	feed_buf_reset(&b);
	feed_put_op_copy_begin(&b, 16384, 0x16B3700, false, NULL);
	assert_bytes(&b, vec_copy_begin_plain, sizeof vec_copy_begin_plain);
	feed_buf_reset(&b);
	feed_put_op_copy_part(&b, 16384, "r1", 1000);
	assert_bytes(&b, vec_copy_part, sizeof vec_copy_part);
	feed_buf_reset(&b);
	feed_put_op_copy_end(&b, 16384);
	assert_bytes(&b, vec_op, sizeof vec_op);
	feed_buf_reset(&b);
	feed_put_op_drop(&b, 16384);
	assert_bytes(&b, vec_drop, sizeof vec_drop);
	feed_buf_reset(&b);
	feed_put_op_rename(&b, 16384, "public", "t2");
	assert_bytes(&b, vec_rename, sizeof vec_rename);
	feed_buf_reset(&b);
	feed_put_op_indexes(&b, relids, 2);
	assert_bytes(&b, vec_indexes_op, sizeof vec_indexes_op);
	feed_buf_free(&b);
}

static void test_read(void **state)
{
	FeedOp op;

	read_vector(vec_reset, sizeof vec_reset, &op);
	assert_int_equal(op.op, FEED_OP_RESET);
	feed_op_clear(&op);

	read_vector(vec_copy_begin, sizeof vec_copy_begin, &op);
	assert_int_equal(op.op, FEED_OP_COPY_BEGIN);
	assert_int_equal(op.relid, 16384);
	assert_int_equal(op.sync_lsn, 0x16B3700);
	assert_true(op.staged);
	assert_string_equal(op.definition, "def");
	feed_op_clear(&op);

	read_vector(vec_copy_begin_plain, sizeof vec_copy_begin_plain, &op);
	assert_false(op.staged);
	assert_null(op.definition);
	feed_op_clear(&op);

	read_vector(vec_copy_part, sizeof vec_copy_part, &op);
	assert_int_equal(op.op, FEED_OP_COPY_PART);
	assert_int_equal(op.relid, 16384);
	assert_string_equal(op.key_ranges, "r1");
	assert_int_equal(op.rows, 1000);
	feed_op_clear(&op);

	read_vector(vec_op, sizeof vec_op, &op);
	assert_int_equal(op.op, FEED_OP_COPY_END);
	assert_int_equal(op.relid, 16384);
	feed_op_clear(&op);

	read_vector(vec_drop, sizeof vec_drop, &op);
	assert_int_equal(op.op, FEED_OP_DROP);
	assert_int_equal(op.relid, 16384);
	feed_op_clear(&op);

	read_vector(vec_rename, sizeof vec_rename, &op);
	assert_int_equal(op.op, FEED_OP_RENAME);
	assert_string_equal(op.schema, "public");
	assert_string_equal(op.name, "t2");
	feed_op_clear(&op);

	read_vector(vec_indexes_op, sizeof vec_indexes_op, &op);
	assert_int_equal(op.op, FEED_OP_INDEXES);
	assert_int_equal(op.nrelids, 2);
	assert_int_equal(op.relids[0], 16384);
	assert_int_equal(op.relids[1], 16385);
	feed_op_clear(&op);
	assert_null(op.relids);
}

static void test_round_trip(void **state)
{
	FeedBuf b = FEED_BUF_INIT;
	FeedRecord rec;
	FeedOp op;
	ErrBuf err;

	feed_put_op_copy_part(&b, 4294967295u, NULL, UINT64_MAX);
	feed_put_op_indexes(&b, NULL, 0);
	feed_put_op_rename(&b, 1, "", "a \"name\" with ünïcode");
	rec = record_copy('O', b.data + 5, 17);
	assert_true(feed_read_op(&rec, &op, &err));
	assert_int_equal(op.relid, 4294967295u);
	assert_null(op.key_ranges);
	assert_int_equal(op.rows, UINT64_MAX);
	feed_op_clear(&op);
	record_free(&rec);
	rec = record_copy('O', b.data + 27, 5);
	assert_true(feed_read_op(&rec, &op, &err));
	assert_int_equal(op.op, FEED_OP_INDEXES);
	assert_int_equal(op.nrelids, 0);
	feed_op_clear(&op);
	record_free(&rec);
	rec = record_copy('O', b.data + 37, b.len - 37);
	assert_true(feed_read_op(&rec, &op, &err));
	assert_string_equal(op.schema, "");
	assert_string_equal(op.name, "a \"name\" with ünïcode");
	feed_op_clear(&op);
	record_free(&rec);
	feed_buf_free(&b);
}

static void test_every_prefix_fails(void **state)
{
	static const char want[] = "malformed operation record at offset 0: ";

	for (size_t v = 0; v < N_OPS; v++) {
		for (size_t n = 0; n < ops[v].len - FEED_RECORD_HEAD; n++) {
			FeedRecord rec = record_copy('O', ops[v].bytes + FEED_RECORD_HEAD, n);
			ErrBuf err = {{0}};
			FeedOp op;

			if (feed_read_op(&rec, &op, &err))
				fail_msg("%s: a body of %zu bytes was read", ops[v].name, n);
			if (strncmp(err.text, want, strlen(want)) != 0)
				fail_msg("%s, %zu bytes: \"%s\"", ops[v].name, n, err.text);
			assert_int_equal(op.op, 0);
			assert_null(op.definition);
			record_free(&rec);
		}
	}
}

static void test_trailing_byte_fails(void **state)
{
	for (size_t v = 0; v < N_OPS; v++) {
		size_t n = ops[v].len - FEED_RECORD_HEAD;
		uint8_t body[64];
		FeedRecord rec;
		ErrBuf err;
		FeedOp op;
		char want[128];

		memcpy(body, ops[v].bytes + FEED_RECORD_HEAD, n);
		body[n] = 0;
		rec = record_copy('O', body, n + 1);
		snprintf(want, sizeof want, "malformed operation record at offset 0: 1 trailing "
			 "byte at body byte %zu", n);
		assert_false(feed_read_op(&rec, &op, &err));
		assert_string_equal(err.text, want);
		record_free(&rec);
	}
}

static void assert_op_error(const uint8_t *body, size_t n, const char *want)
{
	FeedRecord rec = record_copy('O', body, n);
	ErrBuf err;
	FeedOp op;
	char full[512];

	snprintf(full, sizeof full, "malformed operation record at offset 0: %s", want);
	assert_false(feed_read_op(&rec, &op, &err));
	assert_string_equal(err.text, full);
	record_free(&rec);
}

static void test_errors(void **state)
{
	static const uint8_t op0[] = {0x00}, op8[] = {0x08, 0, 0, 0x40, 0};
	static const uint8_t lying[] = {0x07, 0x00, 0x01, 0x00, 0x00, 0, 0, 0, 1};
	static const uint8_t staged2[] = {0x02, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
					  0xff, 0xff, 0xff, 0xff};
	static const uint8_t nul[] = {0x06, 0, 0, 0x40, 0, 0, 0, 0, 2, 'a', 0, 0, 0, 0, 1, 'b'};

	assert_op_error(op0, sizeof op0, "unknown operation 0 (a feed of a later format needs a "
			"later pgmirror) at body byte 0");
	assert_op_error(op8, sizeof op8, "unknown operation 8 (a feed of a later format needs a "
			"later pgmirror) at body byte 0");
	assert_op_error(lying, sizeof lying, "65536 relations but only 4 bytes left at body byte 1");
	assert_op_error(staged2, sizeof staged2, "flag 2 is neither 0 nor 1 at body byte 13");
	assert_op_error(nul, sizeof nul, "string holds a NUL byte at body byte 5");
}

static void test_op_names(void **state)
{
	assert_string_equal(feed_op_name(1), "reset");
	assert_string_equal(feed_op_name(3), "copy part");
	assert_string_equal(feed_op_name(7), "indexes");
	assert_null(feed_op_name(0));
	assert_null(feed_op_name(8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_sane),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_prefix_fails),
		cmocka_unit_test(test_trailing_byte_fails),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_op_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

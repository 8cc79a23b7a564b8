/*
 * test_feed_format.c: a segment's records (src/feed/feed_format.c,
 * feed_reader.c, feed_body.c, feed_check.c) against the golden records of
 * feed_vectors.h: the writer gives exactly their bytes, the readers every
 * field; every strict prefix of every body and of the whole segment fails
 * cleanly, so does a byte too many; every rule of the order of records
 * and each refusal of a header has its exact message; a string or record
 * too long for its length field fails the buffer, and nothing after it is
 * written.
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

#include "pgmirror/feed_check.h"
#include "pgmirror/feed_format.h"
#include "feed_vectors.h"

static void assert_vector_sane(const uint8_t *v, size_t n)
{
	assert_true(n >= FEED_RECORD_HEAD);
	assert_int_equal(vector_length_field(v), n - FEED_RECORD_HEAD);
}

static void assert_bytes(const FeedBuf *b, const uint8_t *v, size_t n)
{
	assert_false(feed_buf_failed(b));
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, v, n);
}

/* --- the writer gives the golden bytes ------------------------------------ */

static void test_vectors_sane(void **state)
{
	for (size_t i = 0; i < N_SEGMENT_RECORDS; i++)
		assert_vector_sane(segment_records[i].bytes, segment_records[i].len);
}

static void test_write_header(void **state)
{
	FeedHeader h = {1, EPOCH_TEXT, 7, 0x16B3700, 150018, 2, true};
	FeedBuf b = FEED_BUF_INIT;

	feed_put_header(&b, &h);
	assert_bytes(&b, vec_header, sizeof vec_header);
	feed_buf_free(&b);
}

static void test_write_messages(void **state)
{
	FeedBuf b = FEED_BUF_INIT;

	feed_put_relation(&b, 0x16B3748, vec_relation + 13, sizeof vec_relation - 13);
	assert_bytes(&b, vec_relation, sizeof vec_relation);
	feed_buf_reset(&b);
	feed_put_message(&b, 0x16B3750, vec_message + 13, sizeof vec_message - 13);
	assert_bytes(&b, vec_message, sizeof vec_message);
	feed_buf_free(&b);
}

static void test_write_ends(void **state)
{
	FeedGroupEnd c = {7, 0x16B3778, T2};
	FeedSegmentEnd e = {1, 7, 0x16B3778};
	FeedBuf b = FEED_BUF_INIT;

	feed_put_group_end(&b, &c);
	assert_bytes(&b, vec_group_end, sizeof vec_group_end);
	feed_buf_reset(&b);
	feed_put_segment_end(&b, &e);
	assert_bytes(&b, vec_segment_end, sizeof vec_segment_end);
	feed_buf_free(&b);
}

/* --- the readers give every field ----------------------------------------- */

static void test_read_header(void **state)
{
	FeedRecord rec = record_of(vec_header, sizeof vec_header);
	FeedHeader h;
	ErrBuf err;

	assert_true(feed_read_header(&rec, &h, &err));
	assert_int_equal(h.version, 1);
	assert_string_equal(h.epoch, EPOCH_TEXT);
	assert_int_equal(h.first_group, 7);
	assert_int_equal(h.start_lsn, 0x16B3700);
	assert_int_equal(h.server_version, 150018);
	assert_int_equal(h.proto_version, 2);
	assert_true(h.binary);
	record_free(&rec);
}

static void test_read_messages(void **state)
{
	FeedRecord rec = record_of(vec_relation, sizeof vec_relation);
	FeedMessage m;
	ErrBuf err;

	assert_true(feed_read_message(&rec, &m, &err));
	assert_int_equal(m.lsn, 0x16B3748);
	assert_int_equal(m.len, 29);
	assert_memory_equal(m.data, vec_relation + 13, 29);
	record_free(&rec);
	rec = record_of(vec_message, sizeof vec_message);
	assert_true(feed_read_message(&rec, &m, &err));
	assert_int_equal(m.lsn, 0x16B3750);
	assert_int_equal(m.len, 21);
	assert_int_equal(m.data[0], 'B');
	record_free(&rec);
}

static void test_read_ends(void **state)
{
	FeedRecord rec = record_of(vec_group_end, sizeof vec_group_end);
	FeedGroupEnd c;
	FeedSegmentEnd e;
	ErrBuf err;

	assert_true(feed_read_group_end(&rec, &c, &err));
	assert_int_equal(c.group, 7);
	assert_int_equal(c.confirmed_lsn, 0x16B3778);
	assert_int_equal(c.commit_time, T2);
	record_free(&rec);
	rec = record_of(vec_segment_end, sizeof vec_segment_end);
	assert_true(feed_read_segment_end(&rec, &e, &err));
	assert_int_equal(e.ngroups, 1);
	assert_int_equal(e.last_group, 7);
	assert_int_equal(e.end_lsn, 0x16B3778);
	record_free(&rec);
}

/* --- damage in a body ------------------------------------------------------ */

/* Runs the reader of rec's kind (of this file's five). */
static bool read_any(const FeedRecord *rec, ErrBuf *err)
{
	FeedHeader h;
	FeedMessage m;
	FeedGroupEnd c;
	FeedSegmentEnd e;

	switch (rec->kind) {
	case FEED_HEADER: return feed_read_header(rec, &h, err);
	case FEED_RELATION:
	case FEED_MESSAGE: return feed_read_message(rec, &m, err);
	case FEED_GROUP_END: return feed_read_group_end(rec, &c, err);
	default: return feed_read_segment_end(rec, &e, err);
	}
}

static const Vec body_vectors[] = {
	VEC(vec_header), VEC(vec_relation), VEC(vec_message), VEC(vec_group_end),
	VEC(vec_segment_end),
};

static void test_every_body_prefix_fails(void **state)
{
	for (size_t v = 0; v < sizeof body_vectors / sizeof body_vectors[0]; v++) {
		const Vec *vec = &body_vectors[v];
		char want[64];

		snprintf(want, sizeof want, "malformed %s record at offset 0: ",
			 feed_kind_name(vec->bytes[0]));
		/* an R or M record's message is the decoder's to judge
		 * (test_pgoutput.c): any message of at least a byte is whole */
		size_t whole = vec->bytes[0] == 'R' || vec->bytes[0] == 'M'
				       ? 9 : vec->len - FEED_RECORD_HEAD;

		for (size_t n = 0; n < whole; n++) {
			FeedRecord rec = record_copy(vec->bytes[0], vec->bytes + FEED_RECORD_HEAD, n);
			ErrBuf err = {{0}};

			if (read_any(&rec, &err))
				fail_msg("%s: a body of %zu bytes was read", vec->name, n);
			if (strncmp(err.text, want, strlen(want)) != 0)
				fail_msg("%s, %zu bytes: \"%s\"", vec->name, n, err.text);
			record_free(&rec);
		}
	}
}

/* The exact text of a body cut short, with its bytes. */
static void assert_body_error(uint8_t kind, const uint8_t *body, size_t n, const char *want)
{
	FeedRecord rec = record_copy(kind, body, n);
	ErrBuf err = {{0}};

	assert_false(read_any(&rec, &err));
	assert_string_equal(err.text, want);
	record_free(&rec);
}

static void test_body_errors(void **state)
{
	const uint8_t *h = vec_header + FEED_RECORD_HEAD;
	uint8_t body[64];

	assert_body_error('H', h, 0, "malformed header record at offset 0: truncated at body byte 0");
	assert_body_error('H', h, 2, "malformed header record at offset 0: truncated at body byte 2");
	assert_body_error('H', h, 10, "malformed header record at offset 0: string of 32 bytes but "
			  "only 4 bytes left at body byte 2");
	assert_body_error('H', h, 59, "malformed header record at offset 0: truncated at body "
			  "byte 59");
	assert_body_error('C', vec_group_end + 5, 13, "malformed group end record at offset 0: "
			  "truncated at body byte 8");
	assert_body_error('R', vec_relation + 5, 8, "malformed relation record at offset 0: no "
			  "message at body byte 8");
	assert_body_error('M', vec_message + 5, 8, "malformed message record at offset 0: no "
			  "message at body byte 8");
	/* one byte too many */
	memcpy(body, h, 60);
	body[60] = 0;
	assert_body_error('H', body, 61, "malformed header record at offset 0: 1 trailing byte at "
			  "body byte 60");
	memcpy(body, vec_group_end + 5, 24);
	body[24] = body[25] = 0;
	assert_body_error('C', body, 26, "malformed group end record at offset 0: 2 trailing bytes "
			  "at body byte 24");
	memcpy(body, vec_segment_end + 5, 24);
	body[24] = 0;
	assert_body_error('E', body, 25, "malformed segment end record at offset 0: 1 trailing byte "
			  "at body byte 24");
}

static void test_header_refusals(void **state)
{
	uint8_t body[60];

	memcpy(body, vec_header + 5, 60);
	body[1] = 2;
	assert_body_error('H', body, 60, "malformed header record at offset 0: feed format version "
			  "2 (this pgmirror reads version 1: a later pgmirror is needed) at body byte 0");
	memcpy(body, vec_header + 5, 60);
	body[6] = 'F';
	assert_body_error('H', body, 60, "malformed header record at offset 0: epoch is not 32 "
			  "lower-case hex digits at body byte 2");
	memcpy(body, vec_header + 5, 60);
	body[6] = '\0';
	assert_body_error('H', body, 60, "malformed header record at offset 0: string holds a NUL "
			  "byte at body byte 2");
	memcpy(body, vec_header + 5, 60);
	body[45] = 0;
	assert_body_error('H', body, 60, "malformed header record at offset 0: first group 0 "
			  "(groups are numbered from 1) at body byte 38");
	memcpy(body, vec_header + 5, 60);
	body[59] = 2;
	assert_body_error('H', body, 60, "malformed header record at offset 0: flag 2 is neither 0 "
			  "nor 1 at body byte 59");
	/* a shorter epoch string: 31 digits and one byte over at the end */
	memcpy(body, vec_header + 5, 60);
	body[5] = 31;
	assert_body_error('H', body, 60, "malformed header record at offset 0: epoch is not 32 "
			  "lower-case hex digits at body byte 2");
}

static void test_message_refusals(void **state)
{
	uint8_t body[37];
	FeedRecord rec;
	FeedMessage m;
	ErrBuf err;

	memcpy(body, vec_relation + 5, 37);
	body[8] = 'I';
	assert_body_error('R', body, 37, "malformed relation record at offset 0: message type 0x49 "
			  "is neither Relation (R) nor Type (Y) at body byte 8");
	body[8] = 'Y';
	rec = record_copy('R', body, 37);
	assert_true(feed_read_message(&rec, &m, &err));
	record_free(&rec);
	/* any message in an M record: the decoder judges it */
	body[8] = 'I';
	rec = record_copy('M', body, 37);
	assert_true(feed_read_message(&rec, &m, &err));
	record_free(&rec);
	/* a reader handed another kind */
	rec = record_of(vec_group_end, sizeof vec_group_end);
	assert_false(feed_read_segment_end((FeedRecord *)&rec, &(FeedSegmentEnd){0}, &err));
	assert_string_equal(err.text, "record at offset 0 is not a segment end record");
	record_free(&rec);
	rec = record_copy(0x5a, body, 0);
	assert_false(feed_read_header(&rec, &(FeedHeader){0}, &err));
	assert_string_equal(err.text, "record at offset 0 is not a header record");
	record_free(&rec);
}

/* --- the whole segment ----------------------------------------------------- */

static void test_segment_reads(void **state)
{
	size_t len, off = 0;
	uint8_t *seg = segment_bytes(&len);
	FeedReader r;
	FeedRecord rec;
	FeedSegmentInfo info;
	ErrBuf err;

	feed_reader_init(&r, seg, len);
	for (size_t i = 0; i < N_SEGMENT_RECORDS; i++) {
		assert_int_equal(feed_reader_next(&r, &rec), FEED_NEXT_RECORD);
		assert_int_equal(rec.kind, segment_records[i].bytes[0]);
		assert_int_equal(rec.offset, off);
		assert_int_equal(rec.len, segment_records[i].len - FEED_RECORD_HEAD);
		off += segment_records[i].len;
		assert_int_equal(feed_record_next(&rec), off);
	}
	assert_int_equal(feed_reader_next(&r, &rec), FEED_NEXT_DONE);
	assert_int_equal(feed_reader_next(&r, &rec), FEED_NEXT_DONE);
	assert_string_equal(r.header.epoch, EPOCH_TEXT);
	assert_int_equal(r.ngroups, 1);
	assert_int_equal(r.last.group, 7);
	assert_int_equal(r.end.end_lsn, 0x16B3778);

	assert_true(feed_check_segment(seg, len, &info, &err));
	assert_int_equal(info.nrecords, N_SEGMENT_RECORDS);
	assert_int_equal(info.header.first_group, 7);
	assert_int_equal(info.end.last_group, 7);
	free(seg);
}

static void test_segment_every_prefix_fails(void **state)
{
	size_t len;
	uint8_t *seg = segment_bytes(&len);

	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n > 0 ? n : 1);
		FeedSegmentInfo info;
		ErrBuf err = {{0}};

		memcpy(copy, seg, n);
		if (feed_check_segment(copy, n, &info, &err))
			fail_msg("a segment cut to %zu of %zu bytes was read", n, len);
		if (strncmp(err.text, "malformed segment at offset ", 28) != 0)
			fail_msg("cut to %zu bytes: \"%s\"", n, err.text);
		free(copy);
	}
	free(seg);
}

/* The segment of the given records (indexes into segment_records, or
 * extra records given as vectors) fails with exactly want. */
static void assert_segment_error(const Vec *recs, size_t n, const char *want)
{
	size_t len = 0;
	uint8_t *seg, *p;
	FeedSegmentInfo info;
	ErrBuf err = {{0}};

	for (size_t i = 0; i < n; i++)
		len += recs[i].len;
	p = seg = malloc(len);
	for (size_t i = 0; i < n; i++) {
		memcpy(p, recs[i].bytes, recs[i].len);
		p += recs[i].len;
	}
	assert_false(feed_check_segment(seg, len, &info, &err));
	assert_string_equal(err.text, want);
	free(seg);
}

#define SEG_ERROR(want, ...)                                                          \
	do {                                                                           \
		const Vec recs_[] = {__VA_ARGS__};                                     \
		assert_segment_error(recs_, sizeof recs_ / sizeof recs_[0], want);     \
	} while (0)

static void test_segment_frames(void **state)
{
	static const uint8_t unknown[] = {0x5a, 0x00, 0x00, 0x00, 0x00};
	static const uint8_t too_long[] = {0x4f, 0x00, 0x00, 0x01, 0x00, 0x04};
	static const uint8_t three[] = {0x4f, 0x00, 0x00};

	SEG_ERROR("malformed segment at offset 0: contents end without a header (H)",
		  {"none", three, 0});
	SEG_ERROR("malformed segment at offset 0: truncated record (3 bytes left, a record takes "
		  "at least 5)", {"three", three, 3});
	SEG_ERROR("malformed segment at offset 65: unknown record kind 0x5a", VEC(vec_header),
		  VEC(unknown));
	SEG_ERROR("malformed segment at offset 65: record length 256 but only 1 byte left",
		  VEC(vec_header), VEC(too_long));
	SEG_ERROR("malformed segment at offset 65: contents end without the segment end (E)",
		  VEC(vec_header));
	SEG_ERROR("malformed segment at offset 94: contents end without the segment end (E)",
		  VEC(vec_header), VEC(vec_group_end));
}

static void test_segment_order(void **state)
{
	/* group 8 at 0/16B3700: before group 7's end */
	static const uint8_t c8_back[] = {
		0x43, 0x00, 0x00, 0x00, 0x18, 0, 0, 0, 0, 0, 0, 0, 0x08,
		0, 0, 0, 0, 0x01, 0x6b, 0x37, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t e2[] = {
		0x45, 0x00, 0x00, 0x00, 0x18, 0, 0, 0, 0, 0, 0, 0, 0x02,
		0, 0, 0, 0, 0, 0, 0, 0x07, 0, 0, 0, 0, 0x01, 0x6b, 0x37, 0x78,
	};
	static const uint8_t e_lsn[] = {
		0x45, 0x00, 0x00, 0x00, 0x18, 0, 0, 0, 0, 0, 0, 0, 0x01,
		0, 0, 0, 0, 0, 0, 0, 0x07, 0, 0, 0, 0, 0x01, 0x6b, 0x37, 0x79,
	};

	SEG_ERROR("malformed segment at offset 0: group end (C) where the header (H) is due",
		  VEC(vec_group_end));
	SEG_ERROR("malformed segment at offset 65: a second header (H)", VEC(vec_header),
		  VEC(vec_header));
	SEG_ERROR("malformed segment at offset 99: relation (R) after the first group began",
		  VEC(vec_header), VEC(vec_message), VEC(vec_relation));
	SEG_ERROR("malformed segment at offset 65: segment end (E) before any group",
		  VEC(vec_header), VEC(vec_segment_end));
	SEG_ERROR("malformed segment at offset 128: segment end (E) inside a group",
		  VEC(vec_header), VEC(vec_group_end), VEC(vec_message), VEC(vec_segment_end));
	SEG_ERROR("malformed segment at offset 94: group end (C) of group 7 where group 8 was due",
		  VEC(vec_header), VEC(vec_group_end), VEC(vec_group_end));
	SEG_ERROR("malformed segment at offset 94: group 8 ends at 0/16B3700, before 0/16B3778",
		  VEC(vec_header), VEC(vec_group_end), VEC(c8_back));
	SEG_ERROR("malformed segment at offset 94: segment end (E) says 2 groups to group 7; read: "
		  "1 to group 7", VEC(vec_header), VEC(vec_group_end), VEC(e2));
	SEG_ERROR("malformed segment at offset 94: segment end (E) at 0/16B3779, but group 7 ends "
		  "at 0/16B3778", VEC(vec_header), VEC(vec_group_end), VEC(e_lsn));
	SEG_ERROR("malformed segment at offset 123: catalog answer (A) after the segment end (E)",
		  VEC(vec_header), VEC(vec_group_end), VEC(vec_segment_end), VEC(vec_answer));
	/* a body's damage is the record's own message */
	SEG_ERROR("malformed catalog answer record at offset 65: truncated at body byte 0",
		  VEC(vec_header), {"empty A", (const uint8_t *)"A\0\0\0\0", 5});
}

static void test_reader_stays_failed(void **state)
{
	FeedReader r;
	FeedRecord rec;

	feed_reader_init(&r, vec_group_end, sizeof vec_group_end);
	assert_int_equal(feed_reader_next(&r, &rec), FEED_NEXT_ERROR);
	assert_int_equal(feed_reader_next(&r, &rec), FEED_NEXT_ERROR);
	assert_string_equal(feed_reader_error(&r), "malformed segment at offset 0: group end (C) "
			    "where the header (H) is due");
}

/* --- the buffer ---------------------------------------------------------------- */

static void test_buffer_strings(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x00, 0x00, 0x02, 'h', 'i',       /* str "hi" */
		0x00, 0x00, 0x00, 0x00,                 /* str "" */
		0xff, 0xff, 0xff, 0xff,                 /* ostr NULL */
		0x00, 0x00, 0x00, 0x00,                 /* ostr "" */
		0xff, 0xfe,                             /* u16 */
		0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, /* i64 */
		0x80, 0x00, 0x00, 0x00,                 /* i32 INT32_MIN */
	};
	FeedBuf b = FEED_BUF_INIT;

	feed_buf_put_cstr(&b, "hi");
	feed_buf_put_str(&b, NULL, 0);
	feed_buf_put_ocstr(&b, NULL);
	feed_buf_put_ocstr(&b, "");
	feed_buf_put_u16(&b, 0xfffe);
	feed_buf_put_i64(&b, INT64_MAX - 1);
	feed_buf_put_i32(&b, INT32_MIN);
	assert_bytes(&b, want, sizeof want);
	feed_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void test_buffer_grows(void **state)
{
	FeedBuf b;
	uint8_t byte;

	feed_buf_init(&b);
	for (int i = 0; i < 100000; i++) {
		byte = (uint8_t)i;
		feed_buf_put(&b, &byte, 1);
	}
	assert_int_equal(b.len, 100000);
	assert_int_equal(b.data[99999], (uint8_t)99999);
	feed_buf_truncate(&b, 200000);
	assert_int_equal(b.len, 100000);
	feed_buf_truncate(&b, 3);
	assert_int_equal(b.len, 3);
	feed_buf_put_u8(&b, 9);
	assert_int_equal(b.data[3], 9);
	feed_buf_free(&b);
}

static void test_buffer_too_long(void **state)
{
	FeedBuf b = FEED_BUF_INIT;
	size_t at;

	/* the lengths are checked before a byte is read: no such string exists */
	at = feed_record_begin(&b, FEED_ANSWER);
	feed_buf_put_ostr(&b, "x", (size_t)INT32_MAX + 1);
	feed_record_end(&b, at);
	assert_true(feed_buf_failed(&b));
	assert_string_equal(b.err.text, "string too long for the feed: 2147483648 bytes, at most "
			    "2147483647");
	feed_buf_put_u8(&b, 1); /* dropped */
	feed_buf_fail(&b, "another");
	assert_int_equal(b.len, 5);
	assert_string_equal(b.err.text, "string too long for the feed: 2147483648 bytes, at most "
			    "2147483647");
	feed_buf_reset(&b);
	assert_false(feed_buf_failed(&b));
	assert_int_equal(b.len, 0);
#if SIZE_MAX > UINT32_MAX
	feed_buf_put_str(&b, "x", (size_t)UINT32_MAX + 1);
	assert_true(feed_buf_failed(&b));
	assert_string_equal(b.err.text, "string too long for the feed: 4294967296 bytes, at most "
			    "4294967295");
#endif
	feed_buf_free(&b);
}

static void test_kind_names(void **state)
{
	assert_string_equal(feed_kind_name('H'), "header");
	assert_string_equal(feed_kind_name('A'), "catalog answer");
	assert_string_equal(feed_kind_name('E'), "segment end");
	assert_null(feed_kind_name('Z'));
	assert_null(feed_kind_name(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_sane),
		cmocka_unit_test(test_write_header),
		cmocka_unit_test(test_write_messages),
		cmocka_unit_test(test_write_ends),
		cmocka_unit_test(test_read_header),
		cmocka_unit_test(test_read_messages),
		cmocka_unit_test(test_read_ends),
		cmocka_unit_test(test_every_body_prefix_fails),
		cmocka_unit_test(test_body_errors),
		cmocka_unit_test(test_header_refusals),
		cmocka_unit_test(test_message_refusals),
		cmocka_unit_test(test_segment_reads),
		cmocka_unit_test(test_segment_every_prefix_fails),
		cmocka_unit_test(test_segment_frames),
		cmocka_unit_test(test_segment_order),
		cmocka_unit_test(test_reader_stays_failed),
		cmocka_unit_test(test_buffer_strings),
		cmocka_unit_test(test_buffer_grows),
		cmocka_unit_test(test_buffer_too_long),
		cmocka_unit_test(test_kind_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

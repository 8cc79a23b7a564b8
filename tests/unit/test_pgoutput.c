/*
 * test_pgoutput.c: the pgoutput decoder against the golden vectors of
 * vectors.c: every field of every vector, every strict prefix of every
 * vector, a trailing byte after every vector, lying counts and lengths,
 * stream ordering and protocol versions, and the exact error texts.
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
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "pgmirror/pgoutput.h"
#include "vectors.h"

/* 2024-05-06 07:08:09.123456 and 07:08:10.000001 UTC, usecs since 2000. */
#define T1 INT64_C(768294489123456)
#define T2 INT64_C(768294490000001)
#define LSN_COMMIT UINT64_C(0x16B3748)
#define LSN_END UINT64_C(0x16B3778)

/* A decoder in the state the vector is decoded in. */
static PgoDecoder *decoder_for(const Vector *v)
{
	PgoDecoder *dec = pgoutput_decoder_new(v->proto_version,
					       v->abort_info);
	PgoMessage m;

	if (v->in_stream) {
		if (!pgoutput_decode(dec, vector_stream_start,
				     vector_stream_start_len, &m))
			fail_msg("Stream Start: %s", pgoutput_error(dec));
		assert_true(pgoutput_in_stream(dec));
	}
	return dec;
}

/* Decodes the named vector; the caller frees the decoder. */
static PgoDecoder *decode_vector(const char *name, PgoMessage *msg)
{
	const Vector *v = vector_find(name);
	PgoDecoder *dec;

	if (v == NULL)
		fail_msg("no vector %s", name);
	dec = decoder_for(v);
	if (!pgoutput_decode(dec, v->bytes, v->len, msg))
		fail_msg("%s: %s", name, pgoutput_error(dec));
	return dec;
}

/* Decodes len bytes copied into a buffer of exactly that size, so that
 * ASan and valgrind see any read past the end. */
static bool decode_copy(PgoDecoder *dec, const uint8_t *bytes, size_t len,
			PgoMessage *msg)
{
	uint8_t *copy = len > 0 ? malloc(len) : NULL;
	bool ok;

	if (len > 0) {
		assert_non_null(copy);
		memcpy(copy, bytes, len);
	}
	ok = pgoutput_decode(dec, copy, len, msg);
	free(copy);
	return ok;
}

static void assert_value(const PgoValue *v, char kind, const char *data,
			 size_t len)
{
	assert_int_equal(v->kind, kind);
	if (data == NULL) {
		assert_null(v->data);
		assert_int_equal(v->len, 0);
		return;
	}
	assert_int_equal(v->len, len);
	assert_non_null(v->data);
	assert_memory_equal(v->data, data, len);
}

static void assert_text(const PgoValue *v, const char *text)
{
	assert_value(v, PGO_COL_TEXT, text, strlen(text));
}

static void assert_column(const PgoColumn *c, uint8_t flags,
			  const char *name, uint32_t type_oid,
			  int32_t type_mod)
{
	assert_int_equal(c->flags, flags);
	assert_string_equal(c->name, name);
	assert_int_equal(c->type_oid, type_oid);
	assert_int_equal(c->type_mod, type_mod);
}

/* Decodes bytes with a fresh decoder and expects exactly this error. */
static void assert_decode_error(int version, bool abort_info,
				bool in_stream, const uint8_t *bytes,
				size_t len, const char *expected)
{
	Vector v = { "adhoc", version, in_stream, abort_info, bytes, len };
	PgoDecoder *dec = decoder_for(&v);
	PgoMessage m;

	assert_false(decode_copy(dec, bytes, len, &m));
	assert_string_equal(pgoutput_error(dec), expected);
	assert_int_equal(pgoutput_in_stream(dec), in_stream);
	pgoutput_decoder_free(dec);
}

/* --- every field of every vector, one test per message kind ---------- */

static void test_begin(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("begin_v1", &m);

	assert_int_equal(m.type, PGO_BEGIN);
	assert_false(m.has_xid);
	assert_int_equal(m.u.begin.final_lsn, LSN_COMMIT);
	assert_int_equal(m.u.begin.commit_time, T1);
	assert_int_equal(m.u.begin.xid, 745);
	pgoutput_decoder_free(dec);
}

static void test_message(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("message_v1", &m);

	assert_int_equal(m.type, PGO_MESSAGE);
	assert_false(m.has_xid);
	assert_int_equal(m.u.message.flags, PGO_MESSAGE_TRANSACTIONAL);
	assert_int_equal(m.u.message.lsn, UINT64_C(0x16B3700));
	assert_string_equal(m.u.message.prefix, "pgm");
	assert_int_equal(m.u.message.content_len, 5);
	assert_memory_equal(m.u.message.content, "hello", 5);
	pgoutput_decoder_free(dec);
}

static void test_message_empty(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("message_v1_empty", &m);

	assert_int_equal(m.type, PGO_MESSAGE);
	assert_int_equal(m.u.message.flags, 0);
	assert_int_equal(m.u.message.lsn, UINT64_C(0x16B3710));
	assert_string_equal(m.u.message.prefix, "x");
	assert_int_equal(m.u.message.content_len, 0);
	pgoutput_decoder_free(dec);
}

static void test_message_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("message_stream_v2", &m);

	assert_int_equal(m.type, PGO_MESSAGE);
	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(m.u.message.flags, PGO_MESSAGE_TRANSACTIONAL);
	assert_int_equal(m.u.message.lsn, UINT64_C(0x16B3720));
	assert_string_equal(m.u.message.prefix, "pgm");
	assert_int_equal(m.u.message.content_len, 2);
	assert_memory_equal(m.u.message.content, "hi", 2);
	pgoutput_decoder_free(dec);
}

static void test_commit(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("commit_v1", &m);

	assert_int_equal(m.type, PGO_COMMIT);
	assert_int_equal(m.u.commit.flags, 0);
	assert_int_equal(m.u.commit.commit_lsn, LSN_COMMIT);
	assert_int_equal(m.u.commit.end_lsn, LSN_END);
	assert_int_equal(m.u.commit.commit_time, T1);
	pgoutput_decoder_free(dec);
}

static void test_origin(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("origin_v1", &m);

	assert_int_equal(m.type, PGO_ORIGIN);
	assert_int_equal(m.u.origin.origin_lsn, UINT64_C(0x100ABCDEF));
	assert_string_equal(m.u.origin.name, "sub1");
	pgoutput_decoder_free(dec);
}

static void test_origin_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("origin_stream_v2", &m);

	/* Origin has no Xid field, in a stream or not. */
	assert_int_equal(m.type, PGO_ORIGIN);
	assert_false(m.has_xid);
	assert_string_equal(m.u.origin.name, "sub1");
	assert_true(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

static void test_relation_default(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("relation_v1_default", &m);
	const PgoRelation *r = &m.u.relation;

	assert_int_equal(m.type, PGO_RELATION);
	assert_false(m.has_xid);
	assert_int_equal(r->oid, 16384);
	assert_string_equal(r->nspname, "public");
	assert_string_equal(r->relname, "items");
	assert_int_equal(r->replident, 'd');
	assert_int_equal(r->ncols, 3);
	assert_column(&r->cols[0], PGO_COLUMN_KEY, "id", 23, -1);
	assert_column(&r->cols[1], 0, "name", 1043, 68);
	assert_column(&r->cols[2], 0, "price", 1700, (10 << 16 | 2) + 4);
	pgoutput_decoder_free(dec);
}

static void test_relation_nothing(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("relation_v1_nothing", &m);
	const PgoRelation *r = &m.u.relation;

	assert_int_equal(r->oid, 16390);
	assert_string_equal(r->nspname, "public");
	assert_string_equal(r->relname, "log");
	assert_int_equal(r->replident, 'n');
	assert_int_equal(r->ncols, 1);
	assert_column(&r->cols[0], 0, "line", 25, -1);
	pgoutput_decoder_free(dec);
}

static void test_relation_full(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("relation_v1_full", &m);
	const PgoRelation *r = &m.u.relation;

	assert_int_equal(r->oid, 16394);
	assert_string_equal(r->relname, "pairs");
	assert_int_equal(r->replident, 'f');
	assert_int_equal(r->ncols, 2);
	assert_column(&r->cols[0], PGO_COLUMN_KEY, "a", 20, -1);
	assert_column(&r->cols[1], PGO_COLUMN_KEY, "b", 25, -1);
	pgoutput_decoder_free(dec);
}

static void test_relation_index(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("relation_v1_index", &m);
	const PgoRelation *r = &m.u.relation;

	assert_int_equal(r->oid, 16400);
	assert_string_equal(r->nspname, "s1");
	assert_string_equal(r->relname, "t");
	assert_int_equal(r->replident, 'i');
	assert_int_equal(r->ncols, 3);
	assert_column(&r->cols[0], PGO_COLUMN_KEY, "k1", 23, -1);
	assert_column(&r->cols[1], PGO_COLUMN_KEY, "k2", 25, -1);
	assert_column(&r->cols[2], 0, "v", 17, -1);
	pgoutput_decoder_free(dec);
}

static void test_relation_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("relation_stream_v2", &m);
	const PgoRelation *r = &m.u.relation;

	assert_int_equal(m.type, PGO_RELATION);
	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(r->oid, 16384);
	assert_string_equal(r->nspname, "public");
	assert_string_equal(r->relname, "items");
	assert_int_equal(r->replident, 'd');
	assert_int_equal(r->ncols, 1);
	assert_column(&r->cols[0], PGO_COLUMN_KEY, "id", 23, -1);
	pgoutput_decoder_free(dec);
}

static void test_type(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("type_v1", &m);

	assert_int_equal(m.type, PGO_TYPE);
	assert_false(m.has_xid);
	assert_int_equal(m.u.type.oid, 16416);
	assert_string_equal(m.u.type.nspname, "public");
	assert_string_equal(m.u.type.typname, "mood");
	pgoutput_decoder_free(dec);
}

static void test_type_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("type_stream_v2", &m);

	assert_int_equal(m.type, PGO_TYPE);
	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(m.u.type.oid, 16417);
	assert_string_equal(m.u.type.nspname, "");
	assert_string_equal(m.u.type.typname, "color");
	pgoutput_decoder_free(dec);
}

static void test_insert(void **state)
{
	const Vector *v = vector_find("insert_v1");
	PgoMessage m;
	PgoDecoder *dec = decode_vector("insert_v1", &m);
	const PgoTuple *t = &m.u.insert.newtup;

	assert_int_equal(m.type, PGO_INSERT);
	assert_false(m.has_xid);
	assert_int_equal(m.u.insert.relid, 16384);
	assert_int_equal(t->ncols, 4);
	assert_text(&t->cols[0], "42");
	assert_value(&t->cols[1], PGO_COL_NULL, NULL, 0);
	assert_value(&t->cols[2], PGO_COL_BINARY, "\0\0\0\x2a", 4);
	assert_value(&t->cols[3], PGO_COL_UNCHANGED, NULL, 0);
	/* Values borrow from the message: no copy. */
	assert_ptr_equal(t->cols[0].data, v->bytes + 13);
	assert_ptr_equal(t->cols[2].data, v->bytes + 21);
	pgoutput_decoder_free(dec);
}

static void test_insert_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("insert_stream_v2", &m);

	assert_int_equal(m.type, PGO_INSERT);
	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(m.u.insert.relid, 16384);
	assert_int_equal(m.u.insert.newtup.ncols, 1);
	assert_text(&m.u.insert.newtup.cols[0], "7");
	pgoutput_decoder_free(dec);
}

static void test_insert_stream_v4(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("insert_stream_v4", &m);

	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(m.u.insert.relid, 16390);
	assert_int_equal(m.u.insert.newtup.ncols, 2);
	assert_value(&m.u.insert.newtup.cols[0], PGO_COL_TEXT, "", 0);
	assert_value(&m.u.insert.newtup.cols[1], PGO_COL_NULL, NULL, 0);
	pgoutput_decoder_free(dec);
}

static void test_update(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("update_v1", &m);
	const PgoUpdate *u = &m.u.update;

	assert_int_equal(m.type, PGO_UPDATE);
	assert_false(m.has_xid);
	assert_int_equal(u->relid, 16384);
	assert_int_equal(u->old_kind, 0);
	assert_int_equal(u->oldtup.ncols, 0);
	assert_int_equal(u->newtup.ncols, 2);
	assert_text(&u->newtup.cols[0], "1");
	assert_text(&u->newtup.cols[1], "new");
	pgoutput_decoder_free(dec);
}

static void test_update_key(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("update_v1_key", &m);
	const PgoUpdate *u = &m.u.update;

	assert_int_equal(u->relid, 16384);
	assert_int_equal(u->old_kind, 'K');
	assert_int_equal(u->oldtup.ncols, 2);
	assert_text(&u->oldtup.cols[0], "1");
	assert_value(&u->oldtup.cols[1], PGO_COL_NULL, NULL, 0);
	assert_int_equal(u->newtup.ncols, 2);
	assert_text(&u->newtup.cols[0], "2");
	assert_text(&u->newtup.cols[1], "x");
	assert_ptr_not_equal(u->oldtup.cols, u->newtup.cols);
	pgoutput_decoder_free(dec);
}

static void test_update_old(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("update_v1_old", &m);
	const PgoUpdate *u = &m.u.update;

	assert_int_equal(u->relid, 16394);
	assert_int_equal(u->old_kind, 'O');
	assert_int_equal(u->oldtup.ncols, 2);
	assert_text(&u->oldtup.cols[0], "1");
	assert_text(&u->oldtup.cols[1], "old");
	assert_int_equal(u->newtup.ncols, 2);
	assert_text(&u->newtup.cols[0], "1");
	assert_value(&u->newtup.cols[1], PGO_COL_UNCHANGED, NULL, 0);
	pgoutput_decoder_free(dec);
}

static void test_update_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("update_stream_v2", &m);
	const PgoUpdate *u = &m.u.update;

	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(u->relid, 16384);
	assert_int_equal(u->old_kind, 'K');
	assert_int_equal(u->oldtup.ncols, 1);
	assert_text(&u->oldtup.cols[0], "1");
	assert_int_equal(u->newtup.ncols, 1);
	assert_text(&u->newtup.cols[0], "3");
	pgoutput_decoder_free(dec);
}

static void test_delete_key(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("delete_v1_key", &m);
	const PgoDelete *d = &m.u.delete;

	assert_int_equal(m.type, PGO_DELETE);
	assert_false(m.has_xid);
	assert_int_equal(d->relid, 16384);
	assert_int_equal(d->old_kind, 'K');
	assert_int_equal(d->oldtup.ncols, 2);
	assert_text(&d->oldtup.cols[0], "1");
	assert_value(&d->oldtup.cols[1], PGO_COL_NULL, NULL, 0);
	pgoutput_decoder_free(dec);
}

static void test_delete_old(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("delete_v1_old", &m);
	const PgoDelete *d = &m.u.delete;

	assert_int_equal(d->relid, 16394);
	assert_int_equal(d->old_kind, 'O');
	assert_int_equal(d->oldtup.ncols, 2);
	assert_text(&d->oldtup.cols[0], "1");
	assert_text(&d->oldtup.cols[1], "old");
	pgoutput_decoder_free(dec);
}

static void test_delete_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("delete_stream_v2", &m);

	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(m.u.delete.relid, 16384);
	assert_int_equal(m.u.delete.old_kind, 'K');
	assert_int_equal(m.u.delete.oldtup.ncols, 1);
	assert_text(&m.u.delete.oldtup.cols[0], "9");
	pgoutput_decoder_free(dec);
}

static void test_truncate(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("truncate_v1", &m);

	assert_int_equal(m.type, PGO_TRUNCATE);
	assert_false(m.has_xid);
	assert_int_equal(m.u.truncate.options,
			 PGO_TRUNCATE_CASCADE | PGO_TRUNCATE_RESTART_IDENTITY);
	assert_int_equal(m.u.truncate.nrelids, 2);
	assert_int_equal(m.u.truncate.relids[0], 16384);
	assert_int_equal(m.u.truncate.relids[1], 16390);
	pgoutput_decoder_free(dec);
}

static void test_truncate_stream(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("truncate_stream_v2", &m);

	assert_true(m.has_xid);
	assert_int_equal(m.xid, 745);
	assert_int_equal(m.u.truncate.options, 0);
	assert_int_equal(m.u.truncate.nrelids, 1);
	assert_int_equal(m.u.truncate.relids[0], 16384);
	pgoutput_decoder_free(dec);
}

static void test_stream_start(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_start_v2", &m);

	assert_int_equal(m.type, PGO_STREAM_START);
	assert_false(m.has_xid);
	assert_int_equal(m.u.stream_start.xid, 745);
	assert_int_equal(m.u.stream_start.first_segment, 1);
	assert_true(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

static void test_stream_start_v4(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_start_v4", &m);

	assert_int_equal(m.u.stream_start.xid, 747);
	assert_int_equal(m.u.stream_start.first_segment, 0);
	assert_true(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

static void test_stream_stop(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_stop_v2", &m);

	assert_int_equal(m.type, PGO_STREAM_STOP);
	assert_false(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

static void test_stream_commit(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_commit_v2", &m);
	const PgoStreamCommit *s = &m.u.stream_commit;

	assert_int_equal(m.type, PGO_STREAM_COMMIT);
	assert_int_equal(s->xid, 745);
	assert_int_equal(s->flags, 0);
	assert_int_equal(s->commit_lsn, LSN_COMMIT);
	assert_int_equal(s->end_lsn, LSN_END);
	assert_int_equal(s->commit_time, T1);
	pgoutput_decoder_free(dec);
}

static void test_stream_abort(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_abort_v2", &m);
	const PgoStreamAbort *a = &m.u.stream_abort;

	assert_int_equal(m.type, PGO_STREAM_ABORT);
	assert_int_equal(a->xid, 745);
	assert_int_equal(a->subxid, 746);
	assert_false(a->has_abort_info);
	assert_int_equal(a->abort_lsn, 0);
	assert_int_equal(a->abort_time, 0);
	pgoutput_decoder_free(dec);
}

static void test_stream_abort_v4(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_abort_v4", &m);
	const PgoStreamAbort *a = &m.u.stream_abort;

	/* Version 4 without streaming = parallel: the version 2 layout. */
	assert_int_equal(a->xid, 745);
	assert_int_equal(a->subxid, 745);
	assert_false(a->has_abort_info);
	pgoutput_decoder_free(dec);
}

static void test_stream_abort_v4_parallel(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_abort_v4_parallel", &m);
	const PgoStreamAbort *a = &m.u.stream_abort;

	assert_int_equal(a->xid, 745);
	assert_int_equal(a->subxid, 746);
	assert_true(a->has_abort_info);
	assert_int_equal(a->abort_lsn, LSN_COMMIT);
	assert_int_equal(a->abort_time, T2);
	pgoutput_decoder_free(dec);
}

static void test_begin_prepare(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("begin_prepare_v3", &m);
	const PgoPrepare *p = &m.u.begin_prepare;

	assert_int_equal(m.type, PGO_BEGIN_PREPARE);
	assert_int_equal(p->flags, 0);
	assert_int_equal(p->prepare_lsn, LSN_COMMIT);
	assert_int_equal(p->end_lsn, LSN_END);
	assert_int_equal(p->prepare_time, T1);
	assert_int_equal(p->xid, 745);
	assert_string_equal(p->gid, "gid1");
	pgoutput_decoder_free(dec);
}

static void test_prepare(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("prepare_v3", &m);
	const PgoPrepare *p = &m.u.prepare;

	assert_int_equal(m.type, PGO_PREPARE);
	assert_int_equal(p->flags, 0);
	assert_int_equal(p->prepare_lsn, LSN_COMMIT);
	assert_int_equal(p->end_lsn, LSN_END);
	assert_int_equal(p->prepare_time, T1);
	assert_int_equal(p->xid, 745);
	assert_string_equal(p->gid, "gid1");
	pgoutput_decoder_free(dec);
}

static void test_commit_prepared(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("commit_prepared_v3", &m);
	const PgoCommitPrepared *p = &m.u.commit_prepared;

	assert_int_equal(m.type, PGO_COMMIT_PREPARED);
	assert_int_equal(p->flags, 0);
	assert_int_equal(p->commit_lsn, LSN_COMMIT);
	assert_int_equal(p->end_lsn, LSN_END);
	assert_int_equal(p->commit_time, T2);
	assert_int_equal(p->xid, 745);
	assert_string_equal(p->gid, "gid1");
	pgoutput_decoder_free(dec);
}

static void test_rollback_prepared(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("rollback_prepared_v3", &m);
	const PgoRollbackPrepared *p = &m.u.rollback_prepared;

	assert_int_equal(m.type, PGO_ROLLBACK_PREPARED);
	assert_int_equal(p->flags, 0);
	assert_int_equal(p->prepare_end_lsn, LSN_END);
	assert_int_equal(p->rollback_end_lsn, UINT64_C(0x16B3800));
	assert_int_equal(p->prepare_time, T1);
	assert_int_equal(p->rollback_time, T2);
	assert_int_equal(p->xid, 745);
	assert_string_equal(p->gid, "gid1");
	pgoutput_decoder_free(dec);
}

static void test_stream_prepare(void **state)
{
	PgoMessage m;
	PgoDecoder *dec = decode_vector("stream_prepare_v3", &m);
	const PgoPrepare *p = &m.u.stream_prepare;

	assert_int_equal(m.type, PGO_STREAM_PREPARE);
	assert_int_equal(p->flags, 0);
	assert_int_equal(p->prepare_lsn, LSN_COMMIT);
	assert_int_equal(p->end_lsn, LSN_END);
	assert_int_equal(p->prepare_time, T2);
	assert_int_equal(p->xid, 745);
	assert_string_equal(p->gid, "gid2");
	pgoutput_decoder_free(dec);
}

/* --- properties of the whole table ----------------------------------- */

static void test_vectors_cover_every_type(void **state)
{
	static const char types[] = "BMCORYIUDTSEcAbPKrp";
	const char *t;
	size_t i;

	for (t = types; *t != '\0'; t++) {
		bool found = false;

		for (i = 0; i < n_vectors; i++)
			if (vectors[i].bytes[0] == (uint8_t) *t)
				found = true;
		if (!found)
			fail_msg("no vector for %s", pgoutput_msg_name(*t));
	}
	for (i = 0; i < n_vectors; i++)
		assert_ptr_equal(vector_find(vectors[i].name), &vectors[i]);
}

static void test_every_vector_decodes(void **state)
{
	size_t i;

	for (i = 0; i < n_vectors; i++) {
		const Vector *v = &vectors[i];
		PgoDecoder *dec = decoder_for(v);
		PgoMessage m;

		if (!decode_copy(dec, v->bytes, v->len, &m))
			fail_msg("%s: %s", v->name, pgoutput_error(dec));
		assert_int_equal(m.type, v->bytes[0]);
		assert_string_equal(pgoutput_error(dec), "");
		pgoutput_decoder_free(dec);
	}
}

/* A layout that does not change with the version decodes the same way in
 * every later version (abort_info kept as the vector has it). */
static void test_every_vector_decodes_in_later_versions(void **state)
{
	size_t i;
	int version;

	for (i = 0; i < n_vectors; i++) {
		for (version = vectors[i].proto_version + 1; version <= 4;
		     version++) {
			Vector v = vectors[i];
			PgoDecoder *dec;
			PgoMessage m;

			v.proto_version = version;
			dec = decoder_for(&v);
			if (!decode_copy(dec, v.bytes, v.len, &m))
				fail_msg("%s in version %d: %s", v.name,
					 version, pgoutput_error(dec));
			assert_int_equal(m.has_xid, v.in_stream &&
					 strchr("RYIUDTM", v.bytes[0]) != NULL);
			pgoutput_decoder_free(dec);
		}
	}
}

/* Checks "malformed <Type> message: ... at byte offset N", N <= len. */
static void assert_error_shape(const char *err, const Vector *v, size_t len)
{
	char prefix[64];
	const char *at;
	char *end;
	unsigned long offset;

	if (len == 0) {
		assert_string_equal(err, "empty message at byte offset 0");
		return;
	}
	snprintf(prefix, sizeof prefix, "malformed %s message: ",
		 pgoutput_msg_name(v->bytes[0]));
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fail_msg("%s, %zu bytes: \"%s\" does not start with \"%s\"",
			 v->name, len, err, prefix);
	at = strstr(err, " at byte offset ");
	if (at == NULL)
		fail_msg("%s, %zu bytes: \"%s\" has no offset", v->name, len,
			 err);
	offset = strtoul(at + strlen(" at byte offset "), &end, 10);
	if (*end != '\0' || offset > len)
		fail_msg("%s, %zu bytes: bad offset in \"%s\"", v->name, len,
			 err);
}

static void test_every_prefix_fails(void **state)
{
	size_t i, len;

	for (i = 0; i < n_vectors; i++) {
		const Vector *v = &vectors[i];
		PgoDecoder *dec = decoder_for(v);

		for (len = 0; len < v->len; len++) {
			PgoMessage m;

			if (decode_copy(dec, v->bytes, len, &m))
				fail_msg("%s: prefix of %zu bytes decoded",
					 v->name, len);
			assert_error_shape(pgoutput_error(dec), v, len);
			/* A failed decode leaves the stream state alone. */
			assert_int_equal(pgoutput_in_stream(dec), v->in_stream);
		}
		pgoutput_decoder_free(dec);
	}
}

static void test_every_vector_with_trailing_byte_fails(void **state)
{
	size_t i;

	for (i = 0; i < n_vectors; i++) {
		const Vector *v = &vectors[i];
		PgoDecoder *dec = decoder_for(v);
		uint8_t *longer = malloc(v->len + 1);
		char expected[128];
		PgoMessage m;

		assert_non_null(longer);
		memcpy(longer, v->bytes, v->len);
		longer[v->len] = 0;
		assert_false(decode_copy(dec, longer, v->len + 1, &m));
		snprintf(expected, sizeof expected,
			 "malformed %s message: 1 trailing byte at byte offset %zu",
			 pgoutput_msg_name(v->bytes[0]), v->len);
		assert_string_equal(pgoutput_error(dec), expected);
		assert_int_equal(pgoutput_in_stream(dec), v->in_stream);
		free(longer);
		pgoutput_decoder_free(dec);
	}
}

/* --- exact error texts ----------------------------------------------- */

static void test_error_empty(void **state)
{
	PgoDecoder *dec = pgoutput_decoder_new(1, false);
	PgoMessage m;

	assert_false(pgoutput_decode(dec, NULL, 0, &m));
	assert_string_equal(pgoutput_error(dec),
			    "empty message at byte offset 0");
	pgoutput_decoder_free(dec);
}

static void test_error_unknown_type(void **state)
{
	static const uint8_t z[] = { 0x5a, 0x00, 0x00 };
	static const uint8_t nul[] = { 0x00 };

	assert_decode_error(4, true, false, z, sizeof z,
			    "unknown message type 0x5a at byte offset 0");
	assert_decode_error(2, false, true, nul, sizeof nul,
			    "unknown message type 0x00 at byte offset 0");
}

static void test_error_unsupported_version(void **state)
{
	const Vector *v = vector_find("begin_v1");
	PgoDecoder *dec = pgoutput_decoder_new(5, false);
	PgoMessage m;

	assert_false(pgoutput_decode(dec, v->bytes, v->len, &m));
	assert_string_equal(pgoutput_error(dec),
			    "unsupported protocol version 5");
	pgoutput_decoder_free(dec);
	dec = pgoutput_decoder_new(0, false);
	assert_false(pgoutput_decode(dec, v->bytes, v->len, &m));
	assert_string_equal(pgoutput_error(dec),
			    "unsupported protocol version 0");
	pgoutput_decoder_free(dec);
}

static void test_error_insert_truncated(void **state)
{
	/* The worked example at the top of src/decoder/pgoutput.c. */
	static const uint8_t example[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x03,
		0x74, 0x00, 0x00, 0x00, 0x02, 0x34, 0x32, 0x6e, 0x75,
	};
	const Vector *v = vector_find("insert_v1");
	PgoDecoder *dec = pgoutput_decoder_new(1, false);
	PgoMessage m;

	assert_true(pgoutput_decode(dec, example, sizeof example, &m));
	assert_int_equal(m.u.insert.newtup.ncols, 3);
	pgoutput_decoder_free(dec);
	assert_decode_error(1, false, false, example, 11,
			    "malformed Insert message: truncated at byte offset 9");
	assert_decode_error(1, false, false, example, 9,
			    "malformed Insert message: 3 columns but only 1 byte left at byte offset 6");
	assert_decode_error(1, false, false, v->bytes, 12,
			    "malformed Insert message: truncated at byte offset 9");
	assert_decode_error(1, false, false, v->bytes, 1,
			    "malformed Insert message: truncated at byte offset 1");
	/* Cut inside the text value: its length field is what lies. */
	assert_decode_error(1, false, false, v->bytes, 14,
			    "malformed Insert message: length 2 of column 1 exceeds the 1 byte left at byte offset 9");
}

static void test_error_truncate_trailing(void **state)
{
	const Vector *v = vector_find("truncate_v1");
	uint8_t buf[32];

	memcpy(buf, v->bytes, v->len);
	memset(buf + v->len, 0xee, 3);
	assert_decode_error(1, false, false, buf, v->len + 3,
			    "malformed Truncate message: 3 trailing bytes at byte offset 14");
}

static void test_error_unexpected_tuple_type(void **state)
{
	static const uint8_t update[] = {
		0x55, 0x00, 0x00, 0x40, 0x00, 0x58, 0x00, 0x00,
	};
	static const uint8_t update_then[] = {
		0x55, 0x00, 0x00, 0x40, 0x00,
		0x4b, 0x00, 0x01, 0x6e,      /* 'K' (NULL) */
		0x4b, 0x00, 0x01, 0x6e,      /* 'K' again, not 'N' */
	};
	static const uint8_t insert[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4b, 0x00, 0x00,
	};
	static const uint8_t delete[] = {
		0x44, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x00,
	};

	assert_decode_error(1, false, false, update, sizeof update,
			    "malformed Update message: unexpected tuple type 0x58 at byte offset 5");
	assert_decode_error(1, false, false, update_then, sizeof update_then,
			    "malformed Update message: unexpected tuple type 0x4b at byte offset 9");
	assert_decode_error(1, false, false, insert, sizeof insert,
			    "malformed Insert message: unexpected tuple type 0x4b at byte offset 5");
	assert_decode_error(1, false, false, delete, sizeof delete,
			    "malformed Delete message: unexpected tuple type 0x4e at byte offset 5");
}

static void test_error_unknown_column_kind(void **state)
{
	static const uint8_t insert[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x02,
		0x6e, 0x78,                  /* 'n', then 'x' */
	};

	assert_decode_error(1, false, false, insert, sizeof insert,
			    "malformed Insert message: unknown kind 0x78 of column 2 at byte offset 9");
}

static void test_error_negative_column_length(void **state)
{
	static const uint8_t insert[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x01,
		0x74, 0xff, 0xff, 0xff, 0xff, /* 't' length -1 */
	};
	static const uint8_t binary[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x01,
		0x62, 0x80, 0x00, 0x00, 0x00, /* 'b' length INT32_MIN */
	};

	assert_decode_error(1, false, false, insert, sizeof insert,
			    "malformed Insert message: negative length -1 of column 1 at byte offset 9");
	assert_decode_error(1, false, false, binary, sizeof binary,
			    "malformed Insert message: negative length -2147483648 of column 1 at byte offset 9");
}

static void test_error_column_length_past_end(void **state)
{
	static const uint8_t insert[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x01,
		0x74, 0x7f, 0xff, 0xff, 0xff, /* 't' length INT32_MAX */
		0x61, 0x62,
	};

	assert_decode_error(1, false, false, insert, sizeof insert,
			    "malformed Insert message: length 2147483647 of column 1 exceeds the 2 bytes left at byte offset 9");
}

/* Heap bytes in use, where the C library can tell; 0 elsewhere. */
static size_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#else
	return 0;
#endif
}

static void test_error_huge_ncols(void **state)
{
	static const uint8_t insert[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e,
		0xff, 0xff,                  /* 65535 columns */
		0x6e, 0x6e, 0x6e,            /* but 3 bytes */
	};
	static const uint8_t update_old[] = {
		0x55, 0x00, 0x00, 0x40, 0x00, 0x4f,
		0xff, 0xfe,                  /* 65534 columns */
		0x6e,
	};
	static const uint8_t relation[] = {
		0x52, 0x00, 0x00, 0x40, 0x00, 0x00, 0x74, 0x00, 0x64,
		0xff, 0xff,                  /* 65535 columns */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x17, 0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t relation_short[] = {
		0x52, 0x00, 0x00, 0x40, 0x00, 0x00, 0x74, 0x00, 0x64,
		0x00, 0x02,                  /* 2 columns need 20 bytes */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x17, 0xff, 0xff, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x17, 0xff, 0xff, 0xff,
	};
	PgoDecoder *dec = pgoutput_decoder_new(1, false);
	size_t before = heap_in_use();
	PgoMessage m;

	/* Each lying count fails before any array grows (without the check,
	 * 65535 values would take 1 MB). */
	assert_false(pgoutput_decode(dec, insert, sizeof insert, &m));
	assert_true(heap_in_use() <= before + 1024);
	assert_string_equal(pgoutput_error(dec),
			    "malformed Insert message: 65535 columns but only 3 bytes left at byte offset 6");
	assert_false(pgoutput_decode(dec, update_old, sizeof update_old, &m));
	assert_true(heap_in_use() <= before + 1024);
	assert_string_equal(pgoutput_error(dec),
			    "malformed Update message: 65534 columns but only 1 byte left at byte offset 6");
	assert_false(pgoutput_decode(dec, relation, sizeof relation, &m));
	assert_true(heap_in_use() <= before + 1024);
	assert_string_equal(pgoutput_error(dec),
			    "malformed Relation message: 65535 columns but only 10 bytes left at byte offset 9");
	assert_false(pgoutput_decode(dec, relation_short,
				     sizeof relation_short, &m));
	assert_true(heap_in_use() <= before + 1024);
	assert_string_equal(pgoutput_error(dec),
			    "malformed Relation message: 2 columns but only 19 bytes left at byte offset 9");
	pgoutput_decoder_free(dec);
}

static void test_error_huge_nrels(void **state)
{
	static const uint8_t huge[] = {
		0x54, 0x7f, 0xff, 0xff, 0xff, /* 2147483647 relations */
		0x00,
		0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x40, 0x06,
	};
	static const uint8_t negative[] = {
		0x54, 0xff, 0xff, 0xff, 0xff, /* -1 relations */
		0x00,
		0x00, 0x00, 0x40, 0x00,
	};
	static const uint8_t one_short[] = {
		0x54, 0x00, 0x00, 0x00, 0x03, /* 3 relations */
		0x00,
		0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x40, 0x06, 0x00, 0x00,
	};

	assert_decode_error(1, false, false, huge, sizeof huge,
			    "malformed Truncate message: 2147483647 relations but only 8 bytes left at byte offset 1");
	assert_decode_error(1, false, false, negative, sizeof negative,
			    "malformed Truncate message: negative relation count -1 at byte offset 1");
	assert_decode_error(1, false, false, one_short, sizeof one_short,
			    "malformed Truncate message: 3 relations but only 10 bytes left at byte offset 1");
}

static void test_error_message_content_length(void **state)
{
	static const uint8_t negative[] = {
		0x4d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x00,                        /* prefix "" */
		0xff, 0xff, 0xff, 0xfe,      /* length -2 */
	};
	static const uint8_t past[] = {
		0x4d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x00,                        /* prefix "" */
		0x00, 0x00, 0x01, 0x00,      /* length 256 */
		0x61,
	};

	assert_decode_error(1, false, false, negative, sizeof negative,
			    "malformed Message message: negative content length -2 at byte offset 11");
	assert_decode_error(1, false, false, past, sizeof past,
			    "malformed Message message: content length 256 exceeds the 1 byte left at byte offset 11");
}

static void test_error_unterminated_string(void **state)
{
	const Vector *v = vector_find("origin_v1");

	assert_decode_error(1, false, false, v->bytes, v->len - 1,
			    "malformed Origin message: unterminated string at byte offset 9");
	assert_decode_error(1, false, false, v->bytes, 9,
			    "malformed Origin message: truncated at byte offset 9");
}

static void test_error_replica_identity(void **state)
{
	static const uint8_t relation[] = {
		0x52, 0x00, 0x00, 0x40, 0x00, 0x00, 0x74, 0x00,
		0x78,                        /* 'x' */
		0x00, 0x00,
	};

	assert_decode_error(1, false, false, relation, sizeof relation,
			    "malformed Relation message: unknown replica identity 0x78 at byte offset 8");
}

static void test_error_flags(void **state)
{
	const Vector *v = vector_find("commit_v1");
	const Vector *sc = vector_find("stream_commit_v2");
	uint8_t buf[64];

	memcpy(buf, v->bytes, v->len);
	buf[1] = 0x01;
	assert_decode_error(1, false, false, buf, v->len,
			    "malformed Commit message: unknown flags 0x01 at byte offset 1");
	memcpy(buf, sc->bytes, sc->len);
	buf[5] = 0x80;
	assert_decode_error(2, false, false, buf, sc->len,
			    "malformed Stream Commit message: unknown flags 0x80 at byte offset 5");
}

/* --- streams and versions -------------------------------------------- */

static void test_error_stream_start_in_stream(void **state)
{
	assert_decode_error(2, false, true, vector_stream_start,
			    vector_stream_start_len,
			    "unexpected Stream Start message inside a stream at byte offset 0");
}

static void test_error_stream_stop_outside_stream(void **state)
{
	static const uint8_t stop[] = { 0x45 };

	assert_decode_error(2, false, false, stop, sizeof stop,
			    "unexpected Stream Stop message outside a stream at byte offset 0");
}

static void test_error_transaction_messages_in_stream(void **state)
{
	static const char *names[] = {
		"begin_v1", "commit_v1", "stream_commit_v2",
		"stream_abort_v2", "begin_prepare_v3", "prepare_v3",
		"commit_prepared_v3", "rollback_prepared_v3",
		"stream_prepare_v3",
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		const Vector *v = vector_find(names[i]);
		char expected[128];

		snprintf(expected, sizeof expected,
			 "unexpected %s message inside a stream at byte offset 0",
			 pgoutput_msg_name(v->bytes[0]));
		assert_decode_error(4, false, true, v->bytes, v->len,
				    expected);
	}
}

static void test_error_message_needs_newer_version(void **state)
{
	const Vector *start = vector_find("stream_start_v2");
	const Vector *sabort = vector_find("stream_abort_v2");
	const Vector *prep = vector_find("prepare_v3");
	const Vector *sprep = vector_find("stream_prepare_v3");

	assert_decode_error(1, false, false, start->bytes, start->len,
			    "unexpected Stream Start message in protocol version 1 at byte offset 0");
	assert_decode_error(1, true, false, sabort->bytes, sabort->len,
			    "unexpected Stream Abort message in protocol version 1 at byte offset 0");
	assert_decode_error(2, false, false, prep->bytes, prep->len,
			    "unexpected Prepare message in protocol version 2 at byte offset 0");
	assert_decode_error(2, false, false, sprep->bytes, sprep->len,
			    "unexpected Stream Prepare message in protocol version 2 at byte offset 0");
}

static void test_abort_info_needs_version_4(void **state)
{
	const Vector *sabort = vector_find("stream_abort_v2");
	const Vector *parallel = vector_find("stream_abort_v4_parallel");
	PgoDecoder *dec = pgoutput_decoder_new(3, true);
	PgoMessage m;

	/* The server sends the abort fields to version 4 clients only. */
	assert_true(pgoutput_decode(dec, sabort->bytes, sabort->len, &m));
	assert_false(m.u.stream_abort.has_abort_info);
	pgoutput_decoder_free(dec);

	assert_decode_error(4, true, false, sabort->bytes, sabort->len,
			    "malformed Stream Abort message: truncated at byte offset 9");
	assert_decode_error(4, false, false, parallel->bytes, parallel->len,
			    "malformed Stream Abort message: 16 trailing bytes at byte offset 9");
}

/* A streamed transaction and a plain one, interleaved as the server may
 * send them: the Xid field comes and goes with the stream. */
static void test_stream_sequence(void **state)
{
	static const uint8_t insert_plain[] = {
		0x49, 0x00, 0x00, 0x40, 0x00, 0x4e, 0x00, 0x01, 0x6e,
	};
	const Vector *rel = vector_find("relation_stream_v2");
	const Vector *ins = vector_find("insert_stream_v2");
	const Vector *stop = vector_find("stream_stop_v2");
	const Vector *begin = vector_find("begin_v1");
	const Vector *commit = vector_find("commit_v1");
	const Vector *scommit = vector_find("stream_commit_v2");
	PgoDecoder *dec = pgoutput_decoder_new(2, false);
	PgoMessage m;

	assert_false(pgoutput_in_stream(dec));
	assert_true(pgoutput_decode(dec, vector_stream_start,
				    vector_stream_start_len, &m));
	assert_true(pgoutput_in_stream(dec));
	assert_true(pgoutput_decode(dec, rel->bytes, rel->len, &m));
	assert_true(m.has_xid);
	assert_true(pgoutput_decode(dec, ins->bytes, ins->len, &m));
	assert_int_equal(m.xid, 745);
	/* Without its Xid the plain Insert does not fit inside the stream. */
	assert_false(pgoutput_decode(dec, insert_plain, sizeof insert_plain,
				     &m));
	assert_true(pgoutput_in_stream(dec));
	assert_true(pgoutput_decode(dec, stop->bytes, stop->len, &m));
	assert_false(pgoutput_in_stream(dec));

	assert_true(pgoutput_decode(dec, begin->bytes, begin->len, &m));
	assert_true(pgoutput_decode(dec, insert_plain, sizeof insert_plain,
				    &m));
	assert_false(m.has_xid);
	assert_int_equal(m.u.insert.relid, 16384);
	assert_true(pgoutput_decode(dec, commit->bytes, commit->len, &m));
	assert_true(pgoutput_decode(dec, scommit->bytes, scommit->len, &m));
	assert_false(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

/* In version 1 there are no streams, so no Xid field, ever. */
static void test_no_xid_in_version_1(void **state)
{
	const Vector *ins = vector_find("insert_v1");
	PgoDecoder *dec = pgoutput_decoder_new(1, false);
	PgoMessage m;

	assert_true(pgoutput_decode(dec, ins->bytes, ins->len, &m));
	assert_false(m.has_xid);
	assert_false(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

static void test_failed_decode_keeps_stream_state(void **state)
{
	const Vector *start = vector_find("stream_start_v2");
	uint8_t stop_long[] = { 0x45, 0x00 };
	uint8_t start_long[8];
	PgoDecoder *dec = pgoutput_decoder_new(2, false);
	PgoMessage m;

	memcpy(start_long, start->bytes, start->len);
	start_long[start->len] = 0;
	assert_false(pgoutput_decode(dec, start_long, start->len + 1, &m));
	assert_false(pgoutput_in_stream(dec));
	assert_false(pgoutput_decode(dec, start->bytes, start->len - 1, &m));
	assert_false(pgoutput_in_stream(dec));
	assert_true(pgoutput_decode(dec, start->bytes, start->len, &m));
	assert_true(pgoutput_in_stream(dec));
	assert_false(pgoutput_decode(dec, stop_long, sizeof stop_long, &m));
	assert_string_equal(pgoutput_error(dec),
			    "malformed Stream Stop message: 1 trailing byte at byte offset 1");
	assert_true(pgoutput_in_stream(dec));
	assert_false(pgoutput_decode(dec, stop_long, 0, &m));
	assert_true(pgoutput_in_stream(dec));
	assert_true(pgoutput_decode(dec, stop_long, 1, &m));
	assert_false(pgoutput_in_stream(dec));
	pgoutput_decoder_free(dec);
}

/* --- memory ---------------------------------------------------------- */

static void test_arrays_reused(void **state)
{
	const Vector *wide = vector_find("insert_v1");
	const Vector *narrow = vector_find("delete_v1_key");
	const Vector *upd = vector_find("update_v1_key");
	const Vector *rel1 = vector_find("relation_v1_default");
	const Vector *rel2 = vector_find("relation_v1_full");
	const Vector *tr = vector_find("truncate_v1");
	PgoDecoder *dec = pgoutput_decoder_new(1, false);
	const PgoValue *newcols, *oldcols;
	const PgoColumn *relcols;
	const uint32_t *relids;
	PgoMessage m;
	int round;

	assert_true(pgoutput_decode(dec, wide->bytes, wide->len, &m));
	newcols = m.u.insert.newtup.cols;
	assert_true(pgoutput_decode(dec, narrow->bytes, narrow->len, &m));
	oldcols = m.u.delete.oldtup.cols;
	assert_true(pgoutput_decode(dec, rel1->bytes, rel1->len, &m));
	relcols = m.u.relation.cols;
	assert_true(pgoutput_decode(dec, tr->bytes, tr->len, &m));
	relids = m.u.truncate.relids;

	for (round = 0; round < 3; round++) {
		assert_true(pgoutput_decode(dec, upd->bytes, upd->len, &m));
		assert_ptr_equal(m.u.update.oldtup.cols, oldcols);
		assert_ptr_equal(m.u.update.newtup.cols, newcols);
		assert_true(pgoutput_decode(dec, rel2->bytes, rel2->len, &m));
		assert_ptr_equal(m.u.relation.cols, relcols);
		assert_true(pgoutput_decode(dec, tr->bytes, tr->len, &m));
		assert_ptr_equal(m.u.truncate.relids, relids);
		assert_true(pgoutput_decode(dec, wide->bytes, wide->len, &m));
		assert_ptr_equal(m.u.insert.newtup.cols, newcols);
	}
	pgoutput_decoder_free(dec);
	pgoutput_decoder_free(NULL);
}

/* A relation of 1600 columns (PostgreSQL's maximum) and a row of it. */
static void test_wide_relation_and_row(void **state)
{
	enum { NCOLS = 1600 };
	uint8_t *rel = malloc(32 + (size_t) NCOLS * 16);
	uint8_t *row = malloc(16 + (size_t) NCOLS * 6);
	PgoDecoder *dec = pgoutput_decoder_new(1, false);
	size_t n = 0, k = 0;
	PgoMessage m;
	int i;

	assert_non_null(rel);
	assert_non_null(row);
	memcpy(rel, "R\0\0\x40\0p\0w\0f", 10);
	n = 10;
	rel[n++] = NCOLS >> 8;
	rel[n++] = NCOLS & 0xff;
	for (i = 0; i < NCOLS; i++) {
		n += (size_t) sprintf((char *) rel + n, "%cc%d", 1, i) + 1;
		memcpy(rel + n, "\0\0\0\x19\xff\xff\xff\xff", 8);
		n += 8;
	}
	assert_true(pgoutput_decode(dec, rel, n, &m));
	assert_int_equal(m.u.relation.ncols, NCOLS);
	assert_string_equal(m.u.relation.cols[NCOLS - 1].name, "c1599");

	memcpy(row, "I\0\0\x40\0N", 6);
	k = 6;
	row[k++] = NCOLS >> 8;
	row[k++] = NCOLS & 0xff;
	for (i = 0; i < NCOLS; i++) {
		memcpy(row + k, "t\0\0\0\1", 5);
		row[k + 5] = (uint8_t) ('0' + i % 10);
		k += 6;
	}
	assert_true(pgoutput_decode(dec, row, k, &m));
	assert_int_equal(m.u.insert.newtup.ncols, NCOLS);
	assert_value(&m.u.insert.newtup.cols[NCOLS - 1], 't', "9", 1);
	free(rel);
	free(row);
	pgoutput_decoder_free(dec);
}

static void test_msg_names(void **state)
{
	assert_string_equal(pgoutput_msg_name(PGO_BEGIN), "Begin");
	assert_string_equal(pgoutput_msg_name(PGO_MESSAGE), "Message");
	assert_string_equal(pgoutput_msg_name(PGO_COMMIT), "Commit");
	assert_string_equal(pgoutput_msg_name(PGO_ORIGIN), "Origin");
	assert_string_equal(pgoutput_msg_name(PGO_RELATION), "Relation");
	assert_string_equal(pgoutput_msg_name(PGO_TYPE), "Type");
	assert_string_equal(pgoutput_msg_name(PGO_INSERT), "Insert");
	assert_string_equal(pgoutput_msg_name(PGO_UPDATE), "Update");
	assert_string_equal(pgoutput_msg_name(PGO_DELETE), "Delete");
	assert_string_equal(pgoutput_msg_name(PGO_TRUNCATE), "Truncate");
	assert_string_equal(pgoutput_msg_name(PGO_STREAM_START),
			    "Stream Start");
	assert_string_equal(pgoutput_msg_name(PGO_STREAM_STOP), "Stream Stop");
	assert_string_equal(pgoutput_msg_name(PGO_STREAM_COMMIT),
			    "Stream Commit");
	assert_string_equal(pgoutput_msg_name(PGO_STREAM_ABORT),
			    "Stream Abort");
	assert_string_equal(pgoutput_msg_name(PGO_BEGIN_PREPARE),
			    "Begin Prepare");
	assert_string_equal(pgoutput_msg_name(PGO_PREPARE), "Prepare");
	assert_string_equal(pgoutput_msg_name(PGO_COMMIT_PREPARED),
			    "Commit Prepared");
	assert_string_equal(pgoutput_msg_name(PGO_ROLLBACK_PREPARED),
			    "Rollback Prepared");
	assert_string_equal(pgoutput_msg_name(PGO_STREAM_PREPARE),
			    "Stream Prepare");
	assert_string_equal(pgoutput_msg_name('Z'), "unknown");
	assert_string_equal(pgoutput_msg_name(-1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* every message type, every layout */
		cmocka_unit_test(test_begin),
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_message_empty),
		cmocka_unit_test(test_message_stream),
		cmocka_unit_test(test_commit),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_origin_stream),
		cmocka_unit_test(test_relation_default),
		cmocka_unit_test(test_relation_nothing),
		cmocka_unit_test(test_relation_full),
		cmocka_unit_test(test_relation_index),
		cmocka_unit_test(test_relation_stream),
		cmocka_unit_test(test_type),
		cmocka_unit_test(test_type_stream),
		cmocka_unit_test(test_insert),
		cmocka_unit_test(test_insert_stream),
		cmocka_unit_test(test_insert_stream_v4),
		cmocka_unit_test(test_update),
		cmocka_unit_test(test_update_key),
		cmocka_unit_test(test_update_old),
		cmocka_unit_test(test_update_stream),
		cmocka_unit_test(test_delete_key),
		cmocka_unit_test(test_delete_old),
		cmocka_unit_test(test_delete_stream),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_truncate_stream),
		cmocka_unit_test(test_stream_start),
		cmocka_unit_test(test_stream_start_v4),
		cmocka_unit_test(test_stream_stop),
		cmocka_unit_test(test_stream_commit),
		cmocka_unit_test(test_stream_abort),
		cmocka_unit_test(test_stream_abort_v4),
		cmocka_unit_test(test_stream_abort_v4_parallel),
		cmocka_unit_test(test_begin_prepare),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_commit_prepared),
		cmocka_unit_test(test_rollback_prepared),
		cmocka_unit_test(test_stream_prepare),
		/* the whole table */
		cmocka_unit_test(test_vectors_cover_every_type),
		cmocka_unit_test(test_every_vector_decodes),
		cmocka_unit_test(test_every_vector_decodes_in_later_versions),
		cmocka_unit_test(test_every_prefix_fails),
		cmocka_unit_test(test_every_vector_with_trailing_byte_fails),
		/* exact errors */
		cmocka_unit_test(test_error_empty),
		cmocka_unit_test(test_error_unknown_type),
		cmocka_unit_test(test_error_unsupported_version),
		cmocka_unit_test(test_error_insert_truncated),
		cmocka_unit_test(test_error_truncate_trailing),
		cmocka_unit_test(test_error_unexpected_tuple_type),
		cmocka_unit_test(test_error_unknown_column_kind),
		cmocka_unit_test(test_error_negative_column_length),
		cmocka_unit_test(test_error_column_length_past_end),
		cmocka_unit_test(test_error_huge_ncols),
		cmocka_unit_test(test_error_huge_nrels),
		cmocka_unit_test(test_error_message_content_length),
		cmocka_unit_test(test_error_unterminated_string),
		cmocka_unit_test(test_error_replica_identity),
		cmocka_unit_test(test_error_flags),
		/* streams and versions */
		cmocka_unit_test(test_error_stream_start_in_stream),
		cmocka_unit_test(test_error_stream_stop_outside_stream),
		cmocka_unit_test(test_error_transaction_messages_in_stream),
		cmocka_unit_test(test_error_message_needs_newer_version),
		cmocka_unit_test(test_abort_info_needs_version_4),
		cmocka_unit_test(test_stream_sequence),
		cmocka_unit_test(test_no_xid_in_version_1),
		cmocka_unit_test(test_failed_decode_keeps_stream_state),
		/* memory */
		cmocka_unit_test(test_arrays_reused),
		cmocka_unit_test(test_wide_relation_and_row),
		cmocka_unit_test(test_msg_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

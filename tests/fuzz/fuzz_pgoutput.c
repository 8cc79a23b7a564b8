/*
 * fuzz_pgoutput.c: libFuzzer target for the frame layer and the pgoutput
 * decoder, linked against the real objects of libpgmirror.a.
 *
 * Input: one selector byte, then the bytes to decode (tests/unit/vectors.h
 * defines the selector; tests/unit/make_corpus writes the seeds):
 *
 *	bits 0-1  protocol version - 1
 *	bit 2     decode a Stream Start first, so the input lands in a stream
 *	bit 3     abort_info (streaming = parallel)
 *	bit 4     the rest is a sequence of messages, each Int16 length-
 *	          prefixed, decoded in turn with one decoder, so that stream
 *	          state carries from one to the next
 *
 * The rest is also decoded as a CopyData frame, and the data of an
 * XLogData frame as a message; and as a row of a binary COPY, each field
 * read as each type that format is read for. Beyond what ASan and UBSan catch, the
 * target traps when a decoded value points outside the input, when a
 * failure leaves no error text, or when a failure moves the stream state.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_binary.h"
#include "pgmirror/frame.h"
#include "pgmirror/pgoutput.h"
#include "pgmirror/values.h"
#include "../unit/vectors.h" /* FUZZ_SEL_*, shared with the seeds */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The types a binary COPY reads, with the typmod of a numeric(10,2). */
static const struct { uint32_t oid; int32_t typmod; } fuzz_binary_types[] = {
	{ 16, -1 }, { 17, -1 }, { 19, -1 }, { 20, -1 }, { 21, -1 }, { 23, -1 }, { 25, -1 },
	{ 26, -1 }, { 114, -1 }, { 701, -1 }, { 1042, -1 }, { 1043, -1 }, { 1082, -1 },
	{ 1114, -1 }, { 1184, -1 }, { 1700, -1 }, { 1700, (10 << 16 | 2) + 4 }, { 2950, -1 },
	{ 3802, -1 }, { 700, -1 }, { 1083, -1 }, { 1266, -1 }, { 1186, -1 }, { 869, -1 },
	{ 650, -1 }, { 1007, -1 }, { 1009, -1 }, { 1021, -1 }, { 1022, -1 }, { 1187, -1 },
	{ 1041, -1 }, { 1185, -1 },
};

/* Stream Start for xid 745, first segment. */
static const uint8_t fuzz_stream_start[] = {
	0x53, 0x00, 0x00, 0x02, 0xe9, 0x01,
};

static void fuzz_check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

static bool fuzz_inside(const void *p, size_t n, const uint8_t *buf,
			size_t len)
{
	const uint8_t *q = p;

	if (n == 0)
		return true;
	if (buf == NULL) /* an empty ValueBuf's: nothing is inside it */
		return false;
	return q >= buf && q <= buf + len && n <= (size_t) (buf + len - q);
}

static void fuzz_check_string(const char *s, const uint8_t *buf, size_t len)
{
	fuzz_check(fuzz_inside(s, 1, buf, len));
	fuzz_check(fuzz_inside(s, strlen(s) + 1, buf, len));
}

static void fuzz_check_tuple(const PgoTuple *t, const uint8_t *buf,
			     size_t len)
{
	uint16_t i;

	for (i = 0; i < t->ncols; i++) {
		const PgoValue *v = &t->cols[i];

		fuzz_check(strchr("nutb", v->kind) != NULL && v->kind != 0);
		if (v->kind == PGO_COL_TEXT || v->kind == PGO_COL_BINARY)
			fuzz_check(fuzz_inside(v->data, v->len, buf, len));
		else
			fuzz_check(v->data == NULL && v->len == 0);
	}
}

/* Every borrowed pointer of a decoded message lies inside its buffer. */
static void fuzz_check_message(const PgoMessage *m, const uint8_t *buf,
			       size_t len)
{
	uint16_t i;

	switch (m->type) {
	case PGO_MESSAGE:
		fuzz_check_string(m->u.message.prefix, buf, len);
		fuzz_check(fuzz_inside(m->u.message.content,
				       m->u.message.content_len, buf, len));
		break;
	case PGO_ORIGIN:
		fuzz_check_string(m->u.origin.name, buf, len);
		break;
	case PGO_RELATION:
		fuzz_check_string(m->u.relation.nspname, buf, len);
		fuzz_check_string(m->u.relation.relname, buf, len);
		for (i = 0; i < m->u.relation.ncols; i++)
			fuzz_check_string(m->u.relation.cols[i].name, buf, len);
		break;
	case PGO_TYPE:
		fuzz_check_string(m->u.type.nspname, buf, len);
		fuzz_check_string(m->u.type.typname, buf, len);
		break;
	case PGO_INSERT:
		fuzz_check_tuple(&m->u.insert.newtup, buf, len);
		break;
	case PGO_UPDATE:
		if (m->u.update.old_kind != 0)
			fuzz_check_tuple(&m->u.update.oldtup, buf, len);
		fuzz_check_tuple(&m->u.update.newtup, buf, len);
		break;
	case PGO_DELETE:
		fuzz_check_tuple(&m->u.delete.oldtup, buf, len);
		break;
	case PGO_TRUNCATE:
		fuzz_check(m->u.truncate.nrelids <= len / 4);
		break;
	case PGO_BEGIN_PREPARE:
	case PGO_PREPARE:
	case PGO_STREAM_PREPARE:
		fuzz_check_string(m->u.prepare.gid, buf, len);
		break;
	case PGO_COMMIT_PREPARED:
		fuzz_check_string(m->u.commit_prepared.gid, buf, len);
		break;
	case PGO_ROLLBACK_PREPARED:
		fuzz_check_string(m->u.rollback_prepared.gid, buf, len);
		break;
	default:
		break;
	}
}

static void fuzz_decode(PgoDecoder *dec, const uint8_t *buf, size_t len)
{
	bool in_stream = pgoutput_in_stream(dec);
	PgoMessage m;

	if (pgoutput_decode(dec, buf, len, &m)) {
		fuzz_check(m.type == buf[0]);
		fuzz_check_message(&m, buf, len);
		if (m.type == PGO_STREAM_START)
			fuzz_check(pgoutput_in_stream(dec));
		else if (m.type == PGO_STREAM_STOP)
			fuzz_check(!pgoutput_in_stream(dec));
		else
			fuzz_check(pgoutput_in_stream(dec) == in_stream);
	} else {
		fuzz_check(pgoutput_error(dec)[0] != '\0');
		fuzz_check(pgoutput_in_stream(dec) == in_stream);
	}
}

/*
 * The input as a binary COPY row of 1 to 8 fields (the selector's low bits)
 * after a header, and each field read as every type a binary COPY reads:
 * the fields lie inside the input, a failure says why, a value that is
 * text or a blob lies inside the input or the scratch buffer (or is a
 * constant: the empty value, float8's NaN).
 */
static void fuzz_copy_binary(uint8_t sel, const uint8_t *body, size_t n)
{
	static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	uint8_t *msg = malloc(sizeof header + n);
	PgoValue vals[8];
	int ncols = (sel & 7) + 1, r;
	CopyBinary st;
	char err[256];

	if (msg == NULL)
		return;
	memcpy(msg, header, sizeof header);
	memcpy(msg + sizeof header, body, n);
	copy_binary_start(&st);
	err[0] = '\0';
	r = copy_binary_row(&st, (const char *)msg, sizeof header + n, vals, ncols, err,
			    sizeof err);
	fuzz_check(r >= 0 || err[0] != '\0');
	for (int i = 0; r == 1 && i < ncols; i++) {
		if (vals[i].kind == PGO_COL_NULL)
			continue;
		fuzz_check(fuzz_inside(vals[i].data, vals[i].len, msg, sizeof header + n));
		for (size_t k = 0; k < sizeof fuzz_binary_types / sizeof fuzz_binary_types[0]; k++) {
			ColumnType t;
			ValueBuf buf = { 0 };
			Value v;

			fuzz_check(values_builtin_type(fuzz_binary_types[k].oid,
						       fuzz_binary_types[k].typmod, &t));
			err[0] = '\0';
			/* the newest server: every type of the set is read */
			if (values_convert_binary(fuzz_binary_types[k].oid, t, 180000,
						  (const char *)vals[i].data, vals[i].len, &buf, &v,
						  err, sizeof err)) {
				if (v.kind == VAL_TEXT || v.kind == VAL_BLOB)
					fuzz_check(fuzz_inside(v.p, v.len, msg, sizeof header + n) ||
						   fuzz_inside(v.p, v.len, (const uint8_t *)buf.data,
							       buf.len) ||
						   v.len == 0 || /* values_empty */
						   (v.len == 3 && memcmp(v.p, "NaN", 3) == 0));
			} else {
				fuzz_check(err[0] != '\0');
			}
			values_buf_free(&buf);
		}
	}
	free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *body;
	PgoDecoder *dec;
	uint8_t sel;
	char err[128];
	Frame frame;
	size_t n;

	if (size == 0)
		return 0;
	sel = data[0];
	body = data + 1;
	n = size - 1;

	dec = pgoutput_decoder_new((sel & FUZZ_SEL_VERSION) + 1,
				   (sel & FUZZ_SEL_ABORT_INFO) != 0);
	if (sel & FUZZ_SEL_IN_STREAM)
		fuzz_decode(dec, fuzz_stream_start, sizeof fuzz_stream_start);

	if (sel & FUZZ_SEL_SEQUENCE) {
		size_t pos = 0;

		while (n - pos >= 2) {
			size_t len = (size_t) body[pos] << 8 | body[pos + 1];

			pos += 2;
			if (len > n - pos)
				len = n - pos;
			fuzz_decode(dec, body + pos, len);
			pos += len;
		}
	} else {
		fuzz_decode(dec, body, n);
	}

	err[0] = '\0';
	if (frame_decode(body, n, &frame, err, sizeof err)) {
		fuzz_check(frame.type == FRAME_XLOGDATA ||
			   frame.type == FRAME_KEEPALIVE);
		if (frame.type == FRAME_XLOGDATA) {
			fuzz_check(fuzz_inside(frame.data, frame.len, body, n));
			fuzz_decode(dec, frame.data, frame.len);
		}
	} else {
		fuzz_check(err[0] != '\0');
	}

	pgoutput_decoder_free(dec);
	fuzz_copy_binary(sel, body, n);
	return 0;
}

/*
 * copy_binary.c: the messages of COPY's binary format, as COPY ... TO
 * STDOUT (FORMAT binary) sends them, split into their fields
 * (copy_binary.h). Pure: the copy's reader thread uses it on the rows it
 * receives, and values_convert_binary() reads each field. The format is
 * that of PostgreSQL's manual, "COPY", "Binary Format".
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pgmirror/copy_binary.h"

/* "PGCOPY\n\377\r\n\0", then the flags and the header extension's length. */
static const char signature[11] = "PGCOPY\n\377\r\n";
#define HEADER_LEN (sizeof signature + 8)

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void copy_binary_start(CopyBinary *st)
{
	st->header_seen = false;
	st->ended = false;
}

static int fail(char *err, size_t errsize, const char *what, size_t at)
{
	snprintf(err, errsize, "%s at byte %zu", what, at);
	return -1;
}

int copy_binary_row(CopyBinary *st, const char *msg, size_t len, PgoValue *vals, int ncols,
		    char *err, size_t errsize)
{
	const unsigned char *p = (const unsigned char *)msg;
	size_t pos = 0;
	int n;

	if (st->ended)
		return fail(err, errsize, "data after the end of the binary COPY", 0);
	if (!st->header_seen) {
		uint32_t ext;

		if (len < HEADER_LEN || memcmp(p, signature, sizeof signature) != 0)
			return fail(err, errsize, "no binary COPY signature", 0);
		if (get32(p + sizeof signature) != 0)
			return fail(err, errsize, "unknown binary COPY flags", sizeof signature);
		ext = get32(p + sizeof signature + 4);
		if (ext > len - HEADER_LEN)
			return fail(err, errsize, "binary COPY header extension past the end",
				    sizeof signature + 4);
		pos = HEADER_LEN + ext;
		st->header_seen = true;
		if (pos == len)
			return 0; /* a header in a message of its own */
	}
	if (len - pos < 2)
		return fail(err, errsize, "binary COPY row without a field count", pos);
	n = (int16_t)(p[pos] << 8 | p[pos + 1]);
	pos += 2;
	if (n == -1) {
		if (pos != len)
			return fail(err, errsize, "bytes after the binary COPY trailer", pos);
		st->ended = true;
		return 0;
	}
	if (n != ncols) {
		snprintf(err, errsize, "binary COPY row of %d fields, not %d", n, ncols);
		return -1;
	}
	for (int i = 0; i < ncols; i++) {
		int32_t flen;

		if (len - pos < 4)
			return fail(err, errsize, "binary COPY field without a length", pos);
		flen = (int32_t)get32(p + pos);
		pos += 4;
		if (flen == -1) {
			vals[i].kind = PGO_COL_NULL;
			vals[i].len = 0;
			vals[i].data = NULL;
			continue;
		}
		if (flen < 0 || (size_t)flen > len - pos)
			return fail(err, errsize, "binary COPY field past the end of its row", pos - 4);
		vals[i].kind = PGO_COL_BINARY;
		vals[i].len = (uint32_t)flen;
		vals[i].data = (const uint8_t *)msg + pos;
		pos += (size_t)flen;
	}
	if (pos != len)
		return fail(err, errsize, "bytes after the binary COPY row", pos);
	return 1;
}

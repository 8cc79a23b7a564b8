/*
 * make_corpus.c: writes the fuzz seed corpus from the golden vectors.
 *
 *	tests/unit/make_corpus DIR    (or: make fuzz-corpus)
 *
 * One file per vector, named after it: the fuzz selector byte of the
 * vector (version, in-stream, abort_info) and then its bytes. Three more
 * seeds reach the paths a lone message does not: an XLogData frame around
 * an Insert, a keepalive frame, and a sequence that opens and closes a
 * stream.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vectors.h"

static int corpus_write(const char *dir, const char *name, uint8_t sel,
			const uint8_t *bytes, size_t len)
{
	char path[4096];
	FILE *f;
	int rc = -1;

	if (snprintf(path, sizeof path, "%s/%s", dir, name) >=
	    (int) sizeof path) {
		fprintf(stderr, "make_corpus: path too long: %s/%s\n", dir,
			name);
		return -1;
	}
	f = fopen(path, "wb");
	if (f == NULL) {
		fprintf(stderr, "make_corpus: could not open \"%s\": %s\n",
			path, strerror(errno));
		return -1;
	}
	if (fputc(sel, f) == EOF || fwrite(bytes, 1, len, f) != len) {
		fprintf(stderr, "make_corpus: could not write \"%s\": %s\n",
			path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fclose(f) != 0 && rc == 0) {
		fprintf(stderr, "make_corpus: could not write \"%s\": %s\n",
			path, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* Appends an Int16 length and the vector's bytes. */
static size_t corpus_append(uint8_t *buf, size_t pos, const Vector *v)
{
	buf[pos++] = (uint8_t) (v->len >> 8);
	buf[pos++] = (uint8_t) v->len;
	memcpy(buf + pos, v->bytes, v->len);
	return pos + v->len;
}

int main(int argc, char **argv)
{
	static const uint8_t xlogdata_header[] = {
		0x77,                                           /* 'w' */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x00, /* start */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x38, 0x00, /* end */
		0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* time */
	};
	static const uint8_t keepalive[] = {
		0x6b,                                           /* 'k' */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x38, 0x00, /* end */
		0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* time */
		0x01,                                           /* reply */
	};
	const Vector *insert = vector_find("insert_v1");
	const Vector *start = vector_find("stream_start_v2");
	const Vector *stream_insert = vector_find("insert_stream_v2");
	const Vector *stop = vector_find("stream_stop_v2");
	const Vector *commit = vector_find("stream_commit_v2");
	uint8_t buf[512];
	size_t i, n;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: make_corpus DIR\n");
		return 2;
	}
	if (insert == NULL || start == NULL || stream_insert == NULL ||
	    stop == NULL || commit == NULL) {
		fprintf(stderr, "make_corpus: a vector is missing\n");
		return 1;
	}
	for (i = 0; i < n_vectors; i++)
		if (corpus_write(argv[1], vectors[i].name,
				 vector_fuzz_selector(&vectors[i]),
				 vectors[i].bytes, vectors[i].len) != 0)
			rc = 1;

	memcpy(buf, xlogdata_header, sizeof xlogdata_header);
	memcpy(buf + sizeof xlogdata_header, insert->bytes, insert->len);
	if (corpus_write(argv[1], "frame_xlogdata_insert_v1",
			 vector_fuzz_selector(insert), buf,
			 sizeof xlogdata_header + insert->len) != 0)
		rc = 1;
	if (corpus_write(argv[1], "frame_keepalive", 0, keepalive,
			 sizeof keepalive) != 0)
		rc = 1;

	n = corpus_append(buf, 0, start);
	n = corpus_append(buf, n, stream_insert);
	n = corpus_append(buf, n, stop);
	n = corpus_append(buf, n, commit);
	if (corpus_write(argv[1], "sequence_stream_v2",
			 vector_fuzz_selector(start) | FUZZ_SEL_SEQUENCE, buf,
			 n) != 0)
		rc = 1;
	return rc;
}

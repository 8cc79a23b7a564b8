/*
 * vectors.h: golden pgoutput messages, written by hand from the manual's
 * "Logical Replication Message Formats", shared by the decoder's unit
 * tests and the generator of the fuzz seed corpus.
 */
#ifndef PGMIRROR_TEST_VECTORS_H
#define PGMIRROR_TEST_VECTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Vector {
	const char *name;     /* unique; also the corpus file name */
	int proto_version;    /* for pgoutput_decoder_new() */
	bool in_stream;       /* decoded after a Stream Start */
	bool abort_info;      /* for pgoutput_decoder_new() */
	const uint8_t *bytes; /* the message, type byte first */
	size_t len;
} Vector;

extern const Vector vectors[];
extern const size_t n_vectors;

/* The vector called name; NULL if there is none. */
const Vector *vector_find(const char *name);

/*
 * The Stream Start (xid 745) that puts a decoder in a stream before an
 * in_stream vector.
 */
extern const uint8_t vector_stream_start[];
extern const size_t vector_stream_start_len;

/*
 * A fuzz input is one selector byte and then the bytes to decode. The
 * selector sets up the decoders (tests/fuzz/fuzz_pgoutput.c); a seed file
 * is the selector of its vector followed by the vector's bytes.
 */
#define FUZZ_SEL_VERSION 0x03    /* proto_version - 1 */
#define FUZZ_SEL_IN_STREAM 0x04  /* decode a Stream Start first */
#define FUZZ_SEL_ABORT_INFO 0x08 /* streaming = parallel */
#define FUZZ_SEL_SEQUENCE 0x10   /* the rest is Int16-length-prefixed messages */

static inline uint8_t vector_fuzz_selector(const Vector *v)
{
	return (uint8_t) (((v->proto_version - 1) & FUZZ_SEL_VERSION) |
			  (v->in_stream ? FUZZ_SEL_IN_STREAM : 0) |
			  (v->abort_info ? FUZZ_SEL_ABORT_INFO : 0));
}

#endif

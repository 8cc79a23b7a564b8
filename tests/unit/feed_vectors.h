/*
 * feed_vectors.h: golden records of a segment, written by hand from
 * docs/feed.md ("A segment") and not by pgmirror's encoder, and the
 * helpers the feed's tests share: a record over a copy of exactly its
 * bytes (so that ASan and valgrind see any read past the end), and a
 * vector's own length field checked against its size.
 *
 * Together, in order, the seven records below are a whole segment of one
 * group (group 7, from 0/16B3700 to 0/16B3778) of the feed whose epoch is
 * EPOCH_TEXT: H R A M O C E.
 */
#ifndef PGMIRROR_FEED_VECTORS_H
#define PGMIRROR_FEED_VECTORS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/feed_format.h"

#define EPOCH_TEXT "5f0c2d6e9b1a47c3a8e4d2b6c9f01a37"
#define EPOCH_BYTES \
	0x35, 0x66, 0x30, 0x63, 0x32, 0x64, 0x36, 0x65, 0x39, 0x62, 0x31, 0x61, 0x34, 0x37, \
	0x63, 0x33, 0x61, 0x38, 0x65, 0x34, 0x64, 0x32, 0x62, 0x36, 0x63, 0x39, 0x66, 0x30, \
	0x31, 0x61, 0x33, 0x37
/* 2024-05-06 07:08:09.123456 and 07:08:10.000001 UTC, µs since 2000. */
#define T1 INT64_C(768294489123456)
#define T2 INT64_C(768294490000001)

/* H: version 1, the epoch, first group 7 at 0/16B3700, PostgreSQL
 * 150018, protocol 2, binary. */
static const uint8_t vec_header[] = {
	0x48, 0x00, 0x00, 0x00, 0x3c,                   /* 'H', length 60 */
	0x00, 0x01,                                     /* u16 version 1 */
	0x00, 0x00, 0x00, 0x20, EPOCH_BYTES,            /* str epoch (32) */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* u64 first group 7 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x00, /* u64 start 0/16B3700 */
	0x00, 0x02, 0x4a, 0x02,                         /* u32 server_version 150018 */
	0x02,                                           /* u8 protocol 2 */
	0x01,                                           /* u8 binary */
};

/* R: at 0/16B3748, pgoutput's Relation of "public"."t" (16384): one key
 * column "id" int4, REPLICA IDENTITY DEFAULT. */
static const uint8_t vec_relation[] = {
	0x52, 0x00, 0x00, 0x00, 0x25,                   /* 'R', length 37 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* u64 LSN 0/16B3748 */
	0x52,                                           /* Relation */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x00,       /* "public" */
	0x74, 0x00,                                     /* "t" */
	0x64,                                           /* identity 'd' */
	0x00, 0x01,                                     /* 1 column */
	0x01, 0x69, 0x64, 0x00,                         /* key, "id" */
	0x00, 0x00, 0x00, 0x17, 0xff, 0xff, 0xff, 0xff, /* int4, typmod -1 */
};

/* A: question 1, type 16385 is the enum "mood" (delimiter ','). */
static const uint8_t vec_answer[] = {
	0x41, 0x00, 0x00, 0x00, 0x1b,                   /* 'A', length 27 */
	0x01,                                           /* question 1: type */
	0x00, 0x00, 0x40, 0x01,                         /* u32 type 16385 */
	0x00, 0x00, 0x00, 0x04, 0x6d, 0x6f, 0x6f, 0x64, /* ostr "mood" */
	0x65,                                           /* u8 typtype 'e' */
	0x00, 0x00, 0x00, 0x00,                         /* u32 base type 0 */
	0xff, 0xff, 0xff, 0xff,                         /* i32 typmod -1 */
	0x00, 0x00, 0x00, 0x00,                         /* u32 element 0 */
	0x2c,                                           /* u8 delimiter ',' */
};

/* M: at 0/16B3750, pgoutput's Begin of xid 745, committing at 0/16B3748
 * at T1. */
static const uint8_t vec_message[] = {
	0x4d, 0x00, 0x00, 0x00, 0x1d,                   /* 'M', length 29 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x50, /* u64 LSN 0/16B3750 */
	0x42,                                           /* Begin */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* final LSN */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* commit time T1 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
};

/* O: operation 4, the copy of 16384 is whole. */
static const uint8_t vec_op[] = {
	0x4f, 0x00, 0x00, 0x00, 0x05,                   /* 'O', length 5 */
	0x04,                                           /* copy end */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
};

/* C: group 7 ends; confirmed 0/16B3778; last commit at T2. */
static const uint8_t vec_group_end[] = {
	0x43, 0x00, 0x00, 0x00, 0x18,                   /* 'C', length 24 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* u64 group 7 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* u64 0/16B3778 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x28, 0xca, 0x81, /* i64 T2 */
};

/* E: 1 group, the last 7, ending at 0/16B3778. */
static const uint8_t vec_segment_end[] = {
	0x45, 0x00, 0x00, 0x00, 0x18,                   /* 'E', length 24 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* u64 1 group */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* u64 last group 7 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* u64 end 0/16B3778 */
};

typedef struct Vec {
	const char *name;
	const uint8_t *bytes;
	size_t len;
} Vec;

#define VEC(v) {#v, v, sizeof v}

/* The segment's records, in order. */
static const Vec segment_records[] = {
	VEC(vec_header), VEC(vec_relation), VEC(vec_answer), VEC(vec_message),
	VEC(vec_op), VEC(vec_group_end), VEC(vec_segment_end),
};
#define N_SEGMENT_RECORDS (sizeof segment_records / sizeof segment_records[0])

/* The whole segment, malloc'd; *len its size. */
static inline uint8_t *segment_bytes(size_t *len)
{
	uint8_t *buf, *p;

	*len = 0;
	for (size_t i = 0; i < N_SEGMENT_RECORDS; i++)
		*len += segment_records[i].len;
	p = buf = malloc(*len);
	for (size_t i = 0; i < N_SEGMENT_RECORDS; i++) {
		memcpy(p, segment_records[i].bytes, segment_records[i].len);
		p += segment_records[i].len;
	}
	return buf;
}

/* A record of kind over a malloc'd copy of exactly body[0..len): free
 * rec->body after. */
static inline FeedRecord record_copy(uint8_t kind, const uint8_t *body, size_t len)
{
	FeedRecord rec = {kind, 0, NULL, len};
	uint8_t *copy = malloc(len > 0 ? len : 1);

	if (len > 0)
		memcpy(copy, body, len);
	rec.body = copy;
	return rec;
}

/* The record a whole vector is (its kind and length field checked
 * against its size by the caller's assert), its body copied. */
static inline FeedRecord record_of(const uint8_t *v, size_t n)
{
	return record_copy(v[0], v + FEED_RECORD_HEAD, n - FEED_RECORD_HEAD);
}

static inline uint32_t vector_length_field(const uint8_t *v)
{
	return (uint32_t)v[1] << 24 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 8 | v[4];
}

static inline void record_free(FeedRecord *rec)
{
	free((void *)rec->body);
	rec->body = NULL;
}

#endif

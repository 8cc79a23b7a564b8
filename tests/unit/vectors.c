/*
 * vectors.c: golden pgoutput messages, one or more per message type and
 * per protocol version where the layout differs. Written byte by byte
 * from the PostgreSQL manual, "Logical Replication Message Formats", not
 * produced by any encoder, so they check the decoder against the
 * documentation and not against itself.
 *
 * Values used throughout:
 *	LSN 0/16B3748    00 00 00 00 01 6b 37 48   (a commit or prepare LSN)
 *	LSN 0/16B3778    00 00 00 00 01 6b 37 78   (the end of that record)
 *	T1  768294489123456 us = 2024-05-06 07:08:09.123456 UTC
 *	                 00 02 ba c2 80 1b 6a 80
 *	T2  768294490000001 us = 2024-05-06 07:08:10.000001 UTC
 *	                 00 02 ba c2 80 28 ca 81
 *	xid 745          00 00 02 e9;  subxid 746  00 00 02 ea
 *	relation OID 16384  00 00 40 00;  16390  00 00 40 06
 */
#include "config.h"

#include <string.h>

#include "vectors.h"

/* Begin: Int64 final LSN, Int64 commit time, Int32 xid. */
static const uint8_t begin_v1[] = {
	0x42,                                           /* 'B' */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* final LSN 0/16B3748 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* commit time T1 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
};

/*
 * Message: [Int32 xid in a stream], Int8 flags, Int64 LSN, String prefix,
 * Int32 content length, Byten content.
 */
static const uint8_t message_v1[] = {
	0x4d,                                           /* 'M' */
	0x01,                                           /* flags: transactional */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x00, /* LSN 0/16B3700 */
	0x70, 0x67, 0x6d, 0x00,                         /* prefix "pgm" */
	0x00, 0x00, 0x00, 0x05,                         /* content length 5 */
	0x68, 0x65, 0x6c, 0x6c, 0x6f,                   /* "hello" */
};

static const uint8_t message_v1_empty[] = {
	0x4d,                                           /* 'M' */
	0x00,                                           /* flags: none */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x10, /* LSN 0/16B3710 */
	0x78, 0x00,                                     /* prefix "x" */
	0x00, 0x00, 0x00, 0x00,                         /* content length 0 */
};

static const uint8_t message_stream_v2[] = {
	0x4d,                                           /* 'M' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x01,                                           /* flags: transactional */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x20, /* LSN 0/16B3720 */
	0x70, 0x67, 0x6d, 0x00,                         /* prefix "pgm" */
	0x00, 0x00, 0x00, 0x02,                         /* content length 2 */
	0x68, 0x69,                                     /* "hi" */
};

/* Commit: Int8 flags (0), Int64 commit LSN, Int64 end LSN, Int64 time. */
static const uint8_t commit_v1[] = {
	0x43,                                           /* 'C' */
	0x00,                                           /* flags */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* commit LSN 0/16B3748 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end LSN 0/16B3778 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* commit time T1 */
};

/* Origin: Int64 origin commit LSN, String origin name. */
static const uint8_t origin_v1[] = {
	0x4f,                                           /* 'O' */
	0x00, 0x00, 0x00, 0x01, 0x00, 0xab, 0xcd, 0xef, /* LSN 1/ABCDEF */
	0x73, 0x75, 0x62, 0x31, 0x00,                   /* "sub1" */
};

/*
 * Relation: [Int32 xid], Int32 OID, String namespace, String name, Int8
 * replica identity, Int16 ncols, then per column Int8 flags (1 = part of
 * the key), String name, Int32 type OID, Int32 type modifier.
 */
static const uint8_t relation_v1_default[] = {
	0x52,                                           /* 'R' */
	0x00, 0x00, 0x40, 0x00,                         /* OID 16384 */
	0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x00,       /* "public" */
	0x69, 0x74, 0x65, 0x6d, 0x73, 0x00,             /* "items" */
	0x64,                                           /* 'd' default */
	0x00, 0x03,                                     /* 3 columns */
	0x01,                                           /* 1: key */
	0x69, 0x64, 0x00,                               /*    "id" */
	0x00, 0x00, 0x00, 0x17,                         /*    int4 (23) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
	0x00,                                           /* 2: not key */
	0x6e, 0x61, 0x6d, 0x65, 0x00,                   /*    "name" */
	0x00, 0x00, 0x04, 0x13,                         /*    varchar (1043) */
	0x00, 0x00, 0x00, 0x44,                         /*    typmod 68: (64) */
	0x00,                                           /* 3: not key */
	0x70, 0x72, 0x69, 0x63, 0x65, 0x00,             /*    "price" */
	0x00, 0x00, 0x06, 0xa4,                         /*    numeric (1700) */
	0x00, 0x0a, 0x00, 0x06,                         /*    typmod: (10,2) */
};

static const uint8_t relation_v1_nothing[] = {
	0x52,                                           /* 'R' */
	0x00, 0x00, 0x40, 0x06,                         /* OID 16390 */
	0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x00,       /* "public" */
	0x6c, 0x6f, 0x67, 0x00,                         /* "log" */
	0x6e,                                           /* 'n' nothing */
	0x00, 0x01,                                     /* 1 column */
	0x00,                                           /* 1: not key */
	0x6c, 0x69, 0x6e, 0x65, 0x00,                   /*    "line" */
	0x00, 0x00, 0x00, 0x19,                         /*    text (25) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
};

static const uint8_t relation_v1_full[] = {
	0x52,                                           /* 'R' */
	0x00, 0x00, 0x40, 0x0a,                         /* OID 16394 */
	0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x00,       /* "public" */
	0x70, 0x61, 0x69, 0x72, 0x73, 0x00,             /* "pairs" */
	0x66,                                           /* 'f' full */
	0x00, 0x02,                                     /* 2 columns */
	0x01,                                           /* 1: key (all are) */
	0x61, 0x00,                                     /*    "a" */
	0x00, 0x00, 0x00, 0x14,                         /*    int8 (20) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
	0x01,                                           /* 2: key */
	0x62, 0x00,                                     /*    "b" */
	0x00, 0x00, 0x00, 0x19,                         /*    text (25) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
};

static const uint8_t relation_v1_index[] = {
	0x52,                                           /* 'R' */
	0x00, 0x00, 0x40, 0x10,                         /* OID 16400 */
	0x73, 0x31, 0x00,                               /* "s1" */
	0x74, 0x00,                                     /* "t" */
	0x69,                                           /* 'i' index */
	0x00, 0x03,                                     /* 3 columns */
	0x01,                                           /* 1: key */
	0x6b, 0x31, 0x00,                               /*    "k1" */
	0x00, 0x00, 0x00, 0x17,                         /*    int4 (23) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
	0x01,                                           /* 2: key */
	0x6b, 0x32, 0x00,                               /*    "k2" */
	0x00, 0x00, 0x00, 0x19,                         /*    text (25) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
	0x00,                                           /* 3: not key */
	0x76, 0x00,                                     /*    "v" */
	0x00, 0x00, 0x00, 0x11,                         /*    bytea (17) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
};

static const uint8_t relation_stream_v2[] = {
	0x52,                                           /* 'R' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x40, 0x00,                         /* OID 16384 */
	0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x00,       /* "public" */
	0x69, 0x74, 0x65, 0x6d, 0x73, 0x00,             /* "items" */
	0x64,                                           /* 'd' default */
	0x00, 0x01,                                     /* 1 column */
	0x01,                                           /* 1: key */
	0x69, 0x64, 0x00,                               /*    "id" */
	0x00, 0x00, 0x00, 0x17,                         /*    int4 (23) */
	0xff, 0xff, 0xff, 0xff,                         /*    typmod -1 */
};

/* Type: [Int32 xid], Int32 OID, String namespace, String name. */
static const uint8_t type_v1[] = {
	0x59,                                           /* 'Y' */
	0x00, 0x00, 0x40, 0x20,                         /* OID 16416 */
	0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x00,       /* "public" */
	0x6d, 0x6f, 0x6f, 0x64, 0x00,                   /* "mood" */
};

static const uint8_t type_stream_v2[] = {
	0x59,                                           /* 'Y' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x40, 0x21,                         /* OID 16417 */
	0x00,                                           /* "": pg_catalog */
	0x63, 0x6f, 0x6c, 0x6f, 0x72, 0x00,             /* "color" */
};

/*
 * Insert: [Int32 xid], Int32 relation OID, Byte1 'N', TupleData.
 * TupleData: Int16 ncols, per column 'n' | 'u' | 't' Int32 Byten |
 * 'b' Int32 Byten.
 */
static const uint8_t insert_v1[] = {
	0x49,                                           /* 'I' */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x04,                                     /* 4 columns */
	0x74, 0x00, 0x00, 0x00, 0x02, 0x34, 0x32,       /* 't' "42" */
	0x6e,                                           /* 'n' NULL */
	0x62, 0x00, 0x00, 0x00, 0x04,                   /* 'b' 4 bytes: */
	0x00, 0x00, 0x00, 0x2a,                         /*     int4 42 */
	0x75,                                           /* 'u' unchanged */
};

static const uint8_t insert_stream_v2[] = {
	0x49,                                           /* 'I' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x01,                                     /* 1 column */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x37,             /* 't' "7" */
};

static const uint8_t insert_stream_v4[] = {
	0x49,                                           /* 'I' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x40, 0x06,                         /* relation 16390 */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x00,                   /* 't' "" */
	0x6e,                                           /* 'n' NULL */
};

/*
 * Update: [Int32 xid], Int32 relation OID, optionally 'K' (key) or 'O'
 * (old row) and a TupleData, then 'N' and the new TupleData.
 */
static const uint8_t update_v1[] = {
	0x55,                                           /* 'U' */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x74, 0x00, 0x00, 0x00, 0x03, 0x6e, 0x65, 0x77, /* 't' "new" */
};

static const uint8_t update_v1_key[] = {
	0x55,                                           /* 'U' */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4b,                                           /* 'K' old key */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x6e,                                           /* 'n' not in key */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x32,             /* 't' "2" */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x78,             /* 't' "x" */
};

static const uint8_t update_v1_old[] = {
	0x55,                                           /* 'U' */
	0x00, 0x00, 0x40, 0x0a,                         /* relation 16394 */
	0x4f,                                           /* 'O' old row */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x74, 0x00, 0x00, 0x00, 0x03, 0x6f, 0x6c, 0x64, /* 't' "old" */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x75,                                           /* 'u' unchanged */
};

static const uint8_t update_stream_v2[] = {
	0x55,                                           /* 'U' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4b,                                           /* 'K' old key */
	0x00, 0x01,                                     /* 1 column */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x4e,                                           /* 'N' new tuple */
	0x00, 0x01,                                     /* 1 column */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x33,             /* 't' "3" */
};

/* Delete: [Int32 xid], Int32 relation OID, 'K' or 'O', TupleData. */
static const uint8_t delete_v1_key[] = {
	0x44,                                           /* 'D' */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4b,                                           /* 'K' old key */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x6e,                                           /* 'n' not in key */
};

static const uint8_t delete_v1_old[] = {
	0x44,                                           /* 'D' */
	0x00, 0x00, 0x40, 0x0a,                         /* relation 16394 */
	0x4f,                                           /* 'O' old row */
	0x00, 0x02,                                     /* 2 columns */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x31,             /* 't' "1" */
	0x74, 0x00, 0x00, 0x00, 0x03, 0x6f, 0x6c, 0x64, /* 't' "old" */
};

static const uint8_t delete_stream_v2[] = {
	0x44,                                           /* 'D' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x40, 0x00,                         /* relation 16384 */
	0x4b,                                           /* 'K' old key */
	0x00, 0x01,                                     /* 1 column */
	0x74, 0x00, 0x00, 0x00, 0x01, 0x39,             /* 't' "9" */
};

/*
 * Truncate: [Int32 xid], Int32 nrels, Int8 options (1 CASCADE, 2 RESTART
 * IDENTITY), nrels Int32 relation OIDs.
 */
static const uint8_t truncate_v1[] = {
	0x54,                                           /* 'T' */
	0x00, 0x00, 0x00, 0x02,                         /* 2 relations */
	0x03,                                           /* CASCADE | RESTART */
	0x00, 0x00, 0x40, 0x00,                         /* 16384 */
	0x00, 0x00, 0x40, 0x06,                         /* 16390 */
};

static const uint8_t truncate_stream_v2[] = {
	0x54,                                           /* 'T' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 (streamed) */
	0x00, 0x00, 0x00, 0x01,                         /* 1 relation */
	0x00,                                           /* no options */
	0x00, 0x00, 0x40, 0x00,                         /* 16384 */
};

/* Stream Start: Int32 xid, Int8 first segment (1) or not (0). */
static const uint8_t stream_start_v2[] = {
	0x53,                                           /* 'S' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x01,                                           /* first segment */
};

static const uint8_t stream_start_v4[] = {
	0x53,                                           /* 'S' */
	0x00, 0x00, 0x02, 0xeb,                         /* xid 747 */
	0x00,                                           /* a later segment */
};

/* Stream Stop: the type byte alone. */
static const uint8_t stream_stop_v2[] = {
	0x45,                                           /* 'E' */
};

/*
 * Stream Commit: Int32 xid, Int8 flags (0), Int64 commit LSN, Int64 end
 * LSN, Int64 commit time.
 */
static const uint8_t stream_commit_v2[] = {
	0x63,                                           /* 'c' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x00,                                           /* flags */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* commit LSN 0/16B3748 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end LSN 0/16B3778 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* commit time T1 */
};

/*
 * Stream Abort: Int32 xid, Int32 subxid; with protocol 4 and streaming =
 * parallel also Int64 abort LSN and Int64 abort time.
 */
static const uint8_t stream_abort_v2[] = {
	0x41,                                           /* 'A' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x00, 0x00, 0x02, 0xea,                         /* subxid 746 */
};

static const uint8_t stream_abort_v4[] = {
	0x41,                                           /* 'A' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x00, 0x00, 0x02, 0xe9,                         /* subxid 745: all of it */
};

static const uint8_t stream_abort_v4_parallel[] = {
	0x41,                                           /* 'A' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x00, 0x00, 0x02, 0xea,                         /* subxid 746 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* abort LSN 0/16B3748 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x28, 0xca, 0x81, /* abort time T2 */
};

/*
 * Begin Prepare: Int64 prepare LSN, Int64 end LSN, Int64 prepare time,
 * Int32 xid, String gid. No flags byte, unlike the other two-phase ones.
 */
static const uint8_t begin_prepare_v3[] = {
	0x62,                                           /* 'b' */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* prepare LSN */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end LSN */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* prepare time T1 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x67, 0x69, 0x64, 0x31, 0x00,                   /* gid "gid1" */
};

/* Prepare and Stream Prepare: Int8 flags (0), then as Begin Prepare. */
static const uint8_t prepare_v3[] = {
	0x50,                                           /* 'P' */
	0x00,                                           /* flags */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* prepare LSN */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end LSN */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* prepare time T1 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x67, 0x69, 0x64, 0x31, 0x00,                   /* gid "gid1" */
};

static const uint8_t stream_prepare_v3[] = {
	0x70,                                           /* 'p' */
	0x00,                                           /* flags */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* prepare LSN */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end LSN */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x28, 0xca, 0x81, /* prepare time T2 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x67, 0x69, 0x64, 0x32, 0x00,                   /* gid "gid2" */
};

/*
 * Commit Prepared: Int8 flags (0), Int64 commit LSN, Int64 end LSN, Int64
 * commit time, Int32 xid, String gid.
 */
static const uint8_t commit_prepared_v3[] = {
	0x4b,                                           /* 'K' */
	0x00,                                           /* flags */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x48, /* commit LSN */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* end LSN */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x28, 0xca, 0x81, /* commit time T2 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x67, 0x69, 0x64, 0x31, 0x00,                   /* gid "gid1" */
};

/*
 * Rollback Prepared: Int8 flags (0), Int64 end LSN of the prepared
 * transaction, Int64 end LSN of the rollback, Int64 prepare time, Int64
 * rollback time, Int32 xid, String gid.
 */
static const uint8_t rollback_prepared_v3[] = {
	0x72,                                           /* 'r' */
	0x00,                                           /* flags */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x37, 0x78, /* prepare end LSN */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x6b, 0x38, 0x00, /* rollback end 0/16B3800 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x1b, 0x6a, 0x80, /* prepare time T1 */
	0x00, 0x02, 0xba, 0xc2, 0x80, 0x28, 0xca, 0x81, /* rollback time T2 */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x67, 0x69, 0x64, 0x31, 0x00,                   /* gid "gid1" */
};

const uint8_t vector_stream_start[] = {
	0x53,                                           /* 'S' */
	0x00, 0x00, 0x02, 0xe9,                         /* xid 745 */
	0x01,                                           /* first segment */
};
const size_t vector_stream_start_len = sizeof vector_stream_start;

#define VECTOR(name, version, in_stream, abort_info) \
	{ #name, version, in_stream, abort_info, name, sizeof name }

const Vector vectors[] = {
	VECTOR(begin_v1, 1, false, false),
	VECTOR(message_v1, 1, false, false),
	VECTOR(message_v1_empty, 1, false, false),
	VECTOR(message_stream_v2, 2, true, false),
	VECTOR(commit_v1, 1, false, false),
	VECTOR(origin_v1, 1, false, false),
	{ "origin_stream_v2", 2, true, false, origin_v1, sizeof origin_v1 },
	VECTOR(relation_v1_default, 1, false, false),
	VECTOR(relation_v1_nothing, 1, false, false),
	VECTOR(relation_v1_full, 1, false, false),
	VECTOR(relation_v1_index, 1, false, false),
	VECTOR(relation_stream_v2, 2, true, false),
	VECTOR(type_v1, 1, false, false),
	VECTOR(type_stream_v2, 2, true, false),
	VECTOR(insert_v1, 1, false, false),
	VECTOR(insert_stream_v2, 2, true, false),
	VECTOR(insert_stream_v4, 4, true, true),
	VECTOR(update_v1, 1, false, false),
	VECTOR(update_v1_key, 1, false, false),
	VECTOR(update_v1_old, 1, false, false),
	VECTOR(update_stream_v2, 2, true, false),
	VECTOR(delete_v1_key, 1, false, false),
	VECTOR(delete_v1_old, 1, false, false),
	VECTOR(delete_stream_v2, 2, true, false),
	VECTOR(truncate_v1, 1, false, false),
	VECTOR(truncate_stream_v2, 2, true, false),
	VECTOR(stream_start_v2, 2, false, false),
	VECTOR(stream_start_v4, 4, false, true),
	VECTOR(stream_stop_v2, 2, true, false),
	VECTOR(stream_commit_v2, 2, false, false),
	VECTOR(stream_abort_v2, 2, false, false),
	VECTOR(stream_abort_v4, 4, false, false),
	VECTOR(stream_abort_v4_parallel, 4, false, true),
	VECTOR(begin_prepare_v3, 3, false, false),
	VECTOR(prepare_v3, 3, false, false),
	VECTOR(commit_prepared_v3, 3, false, false),
	VECTOR(rollback_prepared_v3, 3, false, false),
	VECTOR(stream_prepare_v3, 3, false, false),
};
const size_t n_vectors = sizeof vectors / sizeof vectors[0];

const Vector *vector_find(const char *name)
{
	size_t i;

	for (i = 0; i < n_vectors; i++)
		if (strcmp(vectors[i].name, name) == 0)
			return &vectors[i];
	return NULL;
}

/*
 * feed_format.h: a segment's records (docs/feed.md, "A segment"), bytes in
 * and structs out, and structs in and bytes out. Pure: no files, no
 * SQLite, no libpq.
 *
 *	record = kind (1 byte) · length (u32, big-endian) · body (length bytes)
 *
 * The writer appends whole records to a FeedBuf. The reader walks the
 * decompressed contents of a segment one record at a time, checking the
 * frame of each and the order of the whole (H first; R only before the
 * first group; groups of A, M and O records each ended by a C numbered one
 * more than the last; E after the last C and nothing after it), and hands
 * out each record as a view of its body; the typed readers below, and
 * those of feed_answer.h and feed_op.h, decode a body, read to its last
 * byte. Every damage is an error that names the record's offset in the
 * contents (the caller adds the file's name).
 */
#ifndef PGMIRROR_FEED_FORMAT_H
#define PGMIRROR_FEED_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/cursor.h"
#include "pgmirror/feed_name.h"
#include "pgmirror/util.h"

#define FEED_FORMAT_VERSION 1
#define FEED_RECORD_HEAD 5            /* kind and length */
#define FEED_BODY_MAX UINT32_MAX      /* the longest body a record can carry */

typedef enum FeedKind {
	FEED_HEADER = 'H',      /* first record: the header */
	FEED_RELATION = 'R',    /* a Relation or Type message restated */
	FEED_ANSWER = 'A',      /* a catalog answer (feed_answer.h) */
	FEED_MESSAGE = 'M',     /* a pgoutput message for the applier */
	FEED_OP = 'O',          /* an operation of the mirror's own (feed_op.h) */
	FEED_GROUP_END = 'C',   /* the end of a group */
	FEED_SEGMENT_END = 'E', /* last record */
} FeedKind;

/* "header", "relation", ..., for messages; NULL for a byte that is no kind. */
const char *feed_kind_name(int kind);

/* --- writing ---------------------------------------------------------- */

/*
 * A growable byte buffer that records are appended to. Out of memory ends
 * the program (xmalloc). A record or a string too long for its length
 * field (a body over FEED_BODY_MAX, an ostr over INT32_MAX bytes) marks
 * the buffer failed, like a stream's error flag: what is appended after
 * that is dropped, and the writer checks feed_buf_failed() once, before it
 * uses the bytes. Start from FEED_BUF_INIT or feed_buf_init().
 */
typedef struct FeedBuf {
	uint8_t *data;     /* the bytes; NULL while empty */
	size_t len;        /* bytes in data */
	size_t cap;        /* bytes allocated */
	bool failed;       /* something did not fit: err says what */
	ErrBuf err;
} FeedBuf;
#define FEED_BUF_INIT {NULL, 0, 0, false, {{0}}}

void feed_buf_init(FeedBuf *b);
void feed_buf_free(FeedBuf *b);
/* Empties b (keeping its memory) and clears a failure. */
void feed_buf_reset(FeedBuf *b);
/* Cuts b back to its first len bytes (a group taken back, a record left
 * half written when the catalog's answer failed); a failure stays. */
void feed_buf_truncate(FeedBuf *b, size_t len);
/* Marks b failed with this text, unless it failed already. */
void feed_buf_fail(FeedBuf *b, const char *fmt, ...) PGM_PRINTF(2, 3);
static inline bool feed_buf_failed(const FeedBuf *b)
{
	return b->failed;
}

void feed_buf_put(FeedBuf *b, const void *p, size_t n);
void feed_buf_put_u8(FeedBuf *b, uint8_t v);
void feed_buf_put_u16(FeedBuf *b, uint16_t v);
void feed_buf_put_u32(FeedBuf *b, uint32_t v);
void feed_buf_put_i32(FeedBuf *b, int32_t v);
void feed_buf_put_u64(FeedBuf *b, uint64_t v);
void feed_buf_put_i64(FeedBuf *b, int64_t v);
/* A str: u32 length and the bytes. */
void feed_buf_put_str(FeedBuf *b, const char *s, size_t n);
void feed_buf_put_cstr(FeedBuf *b, const char *s);
/* An ostr: i32 length (-1 when s is NULL) and the bytes. */
void feed_buf_put_ostr(FeedBuf *b, const char *s, size_t n);
void feed_buf_put_ocstr(FeedBuf *b, const char *s);

/* A record: begin() writes its kind and a length to be filled in, and
 * returns where the record starts; end() fills the length in. */
size_t feed_record_begin(FeedBuf *b, FeedKind kind);
void feed_record_end(FeedBuf *b, size_t start);

/* --- the records of this file -------------------------------------------- */

/* H: the first record. */
typedef struct FeedHeader {
	uint16_t version;                 /* FEED_FORMAT_VERSION */
	char epoch[FEED_EPOCH_LEN + 1];   /* the feed's epoch */
	uint64_t first_group;             /* the segment's first group (>= 1) */
	Lsn start_lsn;                    /* the position before it */
	uint32_t server_version;          /* the source's server_version_num */
	uint8_t proto_version;            /* pgoutput protocol of the M records */
	bool binary;                      /* values may come in binary form */
} FeedHeader;

/* R and M: a pgoutput message and its WAL position. */
typedef struct FeedMessage {
	Lsn lsn;                  /* R: of the message; M: its WAL position */
	const uint8_t *data;      /* the message's bytes; borrowed from the record */
	size_t len;               /* >= 1 */
} FeedMessage;

/* C: the end of a group. */
typedef struct FeedGroupEnd {
	uint64_t group;           /* its number in the epoch (>= 1) */
	Lsn confirmed_lsn;        /* the mirror's confirmed_lsn after it */
	int64_t commit_time;      /* µs since 2000-01-01 of the last source commit; 0: none */
} FeedGroupEnd;

/* E: the end of the segment. */
typedef struct FeedSegmentEnd {
	uint64_t ngroups;         /* groups in the segment (>= 1) */
	uint64_t last_group;      /* its last group */
	Lsn end_lsn;              /* the confirmed_lsn after it */
} FeedSegmentEnd;

void feed_put_header(FeedBuf *b, const FeedHeader *h);
void feed_put_relation(FeedBuf *b, Lsn lsn, const uint8_t *msg, size_t len);
void feed_put_message(FeedBuf *b, Lsn lsn, const uint8_t *msg, size_t len);
void feed_put_group_end(FeedBuf *b, const FeedGroupEnd *c);
void feed_put_segment_end(FeedBuf *b, const FeedSegmentEnd *e);

/* --- reading ------------------------------------------------------------ */

/* One record as the reader found it; body borrowed from the contents. */
typedef struct FeedRecord {
	uint8_t kind;             /* a FeedKind */
	size_t offset;            /* of its kind byte in the contents */
	const uint8_t *body;
	size_t len;               /* bytes in body */
} FeedRecord;

/* The offset just after rec in the contents. */
static inline size_t feed_record_next(const FeedRecord *rec)
{
	return rec->offset + FEED_RECORD_HEAD + rec->len;
}

/*
 * The typed readers of this file's records: false with a message in err
 * ("malformed header record at offset 0: truncated at body byte 2") when
 * the body is not exactly the record's fields. feed_read_header() refuses
 * a format version other than FEED_FORMAT_VERSION and an epoch that is not
 * one; feed_read_message() takes an R (whose message must be a Relation or
 * Type message) or an M record.
 */
bool feed_read_header(const FeedRecord *rec, FeedHeader *out, ErrBuf *err) PGM_MUST_CHECK;
bool feed_read_message(const FeedRecord *rec, FeedMessage *out, ErrBuf *err) PGM_MUST_CHECK;
bool feed_read_group_end(const FeedRecord *rec, FeedGroupEnd *out, ErrBuf *err) PGM_MUST_CHECK;
bool feed_read_segment_end(const FeedRecord *rec, FeedSegmentEnd *out, ErrBuf *err) PGM_MUST_CHECK;

typedef enum FeedNext {
	FEED_NEXT_RECORD,   /* *rec is the next record */
	FEED_NEXT_DONE,     /* the segment end (E) was read and nothing follows */
	FEED_NEXT_ERROR,    /* damage: feed_reader_error() */
} FeedNext;

/* What the reader has read so far: only it sets these. */
typedef struct FeedReader {
	Cursor c;                  /* over the contents; c.pos: the next record */
	int state;                 /* where the order of records stands (feed_format.c) */
	FeedHeader header;         /* once the H record was read */
	uint64_t ngroups;          /* C records read */
	FeedGroupEnd last;         /* the last C record read (group 0: none yet) */
	FeedSegmentEnd end;        /* once the E record was read */
	ErrBuf err;
} FeedReader;

/* Over len bytes of a segment's decompressed contents, which must outlive
 * the reader and the records it hands out. */
void feed_reader_init(FeedReader *r, const uint8_t *contents, size_t len);
/* The next record, checked as the comment at the top says: contents that
 * end before the E record are damage. After FEED_NEXT_ERROR the reader
 * stays failed. */
FeedNext feed_reader_next(FeedReader *r, FeedRecord *rec) PGM_MUST_CHECK;
const char *feed_reader_error(const FeedReader *r);

#endif

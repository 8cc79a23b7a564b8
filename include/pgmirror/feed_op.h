/*
 * feed_op.h: the mirror's own operations, the O records of a segment
 * (docs/feed.md, "Operations"): what the hub's mirror takes that does not
 * come as a pgoutput message (a table's copy, a table that leaves, a
 * rename found at start, the indexes), for a device to do the same.
 *
 *	O body = u8 operation · its fields
 */
#ifndef PGMIRROR_FEED_OP_H
#define PGMIRROR_FEED_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/feed_format.h"
#include "pgmirror/util.h"

typedef enum FeedOpKind {
	FEED_OP_RESET = 1,        /* every mirror table dropped: a first copy follows */
	FEED_OP_COPY_BEGIN = 2,   /* a table's copy: its Relation and Inserts follow */
	FEED_OP_COPY_PART = 3,    /* the part of a copy in parts this group commits */
	FEED_OP_COPY_END = 4,     /* the copy is whole */
	FEED_OP_DROP = 5,         /* the table left the publications, or was dropped */
	FEED_OP_RENAME = 6,       /* the mirror table takes its source table's name */
	FEED_OP_INDEXES = 7,      /* the mirror's indexes made to match the source's */
} FeedOpKind;

/* "reset", "copy begin", ...; NULL for a number that is no operation. */
const char *feed_op_name(int op);

/* An O record read back; strings and relids malloc'd (feed_op_clear()). */
typedef struct FeedOp {
	FeedOpKind op;
	uint32_t relid;         /* 2 to 6: the relation */
	Lsn sync_lsn;           /* 2: the copy's sync LSN */
	bool staged;            /* 2: into a staged table that takes the old one's place */
	char *definition;       /* 2: the publications' definition of the table; NULL: none */
	char *key_ranges;       /* 3: its key ranges (pgmirror_tables.copy_state); NULL: none */
	uint64_t rows;          /* 3: rows copied so far */
	char *schema;           /* 6: the source table's schema now */
	char *name;             /* 6: and its name */
	uint32_t *relids;       /* 7: the relations whose indexes are made to match */
	int nrelids;
} FeedOp;

void feed_put_op_reset(FeedBuf *b);
void feed_put_op_copy_begin(FeedBuf *b, uint32_t relid, Lsn sync_lsn, bool staged,
			    const char *definition);
void feed_put_op_copy_part(FeedBuf *b, uint32_t relid, const char *key_ranges, uint64_t rows);
void feed_put_op_copy_end(FeedBuf *b, uint32_t relid);
void feed_put_op_drop(FeedBuf *b, uint32_t relid);
void feed_put_op_rename(FeedBuf *b, uint32_t relid, const char *schema, const char *name);
void feed_put_op_indexes(FeedBuf *b, const uint32_t *relids, int n);

/*
 * Decodes an O record whole: false with a message in err ("malformed
 * operation record at offset 80: unknown operation 9 at body byte 0": a
 * feed of a later format) when it is not exactly one of the seven; *out
 * is then empty. Its strings may not hold a NUL byte.
 */
bool feed_read_op(const FeedRecord *rec, FeedOp *out, ErrBuf *err) PGM_MUST_CHECK;
void feed_op_clear(FeedOp *op);

#endif

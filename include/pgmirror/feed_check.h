/*
 * feed_check.h: a segment's contents checked whole before a byte of them
 * is applied: the order of its records (feed_format.h's reader) and the
 * body of every record read to its last byte by its typed reader.
 */
#ifndef PGMIRROR_FEED_CHECK_H
#define PGMIRROR_FEED_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/feed_format.h"
#include "pgmirror/util.h"

/* What a whole segment holds besides its groups' records. */
typedef struct FeedSegmentInfo {
	FeedHeader header;       /* its H record */
	FeedSegmentEnd end;      /* its E record */
	uint64_t nrecords;       /* records in it, H and E included */
} FeedSegmentInfo;

/* Reads every record of len bytes of decompressed contents; false with
 * the first damage in err (its offset named; the caller names the file). */
bool feed_check_segment(const uint8_t *contents, size_t len, FeedSegmentInfo *out,
			ErrBuf *err) PGM_MUST_CHECK;

#endif

/*
 * status_internal.h: what status.c reads from the mirror for --status, and
 * the Prometheus form of it (status_prom.c), which status.c calls.
 */
#ifndef PGMIRROR_STATUS_INTERNAL_H
#define PGMIRROR_STATUS_INTERNAL_H

#include <stdint.h>

#include "pgmirror/mirror.h"

/* What --status prints of one table. */
typedef struct TableStatus {
	char *name;
	int64_t rows;          /* -1: it has no mirror table (it waits) */
	int64_t generation;
	const char *state; /* "synced", or what keeps the table from being it */
	bool copying;      /* its copy in parts has not reached its end */
	bool pending;      /* set aside to be copied again, not begun (mirror_stage.h) */
	int64_t copy_rows; /* the rows that copy stored */
	int64_t copy_estimate; /* the source's estimate of its rows; -1 */
} TableStatus;

/* What --status shows of a feed (status_feed.c): a device's, read from
 * its pgmirror_feed row; a hub's, from its row and its manifest. */
typedef struct FeedStatus {
	bool device;           /* the mirror reads a feed (label feed="URL") */
	bool hub;              /* the mirror writes one */
	const char *location;  /* the URL, or the hub's directory */
	Lsn end_lsn;           /* the feed's end: as last read (a device), or listed (a hub) */
	bool has_end;
	const char *end_time;  /* a device: the feed's last source commit, UTC; NULL */
	const char *read_time; /* a device: when the manifest was read, UTC; NULL */
	bool has_lag;          /* a device: its lag behind that end */
	int64_t lag_bytes;
	double lag_seconds;
	char *snapshot;        /* a hub: its newest snapshot (malloc'd); NULL */
} FeedStatus;

/* Reads what --status shows of m's feed into *fs (st: m's state); false
 * logged. */
bool status_feed_read(Mirror *m, const MirrorState *st, MirrorFeedState *row, FeedStatus *fs);
void status_feed_clear(FeedStatus *fs);

/* Prints the mirror's state in Prometheus' text exposition format (0.0.4). */
void status_prom_print(const MirrorState *st, const MirrorHealth *h, const FeedStatus *fs,
		       const TableStatus *t, int n);

#endif

/*
 * lag.h: how far the mirror is behind its source (lag.c), from what the
 * stream learns: the server's WAL position when asked (with the time it
 * was asked), its messages' WAL end, and the mirror's durable position.
 * Pure: no I/O, times passed in; the stream's -v line and a service's
 * last_sync_time read it.
 */
#ifndef PGMIRROR_LAG_H
#define PGMIRROR_LAG_H

#include <stdbool.h>
#include <stdint.h>

#include "pgmirror/util.h"

/* Answers the mirror had not reached yet; when more come, the newest is
 * replaced (synced_at then moves on later than it could: never too early). */
#define LAG_PENDING 16

typedef struct LagSample {
	Lsn lsn;                /* the server's position */
	int64_t at;             /* when it was asked (pgtime: usecs) */
} LagSample;

typedef struct Lag {
	Lsn server;             /* the highest position the server is known to have */
	int64_t synced_at;      /* the mirror held all that the server had at this
				 * time (pgtime); 0: not known yet */
	LagSample pending[LAG_PENDING]; /* answers above the durable position,
					 * oldest first */
	int npending;
} Lag;

/* The server was at pos when asked at `at` (its answer); durable: the
 * mirror's durable position now. */
void lag_note_answer(Lag *lag, Lsn pos, int64_t at, Lsn durable);

/* A message's WAL end: the server has at least that (no time known). */
void lag_note_wal_end(Lag *lag, Lsn wal_end);

/* The mirror's durable position moved to durable: answers at or below it
 * say when the mirror last held all the server had. */
void lag_note_durable(Lag *lag, Lsn durable);

/* Bytes the server is known to be ahead of durable (0 when none). */
uint64_t lag_bytes(const Lag *lag, Lsn durable);

/* Seconds since the mirror last held all the server had (at `now`,
 * pgtime); negative when that is not known yet. */
double lag_seconds(const Lag *lag, int64_t now);

#endif

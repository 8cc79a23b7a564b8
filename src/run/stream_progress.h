/*
 * stream_progress.h: what the stream knows and says of how far behind the
 * mirror is (stream_progress.c): the server's WAL position, asked on the
 * plain connection without waiting; the -v progress line; and a
 * service's last_sync_time. The numbers themselves are lag.c's.
 */
#ifndef PGMIRROR_STREAM_PROGRESS_H
#define PGMIRROR_STREAM_PROGRESS_H

#include "lag.h"
#include "replicate_internal.h"

typedef struct StreamProgress {
	Run *run;
	Applier *apply;
	Lag lag;                /* the server's position against the mirror's */
	int64_t pos_asked;      /* when the question of the server's WAL position
				 * went out (0: none is out) */
	int64_t pos_asked_at;   /* the same as pgtime, for the answer */
	int64_t last_ask;       /* when the last question went out */
	bool line_due;          /* a -v line waits for the answer */
	ApplyStats reported;    /* counters at the last -v line */
	int64_t last_line;      /* when the last -v line was written */
	int64_t last_sync_note; /* when last_sync_time was last stored */
	int64_t noted_synced_at; /* the lag's synced_at then */
	int64_t sync_note_usecs; /* once a minute, or the test's
				  * PGMIRROR_TEST_SYNC_SECS */
} StreamProgress;

/* Ready to follow the stream of run into apply, from now (mono_usecs). */
void stream_progress_init(StreamProgress *p, Run *run, Applier *apply, int64_t now);

/* Asks the server's WAL position, unless a question is out already;
 * never waits. */
void stream_progress_ask(StreamProgress *p, int64_t now);

/* Takes the answer to the question that is out, waiting up to wait_ms
 * for it; true when it came now. */
bool stream_progress_take(StreamProgress *p, int wait_ms);

/* Whether a question is out (and may be answered soon). */
bool stream_progress_asking(const StreamProgress *p);

/* A service: whether last_sync_time is due (once a minute). */
bool stream_progress_sync_due(const StreamProgress *p, int64_t now);

/* A service: whether the mirror has reached an answer of the server (so
 * held, once durable, all the server had when asked). */
bool stream_progress_reached(const StreamProgress *p);

/* After the flush that made it durable: stores last_sync_time as of that
 * answer. false (the error logged) when the mirror cannot be written. */
bool stream_progress_note_reached(StreamProgress *p);

/* Stores last_sync_time as `when`, which the caller knows the mirror then
 * held every transaction the source had committed by; nothing may be open
 * or waiting. false (the error logged) when the mirror cannot be written. */
bool stream_progress_note_sync(StreamProgress *p, int64_t when);

/* The -v line, once per interval, once the server has answered (or a
 * second went by); last_heard: when the server last sent anything. */
void stream_progress_line(StreamProgress *p, int64_t now, int64_t interval, int64_t last_heard,
			  bool answered);

#endif

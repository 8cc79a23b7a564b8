/*
 * stream_progress.c: how far behind the mirror is, as the stream learns
 * and says it. The lag (lag.c) needs the server's own WAL position, which
 * the stream does not carry while the walsender decodes WAL the mirror has
 * no part of (or while the link is silent): it is asked on the plain
 * connection of the catalog look-ups without waiting
 * (lookup_ask_position()), for each -v line (which waits for the answer a
 * second at most) and, in a service, until last_sync_time is due and
 * stored.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream_progress.h"

/* A service caught up stores last_sync_time at most this often (a test
 * may make it shorter: PGMIRROR_TEST_SYNC_SECS). */
#define SYNC_NOTE_USECS INT64_C(60000000)
/* A -v line waits at most this long for the server's WAL position. */
#define ANSWER_WAIT_USECS INT64_C(1000000)

void stream_progress_init(StreamProgress *p, Run *run, Applier *apply, int64_t now)
{
	const char *test_secs = getenv("PGMIRROR_TEST_SYNC_SECS");

	memset(p, 0, sizeof(*p));
	p->run = run;
	p->apply = apply;
	p->last_line = now;
	/* for tests only: how often a service stores last_sync_time */
	p->sync_note_usecs = test_secs != NULL && atoi(test_secs) > 0
			     ? (int64_t)atoi(test_secs) * 1000000 : SYNC_NOTE_USECS;
}

void stream_progress_ask(StreamProgress *p, int64_t now)
{
	if (p->pos_asked != 0)
		return;
	if (!lookup_ask_position(p->run->lookup)) {
		log_debug("%s", lookup_position_error(p->run->lookup));
		return;
	}
	p->pos_asked = p->last_ask = now;
	p->pos_asked_at = pgtime_now();
}

bool stream_progress_take(StreamProgress *p, int wait_ms)
{
	Lsn pos;
	int r;

	if (p->pos_asked == 0)
		return false;
	r = lookup_poll_position(p->run->lookup, &pos, wait_ms);
	if (r == 0)
		return false;
	p->pos_asked = 0;
	if (r < 0) {
		log_debug("%s", lookup_position_error(p->run->lookup));
		return false;
	}
	lag_note_answer(&p->lag, pos, p->pos_asked_at, apply_durable_lsn(p->apply));
	return true;
}

bool stream_progress_asking(const StreamProgress *p)
{
	return p->pos_asked != 0;
}

/*
 * How far behind the mirror is: bytes, the server's position (its answer,
 * its messages' WAL end, and no less than where it was when pgmirror
 * connected) minus the durable one; seconds, since the mirror last held
 * all the server had (lag.c). fresh: the server has just answered, so no
 * bytes means no lag at all. Before any answer was reached, the seconds
 * are the age of the last applied commit while bytes wait.
 */
static void measure(StreamProgress *p, bool fresh, uint64_t *bytes, double *secs)
{
	ApplyStats now;
	Lsn durable = apply_durable_lsn(p->apply);

	lag_note_wal_end(&p->lag, p->run->sys.xlogpos);
	lag_note_durable(&p->lag, durable);
	*bytes = lag_bytes(&p->lag, durable);
	*secs = 0;
	if (*bytes == 0 && fresh)
		return;
	*secs = lag_seconds(&p->lag, pgtime_now());
	if (*secs >= 0)
		return;
	*secs = 0;
	apply_stats(p->apply, &now);
	if (*bytes > 0 && now.last_commit_time > 0 && pgtime_now() > now.last_commit_time)
		*secs = (double)(pgtime_now() - now.last_commit_time) / 1e6;
}

bool stream_progress_sync_due(const StreamProgress *p, int64_t now)
{
	return p->run->endpos == LSN_INVALID &&
	       (p->last_sync_note == 0 || now - p->last_sync_note >= p->sync_note_usecs);
}

bool stream_progress_reached(const StreamProgress *p)
{
	return p->lag.synced_at > p->noted_synced_at ||
	       (p->lag.npending > 0 && apply_applied_lsn(p->apply) >= p->lag.pending[0].lsn);
}

bool stream_progress_note_reached(StreamProgress *p)
{
	lag_note_durable(&p->lag, apply_durable_lsn(p->apply));
	return p->lag.synced_at <= p->noted_synced_at ||
	       stream_progress_note_sync(p, p->lag.synced_at);
}

bool stream_progress_note_sync(StreamProgress *p, int64_t when)
{
	uint64_t lag_bytes;
	double lag_secs;
	char text[40];

	if (apply_in_transaction(p->apply) || apply_pending(p->apply) > 0)
		return true;
	measure(p, true, &lag_bytes, &lag_secs);
	if (!mirror_note_sync(p->run->mirror, pgtime_format_utc(when, text, sizeof(text)),
			      (int64_t)lag_bytes, lag_secs)) {
		log_error("%s", mirror_error(p->run->mirror));
		return false;
	}
	p->noted_synced_at = p->lag.synced_at;
	p->last_sync_note = mono_usecs();
	return true;
}

/*
 * What was applied since the last line, and how far behind the mirror is.
 * When nothing came on the replication connection for two intervals (a
 * link gone silent, although a keepalive was asked for), the lag in
 * seconds is at least that long, and a line of its own says so.
 */
static void write_line(StreamProgress *p, int64_t now, int64_t interval, int64_t last_heard,
		       bool fresh)
{
	ApplyStats stats;
	uint64_t lag_bytes;
	double lag_secs;
	char lsn[LSN_TEXT_SIZE];
	double silent = (double)(now - last_heard) / 1e6;

	apply_stats(p->apply, &stats);
	measure(p, fresh, &lag_bytes, &lag_secs);
	/* a silent server may be ahead by all that time: not "0.0 s" */
	if (now - last_heard > 2 * interval && lag_secs < silent)
		lag_secs = silent;
	log_debug("progress: %" PRIu64 " transactions, %" PRIu64 " rows; lag %" PRIu64
		  " bytes, %.1f s; confirmed %s", stats.txns - p->reported.txns,
		  stats.rows - p->reported.rows, lag_bytes, lag_secs,
		  lsn_format(apply_durable_lsn(p->apply), lsn));
	if (now - last_heard > 2 * interval)
		log_debug("nothing heard from the server for %.0f s: %s", silent,
			  fresh ? "the lag above is the server's position against the mirror's"
				: "the lag above is as of then");
	p->reported = stats;
}

void stream_progress_line(StreamProgress *p, int64_t now, int64_t interval, int64_t last_heard,
			  bool answered)
{
	if (!p->line_due && now - p->last_line >= interval) {
		p->line_due = true;
		stream_progress_ask(p, now);
		answered = stream_progress_take(p, 0);
	}
	if (p->line_due &&
	    (answered || p->pos_asked == 0 || now - p->pos_asked >= ANSWER_WAIT_USECS)) {
		p->line_due = false;
		p->last_line = now;
		write_line(p, now, interval, last_heard, answered);
	}
}

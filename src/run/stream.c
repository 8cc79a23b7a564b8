/*
 * stream.c: the streaming loop. Receives CopyData from the session,
 * decodes it, hands it to the applier, groups transactions into SQLite
 * commits and answers the server.
 *
 * Positions, oldest first:
 *   durable  <=  applied  <=  received
 * durable is committed in the mirror and is the only position confirmed to
 * the server as flushed; applied is the end of the last transaction applied
 * to the open SQLite transaction; received is what the stream has shown
 * us (for the write position in feedback).
 *
 * Each turn of the loop is one step: idle (nothing came: commit, maybe
 * reconnect or ask for a keepalive), keepalive, or data (one XLogData
 * message), then the periodic feedback and progress line.
 *
 * The format of the values, text or binary: stream_format.c.
 *
 * The lag (lag.c) needs the server's own WAL position, which the stream
 * does not carry while the walsender decodes WAL the mirror has no part of
 * (or while the link is silent): it is asked on the plain connection of
 * the catalog look-ups without waiting, for each -v line (which waits for
 * the answer a second at most) and, in a service, until last_sync_time is
 * due and stored.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pgmirror/frame.h"
#include "pgmirror/pgoutput.h"
#include "lag.h"
#include "replicate_internal.h"

/* Group at most this many source transactions into one SQLite commit, and
 * keep a group open at most this long while data keeps arriving. */
#define GROUP_MAX_TXNS 5000
#define GROUP_MAX_USECS INT64_C(500000)
/* While waiting for the end position, ask the server for a keepalive this
 * often. */
#define PING_USECS INT64_C(500000)
/* During a long step, answer the server this often (see stream_tick). */
#define TICK_USECS INT64_C(500000)
/* libpq keeps its input buffer as large as the largest message it has
 * received; after one this large, a service reconnects when idle to give
 * that memory back. */
#define BIG_MESSAGE_BYTES ((size_t)32 << 20)
/* A service compares the publications' tables with the mirror this often
 * (tables that joined or left without a change the stream would show). */
#define RECONCILE_USECS INT64_C(60000000)
/* A service caught up stores last_sync_time at most this often (a test
 * may make it shorter: PGMIRROR_TEST_SYNC_SECS). */
#define SYNC_NOTE_USECS INT64_C(60000000)
/* A -v line waits at most this long for the server's WAL position. */
#define ANSWER_WAIT_USECS INT64_C(1000000)
/* A service asks this often whether the daily integrity check is due. */
#define CHECK_POLL_USECS INT64_C(60000000)

typedef struct Stream {
	Run *run;
	PgoDecoder *dec;
	Applier *apply;
	Lsn received;           /* for the write position */
	Lsn idle_lsn;           /* keepalive position seen outside a transaction */
	int64_t last_status;    /* when feedback was last sent */
	int64_t last_ping;      /* when a keepalive was last asked for */
	int64_t group_started;  /* when the open group began */
	bool reached;           /* the end position was reached */
	ApplyStats reported;    /* counters at the last progress line */
	int64_t last_progress;  /* when the last progress line was written */
	int64_t last_tick;      /* when a long step last answered the server */
	bool lost;              /* a long step could not answer the server */
	bool big_message;       /* a message of BIG_MESSAGE_BYTES or more came */
	int64_t last_reconcile; /* when the tables were last compared */
	int64_t last_heard;     /* when the server last sent anything */
	Lag lag;                /* the server's position against the mirror's */
	int64_t pos_asked;      /* when the question of the server's WAL position
				 * went out (0: none is out) */
	int64_t pos_asked_at;   /* the same as pgtime, for the answer */
	int64_t last_ask;       /* when the last question went out */
	bool progress_due;      /* a -v line waits for the answer */
	int64_t last_sync_note; /* when last_sync_time was last stored */
	int64_t noted_synced_at; /* the lag's synced_at then */
	int64_t sync_note_usecs; /* SYNC_NOTE_USECS, or the test's */
	MirrorCheck *check;     /* a service's integrity check, while it runs */
	int64_t check_polled;   /* when it was last asked whether one is due */
	StreamEnd end;          /* how the round ends, once a step says stop */
	bool binary;            /* values come in binary format where they can */
	Lsn txn_final;          /* the open transaction's commit LSN (Begin) */
} Stream;


static bool stream_send_status(Stream *s, bool reply)
{
	Lsn durable = apply_durable_lsn(s->apply);
	Lsn write = s->received > durable ? s->received : durable;

	s->last_status = mono_usecs();
	if (!session_send_status(s->run->session, write, durable, durable, reply)) {
		log_error("%s", session_error(s->run->session));
		return false;
	}
	return true;
}

/*
 * The tick of long steps (TickFn): the applier's refill and the mirror's
 * long statements call it. Every TICK_USECS it answers the server with
 * the durable position (never ahead of what is committed), so that no
 * step outlasts wal_sender_timeout; it says stop on SIGTERM, and when the
 * server cannot be answered any more.
 */
static bool stream_tick(void *ctx)
{
	Stream *s = ctx;
	int64_t now;

	if (replicate_stopping() || s->lost)
		return false;
	now = mono_usecs();
	if (now - s->last_tick < TICK_USECS)
		return true;
	s->last_tick = now;
	if (!stream_send_status(s, false)) {
		s->lost = true;
		return false;
	}
	return true;
}

/* SIGTERM interrupted a group: it was rolled back. */
static void log_stopped_group(void)
{
	log_info("stopping before the last transactions were committed to the mirror; "
		 "the next run applies them again");
}

/* Commits what is applied, stores an idle keepalive position. */
static bool stream_flush(Stream *s)
{
	/* a big group's commit is not interrupted: answer the server before */
	if (apply_pending(s->apply) > 0)
		(void)stream_tick(s);
	if (!apply_in_transaction(s->apply) && s->idle_lsn > apply_applied_lsn(s->apply) &&
	    !apply_advance(s->apply, s->idle_lsn))
		goto fail;
	if (!apply_flush(s->apply))
		goto fail;
	s->group_started = 0;
	return true;
fail:
	if (replicate_stopping())
		log_stopped_group();
	else
		log_error("%s", apply_error(s->apply));
	return false;
}

/*
 * A message could not be applied, and the open group was rolled back. On
 * SIGTERM (a long step interrupted) that is a clean stop: the next run
 * repeats the step. Not reaching the source is a lost connection.
 */
static StreamEnd stream_apply_failed(Stream *s)
{
	s->idle_lsn = LSN_INVALID; /* it came before the rolled-back group ends */
	if (replicate_stopping()) {
		log_stopped_group();
		return STREAM_DONE;
	}
	log_error("%s", apply_error(s->apply));
	return s->lost || apply_source_lost(s->apply) ? STREAM_LOST : STREAM_FAILED;
}

/*
 * The data step: one XLogData payload decoded and applied; a group is
 * committed when full, old, or at the end position. False (s->end set)
 * ends the round at once; the loop also ends on s->reached and on SIGTERM.
 */
static bool step_data(Stream *s, const Frame *f)
{
	PgoMessage msg;
	Lsn endpos = s->run->endpos;

	if (!pgoutput_decode(s->dec, f->data, f->len, &msg)) {
		char lsn[LSN_TEXT_SIZE];

		log_error("could not decode the message at %s: %s", lsn_format(f->wal_start, lsn),
			  pgoutput_error(s->dec));
		s->end = STREAM_FAILED;
		return false;
	}
	if (msg.type == PGO_BEGIN && endpos != LSN_INVALID && msg.u.begin.final_lsn > endpos) {
		s->reached = true; /* this transaction commits past the end position */
		return true;
	}
	if (f->wal_start > s->received)
		s->received = f->wal_start;
	if (msg.type == PGO_BEGIN)
		s->txn_final = msg.u.begin.final_lsn;
	/* a column a binary stream cannot read: in text, from the last commit */
	if (msg.type == PGO_RELATION && s->binary &&
	    !stream_format_relation(s->run, s->apply, &msg.u.relation,
				    apply_in_transaction(s->apply) ? s->txn_final : s->received)) {
		s->idle_lsn = LSN_INVALID;
		s->end = STREAM_RECONNECT;
		return false;
	}
	if (!apply_message(s->apply, &msg)) {
		/*
		 * The round ends at once, also when SIGTERM stopped the step
		 * (STREAM_DONE): the group was rolled back, so no position
		 * may be stored or confirmed now (a keepalive's would skip
		 * the transactions of that group).
		 */
		s->end = stream_apply_failed(s);
		return false;
	}
	if (msg.type == PGO_BEGIN && s->group_started == 0)
		s->group_started = mono_usecs();
	if (msg.type == PGO_COMMIT) {
		/* an empty transaction (servers before 15) moves the position
		 * as a keepalive would; a real one supersedes a keepalive's */
		s->idle_lsn = apply_last_txn_empty(s->apply) ? msg.u.commit.end_lsn
							       : LSN_INVALID;
		if (endpos != LSN_INVALID && msg.u.commit.end_lsn >= endpos)
			s->reached = true;
		if (s->reached || apply_pending(s->apply) >= GROUP_MAX_TXNS ||
		    mono_usecs() - s->group_started >= GROUP_MAX_USECS) {
			if (!stream_flush(s)) {
				s->end = replicate_stopping() ? STREAM_DONE : STREAM_FAILED;
				return false;
			}
		}
	}
	return true;
}

/*
 * Asks the server's WAL position on the plain connection, unless a
 * question is out already; never waits (lookup_ask_position()).
 */
static void stream_ask_position(Stream *s, int64_t now)
{
	if (s->pos_asked != 0)
		return;
	if (!lookup_ask_position(s->run->lookup)) {
		log_debug("%s", lookup_position_error(s->run->lookup));
		return;
	}
	s->pos_asked = s->last_ask = now;
	s->pos_asked_at = pgtime_now();
}

/* Takes the answer to the question that is out, waiting up to wait_ms
 * for it; true when it came now. */
static bool stream_take_position(Stream *s, int wait_ms)
{
	Lsn pos;
	int r;

	if (s->pos_asked == 0)
		return false;
	r = lookup_poll_position(s->run->lookup, &pos, wait_ms);
	if (r == 0)
		return false;
	s->pos_asked = 0;
	if (r < 0) {
		log_debug("%s", lookup_position_error(s->run->lookup));
		return false;
	}
	lag_note_answer(&s->lag, pos, s->pos_asked_at, apply_durable_lsn(s->apply));
	return true;
}

/*
 * How far behind the mirror is: bytes, the server's position (its answer,
 * its messages' WAL end, and no less than where it was when pgmirror
 * connected) minus the durable one; seconds, since the mirror last held
 * all the server had (lag.c). fresh: the server has just answered, so no
 * bytes means no lag at all. Before any answer was reached, the seconds
 * are the age of the last applied commit while bytes wait.
 */
static void stream_lag(Stream *s, bool fresh, uint64_t *bytes, double *secs)
{
	ApplyStats now;
	Lsn durable = apply_durable_lsn(s->apply);

	lag_note_wal_end(&s->lag, s->run->sys.xlogpos);
	lag_note_durable(&s->lag, durable);
	*bytes = lag_bytes(&s->lag, durable);
	*secs = 0;
	if (*bytes == 0 && fresh)
		return;
	*secs = lag_seconds(&s->lag, pgtime_now());
	if (*secs >= 0)
		return;
	*secs = 0;
	apply_stats(s->apply, &now);
	if (*bytes > 0 && now.last_commit_time > 0 && pgtime_now() > now.last_commit_time)
		*secs = (double)(pgtime_now() - now.last_commit_time) / 1e6;
}

/*
 * The -v progress line, once per status interval, once the server has
 * answered the question of its WAL position (or a second went by): what
 * was applied since the last line, and how far behind the mirror is. When
 * nothing came on the replication connection for two intervals (a link
 * gone silent, although a keepalive was asked for), the lag in seconds is
 * at least that long, and a line of its own says so.
 */
static void log_progress(Stream *s, int64_t now_mono, int64_t interval, bool fresh)
{
	ApplyStats now;
	uint64_t lag_bytes;
	double lag_secs;
	char lsn[LSN_TEXT_SIZE];
	double silent = (double)(now_mono - s->last_heard) / 1e6;

	apply_stats(s->apply, &now);
	stream_lag(s, fresh, &lag_bytes, &lag_secs);
	/* a silent server may be ahead by all that time: not "0.0 s" */
	if (now_mono - s->last_heard > 2 * interval && lag_secs < silent)
		lag_secs = silent;
	log_debug("progress: %" PRIu64 " transactions, %" PRIu64 " rows; lag %" PRIu64
		  " bytes, %.1f s; confirmed %s", now.txns - s->reported.txns,
		  now.rows - s->reported.rows, lag_bytes, lag_secs,
		  lsn_format(apply_durable_lsn(s->apply), lsn));
	if (now_mono - s->last_heard > 2 * interval)
		log_debug("nothing heard from the server for %.0f s: %s", silent,
			  fresh ? "the lag above is the server's position against the mirror's"
				: "the lag above is as of then");
	s->reported = now;
}

/*
 * Stores last_sync_time (pgmirror_state) as `when`: the caller knows the
 * mirror then held every transaction the source had committed. Nothing
 * may be open or waiting. false (the error logged) when the mirror cannot
 * be written.
 */
static bool stream_note_sync(Stream *s, int64_t when)
{
	uint64_t lag_bytes;
	double lag_secs;
	char text[40];

	if (apply_in_transaction(s->apply) || apply_pending(s->apply) > 0)
		return true;
	stream_lag(s, true, &lag_bytes, &lag_secs);
	if (!mirror_note_sync(s->run->mirror, pgtime_format_utc(when, text, sizeof(text)),
			      (int64_t)lag_bytes, lag_secs)) {
		log_error("%s", mirror_error(s->run->mirror));
		return false;
	}
	s->noted_synced_at = s->lag.synced_at;
	s->last_sync_note = mono_usecs();
	return true;
}

/* A service: last_sync_time once a minute, once the server's answer shows
 * that the mirror has all the server had (asked for, step_periodic). */
static bool stream_sync_due(const Stream *s, int64_t now)
{
	return s->run->endpos == LSN_INVALID &&
	       (s->last_sync_note == 0 || now - s->last_sync_note >= s->sync_note_usecs);
}

/*
 * The idle step: nothing more came for now. Make what we have durable;
 * connect again after a huge message (a service only); at the end
 * position, stop; waiting for it, ask for a keepalive now and then.
 */
static bool step_idle(Stream *s, int64_t now)
{
	Run *run = s->run;

	if (!stream_flush(s)) {
		s->end = STREAM_FAILED;
		return false;
	}
	if (s->big_message && run->endpos == LSN_INVALID && !apply_in_transaction(s->apply)) {
		log_debug("connecting again to give back the memory of a large message");
		(void)stream_send_status(s, false);
		s->end = STREAM_RECONNECT;
		return false;
	}
	if (run->endpos != LSN_INVALID && !apply_in_transaction(s->apply) &&
	    apply_durable_lsn(s->apply) >= run->endpos)
		s->reached = true;
	else if (run->endpos != LSN_INVALID && now - s->last_ping >= PING_USECS) {
		s->last_ping = now;
		if (!stream_send_status(s, true)) {
			s->end = STREAM_LOST;
			return false;
		}
	}
	return true;
}

/* The keepalive step: the position it shows, stored, and answered when asked. */
static bool step_keepalive(Stream *s, const Frame *f)
{
	Run *run = s->run;

	if (f->wal_end > s->received)
		s->received = f->wal_end;
	if (!apply_in_transaction(s->apply)) {
		s->idle_lsn = f->wal_end;
		if (run->endpos != LSN_INVALID && f->wal_end >= run->endpos)
			s->reached = true;
	}
	/*
	 * Store the position first, then answer with it: a server shutting
	 * down sends everything, asks for a reply and waits until the flush
	 * position reported equals what it sent.
	 */
	if (f->reply_requested && !apply_in_transaction(s->apply) && !stream_flush(s)) {
		s->end = STREAM_FAILED;
		return false;
	}
	if (f->reply_requested && !stream_send_status(s, false)) {
		s->end = STREAM_LOST;
		return false;
	}
	return true;
}

/* One message from the server: a keepalive or data. */
static bool step_message(Stream *s, const uint8_t *buf, size_t len)
{
	Frame f;
	char err[256];

	s->last_heard = mono_usecs();
	if (len >= BIG_MESSAGE_BYTES)
		s->big_message = true;
	if (!frame_decode(buf, len, &f, err, sizeof(err))) {
		log_error("%s", err);
		s->end = STREAM_FAILED;
		return false;
	}
	lag_note_wal_end(&s->lag, f.wal_end);
	if (f.type == FRAME_KEEPALIVE)
		return step_keepalive(s, &f);
	return step_data(s, &f);
}

/* Every status interval: quiet tables still move the slot, so store where
 * the stream is and say so; a service's last_sync_time; and the -v
 * progress line, once the server has said where it is. */
static bool step_periodic(Stream *s, int64_t now, int64_t interval)
{
	bool sync_due = stream_sync_due(s, now);
	bool answered = stream_take_position(s, 0);

	/* a service: once the mirror has reached an answer of the server
	 * (its group committed now, between transactions), it held all the
	 * server had when asked */
	if (sync_due && !apply_in_transaction(s->apply) &&
	    (s->lag.synced_at > s->noted_synced_at ||
	     (s->lag.npending > 0 && apply_applied_lsn(s->apply) >= s->lag.pending[0].lsn))) {
		if (!stream_flush(s)) {
			s->end = STREAM_FAILED;
			return false;
		}
		lag_note_durable(&s->lag, apply_durable_lsn(s->apply));
		if (s->lag.synced_at > s->noted_synced_at && !stream_note_sync(s, s->lag.synced_at)) {
			s->end = STREAM_FAILED;
			return false;
		}
		sync_due = stream_sync_due(s, now);
	}
	/* (not in the feedback's block below: while groups are committed,
	 * stream_tick() sends feedback more often than every interval) */
	if (sync_due && now - s->last_ask >= interval)
		stream_ask_position(s, now);
	if (now - s->last_status >= interval) {
		if (!stream_flush(s)) {
			s->end = STREAM_FAILED;
			return false;
		}
		/* a keepalive is asked for: the server's position for -v's
		 * lag, and the quiet tables' one a service waits for */
		if (!stream_send_status(s, log_get_level() >= LOG_DEBUG || sync_due)) {
			s->end = STREAM_LOST;
			return false;
		}
	}
	if (log_get_level() < LOG_DEBUG)
		return true;
	if (!s->progress_due && now - s->last_progress >= interval) {
		s->progress_due = true;
		stream_ask_position(s, now);
		answered = stream_take_position(s, 0);
	}
	if (s->progress_due &&
	    (answered || s->pos_asked == 0 || now - s->pos_asked >= ANSWER_WAIT_USECS)) {
		s->progress_due = false;
		s->last_progress = now;
		log_progress(s, now, interval, answered);
	}
	return true;
}

/*
 * Between groups: a change came for a relation the mirror does not have,
 * (a service) a minute went by, or SIGHUP asked for it: make the mirror's
 * tables those the publications publish now (tablesync.c). The main
 * connection stays open and answered meanwhile (stream_tick).
 */
static bool step_reconcile(Stream *s, int64_t now)
{
	const uint32_t *oids;
	bool due = s->run->endpos == LSN_INVALID && now - s->last_reconcile >= RECONCILE_USECS;
	int rc;

	if (apply_in_transaction(s->apply))
		return true; /* a request waits for the transaction's end */
	if (replicate_take_check_request()) {
		log_info("checking the publications now (SIGHUP)");
		due = true;
	}
	/* a table the source had no room to sync waits for the next check */
	if ((apply_unknown_relations(s->apply, &oids) == 0 || s->run->sync_deferred) && !due)
		return true;
	if (!stream_flush(s)) {
		s->end = replicate_stopping() ? STREAM_DONE : STREAM_FAILED;
		return false;
	}
	rc = tablesync_reconcile(s->run, NULL, s->apply, NULL, 0, false, stream_tick, s);
	s->last_reconcile = mono_usecs();
	if (rc == EXIT_OK)
		return true;
	s->end = replicate_stopping() ? STREAM_DONE
		 : s->lost || s->run->conn_failed ? STREAM_LOST : STREAM_FAILED;
	return false;
}

/*
 * A service's daily integrity check (heal.c does the others): started when
 * the last one is a day old, in a thread of its own on a read-only
 * connection, so neither the stream nor readers wait for it; its result is
 * stored between groups. Damage ends the round, to heal the file.
 */
static bool step_check(Stream *s, int64_t now)
{
	Run *run = s->run;
	MirrorCheckResult res;
	char *found = NULL;
	int64_t usecs;
	bool due = false, ok = true;

	if (run->endpos != LSN_INVALID)
		return true;
	if (s->check == NULL) {
		if (now - s->check_polled < CHECK_POLL_USECS || apply_in_transaction(s->apply) ||
		    apply_pending(s->apply) > 0)
			return true;
		s->check_polled = now;
		if (mirror_check_due(run->mirror, HEAL_CHECK_MAX_AGE_SECS, &due) && due &&
		    (s->check = mirror_check_start(run->opt->mirror_path)) != NULL)
			log_debug("integrity check of mirror \"%s\" started", run->opt->mirror_path);
		return true;
	}
	if (apply_in_transaction(s->apply) || apply_pending(s->apply) > 0 ||
	    !mirror_check_done(s->check, &res, &found, &usecs))
		return true;
	mirror_check_free(s->check);
	s->check = NULL;
	if (!heal_take_check_result(run, res, found, usecs)) {
		s->end = run->heal ? STREAM_DAMAGED : STREAM_FAILED;
		ok = false;
	}
	free(found);
	return ok;
}

/* START_REPLICATION from the durable position; false with s->end set. */
static bool stream_start(Stream *s, int proto)
{
	Run *run = s->run;
	char **pubs = NULL;
	int npubs = strv_split(run->state.publications, ',', &pubs);
	bool ok = stream_format_choose(run, apply_durable_lsn(s->apply), pubs, npubs, &s->binary);

	if (ok && s->binary)
		apply_set_binary(s->apply, session_server_version(run->session));
	if (ok)
		ok = session_start(run->session, run->state.slot, apply_durable_lsn(s->apply),
				   proto, pubs, npubs, s->binary);
	strv_free(pubs, npubs);
	if (!ok) {
		replicate_log_session_error(run->session);
		s->end = session_error_in_use(run->session) ? STREAM_IN_USE
			 : session_connected(run->session) ? STREAM_FAILED : STREAM_LOST;
	}
	return ok;
}

StreamEnd stream_run(Run *run, Applier *apply)
{
	int proto = session_proto_version_for(session_server_version(run->session));
	Stream s = {.run = run, .apply = apply, .end = STREAM_FAILED};
	int64_t interval = (int64_t)run->opt->status_interval * 1000000;
	char lsn[LSN_TEXT_SIZE];
	const char *test_secs = getenv("PGMIRROR_TEST_SYNC_SECS");

	s.received = apply_durable_lsn(apply);
	if (!stream_start(&s, proto))
		goto done;
	s.dec = pgoutput_decoder_new(proto, false);
	lookup_set_tick(run->lookup, stream_tick, &s);
	mirror_set_tick(run->mirror, stream_tick, &s);
	s.last_status = mono_usecs();
	s.last_progress = s.last_status;
	s.last_reconcile = s.last_status; /* prepare() has just compared them */
	s.last_heard = s.last_status;
	s.check_polled = s.last_status - CHECK_POLL_USECS; /* ask at once */
	/* for tests only: how often a service stores last_sync_time */
	s.sync_note_usecs = test_secs != NULL && atoi(test_secs) > 0
			    ? (int64_t)atoi(test_secs) * 1000000 : SYNC_NOTE_USECS;
	log_debug("streaming from slot \"%s\" at %s with protocol version %d, in %s",
		  run->state.slot, lsn_format(apply_durable_lsn(apply), lsn), proto,
		  s.binary ? "binary" : "text");

	while (!s.reached && !replicate_stopping()) {
		const uint8_t *buf;
		size_t len;
		/* Commits waiting to be flushed: only look; otherwise wait. */
		int wait_ms = apply_pending(apply) > 0 && !apply_in_transaction(apply) ? 0
			      : s.pos_asked != 0 ? 100 /* an answer may come */
			      : apply_in_transaction(apply) ? 1000
			      : run->endpos != LSN_INVALID ? 100 : 1000;
		int r = session_receive(run->session, &buf, &len, wait_ms);
		int64_t now = mono_usecs();

		if (r < 0) {
			if (session_error_wal_gone(run->session) ||
			    (session_error_server(run->session) && !session_error_data(run->session) &&
			     replicate_slot_wal_lost(run))) {
				log_warning("%s", session_error(run->session));
				s.end = STREAM_SLOT_GONE;
				goto done;
			}
			s.end = session_error_data(run->session) ? STREAM_FAILED : STREAM_LOST;
			/* a service tries again: not an error (yet) */
			log_msg(s.end == STREAM_LOST && replicate_continuous(run) ? LOG_WARNING
				: LOG_ERROR, "%s", session_error(run->session));
			goto done;
		}
		if (!(r == 0 ? step_idle(&s, now) : step_message(&s, buf, len)))
			goto done;
		if (!step_periodic(&s, now, interval))
			goto done;
		if (!step_reconcile(&s, now))
			goto done;
		if (!step_check(&s, now))
			goto done;
	}
	/* Stopping: keep whole transactions, drop a partial one. */
	if (apply_in_transaction(apply)) {
		log_info("stopping in the middle of a transaction; it will be applied next time");
	} else if (!stream_flush(&s)) {
		s.end = STREAM_FAILED;
		goto done;
	}
	/* --once: the mirror holds what the source had committed when
	 * pgmirror connected (reached: every transaction that commits before
	 * the end position is applied); the run knows it now, and the lag
	 * says what came since: asked of the server on the plain connection
	 * when the run has one open; a run that had no question to ask (most
	 * runs of a fleet's devices) opens none for it, and its lag is what
	 * the stream showed of the server's position */
	if (s.reached && run->opt->once && !replicate_stopping()) {
		if (lookup_connected(run->lookup)) {
			stream_ask_position(&s, mono_usecs());
			(void)stream_take_position(&s, 1000);
		}
		if (!stream_note_sync(&s, pgtime_now())) {
			s.end = STREAM_FAILED;
			goto done;
		}
	}
	(void)stream_send_status(&s, false);
	s.end = STREAM_DONE;
done:
	mirror_check_free(s.check);
	if (s.pos_asked != 0)
		lookup_disconnect(run->lookup); /* no old answer for the next round */
	if (s.end == STREAM_FAILED && replicate_stopping())
		s.end = STREAM_DONE; /* a step interrupted by SIGTERM; nothing committed */
	lookup_set_tick(run->lookup, NULL, NULL);
	mirror_set_tick(run->mirror, NULL, NULL);
	pgoutput_decoder_free(s.dec);
	return s.end;
}

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
 * The format of the values, text or binary: stream_format.c. How far
 * behind the mirror is (the -v line, last_sync_time): stream_progress.c.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pgmirror/notify.h"
#include "pgmirror/frame.h"
#include "pgmirror/pgoutput.h"
#include "hub.h"
#include "stream_progress.h"

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
	int64_t last_tick;      /* when a long step last answered the server */
	bool lost;              /* a long step could not answer the server */
	bool big_message;       /* a message of BIG_MESSAGE_BYTES or more came */
	int64_t last_reconcile; /* when the tables were last compared */
	int64_t last_heard;     /* when the server last sent anything */
	StreamProgress progress; /* the lag, the -v line, last_sync_time */
	MirrorCheck *check;     /* a service's integrity check, while it runs */
	int64_t check_polled;   /* when it was last asked whether one is due */
	StreamEnd end;          /* how the round ends, once a step says stop */
	bool binary;            /* values come in binary format where they can */
	Lsn txn_final;          /* the open transaction's commit LSN (Begin) */
	int64_t link_bound;     /* the link's bound (session_link_bound_ms()), usecs */
	int64_t last_link_ask;  /* when a silent server was last asked for a reply */
} Stream;


static bool stream_send_status(Stream *s, bool reply)
{
	Lsn durable = hub_confirmable(s->run, apply_durable_lsn(s->apply));
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
	notify_alive();
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
	hub_message(s->run, f->wal_start, f->data, f->len, &msg);
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
 * The idle step: nothing more came for now. Make what we have durable;
 * connect again after a huge message (a service only); at the end
 * position, stop; waiting for it, ask for a keepalive now and then.
 */
static bool step_idle(Stream *s, int64_t now)
{
	Run *run = s->run;

	if (!stream_flush(s) || (!apply_in_transaction(s->apply) && !hub_publish(run, false))) {
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
	 * Store the position first (and list it in the feed, which bounds
	 * what is confirmed), then answer with it: a server shutting down
	 * sends everything, asks for a reply and waits until the flush
	 * position reported equals what it sent.
	 */
	if (f->reply_requested && !apply_in_transaction(s->apply) &&
	    (!stream_flush(s) || !hub_publish(run, true))) {
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
	lag_note_wal_end(&s->progress.lag, f.wal_end);
	if (f.type == FRAME_KEEPALIVE)
		return step_keepalive(s, &f);
	return step_data(s, &f);
}

/*
 * A link that vanished without a word (session_link.c): a server silent
 * for a third of the link's bound is asked for a reply (a status update
 * that asks for one, which an idle walsender answers at once), again every
 * third; one that stays silent past the bound, and answers no new
 * connection either, is lost, and the round ends as after a cut (a
 * service tries again, --once exits 1).
 */
static bool step_link(Stream *s, int64_t now)
{
	Session *session = s->run->session;
	int64_t third = s->link_bound / 3;

	if (now - session_heard_at(session) >= third && now - s->last_link_ask >= third) {
		s->last_link_ask = now;
		if (!stream_send_status(s, true)) {
			s->end = STREAM_LOST;
			return false;
		}
	}
	if (!session_link_alive(session)) {
		log_msg(replicate_continuous(s->run) ? LOG_WARNING : LOG_ERROR, "%s",
			session_error(session));
		s->end = STREAM_LOST;
		return false;
	}
	return true;
}

/* Every status interval: quiet tables still move the slot, so store where
 * the stream is and say so; a service's last_sync_time; and the -v
 * progress line, once the server has said where it is. */
static bool step_periodic(Stream *s, int64_t now, int64_t interval)
{
	StreamProgress *p = &s->progress;
	bool sync_due = stream_progress_sync_due(p, now);
	bool answered = stream_progress_take(p, 0);

	/* a service: once the mirror has reached an answer of the server
	 * (its group committed now, between transactions), it held all the
	 * server had when asked */
	if (sync_due && !apply_in_transaction(s->apply) && stream_progress_reached(p)) {
		if (!stream_flush(s) || !stream_progress_note_reached(p)) {
			s->end = STREAM_FAILED;
			return false;
		}
		{
			char when[40];

			notify_status("streaming; held all the source had committed at %s UTC",
				      pgtime_format_utc(p->lag.synced_at, when, sizeof(when)));
		}
		notify_ready(); /* the first time it caught up */
		sync_due = stream_progress_sync_due(p, now);
	}
	/* (not in the feedback's block below: while groups are committed,
	 * stream_tick() sends feedback more often than every interval) */
	if (sync_due && now - p->last_ask >= interval)
		stream_progress_ask(p, now);
	if (now - s->last_status >= interval) {
		/* a stream never idle (a busy source, publishing nothing) still
		 * lists its feed's segments, and so moves the slot */
		if (!stream_flush(s) ||
		    (!apply_in_transaction(s->apply) && !hub_publish(s->run, false))) {
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
	if (log_get_level() >= LOG_DEBUG)
		stream_progress_line(p, now, interval, s->last_heard, answered);
	return true;
}

/* The check of the publications (pubcheck.c) while the stream's
 * connection stays open and answered (stream_tick); false with s->end set. */
static bool stream_pubcheck(Stream *s)
{
	int rc;

	hub_streaming(s->run, false); /* its commits are the run's own */
	rc = pubcheck_run(s->run, NULL, s->apply, NULL, 0, false, stream_tick, s);
	hub_streaming(s->run, true);
	if (rc == EXIT_OK)
		return true;
	s->end = replicate_stopping() ? STREAM_DONE
		 : s->lost || s->run->conn_failed ? STREAM_LOST : STREAM_FAILED;
	return false;
}

/*
 * Between groups: a change came for a relation the mirror does not have,
 * (a service) a minute went by, SIGHUP asked for it, or the stream, idle
 * now (nothing came while it waited), changed a mirror table's columns
 * or left some that differed at start for now (the source may have left
 * that definition already, and no change of rows would bring the next):
 * make the mirror's tables those the publications publish now
 * (reconcile.c). The main connection stays open and answered meanwhile
 * (stream_tick).
 */
static bool step_reconcile(Stream *s, int64_t now, bool idle)
{
	const uint32_t *oids;
	bool due = s->run->endpos == LSN_INVALID &&
		   (now - s->last_reconcile >= RECONCILE_USECS ||
		    (idle && (apply_recolumned(s->apply) > 0 || s->run->columns_later)));
	/* a deferred sync whose copy went on when it was cut tries again at
	 * once, else with a growing wait (tablesync.c) */
	bool retry = s->run->sync_deferred &&
		     now - s->last_reconcile >= (s->run->sync_backoff < RECONCILE_USECS
						 ? s->run->sync_backoff : RECONCILE_USECS);
	bool ok;

	if (apply_in_transaction(s->apply))
		return true; /* a request waits for the transaction's end */
	if (replicate_take_check_request()) {
		log_info("checking the publications now (SIGHUP)");
		due = true;
	}
	/* a table the source had no room to sync waits for the next check */
	if ((apply_unknown_relations(s->apply, &oids) == 0 || s->run->sync_deferred) && !due &&
	    !retry)
		return true;
	if (!stream_flush(s)) {
		s->end = replicate_stopping() ? STREAM_DONE : STREAM_FAILED;
		return false;
	}
	ok = stream_pubcheck(s);
	s->last_reconcile = mono_usecs();
	return ok;
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

	s.received = apply_durable_lsn(apply);
	if (!stream_start(&s, proto))
		goto done;
	s.dec = pgoutput_decoder_new(proto, false);
	hub_round(run, apply, session_server_version(run->session), proto, s.binary);
	lookup_set_tick(run->lookup, stream_tick, &s);
	mirror_set_tick(run->mirror, stream_tick, &s);
	s.last_status = mono_usecs();
	stream_progress_init(&s.progress, run, apply, s.last_status);
	s.last_reconcile = s.last_status; /* prepare() has just compared them */
	s.last_heard = s.last_status;
	s.link_bound = (int64_t)session_link_bound_ms(run->session) * 1000;
	s.check_polled = s.last_status - CHECK_POLL_USECS; /* ask at once */
	log_debug("streaming from slot \"%s\" at %s with protocol version %d, in %s",
		  run->state.slot, lsn_format(apply_durable_lsn(apply), lsn), proto,
		  s.binary ? "binary" : "text");

	while (!s.reached && !replicate_stopping()) {
		const uint8_t *buf;
		size_t len;
		/* Commits waiting to be flushed: only look; otherwise wait. */
		int wait_ms = apply_pending(apply) > 0 && !apply_in_transaction(apply) ? 0
			      : stream_progress_asking(&s.progress) ? 100 /* an answer may come */
			      : apply_in_transaction(apply) ? 1000
			      : run->endpos != LSN_INVALID ? 100 : 1000;
		int r = session_receive(run->session, &buf, &len, notify_wait_ms(wait_ms));
		int64_t now = mono_usecs();

		notify_alive(); /* the loop turns */
		if (r > 0)
			run->worked = true; /* it streams: a cut is retried at once */
		if (r < 0) {
			if (session_error_wal_gone(run->session) ||
			    (session_error_server(run->session) && !session_error_data(run->session) &&
			     replicate_slot_wal_lost(run))) {
				log_warning("%s", session_error(run->session));
				s.end = STREAM_SLOT_GONE;
				goto done;
			}
			if (session_error_publication_gone(run->session)) {
				char *cmd = replicate_command(run->opt, "--drop-slot", NULL);

				log_error("%s", session_error(run->session));
				log_error("the slot holds changes made while a publication of this "
					  "mirror did not exist: PostgreSQL (before 18) reads each "
					  "change with the publications of its time, so it fails on "
					  "them on every try, even once the publication is made "
					  "again; start this mirror over: %s, then remove the mirror "
					  "file and run again", cmd);
				free(cmd);
				s.end = STREAM_FAILED;
				goto done;
			}
			s.end = session_error_data(run->session) ? STREAM_FAILED : STREAM_LOST;
			/* a service tries again: not an error (yet) */
			log_msg(s.end == STREAM_LOST && replicate_continuous(run) ? LOG_WARNING
				: LOG_ERROR, "%s", session_error(run->session));
			if (session_error_bad_text(run->session)) {
				char *cmd = replicate_command(run->opt, "--drop-slot", NULL);

				log_error("once the value is corrected, drop the slot: %s", cmd);
				free(cmd);
			}
			goto done;
		}
		if (!(r == 0 ? step_idle(&s, now) : step_message(&s, buf, len)))
			goto done;
		if (!step_link(&s, mono_usecs()))
			goto done;
		if (!step_periodic(&s, now, interval))
			goto done;
		if (!step_reconcile(&s, now, r == 0 && wait_ms > 0))
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
	/* at the end position every transaction committed before it is
	 * applied: a table whose columns the check at start found changed,
	 * or whose columns the stream changed (perhaps to a definition the
	 * source has left since), and that differs from the source's now got
	 * no change of its rows since, and the stream can bring none before
	 * that position any more; it is synced again now, at a consistent
	 * point, as a service's check does (not --verify's: its point is the
	 * snapshot compared). So is a table that waits after its copy met a
	 * value, and whose rows changed since (waiting.c): the change may have
	 * taken the value away */
	if (s.reached && (run->columns_later || apply_recolumned(apply) > 0 ||
			  apply_waiting_changed(apply)) &&
	    !run->opt->verify && !replicate_stopping()) {
		log_debug("at the end position: comparing the mirror's tables with the source's "
			  "again");
		if (!stream_pubcheck(&s))
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
			stream_progress_ask(&s.progress, mono_usecs());
			(void)stream_progress_take(&s.progress, 1000);
		}
		if (!stream_progress_note_sync(&s.progress, pgtime_now())) {
			s.end = STREAM_FAILED;
			goto done;
		}
	}
	/* the feed lists all the mirror holds, and the server then knows it */
	if (!apply_in_transaction(apply) && !hub_publish(run, true)) {
		s.end = STREAM_FAILED;
		goto done;
	}
	(void)stream_send_status(&s, false);
	if (replicate_stopping())
		log_info("stopped by a signal; the mirror holds every transaction up to %s, and the "
			 "server knows it", lsn_format(apply_durable_lsn(apply), lsn));
	s.end = STREAM_DONE;
done:
	mirror_check_free(s.check);
	if (stream_progress_asking(&s.progress))
		lookup_disconnect(run->lookup); /* no old answer for the next round */
	if (s.end == STREAM_FAILED && replicate_stopping())
		s.end = STREAM_DONE; /* a step interrupted by SIGTERM; nothing committed */
	lookup_set_tick(run->lookup, NULL, NULL);
	mirror_set_tick(run->mirror, NULL, NULL);
	hub_round(run, NULL, 0, 0, false);
	pgoutput_decoder_free(s.dec);
	return s.end;
}

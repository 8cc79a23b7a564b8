/*
 * replicate.c: the top loop. Ties the session (frames in, feedback out),
 * the decoder and the applier together, and decides when to stop.
 *
 * Positions, oldest first:
 *   durable  <=  applied  <=  received
 * durable is committed in the mirror and is the only position confirmed to
 * the server as flushed; applied is the end of the last transaction applied
 * to the open SQLite transaction; received is what the stream has shown
 * us (for the write position in feedback).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pgmirror/apply.h"
#include "pgmirror/copy.h"
#include "pgmirror/frame.h"
#include "pgmirror/mirror.h"
#include "pgmirror/naming.h"
#include "pgmirror/pgoutput.h"
#include "pgmirror/replicate.h"
#include "pgmirror/session.h"

/* Group at most this many source transactions into one SQLite commit, and
 * keep a group open at most this long while data keeps arriving. */
#define GROUP_MAX_TXNS 5000
#define GROUP_MAX_USECS INT64_C(500000)
/* While waiting for the end position, ask the server for a keepalive this
 * often. */
#define PING_USECS INT64_C(500000)
/* During a long step, answer the server this often (see stream_tick). */
#define TICK_USECS INT64_C(500000)
#define BACKOFF_MAX_SECS 60
/* libpq keeps its input buffer as large as the largest message it has
 * received; after one this large, a service reconnects when idle to give
 * that memory back. */
#define BIG_MESSAGE_BYTES ((size_t)32 << 20)

static volatile sig_atomic_t stop_requested;

void replicate_request_stop(void)
{
	stop_requested = 1;
}

static bool stopping(void)
{
	return stop_requested != 0;
}

typedef struct Lookup Lookup;
static void lookup_set_tick(Lookup *l, TickFn tick, void *ctx);

/* What a streaming round ended with. */
typedef enum StreamEnd {
	STREAM_DONE,      /* end position reached, or asked to stop */
	STREAM_LOST,      /* connection lost: may be retried */
	STREAM_FAILED,    /* an error that retrying will not mend */
	STREAM_IN_USE,    /* the slot is held by another connection */
	STREAM_RECONNECT, /* idle after a huge message: connect again at once */
} StreamEnd;

typedef struct Run {
	const ReplicateOptions *opt;
	char *pubs_text;        /* sorted, comma-separated */
	Mirror *mirror;
	MirrorState state;
	Session *session;
	SystemInfo sys;
	Lsn endpos;             /* stop here; LSN_INVALID: run until stopped */
	const Catalog *catalog; /* the applier's questions to the source */
	Lookup *lookup;         /* its answers (catalog->ctx) */
	bool conn_failed;       /* the last error was reaching the source */
} Run;

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Opens the mirror; returns an exit code. */
static int open_mirror(Run *run, MirrorMode mode)
{
	char *err = NULL;
	MirrorOpenResult r = mirror_open(run->opt->mirror_path, mode, &run->mirror, &err);

	if (r != MIRROR_OPEN_OK) {
		log_error("%s", err);
		free(err);
		return r == MIRROR_OPEN_LOCKED ? EXIT_IN_USE : EXIT_ERROR;
	}
	if (!mirror_read_state(run->mirror, &run->state)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* Checks the options against what the mirror remembers; exit code. */
static int check_mirror_identity(Run *run)
{
	const ReplicateOptions *opt = run->opt;
	MirrorState *st = &run->state;

	if (!st->present)
		return EXIT_OK;
	if (opt->npubs > 0 && strcmp(run->pubs_text, st->publications) != 0) {
		log_error("mirror \"%s\" follows publication(s) \"%s\", not \"%s\"; run without "
			  "-P or with the same set, or start a new mirror file",
			  opt->mirror_path, st->publications, run->pubs_text);
		return EXIT_ERROR;
	}
	if (opt->slot_given && strcmp(opt->slot, st->slot) != 0) {
		log_error("mirror \"%s\" uses replication slot \"%s\", not \"%s\"; run without "
			  "-S or with -S %s", opt->mirror_path, st->slot, opt->slot, st->slot);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* Connects and checks the source; exit code. */
static int connect_source(Run *run)
{
	system_info_clear(&run->sys);
	run->conn_failed = false;
	if (!session_connect(run->session, run->opt->conninfo) ||
	    !session_identify(run->session, &run->sys)) {
		run->conn_failed = true;
		log_error("%s", session_error(run->session));
		return EXIT_ERROR;
	}
	if (!session_check_wal_level(run->session)) {
		log_error("%s", session_error(run->session));
		return EXIT_ERROR;
	}
	if (run->state.present &&
	    (strcmp(run->state.system_identifier, run->sys.systemid) != 0 ||
	     strcmp(run->state.database, run->sys.dbname) != 0)) {
		log_error("mirror \"%s\" was made from database \"%s\" of system %s, but the "
			  "source is database \"%s\" of system %s; give the right -d, or start a "
			  "new mirror file", run->opt->mirror_path, run->state.database,
			  run->state.system_identifier, run->sys.dbname, run->sys.systemid);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static int check_publications(Run *run, char *const *pubs, int npubs)
{
	char *missing = NULL;

	if (!session_missing_publications(run->session, pubs, npubs, &missing)) {
		log_error("%s", session_error(run->session));
		return EXIT_ERROR;
	}
	if (missing != NULL) {
		log_error("publication %s does not exist in database \"%s\"; create it on the "
			  "source (CREATE PUBLICATION ...) or fix -P", missing, run->sys.dbname);
		free(missing);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* Reports the first table that cannot be mirrored, or two that would
 * share a name in SQLite. */
static bool check_tables(const SourceTable *tables, int n)
{
	char *why = NULL;

	for (int i = 0; why == NULL && i < n; i++) {
		const SourceTable *t = &tables[i];
		const char **cols = xcalloc((size_t)t->ncols + 1, sizeof(char *));

		for (int c = 0; c < t->ncols; c++)
			cols[c] = t->cols[c].name;
		why = naming_table_problem(t->nspname, t->relname, cols, t->ncols);
		free(cols);
		for (int j = 0; why == NULL && j < i; j++)
			why = naming_clash(tables[j].nspname, tables[j].relname, t->nspname,
					   t->relname);
	}
	if (why == NULL)
		return true;
	log_error("%s", why);
	free(why);
	return false;
}

/* Reads the published tables and checks that each can be mirrored. */
static bool read_tables(Run *run, const char *pubs_text, SourceTable **tables, int *n)
{
	char **pubs = NULL;
	int npubs = strv_split(pubs_text, ',', &pubs);
	bool ok = session_publication_tables(run->session, pubs, npubs, tables, n);

	if (!ok)
		log_error("%s", session_error(run->session));
	strv_free(pubs, npubs);
	return ok && check_tables(*tables, *n);
}

/*
 * Whether an existing slot of the mirror's name is provably the one this
 * mirror made, and so may be dropped. A first run that did not finish
 * stored its slot's consistent point with its claim; a slot that nothing
 * has streamed from still has that as its confirmed position, and a slot
 * of the same name made later (by another mirror, after this one's was
 * dropped) has a later one. A rebuild may drop an invalidated slot, which
 * was never confirmed past the mirror if it was this mirror's.
 */
static bool slot_is_ours(const Run *run, const SlotInfo *si, bool rebuild)
{
	if (!run->state.present)
		return false;
	if (rebuild)
		return !si->usable && si->confirmed_flush <= run->state.confirmed_lsn;
	return !run->state.initial_copy_done && si->confirmed_flush == run->state.confirmed_lsn;
}

/*
 * Makes the mirror's slot and fills the mirror from its snapshot: on a
 * first run, on a first run that did not finish (restart), and when the
 * mirror's slot is gone (rebuild).
 *
 * The slot is claimed (the state row names it, with initial_copy_done = 0
 * and the slot's consistent point) only once CREATE_REPLICATION_SLOT has
 * returned, while the snapshot transaction stays open: a creation that
 * fails (every slot in use, or another mirror made one of that name
 * first) leaves no claim, so no later run takes that slot for its own. A
 * kill -9 between the creation and the claim's commit (a few
 * milliseconds) leaves a slot that this mirror cannot prove it made: the
 * next run refuses it with the --drop-slot advice (as a slot already
 * there, or as a slot that moved past the mirror) and never drops it.
 *
 * What the copy reads (tables, row filters, column lists, keys) is read
 * inside the slot's snapshot, after the creation, which may have waited
 * minutes for older transactions: a table added meanwhile is copied. The
 * same check runs once before the creation too, to fail early. The old
 * tables are dropped, the copy made and the new position stored in one
 * SQLite transaction: readers keep the old contents until the new ones are
 * complete, and nothing half-done ever looks complete.
 *
 * --no-initial-copy applies to a mirror's very first run only: a rebuild
 * or a restart copies, since mirroring changes alone would leave it empty
 * (or partly stale) while it looks complete.
 */
static int first_run(Run *run, bool rebuild)
{
	bool fresh = !run->state.present;
	bool restart = run->state.present && !run->state.initial_copy_done;
	bool copy = !fresh || !run->opt->no_initial_copy;
	const char *slot = fresh ? run->opt->slot : run->state.slot;
	const char *pubs_text = fresh ? run->pubs_text : run->state.publications;
	SlotInfo si = {0};
	MirrorState st = {0};
	SourceTable *tables = NULL;
	int ntables = 0;
	Applier *apply = NULL;
	Copier *copier = NULL;
	Lsn start = LSN_INVALID;
	char lsn[LSN_TEXT_SIZE];
	int rc = EXIT_ERROR;

	if (!session_slot_info(run->session, slot, &si)) {
		log_error("%s", session_error(run->session));
		goto done;
	}
	if (si.exists && si.active) {
		log_error("replication slot \"%s\" is in use by another connection", slot);
		rc = EXIT_IN_USE;
		goto done;
	}
	if (si.exists && !slot_is_ours(run, &si, rebuild)) {
		if (fresh)
			log_error("replication slot \"%s\" already exists, but mirror \"%s\" did "
				  "not create it; choose another slot with -S, or drop it first "
				  "with pgmirror --drop-slot -S %s (whatever used it loses its "
				  "place)", slot, run->opt->mirror_path, slot);
		else
			log_error("replication slot \"%s\" exists, but it is not the one mirror "
				  "\"%s\" made (its first run or rebuild did not finish); if no "
				  "other mirror uses it, drop it with pgmirror --drop-slot -S %s "
				  "and run again", slot, run->opt->mirror_path, slot);
		goto done;
	}
	/* Fail early, before the slot exists, on what cannot be mirrored. */
	if (!read_tables(run, pubs_text, &tables, &ntables))
		goto done;
	source_tables_free(tables, ntables);
	tables = NULL;
	ntables = 0;
	if (run->mirror == NULL && (rc = open_mirror(run, MIRROR_CREATE)) != EXIT_OK)
		goto done;
	rc = EXIT_ERROR;
	if (restart)
		log_warning("the first run of mirror \"%s\" did not finish; starting over",
			    run->opt->mirror_path);
	if (!fresh && run->opt->no_initial_copy)
		log_warning("ignoring --no-initial-copy: it applies only to the first run of a "
			    "mirror, and mirror \"%s\" is made again from a fresh copy",
			    run->opt->mirror_path);
	if (si.exists && !session_drop_slot(run->session, slot)) {
		log_error("%s", session_error(run->session));
		goto done;
	}
	if (copy && !session_begin_snapshot(run->session)) {
		log_error("%s", session_error(run->session));
		goto done;
	}
	if (!session_create_slot(run->session, slot, copy, &start)) {
		if (session_error_stopped(run->session)) {
			log_info("%s; the next run starts over", session_error(run->session));
			rc = EXIT_OK;
		} else {
			log_error("%s", session_error(run->session));
			rc = session_error_in_use(run->session) ? EXIT_IN_USE : EXIT_ERROR;
		}
		goto done;
	}
	log_info("created replication slot \"%s\" at %s", slot, lsn_format(start, lsn));

	st.slot = (char *)slot;
	st.publications = (char *)pubs_text;
	st.system_identifier = run->sys.systemid;
	st.database = run->sys.dbname;
	st.confirmed_lsn = start; /* how a restart knows the slot (slot_is_ours()) */
	st.last_commit_time = fresh ? NULL : run->state.last_commit_time;
	st.initial_copy_done = false;
	/* the claim; without a copy the final state below, in one commit, is it */
	if (copy && (!mirror_begin(run->mirror) || !mirror_write_state(run->mirror, &st) ||
		     !mirror_commit(run->mirror))) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	if (copy && stop_requested) {
		log_info("stopped by a signal before the initial copy; the next run starts the "
			 "copy over");
		rc = EXIT_OK;
		goto done;
	}
	/* The tables as the snapshot has them; checked again. */
	if (copy && !read_tables(run, pubs_text, &tables, &ntables))
		goto done;

	apply = apply_new(run->mirror, LSN_INVALID, run->catalog);
	copier = copy_new(run->session, apply, stopping);
	if (!copy_tables(copier, tables, ntables, start)) {
		if (stop_requested) {
			log_info("%s; the next run starts the copy over", copy_error(copier));
			rc = EXIT_OK;
		} else
			log_error("%s", copy_error(copier));
		goto done;
	}
	if (copy && !session_commit(run->session)) {
		log_error("%s", session_error(run->session));
		goto done;
	}
	st.last_commit_time = NULL; /* a snapshot has no commit time */
	st.initial_copy_done = true;
	if (!mirror_write_state(run->mirror, &st)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	if (!apply_flush(apply)) {
		log_error("%s", apply_error(apply));
		goto done;
	}
	if (rebuild || restart)
		log_info("mirror \"%s\" rebuilt from a fresh copy", run->opt->mirror_path);
	mirror_state_clear(&run->state);
	if (!mirror_read_state(run->mirror, &run->state)) {
		log_error("%s", mirror_error(run->mirror));
		goto done;
	}
	rc = EXIT_OK;
done:
	if (run->mirror != NULL)
		mirror_rollback(run->mirror); /* a copy that did not finish */
	copy_free(copier);
	apply_free(apply);
	source_tables_free(tables, ntables);
	slot_info_clear(&si);
	return rc;
}

/*
 * An existing mirror: its slot must be there and not ahead of it. A slot
 * that is gone or invalidated sets *rebuild: the mirror is made again from
 * a fresh copy. A slot ahead of the mirror cannot be mended that way
 * without the user's say (another mirror may be using it).
 */
static int check_slot(Run *run, bool *rebuild)
{
	SlotInfo si = {0};
	char a[LSN_TEXT_SIZE], b[LSN_TEXT_SIZE];
	int rc = EXIT_ERROR;

	*rebuild = false;
	if (!session_slot_info(run->session, run->state.slot, &si)) {
		log_error("%s", session_error(run->session));
		goto done;
	}
	/* checked first: an invalidated slot ahead of the mirror is not its own */
	if (si.exists && si.confirmed_flush > run->state.confirmed_lsn) {
		log_error("replication slot \"%s\" has moved past mirror \"%s\" (slot at %s, "
			  "mirror at %s): changes in between are gone from the source. The mirror "
			  "was restored from an older copy or another mirror uses the same slot. To "
			  "start over: pgmirror --drop-slot -S %s, remove the mirror file, and run "
			  "again", run->state.slot, run->opt->mirror_path,
			  lsn_format(si.confirmed_flush, a), lsn_format(run->state.confirmed_lsn, b),
			  run->state.slot);
		goto done;
	}
	if (!si.exists || !si.usable) {
		log_warning("replication slot \"%s\" of mirror \"%s\" %s; creating it again and "
			    "rebuilding the mirror from a fresh copy (readers keep the old "
			    "contents until the new ones are complete)",
			    run->state.slot, run->opt->mirror_path,
			    si.exists ? "was invalidated on the source (max_slot_wal_keep_size)"
				      : "no longer exists on the source");
		*rebuild = true;
		rc = EXIT_OK;
		goto done;
	}
	if (si.active) {
		log_error("replication slot \"%s\" is in use by another connection",
			  run->state.slot);
		rc = EXIT_IN_USE;
		goto done;
	}
	rc = EXIT_OK;
done:
	slot_info_clear(&si);
	return rc;
}

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
	Lsn server_end;         /* the server's WAL end, as last reported */
	ApplyStats reported;    /* counters at the last progress line */
	int64_t last_progress;  /* when the last progress line was written */
	int64_t last_tick;      /* when a long step last answered the server */
	bool lost;              /* a long step could not answer the server */
	bool big_message;       /* a message of BIG_MESSAGE_BYTES or more came */
} Stream;

static bool send_status(Stream *s, bool reply)
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

	if (stop_requested || s->lost)
		return false;
	now = mono_usecs();
	if (now - s->last_tick < TICK_USECS)
		return true;
	s->last_tick = now;
	if (!send_status(s, false)) {
		s->lost = true;
		return false;
	}
	return true;
}

/* Commits what is applied, stores an idle keepalive position. */
static bool flush(Stream *s)
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
	if (stop_requested)
		log_info("stopping before the last transactions were committed to the mirror; "
			 "the next run applies them again");
	else
		log_error("%s", apply_error(s->apply));
	return false;
}

/*
 * A message could not be applied, and the open group was rolled back. On
 * SIGTERM (a long step interrupted) that is a clean stop: the next run
 * repeats the step. Not reaching the source is a lost connection.
 */
static StreamEnd apply_failed(Stream *s)
{
	if (stop_requested) {
		log_info("stopping before the last transactions were committed to the mirror; "
			 "the next run applies them again");
		return STREAM_DONE;
	}
	log_error("%s", apply_error(s->apply));
	return s->lost || apply_source_lost(s->apply) ? STREAM_LOST : STREAM_FAILED;
}

/* Handles one XLogData payload. */
static StreamEnd handle_xlogdata(Stream *s, const Frame *f)
{
	PgoMessage msg;
	Lsn endpos = s->run->endpos;

	if (!pgoutput_decode(s->dec, f->data, f->len, &msg)) {
		char lsn[LSN_TEXT_SIZE];

		log_error("could not decode the message at %s: %s", lsn_format(f->wal_start, lsn),
			  pgoutput_error(s->dec));
		return STREAM_FAILED;
	}
	if (msg.type == PGO_BEGIN && endpos != LSN_INVALID && msg.u.begin.final_lsn > endpos) {
		s->reached = true; /* this transaction commits past the end position */
		return STREAM_DONE;
	}
	if (f->wal_start > s->received)
		s->received = f->wal_start;
	if (!apply_message(s->apply, &msg))
		return apply_failed(s);
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
			if (!flush(s))
				return stop_requested ? STREAM_DONE : STREAM_FAILED;
		}
	}
	return STREAM_DONE;
}

/*
 * The -v progress line, once per status interval: what was applied since
 * the last line, and how far behind the mirror is. Lag in bytes is the
 * server's WAL end minus the durable position; lag in seconds is the age
 * of the last applied commit, and 0 when nothing is waiting.
 */
static void log_progress(Stream *s)
{
	ApplyStats now;
	Lsn durable = apply_durable_lsn(s->apply);
	uint64_t lag_bytes = s->server_end > durable ? s->server_end - durable : 0;
	double lag_secs = 0;
	char lsn[LSN_TEXT_SIZE];

	if (log_get_level() < LOG_DEBUG)
		return;
	apply_stats(s->apply, &now);
	if (lag_bytes > 0 && now.last_commit_time > 0 &&
	    pgtime_now() > now.last_commit_time)
		lag_secs = (double)(pgtime_now() - now.last_commit_time) / 1e6;
	log_debug("progress: %" PRIu64 " transactions, %" PRIu64 " rows; lag %" PRIu64
		  " bytes, %.1f s; confirmed %s", now.txns - s->reported.txns,
		  now.rows - s->reported.rows, lag_bytes, lag_secs, lsn_format(durable, lsn));
	s->reported = now;
}

static StreamEnd stream(Run *run, Applier *apply)
{
	const ReplicateOptions *opt = run->opt;
	int proto = session_proto_version_for(session_server_version(run->session));
	char **pubs = NULL;
	int npubs = strv_split(run->state.publications, ',', &pubs);
	Stream s = {.run = run, .apply = apply};
	StreamEnd end = STREAM_FAILED;
	int64_t interval = (int64_t)opt->status_interval * 1000000;

	s.received = apply_durable_lsn(apply);
	if (!session_start(run->session, run->state.slot, apply_durable_lsn(apply), proto,
			   pubs, npubs)) {
		log_error("%s", session_error(run->session));
		end = session_error_in_use(run->session) ? STREAM_IN_USE
		      : session_connected(run->session) ? STREAM_FAILED : STREAM_LOST;
		goto done;
	}
	s.dec = pgoutput_decoder_new(proto, false);
	lookup_set_tick(run->lookup, stream_tick, &s);
	mirror_set_tick(run->mirror, stream_tick, &s);
	s.last_status = mono_usecs();
	s.last_progress = s.last_status;
	{
		char lsn[LSN_TEXT_SIZE];

		log_debug("streaming from slot \"%s\" at %s with protocol version %d",
			  run->state.slot, lsn_format(apply_durable_lsn(apply), lsn), proto);
	}

	while (!s.reached && !stop_requested) {
		const uint8_t *buf;
		size_t len;
		Frame f;
		char err[256];
		int64_t now = mono_usecs();
		/* Commits waiting to be flushed: only look; otherwise wait. */
		int wait_ms = apply_in_transaction(apply) ? 1000
			      : apply_pending(apply) > 0 ? 0
			      : run->endpos != LSN_INVALID ? 100 : 1000;
		int r;

		r = session_receive(run->session, &buf, &len, wait_ms);
		if (r < 0) {
			log_error("%s", session_error(run->session));
			end = session_error_data(run->session) ? STREAM_FAILED : STREAM_LOST;
			goto done;
		}
		now = mono_usecs();
		if (r == 0) {
			/* Nothing more for now: make what we have durable. */
			if (!flush(&s))
				goto done;
			if (s.big_message && run->endpos == LSN_INVALID &&
			    !apply_in_transaction(apply)) {
				log_debug("connecting again to give back the memory of a large message");
				(void)send_status(&s, false);
				end = STREAM_RECONNECT;
				goto done;
			}
			if (run->endpos != LSN_INVALID && !apply_in_transaction(apply) &&
			    apply_durable_lsn(apply) >= run->endpos)
				s.reached = true;
			else if (run->endpos != LSN_INVALID && now - s.last_ping >= PING_USECS) {
				s.last_ping = now;
				if (!send_status(&s, true)) {
					end = STREAM_LOST;
					goto done;
				}
			}
		} else {
			if (len >= BIG_MESSAGE_BYTES)
				s.big_message = true;
			if (!frame_decode(buf, len, &f, err, sizeof(err))) {
				log_error("%s", err);
				goto done;
			}
			if (f.wal_end > s.server_end)
				s.server_end = f.wal_end;
			if (f.type == FRAME_KEEPALIVE) {
				if (f.wal_end > s.received)
					s.received = f.wal_end;
				if (!apply_in_transaction(apply)) {
					s.idle_lsn = f.wal_end;
					if (run->endpos != LSN_INVALID && f.wal_end >= run->endpos)
						s.reached = true;
				}
				/*
				 * Store the position first, then answer with it: a
				 * server shutting down sends everything, asks for a
				 * reply and waits until the flush position reported
				 * equals what it sent.
				 */
				if (f.reply_requested && !apply_in_transaction(apply) && !flush(&s))
					goto done;
				if (f.reply_requested && !send_status(&s, false)) {
					end = STREAM_LOST;
					goto done;
				}
			} else {
				StreamEnd e = handle_xlogdata(&s, &f);

				if (e != STREAM_DONE) {
					end = e;
					goto done;
				}
			}
		}
		if (now - s.last_status >= interval) {
			/* Quiet tables still move the slot: store where the stream is. */
			if (!flush(&s))
				goto done;
			if (!send_status(&s, false)) {
				end = STREAM_LOST;
				goto done;
			}
		}
		if (now - s.last_progress >= interval) {
			s.last_progress = now;
			log_progress(&s);
		}
	}
	/* Stopping: keep whole transactions, drop a partial one. */
	if (apply_in_transaction(apply)) {
		log_info("stopping in the middle of a transaction; it will be applied next time");
	} else if (!flush(&s))
		goto done;
	(void)send_status(&s, false);
	end = STREAM_DONE;
done:
	if (end == STREAM_FAILED && stop_requested)
		end = STREAM_DONE; /* a step interrupted by SIGTERM; nothing committed */
	lookup_set_tick(run->lookup, NULL, NULL);
	mirror_set_tick(run->mirror, NULL, NULL);
	pgoutput_decoder_free(s.dec);
	strv_free(pubs, npubs);
	return end;
}

/*
 * The applier's catalog questions, answered over a plain connection that
 * is opened on the first question, and again when it was lost (a server
 * restart ends it as well as the replication connection).
 */
struct Lookup {
	Session *session;
	const char *conninfo;
	TickFn tick;            /* while streaming: stream_tick */
	void *tick_ctx;
	bool stopped;           /* the last look-up was stopped by the tick */
};

static void lookup_set_tick(Lookup *l, TickFn tick, void *ctx)
{
	l->tick = tick;
	l->tick_ctx = ctx;
}

static bool lookup_tick(void *ctx)
{
	Lookup *l = ctx;

	if (l->tick != NULL && !l->tick(l->tick_ctx)) {
		l->stopped = true;
		return false;
	}
	return true;
}

static bool lookup_ready(Lookup *l)
{
	l->stopped = false;
	return session_connected(l->session) || session_connect_plain(l->session, l->conninfo);
}

/* Runs a look-up; once more on a new connection if the old one was dead
 * (a server restart ends it as well as the replication connection). */
#define LOOKUP(l, call) \
	((lookup_ready(l) && (call)) || \
	 (!(l)->stopped && !session_connected((l)->session) && lookup_ready(l) && (call)))

static bool lookup_type(void *ctx, uint32_t oid, SourceType *out)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_type_info(l->session, oid, out));
}

static bool lookup_fill(void *ctx, uint32_t relid, const char *column, SourceFill *out)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_column_fill(l->session, relid, column, out));
}

static bool lookup_attnums(void *ctx, uint32_t relid, const char *const *names, int n,
			   int *attnums)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_column_attnums(l->session, relid, names, n, attnums));
}

/* The applier's row callback, as seen by the look-up: a row it refuses
 * stops the look-up (it is not the source that went away). */
typedef struct LookupRows {
	Lookup *l;
	CatalogRowFn row;
	void *arg;
} LookupRows;

static bool lookup_row(void *arg, const char *const *vals, const int *lens)
{
	LookupRows *r = arg;

	if (!r->row(r->arg, vals, lens)) {
		r->l->stopped = true;
		return false;
	}
	return true;
}

static bool lookup_values(void *ctx, const char *schema, const char *table,
			  const char *const *keys, int nkeys, const char *column,
			  CatalogRowFn row, void *arg)
{
	Lookup *l = ctx;
	LookupRows rows = {l, row, arg};

	return LOOKUP(l, session_column_values(l->session, schema, table, keys, nkeys, column,
					       lookup_row, &rows, lookup_tick, l));
}

static const char *lookup_error(void *ctx)
{
	return session_error(((Lookup *)ctx)->session);
}

/* The last look-up failed for want of a connection (not stopped). */
static bool lookup_lost(void *ctx)
{
	Lookup *l = ctx;

	return !l->stopped && !session_connected(l->session);
}

/* Sleeps up to secs, waking early when asked to stop. */
static void backoff_sleep(int secs)
{
	for (int i = 0; i < secs * 10 && !stop_requested; i++)
		usleep(100000);
}

int replicate_run(const ReplicateOptions *opt)
{
	Run run = {.opt = opt};
	int rc;
	int backoff = 1;
	bool continuous = !opt->once && opt->endpos == LSN_INVALID;
	bool reconnecting = false; /* a stream was lost: wait for the source */
	Lookup lookup = {.session = session_new(), .conninfo = opt->conninfo};
	Catalog catalog = {.ctx = &lookup, .type_info = lookup_type, .column_fill = lookup_fill,
			   .column_attnums = lookup_attnums, .column_values = lookup_values,
			   .error = lookup_error, .lost = lookup_lost};

	run.pubs_text = strv_join(opt->pubs, opt->npubs, ",");
	run.catalog = &catalog;
	run.lookup = &lookup;
	run.session = session_new();
	session_set_stop_check(run.session, stopping);
	if (file_exists(opt->mirror_path) && (rc = open_mirror(&run, MIRROR_WRITE)) != EXIT_OK)
		goto done;
	if ((rc = check_mirror_identity(&run)) != EXIT_OK)
		goto done;
	if (!run.state.present && opt->npubs == 0) {
		log_error("the first run of a mirror needs --publication (-P)");
		rc = EXIT_USAGE;
		goto done;
	}

	for (;;) {
		Applier *apply;
		StreamEnd end;
		char **pubs = NULL;
		int npubs;
		int64_t started;

		rc = connect_source(&run);
		if (rc == EXIT_OK) {
			npubs = strv_split(run.state.present ? run.state.publications : run.pubs_text,
					   ',', &pubs);
			rc = check_publications(&run, pubs, npubs);
			strv_free(pubs, npubs);
		}
		if (rc == EXIT_OK) {
			bool rebuild = false;

			if (run.state.present && run.state.initial_copy_done)
				rc = check_slot(&run, &rebuild);
			if (rc == EXIT_OK && (rebuild || !run.state.present ||
					      !run.state.initial_copy_done))
				rc = first_run(&run, rebuild);
		}
		/* a step that failed because the connection died failed to reach it */
		if (rc != EXIT_OK && !session_connected(run.session))
			run.conn_failed = true;
		if (rc != EXIT_OK && reconnecting && (run.conn_failed || rc == EXIT_IN_USE)) {
			/* a restarting server, or its old walsender not gone yet */
			session_disconnect(run.session);
			log_warning("the source is not available yet; trying again in %d s", backoff);
			backoff_sleep(backoff);
			backoff = backoff_next(backoff, BACKOFF_MAX_SECS);
			if (stop_requested) {
				rc = EXIT_OK;
				break;
			}
			continue;
		}
		if (rc != EXIT_OK || stop_requested)
			goto done; /* a signal during the checks or the copy: exit 0 */
		if (run.endpos == LSN_INVALID)
			run.endpos = opt->endpos != LSN_INVALID ? opt->endpos
				     : opt->once ? run.sys.xlogpos : LSN_INVALID;

		apply = apply_new(run.mirror, run.state.confirmed_lsn, &catalog);
		started = mono_usecs();
		end = stream(&run, apply);
		mirror_rollback(run.mirror);
		apply_free(apply);
		session_disconnect(run.session);
		mirror_state_clear(&run.state);
		if (!mirror_read_state(run.mirror, &run.state)) {
			log_error("%s", mirror_error(run.mirror));
			rc = EXIT_ERROR;
			goto done;
		}
		if (end == STREAM_DONE) {
			rc = EXIT_OK;
			break;
		}
		if (end == STREAM_RECONNECT) {
			session_disconnect(lookup.session); /* its buffer may be as big */
			continue;
		}
		if (end == STREAM_IN_USE) {
			rc = EXIT_IN_USE;
			break;
		}
		if (end == STREAM_LOST && !continuous && !stop_requested)
			log_error("connection to the source lost; the mirror keeps every transaction "
				  "applied so far: run pgmirror again to continue");
		if (end != STREAM_LOST || !continuous || stop_requested) {
			rc = stop_requested && end == STREAM_LOST ? EXIT_OK : EXIT_ERROR;
			break;
		}
		/* a connection that lasted starts the backoff over */
		if (mono_usecs() - started > (int64_t)BACKOFF_MAX_SECS * 1000000)
			backoff = 1;
		reconnecting = true;
		log_warning("connection to the source lost; reconnecting in %d s", backoff);
		backoff_sleep(backoff);
		if (stop_requested) {
			rc = EXIT_OK;
			break;
		}
		backoff = backoff_next(backoff, BACKOFF_MAX_SECS);
	}
done:
	session_free(lookup.session);
	session_free(run.session);
	system_info_clear(&run.sys);
	mirror_state_clear(&run.state);
	mirror_close(run.mirror);
	free(run.pubs_text);
	return rc;
}

int replicate_drop_slot(const ReplicateOptions *opt)
{
	Run run = {.opt = opt};
	const char *slot = opt->slot;
	SlotInfo si = {0};
	int rc;

	run.session = session_new();
	/*
	 * Without -S the slot is the mirror's own; a mistyped mirror path must
	 * not fall back to the default name, which may be another device's.
	 */
	if (!opt->slot_given) {
		if (!file_exists(opt->mirror_path)) {
			log_error("mirror \"%s\" does not exist; to drop a replication slot "
				  "without its mirror, name the slot with -S", opt->mirror_path);
			rc = EXIT_USAGE;
			goto done;
		}
		if ((rc = open_mirror(&run, MIRROR_READ)) != EXIT_OK)
			goto done;
		if (!run.state.present) {
			log_error("mirror \"%s\" has no replication slot of its own (its first run "
				  "did not create one); name the slot to drop with -S",
				  opt->mirror_path);
			rc = EXIT_USAGE;
			goto done;
		}
		slot = run.state.slot;
	}
	rc = EXIT_ERROR;
	if (!session_connect(run.session, opt->conninfo) ||
	    !session_slot_info(run.session, slot, &si)) {
		log_error("%s", session_error(run.session));
		goto done;
	}
	if (!si.exists) {
		log_error("replication slot \"%s\" does not exist on the source; nothing to drop "
			  "(check -S and -d)", slot);
		goto done;
	}
	if (si.active) {
		log_error("replication slot \"%s\" is in use by another connection; stop it first",
			  slot);
		rc = EXIT_IN_USE;
		goto done;
	}
	if (!session_drop_slot(run.session, slot)) {
		log_error("%s", session_error(run.session));
		rc = session_error_in_use(run.session) ? EXIT_IN_USE : EXIT_ERROR;
		goto done;
	}
	log_info("dropped replication slot \"%s\"", slot);
	rc = EXIT_OK;
done:
	slot_info_clear(&si);
	session_free(run.session);
	mirror_state_clear(&run.state);
	mirror_close(run.mirror);
	return rc;
}

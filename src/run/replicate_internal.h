/*
 * replicate_internal.h: what the parts of the replication job share (not
 * for other modules): the run's state, the stop flag, and the entry points
 * of the first run (firstrun.c) and of the streaming loop (stream.c).
 * replicate.c owns the checks, reconnecting with backoff, and the exits.
 */
#ifndef PGMIRROR_REPLICATE_INTERNAL_H
#define PGMIRROR_REPLICATE_INTERNAL_H

#include <stdbool.h>

#include "pgmirror/apply.h"
#include "pgmirror/lookup.h"
#include "pgmirror/mirror.h"
#include "pgmirror/replicate.h"
#include "pgmirror/session.h"

typedef struct Hub Hub;

typedef struct Run {
	const ReplicateOptions *opt;
	char *pubs_text;        /* sorted, comma-separated */
	Mirror *mirror;
	MirrorState state;
	Session *session;
	SystemInfo sys;
	SourceKind kind;        /* primary or standby, asked on each connect */
	Lsn endpos;             /* stop here; LSN_INVALID: run until stopped */
	const Catalog *catalog; /* the applier's questions to the source */
	Lookup *lookup;         /* its answers (catalog->ctx) */
	bool conn_failed;       /* the last error was reaching the source */
	bool unreachable;       /* connecting failed (not logged in service mode:
				 * replicate_run() warns as it tries again) */
	bool worked;            /* this try's connection did useful work: the
				 * stream heard from the server, or a copy
				 * committed rows; a service then tries again at
				 * once and starts its backoff over */
	bool slot_unreadable;   /* the slot's WAL is gone (STREAM_SLOT_GONE): a
				 * slot the server still calls usable, rebuilt
				 * like an invalidated one */
	const char *rebuild_reason; /* why the mirror is rebuilt (a constant) */
	bool resync_done;       /* --resync ran (once, not at each reconnect) */
	bool sync_deferred;     /* the last check left a joining table for later:
				 * the source had no room to sync it (tablesync.c) */
	bool columns_later;     /* the check at start found tables whose columns
				 * differ from the source's, and left them for
				 * after the stream (reconcile.c) */
	int64_t sync_backoff;   /* usecs until a deferred sync is tried again: 0
				 * after a try whose copy stored a part, then
				 * doubling from 1 s to RECONCILE_USECS */
	bool wal_reset_told;    /* the SQLite WAL-reset bug was mentioned */
	bool heal;              /* the mirror file is damaged: prepare() sets it
				 * aside and rebuilds it (heal.c) */
	char *heal_why;         /* what SQLite reported, or the check found */
	bool healing;           /* the rebuild of a damaged mirror runs */
	Mirror *heal_copy;      /* a damaged mirror's copy with its header made
				 * anew (heal_read_settings()), or NULL */
	char *heal_copy_path;
	char *pub_types;        /* the published columns' types as the last check
				 * on run->session's connection found them
				 * (PubFingerprint's types), or NULL */
	Hub *hub;               /* --feed: the feed this run writes (hub.h); NULL: none */
	Lsn text_until;         /* a binary stream met a column it cannot read
				 * in the transaction committed at this LSN:
				 * streams start in text until it is durable
				 * (stream.c); LSN_INVALID: none */
} Run;

/* pgmirror runs until stopped: no --once, --endpos or --verify. */
bool replicate_continuous(const Run *run);

/* SIGTERM (replicate_request_stop()) was seen: finish up. */
bool replicate_stopping(void);

/* SIGHUP (replicate_request_check()) was seen since the last call: the
 * publications are to be checked now. */
bool replicate_take_check_request(void);

/*
 * After the server ended the stream with an error: whether the server now
 * calls the mirror's slot lost (its WAL removed: wal_status = 'lost'),
 * asked on a connection of its own once the slot is no longer active.
 * The error itself does not say so reliably (its SQLSTATE follows errno).
 */
bool replicate_slot_wal_lost(const Run *run);

/*
 * While *si (of slot, read on s) says it is active, reads it again every
 * 100 ms, up to max_ms (a SIGTERM ends the wait): a walsender whose client
 * has gone lets go of its slot only when it notices. False, the session's
 * error set, when it cannot be read.
 */
bool replicate_wait_slot(Session *s, const char *slot, SlotInfo *si, int max_ms);
/* Logs the session's error: as information when a signal cancelled the
 * command (the run then ends with exit 0, and logs no error), else as an
 * error. */
void replicate_log_session_error(Session *s);
/* How long a slot held by another connection is waited for before exit 3:
 * the walsender of a run that has ended holds it until it next writes to
 * its client, which one decoding a big transaction may take a while to do. */
#define SLOT_WAIT_MS 15000

/*
 * The run's health in the mirror (replicate_health.c): a run ending with
 * rc EXIT_ERROR keeps its error as last_error (when it has the mirror
 * open). A service that tries again (lost: its stream's connection was
 * lost; else a try failed to reach the source, or lost it) warns "...
 * now" (after a try whose connection worked, run->worked: the backoff
 * starts over) or "... in N s" (N = *backoff, the next step of the
 * backoff, up to BACKOFF_MAX_SECS), keeps the text there meanwhile,
 * waits, and moves *backoff on; false when asked to stop.
 */
#define BACKOFF_MAX_SECS 60
/* hint.c: "pgmirror" with this run's connection options, what (an
 * option), -S slot (when not NULL) and the mirror file, quoted for the
 * shell, to run as written (malloc'd). */
char *replicate_command(const ReplicateOptions *opt, const char *what, const char *slot);
/* The same for the applier's hints (an ApplyCommandFn; run: the Run). */
char *replicate_hint_command(void *run, const char *option);
void replicate_note_error(Run *run, int rc);
bool replicate_retry_pause(Run *run, int *backoff, bool lost);

/* Opens the mirror into run; returns an exit code. */
int replicate_open_mirror(Run *run, MirrorMode mode);

/*
 * Connects and checks the source, the publications and the slot, and runs
 * the first run when the mirror needs one; an exit code. A step that
 * failed because the connection died sets run->conn_failed. See prepare.c.
 */
int replicate_prepare(Run *run);

/*
 * Makes the mirror's slot and fills the mirror from its snapshot (a first
 * run, a first run that did not finish, or a rebuild after the slot was
 * lost); returns an exit code. See firstrun.c.
 */
int firstrun_run(Run *run, bool rebuild);

/*
 * The mirror's claim on its slot, made before the slot (claim.c): whether
 * the state is an intent only (a run that made or dropped the slot and
 * was cut before it stored the slot's position); whether that slot is the
 * intent's; recording the intent (committed; false logged); dropping a
 * slot this run made and could not claim (true if dropped).
 */
bool claim_is_intent(const MirrorState *st);
bool claim_owns(const MirrorState *st, const SlotInfo *si);
bool claim_intent(Run *run, const char *slot, const char *pubs_text);
bool claim_give_back(Run *run, const char *slot);

/*
 * At start, gives every mirror table of a published table (tables: the
 * publications' tables as they are now) the name its source table has
 * now, in one SQLite transaction; returns an exit code. See renames.c.
 * Called while an applier lives (no group open), it must be followed by
 * apply_forget_tables(): the applier's statements name the old tables.
 */
int renames_at_start(Run *run, const SourceTable *tables, int ntables);

/*
 * Makes the mirror's tables those the publications publish now (see
 * reconcile.c): drops the tables that left (a warning each), syncs those
 * that joined (after the renames, renames_at_start()), and syncs again
 * the mirror tables named in resync (all of them with resync_all; a name
 * from before a rename counts), those published differently now (their
 * stored definitions), those whose columns on the source differ from the
 * mirror's, and those the stream noted as to be copied again
 * (apply_unknown_relations()). s: the connection to read the publications
 * on (NULL: the plain connection of the catalog look-ups, run->lookup, so
 * that a service's check once a minute starts no walsender; the tables to
 * sync share a replication connection of their own, tablesync_sync()).
 * apply: the stream's applier, or NULL; it is told
 * of every table changed, and must have no group open. tick (NULL: none)
 * is called while a sync waits or copies. Returns an exit code.
 */
int reconcile_tables(Run *run, Session *s, Applier *apply, char *const *resync,
		     int nresync, bool resync_all, TickFn tick, void *tick_ctx);

/*
 * The check of the publications (pubcheck.c), at start (s: the run's
 * connection) and in a service's check (s NULL, as for
 * reconcile_tables()): asks their fingerprint, and only when it differs
 * from the one the mirror stored (or for a resync, a sync left for later,
 * tables the stream noted, a table that waits) reads and follows the detail
 * (reconcile_tables(), same arguments) and makes the mirror's indexes
 * match, storing the fingerprint with them. Returns an exit code.
 */
int pubcheck_run(Run *run, Session *s, Applier *apply, char *const *resync, int nresync,
		 bool resync_all, TickFn tick, void *tick_ctx);
/*
 * The publications' fingerprint (session_publication_fingerprint()), asked
 * on s or (NULL) on the look-ups' plain connection; asked on the run's
 * connection, its types are kept for the stream (run->pub_types). False
 * with the error logged and run->conn_failed set when the connection was
 * lost. A first run asks it before it reads the tables, and stores it
 * with the indexes (pubcheck_sync_indexes()) once it has copied them.
 */
bool pubcheck_fingerprint(Run *run, Session *s, PubFingerprint *fp);
/*
 * The source's indexes, made to match on every mirrored table, in one
 * SQLite transaction that also stores fingerprint when store (NULL: the
 * stored one goes), asked through run->catalog; a signal rolls it back.
 * Returns an exit code.
 */
int pubcheck_sync_indexes(Run *run, bool store, const char *fingerprint);

/* A table to sync (tablesync_sync()). */
typedef struct SyncTarget {
	uint32_t oid;           /* the source relation */
	const char *nspname;    /* its names, for messages */
	const char *relname;
	const char *replace;    /* the mirror table synced again; NULL: it joins */
	bool requested;         /* --resync: a failure ends the run, never waits */
} SyncTarget;

/*
 * Syncs the tables tg[0..n-1], all at the snapshot of one temporary slot
 * (made only when n > 0), each in an SQLite transaction of its own with
 * that slot's LSN as its sync LSN (see tablesync.c). A table no longer
 * published in the snapshot is left alone. A service that cannot sync now
 * for a reason a later try may not meet goes on with a warning and sets
 * run->sync_deferred (the check tries again). apply: as for
 * reconcile_tables(). Returns an exit code.
 */
int tablesync_sync(Run *run, Applier *apply, const SyncTarget *tg, int n);

/*
 * The publications' tables (malloc'd, source_tables_free()), read on s or
 * (s NULL) on the plain connection of the catalog look-ups. False with the
 * error logged and run->conn_failed set when the connection was lost.
 */
bool tablesync_published(Run *run, Session *s, SourceTable **tables, int *n);
/*
 * The stream's tick (NULL: none), answered while the two above wait or
 * copy: set by reconcile_tables() for its time.
 */
void tablesync_set_tick(TickFn tick, void *tick_ctx);

/*
 * A damaged mirror (heal.c). heal_note() marks the run for a heal (a
 * clear message; found_by_check: the check's result, else NULL).
 * heal_after_failure(): after any failure, whether SQLite reported damage
 * (then the run is marked, and the caller goes round again). heal_rebuild(),
 * from prepare() once connected: sets the file aside and rebuilds it from
 * a fresh copy with the user's objects; an exit code.
 * heal_check_at_start(): a run that ends by itself checks the file when
 * the last check is a day old. heal_record_check(): stores a check's
 * result; false with the error logged.
 */
#define HEAL_CHECK_MAX_AGE_SECS (24 * 3600)
void heal_note(Run *run, const char *why, const char *found_by_check);
/* A damaged mirror whose settings cannot be read, perhaps for its header
 * alone (not a database, an unknown format, a page count past its end):
 * reads them (and later the user's objects) from a copy with a header
 * made anew, run->heal_copy; heal_forget_copy() removes it. */
void heal_read_settings(Run *run);
void heal_forget_copy(Run *run);
bool heal_after_failure(Run *run);
int heal_rebuild(Run *run);
void heal_check_at_start(Run *run);
bool heal_record_check(Run *run, const char *result);
/* heal_finish_interrupted(): a heal killed after it set the damaged file
 * aside and before the new one took its name left nothing under the name:
 * the new one takes it now; false with the error logged. */
bool heal_finish_interrupted(const char *path);
/* heal_resume(): a heal that did not finish (a kill, a signal, a failure)
 * left its new file: the mirror is marked for a heal again at once. */
void heal_resume(Run *run);
/* heal_take_check_result(): logs a check's result (usecs long) and acts on
 * it: damage marks the run for a heal; a sound file's result is stored.
 * False when the run cannot go on (damaged, or the result not stored). */
bool heal_take_check_result(Run *run, MirrorCheckResult res, const char *found,
			    int64_t usecs);

/* What a streaming round ended with. */
typedef enum StreamEnd {
	STREAM_DONE,      /* end position reached, or asked to stop */
	STREAM_LOST,      /* connection lost: may be retried */
	STREAM_FAILED,    /* an error that retrying will not mend */
	STREAM_IN_USE,    /* the slot is held by another connection */
	STREAM_RECONNECT, /* idle after a huge message: connect again at once */
	STREAM_SLOT_GONE, /* the slot's WAL is gone from the source: rebuild */
	STREAM_DAMAGED,   /* the check found the mirror damaged: heal */
} StreamEnd;

/*
 * The format of a stream's values (stream_format.c). stream_format_choose():
 * whether a round that starts at durable asks for binary (*binary), logged
 * with -v; false with the session's error when the published tables
 * cannot be read. stream_format_relation(): whether a binary stream can
 * read every column of rel, a Relation message of the transaction that
 * commits at txn_final; false (logged, run->text_until set): the round
 * must end before anything of that transaction is applied.
 */
bool stream_format_choose(Run *run, Lsn durable, char *const *pubs, int npubs, bool *binary);
bool stream_format_relation(Run *run, Applier *apply, const PgoRelation *rel, Lsn txn_final);

/* Streams from the mirror's slot into apply until one of the ends above. */
StreamEnd stream_run(Run *run, Applier *apply);

/*
 * --verify (verify.c). verify_begin() opens a second replication
 * connection with a snapshot and its consistent point (a temporary slot);
 * NULL, with *rc the exit code, when it cannot. Once the mirror is brought
 * to verify_point() (every transaction committed before it applied, none
 * after), verify_compare() compares every table and prints one line per
 * table; it returns EXIT_OK, EXIT_DIFFERS or EXIT_ERROR.
 */
typedef struct Verifier Verifier;
Verifier *verify_begin(Run *run, int *rc);
/* --verify could not bring the mirror to a point to compare at: says which
 * tables are still copying, and how far each got (no table is compared
 * while its copy is unfinished: it is not a difference, exit 1). */
void verify_tell_unfinished(Run *run);
Lsn verify_point(const Verifier *v);
int verify_compare(Verifier *v, Run *run);
void verify_free(Verifier *v);

#endif

/*
 * hub.h: a mirror that writes a feed (--feed=DIR; docs/feed.md), the run's
 * side of it (hub.c, hub_publish.c). Not for other modules.
 *
 * The hub hears of every write transaction of its mirror (the mirror's
 * commit hooks). One that the stream's applier commits is a group: its
 * records (the messages, the catalog's answers) are synced in the feed's
 * open segment before it commits, and its number commits with it. One
 * that a step of the run's own commits (a table's copy, a table that
 * left, a rebuild) changes the mirror in a way the stream does not carry:
 * the feed then starts a new epoch from a snapshot, and its devices take
 * that snapshot. Segments are closed and listed in the manifest at the
 * stream's idle points and when a run ends; the slot is confirmed only up
 * to what the manifest lists.
 */
#ifndef PGMIRROR_RUN_HUB_H
#define PGMIRROR_RUN_HUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/feed_catalog.h"
#include "pgmirror/feed_manifest.h"
#include "pgmirror/feed_writer.h"
#include "replicate_internal.h"

/* A segment is closed when its first group is this old, or it holds this
 * many bytes (docs/feed.md). */
#define HUB_SEGMENT_SECS 60
#define HUB_SEGMENT_BYTES ((uint64_t)16 << 20)
/* A file the manifest no longer lists is removed this long after. */
#define HUB_RETIRE_SECS 3600
/* A snapshot by itself at most this often. */
#define HUB_AUTO_SNAPSHOT_SECS 3600
/* --feed-keep's default. */
#define HUB_KEEP_DEFAULT 3

/* The catalog of a run with --feed: the look-ups', tapped (before the
 * first run, so that the mirror's first questions pass through it). */
void hub_tap(Run *run);

/* Once the mirror is open, before the run is prepared: goes on with the
 * feed where the mirror's commits left it, and hears of them from now on,
 * so that a step of the run's own (a copy, a rebuild) is seen. An exit
 * code. */
int hub_take_up(Run *run);
/*
 * Once the run is prepared (the mirror holds a whole copy): begins or
 * goes on with the feed (a new epoch when the mirror is not the one the
 * feed follows, or a step of the run's own changed it). An exit code.
 */
int hub_ready(Run *run);
/* At a run's end: closes the open segment, lists it (and a snapshot with
 * --feed-snapshot), frees the hub. An exit code (rc when it was not OK). */
int hub_finish(Run *run, int rc);

/* The stream (stream.c): a round with these settings begins, applying
 * into apply (its commits are groups), or (apply NULL) ends;
 * hub_streaming(): a step of the run's own within the round begins (on
 * false) and ends (true). */
void hub_round(Run *run, Applier *apply, int server_version, int proto, bool binary);
void hub_streaming(Run *run, bool on);
/* A message the stream's applier took (lsn: its WAL position). */
void hub_message(Run *run, Lsn lsn, const uint8_t *data, size_t len, const PgoMessage *msg);
/* At an idle point of the stream: a segment due (all: any segment that
 * holds a group, at the stream's end, so that its last status confirms
 * all the mirror holds) is closed and listed, a new epoch begun when one
 * is due. False, logged, when that failed. */
bool hub_publish(Run *run, bool all) PGM_MUST_CHECK;
/* The position the slot may be confirmed up to: durable, but no further
 * than what the manifest lists. */
Lsn hub_confirmable(const Run *run, Lsn durable);

/* What hub.c and hub_publish.c share. */
typedef struct Hub {
	Run *run;
	const char *dir;          /* --feed */
	FeedWriter *w;            /* the open segment; NULL until the feed begins */
	FeedTap *tap;             /* the run's catalog */
	Mirror *hooked;           /* the mirror whose commits the hub hears of */
	char epoch[FEED_EPOCH_LEN + 1];
	FeedManifest man;         /* as last written (or read at start) */
	bool have_man;
	uint64_t seq;             /* the highest seq written or read */
	bool streaming;           /* the stream's applier commits now */
	bool stale;               /* a step of the run's own changed the mirror */
	Applier *apply;           /* the stream's, for commit times */
	bool have_source;         /* a round told the stream's settings: */
	uint32_t server_version;  /* the source's */
	uint8_t proto;            /* pgoutput's protocol version */
	bool binary;              /* values may come in binary */
	uint64_t txn_mark;        /* where the recorded transaction's records begin */
	bool recording;           /* the stream's transaction is recorded */
	char **retiring;          /* files no longer listed, not yet in a manifest */
	int nretiring;
} Hub;

/* hub_publish.c: the feed's files. */
/* Writes a new manifest from the hub's, with seq one more; false logged. */
bool hub_write_manifest(Hub *h) PGM_MUST_CHECK;
/* A snapshot of the mirror after the last committed group, listed. */
bool hub_take_snapshot(Hub *h) PGM_MUST_CHECK;
/* Lists segment seg (taken), applies --feed-keep, removes files retired
 * long enough. */
void hub_list_segment(Hub *h, FeedSegment *seg);
void hub_retention(Hub *h);
/* Every file listed is retired (a new epoch begins). */
void hub_retire_all(Hub *h);
/* Forgets the files retired since the last manifest (a hub that ends
 * before its next manifest leaves them listed). */
void hub_forget_retiring(Hub *h);
/* A snapshot is due by the rule of docs/feed.md. */
bool hub_snapshot_due(const Hub *h);

#endif

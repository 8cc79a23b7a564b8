/*
 * feed_writer.h: a hub's open segment (docs/feed.md, "When the hub writes
 * what"). The records of the groups the hub's mirror takes are appended
 * to DIR/.hub/open.pgmf as they come; a group's end (its C record) is
 * synced to disk before the mirror transaction that holds the group
 * commits, and a group whose transaction rolls back is cut off again. A
 * hub that starts cuts the open segment back to the last group its mirror
 * committed. Closing the segment (its E record, the file compressed and
 * put in place under its name) starts a new one, which restates first
 * the newest Relation and Type message of every relation and the catalog
 * answers that a reader starting there needs.
 *
 * The writer knows nothing of the mirror: its caller (the hub, in the
 * run) hears of the mirror's commits and rollbacks and passes them on.
 */
#ifndef PGMIRROR_FEED_WRITER_H
#define PGMIRROR_FEED_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/feed_file.h"
#include "pgmirror/feed_format.h"
#include "pgmirror/feed_manifest.h"
#include "pgmirror/pgoutput.h"
#include "pgmirror/util.h"

typedef struct FeedWriter FeedWriter;

/*
 * A writer of the feed in dir, of epoch, whose mirror last committed
 * group (0: none yet) with confirmed_lsn lsn; listed: the last group the
 * manifest lists (0: none). The open segment a killed hub left is cut
 * back to group (or dropped when it holds nothing after listed). NULL,
 * with err set, when the open segment cannot be read or cut.
 */
FeedWriter *feed_writer_open(const char *dir, const char *epoch, uint64_t group, Lsn lsn,
			     uint64_t listed, ErrBuf *err);
void feed_writer_free(FeedWriter *w);
/*
 * w (a new epoch's writer, within the same stream) takes what old kept to
 * restate: pgoutput sends a relation's Relation message once a
 * connection, so the new epoch's segments restate the ones sent before.
 */
void feed_writer_keep_from(FeedWriter *w, FeedWriter *old);
const char *feed_writer_error(const FeedWriter *w);

/* What the M records of the groups that follow come from: a segment
 * whose header says otherwise is closed first (feed_writer_due()). */
void feed_writer_set_source(FeedWriter *w, uint32_t server_version, uint8_t proto_version,
			    bool binary);

/*
 * A pgoutput message the applier took (lsn: its WAL position; msg its
 * decoded form, borrowed): an M record. A Relation or Type message is
 * also kept to be restated by later segments; feed_writer_note() keeps
 * one without writing it (a message of a transaction the mirror held
 * already).
 */
void feed_writer_message(FeedWriter *w, Lsn lsn, const uint8_t *data, size_t len,
			 const PgoMessage *msg);
void feed_writer_note(FeedWriter *w, Lsn lsn, const uint8_t *data, size_t len,
		      const PgoMessage *msg);

/*
 * The records of the open group go into this buffer (an A record, an O
 * record); feed_writer_take() then takes what was put there. key (the
 * canonical key of a catalog question, feed_key_*()) keeps an answer to
 * restate in later segments; NULL: not restated.
 */
FeedBuf *feed_writer_buf(FeedWriter *w);
void feed_writer_take(FeedWriter *w, const uint8_t *key, size_t key_len);

/* Where the open group's records end now, and cutting them back to such
 * a mark (a transaction the mirror skipped or found empty). */
uint64_t feed_writer_mark(const FeedWriter *w);
bool feed_writer_cut(FeedWriter *w, uint64_t mark) PGM_MUST_CHECK;

/* Records were written since the last group ended. */
bool feed_writer_dirty(const FeedWriter *w);
/* The position after the last group that ended. */
Lsn feed_writer_lsn(const FeedWriter *w);
/* The last group committed. */
uint64_t feed_writer_group(const FeedWriter *w);

/*
 * Ends the open group: its C record (its number in *group, the mirror's
 * confirmed_lsn after it, the last source commit's time), synced to disk.
 * The caller stores *group in the mirror transaction that commits now,
 * then says how that ended: feed_writer_committed() or
 * feed_writer_rolled_back() (the group is cut off again).
 */
bool feed_writer_end_group(FeedWriter *w, Lsn lsn, int64_t commit_time, uint64_t *group)
	PGM_MUST_CHECK;
void feed_writer_committed(FeedWriter *w);
void feed_writer_rolled_back(FeedWriter *w);

/* Whether the open segment is to be closed: it holds a committed group
 * and its first group committed secs seconds ago or more, or it holds
 * max_bytes or more. */
bool feed_writer_due(const FeedWriter *w, int64_t secs, uint64_t max_bytes);

/*
 * Closes the open segment, once every group in it is committed (no group
 * open): its E record, the file compressed and put in place as
 * seg/EPOCH/..., *out describing it (out->name malloc'd); the caller then
 * lists it in a new manifest, and the next record begins a new segment.
 * out->name NULL: there was nothing to close.
 */
bool feed_writer_close(FeedWriter *w, FeedSegment *out) PGM_MUST_CHECK;

#endif

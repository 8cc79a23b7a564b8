/*
 * device.h: a mirror that reads a feed instead of PostgreSQL (--from=URL;
 * docs/feed.md): device.c takes the manifest, a snapshot when the device
 * needs one, and the segments after the device's group; device_replay.c
 * applies a segment's groups with the same decoder, applier and mirror as
 * a stream from PostgreSQL. Not for other modules.
 */
#ifndef PGMIRROR_RUN_DEVICE_H
#define PGMIRROR_RUN_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/mirror.h"
#include "pgmirror/replicate.h"
#include "pgmirror/util.h"

/* How often a device's service reads the manifest (docs/feed.md). */
#define DEVICE_POLL_SECS 5

typedef struct Replay Replay;

/*
 * A replay into m, whose confirmed_lsn is lsn and whose last group is
 * group (of the feed's epoch); it stops before a transaction that commits
 * after endpos (LSN_INVALID: none). It hears of m's commits (the group
 * each one stores) until replay_free().
 */
Replay *replay_new(Mirror *m, Lsn lsn, uint64_t group, Lsn endpos);
void replay_free(Replay *r);
const char *replay_error(const Replay *r);

/*
 * Applies the groups after the replay's of a segment's decompressed
 * contents (name: for messages), checked whole before a byte of it is
 * applied, whole groups in a SQLite transaction (several, up to 5,000
 * source transactions or half a second of work) with the last one's
 * number and position. False with the error set (nothing is applied of
 * the groups since the last commit); *reached: the end position was met.
 */
bool replay_segment(Replay *r, const char *name, const uint8_t *contents, size_t len,
		    bool *reached) PGM_MUST_CHECK;
/* The last group applied, and the position after it. */
uint64_t replay_group(const Replay *r);
Lsn replay_lsn(const Replay *r);


#endif

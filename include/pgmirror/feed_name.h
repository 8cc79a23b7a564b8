/*
 * feed_name.h: the feed's names and texts (docs/feed.md): an epoch, the
 * names of segments and snapshots, SHA-256 digests as hex, and the UTC
 * times of manifest.json. Pure but for feed_epoch_new(), which asks the
 * kernel for random bytes.
 *
 * Every hex digit of a name is lower-case:
 *
 *	seg/EPOCH/FFFFFFFFFFFFFFFF-LLLLLLLLLLLLLLLL-HHHHHHHHHHHHHHHH.pgmf.zst
 *	snap/EPOCH/GGGGGGGGGGGGGGGG-HHHHHHHHHHHHHHHH.sqlite.zst
 *
 * EPOCH 32 hex digits, F, L and G a group number in 16, H the first 16 of
 * the file's SHA-256. A name is parsed back only when it is exactly one of
 * these shapes, so a name read from a manifest can never climb out of the
 * feed's directory ("..", "/", a NUL) or stand for another file.
 */
#ifndef PGMIRROR_FEED_NAME_H
#define PGMIRROR_FEED_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"

#define FEED_EPOCH_LEN 32      /* hex digits of an epoch */
#define FEED_SHA256_LEN 64     /* hex digits of a SHA-256 */
#define FEED_NAME_HASH_LEN 16  /* hex digits of the SHA-256 in a name */
/* "YYYY-MM-DDTHH:MM:SS.ffffffZ" and its NUL */
#define FEED_TIME_SIZE 28

/* Whether s[0..n) is n lower-case hex digits (and n > 0). */
bool feed_hex_lower(const char *s, size_t n);
/* Whether s is an epoch: exactly FEED_EPOCH_LEN lower-case hex digits. */
bool feed_epoch_valid(const char *s);
/* Whether s is a SHA-256: exactly FEED_SHA256_LEN lower-case hex digits. */
bool feed_sha256_valid(const char *s);

/* A new epoch, 16 random bytes from the kernel as lower-case hex, into out;
 * false with errno set when the kernel gives none. */
bool feed_epoch_new(char out[FEED_EPOCH_LEN + 1]) PGM_MUST_CHECK;

/* The names of a segment holding groups first to last, and of a snapshot
 * after group, of epoch, whose file's SHA-256 is sha256 (64 hex digits, of
 * which the name takes 16); malloc'd. */
char *feed_segment_name(const char *epoch, uint64_t first, uint64_t last, const char *sha256);
char *feed_snapshot_name(const char *epoch, uint64_t group, const char *sha256);

/* What a name says; false for anything but exactly the shapes above. */
typedef struct FeedName {
	char epoch[FEED_EPOCH_LEN + 1];
	uint64_t first;                      /* a segment's first group; a snapshot's group */
	uint64_t last;                       /* a segment's last group; a snapshot: = first */
	char hash[FEED_NAME_HASH_LEN + 1];   /* the first 16 hex digits of the SHA-256 */
} FeedName;
bool feed_segment_name_parse(const char *name, FeedName *out) PGM_MUST_CHECK;
bool feed_snapshot_name_parse(const char *name, FeedName *out) PGM_MUST_CHECK;

/*
 * A time of the manifest, µs since 2000-01-01 UTC (PostgreSQL's epoch), as
 * RFC 3339 UTC text: "2026-12-07T18:02:10.448Z", the fraction only when it
 * is not zero, without its trailing zeros. feed_time_parse() takes exactly
 * that shape (1 to 6 digits of fraction, "Z", a date that exists, years
 * 0001 to 9999) and nothing else. feed_time_format() is false for a time
 * outside those years.
 */
bool feed_time_format(int64_t pg_usecs, char buf[FEED_TIME_SIZE]) PGM_MUST_CHECK;
bool feed_time_parse(const char *text, int64_t *pg_usecs) PGM_MUST_CHECK;

#endif

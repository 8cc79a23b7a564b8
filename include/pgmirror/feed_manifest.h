/*
 * feed_manifest.h: manifest.json (docs/feed.md, "The manifest"), the one
 * file of a feed that changes: written from a FeedManifest as JSON text,
 * and parsed back strictly (jansson), every member checked and the whole
 * checked for sense (segments in order without gaps, names that match
 * their groups and digests, positions that follow each other), so that a
 * device never acts on a manifest that could not have been written.
 */
#ifndef PGMIRROR_FEED_MANIFEST_H
#define PGMIRROR_FEED_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/feed_name.h"
#include "pgmirror/util.h"

#define FEED_MANIFEST_FORMAT "pgmirror-feed"
#define FEED_MANIFEST_VERSION 1
#define FEED_MANIFEST_MAX (16 * 1024 * 1024)   /* bytes */
/* Group numbers, sizes and seq are JSON integers below 2^53. */
#define FEED_JSON_INT_MAX ((INT64_C(1) << 53) - 1)

/* The feed's identity: a device follows one and refuses any other. */
typedef struct FeedSource {
	char *system_identifier;   /* the source's, as decimal text */
	char *database;
	char *slot;                /* the hub's slot */
	char **publications;       /* sorted, no two alike */
	int npublications;
} FeedSource;

typedef struct FeedSegment {
	char *name;                /* seg/EPOCH/F-L-H.pgmf.zst */
	uint64_t first_group;
	uint64_t last_group;
	Lsn start_lsn;             /* the position before its first group */
	Lsn end_lsn;               /* after its last */
	uint64_t size;             /* of the file as served */
	uint64_t raw_size;         /* of its contents */
	char sha256[FEED_SHA256_LEN + 1];
} FeedSegment;

typedef struct FeedSnapshot {
	char *name;                /* snap/EPOCH/G-H.sqlite.zst */
	uint64_t group;            /* the hub's mirror after this group */
	Lsn lsn;                   /* its confirmed_lsn */
	uint64_t size;
	uint64_t raw_size;
	char sha256[FEED_SHA256_LEN + 1];
} FeedSnapshot;

/* Times are µs since 2000-01-01 UTC (PostgreSQL's epoch). */
typedef struct FeedManifest {
	FeedSource source;
	char epoch[FEED_EPOCH_LEN + 1];
	uint64_t seq;              /* grows with every manifest the hub writes */
	int64_t issued_at;
	uint32_t server_version;   /* the source's server_version_num */
	uint64_t end_group;        /* the last group the feed holds (0: none) */
	Lsn end_lsn;               /* the hub's confirmed_lsn after it */
	int64_t end_time;          /* commit time of the last source transaction; 0: none (null) */
	uint64_t oldest_group;     /* the first group the segments hold */
	Lsn oldest_lsn;            /* the position before it */
	FeedSegment *segments;     /* oldest first */
	int nsegments;
	FeedSnapshot *snapshots;   /* oldest first: the last is the newest */
	int nsnapshots;
	bool has_expires;          /* an "expires" member (optional) */
	int64_t expires;
} FeedManifest;

/*
 * Whether m makes sense as a whole (the checks feed_manifest.c's opening
 * comment lists): false with a message in err, "invalid manifest: ...".
 * The writer and the parser both run it.
 */
bool feed_manifest_check(const FeedManifest *m, ErrBuf *err) PGM_MUST_CHECK;

/*
 * The manifest as JSON text (malloc'd, UTF-8, one member a line), after
 * the same checks a reader makes: false with a message in err when m
 * could not be read back.
 */
bool feed_manifest_write(const FeedManifest *m, char **text, ErrBuf *err) PGM_MUST_CHECK;

/*
 * Parses len bytes of manifest.json into *out (free it with
 * feed_manifest_free(), also after a failure). Refuses, with a message in
 * err that begins "invalid manifest: " and names the member: more than
 * FEED_MANIFEST_MAX bytes, text that does not parse as one JSON object (a
 * member given twice included), another format or version, a member
 * missing or of another type, an integer below 0 or above 2^53 - 1, an
 * epoch, digest, position, time or name not of its documented shape, and
 * a whole that makes no sense (see feed_manifest.c). Members it does not
 * know are ignored.
 */
bool feed_manifest_parse(const char *text, size_t len, FeedManifest *out,
			 ErrBuf *err) PGM_MUST_CHECK;

void feed_manifest_free(FeedManifest *m);
void feed_source_free(FeedSource *s);

/* The index of the segment holding group, or -1. */
int feed_manifest_find_segment(const FeedManifest *m, uint64_t group);

#endif

/*
 * feed_link.h: where a device reads a feed from (--from=URL): the one
 * small part that knows the transport. Today a directory (a path, or a
 * file:// URL); HTTP goes here too. A source fetches the manifest (and
 * tells when it has not changed since the last fetch, so that a quiet
 * poll reads no more), and fetches a file the manifest names into a local
 * path, checked against the size and SHA-256 the manifest gives before the
 * caller uses a byte of it.
 */
#ifndef PGMIRROR_FEED_LINK_H
#define PGMIRROR_FEED_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"

typedef struct FeedLink FeedLink;

/* The source at url (a directory path or file://PATH), fetching files
 * into the directory work; NULL, with err set, for a URL this pgmirror
 * cannot read. */
FeedLink *feed_link_new(const char *url, const char *work, ErrBuf *err);
void feed_link_free(FeedLink *s);
/* The URL as it may be shown and stored (credentials masked). */
const char *feed_link_shown(const FeedLink *s);

/* manifest.json: *text malloc'd (NUL-terminated), or *unchanged true (and
 * *text NULL) when it is the one fetched last. False with err set. */
bool feed_link_manifest(FeedLink *s, char **text, size_t *len, bool *unchanged,
			  ErrBuf *err) PGM_MUST_CHECK;

/* The next manifest is taken as changed (the last was refused). */
void feed_link_forget(FeedLink *s);

/*
 * The file name (as the manifest lists it) as a local path to read
 * (*path malloc'd), checked: its size and SHA-256 are those given; *temp:
 * the caller removes it after use. False with err set, naming the file.
 */
bool feed_link_file(FeedLink *s, const char *name, uint64_t size, const char *sha256,
		      char **path, bool *temp, ErrBuf *err) PGM_MUST_CHECK;

#endif

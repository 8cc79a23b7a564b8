/*
 * feed_file.h: the feed's files on disk (docs/feed.md): SHA-256 digests
 * (OpenSSL's EVP), zstd frames at level 3 written and read with bounded
 * memory, and files put in place the way the feed asks (written whole
 * under a temporary name in DIR/.hub/, synced, renamed into place, the
 * directory synced).
 *
 * Every function returns false with a message in err naming the file and
 * what went wrong ("could not decompress \"x\": ..."); messages name the
 * paths they were given, so a caller gives the paths it wants to see.
 */
#ifndef PGMIRROR_FEED_FILE_H
#define PGMIRROR_FEED_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pgmirror/feed_name.h"
#include "pgmirror/util.h"

#define FEED_ZSTD_LEVEL 3
/* The largest zstd window a reader accepts (log2): 8 MiB, where level 3
 * uses at most 2 MiB; a frame that asks for more is refused rather than
 * given the memory. */
#define FEED_ZSTD_WINDOW_LOG_MAX 23
/* The feed's directory of work files, never served. */
#define FEED_HUB_DIR ".hub"

/* A file as the manifest lists it. */
typedef struct FeedFileInfo {
	uint64_t size;                       /* of the file as written (compressed) */
	uint64_t raw_size;                   /* of its contents */
	char sha256[FEED_SHA256_LEN + 1];    /* of the file as written, lower-case hex */
} FeedFileInfo;

/* SHA-256 of len bytes, or of the file at path (and its size), as 64
 * lower-case hex digits. */
bool feed_sha256_buf(const void *buf, size_t len, char out[FEED_SHA256_LEN + 1],
		     ErrBuf *err) PGM_MUST_CHECK;
bool feed_sha256_file(const char *path, char out[FEED_SHA256_LEN + 1], uint64_t *size,
		      ErrBuf *err) PGM_MUST_CHECK;

/*
 * One zstd frame at FEED_ZSTD_LEVEL, with its content size and checksum,
 * of len bytes or of the file at src, written to a new file at path
 * (replaced if it is there; not synced: feed_file_place() syncs it). The
 * file is read and written in pieces, so memory stays bounded whatever
 * its size. *info describes what was written.
 */
bool feed_compress_buf(const void *buf, size_t len, const char *path, FeedFileInfo *info,
		       ErrBuf *err) PGM_MUST_CHECK;
bool feed_compress_file(const char *src, const char *path, FeedFileInfo *info,
			ErrBuf *err) PGM_MUST_CHECK;

/*
 * The contents of the zstd file at path, which must be one frame that
 * decodes to exactly raw_size bytes: into a malloc'd buffer (*out, *len:
 * memory grows with what is decoded, never past raw_size), or into a new
 * file at dst (replaced if it is there; not synced). A file that is not
 * zstd, a frame cut short, damaged, decoding to more or fewer bytes, or
 * followed by more bytes is an error, and dst is then removed.
 */
bool feed_decompress_to_buf(const char *path, uint64_t raw_size, uint8_t **out, size_t *len,
			    ErrBuf *err) PGM_MUST_CHECK;
bool feed_decompress_to_file(const char *path, uint64_t raw_size, const char *dst,
			     ErrBuf *err) PGM_MUST_CHECK;

/* DIR/.hub/file, for a file being written (malloc'd); feed_file_hub_dir()
 * makes DIR/.hub when it is missing (its creation synced). */
char *feed_file_hub_path(const char *dir, const char *file);
bool feed_file_hub_dir(const char *dir, ErrBuf *err) PGM_MUST_CHECK;

/*
 * Puts the file at tmp (in DIR/.hub/) in place as DIR/name: the
 * directories of name made when missing (each creation synced), tmp's
 * data synced, the rename, then name's directory synced. From then on
 * name survives a power cut with all its bytes.
 */
bool feed_file_place(const char *dir, const char *tmp, const char *name,
		     ErrBuf *err) PGM_MUST_CHECK;
/* len bytes written whole as DIR/name the same way, through
 * DIR/.hub/NAME.tmp (manifest.json). */
bool feed_file_write(const char *dir, const char *name, const void *buf, size_t len,
		     ErrBuf *err) PGM_MUST_CHECK;

/*
 * Reads the open file f to its end, or past max bytes: *text (malloc'd,
 * NUL-terminated) grows with what is read, so a manifest of a few kB
 * takes a few kB (a block of max bytes, freed, would make the C library
 * keep as much of the heap for the rest of the run: its mmap threshold
 * rises to the size of a mapped block freed). *len > max: the file is
 * larger. False on a read error (errno set, nothing returned).
 */
bool feed_read_bounded(FILE *f, size_t max, char **text, size_t *len) PGM_MUST_CHECK;

#endif

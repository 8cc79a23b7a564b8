/*
 * feed_io.h: what feed_file.c and feed_zstd.c share (feed_file.c): plain
 * reads and writes of a descriptor, and SHA-256 contexts. Each returns
 * false (or -1) with errno set, or with a message in err where it takes
 * one, naming the path.
 */
#ifndef PGMIRROR_FEED_IO_H
#define PGMIRROR_FEED_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <openssl/evp.h>

#include "pgmirror/feed_file.h"

/* All n bytes, going on after EINTR and short writes. */
bool feed_io_write_all(int fd, const void *buf, size_t n);
/* Up to n bytes; 0 at the end, -1 on an error (errno). */
ssize_t feed_io_read(int fd, void *buf, size_t n);
/* path opened to read, or created (replaced) to write, mode 0644; -1 with
 * a message in err. */
int feed_io_open_read(const char *path, ErrBuf *err);
int feed_io_open_write(const char *path, ErrBuf *err);
/* Closes a file that was written: an error of a delayed write shows here. */
bool feed_io_close_written(int fd, const char *path, ErrBuf *err);

/* A SHA-256 context (NULL: OpenSSL failed); _end() writes the digest as
 * hex and frees ctx. */
EVP_MD_CTX *feed_io_sha_begin(void);
bool feed_io_sha_end(EVP_MD_CTX *ctx, char out[FEED_SHA256_LEN + 1]);

#endif

/*
 * feed_zstd.c: the feed's zstd frames (include/pgmirror/feed_file.h).
 *
 * Compression streams through ZSTD_compressStream2() with buffers of the
 * sizes zstd recommends, so a snapshot of gigabytes takes the memory of a
 * few buffers and one context; the digest of what is written is taken on
 * the way out, so a file is never read back to be named. The frame says
 * its content size and carries zstd's own checksum, so damage shows even
 * before the reader's SHA-256 would have caught it.
 *
 * Decompression trusts nothing in the file: the window it may ask for is
 * capped (FEED_ZSTD_WINDOW_LOG_MAX), the bytes it decodes to are counted
 * against the size the manifest gave before they are kept, the buffer
 * grows only with what was decoded, and the frame must end exactly where
 * the file does.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "feed_io.h"

/* --- compression -------------------------------------------------------------- */

/* Where a frame goes: the file, with its size and digest taken on the way. */
typedef struct Sink {
	int fd;
	const char *path;
	EVP_MD_CTX *sha;
	uint64_t size;
	void *buf;          /* ZSTD_CStreamOutSize() bytes */
	size_t cap;
	ErrBuf *err;
} Sink;

/* Feeds in[0..n) to the frame (end: and ends it), writing what comes out. */
static bool compress_some(ZSTD_CCtx *cctx, Sink *s, const void *in, size_t n,
			  ZSTD_EndDirective end)
{
	ZSTD_inBuffer ib = {in, n, 0};
	bool done;

	do {
		ZSTD_outBuffer ob = {s->buf, s->cap, 0};
		size_t rest = ZSTD_compressStream2(cctx, &ob, &ib, end);

		if (ZSTD_isError(rest)) {
			errbuf_set(s->err, "could not compress into \"%s\": %s", s->path,
				   ZSTD_getErrorName(rest));
			return false;
		}
		if (!feed_io_write_all(s->fd, s->buf, ob.pos)) {
			errbuf_set(s->err, "could not write \"%s\": %s", s->path, strerror(errno));
			return false;
		}
		if (EVP_DigestUpdate(s->sha, s->buf, ob.pos) != 1) {
			errbuf_set(s->err, "could not compute the SHA-256 of \"%s\": OpenSSL failed",
				   s->path);
			return false;
		}
		s->size += ob.pos;
		done = end == ZSTD_e_end ? rest == 0 : ib.pos == ib.size;
	} while (!done);
	return true;
}

/* One frame of raw_size bytes, from buf (src_fd < 0) or from src_fd. */
static bool compress(const void *buf, int src_fd, const char *src, uint64_t raw_size,
		     const char *path, FeedFileInfo *info, ErrBuf *err)
{
	size_t chunk = ZSTD_CStreamInSize();
	Sink s = {-1, path, NULL, 0, NULL, ZSTD_CStreamOutSize(), err};
	ZSTD_CCtx *cctx = NULL;
	void *in = NULL;
	bool ok = false;
	ssize_t n;

	info->raw_size = 0;
	if ((s.fd = feed_io_open_write(path, err)) < 0)
		return false;
	s.buf = xmalloc(s.cap);
	if ((s.sha = feed_io_sha_begin()) == NULL || (cctx = ZSTD_createCCtx()) == NULL) {
		errbuf_set(err, "could not compress into \"%s\": out of memory", path);
		goto done;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, FEED_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, raw_size))) {
		errbuf_set(err, "could not compress into \"%s\": zstd refused its settings", path);
		goto done;
	}
	if (src_fd < 0) {
		if (!compress_some(cctx, &s, buf, (size_t)raw_size, ZSTD_e_end))
			goto done;
		info->raw_size = raw_size;
	} else {
		in = xmalloc(chunk);
		while ((n = feed_io_read(src_fd, in, chunk)) > 0) {
			if (!compress_some(cctx, &s, in, (size_t)n, ZSTD_e_continue))
				goto done;
			info->raw_size += (uint64_t)n;
		}
		if (n < 0) {
			errbuf_set(err, "could not read \"%s\": %s", src, strerror(errno));
			goto done;
		}
		/* a file that changed size while read: zstd refuses the frame */
		if (!compress_some(cctx, &s, NULL, 0, ZSTD_e_end))
			goto done;
	}
	ok = feed_io_close_written(s.fd, path, err);
	s.fd = -1;
	if (ok) {
		ok = feed_io_sha_end(s.sha, info->sha256); /* frees it */
		s.sha = NULL;
		if (!ok)
			errbuf_set(err, "could not compute the SHA-256 of \"%s\": OpenSSL failed",
				   path);
	}
	info->size = s.size;
done:
	if (s.fd >= 0)
		close(s.fd);
	if (!ok)
		unlink(path);
	EVP_MD_CTX_free(s.sha);
	ZSTD_freeCCtx(cctx);
	free(s.buf);
	free(in);
	return ok;
}

bool feed_compress_buf(const void *buf, size_t len, const char *path, FeedFileInfo *info,
		       ErrBuf *err)
{
	return compress(buf, -1, NULL, len, path, info, err);
}

bool feed_compress_file(const char *src, const char *path, FeedFileInfo *info, ErrBuf *err)
{
	struct stat st;
	int fd = feed_io_open_read(src, err);
	bool ok;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0) {
		errbuf_set(err, "could not read \"%s\": %s", src, strerror(errno));
		close(fd);
		return false;
	}
	ok = compress(NULL, fd, src, (uint64_t)st.st_size, path, info, err);
	close(fd);
	return ok;
}

/* --- decompression -------------------------------------------------------- */

/* Where decoded bytes go: a growing buffer (fd < 0) or a file. */
typedef struct Drain {
	int fd;
	const char *dst;
	uint8_t *data;
	size_t len, cap;
	uint64_t raw_size;   /* what the frame must decode to */
} Drain;

/* The words for zstd's errors that damage or a foreign file gives. */
static const char *zstd_why(size_t code)
{
	switch (ZSTD_getErrorCode(code)) {
	case ZSTD_error_prefix_unknown: return "not a zstd frame";
	case ZSTD_error_checksum_wrong: return "its checksum does not match its contents";
	case ZSTD_error_corruption_detected: return "its data are damaged";
	case ZSTD_error_frameParameter_windowTooLarge:
		return "its window is larger than 8 MiB";
	default: return ZSTD_getErrorName(code);
	}
}

/* Keeps n decoded bytes, after the raw_size check. */
static bool drain_put(Drain *d, const void *p, size_t n, ErrBuf *err)
{
	if (n == 0)
		return true;
	if (d->fd >= 0) {
		if (!feed_io_write_all(d->fd, p, n)) {
			errbuf_set(err, "could not write \"%s\": %s", d->dst, strerror(errno));
			return false;
		}
		d->len += n;
		return true;
	}
	if (n > d->cap - d->len) {
		size_t cap = d->cap < 65536 ? 65536 : d->cap;

		while (cap - d->len < n)
			cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
		if ((uint64_t)cap > d->raw_size)
			cap = (size_t)d->raw_size; /* >= len + n: checked by the caller */
		d->data = xreallocarray(d->data, cap, 1);
		d->cap = cap;
	}
	memcpy(d->data + d->len, p, n);
	d->len += n;
	return true;
}

static bool decompress(const char *path, Drain *d, ErrBuf *err)
{
	size_t in_cap = ZSTD_DStreamInSize(), out_cap = ZSTD_DStreamOutSize();
	void *in = xmalloc(in_cap), *out = xmalloc(out_cap);
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	uint64_t produced = 0, read_total = 0;
	bool ok = false, frame_done = false;
	ssize_t n;
	int fd = feed_io_open_read(path, err);

	if (fd < 0)
		goto done;
	if (dctx == NULL || ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax,
								 FEED_ZSTD_WINDOW_LOG_MAX))) {
		errbuf_set(err, "could not decompress \"%s\": out of memory", path);
		goto done;
	}
	while ((n = feed_io_read(fd, in, in_cap)) > 0) {
		ZSTD_inBuffer ib = {in, (size_t)n, 0};
		ZSTD_outBuffer ob;

		read_total += (uint64_t)n;
		do {
			size_t rest;

			if (frame_done) {
				errbuf_set(err, "could not decompress \"%s\": bytes follow its zstd "
					   "frame at byte %llu", path,
					   (unsigned long long)(read_total - (uint64_t)n + ib.pos));
				goto done;
			}
			ob = (ZSTD_outBuffer){out, out_cap, 0};
			rest = ZSTD_decompressStream(dctx, &ob, &ib);
			if (ZSTD_isError(rest)) {
				errbuf_set(err, "could not decompress \"%s\": %s", path,
					   zstd_why(rest));
				goto done;
			}
			if ((uint64_t)ob.pos > d->raw_size - produced) {
				errbuf_set(err, "could not decompress \"%s\": it holds more than "
					   "the %llu bytes expected", path,
					   (unsigned long long)d->raw_size);
				goto done;
			}
			produced += ob.pos;
			if (!drain_put(d, out, ob.pos, err))
				goto done;
			frame_done = rest == 0;
		} while (ib.pos < ib.size || (ob.pos == ob.size && !frame_done));
	}
	if (n < 0)
		errbuf_set(err, "could not read \"%s\": %s", path, strerror(errno));
	else if (!frame_done)
		errbuf_set(err, "could not decompress \"%s\": %s", path,
			   read_total == 0 ? "the file is empty" : "the file ends inside its zstd frame");
	else if (produced != d->raw_size)
		errbuf_set(err, "could not decompress \"%s\": it holds %llu bytes, not the %llu "
			   "expected", path, (unsigned long long)produced,
			   (unsigned long long)d->raw_size);
	else
		ok = true;
done:
	if (fd >= 0)
		close(fd);
	ZSTD_freeDCtx(dctx);
	free(in);
	free(out);
	return ok;
}

bool feed_decompress_to_buf(const char *path, uint64_t raw_size, uint8_t **out, size_t *len,
			    ErrBuf *err)
{
	Drain d = {-1, NULL, NULL, 0, 0, raw_size};

	*out = NULL;
	*len = 0;
	if (raw_size > SIZE_MAX) {
		errbuf_set(err, "could not decompress \"%s\": %llu bytes do not fit in this "
			   "system's memory", path, (unsigned long long)raw_size);
		return false;
	}
	if (!decompress(path, &d, err)) {
		free(d.data);
		return false;
	}
	*out = d.data != NULL ? d.data : xmalloc(1);
	*len = d.len;
	return true;
}

bool feed_decompress_to_file(const char *path, uint64_t raw_size, const char *dst, ErrBuf *err)
{
	Drain d = {feed_io_open_write(dst, err), dst, NULL, 0, 0, raw_size};
	bool ok;

	if (d.fd < 0)
		return false;
	ok = decompress(path, &d, err);
	if (ok)
		ok = feed_io_close_written(d.fd, dst, err);
	else
		close(d.fd);
	if (!ok)
		unlink(dst);
	return ok;
}

/*
 * feed_file.c: the feed's files on disk (include/pgmirror/feed_file.h)
 * but for their zstd frames (feed_zstd.c): reads and writes that go on
 * after EINTR and short counts, SHA-256 digests taken with OpenSSL's EVP
 * interface, and files put in place for a power cut: a file's data synced
 * before it takes its name, its directory synced after, each directory
 * made on the way synced into its parent.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "feed_io.h"
#include "pgmirror/durable.h"

/* --- plain I/O ----------------------------------------------------------- */

bool feed_io_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

ssize_t feed_io_read(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

int feed_io_open_read(const char *path, ErrBuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		errbuf_set(err, "could not open \"%s\": %s", path, strerror(errno));
	return fd;
}

int feed_io_open_write(const char *path, ErrBuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		errbuf_set(err, "could not create \"%s\": %s", path, strerror(errno));
	return fd;
}

bool feed_io_close_written(int fd, const char *path, ErrBuf *err)
{
	if (close(fd) != 0) {
		errbuf_set(err, "could not write \"%s\": %s", path, strerror(errno));
		return false;
	}
	return true;
}

/* --- SHA-256 ---------------------------------------------------------------- */

EVP_MD_CTX *feed_io_sha_begin(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	return ctx;
}

bool feed_io_sha_end(EVP_MD_CTX *ctx, char out[FEED_SHA256_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	bool ok = EVP_DigestFinal_ex(ctx, md, &n) == 1 && n * 2 == FEED_SHA256_LEN;

	EVP_MD_CTX_free(ctx);
	for (unsigned int i = 0; ok && i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return ok;
}

bool feed_sha256_buf(const void *buf, size_t len, char out[FEED_SHA256_LEN + 1], ErrBuf *err)
{
	EVP_MD_CTX *ctx = feed_io_sha_begin();

	if (ctx != NULL && EVP_DigestUpdate(ctx, buf, len) != 1) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	if (ctx == NULL || !feed_io_sha_end(ctx, out)) {
		errbuf_set(err, "could not compute a SHA-256: OpenSSL failed");
		return false;
	}
	return true;
}

bool feed_sha256_file(const char *path, char out[FEED_SHA256_LEN + 1], uint64_t *size,
		      ErrBuf *err)
{
	size_t chunk = 1 << 16;
	unsigned char *buf = NULL;
	EVP_MD_CTX *ctx = NULL;
	bool ok = false;
	ssize_t n;
	int fd = feed_io_open_read(path, err);

	if (fd < 0)
		return false;
	if ((ctx = feed_io_sha_begin()) == NULL)
		goto openssl;
	buf = xmalloc(chunk);
	*size = 0;
	while ((n = feed_io_read(fd, buf, chunk)) > 0) {
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto openssl;
		*size += (uint64_t)n;
	}
	if (n < 0) {
		errbuf_set(err, "could not read \"%s\": %s", path, strerror(errno));
		goto done;
	}
	ok = feed_io_sha_end(ctx, out);
	ctx = NULL;
	if (ok)
		goto done;
openssl:
	errbuf_set(err, "could not compute the SHA-256 of \"%s\": OpenSSL failed", path);
done:
	EVP_MD_CTX_free(ctx);
	free(buf);
	close(fd);
	return ok;
}

/* --- putting files in place -------------------------------------------------- */

char *feed_file_hub_path(const char *dir, const char *file)
{
	return xasprintf("%s/" FEED_HUB_DIR "/%s", dir, file);
}

/* Makes the directory path unless it is there; a new one's name synced. */
static bool make_dir(const char *path, ErrBuf *err)
{
	if (mkdir(path, 0755) != 0) {
		struct stat st;

		if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return true;
		errbuf_set(err, "could not create directory \"%s\": %s", path,
			   errno == EEXIST ? "a file of that name is in the way" : strerror(errno));
		return false;
	}
	if (!durable_sync_dir(path)) {
		errbuf_set(err, "could not sync the directory of \"%s\": %s", path, strerror(errno));
		return false;
	}
	return true;
}

bool feed_file_hub_dir(const char *dir, ErrBuf *err)
{
	char *path = xasprintf("%s/" FEED_HUB_DIR, dir);
	bool ok = make_dir(path, err);

	free(path);
	return ok;
}

/* Whether name is a path inside the feed: relative, no empty, "." or ".."
 * part. */
static bool inside(const char *name)
{
	const char *p = name;

	if (*name == '\0' || *name == '/')
		return false;
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (p[n] == '\0')
			return true;
		p += n + 1;
	}
}

bool feed_file_place(const char *dir, const char *tmp, const char *name, ErrBuf *err)
{
	char *path;
	bool ok = true, moved;

	if (!inside(name)) {
		errbuf_set(err, "could not place \"%s\": not a name inside the feed", name);
		return false;
	}
	path = xasprintf("%s/%s", dir, name);
	/* each directory of name, from the top */
	for (char *slash = strchr(path + strlen(dir) + 1, '/'); ok && slash != NULL;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		ok = make_dir(path, err);
		*slash = '/';
	}
	if (ok && !durable_rename(tmp, path, &moved)) {
		errbuf_set(err, "could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
		ok = false;
	} else if (ok && !moved) {
		errbuf_set(err, "could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(ENOENT));
		ok = false;
	}
	if (ok && !durable_sync_dir(path)) {
		errbuf_set(err, "could not sync the directory of \"%s\": %s", path, strerror(errno));
		ok = false;
	}
	free(path);
	return ok;
}

bool feed_file_write(const char *dir, const char *name, const void *buf, size_t len,
		     ErrBuf *err)
{
	const char *base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
	char *file = xasprintf("%s.tmp", base), *tmp = feed_file_hub_path(dir, file);
	bool ok = false;
	int fd;

	if (!feed_file_hub_dir(dir, err) || (fd = feed_io_open_write(tmp, err)) < 0)
		goto done;
	if (!feed_io_write_all(fd, buf, len)) {
		errbuf_set(err, "could not write \"%s\": %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto done;
	}
	if (!feed_io_close_written(fd, tmp, err) || !feed_file_place(dir, tmp, name, err)) {
		unlink(tmp);
		goto done;
	}
	ok = true;
done:
	free(file);
	free(tmp);
	return ok;
}

bool feed_read_bounded(FILE *f, size_t max, char **text, size_t *len)
{
	size_t n = 0, got, cap = max < 65536 ? max + 1 : 65536;
	char *buf = xmalloc(cap + 1);

	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n < cap)
			continue;
		if (cap > max)
			break; /* max + 1 bytes: too many */
		cap = cap > max / 2 ? max + 1 : cap * 2;
		buf = xreallocarray(buf, cap + 1, 1);
	}
	if (ferror(f)) {
		int e = errno;

		free(buf);
		*text = NULL;
		*len = 0;
		errno = e;
		return false;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return true;
}

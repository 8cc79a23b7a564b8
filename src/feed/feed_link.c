/*
 * feed_link.c: a feed read from a directory (feed_link.h). A file the
 * manifest names is copied into the device's work directory, and the
 * copy's size and SHA-256 checked: what the caller then reads is what was
 * checked, whatever happens to the feed's directory meanwhile. The
 * manifest is read whole; "unchanged" compares its bytes with the last
 * ones read.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pgmirror/feed_file.h"
#include "pgmirror/feed_manifest.h"
#include "pgmirror/feed_link.h"

struct FeedLink {
	char *dir;                /* the directory */
	char *work;               /* where fetched files go */
	char *shown;              /* the URL as given */
	char *last;               /* the manifest last read */
	size_t last_len;
};

FeedLink *feed_link_new(const char *url, const char *work, ErrBuf *err)
{
	FeedLink *s;
	const char *dir = url;

	if (strncmp(url, "file://", 7) == 0) {
		dir = url + 7;
		if (*dir != '/') {
			errbuf_set(err, "invalid feed URL \"%s\": a file:// URL names an absolute "
				   "path (file:///srv/feed)", url);
			return NULL;
		}
	} else if (strstr(url, "://") != NULL) {
		errbuf_set(err, "invalid feed URL \"%s\": this pgmirror reads a feed from a "
			   "directory or a file:// URL", url);
		return NULL;
	}
	if (*dir == '\0') {
		errbuf_set(err, "invalid feed URL \"%s\": no directory", url);
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(dir);
	s->work = xstrdup(work);
	s->shown = xstrdup(url);
	return s;
}

void feed_link_free(FeedLink *s)
{
	if (s == NULL)
		return;
	free(s->dir);
	free(s->work);
	free(s->shown);
	free(s->last);
	free(s);
}

const char *feed_link_shown(const FeedLink *s)
{
	return s->shown;
}

bool feed_link_manifest(FeedLink *s, char **text, size_t *len, bool *unchanged,
			  ErrBuf *err)
{
	char *path = xasprintf("%s/manifest.json", s->dir);
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;
	bool ok = false;

	*text = NULL;
	*len = 0;
	*unchanged = false;
	if (f == NULL) {
		errbuf_set(err, "could not read the feed's manifest \"%s\": %s", path,
			   strerror(errno));
		goto done;
	}
	if (!feed_read_bounded(f, FEED_MANIFEST_MAX, &buf, &n)) {
		errbuf_set(err, "could not read the feed's manifest \"%s\": %s", path,
			   strerror(errno));
		goto done;
	}
	if (n > FEED_MANIFEST_MAX) {
		errbuf_set(err, "the feed's manifest \"%s\" is larger than %d bytes: not a "
			   "manifest", path, FEED_MANIFEST_MAX);
		goto done;
	}
	ok = true;
	if (s->last != NULL && s->last_len == n && memcmp(s->last, buf, n) == 0) {
		*unchanged = true;
		goto done;
	}
	free(s->last);
	s->last = xmalloc(n + 1);
	memcpy(s->last, buf, n + 1);
	s->last_len = n;
	*text = buf;
	*len = n;
	buf = NULL;
done:
	if (f != NULL)
		fclose(f);
	free(buf);
	free(path);
	return ok;
}

/* Forgets the manifest read last: the next is read as changed (after the
 * caller refused it, or could not act on it). */
void feed_link_forget(FeedLink *s)
{
	free(s->last);
	s->last = NULL;
	s->last_len = 0;
}

/* Copies from to the new file to; false with err set. */
static bool copy_file(const char *from, const char *to, ErrBuf *err)
{
	FILE *in = fopen(from, "rb"), *out = NULL;
	char buf[65536];
	size_t n;
	bool ok = false;

	if (in == NULL) {
		errbuf_set(err, "could not read feed file \"%s\": %s", from, strerror(errno));
		return false;
	}
	if ((out = fopen(to, "wb")) == NULL) {
		errbuf_set(err, "could not create \"%s\": %s", to, strerror(errno));
		goto done;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out)) {
		errbuf_set(err, "could not copy feed file \"%s\" to \"%s\": %s", from, to,
			   strerror(errno));
		goto done;
	}
	ok = true;
done:
	if (out != NULL && fclose(out) != 0 && ok) {
		errbuf_set(err, "could not write \"%s\": %s", to, strerror(errno));
		ok = false;
	}
	fclose(in);
	return ok;
}

bool feed_link_file(FeedLink *s, const char *name, uint64_t size, const char *sha256,
		      char **path, bool *temp, ErrBuf *err)
{
	char sum[FEED_SHA256_LEN + 1];
	const char *base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
	char *from = xasprintf("%s/%s", s->dir, name);
	uint64_t got = 0;
	ErrBuf e;

	*path = xasprintf("%s/%s.part", s->work, base);
	*temp = true;
	if (!copy_file(from, *path, err))
		goto fail;
	if (!feed_sha256_file(*path, sum, &got, &e)) {
		errbuf_set(err, "feed file \"%s\" cannot be read: %s", from, e.text);
		goto fail;
	}
	if (got != size) {
		errbuf_set(err, "feed file \"%s\" is damaged: %llu bytes, the manifest says %llu",
			   from, (unsigned long long)got, (unsigned long long)size);
		goto fail;
	}
	if (strcmp(sum, sha256) != 0) {
		errbuf_set(err, "feed file \"%s\" is damaged: its SHA-256 is %s, the manifest says "
			   "%s", from, sum, sha256);
		goto fail;
	}
	free(from);
	return true;
fail:
	(void)remove(*path);
	free(*path);
	*path = NULL;
	free(from);
	return false;
}

/*
 * feed_manifest_write.c: manifest.json written
 * (include/pgmirror/feed_manifest.h; docs/feed.md, "The manifest"): the
 * manifest checked by feed_manifest_check() first, the reader's own
 * check, then built with jansson, members in the documented order, two
 * blanks of indent a level. Strings are checked for UTF-8 before jansson
 * sees them, so that a name the source allowed in another encoding is
 * refused by name rather than dropped.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pgmirror/feed_manifest.h"

/* The writer's state: the first failure wins, and what follows is dropped. */
typedef struct Writer {
	bool ok;
	ErrBuf *err;
} Writer;

static void write_fail(Writer *w, const char *fmt, ...) PGM_PRINTF(2, 3);
static void write_fail(Writer *w, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	if (!w->ok)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	errbuf_set(w->err, "could not write the manifest: %s", what);
	w->ok = false;
}

/* obj.key = value, taken over (dropped after a failure); NULL: jansson ran
 * out of memory. */
static void put(Writer *w, json_t *obj, const char *key, json_t *value)
{
	if (value == NULL)
		write_fail(w, "out of memory");
	else if (!w->ok || obj == NULL)
		json_decref(value);
	else if (json_object_set_new(obj, key, value) != 0)
		write_fail(w, "out of memory");
}

static bool utf8_valid(const char *s)
{
	for (size_t n = strlen(s), i = 0, k; i < n; i += k)
		if ((k = utf8_char_length((const unsigned char *)s + i, n - i)) == 0)
			return false;
	return true;
}

/* A string member; path names it in messages. */
static void put_str(Writer *w, json_t *obj, const char *key, const char *s, const char *path)
{
	if (!utf8_valid(s))
		write_fail(w, "member \"%s\" is not valid UTF-8", path);
	put(w, obj, key, w->ok ? json_string(s) : json_null());
}

static void put_int(Writer *w, json_t *obj, const char *key, uint64_t v, const char *path)
{
	if (v > (uint64_t)FEED_JSON_INT_MAX)
		write_fail(w, "member \"%s\" is %llu, past 2^53 - 1", path, (unsigned long long)v);
	put(w, obj, key, json_integer((json_int_t)(w->ok ? v : 0)));
}

static void put_lsn(Writer *w, json_t *obj, const char *key, Lsn lsn, const char *path)
{
	char buf[LSN_TEXT_SIZE];

	put_str(w, obj, key, lsn_format(lsn, buf), path);
}

static void put_time(Writer *w, json_t *obj, const char *key, int64_t t, const char *path)
{
	char buf[FEED_TIME_SIZE];

	if (!feed_time_format(t, buf))
		write_fail(w, "member \"%s\" is not a time in the years 1 to 9999", path);
	put_str(w, obj, key, w->ok ? buf : "", path);
}

/* A member of array[i], for messages. */
static const char *path_of(char *buf, size_t size, const char *array, int i, const char *key)
{
	snprintf(buf, size, "%s[%d].%s", array, i, key);
	return buf;
}

static json_t *write_source(Writer *w, const FeedSource *s)
{
	json_t *obj = json_object(), *pubs = json_array();

	if (obj == NULL || pubs == NULL) {
		json_decref(obj);
		json_decref(pubs);
		return NULL;
	}
	put_str(w, obj, "system_identifier", s->system_identifier, "source.system_identifier");
	put_str(w, obj, "database", s->database, "source.database");
	put_str(w, obj, "slot", s->slot, "source.slot");
	for (int i = 0; i < s->npublications; i++) {
		json_t *p = json_null();

		if (!utf8_valid(s->publications[i]))
			write_fail(w, "member \"source.publications[%d]\" is not valid UTF-8", i);
		else
			p = json_string(s->publications[i]);
		if (p == NULL || json_array_append_new(pubs, p) != 0)
			write_fail(w, "out of memory");
	}
	put(w, obj, "publications", pubs);
	return obj;
}

static json_t *write_segment(Writer *w, const FeedSegment *s, int i)
{
	json_t *obj = json_object();
	char path[64];
#define P(key) path_of(path, sizeof path, "segments", i, key)

	if (obj == NULL)
		return NULL;
	put_str(w, obj, "name", s->name, P("name"));
	put_int(w, obj, "first_group", s->first_group, P("first_group"));
	put_int(w, obj, "last_group", s->last_group, P("last_group"));
	put_lsn(w, obj, "start_lsn", s->start_lsn, P("start_lsn"));
	put_lsn(w, obj, "end_lsn", s->end_lsn, P("end_lsn"));
	put_int(w, obj, "size", s->size, P("size"));
	put_int(w, obj, "raw_size", s->raw_size, P("raw_size"));
	put_str(w, obj, "sha256", s->sha256, P("sha256"));
#undef P
	return obj;
}

static json_t *write_snapshot(Writer *w, const FeedSnapshot *s, int i)
{
	json_t *obj = json_object();
	char path[64];
#define P(key) path_of(path, sizeof path, "snapshots", i, key)

	if (obj == NULL)
		return NULL;
	put_str(w, obj, "name", s->name, P("name"));
	put_int(w, obj, "group", s->group, P("group"));
	put_lsn(w, obj, "lsn", s->lsn, P("lsn"));
	put_int(w, obj, "size", s->size, P("size"));
	put_int(w, obj, "raw_size", s->raw_size, P("raw_size"));
	put_str(w, obj, "sha256", s->sha256, P("sha256"));
#undef P
	return obj;
}

/* {"group": g, "lsn": l} and, for end, its time (null: none). */
static json_t *write_position(Writer *w, uint64_t group, Lsn lsn, const int64_t *time,
			      const char *what)
{
	json_t *obj = json_object();
	char path[64];

	if (obj == NULL)
		return NULL;
	snprintf(path, sizeof path, "%s.group", what);
	put_int(w, obj, "group", group, path);
	snprintf(path, sizeof path, "%s.lsn", what);
	put_lsn(w, obj, "lsn", lsn, path);
	if (time != NULL && *time != 0)
		put_time(w, obj, "time", *time, "end.time");
	else if (time != NULL)
		put(w, obj, "time", json_null());
	return obj;
}

bool feed_manifest_write(const FeedManifest *m, char **text, ErrBuf *err)
{
	Writer w = {true, err};
	json_t *root, *segs, *snaps;
	char *dump = NULL;

	*text = NULL;
	if (!feed_manifest_check(m, err))
		return false;
	if ((root = json_object()) == NULL)
		write_fail(&w, "out of memory");
	put_str(&w, root, "format", FEED_MANIFEST_FORMAT, "format");
	put_int(&w, root, "version", FEED_MANIFEST_VERSION, "version");
	put(&w, root, "source", write_source(&w, &m->source));
	put_str(&w, root, "epoch", m->epoch, "epoch");
	put_int(&w, root, "seq", m->seq, "seq");
	put_time(&w, root, "issued_at", m->issued_at, "issued_at");
	if (m->has_expires)
		put_time(&w, root, "expires", m->expires, "expires");
	put_int(&w, root, "server_version", m->server_version, "server_version");
	put(&w, root, "end", write_position(&w, m->end_group, m->end_lsn, &m->end_time, "end"));
	put(&w, root, "oldest", write_position(&w, m->oldest_group, m->oldest_lsn, NULL, "oldest"));
	if ((segs = json_array()) != NULL)
		for (int i = 0; i < m->nsegments; i++)
			if (json_array_append_new(segs, write_segment(&w, &m->segments[i], i)) != 0)
				write_fail(&w, "out of memory");
	put(&w, root, "segments", segs);
	if ((snaps = json_array()) != NULL)
		for (int i = 0; i < m->nsnapshots; i++)
			if (json_array_append_new(snaps, write_snapshot(&w, &m->snapshots[i], i)) != 0)
				write_fail(&w, "out of memory");
	put(&w, root, "snapshots", snaps);
	if (w.ok && (dump = json_dumps(root, JSON_INDENT(2))) == NULL)
		write_fail(&w, "out of memory");
	json_decref(root);
	if (!w.ok)
		return false;
	*text = xasprintf("%s\n", dump);
	free(dump);
	return true;
}

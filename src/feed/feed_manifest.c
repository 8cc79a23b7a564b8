/*
 * feed_manifest.c: manifest.json parsed and checked
 * (include/pgmirror/feed_manifest.h; docs/feed.md, "The manifest").
 *
 * Parsing is two steps: every member read and checked for its type and
 * shape (each message names it as a path, "segments[2].sha256"), then the
 * whole checked for sense by feed_manifest_check(), which the writer
 * (feed_manifest_write.c) runs too, so that a hub can never write what a
 * device would refuse:
 *
 * - the source's system identifier is 1 to 20 decimal digits, database
 *   and slot are not empty, the publications sorted, none twice;
 * - each segment's name is seg/EPOCH/F-L-H.pgmf.zst of the manifest's
 *   epoch, its own groups and the first 16 digits of its sha256; it holds
 *   groups first_group to last_group (from 1, in order), and the segments
 *   follow each other without a gap: each begins at the group after the
 *   last one's and at the position the last one ended at;
 * - oldest and end are those of the first and the last segment; with no
 *   segment, oldest is the group after end at end's position;
 * - each snapshot's name is snap/EPOCH/G-H.sqlite.zst likewise; they come
 *   oldest first, none after end, and the oldest is no older than the
 *   group before oldest (a device that rebuilds from any of them finds
 *   every segment after it).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pgmirror/feed_manifest.h"

#define INVALID "invalid manifest: "

/* --- the checks of the whole ----------------------------------------------- */

static bool source_check(const FeedSource *s, ErrBuf *err)
{
	size_t n = strlen(s->system_identifier);

	if (n == 0 || n > 20 || strspn(s->system_identifier, "0123456789") != n) {
		errbuf_set(err, INVALID "member \"source.system_identifier\" is not a system "
			   "identifier (1 to 20 decimal digits)");
		return false;
	}
	if (s->database[0] == '\0' || s->slot[0] == '\0') {
		errbuf_set(err, INVALID "member \"source.%s\" is empty",
			   s->database[0] == '\0' ? "database" : "slot");
		return false;
	}
	for (int i = 0; i < s->npublications; i++) {
		if (s->publications[i][0] == '\0') {
			errbuf_set(err, INVALID "member \"source.publications[%d]\" is empty", i);
			return false;
		}
		if (i > 0 && strcmp(s->publications[i - 1], s->publications[i]) >= 0) {
			errbuf_set(err, INVALID "member \"source.publications\" is not sorted, or "
				   "names a publication twice");
			return false;
		}
	}
	if (s->npublications == 0) {
		errbuf_set(err, INVALID "member \"source.publications\" is empty");
		return false;
	}
	return true;
}

/* name is of the shape parse() takes, in epoch, of groups first to last and
 * of the digest sha256. */
static bool name_check(const char *what, int i, const char *name,
		       bool (*parse)(const char *, FeedName *), const char *epoch,
		       uint64_t first, uint64_t last, const char *sha256, ErrBuf *err)
{
	FeedName n;

	if (!parse(name, &n)) {
		errbuf_set(err, INVALID "member \"%s[%d].name\" is not a %s name (%s)", what, i,
			   parse == feed_segment_name_parse ? "segment's" : "snapshot's",
			   parse == feed_segment_name_parse ? "seg/EPOCH/FIRST-LAST-HASH.pgmf.zst"
							    : "snap/EPOCH/GROUP-HASH.sqlite.zst");
		return false;
	}
	if (strcmp(n.epoch, epoch) != 0 || n.first != first || n.last != last ||
	    strncmp(n.hash, sha256, FEED_NAME_HASH_LEN) != 0) {
		errbuf_set(err, INVALID "member \"%s[%d].name\" does not match its epoch, groups "
			   "and sha256", what, i);
		return false;
	}
	return true;
}

static bool segments_check(const FeedManifest *m, ErrBuf *err)
{
	char a[LSN_TEXT_SIZE], b[LSN_TEXT_SIZE];

	for (int i = 0; i < m->nsegments; i++) {
		const FeedSegment *s = &m->segments[i], *prev = i > 0 ? s - 1 : NULL;

		if (!feed_sha256_valid(s->sha256)) {
			errbuf_set(err, INVALID "member \"segments[%d].sha256\" is not %d lower-case "
				   "hex digits", i, FEED_SHA256_LEN);
			return false;
		}
		if (!name_check("segments", i, s->name, feed_segment_name_parse, m->epoch,
				s->first_group, s->last_group, s->sha256, err))
			return false;
		if (s->first_group == 0 || s->first_group > s->last_group ||
		    s->start_lsn > s->end_lsn) {
			errbuf_set(err, INVALID "segments[%d] holds groups %llu to %llu from %s to %s",
				   i, (unsigned long long)s->first_group,
				   (unsigned long long)s->last_group, lsn_format(s->start_lsn, a),
				   lsn_format(s->end_lsn, b));
			return false;
		}
		if (prev != NULL && (s->first_group != prev->last_group + 1 ||
				     s->start_lsn != prev->end_lsn)) {
			errbuf_set(err, INVALID "segments[%d] begins at group %llu at %s; after "
				   "segments[%d], group %llu at %s is due", i,
				   (unsigned long long)s->first_group, lsn_format(s->start_lsn, a),
				   i - 1, (unsigned long long)prev->last_group + 1,
				   lsn_format(prev->end_lsn, b));
			return false;
		}
	}
	return true;
}

static bool bounds_check(const FeedManifest *m, ErrBuf *err)
{
	const FeedSegment *first = m->nsegments > 0 ? &m->segments[0] : NULL;
	const FeedSegment *last = m->nsegments > 0 ? &m->segments[m->nsegments - 1] : NULL;
	char a[LSN_TEXT_SIZE], b[LSN_TEXT_SIZE];

	if (first != NULL && (m->oldest_group != first->first_group ||
			      m->oldest_lsn != first->start_lsn)) {
		errbuf_set(err, INVALID "oldest (group %llu at %s) is not where segments[0] begins "
			   "(group %llu at %s)", (unsigned long long)m->oldest_group,
			   lsn_format(m->oldest_lsn, a), (unsigned long long)first->first_group,
			   lsn_format(first->start_lsn, b));
		return false;
	}
	if (last != NULL && (m->end_group != last->last_group || m->end_lsn != last->end_lsn)) {
		errbuf_set(err, INVALID "end (group %llu at %s) is not where the last segment ends "
			   "(group %llu at %s)", (unsigned long long)m->end_group,
			   lsn_format(m->end_lsn, a), (unsigned long long)last->last_group,
			   lsn_format(last->end_lsn, b));
		return false;
	}
	if (first == NULL && (m->oldest_group != m->end_group + 1 || m->oldest_lsn != m->end_lsn)) {
		errbuf_set(err, INVALID "with no segment, oldest (group %llu at %s) must be the "
			   "group after end (group %llu at %s)", (unsigned long long)m->oldest_group,
			   lsn_format(m->oldest_lsn, a), (unsigned long long)m->end_group,
			   lsn_format(m->end_lsn, b));
		return false;
	}
	return true;
}

static bool snapshots_check(const FeedManifest *m, ErrBuf *err)
{
	for (int i = 0; i < m->nsnapshots; i++) {
		const FeedSnapshot *s = &m->snapshots[i];

		if (!feed_sha256_valid(s->sha256)) {
			errbuf_set(err, INVALID "member \"snapshots[%d].sha256\" is not %d lower-case "
				   "hex digits", i, FEED_SHA256_LEN);
			return false;
		}
		if (!name_check("snapshots", i, s->name, feed_snapshot_name_parse, m->epoch,
				s->group, s->group, s->sha256, err))
			return false;
		if (i > 0 && s->group <= s[-1].group) {
			errbuf_set(err, INVALID "snapshots[%d] (after group %llu) is not newer than "
				   "snapshots[%d] (after group %llu)", i, (unsigned long long)s->group,
				   i - 1, (unsigned long long)s[-1].group);
			return false;
		}
		if (s->group > m->end_group || s->lsn > m->end_lsn ||
		    s->group + 1 < m->oldest_group) {
			errbuf_set(err, INVALID "snapshots[%d] (after group %llu) is not between the "
				   "group before oldest (%llu) and end (%llu)", i,
				   (unsigned long long)s->group, (unsigned long long)m->oldest_group - 1,
				   (unsigned long long)m->end_group);
			return false;
		}
	}
	return true;
}

bool feed_manifest_check(const FeedManifest *m, ErrBuf *err)
{
	if (!feed_epoch_valid(m->epoch)) {
		errbuf_set(err, INVALID "member \"epoch\" is not %d lower-case hex digits",
			   FEED_EPOCH_LEN);
		return false;
	}
	return source_check(&m->source, err) && segments_check(m, err) && bounds_check(m, err) &&
	       snapshots_check(m, err);
}

/* --- parsing -------------------------------------------------------------- */

/* The parser's state: the first failure wins. */
typedef struct Parser {
	bool ok;
	ErrBuf *err;
} Parser;

static bool parse_fail(Parser *p, const char *fmt, ...) PGM_PRINTF(2, 3);
static bool parse_fail(Parser *p, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	if (p->ok) {
		va_start(ap, fmt);
		vsnprintf(what, sizeof what, fmt, ap);
		va_end(ap);
		errbuf_set(p->err, INVALID "%s", what);
	}
	p->ok = false;
	return false;
}

/* "prefix.key", or "key" at the top. */
static const char *join(char *buf, size_t size, const char *prefix, const char *key)
{
	snprintf(buf, size, "%s%s%s", prefix, prefix[0] != '\0' ? "." : "", key);
	return buf;
}

/* obj's member key of the type is_type() takes; NULL after a failure. */
static json_t *member(Parser *p, json_t *obj, const char *prefix, const char *key,
		      int (*is_type)(const json_t *), const char *type)
{
	char path[96];
	json_t *v;

	if (!p->ok)
		return NULL;
	if ((v = json_object_get(obj, key)) == NULL)
		parse_fail(p, "member \"%s\" is missing", join(path, sizeof path, prefix, key));
	else if (!is_type(v))
		parse_fail(p, "member \"%s\" is not %s", join(path, sizeof path, prefix, key), type);
	return p->ok ? v : NULL;
}

static int is_object(const json_t *v) { return json_is_object(v); }
static int is_array(const json_t *v) { return json_is_array(v); }
static int is_string(const json_t *v) { return json_is_string(v); }
static int is_integer(const json_t *v) { return json_is_integer(v); }

/* A string member, borrowed from the JSON. */
static const char *get_str(Parser *p, json_t *obj, const char *prefix, const char *key)
{
	json_t *v = member(p, obj, prefix, key, is_string, "a string");

	return v != NULL ? json_string_value(v) : "";
}

static char *get_strdup(Parser *p, json_t *obj, const char *prefix, const char *key)
{
	return xstrdup(get_str(p, obj, prefix, key));
}

/* An integer member in 0 .. max. */
static uint64_t get_int(Parser *p, json_t *obj, const char *prefix, const char *key,
			int64_t max)
{
	json_t *v = member(p, obj, prefix, key, is_integer, "an integer");
	json_int_t i = v != NULL ? json_integer_value(v) : 0;
	char path[96];

	if (i < 0 || i > max)
		parse_fail(p, "member \"%s\" is out of range: %lld", join(path, sizeof path, prefix, key),
			   (long long)i);
	return p->ok ? (uint64_t)i : 0;
}

static Lsn get_lsn(Parser *p, json_t *obj, const char *prefix, const char *key)
{
	const char *s = get_str(p, obj, prefix, key);
	char path[96];
	Lsn lsn = 0;

	if (p->ok && !lsn_parse(s, &lsn))
		parse_fail(p, "member \"%s\" is not a position (X/Y in hex)",
			   join(path, sizeof path, prefix, key));
	return lsn;
}

/* A time member; with nullable, null gives 0. */
static int64_t get_time(Parser *p, json_t *obj, const char *prefix, const char *key,
			bool nullable)
{
	json_t *v = nullable ? json_object_get(obj, key) : NULL;
	char path[96];
	int64_t t = 0;

	if (p->ok && nullable && json_is_null(v))
		return 0;
	if (p->ok && !feed_time_parse(get_str(p, obj, prefix, key), &t))
		parse_fail(p, "member \"%s\" is not a UTC time (YYYY-MM-DDTHH:MM:SS[.ffffff]Z)",
			   join(path, sizeof path, prefix, key));
	return t;
}

static void get_sha256(Parser *p, json_t *obj, const char *prefix, char out[FEED_SHA256_LEN + 1])
{
	const char *s = get_str(p, obj, prefix, "sha256");
	char path[96];

	if (p->ok && !feed_sha256_valid(s))
		parse_fail(p, "member \"%s\" is not %d lower-case hex digits",
			   join(path, sizeof path, prefix, "sha256"), FEED_SHA256_LEN);
	snprintf(out, FEED_SHA256_LEN + 1, "%s", p->ok ? s : "");
}

static void parse_source(Parser *p, json_t *root, FeedSource *s)
{
	json_t *obj = member(p, root, "", "source", is_object, "an object"), *pubs;
	char path[96];

	s->system_identifier = get_strdup(p, obj, "source", "system_identifier");
	s->database = get_strdup(p, obj, "source", "database");
	s->slot = get_strdup(p, obj, "source", "slot");
	pubs = member(p, obj, "source", "publications", is_array, "an array");
	if (pubs == NULL)
		return;
	s->publications = xcalloc(json_array_size(pubs), sizeof(char *));
	for (size_t i = 0; i < json_array_size(pubs) && p->ok; i++) {
		json_t *v = json_array_get(pubs, i);

		snprintf(path, sizeof path, "source.publications[%zu]", i);
		if (!json_is_string(v))
			parse_fail(p, "member \"%s\" is not a string", path);
		else
			s->publications[s->npublications++] = xstrdup(json_string_value(v));
	}
}

/* The array member key, each element an object handed to one(). */
static void parse_list(Parser *p, json_t *root, const char *key, size_t size, void **out,
		       int *n, void (*one)(Parser *, json_t *, const char *, void *))
{
	json_t *arr = member(p, root, "", key, is_array, "an array");
	char path[96];

	if (arr == NULL)
		return;
	*out = xcalloc(json_array_size(arr), size);
	for (size_t i = 0; i < json_array_size(arr) && p->ok; i++) {
		json_t *v = json_array_get(arr, i);

		snprintf(path, sizeof path, "%s[%zu]", key, i);
		if (!json_is_object(v))
			parse_fail(p, "member \"%s\" is not an object", path);
		else
			one(p, v, path, (char *)*out + i * size);
		(*n)++;
	}
}

static void parse_segment(Parser *p, json_t *obj, const char *path, void *out)
{
	FeedSegment *s = out;

	s->name = get_strdup(p, obj, path, "name");
	s->first_group = get_int(p, obj, path, "first_group", FEED_JSON_INT_MAX);
	s->last_group = get_int(p, obj, path, "last_group", FEED_JSON_INT_MAX);
	s->start_lsn = get_lsn(p, obj, path, "start_lsn");
	s->end_lsn = get_lsn(p, obj, path, "end_lsn");
	s->size = get_int(p, obj, path, "size", FEED_JSON_INT_MAX);
	s->raw_size = get_int(p, obj, path, "raw_size", FEED_JSON_INT_MAX);
	get_sha256(p, obj, path, s->sha256);
}

static void parse_snapshot(Parser *p, json_t *obj, const char *path, void *out)
{
	FeedSnapshot *s = out;

	s->name = get_strdup(p, obj, path, "name");
	s->group = get_int(p, obj, path, "group", FEED_JSON_INT_MAX);
	s->lsn = get_lsn(p, obj, path, "lsn");
	s->size = get_int(p, obj, path, "size", FEED_JSON_INT_MAX);
	s->raw_size = get_int(p, obj, path, "raw_size", FEED_JSON_INT_MAX);
	get_sha256(p, obj, path, s->sha256);
}

/* The members of root, each checked alone. */
static void parse_members(Parser *p, json_t *root, FeedManifest *m)
{
	json_t *end, *oldest;
	const char *s;
	uint64_t version;

	s = get_str(p, root, "", "format");
	if (p->ok && strcmp(s, FEED_MANIFEST_FORMAT) != 0)
		parse_fail(p, "member \"format\" is not \"%s\"", FEED_MANIFEST_FORMAT);
	version = get_int(p, root, "", "version", FEED_JSON_INT_MAX);
	if (p->ok && version != FEED_MANIFEST_VERSION)
		parse_fail(p, "version %llu (this pgmirror reads version %d: a later pgmirror is "
			   "needed)", (unsigned long long)version, FEED_MANIFEST_VERSION);
	parse_source(p, root, &m->source);
	s = get_str(p, root, "", "epoch");
	if (p->ok && !feed_epoch_valid(s))
		parse_fail(p, "member \"epoch\" is not %d lower-case hex digits", FEED_EPOCH_LEN);
	snprintf(m->epoch, sizeof m->epoch, "%s", p->ok ? s : "");
	m->seq = get_int(p, root, "", "seq", FEED_JSON_INT_MAX);
	m->issued_at = get_time(p, root, "", "issued_at", false);
	m->server_version = (uint32_t)get_int(p, root, "", "server_version", INT32_MAX);
	end = member(p, root, "", "end", is_object, "an object");
	m->end_group = get_int(p, end, "end", "group", FEED_JSON_INT_MAX);
	m->end_lsn = get_lsn(p, end, "end", "lsn");
	m->end_time = get_time(p, end, "end", "time", true);
	oldest = member(p, root, "", "oldest", is_object, "an object");
	m->oldest_group = get_int(p, oldest, "oldest", "group", FEED_JSON_INT_MAX);
	m->oldest_lsn = get_lsn(p, oldest, "oldest", "lsn");
	parse_list(p, root, "segments", sizeof(FeedSegment), (void **)&m->segments, &m->nsegments,
		   parse_segment);
	parse_list(p, root, "snapshots", sizeof(FeedSnapshot), (void **)&m->snapshots,
		   &m->nsnapshots, parse_snapshot);
	if (p->ok && json_object_get(root, "expires") != NULL) {
		m->has_expires = true;
		m->expires = get_time(p, root, "", "expires", false);
	}
}

bool feed_manifest_parse(const char *text, size_t len, FeedManifest *out, ErrBuf *err)
{
	Parser p = {true, err};
	json_error_t jerr;
	json_t *root;

	memset(out, 0, sizeof *out);
	if (len > FEED_MANIFEST_MAX) {
		errbuf_set(err, INVALID "%zu bytes, more than %d", len, FEED_MANIFEST_MAX);
		return false;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		errbuf_set(err, INVALID "it does not parse as JSON: %s (line %d, column %d)",
			   jerr.text, jerr.line, jerr.column);
		return false;
	}
	if (!json_is_object(root))
		parse_fail(&p, "it is not a JSON object");
	else
		parse_members(&p, root, out);
	json_decref(root);
	return p.ok && feed_manifest_check(out, err);
}

void feed_source_free(FeedSource *s)
{
	free(s->system_identifier);
	free(s->database);
	free(s->slot);
	strv_free(s->publications, s->npublications);
	memset(s, 0, sizeof *s);
}

void feed_manifest_free(FeedManifest *m)
{
	feed_source_free(&m->source);
	for (int i = 0; i < m->nsegments; i++)
		free(m->segments[i].name);
	free(m->segments);
	for (int i = 0; i < m->nsnapshots; i++)
		free(m->snapshots[i].name);
	free(m->snapshots);
	memset(m, 0, sizeof *m);
}

int feed_manifest_find_segment(const FeedManifest *m, uint64_t group)
{
	int lo = 0, hi = m->nsegments - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (group < m->segments[mid].first_group)
			hi = mid - 1;
		else if (group > m->segments[mid].last_group)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

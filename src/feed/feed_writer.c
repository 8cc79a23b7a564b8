/*
 * feed_writer.c: a hub's open segment (feed_writer.h; docs/feed.md).
 *
 * Records go into a buffer and from there into DIR/.hub/open.pgmf, written
 * (not synced) whenever the buffer holds a MiB, so that a group of any
 * size takes bounded memory. Offsets ("marks") count the file's bytes
 * and then the buffer's, so a cut back to one is a truncate of the file
 * or of the buffer. A group's end is written and the file synced before
 * the mirror commits: from then on the group survives a power cut, and
 * a hub that starts again keeps it only when its mirror committed it
 * (pgmirror_feed.feed_group), cutting the file after that group's C.
 *
 * A new segment is written whole to open.new, synced, then renamed over
 * open.pgmf: a kill leaves either the old open segment or the new one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgmirror/durable.h"
#include "pgmirror/feed_writer.h"

#define OPEN_NAME "open.pgmf"
#define NEW_NAME "open.new"
#define ZST_NAME "closing.zst"
/* The buffer goes to the file past this many bytes; a buffer a large
 * record made larger than KEEP_BYTES is given back once it is written (a
 * hub runs for months). */
#define FLUSH_BYTES ((size_t)1 << 20)
#define KEEP_BYTES (4 * FLUSH_BYTES)

/* A Relation or Type message, or an A record, kept to be restated. */
typedef struct Kept {
	uint8_t *key;       /* 'r'/'t' and the OID, or an answer's canonical key */
	size_t key_len;
	uint8_t *rec;       /* the whole record */
	size_t len;
} Kept;

struct FeedWriter {
	char *dir;
	char *open_path;          /* DIR/.hub/open.pgmf */
	char epoch[FEED_EPOCH_LEN + 1];
	int fd;                   /* the open segment; -1: none begun */
	FeedBuf buf;              /* records not in the file yet */
	FeedBuf scratch;          /* feed_writer_buf()'s, taken by feed_writer_take() */
	uint64_t file_len;        /* bytes in the file */
	uint64_t group_start;     /* mark where the open group's records begin */
	uint64_t ended_at;        /* mark after the C of an ended group not yet committed */
	bool ending;              /* a group ended, its commit not heard of yet */
	Lsn ending_lsn;           /* its position */
	uint64_t group;           /* the last group committed */
	Lsn lsn;                  /* the position after it */
	uint64_t first_group;     /* the open segment's first (0: it holds none) */
	Lsn start_lsn;            /* the position before it */
	int64_t first_usecs;      /* when its first group committed (mono) */
	bool have_source;
	FeedHeader source;        /* server_version, proto_version, binary */
	bool source_changed;      /* the open segment's header says otherwise */
	Kept *kept;               /* what a new segment restates */
	size_t nkept;
	ErrBuf err;
};

static uint64_t mark_now(const FeedWriter *w)
{
	return w->file_len + w->buf.len;
}

uint64_t feed_writer_mark(const FeedWriter *w)
{
	return mark_now(w);
}

const char *feed_writer_error(const FeedWriter *w)
{
	return w->err.text;
}

bool feed_writer_dirty(const FeedWriter *w)
{
	return w->fd >= 0 && mark_now(w) > w->group_start;
}

Lsn feed_writer_lsn(const FeedWriter *w)
{
	return w->lsn;
}

uint64_t feed_writer_group(const FeedWriter *w)
{
	return w->group;
}

static bool fail_errno(FeedWriter *w, const char *what)
{
	errbuf_set(&w->err, "could not %s feed segment \"%s\": %s", what, w->open_path,
		   strerror(errno));
	return false;
}

/* Writes the buffer to the file. */
static bool flush(FeedWriter *w)
{
	size_t off = 0;

	if (feed_buf_failed(&w->buf)) {
		errbuf_set(&w->err, "%s", w->buf.err.text);
		return false;
	}
	while (off < w->buf.len) {
		ssize_t n = write(w->fd, w->buf.data + off, w->buf.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_errno(w, "write");
		off += (size_t)n;
	}
	w->file_len += w->buf.len;
	feed_buf_reset(&w->buf);
	if (w->buf.cap > KEEP_BYTES)
		feed_buf_free(&w->buf);
	return true;
}

static bool maybe_flush(FeedWriter *w)
{
	return w->buf.len < FLUSH_BYTES || flush(w);
}

/* The index of what key names, or nkept. */
static size_t kept_find(const FeedWriter *w, const uint8_t *key, size_t key_len)
{
	for (size_t i = 0; i < w->nkept; i++)
		if (w->kept[i].key_len == key_len && memcmp(w->kept[i].key, key, key_len) == 0)
			return i;
	return w->nkept;
}

static void keep(FeedWriter *w, const uint8_t *key, size_t key_len, const uint8_t *rec,
		 size_t len)
{
	size_t i = kept_find(w, key, key_len);

	if (i == w->nkept) {
		w->kept = xreallocarray(w->kept, w->nkept + 1, sizeof(Kept));
		w->kept[i].key = xmalloc(key_len);
		memcpy(w->kept[i].key, key, key_len);
		w->kept[i].key_len = key_len;
		w->nkept++;
	} else {
		free(w->kept[i].rec);
	}
	w->kept[i].rec = xmalloc(len);
	memcpy(w->kept[i].rec, rec, len);
	w->kept[i].len = len;
}

/* Keeps a Relation or Type message as the R record that restates it. */
static void keep_relation(FeedWriter *w, Lsn lsn, const uint8_t *data, size_t len,
			  const PgoMessage *msg)
{
	FeedBuf b = FEED_BUF_INIT;
	uint8_t key[5];
	uint32_t oid;

	if (msg->type == PGO_RELATION)
		oid = msg->u.relation.oid;
	else if (msg->type == PGO_TYPE)
		oid = msg->u.type.oid;
	else
		return;
	key[0] = msg->type == PGO_RELATION ? 'r' : 't';
	key[1] = (uint8_t)(oid >> 24);
	key[2] = (uint8_t)(oid >> 16);
	key[3] = (uint8_t)(oid >> 8);
	key[4] = (uint8_t)oid;
	feed_put_relation(&b, lsn, data, len);
	if (!feed_buf_failed(&b))
		keep(w, key, sizeof(key), b.data, b.len);
	feed_buf_free(&b);
}

/* Begins a new open segment after the last committed group: its header
 * and what it restates, written whole to open.new and renamed over the
 * old one. */
static bool begin_segment(FeedWriter *w)
{
	char *tmp = feed_file_hub_path(w->dir, NEW_NAME);
	FeedHeader h = w->source;
	bool ok = false;

	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	feed_buf_reset(&w->buf);
	h.version = FEED_FORMAT_VERSION;
	memcpy(h.epoch, w->epoch, sizeof(h.epoch));
	h.first_group = w->group + 1;
	h.start_lsn = w->lsn;
	feed_put_header(&w->buf, &h);
	/* relations and types first: an answer may be about them */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < w->nkept; i++)
			if ((w->kept[i].rec[0] == FEED_RELATION) == (pass == 0))
				feed_buf_put(&w->buf, w->kept[i].rec, w->kept[i].len);
	w->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		errbuf_set(&w->err, "could not create feed segment \"%s\": %s", tmp,
			   strerror(errno));
		goto done;
	}
	w->file_len = 0;
	if (!flush(w))
		goto done;
	if (fdatasync(w->fd) != 0 || rename(tmp, w->open_path) != 0 ||
	    !durable_sync_dir(w->open_path)) {
		fail_errno(w, "begin");
		goto done;
	}
	w->group_start = mark_now(w);
	w->first_group = 0;
	w->start_lsn = w->lsn;
	w->source_changed = false;
	ok = true;
done:
	if (!ok && w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	free(tmp);
	return ok;
}

/* The open segment, begun when there is none. */
static bool ensure_segment(FeedWriter *w)
{
	if (w->fd >= 0)
		return true;
	if (!w->have_source) {
		errbuf_set(&w->err, "a feed segment cannot begin before its source is known");
		return false;
	}
	return begin_segment(w);
}

void feed_writer_set_source(FeedWriter *w, uint32_t server_version, uint8_t proto_version,
			    bool binary)
{
	if (w->have_source && (w->source.server_version != server_version ||
			       w->source.proto_version != proto_version ||
			       w->source.binary != binary))
		w->source_changed = w->fd >= 0;
	w->source.server_version = server_version;
	w->source.proto_version = proto_version;
	w->source.binary = binary;
	w->have_source = true;
}

void feed_writer_note(FeedWriter *w, Lsn lsn, const uint8_t *data, size_t len,
		      const PgoMessage *msg)
{
	keep_relation(w, lsn, data, len, msg);
}

void feed_writer_message(FeedWriter *w, Lsn lsn, const uint8_t *data, size_t len,
			 const PgoMessage *msg)
{
	keep_relation(w, lsn, data, len, msg);
	if (!ensure_segment(w))
		return;
	feed_put_message(&w->buf, lsn, data, len);
	(void)maybe_flush(w);
}

FeedBuf *feed_writer_buf(FeedWriter *w)
{
	feed_buf_reset(&w->scratch);
	return &w->scratch;
}

void feed_writer_take(FeedWriter *w, const uint8_t *key, size_t key_len)
{
	if (feed_buf_failed(&w->scratch)) {
		w->buf.failed = true;
		w->buf.err = w->scratch.err;
		return;
	}
	if (key != NULL)
		keep(w, key, key_len, w->scratch.data, w->scratch.len);
	if (!ensure_segment(w))
		return;
	feed_buf_put(&w->buf, w->scratch.data, w->scratch.len);
	if (w->scratch.cap > KEEP_BYTES)
		feed_buf_free(&w->scratch);
	(void)maybe_flush(w);
}

bool feed_writer_cut(FeedWriter *w, uint64_t mark)
{
	if (w->fd < 0 || mark >= mark_now(w))
		return true;
	if (mark < w->group_start)
		mark = w->group_start; /* never into a group that ended */
	if (mark >= w->file_len) {
		w->buf.len = (size_t)(mark - w->file_len);
		return true;
	}
	feed_buf_reset(&w->buf);
	if (ftruncate(w->fd, (off_t)mark) != 0 || lseek(w->fd, 0, SEEK_END) < 0)
		return fail_errno(w, "cut");
	w->file_len = mark;
	return true;
}

/* Cuts what follows the last group that ended; an error of its own
 * replaces the one being reported only when there is none. */
static void cut_back(FeedWriter *w)
{
	ErrBuf keep = w->err;

	if (!feed_writer_cut(w, w->group_start) && keep.text[0] != '\0')
		w->err = keep;
}

bool feed_writer_end_group(FeedWriter *w, Lsn lsn, int64_t commit_time, uint64_t *group)
{
	FeedGroupEnd c = {w->group + 1, lsn, commit_time};

	*group = 0;
	if (!ensure_segment(w))
		return false;
	feed_put_group_end(&w->buf, &c);
	if (!flush(w))
		goto fail;
	if (fdatasync(w->fd) != 0) {
		fail_errno(w, "sync");
		goto fail;
	}
	w->ending = true;
	w->ended_at = mark_now(w);
	w->ending_lsn = lsn;
	*group = c.group;
	return true;
fail:
	cut_back(w);
	return false;
}

void feed_writer_committed(FeedWriter *w)
{
	if (!w->ending)
		return;
	w->ending = false;
	w->group++;
	w->lsn = w->ending_lsn;
	w->group_start = w->ended_at;
	if (w->first_group == 0) {
		w->first_group = w->group;
		w->first_usecs = mono_usecs();
	}
}

void feed_writer_rolled_back(FeedWriter *w)
{
	w->ending = false;
	if (!feed_writer_cut(w, w->group_start))
		log_error("%s", w->err.text);
}

bool feed_writer_due(const FeedWriter *w, int64_t secs, uint64_t max_bytes)
{
	if (w->fd < 0 || w->first_group == 0 || w->ending)
		return false;
	return w->source_changed || w->group_start >= max_bytes ||
	       mono_usecs() - w->first_usecs >= secs * INT64_C(1000000);
}

bool feed_writer_close(FeedWriter *w, FeedSegment *out)
{
	FeedSegmentEnd e;
	FeedFileInfo info;
	char *zst = NULL;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (w->fd < 0 || w->first_group == 0)
		return true;
	if (w->ending || mark_now(w) != w->group_start) {
		errbuf_set(&w->err, "a feed segment cannot be closed while a group is open");
		return false;
	}
	e.ngroups = w->group - w->first_group + 1;
	e.last_group = w->group;
	e.end_lsn = w->lsn;
	feed_put_segment_end(&w->buf, &e);
	if (!flush(w) || fdatasync(w->fd) != 0) {
		if (w->err.text[0] == '\0')
			fail_errno(w, "sync");
		cut_back(w);
		return false;
	}
	zst = feed_file_hub_path(w->dir, ZST_NAME);
	if (!feed_compress_file(w->open_path, zst, &info, &w->err))
		goto done;
	out->name = feed_segment_name(w->epoch, w->first_group, w->group, info.sha256);
	if (!feed_file_place(w->dir, zst, out->name, &w->err))
		goto done;
	out->first_group = w->first_group;
	out->last_group = w->group;
	out->start_lsn = w->start_lsn;
	out->end_lsn = w->lsn;
	out->size = info.size;
	out->raw_size = info.raw_size;
	memcpy(out->sha256, info.sha256, sizeof(out->sha256));
	/* the next record begins a new segment; until then open.pgmf stays,
	 * so that a kill before the manifest lists this one keeps its groups
	 * (feed_writer_open()) */
	close(w->fd);
	w->fd = -1;
	w->first_group = 0;
	ok = true;
done:
	if (!ok) {
		free(out->name);
		out->name = NULL;
		/* the E record goes: the segment stays open */
		cut_back(w);
	}
	free(zst);
	return ok;
}

/* Reads exactly n bytes at the descriptor's offset; false at its end. */
static bool read_all(int fd, void *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t r = read(fd, (char *)p + off, n - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		off += (size_t)r;
	}
	return true;
}

/* What a scan of the open segment a hub left found. */
typedef struct Found {
	bool header;              /* its H record was read */
	FeedHeader h;
	uint64_t keep_end;        /* the offset after the last C to keep */
	uint64_t last;            /* that C's group (0: none) */
	Lsn last_lsn;             /* and its position */
} Found;

/* Reads the open segment's records up to the first one cut short: its
 * header, and the end of the last group committed in the mirror. */
static void scan(int fd, uint64_t group, Found *f)
{
	uint8_t head[FEED_RECORD_HEAD], body[64];
	uint64_t off = 0;
	ErrBuf err;

	memset(f, 0, sizeof(*f));
	while (read_all(fd, head, sizeof(head))) {
		FeedRecord rec = {head[0], (size_t)off, body, 0};
		uint32_t len = (uint32_t)head[1] << 24 | (uint32_t)head[2] << 16 |
			       (uint32_t)head[3] << 8 | head[4];
		bool small = len <= sizeof(body);

		rec.len = len;
		if ((head[0] == FEED_HEADER || head[0] == FEED_GROUP_END) &&
		    (!small || !read_all(fd, body, len)))
			return;
		if (head[0] == FEED_HEADER) {
			if (off != 0 || !feed_read_header(&rec, &f->h, &err))
				return;
			f->header = true;
		} else if (!f->header) {
			return;
		} else if (head[0] == FEED_GROUP_END) {
			FeedGroupEnd c;

			if (!feed_read_group_end(&rec, &c, &err) || c.group > group)
				return;
			f->keep_end = off + FEED_RECORD_HEAD + len;
			f->last = c.group;
			f->last_lsn = c.confirmed_lsn;
		} else if (head[0] == FEED_SEGMENT_END) {
			return;
		} else if (lseek(fd, (off_t)len, SEEK_CUR) < 0) {
			return;
		}
		off += FEED_RECORD_HEAD + (uint64_t)len;
	}
}

/* Takes up the open segment a hub left, cut back to group (see
 * feed_writer_open()); false with the error set. */
static bool take_up(FeedWriter *w, uint64_t group, Lsn lsn, uint64_t listed)
{
	struct stat st;
	Found f;
	int fd = open(w->open_path, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno != ENOENT)
		return fail_errno(w, "open");
	memset(&f, 0, sizeof(f));
	if (fd >= 0)
		scan(fd, group, &f);
	if (!f.header || strcmp(f.h.epoch, w->epoch) != 0 || f.last == 0 || f.last <= listed) {
		if (fd >= 0)
			close(fd);
		if (group > listed) {
			/* groups the mirror committed are in no file (the open
			 * segment is gone, or lost what a sync was to keep) */
			errbuf_set(&w->err, "the mirror committed groups up to %llu, but the "
				   "manifest lists groups up to %llu and feed segment \"%s\" holds "
				   "none after them", (unsigned long long)group,
				   (unsigned long long)listed, w->open_path);
			return false;
		}
		/* nothing in it the manifest does not list: a new one begins */
		if (fd >= 0 && unlink(w->open_path) != 0 && errno != ENOENT)
			return fail_errno(w, "remove");
		return true;
	}
	if (f.h.first_group != listed + 1 || f.last != group || f.last_lsn != lsn) {
		close(fd);
		errbuf_set(&w->err, "feed segment \"%s\" holds groups %llu to %llu, but the "
			   "manifest lists groups up to %llu and the mirror committed %llu (or "
			   "moved on without the feed)", w->open_path,
			   (unsigned long long)f.h.first_group, (unsigned long long)f.last,
			   (unsigned long long)listed, (unsigned long long)group);
		return false;
	}
	if (fstat(fd, &st) != 0 ||
	    ((uint64_t)st.st_size > f.keep_end && ftruncate(fd, (off_t)f.keep_end) != 0) ||
	    fdatasync(fd) != 0 || lseek(fd, (off_t)f.keep_end, SEEK_SET) < 0) {
		close(fd);
		return fail_errno(w, "cut back");
	}
	w->fd = fd;
	w->file_len = f.keep_end;
	w->group_start = f.keep_end;
	w->first_group = f.h.first_group;
	w->start_lsn = f.h.start_lsn;
	w->first_usecs = mono_usecs();
	w->source = f.h;
	w->have_source = true;
	return true;
}

FeedWriter *feed_writer_open(const char *dir, const char *epoch, uint64_t group, Lsn lsn,
			     uint64_t listed, ErrBuf *err)
{
	FeedWriter *w = xcalloc(1, sizeof(*w));

	w->dir = xstrdup(dir);
	w->open_path = feed_file_hub_path(dir, OPEN_NAME);
	memcpy(w->epoch, epoch, FEED_EPOCH_LEN);
	w->fd = -1;
	w->group = group;
	w->lsn = lsn;
	w->start_lsn = lsn;
	feed_buf_init(&w->buf);
	feed_buf_init(&w->scratch);
	if (!feed_file_hub_dir(dir, &w->err) || !take_up(w, group, lsn, listed)) {
		errbuf_set(err, "%s", w->err.text);
		feed_writer_free(w);
		return NULL;
	}
	return w;
}

void feed_writer_keep_from(FeedWriter *w, FeedWriter *old)
{
	for (size_t i = 0; i < old->nkept; i++)
		keep(w, old->kept[i].key, old->kept[i].key_len, old->kept[i].rec, old->kept[i].len);
}

void feed_writer_free(FeedWriter *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->nkept; i++) {
		free(w->kept[i].key);
		free(w->kept[i].rec);
	}
	free(w->kept);
	feed_buf_free(&w->buf);
	feed_buf_free(&w->scratch);
	free(w->open_path);
	free(w->dir);
	free(w);
}

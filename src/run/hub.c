/*
 * hub.c: a mirror that writes a feed (hub.h; docs/feed.md): the feed begun
 * or taken up, the mirror's commits heard of, the stream's messages
 * recorded, the slot confirmed no further than the manifest lists.
 *
 * A group's records are written as the stream's applier takes them; in
 * the mirror's before_commit the group is ended (synced) and its number
 * stored in the same transaction. A transaction the applier skips (it
 * commits before the mirror's position) or finds empty is not recorded,
 * but its Relation and Type messages are kept for later segments to
 * restate. A commit of the run's own that changed what devices hold makes
 * the feed stale: what the stream records meanwhile is dropped, and at the
 * next idle point a new epoch begins from a snapshot.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pgmirror/durable.h"
#include "hub.h"

static Hub *hub_of(const Run *run)
{
	return run->hub;
}

/* The run's mirror is the one whose commits the hub hears of. */
static bool hooked(const Hub *h, const Run *run)
{
	return run->mirror != NULL && h->hooked == run->mirror &&
	       mirror_commit_hooks_are(run->mirror, h);
}

void hub_tap(Run *run)
{
	Hub *h;

	if (run->opt->feed_dir == NULL)
		return;
	h = xcalloc(1, sizeof(*h));
	h->run = run;
	h->dir = run->opt->feed_dir;
	h->tap = feed_tap_new(run->catalog, NULL);
	run->catalog = feed_tap_catalog(h->tap);
	run->hub = h;
}

/* --- the mirror's commits ----------------------------------------------- */

static bool on_before_commit(void *ctx, Mirror *m, ErrBuf *err)
{
	Hub *h = ctx;
	Lsn pos;
	uint64_t group;
	int64_t when = 0;
	bool changed;

	if (h->w == NULL)
		return true;
	if (!mirror_read_position(m, &pos)) {
		errbuf_set(err, "%s", mirror_error(m));
		return false;
	}
	/* outside the stream, a commit that changed the tables or moved the
	 * position (a slot made again, a rebuild's claim) is the run's own */
	if (!h->streaming) {
		if (!mirror_txn_changed_content(m, &changed)) {
			errbuf_set(err, "%s", mirror_error(m));
			return false;
		}
		changed = changed || pos != feed_writer_lsn(h->w);
		if (changed && !h->stale) {
			log_debug("the feed begins a new epoch: the mirror changed outside the stream");
			/* with the change: a run killed before the new epoch begins it */
			if (!mirror_feed_set_stale(m)) {
				errbuf_set(err, "%s", mirror_error(m));
				return false;
			}
		}
		h->stale = h->stale || changed;
	}
	if (h->stale) {
		feed_writer_rolled_back(h->w); /* nothing of it goes to this epoch */
		return true;
	}
	if (!feed_writer_dirty(h->w) && pos == feed_writer_lsn(h->w))
		return true; /* nothing for the feed */
	if (h->apply != NULL) {
		ApplyStats st;

		apply_stats(h->apply, &st);
		when = st.last_commit_time;
	}
	if (!feed_writer_end_group(h->w, pos, when, &group) || !mirror_feed_set_group(m, group)) {
		errbuf_set(err, "could not write the feed's group: %s",
			   group == 0 ? feed_writer_error(h->w) : mirror_error(m));
		return false;
	}
	return true;
}

static void on_committed(void *ctx)
{
	Hub *h = ctx;

	if (h->w != NULL)
		feed_writer_committed(h->w);
}

static void on_rolled_back(void *ctx)
{
	Hub *h = ctx;

	if (h->w != NULL)
		feed_writer_rolled_back(h->w);
}

/* --- beginning ---------------------------------------------------------- */

/* Opens the feed's writer (feed_writer_open()) and tells it the stream's
 * settings when a round told them: a writer opened within a round (a new
 * epoch after a table's copy) writes the round's groups. */
static FeedWriter *open_writer(Hub *h, uint64_t group, Lsn lsn, uint64_t listed, ErrBuf *err)
{
	FeedWriter *w = feed_writer_open(h->dir, h->epoch, group, lsn, listed, err);

	if (w != NULL && h->have_source)
		feed_writer_set_source(w, h->server_version, h->proto, h->binary);
	return w;
}

/* The feed's identity as this run's mirror has it. */
static void source_of(const Run *run, FeedSource *src)
{
	memset(src, 0, sizeof(*src));
	src->system_identifier = xstrdup(run->state.system_identifier);
	src->database = xstrdup(run->state.database);
	src->slot = xstrdup(run->state.slot);
	src->npublications = strv_split(run->state.publications, ',', &src->publications);
}

static bool same_source(const FeedSource *a, const FeedSource *b)
{
	if (strcmp(a->system_identifier, b->system_identifier) != 0 ||
	    strcmp(a->database, b->database) != 0 || strcmp(a->slot, b->slot) != 0 ||
	    a->npublications != b->npublications)
		return false;
	for (int i = 0; i < a->npublications; i++)
		if (strcmp(a->publications[i], b->publications[i]) != 0)
			return false;
	return true;
}

/* The whole file at path, at most max bytes (malloc'd, NUL-terminated);
 * false with errno set (ENOENT: there is none) and err. */
static bool read_file(const char *path, size_t max, char **text, size_t *len, ErrBuf *err)
{
	FILE *f = fopen(path, "rb");
	int e;

	*text = NULL;
	*len = 0;
	if (f == NULL) {
		errbuf_set(err, "could not open \"%s\": %s", path, strerror(errno));
		return false;
	}
	if (!feed_read_bounded(f, max, text, len) || *len > max) {
		e = *text == NULL ? errno : EFBIG;
		errbuf_set(err, "could not read \"%s\": %s", path,
			   e == EFBIG ? "larger than a manifest may be" : strerror(e));
		fclose(f);
		free(*text);
		*text = NULL;
		*len = 0;
		errno = e;
		return false;
	}
	fclose(f);
	return true;
}

/* Reads DIR/manifest.json when there is one; an exit code. */
static int read_own_manifest(Hub *h)
{
	char *path = xasprintf("%s/manifest.json", h->dir), *text = NULL;
	size_t len = 0;
	FeedSource mine;
	ErrBuf err;
	int rc = EXIT_OK;

	if (!read_file(path, FEED_MANIFEST_MAX, &text, &len, &err)) {
		if (errno != ENOENT) {
			log_error("could not read the feed's manifest: %s", err.text);
			rc = EXIT_ERROR;
		}
		goto done;
	}
	if (!feed_manifest_parse(text, len, &h->man, &err)) {
		log_error("feed directory \"%s\" holds a manifest that cannot be read (%s); move "
			  "the directory away, or give --feed another one", h->dir, err.text);
		feed_manifest_free(&h->man);
		rc = EXIT_ERROR;
		goto done;
	}
	source_of(h->run, &mine);
	if (!same_source(&mine, &h->man.source)) {
		log_error("feed directory \"%s\" holds the feed of another mirror (slot \"%s\" of "
			  "system %s); give --feed a directory of this mirror's own", h->dir,
			  h->man.source.slot, h->man.source.system_identifier);
		rc = EXIT_ERROR;
	} else {
		h->have_man = true;
		h->seq = h->man.seq;
	}
	feed_source_free(&mine);
	if (!h->have_man)
		feed_manifest_free(&h->man);
done:
	free(text);
	free(path);
	return rc;
}

/* A new epoch: the mirror as it stands is the feed's snapshot after group
 * 0, what the old epoch listed is retired. Within a round of the stream
 * (a table's copy), the mirror stands past the round's start, and the
 * new writer restates what the old one kept. */
static bool new_epoch(Hub *h)
{
	Run *run = h->run;
	MirrorFeedState st = {0};
	FeedManifest *man = &h->man;
	FeedWriter *old = h->w;
	ErrBuf err;
	int64_t t = 0;
	double unix_secs;
	Lsn pos;

	h->w = NULL;
	feed_tap_set_writer(h->tap, NULL);
	if (!feed_epoch_new(h->epoch)) {
		log_error("could not begin a new epoch of the feed: %s", strerror(errno));
		feed_writer_free(old);
		return false;
	}
	st.hub = true;
	st.location = (char *)h->dir;
	memcpy(st.epoch, h->epoch, sizeof(st.epoch));
	st.seq = h->seq;
	if (!mirror_read_position(run->mirror, &pos) || !mirror_begin(run->mirror) ||
	    !mirror_feed_write(run->mirror, &st) || !mirror_commit(run->mirror)) {
		log_error("%s", mirror_error(run->mirror));
		mirror_rollback(run->mirror);
		feed_writer_free(old);
		return false;
	}
	hub_retire_all(h);
	source_of(run, &man->source);
	memcpy(man->epoch, h->epoch, sizeof(man->epoch));
	man->server_version = (uint32_t)session_server_version(run->session);
	man->end_group = 0;
	man->end_lsn = pos;
	if (h->apply != NULL) {
		ApplyStats as;

		apply_stats(h->apply, &as);
		t = as.last_commit_time;
	}
	if (t == 0 && run->state.last_commit_time != NULL &&
	    pgtime_parse_utc(run->state.last_commit_time, &unix_secs))
		t = (int64_t)((unix_secs - (double)PG_EPOCH_OFFSET_SECS) * 1e6);
	man->end_time = t;
	man->oldest_group = 1;
	man->oldest_lsn = pos;
	h->have_man = true;
	h->stale = false;
	h->w = open_writer(h, 0, pos, 0, &err);
	if (h->w != NULL && old != NULL)
		feed_writer_keep_from(h->w, old);
	feed_writer_free(old);
	if (h->w == NULL) {
		log_error("%s", err.text);
		return false;
	}
	if (!hub_take_snapshot(h) || !hub_write_manifest(h))
		return false;
	feed_tap_set_writer(h->tap, h->w);
	log_info("feed \"%s\" begins epoch %s with a snapshot of the mirror at %s", h->dir,
		 h->epoch, pos ? "its position" : "its start");
	return true;
}

/* Goes on with the feed the mirror's row names, when the mirror is as the
 * feed left it; hears of the mirror's commits from now on. An exit code. */
static int take_up(Run *run, bool may_begin)
{
	Hub *h = hub_of(run);
	MirrorFeedState st = {0};
	MirrorCommitHooks hooks = {on_before_commit, on_committed, on_rolled_back, h};
	ErrBuf err;
	int rc = EXIT_OK;

	if (h == NULL || run->mirror == NULL || !run->state.present)
		return EXIT_OK;
	if (mkdir(h->dir, 0755) == 0) {
		if (!durable_sync_dir(h->dir)) {
			log_error("could not sync the directory of \"%s\": %s", h->dir, strerror(errno));
			return EXIT_ERROR;
		}
	} else if (errno != EEXIST) {
		log_error("could not make the feed's directory \"%s\": %s", h->dir, strerror(errno));
		return EXIT_ERROR;
	}
	if (!h->have_man && h->w == NULL && (rc = read_own_manifest(h)) != EXIT_OK)
		return rc;
	if (!hooked(h, run)) {
		/* a mirror healed or made anew (perhaps where the old one was
		 * in memory): a new epoch */
		h->stale = h->stale || h->hooked != NULL;
		mirror_set_commit_hooks(run->mirror, &hooks);
		h->hooked = run->mirror;
	}
	if (!mirror_feed_read(run->mirror, &st)) {
		log_error("%s", mirror_error(run->mirror));
		return EXIT_ERROR;
	}
	if (st.present && st.seq > h->seq)
		h->seq = st.seq;
	/* the mirror as the feed left it: of this feed, and not moved on
	 * without it (a group the manifest lists ends where the mirror is) */
	if (h->w == NULL && !h->stale && !st.stale && h->have_man && st.present && st.hub &&
	    strcmp(st.location, h->dir) == 0 && strcmp(st.epoch, h->man.epoch) == 0 &&
	    st.group >= h->man.end_group &&
	    (st.group > h->man.end_group || h->man.end_lsn == run->state.confirmed_lsn)) {
		memcpy(h->epoch, st.epoch, sizeof(h->epoch));
		h->w = open_writer(h, st.group, run->state.confirmed_lsn, h->man.end_group, &err);
		if (h->w == NULL)
			log_warning("the feed begins a new epoch: %s", err.text);
		else
			feed_tap_set_writer(h->tap, h->w);
	}
	mirror_feed_state_clear(&st);
	if (may_begin && (h->w == NULL || h->stale) && !new_epoch(h))
		return EXIT_ERROR;
	return EXIT_OK;
}

int hub_take_up(Run *run)
{
	return take_up(run, false);
}

int hub_ready(Run *run)
{
	return take_up(run, true);
}

/* --- the stream ------------------------------------------------------------ */

void hub_round(Run *run, Applier *apply, int server_version, int proto, bool binary)
{
	Hub *h = hub_of(run);

	if (h == NULL)
		return;
	h->apply = apply;
	h->streaming = apply != NULL;
	if (apply == NULL)
		return;
	h->have_source = true;
	h->server_version = (uint32_t)server_version;
	h->proto = (uint8_t)proto;
	h->binary = binary;
	if (h->w != NULL)
		feed_writer_set_source(h->w, h->server_version, h->proto, h->binary);
}

void hub_streaming(Run *run, bool on)
{
	Hub *h = hub_of(run);

	if (h != NULL)
		h->streaming = on;
}

void hub_message(Run *run, Lsn lsn, const uint8_t *data, size_t len, const PgoMessage *msg)
{
	Hub *h = hub_of(run);

	if (h == NULL || h->w == NULL)
		return;
	if (msg->type == PGO_BEGIN) {
		h->recording = !apply_skipping(h->apply);
		h->txn_mark = feed_writer_mark(h->w);
	}
	if (!h->recording) {
		feed_writer_note(h->w, lsn, data, len, msg);
		return;
	}
	feed_writer_message(h->w, lsn, data, len, msg);
	/* servers before 15 send transactions that changed no published
	 * table: the applier takes them as a position, and so does the feed */
	if (msg->type == PGO_COMMIT && apply_last_txn_empty(h->apply) &&
	    !feed_writer_cut(h->w, h->txn_mark))
		log_error("%s", feed_writer_error(h->w));
}

Lsn hub_confirmable(const Run *run, Lsn durable)
{
	const Hub *h = hub_of(run);

	if (h == NULL || !h->have_man)
		return durable;
	return durable < h->man.end_lsn ? durable : h->man.end_lsn;
}

bool hub_publish(Run *run, bool all)
{
	Hub *h = hub_of(run);
	FeedSegment seg;

	if (h == NULL || run->mirror == NULL)
		return true;
	if (!hooked(h, run) || h->stale)
		return hub_ready(run) == EXIT_OK;
	if (h->w == NULL || !feed_writer_due(h->w, all ? 0 : run->opt->feed_interval > 0
					     ? run->opt->feed_interval : HUB_SEGMENT_SECS,
					     HUB_SEGMENT_BYTES))
		return true;
	if (!feed_writer_close(h->w, &seg)) {
		log_error("%s", feed_writer_error(h->w));
		return false;
	}
	hub_list_segment(h, &seg);
	/* a snapshot by itself, once the segments since the last outgrow it */
	if (hub_snapshot_due(h) && !hub_take_snapshot(h))
		return false;
	return hub_write_manifest(h);
}

int hub_finish(Run *run, int rc)
{
	Hub *h = hub_of(run);
	FeedSegment seg = {0};
	bool ok = true;

	if (h == NULL)
		return rc;
	if (hooked(h, run) && h->w != NULL && !h->stale) {
		ok = feed_writer_close(h->w, &seg);
		if (!ok)
			log_error("%s", feed_writer_error(h->w));
		if (ok && seg.name != NULL) {
			hub_list_segment(h, &seg);
			ok = hub_write_manifest(h);
		}
		if (ok && (run->opt->feed_snapshot || hub_snapshot_due(h)))
			ok = hub_take_snapshot(h) && hub_write_manifest(h);
	} else if (run->mirror != NULL && rc == EXIT_OK && h->stale) {
		ok = hub_ready(run) == EXIT_OK;
	}
	if (hooked(h, run))
		mirror_set_commit_hooks(run->mirror, NULL);
	feed_writer_free(h->w);
	run->catalog = lookup_catalog(run->lookup);
	feed_tap_free(h->tap);
	if (h->have_man)
		feed_manifest_free(&h->man);
	hub_forget_retiring(h);
	free(h);
	run->hub = NULL;
	return rc == EXIT_OK && !ok ? EXIT_ERROR : rc;
}

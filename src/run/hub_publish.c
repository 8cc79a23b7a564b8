/*
 * hub_publish.c: a hub's feed files (hub.h; docs/feed.md): the manifest
 * written, snapshots taken, segments listed, and retention: the newest
 * --feed-keep snapshots and every segment after the oldest of them stay
 * listed; a file no longer listed is noted in DIR/.hub/retired with the
 * time, and removed HUB_RETIRE_SECS later, once every manifest that
 * named it is long replaced. It is noted only once a manifest without it
 * is durable: a hub killed before that starts again from the manifest
 * that lists it, and may go on listing it for longer than an hour.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hub.h"

#define RETIRED_NAME "retired"

/* Notes name as retired now, in DIR/.hub/retired. A note that a power
 * cut loses only leaves the file behind. */
static void note_retired(Hub *h, const char *name)
{
	char *path = feed_file_hub_path(h->dir, RETIRED_NAME);
	FILE *f = fopen(path, "a");

	if (f == NULL || fprintf(f, "%lld %s\n", (long long)time(NULL), name) < 0)
		log_warning("could not note \"%s\" as no longer listed in \"%s\": %s", name, path,
			    strerror(errno));
	if (f != NULL)
		fclose(f);
	free(path);
}

/* name (taken) is no longer listed: noted once a manifest without it is
 * durable (hub_write_manifest()). */
static void retire(Hub *h, char *name)
{
	h->retiring = xreallocarray(h->retiring, (size_t)h->nretiring + 1, sizeof(char *));
	h->retiring[h->nretiring++] = name;
}

void hub_forget_retiring(Hub *h)
{
	strv_free(h->retiring, h->nretiring);
	h->retiring = NULL;
	h->nretiring = 0;
}

static void drop_segment(Hub *h, int i)
{
	FeedManifest *m = &h->man;

	retire(h, m->segments[i].name);
	memmove(&m->segments[i], &m->segments[i + 1],
		(size_t)(m->nsegments - i - 1) * sizeof(FeedSegment));
	m->nsegments--;
}

static void drop_snapshot(Hub *h, int i)
{
	FeedManifest *m = &h->man;

	retire(h, m->snapshots[i].name);
	memmove(&m->snapshots[i], &m->snapshots[i + 1],
		(size_t)(m->nsnapshots - i - 1) * sizeof(FeedSnapshot));
	m->nsnapshots--;
}

void hub_retire_all(Hub *h)
{
	if (!h->have_man)
		return;
	while (h->man.nsegments > 0)
		drop_segment(h, 0);
	while (h->man.nsnapshots > 0)
		drop_snapshot(h, 0);
	feed_source_free(&h->man.source);
}

/* oldest follows the first segment, or end when there is none. */
static void set_oldest(FeedManifest *m)
{
	if (m->nsegments > 0) {
		m->oldest_group = m->segments[0].first_group;
		m->oldest_lsn = m->segments[0].start_lsn;
	} else {
		m->oldest_group = m->end_group + 1;
		m->oldest_lsn = m->end_lsn;
	}
}

/* --feed-keep: the newest snapshots, and the segments after the oldest. */
static void keep(Hub *h)
{
	FeedManifest *m = &h->man;
	int n = h->run->opt->feed_keep > 0 ? h->run->opt->feed_keep : HUB_KEEP_DEFAULT;

	while (m->nsnapshots > n)
		drop_snapshot(h, 0);
	while (m->nsnapshots > 0 && m->nsegments > 0 &&
	       m->segments[0].last_group <= m->snapshots[0].group)
		drop_segment(h, 0);
	set_oldest(m);
}

void hub_list_segment(Hub *h, FeedSegment *seg)
{
	FeedManifest *m = &h->man;

	m->segments = xreallocarray(m->segments, (size_t)m->nsegments + 1, sizeof(FeedSegment));
	m->segments[m->nsegments++] = *seg;
	memset(seg, 0, sizeof(*seg));
	m->end_group = m->segments[m->nsegments - 1].last_group;
	m->end_lsn = m->segments[m->nsegments - 1].end_lsn;
	set_oldest(m);
}

/*
 * Due when the segments listed after the newest snapshot add up to more
 * bytes than it (a new device would download less from a new one), and
 * that snapshot is an hour old or more (its file's time): both read from
 * the feed itself, so that a hub run from cron, one run at a time, keeps
 * the rule as a service does.
 */
bool hub_snapshot_due(const Hub *h)
{
	const FeedManifest *m = &h->man;
	const FeedSnapshot *newest;
	uint64_t after = 0;
	struct stat st;
	char *path;
	bool old;

	if (m->nsnapshots == 0)
		return true;
	newest = &m->snapshots[m->nsnapshots - 1];
	for (int i = 0; i < m->nsegments; i++)
		if (m->segments[i].last_group > newest->group)
			after += m->segments[i].size;
	if (after <= newest->size)
		return false;
	path = xasprintf("%s/%s", h->dir, newest->name);
	old = stat(path, &st) != 0 || time(NULL) - st.st_mtime >= HUB_AUTO_SNAPSHOT_SECS;
	free(path);
	return old;
}

bool hub_take_snapshot(Hub *h)
{
	FeedManifest *m = &h->man;
	char *db = feed_file_hub_path(h->dir, "snapshot.db");
	char *zst = feed_file_hub_path(h->dir, "snapshot.zst");
	FeedSnapshot s = {0};
	FeedFileInfo info;
	ErrBuf err;
	bool ok = false;

	/* one a group: a snapshot after the newest's group is the same */
	if (m->nsnapshots > 0 && m->snapshots[m->nsnapshots - 1].group == m->end_group) {
		ok = true;
		goto done;
	}
	(void)unlink(db);
	if (!mirror_snapshot_to(h->run->mirror, db)) {
		log_error("could not write a snapshot of the mirror for the feed: %s",
			  mirror_error(h->run->mirror));
		goto done;
	}
	if (!feed_compress_file(db, zst, &info, &err)) {
		log_error("%s", err.text);
		goto done;
	}
	s.name = feed_snapshot_name(h->epoch, m->end_group, info.sha256);
	if (!feed_file_place(h->dir, zst, s.name, &err)) {
		log_error("%s", err.text);
		free(s.name);
		goto done;
	}
	s.group = m->end_group;
	s.lsn = m->end_lsn;
	s.size = info.size;
	s.raw_size = info.raw_size;
	memcpy(s.sha256, info.sha256, sizeof(s.sha256));
	m->snapshots = xreallocarray(m->snapshots, (size_t)m->nsnapshots + 1,
				     sizeof(FeedSnapshot));
	m->snapshots[m->nsnapshots++] = s;
	keep(h);
	ok = true;
done:
	(void)unlink(db);
	free(db);
	free(zst);
	return ok;
}

bool hub_write_manifest(Hub *h)
{
	FeedManifest *m = &h->man;
	MirrorFeedState st = {0};
	char *text = NULL;
	ErrBuf err;
	bool ok;

	keep(h);
	m->seq = ++h->seq;
	m->issued_at = pgtime_now();
	ok = feed_manifest_write(m, &text, &err) &&
	     feed_file_write(h->dir, "manifest.json", text, strlen(text), &err);
	free(text);
	if (!ok) {
		log_error("could not write the feed's manifest: %s", err.text);
		return false;
	}
	for (int i = 0; i < h->nretiring; i++)
		note_retired(h, h->retiring[i]);
	hub_forget_retiring(h);
	/* the seq, so that it grows also past a manifest removed by hand */
	ok = mirror_feed_read(h->run->mirror, &st) && st.present;
	if (ok) {
		st.seq = h->seq;
		ok = mirror_begin(h->run->mirror) && mirror_feed_write(h->run->mirror, &st) &&
		     mirror_commit(h->run->mirror);
	}
	mirror_feed_state_clear(&st);
	if (!ok) {
		log_error("%s", mirror_error(h->run->mirror));
		mirror_rollback(h->run->mirror);
		return false;
	}
	hub_retention(h);
	return true;
}

void hub_retention(Hub *h)
{
	char *path = feed_file_hub_path(h->dir, RETIRED_NAME);
	char *tmp = feed_file_hub_path(h->dir, RETIRED_NAME ".new");
	FILE *in = fopen(path, "r"), *out = NULL;
	char line[1024];
	time_t now = time(NULL);

	if (in == NULL)
		goto done;
	out = fopen(tmp, "w");
	while (out != NULL && fgets(line, sizeof(line), in) != NULL) {
		long long when;
		char name[1000];
		char *file;

		if (sscanf(line, "%lld %999s", &when, name) != 2)
			continue;
		if (now - (time_t)when < HUB_RETIRE_SECS) {
			fputs(line, out);
			continue;
		}
		file = xasprintf("%s/%s", h->dir, name);
		if (unlink(file) != 0 && errno != ENOENT) {
			log_warning("could not remove \"%s\", no longer listed in the feed: %s", file,
				    strerror(errno));
			fputs(line, out);
		}
		free(file);
	}
	fclose(in);
	if (out != NULL && fclose(out) == 0 && rename(tmp, path) != 0)
		log_warning("could not update \"%s\": %s", path, strerror(errno));
done:
	free(path);
	free(tmp);
}

/*
 * status_feed.c: what --status shows of a feed (status_internal.h). A
 * device's row says the URL it reads and the feed's end as it last read
 * the manifest; its lag is behind that end (bytes of position, seconds of
 * source commit time), and read_time says how old that reading is. A hub's
 * row says its directory; the end and the newest snapshot are its
 * manifest's, read from the directory.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/feed_file.h"
#include "pgmirror/feed_manifest.h"
#include "status_internal.h"

void status_feed_clear(FeedStatus *fs)
{
	free(fs->snapshot);
	memset(fs, 0, sizeof(*fs));
}

/* The hub's manifest: its end and its newest snapshot; what cannot be
 * read is left out (the hub's own run reports it). */
static void read_manifest(FeedStatus *fs)
{
	char *path = xasprintf("%s/manifest.json", fs->location);
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t n;
	FeedManifest man;
	ErrBuf err;

	free(path);
	if (f == NULL)
		return;
	if (!feed_read_bounded(f, FEED_MANIFEST_MAX, &text, &n)) {
		fclose(f);
		return;
	}
	fclose(f);
	if (feed_manifest_parse(text, n, &man, &err)) {
		fs->end_lsn = man.end_lsn;
		fs->has_end = true;
		if (man.nsnapshots > 0)
			fs->snapshot = xstrdup(man.snapshots[man.nsnapshots - 1].name);
	}
	feed_manifest_free(&man);
	free(text);
}

bool status_feed_read(Mirror *m, const MirrorState *st, MirrorFeedState *row, FeedStatus *fs)
{
	double end, last;

	memset(fs, 0, sizeof(*fs));
	if (!mirror_feed_read(m, row))
		return false;
	if (!row->present)
		return true;
	fs->location = row->location;
	if (row->hub) {
		fs->hub = true;
		read_manifest(fs);
		return true;
	}
	fs->device = true;
	fs->has_end = row->end_lsn != LSN_INVALID;
	fs->end_lsn = row->end_lsn;
	fs->end_time = row->end_time;
	fs->read_time = row->read_time;
	if (fs->has_end) {
		fs->has_lag = true;
		fs->lag_bytes = row->end_lsn > st->confirmed_lsn
			? (int64_t)(row->end_lsn - st->confirmed_lsn) : 0;
		if (row->end_time != NULL && st->last_commit_time != NULL &&
		    pgtime_parse_utc(row->end_time, &end) &&
		    pgtime_parse_utc(st->last_commit_time, &last) && end > last)
			fs->lag_seconds = end - last;
	}
	return true;
}

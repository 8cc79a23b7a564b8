/*
 * device.c: a device's job (--from=URL; device.h; docs/feed.md).
 *
 * Each round reads the manifest (a service: every DEVICE_POLL_SECS, and
 * nothing more when it has not changed), checks it (the feed this mirror
 * follows, a seq no lower than one read before), takes the newest
 * snapshot when the device has none of this epoch or its group is no
 * longer in the feed, then applies every segment after its group, each
 * checked against the manifest before a byte of it is applied
 * (device_replay.c). --once stops at the end of the feed as it found it.
 *
 * A snapshot is decompressed beside the mirror, made a device's (its
 * pgmirror_feed row, the hub's health forgotten), given the user's
 * objects of the mirror it replaces, and put in its place: a kill at any
 * step leaves the old mirror whole, and the next run starts the snapshot
 * again.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgmirror/feed_file.h"
#include "pgmirror/feed_manifest.h"
#include "pgmirror/feed_link.h"
#include "pgmirror/notify.h"
#include "device.h"
#include "replicate_internal.h"

typedef struct Device {
	const ReplicateOptions *opt;
	FeedLink *src;
	Mirror *m;
	char *damaged;            /* the mirror file is damaged: why (a snapshot
				   * takes its place); NULL: sound */
	MirrorState state;
	MirrorFeedState fs;
	FeedManifest man;
	bool have_man;
} Device;

static void device_forget(Device *d)
{
	mirror_state_clear(&d->state);
	mirror_feed_state_clear(&d->fs);
}

/* Reads the mirror's state and feed row; false logged. */
static bool device_read(Device *d)
{
	device_forget(d);
	if (!mirror_read_state(d->m, &d->state) || !mirror_feed_read(d->m, &d->fs)) {
		log_error("%s", mirror_error(d->m));
		return false;
	}
	return true;
}

/* The directory of the mirror's file, for what is fetched (malloc'd). */
static char *work_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(slash - path), path);
}

/* The feed this mirror follows is the manifest's; exit code. */
static int check_identity(Device *d)
{
	const FeedSource *src = &d->man.source;
	char *pubs;
	bool same;

	if (!d->state.present)
		return EXIT_OK;
	if (d->fs.present && d->fs.hub) {
		log_error("mirror \"%s\" is a hub that writes the feed in \"%s\"; a device needs a "
			  "mirror file of its own", d->opt->mirror_path, d->fs.location);
		return EXIT_ERROR;
	}
	pubs = strv_join(src->publications, src->npublications, ",");
	same = strcmp(d->state.system_identifier, src->system_identifier) == 0 &&
	       strcmp(d->state.database, src->database) == 0 &&
	       strcmp(d->state.slot, src->slot) == 0 && strcmp(d->state.publications, pubs) == 0;
	if (!same)
		log_error("the feed at %s is of another hub (slot \"%s\" of database \"%s\" on "
			  "system %s, publications \"%s\"), not the one mirror \"%s\" follows (slot "
			  "\"%s\" of \"%s\" on %s, \"%s\"); give --from the feed of this mirror, or "
			  "start a new mirror file", feed_link_shown(d->src), src->slot,
			  src->database, src->system_identifier, pubs, d->opt->mirror_path,
			  d->state.slot, d->state.database, d->state.system_identifier,
			  d->state.publications);
	free(pubs);
	return same ? EXIT_OK : EXIT_ERROR;
}

/* Whether the device starts over from the newest snapshot, and why. */
static const char *snapshot_reason(const Device *d)
{
	if (d->damaged != NULL)
		return d->damaged;
	if (!d->state.present || !d->fs.present)
		return "a first run";
	if (strcmp(d->fs.epoch, d->man.epoch) != 0)
		return "the feed began a new epoch (its hub started over)";
	if (d->fs.group + 1 < d->man.oldest_group)
		return "the feed no longer holds the device's position";
	return NULL;
}

/* Takes the newest snapshot in place of the mirror; exit code. */
static int take_snapshot(Device *d, const char *why)
{
	const FeedSnapshot *snap = &d->man.snapshots[d->man.nsnapshots - 1];
	const char *path = d->opt->mirror_path;
	char *part = NULL, *fresh = xasprintf("%s.feed-new", path), *err = NULL;
	MirrorUserObjects *u = NULL;
	MirrorFeedState st = {0};
	Mirror *nm = NULL;
	ErrBuf e;
	bool temp = false;
	int rc = EXIT_ERROR;

	log_info("taking the feed's snapshot after group %llu (%s)",
		 (unsigned long long)snap->group, why);
	mirror_remove_files(fresh); /* of a run that did not finish */
	if (!feed_link_file(d->src, snap->name, snap->size, snap->sha256, &part, &temp, &e) ||
	    !feed_decompress_to_file(part, snap->raw_size, fresh, &e)) {
		log_error("%s", e.text);
		goto done;
	}
	if (mirror_open(fresh, MIRROR_WRITE, &nm, &err) != MIRROR_OPEN_OK) {
		log_error("the feed's snapshot \"%s\" is not a mirror: %s", snap->name, err);
		nm = NULL;
		goto done;
	}
	st.hub = false;
	st.location = (char *)feed_link_shown(d->src);
	memcpy(st.epoch, d->man.epoch, sizeof(st.epoch));
	st.group = snap->group;
	st.seq = d->man.seq;
	if (!mirror_begin(nm) || !mirror_feed_adopt(nm, &st) ||
	    !mirror_note_rebuild(nm, why) || !mirror_commit(nm)) {
		log_error("%s", mirror_error(nm));
		goto done;
	}
	if ((d->state.present || d->damaged != NULL) && mirror_user_objects_read(d->m, &u) &&
	    u != NULL) {
		char **dropped = NULL;
		int ndropped = 0;

		if (!mirror_user_objects_restore_from(nm, path, u, &dropped, &ndropped)) {
			log_error("%s", mirror_error(nm));
			goto done;
		}
		for (int i = 0; i < ndropped; i++)
			log_warning("the user's %s no longer applies to the feed's snapshot and was "
				    "not made again", dropped[i]);
		strv_free(dropped, ndropped);
	}
	mirror_close(nm);
	nm = NULL;
	if (d->damaged != NULL) {
		/* set aside as MIRROR.db.damaged, its -wal with it, as a heal does */
		mirror_close_as_is(d->m);
		d->m = NULL;
		if (!mirror_set_aside(path, fresh, &err)) {
			log_error("%s", err);
			goto done;
		}
		log_warning("mirror \"%s\" was damaged and has been rebuilt from the feed's "
			    "snapshot; the damaged file is kept as \"%s.damaged\" (remove it when it is "
			    "no longer needed); readers must open the mirror again", path, path);
		free(d->damaged);
		d->damaged = NULL;
		mirror_damage_forget();
	} else {
		mirror_close(d->m);
		d->m = NULL;
		if (!mirror_install(fresh, path, &err)) {
			log_error("%s", err);
			goto done;
		}
	}
	if (mirror_open(path, MIRROR_WRITE, &d->m, &err) != MIRROR_OPEN_OK) {
		log_error("%s", err);
		d->m = NULL;
		goto done;
	}
	rc = device_read(d) ? EXIT_OK : EXIT_ERROR;
done:
	mirror_user_objects_free(u);
	mirror_close(nm);
	if (rc != EXIT_OK)
		mirror_remove_files(fresh);
	if (part != NULL && temp)
		(void)unlink(part);
	free(part);
	free(fresh);
	free(err);
	return rc;
}

/* Notes in the mirror what the manifest said of the feed's end. */
static bool note_read(Device *d)
{
	MirrorFeedState st;
	char when[40];
	bool ok;

	if (!mirror_feed_read(d->m, &st) || !st.present) {
		mirror_feed_state_clear(&st);
		return true;
	}
	st.seq = d->man.seq > st.seq ? d->man.seq : st.seq;
	st.end_group = d->man.end_group;
	st.end_lsn = d->man.end_lsn;
	free(st.end_time);
	st.end_time = d->man.end_time != 0
		? xstrdup(pgtime_format_utc(d->man.end_time, when, sizeof(when))) : NULL;
	free(st.read_time);
	st.read_time = xstrdup(pgtime_format_utc(pgtime_now(), when, sizeof(when)));
	ok = mirror_begin(d->m) && mirror_feed_write(d->m, &st) &&
	     /* it holds all the feed had: in sync, as far as a device knows */
	     (st.group < st.end_group || mirror_note_sync(d->m, st.read_time, 0, 0.0)) &&
	     mirror_commit(d->m);
	if (!ok) {
		log_error("%s", mirror_error(d->m));
		mirror_rollback(d->m);
	}
	mirror_feed_state_clear(&st);
	return ok;
}

/* Applies the segments after the device's group; exit code. */
static int apply_segments(Device *d, bool *reached)
{
	Replay *r;
	int i = feed_manifest_find_segment(&d->man, d->fs.group + 1);
	int rc = EXIT_OK;

	*reached = false;
	if (i < 0)
		return EXIT_OK; /* nothing after it */
	r = replay_new(d->m, d->state.confirmed_lsn, d->fs.group, d->opt->endpos);
	for (; i < d->man.nsegments && rc == EXIT_OK && !*reached && !replicate_stopping(); i++) {
		const FeedSegment *seg = &d->man.segments[i];
		uint8_t *contents = NULL;
		size_t len = 0;
		char *part = NULL;
		bool temp = false;
		ErrBuf e;

		if (!feed_link_file(d->src, seg->name, seg->size, seg->sha256, &part, &temp, &e) ||
		    !feed_decompress_to_buf(part, seg->raw_size, &contents, &len, &e)) {
			log_error("%s", e.text);
			rc = EXIT_ERROR;
		} else if (!replay_segment(r, seg->name, contents, len, reached)) {
			log_error("%s", replay_error(r));
			rc = EXIT_ERROR;
		} else {
			log_debug("applied feed segment \"%s\": at group %llu", seg->name,
				  (unsigned long long)replay_group(r));
		}
		free(contents);
		if (part != NULL && temp)
			(void)unlink(part);
		free(part);
	}
	replay_free(r);
	return rc;
}

/* One round: the manifest, a snapshot if needed, the segments; exit code.
 * *quiet: the manifest had not changed. */
static int device_round(Device *d, bool *quiet, bool *reached)
{
	char *text = NULL;
	size_t len = 0;
	const char *why;
	ErrBuf err;
	int rc;

	*quiet = *reached = false;
	if (!feed_link_manifest(d->src, &text, &len, quiet, &err)) {
		log_error("%s", err.text);
		return EXIT_ERROR;
	}
	if (*quiet)
		return EXIT_OK;
	if (d->have_man)
		feed_manifest_free(&d->man);
	d->have_man = feed_manifest_parse(text, len, &d->man, &err);
	free(text);
	if (!d->have_man) {
		feed_manifest_free(&d->man);
		feed_link_forget(d->src);
		log_error("the feed's manifest at %s cannot be used (nothing was applied): %s",
			  feed_link_shown(d->src), err.text);
		return EXIT_ERROR;
	}
	if (d->damaged == NULL && (!device_read(d) || (rc = check_identity(d)) != EXIT_OK)) {
		feed_link_forget(d->src);
		return EXIT_ERROR;
	}
	if (d->damaged == NULL && d->fs.present && d->man.seq < d->fs.seq) {
		feed_link_forget(d->src);
		log_error("the feed's manifest at %s is older than one this device has read (seq "
			  "%llu, after %llu): a copy put back, or a cache gone back in time; nothing "
			  "was applied", feed_link_shown(d->src), (unsigned long long)d->man.seq,
			  (unsigned long long)d->fs.seq);
		return EXIT_ERROR;
	}
	if ((why = snapshot_reason(d)) != NULL) {
		if (d->man.nsnapshots == 0) {
			log_error("the feed at %s holds no snapshot to begin from", feed_link_shown(d->src));
			return EXIT_ERROR;
		}
		if ((rc = take_snapshot(d, why)) != EXIT_OK)
			return rc;
	}
	rc = apply_segments(d, reached);
	if (!device_read(d) || !note_read(d))
		return EXIT_ERROR;
	return rc;
}

int replicate_device(const ReplicateOptions *opt)
{
	Device d = {.opt = opt};
	char *work = work_dir(opt->mirror_path), *err = NULL;
	bool continuous = !opt->once && opt->endpos == LSN_INVALID;
	ErrBuf e;
	MirrorOpenResult r;
	int rc = EXIT_ERROR;

	d.src = feed_link_new(opt->feed_from, work, &e);
	if (d.src == NULL) {
		log_error("%s", e.text);
		rc = EXIT_USAGE;
		goto done;
	}
	r = mirror_open(opt->mirror_path, MIRROR_CREATE, &d.m, &err);
	if (r == MIRROR_OPEN_DAMAGED) {
		d.damaged = xasprintf("mirror damaged: %s", mirror_damage_seen() != NULL
				      ? mirror_damage_seen() : err);
		log_warning("mirror \"%s\" is damaged (%s); taking the feed's snapshot in its place",
			    opt->mirror_path, d.damaged);
	} else if (r != MIRROR_OPEN_OK) {
		log_msg(r == MIRROR_OPEN_LOCKED ? LOG_INFO : LOG_ERROR, "%s", err);
		d.m = NULL;
		rc = r == MIRROR_OPEN_LOCKED ? EXIT_IN_USE : EXIT_ERROR;
		goto done;
	}
	for (;;) {
		bool quiet, reached;

		rc = device_round(&d, &quiet, &reached);
		/* damage SQLite met on the way: the next round takes a snapshot */
		if (rc != EXIT_OK && d.damaged == NULL && mirror_damage_seen() != NULL &&
		    d.m != NULL && !replicate_stopping()) {
			d.damaged = xasprintf("mirror damaged: %s", mirror_damage_seen());
			feed_link_forget(d.src);
			rc = device_round(&d, &quiet, &reached);
		}
		if (!continuous || reached || replicate_stopping())
			break;
		if (rc != EXIT_OK)
			log_warning("reading the feed again in %d s", DEVICE_POLL_SECS);
		else if (!quiet)
			notify_ready();
		notify_alive();
		for (int i = 0; i < DEVICE_POLL_SECS * 10 && !replicate_stopping(); i++)
			usleep(100000);
		if (replicate_stopping()) {
			rc = EXIT_OK;
			break;
		}
	}
	if (rc != EXIT_OK && d.m != NULL) {
		const char *last = log_last_error();

		if (last != NULL && !mirror_note_error(d.m, last))
			log_warning("%s", mirror_error(d.m));
	}
done:
	if (d.have_man)
		feed_manifest_free(&d.man);
	device_forget(&d);
	if (d.damaged != NULL)
		mirror_close_as_is(d.m);
	else
		mirror_close(d.m);
	free(d.damaged);
	feed_link_free(d.src);
	free(work);
	free(err);
	return rc;
}

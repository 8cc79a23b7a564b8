/*
 * status_prom.c: --status --prometheus, the mirror's state in Prometheus'
 * text exposition format (version 0.0.4), for node_exporter's textfile
 * collector: each metric with its # HELP and # TYPE, then its samples,
 * every one labelled slot="..." (a device of a feed: feed="URL") so that
 * the mirrors of one host, and the devices of a fleet, stay apart. All
 * are gauges.
 *
 * Times are Unix seconds; a time never reached (no sync yet, no check, no
 * rebuild, no error) is 0, so that "time() - pgmirror_last_sync_timestamp_seconds
 * > 7200" also fires for a mirror that never got in sync. A figure not known
 * (the lag before the first sync, the check's result before the first
 * check) is NaN, which compares false in any alert.
 *
 * Label values are escaped as the format asks (backslash, double quote,
 * newline); bytes that are not UTF-8 (the format is UTF-8) become U+FFFD.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "status_internal.h"

/* the states a table can be in, each printed even when no table is in it,
 * so that an alert's series is there before it fires */
static const char *const table_states[] = {"synced", "waiting", "copying", "pending"};

/* A label value, escaped. */
static void label_value(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), len;

	putchar('"');
	for (size_t i = 0; i < n; i += len) {
		len = utf8_char_length(s + i, n - i);
		if (len == 0) {
			fputs("\xef\xbf\xbd", stdout);
			len = 1;
		} else if (s[i] == '\\' || s[i] == '"')
			printf("\\%c", s[i]);
		else if (s[i] == '\n')
			fputs("\\n", stdout);
		else
			fwrite(s + i, 1, len, stdout);
	}
	putchar('"');
}

static void metric_head(const char *name, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* The label that names the mirror: slot="..." (feed="URL" on a device). */
static const char *ident_label = "slot";

/* One sample of name: slot="...", then one more label when label is set. */
static void sample_begin(const char *name, const char *slot, const char *label,
			 const char *value)
{
	printf("%s{%s=", name, ident_label);
	label_value(slot);
	if (label != NULL) {
		printf(",%s=", label);
		label_value(value);
	}
	putchar('}');
}

static void sample_double(const char *name, const char *slot, double v, bool known)
{
	sample_begin(name, slot, NULL, NULL);
	/* the format's words for what printf writes as nan and inf */
	if (!known || isnan(v))
		fputs(" NaN\n", stdout);
	else if (isinf(v))
		fputs(v > 0 ? " +Inf\n" : " -Inf\n", stdout);
	else
		printf(" %.17g\n", v);
}

/* A metric of one sample: a time (UTC text) as Unix seconds, 0 when NULL. */
static void time_metric(const char *name, const char *help, const char *slot,
			const char *when)
{
	double secs = 0;
	/* a stored time that cannot be read is not known; read before secs is
	 * passed: the order in which a call's arguments are evaluated is the
	 * compiler's (clang read secs first, so every time printed 0) */
	bool known = when == NULL || pgtime_parse_utc(when, &secs);

	metric_head(name, help);
	sample_double(name, slot, secs, known);
}

/* The number of tables in state. */
static void state_sample(const char *slot, const char *state, const TableStatus *t, int n)
{
	int count = 0;

	for (int i = 0; i < n; i++)
		count += strcmp(t[i].state, state) == 0;
	sample_begin("pgmirror_tables", slot, "state", state);
	printf(" %d\n", count);
}

void status_prom_print(const MirrorState *st, const MirrorHealth *h, const FeedStatus *fs,
		       const TableStatus *t, int n)
{
	const char *slot = fs->device ? fs->location : st->slot;

	ident_label = fs->device ? "feed" : "slot";

	metric_head("pgmirror_info", "pgmirror's version, always 1");
	sample_begin("pgmirror_info", slot, "version", PACKAGE_VERSION);
	fputs(" 1\n", stdout);
	time_metric("pgmirror_last_sync_timestamp_seconds",
		    "When a run last knew the mirror held all the source had committed (0: never)",
		    slot, h->last_sync_time);
	metric_head("pgmirror_lag_seconds",
		    "How far the mirror was behind the source's last commit at the last sync");
	sample_double("pgmirror_lag_seconds", slot, h->lag_seconds, h->has_lag);
	metric_head("pgmirror_lag_bytes",
		    "The source's WAL end minus the mirror's confirmed position at the last sync");
	sample_double("pgmirror_lag_bytes", slot, (double)h->lag_bytes, h->has_lag);
	metric_head("pgmirror_confirmed_lsn",
		    "The source position everything up to which is in the mirror, as a number");
	sample_begin("pgmirror_confirmed_lsn", slot, NULL, NULL);
	printf(" %" PRIu64 "\n", (uint64_t)st->confirmed_lsn);
	time_metric("pgmirror_last_commit_timestamp_seconds",
		    "The source commit time of the last transaction applied (0: none yet)", slot,
		    st->last_commit_time);
	metric_head("pgmirror_initial_copy_done", "1 once the first run's copy is complete");
	sample_double("pgmirror_initial_copy_done", slot, st->initial_copy_done, true);
	time_metric("pgmirror_last_error_timestamp_seconds",
		    "When the last run failed (0: the last run succeeded)", slot,
		    h->last_error_time);
	time_metric("pgmirror_last_check_timestamp_seconds",
		    "When SQLite's integrity check last ran on the mirror (0: never)", slot,
		    h->last_check_time);
	metric_head("pgmirror_last_check_ok",
		    "1 when the last integrity check found the mirror sound, 0 when not");
	sample_double("pgmirror_last_check_ok", slot,
		      h->last_check_result && strcmp(h->last_check_result, "ok") == 0,
		      h->last_check_result != NULL);
	time_metric("pgmirror_last_rebuild_timestamp_seconds",
		    "When the mirror was last rebuilt from a fresh copy (0: never)", slot,
		    h->last_rebuild_time);
	if (fs->device) {
		metric_head("pgmirror_feed_end_lsn",
			    "The feed's end position when the device last read its manifest");
		sample_double("pgmirror_feed_end_lsn", slot, (double)fs->end_lsn, fs->has_end);
		time_metric("pgmirror_feed_read_timestamp_seconds",
			    "When the device last read the feed's manifest (0: never)", slot,
			    fs->read_time);
	}
	metric_head("pgmirror_tables", "The mirror's tables in each state");
	for (size_t s = 0; s < sizeof table_states / sizeof table_states[0]; s++)
		state_sample(slot, table_states[s], t, n);
	/* and any other state, once */
	for (int i = 0; i < n; i++) {
		bool seen = false;

		for (size_t s = 0; s < sizeof table_states / sizeof table_states[0]; s++)
			seen = seen || strcmp(t[i].state, table_states[s]) == 0;
		for (int j = 0; j < i; j++)
			seen = seen || strcmp(t[i].state, t[j].state) == 0;
		if (!seen)
			state_sample(slot, t[i].state, t, n);
	}
	metric_head("pgmirror_table_rows", "Rows in each mirror table");
	for (int i = 0; i < n; i++) {
		if (t[i].rows < 0)
			continue; /* no mirror table: it waits */
		sample_begin("pgmirror_table_rows", slot, "table", t[i].name);
		printf(" %" PRId64 "\n", t[i].rows);
	}
	metric_head("pgmirror_table_generation",
		    "Changes whenever pgmirror replaces a table's rows without applying changes");
	for (int i = 0; i < n; i++) {
		if (t[i].rows < 0 || t[i].generation < 0)
			continue; /* it waits, or is set aside (mirror_stage.h) */
		sample_begin("pgmirror_table_generation", slot, "table", t[i].name);
		printf(" %" PRId64 "\n", t[i].generation);
	}
}

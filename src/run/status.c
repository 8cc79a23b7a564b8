/*
 * status.c: --status, the mirror's state read from the file alone.
 *
 * The output is one "key: value" per line, stable for scripts; each table
 * is a line "table: ROWS NAME" (the name last, as it may hold spaces),
 * and a table still copying in parts a line "copying: STORED ESTIMATE
 * NAME" after it (the rows its copy stored, the source's estimate of its
 * rows or "-"); control characters and backslashes in values are escaped
 * (text_value).
 * --json prints the same as one JSON object, with each table's generation
 * (RFC 8259: strings escaped, bytes that are not UTF-8 as U+FFFD, what is
 * not known as null), for a fleet's monitoring; --prometheus in
 * Prometheus' text format (status_prom.c). A table that waits
 * (pgmirror_waiting) is shown with its state, why and since when; one a
 * sync is still to copy and has not begun (pgmirror_pending) as
 * "pending", with the source's estimate of its rows.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pgmirror/copy_ranges.h"
#include "pgmirror/mirror.h"
#include "pgmirror/mirror_pending.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/mirror_waiting.h"
#include "pgmirror/naming.h"
#include "pgmirror/replicate.h" /* the exit codes */
#include "pgmirror/status.h"
#include "status_internal.h"

/* text as a JSON string, or null. */
static void json_string(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n, len;

	if (text == NULL) {
		fputs("null", stdout);
		return;
	}
	n = strlen(text);
	putchar('"');
	for (size_t i = 0; i < n; i += len) {
		len = utf8_char_length(s + i, n - i);
		if (len == 0) {
			fputs("\\ufffd", stdout);
			len = 1;
		} else if (s[i] == '"' || s[i] == '\\')
			printf("\\%c", s[i]);
		else if (s[i] < 0x20 || s[i] == 0x7f)
			printf("\\u%04x", s[i]);
		else
			fwrite(s + i, 1, len, stdout);
	}
	putchar('"');
}

/* v as a JSON number; null when it is none (JSON has no NaN or Infinity) */
static void json_double(double v, bool known)
{
	if (known && isfinite(v))
		printf("%.3f", v);
	else
		fputs("null", stdout);
}

static void json_key(const char *key, bool first)
{
	printf("%s\n  ", first ? "{" : ",");
	json_string(key);
	fputs(": ", stdout);
}

static void json_field(const char *key, const char *value)
{
	json_key(key, false);
	json_string(value);
}

/* The head of an entry of "tables" for a published table without a
 * mirror table of its own: its name, source, no rows, and state. */
static void json_unmirrored(const char *schema, const char *table, const char *state, bool first)
{
	char *name = naming_table(schema, table);
	char *source = xasprintf("%s.%s", schema, table);

	fputs(first ? "\n    {\"name\": " : ",\n    {\"name\": ", stdout);
	json_string(name);
	fputs(", \"source\": ", stdout);
	json_string(source);
	fputs(", \"rows\": null, \"generation\": null, \"state\": ", stdout);
	json_string(state);
	free(name);
	free(source);
}

/* The waiting tables (pgmirror_waiting), after the mirror's in "tables":
 * state "waiting", no rows, the reason and since when. */
static void json_waiting(const MirrorWaiting *w, int nw, bool first)
{
	for (int i = 0; i < nw; i++) {
		json_unmirrored(w[i].source_schema, w[i].source_table, "waiting", first && i == 0);
		fputs(", \"reason\": ", stdout);
		json_string(w[i].reason);
		fputs(", \"since\": ", stdout);
		json_string(w[i].since);
		putchar('}');
	}
}

/* The tables a sync has still to copy (pgmirror_pending), last: state
 * "pending", no rows, the copy's rows 0 of the source's estimate. */
static void json_pending(const MirrorPending *p, int np, bool first)
{
	for (int i = 0; i < np; i++) {
		json_unmirrored(p[i].source_schema, p[i].source_table, "pending", first && i == 0);
		fputs(", \"copy\": {\"rows\": 0, \"estimated_rows\": ", stdout);
		if (p[i].estimate >= 0)
			printf("%" PRId64 "}}", p[i].estimate);
		else
			fputs("null}}", stdout);
	}
}

/* "feed": what the mirror writes (a hub) or reads (a device) */
static void json_feed(const FeedStatus *fs)
{
	char lsn[LSN_TEXT_SIZE];

	json_key("feed", false);
	fputs(fs->device ? "{\"url\": " : "{\"directory\": ", stdout);
	json_string(fs->location);
	fputs(", \"end_lsn\": ", stdout);
	if (fs->has_end)
		json_string(lsn_format(fs->end_lsn, lsn));
	else
		fputs("null", stdout);
	if (fs->hub) {
		fputs(", \"snapshot\": ", stdout);
		json_string(fs->snapshot);
		fputs("}", stdout);
		return;
	}
	fputs(", \"end_time\": ", stdout);
	json_string(fs->end_time);
	fputs(", \"read_time\": ", stdout);
	json_string(fs->read_time);
	fputs(", \"lag_bytes\": ", stdout);
	if (fs->has_lag)
		printf("%" PRId64, fs->lag_bytes);
	else
		fputs("null", stdout);
	fputs(", \"lag_seconds\": ", stdout);
	json_double(fs->lag_seconds, fs->has_lag);
	fputs("}", stdout);
}

static void print_json(const char *path, const MirrorState *st, const MirrorHealth *h,
		       const FeedStatus *fs, const TableStatus *t, int n, const MirrorWaiting *w,
		       int nw, const MirrorPending *p, int np)
{
	char lsn[LSN_TEXT_SIZE];

	json_key("mirror", true);
	json_string(path);
	if (!fs->device)
		json_field("slot", st->slot);
	if (fs->device || fs->hub)
		json_feed(fs);
	json_field("publications", st->publications); /* as --status: "a,b" */
	json_field("system_identifier", st->system_identifier);
	json_field("database", st->database);
	json_field("confirmed_lsn", lsn_format(st->confirmed_lsn, lsn));
	json_field("last_commit_time", st->last_commit_time);
	json_field("initial_copy", st->initial_copy_done ? "done" : "incomplete");
	json_field("last_sync_time", h->last_sync_time);
	json_key("last_sync_lag_bytes", false);
	if (h->has_lag)
		printf("%" PRId64, h->lag_bytes);
	else
		fputs("null", stdout);
	json_key("last_sync_lag_seconds", false);
	json_double(h->lag_seconds, h->has_lag);
	json_field("last_check_time", h->last_check_time);
	json_field("last_check_result", h->last_check_result);
	json_field("last_rebuild_time", h->last_rebuild_time);
	json_field("last_rebuild_reason", h->last_rebuild_reason);
	json_field("last_error", h->last_error);
	json_field("last_error_time", h->last_error_time);
	json_key("tables", false);
	fputs(n + nw + np ? "[" : "[]", stdout);
	for (int i = 0; i < n; i++) {
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", stdout);
		json_string(t[i].name);
		printf(", \"rows\": %" PRId64 ", \"generation\": ", t[i].rows);
		if (t[i].generation >= 0)
			printf("%" PRId64 ", \"state\": ", t[i].generation);
		else
			fputs("null, \"state\": ", stdout); /* set aside: mirror_stage.h */
		json_string(t[i].state);
		if (!t[i].copying && !t[i].pending)
			fputs(", \"copy\": null}", stdout);
		else if (t[i].copy_estimate < 0)
			printf(", \"copy\": {\"rows\": %" PRId64 ", \"estimated_rows\": null}}",
			       t[i].copy_rows);
		else
			printf(", \"copy\": {\"rows\": %" PRId64 ", \"estimated_rows\": %" PRId64
			       "}}", t[i].copy_rows, t[i].copy_estimate);
	}
	json_waiting(w, nw, n == 0);
	json_pending(p, np, n + nw == 0);
	fputs(n + nw + np ? "\n  ]\n}\n" : "\n}\n", stdout);
}

/*
 * text as one line of --status, whatever a name or a stored text holds (a
 * newline in a quoted source name would forge a line): a control
 * character as \n, \r, \t or \xNN, and so a backslash as \\.
 */
static void text_value(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; p != NULL && *p != '\0'; p++) {
		if (*p == '\\' || *p == '\n' || *p == '\r' || *p == '\t')
			printf("\\%c", *p == '\n' ? 'n' : *p == '\r' ? 'r' : *p == '\t' ? 't' : '\\');
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
	}
}

/* "key: value" (value escaped; NULL as empty) */
static void text_field(const char *key, const char *value)
{
	printf("%s: ", key);
	text_value(value);
	putchar('\n');
}

/* The waiting tables in --status's text, after the table lines: three
 * lines each, the name first (escaped as every value is). */
static void text_waiting(const MirrorWaiting *w, int nw)
{
	for (int i = 0; i < nw; i++) {
		char *name = xasprintf("%s.%s", w[i].source_schema, w[i].source_table);

		text_field("waiting", name);
		text_field("waiting_since", w[i].since);
		text_field("waiting_reason", w[i].reason);
		free(name);
	}
}

/* feed: the URL a device reads (in place of the hub's slot), or the
 * directory a hub writes; the feed's end, and a device's lag behind it */
static void text_feed(const FeedStatus *fs)
{
	char lsn[LSN_TEXT_SIZE];

	if (!fs->device && !fs->hub)
		return;
	text_field("feed", fs->location);
	text_field("feed_end_lsn", fs->has_end ? lsn_format(fs->end_lsn, lsn) : NULL);
	if (fs->hub) {
		text_field("feed_snapshot", fs->snapshot);
		return;
	}
	text_field("feed_end_time", fs->end_time);
	text_field("feed_read_time", fs->read_time);
	if (fs->has_lag)
		printf("feed_lag_bytes: %" PRId64 "\nfeed_lag_seconds: %.3f\n", fs->lag_bytes,
		       fs->lag_seconds);
	else
		printf("feed_lag_bytes: \nfeed_lag_seconds: \n");
}

static void print_text(const char *path, const MirrorState *st, const MirrorHealth *h,
		       const FeedStatus *fs, const TableStatus *t, int n, const MirrorWaiting *w,
		       int nw, const MirrorPending *p, int np)
{
	char lsn[LSN_TEXT_SIZE];
	int npend = 0; /* tables set aside whose copy again has not begun */

	text_field("mirror", path);
	if (!fs->device)
		text_field("slot", st->slot);
	text_feed(fs);
	text_field("publications", st->publications);
	text_field("system_identifier", st->system_identifier);
	text_field("database", st->database);
	text_field("confirmed_lsn", lsn_format(st->confirmed_lsn, lsn));
	text_field("last_commit_time", st->last_commit_time);
	text_field("initial_copy", st->initial_copy_done ? "done" : "incomplete");
	text_field("last_sync_time", h->last_sync_time);
	if (h->has_lag)
		printf("last_sync_lag_bytes: %" PRId64 "\nlast_sync_lag_seconds: %.3f\n",
		       h->lag_bytes, h->lag_seconds);
	else
		printf("last_sync_lag_bytes: \nlast_sync_lag_seconds: \n");
	text_field("last_check_time", h->last_check_time);
	text_field("last_check_result", h->last_check_result);
	text_field("last_rebuild_time", h->last_rebuild_time);
	text_field("last_rebuild_reason", h->last_rebuild_reason);
	text_field("last_error", h->last_error);
	text_field("last_error_time", h->last_error_time);
	for (int i = 0; i < n; i++)
		npend += t[i].pending ? 1 : 0;
	printf("tables: %d\ntables_waiting: %d\ntables_pending: %d\n", n - npend, nw, np + npend);
	for (int i = 0; i < n; i++) {
		char est[32] = "-";

		printf("table: %" PRId64 " ", t[i].rows);
		text_value(t[i].name);
		putchar('\n');
		if (t[i].copy_estimate >= 0)
			snprintf(est, sizeof(est), "%" PRId64, t[i].copy_estimate);
		if (t[i].copying)
			printf("copying: %" PRId64 " %s ", t[i].copy_rows, est);
		else if (t[i].pending)
			printf("pending: %s ", est);
		if (t[i].copying || t[i].pending) {
			text_value(t[i].name);
			putchar('\n');
		}
	}
	text_waiting(w, nw);
	/* the tables not begun: "pending: ESTIMATE NAME", as a copying line */
	for (int i = 0; i < np; i++) {
		char *name = naming_table(p[i].source_schema, p[i].source_table);

		if (p[i].estimate >= 0)
			printf("pending: %" PRId64 " ", p[i].estimate);
		else
			fputs("pending: - ", stdout);
		text_value(name);
		putchar('\n');
		free(name);
	}
}

/* --prometheus, the waiting tables counted in pgmirror_tables{state="waiting"}
 * (they have no rows of their own: rows -1). */
static void prom_print(const MirrorState *st, const MirrorHealth *h, const FeedStatus *fs,
		       const TableStatus *t, int n, const MirrorWaiting *w, int nw,
		       const MirrorPending *p, int np)
{
	TableStatus *all = xcalloc((size_t)n + (size_t)nw + (size_t)np + 1, sizeof(TableStatus));

	memcpy(all, t, (size_t)n * sizeof(TableStatus));
	for (int i = 0; i < nw; i++)
		all[n + i] = (TableStatus){.name = naming_table(w[i].source_schema,
								 w[i].source_table),
					   .rows = -1, .generation = -1, .state = "waiting"};
	/* and those not begun, counted in pgmirror_tables{state="pending"} */
	for (int i = 0; i < np; i++)
		all[n + nw + i] = (TableStatus){.name = naming_table(p[i].source_schema,
								      p[i].source_table),
						.rows = -1, .generation = -1, .state = "pending"};
	status_prom_print(st, h, fs, all, n + nw + np);
	for (int i = n; i < n + nw + np; i++)
		free(all[i].name);
	free(all);
}

/* How far t's copy in parts got, when it has not reached its end: its
 * state is then "copying". */
static bool copy_progress(Mirror *m, TableStatus *t)
{
	MirrorTableInfo info;
	bool found;

	if (!mirror_table_by_name(m, t->name, &found, &info))
		return false;
	t->copying = found && copy_state_unfinished(info.copy_state);
	t->copy_rows = info.copy_rows;
	t->copy_estimate = info.copy_estimate;
	if (t->copying)
		t->state = "copying";
	mirror_table_info_clear(&info);
	return true;
}

/*
 * The tables copied again behind the readers' backs (mirror_stage.h), as
 * readers see them: under the old table's name, with its rows, copying
 * (its staged table's progress) or, not begun, pending (with the source's
 * estimate from p, whose entry goes); those not begun are added to *t and
 * names (*n grows). One not begun that waits (its copy met a value, and
 * it keeps its old rows meanwhile) is listed as waiting (w) only.
 */
static bool staged_view(Mirror *m, TableStatus **t, char ***names, int *n, MirrorPending *p,
			int *np, const MirrorWaiting *w, int nw)
{
	MirrorStaged *s = NULL;
	int ns = 0;
	bool ok = mirror_stage_list(m, &s, &ns);

	*t = xreallocarray(*t, (size_t)*n + (size_t)ns + 1, sizeof(TableStatus));
	*names = xreallocarray(*names, (size_t)*n + (size_t)ns + 1, sizeof(char *));
	for (int k = 0; ok && k < ns; k++) {
		bool waits = false;
		int i = 0;

		for (int j = 0; j < nw && s[k].staged == NULL; j++)
			waits = waits || w[j].relation_oid == s[k].relation_oid;
		if (waits)
			continue;
		while (i < *n && (s[k].staged == NULL || strcmp((*t)[i].name, s[k].staged) != 0))
			i++;
		if (i == *n) {
			(*names)[(*n)++] = NULL;
			(*t)[i] = (TableStatus){.state = "pending", .pending = true,
						.copy_estimate = -1};
		}
		for (int j = 0; j < *np; j++) {
			if (p[j].relation_oid != s[k].relation_oid)
				continue;
			(*t)[i].copy_estimate = (*t)[i].copying ? (*t)[i].copy_estimate : p[j].estimate;
			free(p[j].source_schema);
			free(p[j].source_table);
			p[j--] = p[--*np];
		}
		free((*names)[i]);
		(*names)[i] = xstrdup(s[k].old_name);
		(*t)[i].name = (*names)[i];
		(*t)[i].generation = -1;
		ok = mirror_count_rows(m, s[k].old_name, &(*t)[i].rows);
	}
	mirror_stage_list_free(s, ns);
	return ok;
}

/* What stopped the reading; for damage (SQLite's, or a value in pgmirror's
 * own tables that pgmirror never writes), what mends it. */
static void log_read_error(Mirror *m)
{
	if (mirror_damage_seen() != NULL)
		log_error("%s; pgmirror --check records it, and the next run of pgmirror then sets "
			  "the file aside and rebuilds it from a fresh copy", mirror_error(m));
	else
		log_error("%s", mirror_error(m));
}

int status_print(const char *mirror_path, StatusFormat format)
{
	Mirror *m = NULL;
	MirrorState st = {0};
	MirrorHealth h = {0};
	MirrorFeedState row = {0};
	FeedStatus fs = {0};
	TableStatus *t = NULL;
	MirrorWaiting *w = NULL;
	MirrorPending *p = NULL;
	char *err = NULL, **names = NULL;
	int n = 0, nw = 0, np = 0, rc = EXIT_ERROR;
	struct stat sb;
	MirrorOpenResult r;

	if (stat(mirror_path, &sb) != 0) {
		log_error("mirror \"%s\" does not exist; give the path of an existing mirror file",
			  mirror_path);
		return EXIT_ERROR;
	}
	r = mirror_open(mirror_path, MIRROR_READ, &m, &err);
	if (r != MIRROR_OPEN_OK) {
		log_error("%s", err);
		free(err);
		return r == MIRROR_OPEN_LOCKED ? EXIT_IN_USE : EXIT_ERROR;
	}
	/* one read transaction: a table the writer drops meanwhile is still
	 * there to count, and every count is of the same moment */
	if (!mirror_begin_read(m) || !mirror_read_state(m, &st) || !mirror_read_health(m, &h) ||
	    !mirror_list_tables(m, &names, &n) || !mirror_waiting_list(m, &w, &nw) ||
	    !mirror_pending_list(m, &p, &np)) {
		log_read_error(m);
		goto done;
	}
	if (!st.present) {
		log_error("mirror \"%s\" has no state yet: its first run did not get far",
			  mirror_path);
		goto done;
	}
	/* everything read before anything is printed: no half output */
	t = xcalloc((size_t)n + 1, sizeof(*t));
	for (int i = 0; i < n; i++) {
		t[i].name = names[i];
		t[i].state = "synced"; /* every table pgmirror_tables lists */
		if (!mirror_count_rows(m, names[i], &t[i].rows) ||
		    !mirror_table_generation(m, names[i], &t[i].generation) ||
		    !copy_progress(m, &t[i])) {
			log_read_error(m);
			goto done;
		}
	}
	if (!staged_view(m, &t, &names, &n, p, &np, w, nw)) {
		log_read_error(m);
		goto done;
	}
	if (!status_feed_read(m, &st, &row, &fs)) {
		log_read_error(m);
		goto done;
	}
	if (format == STATUS_JSON)
		print_json(mirror_path, &st, &h, &fs, t, n, w, nw, p, np);
	else if (format == STATUS_PROMETHEUS)
		prom_print(&st, &h, &fs, t, n, w, nw, p, np);
	else
		print_text(mirror_path, &st, &h, &fs, t, n, w, nw, p, np);
	rc = EXIT_OK;
done:
	free(t);
	strv_free(names, n);
	mirror_waiting_free(w, nw);
	mirror_pending_free(p, np);
	mirror_health_clear(&h);
	status_feed_clear(&fs);
	mirror_feed_state_clear(&row);
	mirror_state_clear(&st);
	mirror_close(m);
	return rc;
}

/*
 * copy.c: the initial copy, from COPY rows to rows in the mirror.
 *
 * Two threads share each table's copy. The reader alone uses the source
 * connection: it takes each CopyData message (session_copy_next()),
 * splits the row into its fields, converts its values (with the column
 * types the applier decided) and packs them into a batch. A table whose
 * every column reads the same in binary format (values_binary_supported())
 * is copied in it (copy_binary_row(), values_convert_binary()): the server
 * then writes no text, and the reader parses none. Any other table is
 * copied in text format (copy_parse_row(), values_convert()). The
 * writer (the caller's thread) alone uses SQLite: it inserts the rows of
 * each full batch (apply_insert_rows()). The batches are a ring of
 * NBATCHES reused buffers, each of at most BATCH_ROWS rows, BATCH_VALUES
 * values or about BATCH_BYTES of them (or one row bigger), so memory stays
 * bounded whatever the table's size and nothing is allocated per row once
 * the buffers are warm. Either side's error or a stop ends both: the writer
 * raises the cancel flag, which the reader sees (also while it waits on the
 * server: the session's stop check), and joins it before it returns. A
 * table copied in parts (copy_parts.c) is read in key order, and the
 * writer calls that module's hook after each batch, which may commit a
 * part and begin the next.
 *
 * What the copy's transaction writes besides the rows (the tables'
 * definitions in pgmirror_tables and pgmirror_columns, their sync LSNs) is
 * written before the first row. The rows soon push those pages out of
 * SQLite's cache into the WAL; a page written there once and then again
 * in the same transaction makes the commit read back every WAL frame
 * written after its first copy, to checksum them again (for one table of
 * a million rows: 20,000 reads and 20,000 writes more, 0.05 s of 1.15).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pgmirror/notify.h"
#include "pgmirror/copy.h"
#include "pgmirror/copy_binary.h"
#include "pgmirror/copy_text.h"
#include "copy_internal.h"


/*
 * The session's stop check during a copy: the writer giving up. The
 * copier's own stopping (which may answer the server on another
 * connection, as a table sync's does) runs on the writer's thread alone,
 * which then gives up. The check takes no argument, so this flag is the
 * process's: one copy runs at a time.
 */
static atomic_bool reader_cancel;

static bool reader_stop_check(void)
{
	return atomic_load(&reader_cancel);
}

Copier *copy_new(Session *s, Applier *a, bool (*stopping)(void))
{
	Copier *c = xcalloc(1, sizeof(*c));
	pthread_condattr_t attr;

	c->s = s;
	c->a = a;
	c->stopping = stopping;
	pthread_mutex_init(&c->rd.mu, NULL);
	/* the writer's waits for rows are timed on this clock */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->rd.filled, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&c->rd.freed, NULL);
	return c;
}

void copy_free(Copier *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < NBATCHES; i++) {
		free(c->rd.batches[i].vals);
		free(c->rd.batches[i].offs);
		free(c->rd.batches[i].data);
	}
	for (int i = 0; i < c->ncols_cap; i++)
		values_buf_free(&c->rd.scratch[i]);
	free(c->rd.scratch);
	free(c->rd.fields);
	pthread_cond_destroy(&c->rd.freed);
	pthread_cond_destroy(&c->rd.filled);
	pthread_mutex_destroy(&c->rd.mu);
	free(c);
}

const char *copy_error(const Copier *c)
{
	return c->err.text;
}

bool copy_failed_on_value(const Copier *c)
{
	return c->bad_value;
}

/* --- feeding the applier ------------------------------------------------ */

bool copy_feed(Copier *c, const PgoMessage *msg)
{
	if (!apply_message(c->a, msg)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	return true;
}

void copy_relation_message(const SourceTable *t, PgoColumn *cols, PgoMessage *msg)
{
	for (int i = 0; i < t->ncols; i++) {
		const SourceColumn *sc = &t->cols[i];

		cols[i].flags = sc->is_key ? PGO_COLUMN_KEY : 0;
		cols[i].name = sc->name;
		cols[i].type_oid = sc->type_oid;
		cols[i].type_mod = sc->type_mod;
	}
	memset(msg, 0, sizeof(*msg));
	msg->type = PGO_RELATION;
	msg->u.relation.oid = t->oid;
	msg->u.relation.nspname = t->nspname;
	msg->u.relation.relname = t->relname;
	msg->u.relation.replident = t->replident;
	msg->u.relation.ncols = (uint16_t)t->ncols;
	msg->u.relation.cols = cols;
}

/* The Relation message pgoutput would send for t. (Types that are not
 * built in the applier asks of the catalog itself.) */
static bool describe_table(Copier *c, const SourceTable *t)
{
	PgoMessage msg;
	PgoColumn *cols = xcalloc(t->ncols > 0 ? (size_t)t->ncols : 1, sizeof(PgoColumn));
	bool ok;

	copy_relation_message(t, cols, &msg);
	ok = copy_feed(c, &msg);
	free(cols);
	return ok;
}

/* True, with the error set, when a signal asked pgmirror to stop. */
bool copy_stopped(Copier *c, const SourceTable *t)
{
	if (c->stopping == NULL || !c->stopping())
		return false;
	errbuf_set(&c->err, "stopped by a signal during the initial copy of \"%s.%s\"", t->nspname,
		  t->relname);
	return true;
}

/* --- the reader thread -------------------------------------------------- */

/* Room in b for n more bytes of values. */
static void batch_reserve(Batch *b, size_t n)
{
	size_t cap = b->cap == 0 ? BATCH_BYTES + BATCH_BYTES / 4 : b->cap;

	if (n <= b->cap - b->len)
		return;
	while (cap - b->len < n)
		cap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX; /* xreallocarray says when too big */
	b->data = xreallocarray(b->data, cap, 1);
	b->cap = cap;
}

/*
 * Converts one COPY message into the next row of b: 1 when it added the
 * row, 0 when the message held none (binary format's trailer), -1 with
 * rd->err set when it is malformed or a value cannot be stored, as the
 * applier would say for an Insert of it.
 */
static int batch_add_row(Reader *rd, Batch *b, char *row, size_t len)
{
	const SourceTable *t = rd->t;
	size_t first = (size_t)b->nrows * (size_t)t->ncols;
	char err[256];
	int r = rd->binary ? copy_binary_row(&rd->bin, row, len, rd->fields, t->ncols, err,
					     sizeof(err)) :
		copy_parse_row(row, len, rd->fields, t->ncols, err, sizeof(err)) ? 1 : -1;

	if (r < 0)
		errbuf_set(&rd->err, "malformed COPY row %" PRIu64 " of table \"%s.%s\": %s",
			   rd->rows + 1, t->nspname, t->relname, err);
	if (r <= 0)
		return r;
	for (int i = 0; i < t->ncols; i++) {
		const PgoValue *f = &rd->fields[i];
		Value *v = &b->vals[first + (size_t)i];

		if (f->kind == PGO_COL_NULL) {
			v->kind = VAL_NULL;
			continue;
		}
		if (!(rd->binary ?
		      values_convert_binary(t->cols[i].type_oid, rd->types[i], rd->server_version,
					    (const char *)f->data, f->len, &rd->scratch[i], v, err,
					    sizeof(err)) :
		      values_convert(rd->types[i], (const char *)f->data, f->len, &rd->scratch[i], v,
				     err, sizeof(err)))) {
			errbuf_set(&rd->err, "could not apply Insert to \"%s.%s\": column \"%s\": %s",
				   t->nspname, t->relname, t->cols[i].name, err);
			rd->bad_value = true;
			return -1;
		}
		if (v->kind == VAL_TEXT || v->kind == VAL_BLOB) {
			/* the row's buffer and the scratch are reused: keep a copy */
			batch_reserve(b, v->len);
			memcpy(b->data + b->len, v->p, v->len);
			b->offs[first + (size_t)i] = b->len;
			b->len += v->len;
		}
		if (rd->scratch[i].cap > VALUES_BUF_KEEP)
			values_buf_trim(&rd->scratch[i]);
	}
	b->nrows++;
	rd->rows++;
	return 1;
}

/* Fills b with rows; returns 1 when the COPY goes on, 0 when it ended well
 * (b may hold its last rows), -1 on an error (rd->err, rd->stopped). */
static int batch_fill(Copier *c, Batch *b)
{
	Reader *rd = &c->rd;
	int nrows = rd->t->ncols > 0 ? BATCH_VALUES / rd->t->ncols : BATCH_ROWS;
	size_t nvals;

	nrows = nrows < 1 ? 1 : nrows > BATCH_ROWS ? BATCH_ROWS : nrows;
	nvals = (size_t)nrows * (size_t)rd->t->ncols;

	b->nrows = 0;
	b->len = 0;
	if (b->cap > 4 * BATCH_BYTES) { /* a huge value made it big */
		free(b->data);
		b->data = NULL;
		b->cap = 0;
	}
	/* even a batch of empty strings points into it: never at NULL */
	if (b->data == NULL)
		batch_reserve(b, 1);
	if (b->nvals_cap < nvals) {
		b->vals = xreallocarray(b->vals, nvals, sizeof(Value));
		b->offs = xreallocarray(b->offs, nvals, sizeof(size_t));
		b->nvals_cap = nvals;
	}
	while (b->nrows < nrows && b->len < BATCH_BYTES) {
		char *row;
		size_t len;
		int r = session_copy_next(c->s, &row, &len);

		if (r < 0) {
			rd->stopped = session_error_stopped(c->s);
			errbuf_set(&rd->err, "%s", session_error(c->s));
			return -1;
		}
		if (r == 0)
			break;
		if (batch_add_row(rd, b, row, len) < 0)
			return -1;
	}
	/* data is complete: now its address holds */
	for (size_t k = 0; k < (size_t)b->nrows * (size_t)rd->t->ncols; k++)
		if (b->vals[k].kind == VAL_TEXT || b->vals[k].kind == VAL_BLOB)
			b->vals[k].p = b->data + b->offs[k];
	return b->nrows == nrows || b->len >= BATCH_BYTES ? 1 : 0;
}

/*
 * No free batch, or the filled ones hold what NBATCHES full ones would:
 * rows of huge values then wait in one batch at a time, so the memory
 * stays about twice the biggest row.
 */
static bool reader_must_wait(const Reader *rd)
{
	return !atomic_load(&reader_cancel) &&
	       (rd->nfilled == NBATCHES ||
		(rd->nfilled > 0 && rd->filled_bytes >= NBATCHES * BATCH_BYTES));
}

static void *reader_main(void *arg)
{
	Copier *c = arg;
	Reader *rd = &c->rd;
	int64_t cpu = thread_cpu_usecs();
	int r = 1;

	while (r > 0) {
		Batch *b;

		pthread_mutex_lock(&rd->mu);
		if (reader_must_wait(rd)) {
			int64_t t0 = mono_usecs();

			while (reader_must_wait(rd))
				pthread_cond_wait(&rd->freed, &rd->mu);
			rd->waited_room += mono_usecs() - t0;
		}
		b = &rd->batches[(rd->head + rd->nfilled) % NBATCHES];
		pthread_mutex_unlock(&rd->mu);
		if (atomic_load(&reader_cancel))
			break;
		/* the batch is the reader's until it is counted as filled */
		r = batch_fill(c, b);
		pthread_mutex_lock(&rd->mu);
		if (r >= 0 && b->nrows > 0) {
			rd->nfilled++;
			rd->filled_bytes += b->len;
		}
		if (r <= 0) {
			rd->done = true;
			rd->failed = r < 0;
		}
		pthread_cond_signal(&rd->filled);
		pthread_mutex_unlock(&rd->mu);
	}
	/* read once the writer has joined this thread */
	rd->reader_cpu = thread_cpu_usecs() - cpu;
	return NULL; /* cancelled: the writer waits for nothing but the join */
}

/*
 * The next batch the reader filled, NULL when it ended (rd->failed says
 * how) or when the copier's stopping said so meanwhile (asked every 100 ms
 * here, on this thread: *stop, with the error set); the writer then uses
 * it and hands it back with batch_done().
 */
static Batch *batch_next(Copier *c, const SourceTable *t, bool *stop)
{
	Reader *rd = &c->rd;
	int64_t t0 = mono_usecs();
	Batch *b = NULL;

	pthread_mutex_lock(&rd->mu);
	while (rd->nfilled == 0 && !rd->done) {
		struct timespec ts = mono_deadline(100);

		if (pthread_cond_timedwait(&rd->filled, &rd->mu, &ts) == ETIMEDOUT) {
			pthread_mutex_unlock(&rd->mu);
			if ((*stop = copy_stopped(c, t)))
				return NULL;
			pthread_mutex_lock(&rd->mu);
		}
	}
	rd->waited_rows += mono_usecs() - t0;
	/* after an error the rows before it are not worth inserting */
	if (rd->nfilled > 0 && !rd->failed)
		b = &rd->batches[rd->head];
	pthread_mutex_unlock(&rd->mu);
	return b;
}

static void batch_done(Reader *rd)
{
	pthread_mutex_lock(&rd->mu);
	rd->filled_bytes -= rd->batches[rd->head].len;
	rd->head = (rd->head + 1) % NBATCHES;
	rd->nfilled--;
	/*
	 * A waiting reader is woken once half the batches are free, not for
	 * each one: it then fills several in a row instead of preempting
	 * this thread for every batch (whatever the reader waits for, the
	 * count comes down to here as the writer goes on).
	 */
	if (rd->nfilled <= NBATCHES / 2)
		pthread_cond_signal(&rd->freed);
	pthread_mutex_unlock(&rd->mu);
}

/* Readies the reader for table t (its columns' types known). */
static void reader_setup(Copier *c, const SourceTable *t, const ColumnType *types)
{
	Reader *rd = &c->rd;

	if (t->ncols > c->ncols_cap) {
		rd->fields = xreallocarray(rd->fields, (size_t)t->ncols, sizeof(PgoValue));
		rd->scratch = xreallocarray(rd->scratch, (size_t)t->ncols, sizeof(ValueBuf));
		memset(rd->scratch + c->ncols_cap, 0,
		       (size_t)(t->ncols - c->ncols_cap) * sizeof(ValueBuf));
		c->ncols_cap = t->ncols;
	}
	rd->t = t;
	rd->types = types;
	/* the binary format when every column's values read the same in it:
	 * less work for the server, and for this thread */
	rd->binary = true;
	rd->server_version = session_server_version(c->s);
	for (int i = 0; i < t->ncols; i++)
		rd->binary &= values_binary_supported(t->cols[i].type_oid, types[i],
						      rd->server_version);
	/* test-only knob (tests/integration/test_binary_values.py makes a
	 * second mirror through the text path to compare): not for users */
	if (rd->binary && getenv("PGMIRROR_TEST_COPY_FORMAT") != NULL &&
	    strcmp(getenv("PGMIRROR_TEST_COPY_FORMAT"), "text") == 0)
		rd->binary = false;
	copy_binary_start(&rd->bin);
	rd->head = rd->nfilled = 0;
	rd->filled_bytes = 0;
	rd->done = rd->failed = rd->stopped = rd->bad_value = false;
	rd->rows = 0;
	rd->waited_room = rd->waited_rows = rd->reader_cpu = 0;
	rd->err.text[0] = '\0';
}

/* --- the writer ----------------------------------------------------------- */

/*
 * Inserts the rows the reader converts, until the COPY ends or either side
 * fails; the reader is running and is joined here.
 */
static bool write_rows(Copier *c, const SourceTable *t, pthread_t reader, uint64_t *nrows)
{
	bool progress = log_get_level() >= LOG_DEBUG ||
			(log_get_level() >= LOG_INFO && isatty(STDERR_FILENO));
	int64_t started = mono_usecs(), last_report = started;
	Reader *rd = &c->rd;
	uint64_t rows = 0;
	bool ok = true, stop = false;
	Batch *b;

	while (ok && (b = batch_next(c, t, &stop)) != NULL) {
		ok = apply_insert_rows(c->a, t->oid, b->vals, b->nrows);
		if (!ok)
			errbuf_set(&c->err, "%s", apply_error(c->a));
		/* a flag to look at, for every batch (at most 512 rows) */
		else if (copy_stopped(c, t))
			ok = false;
		else {
			rows += (uint64_t)b->nrows;
			/* a part may end here (copy_parts.c): its rows are in */
			if (c->hook != NULL)
				ok = c->hook(c->hook_ctx, b->vals, b->nrows, b->len);
		}
		batch_done(rd);
		notify_alive(); /* rows came: the copy goes on */
		if (ok && progress) {
			int64_t now = mono_usecs();

			if (now - last_report >= 1000000) {
				last_report = now;
				log_info("copying \"%s.%s\": %" PRIu64 " rows, %.0f rows/s",
					 t->nspname, t->relname, rows,
					 rows * 1e6 / (double)(now - started));
			}
		}
	}
	/* the reader stops at once when this side gave up */
	atomic_store(&reader_cancel, true);
	pthread_mutex_lock(&rd->mu);
	pthread_cond_signal(&rd->freed);
	pthread_mutex_unlock(&rd->mu);
	pthread_join(reader, NULL);
	if (stop)
		ok = false;
	else if (ok && rd->failed) {
		ok = false;
		/* a signal's stop says so, whatever the reader then met: the
		 * server's answer to the cancel of its COPY, say */
		if (!copy_stopped(c, t))
			errbuf_set(&c->err, "%s", rd->err.text);
		c->bad_value = rd->bad_value;
	}
	*nrows = rows;
	return ok;
}

/* Makes the mirror table of t, empty, with sync_lsn (unless LSN_INVALID). */
bool copy_make_table(Copier *c, const SourceTable *t, Lsn sync_lsn)
{
	if (!describe_table(c, t))
		return false;
	if (!apply_make_table(c->a, t->oid, sync_lsn, t->definition)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	return true;
}

/* Copies the rows of t into its table, made by copy_make_table(). */
bool copy_table_rows(Copier *c, const SourceTable *t)
{
	int64_t started = mono_usecs(), cpu = thread_cpu_usecs(), elapsed;
	const ColumnType *types;
	uint64_t rows = 0;
	pthread_t reader;
	int ncols, rc;
	bool ok;

	if (!apply_relation_types(c->a, t->oid, &types, &ncols)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	if (ncols != t->ncols) {
		errbuf_set(&c->err, "the copy of \"%s.%s\" has %d columns, its table %d", t->nspname,
			   t->relname, t->ncols, ncols);
		return false;
	}
	reader_setup(c, t, types);
	log_debug("copying \"%s.%s\" in %s format", t->nspname, t->relname,
		  c->rd.binary ? "binary" : "text");
	if (!session_copy_begin_ordered(c->s, t, c->rd.binary, c->order)) {
		errbuf_set(&c->err, "%s", session_error(c->s));
		return false;
	}
	atomic_store(&reader_cancel, false);
	session_set_stop_check(c->s, reader_stop_check);
	/* signals stay with this thread, whose waits they interrupt */
	rc = thread_start_quiet(&reader, reader_main, c);
	if (rc != 0) {
		session_set_stop_check(c->s, c->stopping);
		errbuf_set(&c->err, "could not start the thread that reads \"%s.%s\": %s",
			   t->nspname, t->relname, strerror(rc));
		return false;
	}
	ok = write_rows(c, t, reader, &rows);
	session_set_stop_check(c->s, c->stopping);
	/* a value refused: the connection is to serve the next command */
	if (!ok && c->bad_value && !session_copy_drain(c->s)) {
		c->bad_value = false;
		errbuf_set(&c->err, "%s", session_error(c->s));
	}
	if (!ok)
		return false;
	elapsed = mono_usecs() - started;
	cpu = thread_cpu_usecs() - cpu;
	log_info("copied %" PRIu64 " %s of \"%s.%s\" in %.1f s (%.0f rows/s)", rows,
		 rows == 1 ? "row" : "rows", t->nspname, t->relname, elapsed / 1e6,
		 elapsed > 0 ? rows * 1e6 / (double)elapsed : 0.0);
	/* which side was the slower one, and what each cost */
	log_debug("copy of \"%s.%s\": the writer used %.3f s of CPU and waited %.3f s for rows, "
		  "the reader used %.3f s of CPU and waited %.3f s for room", t->nspname, t->relname,
		  cpu / 1e6, c->rd.waited_rows / 1e6, c->rd.reader_cpu / 1e6,
		  c->rd.waited_room / 1e6);
	return true;
}

bool copy_rows_ordered(Copier *c, const SourceTable *t, const SourceOrder *order,
		       CopyBatchHook hook, void *ctx)
{
	bool ok;

	c->order = order;
	c->hook = hook;
	c->hook_ctx = ctx;
	ok = copy_table_rows(c, t);
	c->order = NULL;
	c->hook = NULL;
	c->hook_ctx = NULL;
	return ok;
}

Applier *copy_applier(const Copier *c)
{
	return c->a;
}

Session *copy_session(const Copier *c)
{
	return c->s;
}

void copy_set_error(Copier *c, const char *text)
{
	errbuf_set(&c->err, "%s", text);
}

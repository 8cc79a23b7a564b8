/*
 * copy.c: the initial copy, from COPY text rows to applier messages.
 *
 * Rows stream through one at a time (session_copy_next() hands over each
 * CopyData message); a row is unescaped in place in that buffer and the
 * value array is reused, so nothing is allocated per row here and no table
 * is ever held in memory.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pgmirror/copy.h"

struct Copier {
	Session *s;
	Applier *a;
	bool (*stopping)(void);  /* a signal asked pgmirror to stop */
	PgoValue *vals;      /* one row's values, reused */
	int nvals_cap;
	bool schema_only;    /* make the tables, copy no rows */
	ErrBuf err;          /* the last error */
};

Copier *copy_new(Session *s, Applier *a, bool (*stopping)(void))
{
	Copier *c = xcalloc(1, sizeof(*c));

	c->s = s;
	c->a = a;
	c->stopping = stopping;
	return c;
}

void copy_set_schema_only(Copier *c)
{
	c->schema_only = true;
}

void copy_free(Copier *c)
{
	if (c == NULL)
		return;
	free(c->vals);
	free(c);
}

const char *copy_error(const Copier *c)
{
	return c->err.text;
}

/* --- COPY text format ---------------------------------------------------- */

static bool is_octal(char ch)
{
	return ch >= '0' && ch <= '7';
}

/*
 * Unescapes one field from *rp up to the next tab or end, writing at w
 * (never ahead of the read position); returns the end of what it wrote.
 * The escapes are those of CopyReadAttributesText() in PostgreSQL's
 * copyfromparse.c.
 */
static char *unescape_field(char **rp, const char *end, char *w, char *err,
			    size_t errsize)
{
	char *r = *rp;

	while (r < end && *r != '\t') {
		char ch = *r++;

		if (ch == '\\') {
			if (r == end) {
				snprintf(err, errsize, "the row ends with a lone backslash");
				return NULL;
			}
			ch = *r++;
			switch (ch) {
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'v': ch = '\v'; break;
			case 'x':
				/* one or two hex digits; without any, a plain 'x' */
				if (r < end && hex_digit_value((unsigned char)*r) >= 0) {
					int v = hex_digit_value((unsigned char)*r++);

					if (r < end && hex_digit_value((unsigned char)*r) >= 0)
						v = v * 16 + hex_digit_value((unsigned char)*r++);
					ch = (char)v;
				}
				break;
			default:
				if (is_octal(ch)) {
					int v = ch - '0';

					for (int i = 0; i < 2 && r < end && is_octal(*r); i++)
						v = v * 8 + (*r++ - '0');
					ch = (char)(v & 0xff);
				}
				break; /* any other character stands for itself */
			}
		}
		*w++ = ch;
	}
	*rp = r;
	return w;
}

bool copy_parse_row(char *row, size_t len, PgoValue *vals, int ncols, char *err,
		    size_t errsize)
{
	char *r = row, *end;
	int col = 0;

	if (len == 0 || row[len - 1] != '\n') {
		snprintf(err, errsize, "the row does not end with a newline");
		return false;
	}
	end = row + len - 1;
	if (ncols == 0 && r == end)
		return true;
	for (;;) {
		PgoValue *v;

		if (col == ncols) {
			snprintf(err, errsize, "more than the %d columns expected", ncols);
			return false;
		}
		v = &vals[col++];
		/* NULL is the raw field \N; an escaped backslash and N is text */
		if (end - r >= 2 && r[0] == '\\' && r[1] == 'N' && (r + 2 == end || r[2] == '\t')) {
			v->kind = PGO_COL_NULL;
			v->len = 0;
			v->data = NULL;
			r += 2;
		} else {
			char *start = r, *w = unescape_field(&r, end, r, err, errsize);

			if (w == NULL)
				return false;
			v->kind = PGO_COL_TEXT;
			v->len = (uint32_t)(w - start);
			v->data = (const uint8_t *)start;
		}
		if (r == end)
			break;
		r++; /* the tab */
	}
	if (col != ncols) {
		snprintf(err, errsize, "%d columns, expected %d", col, ncols);
		return false;
	}
	return true;
}

/* --- feeding the applier ------------------------------------------------ */

static bool feed(Copier *c, const PgoMessage *msg)
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
	ok = feed(c, &msg);
	free(cols);
	return ok;
}

/* True, with the error set, when a signal asked pgmirror to stop. */
static bool stopped(Copier *c, const SourceTable *t)
{
	if (c->stopping == NULL || !c->stopping())
		return false;
	errbuf_set(&c->err, "stopped by a signal during the initial copy of \"%s.%s\"", t->nspname,
		  t->relname);
	return true;
}

static bool copy_table(Copier *c, const SourceTable *t)
{
	bool progress = log_get_level() >= LOG_DEBUG ||
			(log_get_level() >= LOG_INFO && isatty(STDERR_FILENO));
	int64_t started = mono_usecs(), last_report = started, elapsed;
	uint64_t rows = 0;
	PgoMessage msg;
	char err[256];
	int r;

	if (!describe_table(c, t))
		return false;
	if (!apply_make_table(c->a, t->oid)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	if (c->schema_only)
		return true;
	if (t->ncols > c->nvals_cap) {
		c->vals = xreallocarray(c->vals, (size_t)t->ncols, sizeof(PgoValue));
		c->nvals_cap = t->ncols;
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = PGO_INSERT;
	msg.u.insert.relid = t->oid;
	msg.u.insert.newtup.ncols = (uint16_t)t->ncols;
	msg.u.insert.newtup.cols = c->vals;
	if (!session_copy_begin(c->s, t)) {
		errbuf_set(&c->err, "%s", session_error(c->s));
		return false;
	}
	for (;;) {
		char *row;
		size_t len;

		r = session_copy_next(c->s, &row, &len);
		if (r <= 0)
			break;
		rows++;
		if (!copy_parse_row(row, len, c->vals, t->ncols, err, sizeof(err))) {
			errbuf_set(&c->err, "malformed COPY row %" PRIu64 " of table \"%s.%s\": %s", rows,
				  t->nspname, t->relname, err);
			return false;
		}
		if (!feed(c, &msg))
			return false;
		/* a flag to look at: cheap enough for every row */
		if (stopped(c, t))
			return false;
		if (progress && (rows & 1023) == 0) {
			int64_t now = mono_usecs();

			if (now - last_report >= 1000000) {
				last_report = now;
				log_info("copying \"%s.%s\": %" PRIu64 " rows, %.0f rows/s",
					 t->nspname, t->relname, rows,
					 rows * 1e6 / (double)(now - started));
			}
		}
	}
	if (r < 0) {
		if (!session_error_stopped(c->s) || !stopped(c, t))
			errbuf_set(&c->err, "%s", session_error(c->s));
		return false;
	}
	elapsed = mono_usecs() - started;
	log_info("copied %" PRIu64 " rows of \"%s.%s\" in %.1f s (%.0f rows/s)", rows,
		 t->nspname, t->relname, elapsed / 1e6,
		 elapsed > 0 ? rows * 1e6 / (double)elapsed : 0.0);
	return true;
}

bool copy_begin_at(Copier *c, Lsn lsn)
{
	PgoMessage msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = PGO_BEGIN;
	msg.u.begin.final_lsn = lsn;
	return feed(c, &msg);
}

bool copy_one_table(Copier *c, const SourceTable *t)
{
	return !stopped(c, t) && copy_table(c, t);
}

bool copy_commit_at(Copier *c, Lsn lsn)
{
	PgoMessage msg;

	/* No source commit time: the copy is of a snapshot, not of a commit. */
	memset(&msg, 0, sizeof(msg));
	msg.type = PGO_COMMIT;
	msg.u.commit.commit_lsn = lsn;
	msg.u.commit.end_lsn = lsn;
	return feed(c, &msg);
}

bool copy_tables(Copier *c, const SourceTable *tables, int n, Lsn consistent_point)
{
	if (!copy_begin_at(c, consistent_point))
		return false;
	if (!apply_reset(c->a)) {
		errbuf_set(&c->err, "%s", apply_error(c->a));
		return false;
	}
	/* many small tables take a while too: look before each one */
	for (int i = 0; i < n; i++)
		if (!copy_one_table(c, &tables[i]))
			return false;
	return copy_commit_at(c, consistent_point);
}

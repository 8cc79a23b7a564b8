/*
 * lookup.c: the applier's catalog questions, answered over a plain
 * connection to the source (a Catalog whose ctx is a Lookup). A look-up
 * that finds the connection dead connects again and asks once more; one
 * stopped by the tick, or by the applier's row callback, is not a lost
 * source.
 */
#include "config.h"

#include <stdlib.h>

#include "pgmirror/lookup.h"
#include "pgmirror/session.h"

struct Lookup {
	Session *session;       /* the one asked: own, or the caller's */
	Session *own;           /* the plain connection */
	const ConnParams *conn;
	const Session *origin;  /* whose address own connects to (lookup_follow()) */
	TickFn tick;            /* while streaming: the stream's tick */
	void *tick_ctx;
	bool stopped;           /* the last look-up was stopped by the tick */
	char **pubs;            /* the mirror's publications */
	int npubs;
	Catalog catalog;        /* asks this Lookup */
};

void lookup_set_tick(Lookup *l, TickFn tick, void *ctx)
{
	l->tick = tick;
	l->tick_ctx = ctx;
}

static bool lookup_tick(void *ctx)
{
	Lookup *l = ctx;

	if (l->tick != NULL && !l->tick(l->tick_ctx)) {
		l->stopped = true;
		return false;
	}
	return true;
}

/* The connection to ask on, connected; a borrowed one is never connected
 * again here (it is the caller's). */
static bool lookup_ready(Lookup *l)
{
	l->stopped = false;
	/* a question of the WAL position is answered within a second or
	 * given up (lookup_ask_position()) */
	if (l->session == l->own)
		session_finish_async(l->own, 1000);
	if (l->session == l->own && !session_connected(l->own))
		session_pin_address(l->own, l->origin);
	return session_connected(l->session) ||
	       (l->session == l->own && session_connect_plain(l->session, l->conn));
}

/* Runs a look-up; once more on a new connection if the old one was dead
 * (a server restart ends it as well as the replication connection). */
#define LOOKUP(l, call) \
	((lookup_ready(l) && (call)) || \
	 (!(l)->stopped && !session_connected((l)->session) && lookup_ready(l) && (call)))

static bool lookup_type(void *ctx, uint32_t oid, SourceType *out)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_type_info(l->session, oid, out));
}

static bool lookup_fill(void *ctx, uint32_t relid, const char *column, SourceFill *out)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_column_fill(l->session, relid, column, out));
}

static bool lookup_attnums(void *ctx, uint32_t relid, const char *const *names, int n,
			   int *attnums)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_column_attnums(l->session, relid, names, n, attnums));
}

static bool lookup_indexes(void *ctx, const uint32_t *relids, int n, uint32_t xid,
			   SourceIndex **out, int *nout)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_indexes(l->session, relids, n, xid, out, nout));
}

/* The applier's row callback, as seen by the look-up: a row it refuses
 * stops the look-up (it is not the source that went away). */
typedef struct LookupRows {
	Lookup *l;
	CatalogRowFn row;
	void *arg;
} LookupRows;

static bool lookup_row(void *arg, const char *const *vals, const int *lens)
{
	LookupRows *r = arg;

	if (!r->row(r->arg, vals, lens)) {
		r->l->stopped = true;
		return false;
	}
	return true;
}

static bool lookup_values(void *ctx, uint32_t relid, const char *const *keys, int nkeys,
			  const char *column, CatalogRowFn row, void *arg)
{
	Lookup *l = ctx;
	LookupRows rows = {l, row, arg};

	return LOOKUP(l, session_column_values(l->session, relid, keys, nkeys, column,
					       lookup_row, &rows, lookup_tick, l));
}

static bool lookup_relation_name(void *ctx, uint32_t relid, char **nspname, char **relname)
{
	Lookup *l = ctx;

	return LOOKUP(l, session_relation_name(l->session, relid, nspname, relname));
}

/* Asked rarely (a name clash in the stream): the whole list is read. */
static bool lookup_published(void *ctx, uint32_t relid, bool *published)
{
	Lookup *l = ctx;
	SourceTable *t = NULL;
	int n = 0;

	*published = false;
	if (!LOOKUP(l, session_publication_tables(l->session, l->pubs, l->npubs, &t, &n)))
		return false;
	for (int i = 0; i < n && !*published; i++)
		*published = t[i].oid == relid;
	source_tables_free(t, n);
	return true;
}

void lookup_set_publications(Lookup *l, const char *pubs_text)
{
	strv_free(l->pubs, l->npubs);
	l->npubs = strv_split(pubs_text, ',', &l->pubs);
}

static const char *lookup_error(void *ctx)
{
	return session_error(((Lookup *)ctx)->session);
}

/* The last look-up failed for want of a connection (not stopped). */
static bool lookup_lost(void *ctx)
{
	Lookup *l = ctx;

	return !l->stopped && !session_connected(l->session);
}

Lookup *lookup_new(const ConnParams *cp)
{
	Lookup *l = xcalloc(1, sizeof(Lookup));

	l->session = l->own = session_new();
	l->conn = cp;
	l->catalog = (Catalog){.ctx = l, .type_info = lookup_type, .column_fill = lookup_fill,
			       .column_attnums = lookup_attnums, .column_values = lookup_values,
			       .indexes = lookup_indexes, .error = lookup_error, .lost = lookup_lost,
			       .relation_name = lookup_relation_name,
			       .relation_published = lookup_published};
	return l;
}

void lookup_free(Lookup *l)
{
	if (l == NULL)
		return;
	session_free(l->own);
	strv_free(l->pubs, l->npubs);
	free(l);
}

const Catalog *lookup_catalog(Lookup *l)
{
	return &l->catalog;
}

void lookup_disconnect(Lookup *l)
{
	session_disconnect(l->own);
}

bool lookup_connected(const Lookup *l)
{
	return session_connected(l->own);
}

bool lookup_publication_tables(Lookup *l, char *const *pubs, int npubs, bool (*stopping)(void),
			       SourceTable **out, int *n)
{
	bool ok;

	session_set_stop_check(l->own, stopping);
	ok = LOOKUP(l, session_publication_tables(l->session, pubs, npubs, out, n));
	session_set_stop_check(l->own, NULL);
	return ok;
}

bool lookup_publication_fingerprint(Lookup *l, char *const *pubs, int npubs,
				    bool (*stopping)(void), PubFingerprint *out)
{
	bool ok;

	session_set_stop_check(l->own, stopping);
	ok = LOOKUP(l, session_publication_fingerprint(l->session, pubs, npubs, out));
	session_set_stop_check(l->own, NULL);
	return ok;
}

bool lookup_unreadable_tables(Lookup *l, const SourceTable *tables, int n, char **grants)
{
	return LOOKUP(l, session_unreadable_tables(l->session, tables, n, grants));
}

void lookup_follow(Lookup *l, const Session *origin)
{
	l->origin = origin;
}

bool lookup_ask_position(Lookup *l)
{
	/* connected without waiting, so with no host name to resolve */
	if (!session_connected(l->own))
		session_pin_address(l->own, l->origin);
	return session_ask_position(l->own, l->conn);
}

int lookup_poll_position(Lookup *l, Lsn *pos, int wait_ms)
{
	if (wait_ms > 0)
		session_finish_async(l->own, wait_ms);
	return session_poll_position(l->own, pos);
}

const char *lookup_position_error(const Lookup *l)
{
	return session_error(l->own);
}

void lookup_use_session(Lookup *l, Session *s)
{
	l->session = s != NULL ? s : l->own;
}

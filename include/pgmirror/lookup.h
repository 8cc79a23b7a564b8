/*
 * lookup.h: the applier's catalog questions (catalog.h), answered over a
 * plain connection to the source that is opened on the first question,
 * and again when it was lost (a server restart ends it as well as the
 * replication connection).
 */
#ifndef PGMIRROR_LOOKUP_H
#define PGMIRROR_LOOKUP_H

#include "pgmirror/catalog.h"
#include "pgmirror/session.h"
#include "pgmirror/util.h"

typedef struct Lookup Lookup;

/* cp as session_connect_plain() takes it; not copied. */
Lookup *lookup_new(const ConnParams *cp);
void lookup_free(Lookup *l);

/* The Catalog that asks l; valid as long as l. */
const Catalog *lookup_catalog(Lookup *l);

/*
 * tick (NULL: none) is called while a look-up waits on rows (see
 * session_column_values()); when it says stop, the look-up fails and
 * Catalog.lost() says false.
 */
void lookup_set_tick(Lookup *l, TickFn tick, void *ctx);

/* The mirror's publications (comma-separated; copied), which
 * Catalog.relation_published() asks about; until set, none. */
void lookup_set_publications(Lookup *l, const char *pubs_text);

/* Closes the connection (the next question opens a new one), e.g. to give
 * back the memory of a large answer. */
void lookup_disconnect(Lookup *l);
/* Whether l's own plain connection is open (a run with changes opened it
 * for their questions; a quiet --once run has none). */
bool lookup_connected(const Lookup *l);

/*
 * Until called again with NULL, l asks on s, a connected session of the
 * caller's that is free for queries (the replication connection before
 * its stream starts; a copy's connection between its COPYs, in its
 * snapshot), and never connects it again: a run whose questions all come
 * then opens no second connection to the source. Not nested: NULL gives
 * l back its own connection.
 */
void lookup_use_session(Lookup *l, Session *s);

/*
 * l's own connection goes to the address origin is connected to when it is
 * made (session_pin_address()): the same server, and no host name looked
 * up again, which would block the stream's loop. origin (NULL: none) is not
 * copied; while it is not connected, own goes where -d, -h and -p say.
 */
void lookup_follow(Lookup *l, const Session *origin);

/*
 * The server's WAL position, asked on l's own plain connection without
 * waiting (session_ask_position(), session_poll_position()): the stream's
 * lag. A look-up that comes while the question is under way gives it a
 * second to be answered (the answer kept), then connects again.
 * lookup_poll_position() waits up to wait_ms for the answer (0: not at
 * all); lookup_position_error(): why a question failed.
 */
bool lookup_ask_position(Lookup *l) PGM_MUST_CHECK;
int lookup_poll_position(Lookup *l, Lsn *pos, int wait_ms);
const char *lookup_position_error(const Lookup *l);

/*
 * The tables the publications pubs publish now, as
 * session_publication_tables() reads them, but over l's plain connection:
 * a running service checks them once a minute without starting a
 * walsender for it. stopping (NULL: none) is asked every 100 ms while the
 * server takes its time (a table locked by a schema change). On failure
 * the Catalog's error() and lost() say why.
 */
bool lookup_publication_tables(Lookup *l, char *const *pubs, int npubs, bool (*stopping)(void),
			       SourceTable **out, int *n) PGM_MUST_CHECK;
/* The publications' fingerprint (session_publication_fingerprint()), the
 * same way. */
bool lookup_publication_fingerprint(Lookup *l, char *const *pubs, int npubs,
				    bool (*stopping)(void), PubFingerprint *out) PGM_MUST_CHECK;

/* session_unreadable_tables() over l's plain connection (or the session
 * it borrows): a service's check asks it without a walsender. */
bool lookup_unreadable_tables(Lookup *l, const SourceTable *tables, int n, char **grants)
	PGM_MUST_CHECK;

#endif

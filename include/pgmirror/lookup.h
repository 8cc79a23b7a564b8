/*
 * lookup.h: the applier's catalog questions (catalog.h), answered over a
 * plain connection to the source that is opened on the first question,
 * and again when it was lost (a server restart ends it as well as the
 * replication connection).
 */
#ifndef PGMIRROR_LOOKUP_H
#define PGMIRROR_LOOKUP_H

#include "pgmirror/catalog.h"
#include "pgmirror/util.h"

typedef struct Lookup Lookup;

/* conninfo as session_connect_plain() takes it; not copied. */
Lookup *lookup_new(const char *conninfo);
void lookup_free(Lookup *l);

/* The Catalog that asks l; valid as long as l. */
const Catalog *lookup_catalog(Lookup *l);

/*
 * tick (NULL: none) is called while a look-up waits on rows (see
 * session_column_values()); when it says stop, the look-up fails and
 * Catalog.lost() says false.
 */
void lookup_set_tick(Lookup *l, TickFn tick, void *ctx);

/* Closes the connection (the next question opens a new one), e.g. to give
 * back the memory of a large answer. */
void lookup_disconnect(Lookup *l);

#endif

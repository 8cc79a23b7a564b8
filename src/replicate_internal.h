/*
 * replicate_internal.h: what the parts of the replication job share (not
 * for other modules): the run's state, the stop flag, and the entry points
 * of the first run (firstrun.c) and of the streaming loop (stream.c).
 * replicate.c owns the checks, reconnecting with backoff, and the exits.
 */
#ifndef PGMIRROR_REPLICATE_INTERNAL_H
#define PGMIRROR_REPLICATE_INTERNAL_H

#include <stdbool.h>

#include "pgmirror/apply.h"
#include "pgmirror/lookup.h"
#include "pgmirror/mirror.h"
#include "pgmirror/replicate.h"
#include "pgmirror/session.h"

typedef struct Run {
	const ReplicateOptions *opt;
	char *pubs_text;        /* sorted, comma-separated */
	Mirror *mirror;
	MirrorState state;
	Session *session;
	SystemInfo sys;
	SourceKind kind;        /* primary or standby, asked on each connect */
	Lsn endpos;             /* stop here; LSN_INVALID: run until stopped */
	const Catalog *catalog; /* the applier's questions to the source */
	Lookup *lookup;         /* its answers (catalog->ctx) */
	bool conn_failed;       /* the last error was reaching the source */
} Run;

/* SIGTERM (replicate_request_stop()) was seen: finish up. */
bool replicate_stopping(void);

/* Opens the mirror into run; returns an exit code. */
int replicate_open_mirror(Run *run, MirrorMode mode);

/*
 * Makes the mirror's slot and fills the mirror from its snapshot (a first
 * run, a first run that did not finish, or a rebuild after the slot was
 * lost); returns an exit code. See firstrun.c.
 */
int firstrun_run(Run *run, bool rebuild);

/* What a streaming round ended with. */
typedef enum StreamEnd {
	STREAM_DONE,      /* end position reached, or asked to stop */
	STREAM_LOST,      /* connection lost: may be retried */
	STREAM_FAILED,    /* an error that retrying will not mend */
	STREAM_IN_USE,    /* the slot is held by another connection */
	STREAM_RECONNECT, /* idle after a huge message: connect again at once */
} StreamEnd;

/* Streams from the mirror's slot into apply until one of the ends above. */
StreamEnd stream_run(Run *run, Applier *apply);

#endif

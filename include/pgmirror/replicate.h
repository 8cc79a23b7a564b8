/*
 * replicate.h: pgmirror's main job. Checks the mirror against the source,
 * creates the slot on a first run, then streams changes into the mirror
 * until told to stop, sending feedback of what is durable.
 */
#ifndef PGMIRROR_REPLICATE_H
#define PGMIRROR_REPLICATE_H

#include <stdbool.h>

#include "pgmirror/connparams.h"
#include "pgmirror/util.h"

/* Exit codes of the contract. */
#define EXIT_OK 0
#define EXIT_ERROR 1
#define EXIT_USAGE 2
#define EXIT_IN_USE 3
#define EXIT_DIFFERS 4     /* --verify found a difference */
#define EXIT_DAMAGED 5     /* --check found the mirror file damaged */

typedef struct ReplicateOptions {
	ConnParams conn;           /* -d, -h, -p, -U and -W's password */
	const char *slot;          /* -S */
	bool slot_given;           /* -S was on the command line */
	char **pubs;               /* -P, sorted, no duplicates */
	int npubs;
	bool once;                 /* --once */
	Lsn endpos;                /* -E; LSN_INVALID when not given */
	bool no_initial_copy;
	bool resync;               /* --resync */
	char **resync_tables;      /* its names; none: every table */
	int nresync;
	bool verify;               /* --verify */
	bool failover;             /* --failover: the slot is made a failover slot */
	bool no_binary;            /* --no-binary: stream in text format only */
	int status_interval;       /* -s, seconds */
	const char *feed_dir;      /* --feed: also write the feed here (a hub); NULL: none */
	bool feed_snapshot;        /* --feed-snapshot */
	int feed_keep;             /* --feed-keep; 0: the default */
	int feed_interval;         /* --feed-interval, seconds; 0: the default */
	const char *feed_from;     /* --from: read this feed instead (a device); NULL: none */
	const char *mirror_path;
} ReplicateOptions;

/* Returns an exit code. */
int replicate_run(const ReplicateOptions *opt);
/* --from: a device that reads a feed (device.c); an exit code. */
int replicate_device(const ReplicateOptions *opt);
int replicate_drop_slot(const ReplicateOptions *opt);
/* --check: SQLite's integrity check of the mirror at path, without
 * connecting; prints what it found; EXIT_OK, EXIT_DAMAGED or EXIT_ERROR. */
int replicate_check(const char *mirror_path);

/* Set from a signal handler: finish up and exit 0. */
void replicate_request_stop(void);

/* Async-signal-safe (SIGHUP): the publications are checked at once, as at
 * start, at the next step of the stream; nothing else changes. */
void replicate_request_check(void);

#endif

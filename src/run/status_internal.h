/*
 * status_internal.h: what status.c reads from the mirror for --status, and
 * the Prometheus form of it (status_prom.c), which status.c calls.
 */
#ifndef PGMIRROR_STATUS_INTERNAL_H
#define PGMIRROR_STATUS_INTERNAL_H

#include <stdint.h>

#include "pgmirror/mirror.h"

/* What --status prints of one table. */
typedef struct TableStatus {
	char *name;
	int64_t rows;          /* -1: it has no mirror table (it waits) */
	int64_t generation;
	const char *state; /* "synced", or what keeps the table from being it */
	bool copying;      /* its copy in parts has not reached its end */
	bool pending;      /* set aside to be copied again, not begun (mirror_stage.h) */
	int64_t copy_rows; /* the rows that copy stored */
	int64_t copy_estimate; /* the source's estimate of its rows; -1 */
} TableStatus;

/* Prints the mirror's state in Prometheus' text exposition format (0.0.4). */
void status_prom_print(const MirrorState *st, const MirrorHealth *h, const TableStatus *t,
		       int n);

#endif

/*
 * status.h: --status, the mirror's state printed from the file alone (no
 * connection to the source).
 */
#ifndef PGMIRROR_STATUS_H
#define PGMIRROR_STATUS_H

#include <stdbool.h>

typedef enum StatusFormat {
	STATUS_TEXT,       /* one "key: value" per line */
	STATUS_JSON,       /* one JSON object */
	STATUS_PROMETHEUS, /* Prometheus' text exposition format */
} StatusFormat;

/*
 * Prints the state of the mirror at mirror_path on stdout in format;
 * returns an exit code (replicate.h's EXIT_*).
 */
int status_print(const char *mirror_path, StatusFormat format);

#endif

/*
 * status.h: --status, the mirror's state printed from the file alone (no
 * connection to the source).
 */
#ifndef PGMIRROR_STATUS_H
#define PGMIRROR_STATUS_H

#include <stdbool.h>

/*
 * Prints the state of the mirror at mirror_path on stdout, one "key:
 * value" per line, or (json) one JSON object; returns an exit code
 * (replicate.h's EXIT_*).
 */
int status_print(const char *mirror_path, bool json);

#endif

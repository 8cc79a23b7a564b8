/*
 * copy_binary.h: COPY's binary format (copy_binary.c).
 */
#ifndef PGMIRROR_COPY_BINARY_H
#define PGMIRROR_COPY_BINARY_H

#include <stdbool.h>
#include <stddef.h>

#include "pgmirror/pgoutput.h"
#include "pgmirror/util.h"

/* Where one COPY's stream of messages is. */
typedef struct CopyBinary {
	bool header_seen;    /* the signature and flags were read */
	bool ended;          /* the trailer was read: no row may follow */
} CopyBinary;

/* Ready for a new COPY. */
void copy_binary_start(CopyBinary *st);

/*
 * Parses one CopyData message of COPY ... TO STDOUT (FORMAT binary): the
 * file header (the signature, the flags, which must be 0, and the
 * header extension, skipped), which PostgreSQL sends before the first row
 * in the same message; one row of ncols fields, each PGO_COL_BINARY
 * pointing into msg or PGO_COL_NULL; or the trailer. Returns 1 for a row,
 * 0 for a message with none (the trailer, or a header alone), -1 with a message in err for a
 * malformed one (a wrong field count, a field past the message's end,
 * bytes after the row, anything after the trailer).
 */
int copy_binary_row(CopyBinary *st, const char *msg, size_t len, PgoValue *vals, int ncols,
		    char *err, size_t errsize) PGM_MUST_CHECK;

#endif

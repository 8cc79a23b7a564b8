/*
 * copy_text.h: COPY's text format (copy_text.c).
 */
#ifndef PGMIRROR_COPY_TEXT_H
#define PGMIRROR_COPY_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "pgmirror/pgoutput.h"
#include "pgmirror/util.h"

/*
 * Parses one row of COPY's text format in place: tab-separated fields, \N
 * for NULL, the backslash escapes \b \f \n \r \t \v \\, \ooo (octal) and
 * \xhh (hex), any other escaped character standing for itself; the row
 * ends with its newline. Fills vals[0..ncols-1] (PGO_COL_TEXT pointing
 * into row, or PGO_COL_NULL). On a malformed row returns false with a
 * message in err.
 */
bool copy_parse_row(char *row, size_t len, PgoValue *vals, int ncols, char *err,
		    size_t errsize) PGM_MUST_CHECK;

#endif

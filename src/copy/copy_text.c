/*
 * copy_text.c: rows of COPY's text format, as COPY ... TO STDOUT sends
 * them, split into their fields in place (copy_text.h). Pure: the copy's
 * reader thread and --verify use it on the rows they receive.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "pgmirror/copy_text.h"
#include "pgmirror/util.h"

static bool is_octal(char ch)
{
	return ch >= '0' && ch <= '7';
}

/*
 * Unescapes one field from *rp up to the next tab or end, writing at w
 * (never ahead of the read position); returns the end of what it wrote.
 * The escapes are those of CopyReadAttributesText() in PostgreSQL's
 * copyfromparse.c.
 */
static char *unescape_field(char **rp, const char *end, char *w, char *err,
			    size_t errsize)
{
	char *r = *rp;

	while (r < end && *r != '\t') {
		char *run = r, ch;

		/* a run of plain bytes, moved back only once an escape was seen */
		while (r < end && *r != '\t' && *r != '\\')
			r++;
		if (w != run)
			memmove(w, run, (size_t)(r - run));
		w += r - run;
		if (r == end || *r == '\t')
			break;
		r++; /* the backslash */
		if (r == end) {
			snprintf(err, errsize, "the row ends with a lone backslash");
			return NULL;
		}
		ch = *r++;
		switch (ch) {
		case 'b': ch = '\b'; break;
		case 'f': ch = '\f'; break;
		case 'n': ch = '\n'; break;
		case 'r': ch = '\r'; break;
		case 't': ch = '\t'; break;
		case 'v': ch = '\v'; break;
		case 'x':
			/* one or two hex digits; without any, a plain 'x' */
			if (r < end && hex_digit_value((unsigned char)*r) >= 0) {
				int v = hex_digit_value((unsigned char)*r++);

				if (r < end && hex_digit_value((unsigned char)*r) >= 0)
					v = v * 16 + hex_digit_value((unsigned char)*r++);
				ch = (char)v;
			}
			break;
		default:
			if (is_octal(ch)) {
				int v = ch - '0';

				for (int i = 0; i < 2 && r < end && is_octal(*r); i++)
					v = v * 8 + (*r++ - '0');
				ch = (char)(v & 0xff);
			}
			break; /* any other character stands for itself */
		}
		*w++ = ch;
	}
	*rp = r;
	return w;
}

bool copy_parse_row(char *row, size_t len, PgoValue *vals, int ncols, char *err,
		    size_t errsize)
{
	char *r = row, *end;
	int col = 0;

	if (len == 0 || row[len - 1] != '\n') {
		snprintf(err, errsize, "the row does not end with a newline");
		return false;
	}
	end = row + len - 1;
	if (ncols == 0 && r == end)
		return true;
	for (;;) {
		PgoValue *v;

		if (col == ncols) {
			snprintf(err, errsize, "more than the %d columns expected", ncols);
			return false;
		}
		v = &vals[col++];
		/* NULL is the raw field \N; an escaped backslash and N is text */
		if (end - r >= 2 && r[0] == '\\' && r[1] == 'N' && (r + 2 == end || r[2] == '\t')) {
			v->kind = PGO_COL_NULL;
			v->len = 0;
			v->data = NULL;
			r += 2;
		} else {
			char *start = r, *w = unescape_field(&r, end, r, err, errsize);

			if (w == NULL)
				return false;
			v->kind = PGO_COL_TEXT;
			v->len = (uint32_t)(w - start);
			v->data = (const uint8_t *)start;
		}
		if (r == end)
			break;
		r++; /* the tab */
	}
	if (col != ncols) {
		snprintf(err, errsize, "%d columns, expected %d", col, ncols);
		return false;
	}
	return true;
}

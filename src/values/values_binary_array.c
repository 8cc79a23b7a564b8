/*
 * values_binary_array.c: array_send's bytes to the JSON array the text
 * path makes of array_out's text (values_array.c): nested per dimension,
 * lower bounds dropped, NULL as null, each element written from the text
 * its type's output function writes (values_binary_text()) by the same
 * element writer the text path uses, so the JSON is the same byte for
 * byte.
 *
 * array_send writes: int32 dimensions (0 for an empty array), int32 1
 * when the array has NULLs, the element type's OID, then for each
 * dimension int32 length and int32 lower bound, then each element as
 * int32 length (-1: NULL) and that many bytes.
 */
#include "config.h"

#include <assert.h>
#include <string.h>

#include "values_wire.h"

/* PostgreSQL's MAXDIM. */
#define ARRAY_DIM_MAX 6

static bool array_bad(Err *e, const char *why)
{
	return values_fail(e, "invalid binary value for type array: %s", why);
}

/* One element's JSON, from its bytes p[0..len), appended to b. */
static bool element_json(uint32_t elem_oid, ValueType elem_vt, int version,
			 const unsigned char *p, size_t len, ValueBuf *b, Err *e)
{
	size_t base = b->len, tlen;
	const char *data;
	bool ok;

	if (elem_vt == VT_TIMESTAMP || elem_vt == VT_TIMESTAMPTZ) {
		/* the stored form (or the infinity word) as a string, as the
		 * text path writes it */
		values_buf_putc(b, '"');
		if (!values_binary_text(elem_oid, version, p, len, b, e))
			return false;
		values_buf_putc(b, '"');
		return true;
	}
	/* The element's text at the end of b, its JSON after it, moved down
	 * over the text. Room first: b must not move while the text is read
	 * (a JSON string takes at most 6 bytes a byte, and 2 quotes; a
	 * number at most 2 more than its text). */
	if (!values_binary_text(elem_oid, version, p, len, b, e))
		return false;
	tlen = b->len - base;
	values_buf_reserve(b, values_size_mul_add(tlen, 6, 32));
	data = b->data;
	ok = values_array_element_append(elem_vt, b->data + base, tlen, b, e);
	assert(b->data == data);
	if (ok)
		memmove(b->data + base, b->data + base + tlen, b->len - base - tlen);
	b->len = ok ? b->len - tlen : base;
	return ok;
}

bool values_binary_array_json(uint32_t elem_oid, ValueType elem_vt, int version,
			      const unsigned char *p, size_t len, ValueBuf *b, Err *e)
{
	int32_t dims[ARRAY_DIM_MAX], idx[ARRAY_DIM_MAX];
	int32_t ndim, flags;
	uint64_t nitems = 1;
	size_t pos;

	if (len < 12)
		return values_binary_bad_length(e, "array", len);
	ndim = (int32_t) get32(p);
	flags = (int32_t) get32(p + 4);
	if (ndim < 0 || ndim > ARRAY_DIM_MAX)
		return values_fail(e, "invalid binary value for type array: %ld dimensions",
				   (long) ndim);
	if (flags != 0 && flags != 1)
		return array_bad(e, "invalid flags");
	if (get32(p + 8) != elem_oid)
		return values_fail(e, "invalid binary value for type array: element type %lu, "
				   "not %lu", (unsigned long) get32(p + 8), (unsigned long) elem_oid);
	pos = 12;
	if (len - pos < 8 * (size_t) ndim)
		return values_binary_bad_length(e, "array", len);
	for (int d = 0; d < ndim; d++, pos += 8) {
		int32_t lb = (int32_t) get32(p + pos + 4);

		dims[d] = (int32_t) get32(p + pos);
		idx[d] = 0;
		/* array_send writes no dimension for an empty array */
		if (dims[d] <= 0 || (int64_t) lb + dims[d] - 1 > INT32_MAX)
			return array_bad(e, "invalid dimension");
		nitems *= (uint64_t) dims[d];
		/* each element takes 4 bytes at least */
		if (nitems > (len - pos) / 4)
			return values_binary_bad_length(e, "array", len);
	}
	if (ndim == 0)
		nitems = 0;
	for (int d = 0; d < ndim; d++)
		values_buf_putc(b, '[');
	for (uint64_t i = 0; i < nitems; i++) {
		int32_t elen;

		if (i > 0) {
			int rolled = 0;

			/* the next index, the last dimension fastest */
			for (int d = ndim - 1; d >= 0; d--) {
				if (++idx[d] < dims[d])
					break;
				idx[d] = 0;
				rolled++;
			}
			for (int k = 0; k < rolled; k++)
				values_buf_putc(b, ']');
			values_buf_putc(b, ',');
			for (int k = 0; k < rolled; k++)
				values_buf_putc(b, '[');
		}
		if (len - pos < 4)
			return values_binary_bad_length(e, "array", len);
		elen = (int32_t) get32(p + pos);
		pos += 4;
		if (elen == -1) {
			values_buf_puts(b, "null");
			continue;
		}
		if (elen < 0 || (size_t) elen > len - pos)
			return array_bad(e, "invalid element length");
		if (!element_json(elem_oid, elem_vt, version, p + pos, (size_t) elen, b, e))
			return false;
		pos += (size_t) elen;
	}
	for (int d = 0; d < ndim; d++)
		values_buf_putc(b, ']');
	if (ndim == 0)
		values_buf_puts(b, "[]");
	if (pos != len)
		return array_bad(e, "bytes after the last element");
	return true;
}

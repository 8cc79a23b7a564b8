/*
 * apply_tuple.c: a change's tuple made into the mirror's values: each
 * column's text or binary value converted (values.h) with the types the
 * relation cache decided, an unchanged TOASTed value marked to be kept, a
 * key tuple's other columns marked as not identifying the row; a value the
 * mirror cannot store makes its table wait (invariant 14). Also the rows
 * --verify converts without applying them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply_internal.h"

/*
 * apply_convert_value() for a value in binary format (pgoutput's 'b', in a
 * stream that asked for binary): values_convert_binary() stores exactly
 * what the text path stores.
 */
static bool convert_binary(Applier *a, RelEntry *r, int col, const char *data, size_t len,
			   ValueBuf *buf, Value *out, char *err, size_t errsize)
{
	bool ok;

	/* pgoutput sends 'b' for every type with a send function: one that
	 * is not read in binary means the stream should have gone back to
	 * text at its Relation message (stream.c) */
	if (!values_binary_supported(r->cols[col].type_oid, r->types[col], a->server_version)) {
		snprintf(err, errsize, "a value in binary format of type OID %u, which pgmirror "
			 "reads only in text format", (unsigned)r->cols[col].type_oid);
		return false;
	}
	ok = values_convert_binary(r->cols[col].type_oid, r->types[col], a->server_version, data,
				   len, buf, out, err, errsize);
	if (buf->cap > VALUES_BUF_KEEP)
		a->big_bufs = r->big_bufs = true;
	return ok;
}

/*
 * Converts a tuple into vals. is_new: 'u' means "keep the current value"
 * (keep[i]); in an old tuple it means the column cannot identify the row
 * (used[i] false). For a key tuple ('K'), only key columns identify the
 * row; the others are sent as NULL and mean nothing.
 */
bool apply_convert_tuple(Applier *a, RelEntry *r, const PgoTuple *tup, char kind, bool is_new,
			 const char *what)
{
	Value *vals = is_new ? r->newvals : r->oldvals;
	ValueBuf *bufs = is_new ? r->newbufs : r->oldbufs;
	char err[256];

	a->bad_value = false;
	if (tup->ncols != r->ncols) {
		errbuf_set(&a->err, "protocol error: %s for \"%s\" has %u columns, its Relation "
			  "message %d", what, r->display, tup->ncols, r->ncols);
		return false;
	}
	for (int i = 0; i < r->ncols; i++) {
		const PgoValue *v = &tup->cols[i];

		if (is_new)
			r->keep[i] = false;
		else
			r->used[i] = kind == 'O' || r->is_key[i];
		switch (v->kind) {
		case PGO_COL_NULL:
			vals[i].kind = VAL_NULL;
			break;
		case PGO_COL_UNCHANGED:
			vals[i].kind = VAL_NULL;
			if (is_new)
				r->keep[i] = true;
			else
				r->used[i] = false;
			break;
		case PGO_COL_TEXT:
		case PGO_COL_BINARY:
			if (!(v->kind == PGO_COL_TEXT
			      ? apply_convert_value(a, r, i, (const char *)v->data, v->len, &bufs[i],
						    &vals[i], err, sizeof(err))
			      : convert_binary(a, r, i, (const char *)v->data, v->len, &bufs[i],
					       &vals[i], err, sizeof(err)))) {
				errbuf_set(&a->err, "could not apply %s to \"%s\": column \"%s\": %s",
					  what, r->display, r->cols[i].name, err);
				/* a value refused, not one in a format the stream
				 * should not have sent (convert_binary()) */
				a->bad_value = v->kind == PGO_COL_TEXT ||
					       values_binary_supported(r->cols[i].type_oid,
								       r->types[i],
								       a->server_version);
				return false;
			}
			break;
		default:
			errbuf_set(&a->err, "protocol error: %s for \"%s\": column \"%s\" has "
				  "unknown kind 0x%02x", what, r->display, r->cols[i].name,
				  (unsigned char)v->kind);
			return false;
		}
	}
	return true;
}

/*
 * A change's tuple could not be converted (apply_convert_tuple() failed). A value
 * the mirror cannot store is a reason of its table, which waits (its
 * mirror table goes in this transaction, with its rows of it; its changes
 * are skipped until a check can copy it), while the others' changes of the
 * transaction are applied: true then, the change skipped. Else false, the
 * error set.
 */
bool apply_tuple_failed(Applier *a, RelEntry *r)
{
	char lsn[LSN_TEXT_SIZE], *why;
	bool waits;

	if (!a->bad_value || a->sync_mode || r->table == NULL)
		return false;
	why = xasprintf("%s (in the transaction committed at %s), a value the mirror cannot "
			"store; the table is copied again once the source holds no such value",
			a->err.text, lsn_format(a->txn_final_lsn, lsn));
	waits = apply_wait_table(a, r, why);
	free(why);
	return waits;
}

/* Without a transaction and without a mirror table: --verify only reads. */
static RelEntry *rel_described(Applier *a, uint32_t relid)
{
	RelEntry *r = apply_rel_find(a, relid);

	if (r != NULL)
		return r;
	errbuf_set(&a->err, "no Relation message described relation OID %u", relid);
	return NULL;
}

bool apply_relation_types(Applier *a, uint32_t relid, const ColumnType **types, int *ncols)
{
	RelEntry *r = rel_described(a, relid);

	if (r == NULL)
		return false;
	*types = r->types;
	*ncols = r->ncols;
	return true;
}

bool apply_convert_row(Applier *a, uint32_t relid, const PgoTuple *tup, const Value **vals)
{
	RelEntry *r;

	if (a->big_bufs)
		apply_trim_scratch(a); /* the last row's values are used by now */
	if ((r = rel_described(a, relid)) == NULL ||
	    !apply_convert_tuple(a, r, tup, 'N', true, "a row"))
		return false;
	*vals = r->newvals;
	return true;
}

/*
 * apply_types.c: the applier's type cache. A column's type is known when
 * it is built in (values.h); any other is asked of the source's catalog
 * once (catalog.h) and kept, with the name the stream's Type message gave
 * it, for a type dropped since.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "apply_internal.h"

static TypeEntry *type_find(Applier *a, uint32_t oid)
{
	for (size_t i = 0; i < a->ntypes; i++)
		if (a->types[i].oid == oid)
			return &a->types[i];
	return NULL;
}

static TypeEntry *type_get(Applier *a, uint32_t oid)
{
	TypeEntry *t = type_find(a, oid);

	if (t == NULL) {
		a->types = xreallocarray(a->types, a->ntypes + 1, sizeof(TypeEntry));
		t = &a->types[a->ntypes++];
		memset(t, 0, sizeof(*t));
		t->oid = oid;
	}
	return t;
}

/*
 * How a column of type oid is stored, and the type's name. Built-in types
 * are known; others are asked of the source's catalog once: a domain is
 * stored as its base type, an array of anything as a JSON array, enums and
 * the rest as text.
 *
 * The stream replays history, so the type may have been dropped since
 * (with the column, or after a retype). Then its values are stored as the
 * text the stream sends, under the name the Type message before the
 * Relation gave: the column is gone or retyped on the source by now, and
 * a later Relation message says so.
 */
bool apply_resolve_type(Applier *a, uint32_t oid, int32_t typmod, int depth,
			ColumnType *out, const char **name)
{
	TypeEntry *t;
	SourceType st = {0};
	ColumnType ct = {VT_TEXT, VT_TEXT, ','};
	const char *dummy;
	bool ok = true;

	if (values_builtin_type(oid, typmod, out)) {
		*name = values_builtin_type_name(oid);
		return true;
	}
	if ((t = type_find(a, oid)) != NULL && t->name != NULL) {
		*out = t->type;
		*name = t->name;
		return true;
	}
	if (depth > 8) {
		errbuf_set(&a->err, "type with OID %u nests domains or arrays too deeply", oid);
		return false;
	}
	if (!a->catalog->type_info(a->catalog->ctx, oid, &st)) {
		apply_catalog_failed(a);
		errbuf_set(&a->err, "could not look up the type with OID %u on the source: %s", oid,
			  a->catalog->error(a->catalog->ctx));
		return false;
	}
	if (st.name == NULL) {
		t = type_find(a, oid);
		if (t == NULL || t->sent_name == NULL) {
			errbuf_set(&a->err, "type with OID %u no longer exists on the source, and the "
				  "stream did not name it", oid);
			return false;
		}
		st.name = xstrdup(t->sent_name); /* stored as text, as sent */
	} else if (st.typtype == 'd') {
		ok = apply_resolve_type(a, st.basetype, st.typmod, depth + 1, &ct, &dummy);
	} else if (st.elemtype != 0) {
		ColumnType elem;

		ok = apply_resolve_type(a, st.elemtype, typmod, depth + 1, &elem, &dummy);
		ct.vt = VT_ARRAY;
		ct.elem_vt = elem.vt == VT_ARRAY ? VT_TEXT : elem.vt;
		ct.delim = st.elemdelim;
	}
	if (ok) {
		t = type_get(a, oid); /* the recursion may have moved the array */
		free(t->name);
		t->name = st.name;
		st.name = NULL;
		t->type = ct;
		*out = ct;
		*name = t->name;
	}
	source_type_clear(&st);
	return ok;
}

/*
 * A Type message comes before a Relation message whose columns have a type
 * that is not built in. It may have changed: look it up again. Its name is
 * kept for a type dropped since (the name of a domain's base type, as
 * pgoutput sends it).
 */
bool apply_type(Applier *a, const PgoType *t)
{
	TypeEntry *e = type_get(a, t->oid);

	free(e->name);
	e->name = NULL;
	free(e->sent_name);
	e->sent_name = xstrdup(t->typname);
	return true;
}

const char *apply_type_sent_name(Applier *a, uint32_t oid)
{
	TypeEntry *e = type_find(a, oid);

	return e != NULL ? e->sent_name : NULL;
}

void apply_types_free(Applier *a)
{
	for (size_t i = 0; i < a->ntypes; i++) {
		free(a->types[i].name);
		free(a->types[i].sent_name);
	}
	free(a->types);
	a->types = NULL;
	a->ntypes = 0;
}

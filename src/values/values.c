/*
 * values.c: how a source type is mirrored, and the entry point that
 * converts one value. It owns the table of built-in types (OID, name,
 * ValueType, array delimiter), the declared SQLite type of each ValueType,
 * the retype rules (which stored values can become those of a column the
 * source retyped), and values_convert(), which hands each ValueType to its
 * converter in values_scalar.c, values_time.c or values_array.c.
 *
 * The bytes come from the network, so every parser of the module takes an
 * explicit length, never reads past it, and refuses anything PostgreSQL
 * would not have written instead of guessing. A result that differs from
 * the input is built in the caller's ValueBuf, which grows as needed and is
 * reused: once it is warm, converting a row allocates nothing. After a huge
 * value the caller frees it with values_buf_trim().
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "values_internal.h"


/* ---------------------------------------------------------------------
 * Built-in types
 * ------------------------------------------------------------------ */

/*
 * The built-in types a table column can have, from PostgreSQL's
 * src/include/catalog/pg_type.dat (pseudo-types, catalog row types and
 * catalog-internal types are left out: no user table has them). An array
 * type names its element; its ValueType comes from the element's.
 */
typedef struct TypeEntry {
	uint32_t oid;
	uint32_t elem;       /* arrays: the element type's OID; else 0 */
	const char *name;    /* pg_type.typname */
	ValueType vt;        /* scalars; numeric is refined by typmod */
	char delim;          /* pg_type.typdelim: between it in an array */
} TypeEntry;

#define T(oid, name, vt) { oid, 0, name, vt, ',' }
#define TD(oid, name, vt, delim) { oid, 0, name, vt, delim }
#define A(oid, name, elem) { oid, elem, name, VT_ARRAY, ',' }

static const TypeEntry builtin_types[] = {
	T(16, "bool", VT_BOOL),		A(1000, "_bool", 16),
	T(17, "bytea", VT_BYTEA),	A(1001, "_bytea", 17),
	T(18, "char", VT_TEXT),		A(1002, "_char", 18),
	T(19, "name", VT_TEXT),		A(1003, "_name", 19),
	T(20, "int8", VT_INT),		A(1016, "_int8", 20),
	T(21, "int2", VT_INT),		A(1005, "_int2", 21),
	T(22, "int2vector", VT_TEXT),	A(1006, "_int2vector", 22),
	T(23, "int4", VT_INT),		A(1007, "_int4", 23),
	T(24, "regproc", VT_TEXT),	A(1008, "_regproc", 24),
	T(25, "text", VT_TEXT),		A(1009, "_text", 25),
	T(26, "oid", VT_INT),		A(1028, "_oid", 26),
	T(27, "tid", VT_TEXT),		A(1010, "_tid", 27),
	T(28, "xid", VT_TEXT),		A(1011, "_xid", 28),
	T(29, "cid", VT_TEXT),		A(1012, "_cid", 29),
	T(30, "oidvector", VT_TEXT),	A(1013, "_oidvector", 30),
	T(114, "json", VT_JSON),	A(199, "_json", 114),
	T(142, "xml", VT_TEXT),		A(143, "_xml", 142),
	T(5069, "xid8", VT_TEXT),	A(271, "_xid8", 5069),
	T(600, "point", VT_TEXT),	A(1017, "_point", 600),
	T(601, "lseg", VT_TEXT),	A(1018, "_lseg", 601),
	T(602, "path", VT_TEXT),	A(1019, "_path", 602),
	/* box is the one built-in whose array delimiter is ';': a box's
	 * text has commas of its own. */
	TD(603, "box", VT_TEXT, ';'),	A(1020, "_box", 603),
	T(604, "polygon", VT_TEXT),	A(1027, "_polygon", 604),
	T(628, "line", VT_TEXT),	A(629, "_line", 628),
	T(700, "float4", VT_FLOAT),	A(1021, "_float4", 700),
	T(701, "float8", VT_FLOAT),	A(1022, "_float8", 701),
	T(718, "circle", VT_TEXT),	A(719, "_circle", 718),
	T(790, "money", VT_TEXT),	A(791, "_money", 790),
	T(829, "macaddr", VT_TEXT),	A(1040, "_macaddr", 829),
	T(869, "inet", VT_TEXT),	A(1041, "_inet", 869),
	T(650, "cidr", VT_TEXT),	A(651, "_cidr", 650),
	T(774, "macaddr8", VT_TEXT),	A(775, "_macaddr8", 774),
	T(1033, "aclitem", VT_TEXT),	A(1034, "_aclitem", 1033),
	T(1042, "bpchar", VT_TEXT),	A(1014, "_bpchar", 1042),
	T(1043, "varchar", VT_TEXT),	A(1015, "_varchar", 1043),
	T(1082, "date", VT_DATE),	A(1182, "_date", 1082),
	T(1083, "time", VT_TEXT),	A(1183, "_time", 1083),
	T(1114, "timestamp", VT_TIMESTAMP), A(1115, "_timestamp", 1114),
	T(1184, "timestamptz", VT_TIMESTAMPTZ), A(1185, "_timestamptz", 1184),
	T(1186, "interval", VT_TEXT),	A(1187, "_interval", 1186),
	T(1266, "timetz", VT_TEXT),	A(1270, "_timetz", 1266),
	T(1560, "bit", VT_TEXT),	A(1561, "_bit", 1560),
	T(1562, "varbit", VT_TEXT),	A(1563, "_varbit", 1562),
	T(1700, "numeric", VT_NUMERIC_TEXT), A(1231, "_numeric", 1700),
	T(1790, "refcursor", VT_TEXT),	A(2201, "_refcursor", 1790),
	T(2202, "regprocedure", VT_TEXT), A(2207, "_regprocedure", 2202),
	T(2203, "regoper", VT_TEXT),	A(2208, "_regoper", 2203),
	T(2204, "regoperator", VT_TEXT), A(2209, "_regoperator", 2204),
	T(2205, "regclass", VT_TEXT),	A(2210, "_regclass", 2205),
	T(4191, "regcollation", VT_TEXT), A(4192, "_regcollation", 4191),
	T(2206, "regtype", VT_TEXT),	A(2211, "_regtype", 2206),
	T(4096, "regrole", VT_TEXT),	A(4097, "_regrole", 4096),
	T(4089, "regnamespace", VT_TEXT), A(4090, "_regnamespace", 4089),
	T(2950, "uuid", VT_TEXT),	A(2951, "_uuid", 2950),
	T(3220, "pg_lsn", VT_TEXT),	A(3221, "_pg_lsn", 3220),
	T(3614, "tsvector", VT_TEXT),	A(3643, "_tsvector", 3614),
	T(3615, "tsquery", VT_TEXT),	A(3645, "_tsquery", 3615),
	T(3734, "regconfig", VT_TEXT),	A(3735, "_regconfig", 3734),
	T(3769, "regdictionary", VT_TEXT), A(3770, "_regdictionary", 3769),
	T(3802, "jsonb", VT_JSON),	A(3807, "_jsonb", 3802),
	T(4072, "jsonpath", VT_TEXT),	A(4073, "_jsonpath", 4072),
	T(2970, "txid_snapshot", VT_TEXT), A(2949, "_txid_snapshot", 2970),
	T(5038, "pg_snapshot", VT_TEXT), A(5039, "_pg_snapshot", 5038),
	T(3904, "int4range", VT_TEXT),	A(3905, "_int4range", 3904),
	T(3906, "numrange", VT_TEXT),	A(3907, "_numrange", 3906),
	T(3908, "tsrange", VT_TEXT),	A(3909, "_tsrange", 3908),
	T(3910, "tstzrange", VT_TEXT),	A(3911, "_tstzrange", 3910),
	T(3912, "daterange", VT_TEXT),	A(3913, "_daterange", 3912),
	T(3926, "int8range", VT_TEXT),	A(3927, "_int8range", 3926),
	T(4451, "int4multirange", VT_TEXT), A(6150, "_int4multirange", 4451),
	T(4532, "nummultirange", VT_TEXT), A(6151, "_nummultirange", 4532),
	T(4533, "tsmultirange", VT_TEXT), A(6152, "_tsmultirange", 4533),
	T(4534, "tstzmultirange", VT_TEXT), A(6153, "_tstzmultirange", 4534),
	T(4535, "datemultirange", VT_TEXT), A(6155, "_datemultirange", 4535),
	T(4536, "int8multirange", VT_TEXT), A(6157, "_int8multirange", 4536),
};

#undef T
#undef TD
#undef A

/* Largest numeric precision whose values a double holds exactly. */
#define NUMERIC_EXACT_PRECISION 15

/* PostgreSQL's VARHDRSZ: typmods of numeric are offset by it. */
#define VARHDRSZ 4

/*
 * numeric(p,s)'s typmod is ((p << 16) | s) + VARHDRSZ; a smaller one (-1)
 * means no precision was declared. Since PostgreSQL 15 the scale may be
 * negative, which only the low 16 bits see.
 */
static bool numeric_typmod(int32_t typmod, int32_t *precision, int32_t *scale)
{
	*precision = -1;
	*scale = -1;
	if (typmod < VARHDRSZ)
		return false;
	*precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	*scale = (typmod - VARHDRSZ) & 0xffff;
	return true;
}

static const TypeEntry *type_lookup(uint32_t oid)
{
	/* Called once per column when a Relation arrives: a scan will do. */
	for (size_t i = 0; i < sizeof builtin_types / sizeof builtin_types[0]; i++)
		if (builtin_types[i].oid == oid)
			return &builtin_types[i];
	return NULL;
}

static ValueType scalar_vt(const TypeEntry *t, int32_t typmod)
{
	int32_t precision, scale;

	if (t->oid == OID_NUMERIC && numeric_typmod(typmod, &precision, &scale) &&
	    precision >= 1 && precision <= NUMERIC_EXACT_PRECISION)
		return VT_NUMERIC_NUM;
	return t->vt;
}

bool values_builtin_type(uint32_t type_oid, int32_t typmod, ColumnType *out)
{
	const TypeEntry *t = type_lookup(type_oid);

	if (t == NULL)
		return false;
	if (t->elem != 0) {
		const TypeEntry *elem = type_lookup(t->elem);

		/* An array column's typmod is its element's (numeric(10,2)[]). */
		out->vt = VT_ARRAY;
		out->elem_vt = scalar_vt(elem, typmod);
		out->delim = elem->delim;
	} else {
		out->vt = scalar_vt(t, typmod);
		out->elem_vt = VT_TEXT;
		out->delim = ',';
	}
	return true;
}

uint32_t values_array_elem_oid(uint32_t type_oid)
{
	const TypeEntry *t = type_lookup(type_oid);

	return t != NULL ? t->elem : 0;
}

const char *values_builtin_type_name(uint32_t type_oid)
{
	const TypeEntry *t = type_lookup(type_oid);

	return t != NULL ? t->name : NULL;
}

const char *values_declared_type(ColumnType type)
{
	switch (type.vt) {
	case VT_BOOL:
	case VT_INT:
		return "INTEGER";
	case VT_FLOAT:
		return "REAL";
	case VT_NUMERIC_NUM:
		return "NUMERIC";
	case VT_BYTEA:
		return "BLOB";
	default:
		return "TEXT";
	}
}

/* ---------------------------------------------------------------------
 * Retype rules
 * ------------------------------------------------------------------ */

static bool is_plain_text(uint32_t oid)
{
	return oid == OID_TEXT || oid == OID_VARCHAR;
}

ValueRetype values_retype(uint32_t old_oid, int32_t old_typmod, int old_vt,
			  uint32_t new_oid, int32_t new_typmod, ColumnType new_type)
{
	int32_t precision, scale_old, scale_new;

	if (old_oid == new_oid && old_typmod == new_typmod)
		return RETYPE_COPY;
	if (is_plain_text(old_oid) && is_plain_text(new_oid))
		return RETYPE_COPY;
	if (old_vt == VT_INT) {
		if (new_type.vt == VT_INT || new_type.vt == VT_NUMERIC_NUM)
			return RETYPE_COPY;
		if (new_oid == OID_FLOAT8)
			return RETYPE_REAL;
		if (is_plain_text(new_oid) ||
		    (new_type.vt == VT_NUMERIC_TEXT && new_typmod == -1))
			return RETYPE_TEXT;
		return RETYPE_NONE;
	}
	if (old_oid == OID_NUMERIC && new_oid == OID_NUMERIC) {
		/* The same storage, and no rounding: the same scale, or none
		 * at all on the new column. */
		numeric_typmod(old_typmod, &precision, &scale_old);
		numeric_typmod(new_typmod, &precision, &scale_new);
		if (old_vt == (int) new_type.vt &&
		    (scale_old == scale_new ||
		     (new_type.vt == VT_NUMERIC_TEXT && new_typmod == -1)))
			return RETYPE_COPY;
	}
	return RETYPE_NONE;
}

/* ---------------------------------------------------------------------
 * Converting one value
 * ------------------------------------------------------------------ */

bool values_convert(ColumnType type, const char *text, size_t len,
		    ValueBuf *buf, Value *out, char *err, size_t errsize)
{
	Err e = { err, errsize };

	memset(out, 0, sizeof *out);
	out->kind = VAL_NULL;
	buf->len = 0;
	if (text == NULL) {
		if (len != 0)
			return values_fail(&e, "value of %zu bytes has no data", len);
		text = values_empty;
	}

	switch (type.vt) {
	case VT_TEXT:
	case VT_JSON:
		if (!values_text_check_utf8(text, len, &e))
			return false;
		values_set_text(out, VAL_TEXT, text, len);
		return true;
	case VT_DATE:
		if (len == 0)
			return values_invalid(&e, VT_DATE, text, len);
		if (!values_text_check_utf8(text, len, &e))
			return false;
		values_set_text(out, VAL_TEXT, text, len);
		return true;
	case VT_BOOL:
		if (!equals(text, len, "t") && !equals(text, len, "f"))
			return values_invalid(&e, VT_BOOL, text, len);
		out->kind = VAL_INT;
		out->i = text[0] == 't';
		return true;
	case VT_INT:
		return values_convert_int(text, len, out, &e);
	case VT_FLOAT:
		return values_convert_float(text, len, out, &e);
	case VT_NUMERIC_NUM:
		return values_convert_numeric_num(text, len, out, &e);
	case VT_NUMERIC_TEXT:
		return values_convert_numeric_text(text, len, out, &e);
	case VT_BYTEA:
		return values_convert_bytea(text, len, buf, out, &e);
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		if (values_is_infinity_word(text, len)) {
			values_set_text(out, VAL_TEXT, text, len);
			return true;
		}
		if (!(type.vt == VT_TIMESTAMP ? values_timestamp_append(buf, text, len, &e) :
		      values_timestamptz_append(buf, text, len, &e)))
			return false;
		values_set_from_buf(out, VAL_TEXT, buf);
		return true;
	case VT_ARRAY:
		if (!values_array_delim_usable(type.delim))
			return values_fail(&e, "arrays with element delimiter %d are not supported",
					   (unsigned char) type.delim);
		if (!values_array_to_json(type.elem_vt, type.delim, text, len, buf, &e))
			return false;
		values_set_from_buf(out, VAL_TEXT, buf);
		return true;
	}
	return values_fail(&e, "unknown value type %d", (int) type.vt);
}

void values_buf_free(ValueBuf *buf)
{
	free(buf->data);
	buf->data = NULL;
	buf->len = 0;
	buf->cap = 0;
}

void values_buf_trim(ValueBuf *buf)
{
	if (buf->cap > VALUES_BUF_KEEP)
		values_buf_free(buf);
}

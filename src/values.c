/*
 * values.c: one column value, as pgoutput sends it (PostgreSQL's text
 * output under the session settings listed in values.h), becomes the value
 * the mirror binds, per the Values table of the contract.
 *
 * The bytes come from the network, so every parser here takes an explicit
 * length, never reads past it, and refuses anything PostgreSQL would not
 * have written instead of guessing. A result that differs from the input is
 * built in the caller's ValueBuf, which grows as needed and is reused: once
 * it is warm, converting a row allocates nothing. After a huge value the
 * caller frees it with values_buf_trim().
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/values.h"

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
#define TYPMOD_OFFSET 4

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
	if (t->oid == OID_NUMERIC && typmod >= TYPMOD_OFFSET) {
		/* typmod = ((p << 16) | s) + 4; since PostgreSQL 15 the scale
		 * may be negative, which only the low bits see. */
		int32_t precision = ((typmod - TYPMOD_OFFSET) >> 16) & 0xffff;

		if (precision >= 1 && precision <= NUMERIC_EXACT_PRECISION)
			return VT_NUMERIC_NUM;
	}
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

/* The SQL name used in messages: the ValueType is all we are told, so an
 * int2 and an int8 column both say "integer". */
static const char *vt_sql_name(ValueType vt)
{
	switch (vt) {
	case VT_BOOL:
		return "boolean";
	case VT_INT:
		return "integer";
	case VT_FLOAT:
		return "double precision";
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
		return "numeric";
	case VT_BYTEA:
		return "bytea";
	case VT_DATE:
		return "date";
	case VT_TIMESTAMP:
		return "timestamp";
	case VT_TIMESTAMPTZ:
		return "timestamp with time zone";
	case VT_JSON:
		return "json";
	case VT_ARRAY:
		return "array";
	default:
		return "text";
	}
}

/* ---------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------ */

/* Where a message goes; err may be NULL when the caller does not care. */
typedef struct Err {
	char *buf;
	size_t size;
} Err;

/* Bytes of a bad value quoted in a message: enough to recognise it, few
 * enough to keep a log line one line. */
#define ERR_VALUE_MAX 40
/* Each quoted byte takes at most 4 characters (\xNN), plus quotes and
 * "..." and the NUL. */
#define ERR_QUOTED_SIZE (ERR_VALUE_MAX * 4 + 8)

/*
 * s[0..n) as "...", C-escaped so that a message is one printable line
 * whatever the bytes, and cut at ERR_VALUE_MAX bytes.
 */
static void quote_value(char out[ERR_QUOTED_SIZE], const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	size_t show = n > ERR_VALUE_MAX ? ERR_VALUE_MAX : n;

	out[k++] = '"';
	for (size_t i = 0; i < show; i++) {
		unsigned char c = (unsigned char) s[i];

		if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char) c;
		} else if (c >= 0x20 && c < 0x7f) {
			out[k++] = (char) c;
		} else {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 0xf];
		}
	}
	out[k++] = '"';
	if (show < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

static bool PGM_PRINTF(2, 3) fail(Err *e, const char *fmt, ...)
{
	va_list ap;

	if (e->buf != NULL && e->size > 0) {
		va_start(ap, fmt);
		vsnprintf(e->buf, e->size, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* "WHAT for type TYPE: "VALUE"", the form of every value error. */
static bool fail_value(Err *e, const char *what, ValueType vt,
		       const char *s, size_t n)
{
	char q[ERR_QUOTED_SIZE];

	quote_value(q, s, n);
	return fail(e, "%s for type %s: %s", what, vt_sql_name(vt), q);
}

static bool invalid(Err *e, ValueType vt, const char *s, size_t n)
{
	return fail_value(e, "invalid input", vt, s, n);
}

static bool out_of_range(Err *e, ValueType vt, const char *s, size_t n)
{
	return fail_value(e, "value out of range", vt, s, n);
}

/* ---------------------------------------------------------------------
 * The output buffer
 * ------------------------------------------------------------------ */

static void buf_reserve(ValueBuf *b, size_t extra)
{
	size_t need, cap;

	if (extra > SIZE_MAX - b->len)
		/* A size that overflows ends the program, as xreallocarray
		 * does; let it say so. */
		b->data = xreallocarray(b->data, SIZE_MAX, 2);
	need = b->len + extra;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	b->data = xreallocarray(b->data, cap, 1);
	b->cap = cap;
}

/* n * k + add, saturating: a saturated size fails in buf_reserve. */
static size_t size_mul_add(size_t n, size_t k, size_t add)
{
	if (n > (SIZE_MAX - add) / k)
		return SIZE_MAX;
	return n * k + add;
}

static void buf_put(ValueBuf *b, const char *p, size_t n)
{
	buf_reserve(b, n);
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void buf_puts(ValueBuf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

static void buf_putc(ValueBuf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
}

/* A zero-length TEXT or BLOB must still have a pointer: SQLite binds a
 * NULL pointer as NULL, and an empty bytea is not NULL. */
static const char empty[1] = "";

static void set_text(Value *out, ValueKind kind, const char *p, size_t n)
{
	out->kind = kind;
	out->p = p != NULL ? p : empty;
	out->len = n;
}

static void set_from_buf(Value *out, ValueKind kind, const ValueBuf *b)
{
	set_text(out, kind, b->data, b->len);
}

/* ---------------------------------------------------------------------
 * Small lexical helpers (never the C locale's: its classes vary)
 * ------------------------------------------------------------------ */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool equals(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && memcmp(s, word, n) == 0;
}

static bool equals_nocase(const char *s, size_t n, const char *word)
{
	if (n != strlen(word))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if (c != word[i])
			return false;
	}
	return true;
}

/*
 * UTF-8 checked one byte at a time, so that it can run over a stream that
 * is being unescaped. Rejects what RFC 3629 rejects: overlong forms,
 * surrogates, code points past U+10FFFF.
 */
typedef struct Utf8State {
	int need;              /* continuation bytes still expected */
	unsigned char lo, hi;  /* allowed range of the next one */
} Utf8State;

static bool utf8_step(Utf8State *st, unsigned char c)
{
	if (st->need > 0) {
		if (c < st->lo || c > st->hi)
			return false;
		st->need--;
		st->lo = 0x80;
		st->hi = 0xbf;
		return true;
	}
	st->lo = 0x80;
	st->hi = 0xbf;
	if (c < 0x80)
		return true;
	if (c >= 0xc2 && c <= 0xdf) {
		st->need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		st->need = 2;
		if (c == 0xe0)
			st->lo = 0xa0;   /* overlong */
		else if (c == 0xed)
			st->hi = 0x9f;   /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		st->need = 3;
		if (c == 0xf0)
			st->lo = 0x90;   /* overlong */
		else if (c == 0xf4)
			st->hi = 0x8f;   /* past U+10FFFF */
	} else {
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------------
 * Integers
 * ------------------------------------------------------------------ */

typedef enum ParseResult { PARSE_OK, PARSE_SYNTAX, PARSE_RANGE } ParseResult;

/* [+-]digits, the whole of s, into an int64. */
static ParseResult int_parse(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false, range = false;
	uint64_t v = 0, limit;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == n)
		return PARSE_SYNTAX;
	limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
	for (; i < n; i++) {
		unsigned d;

		if (!is_digit(s[i]))
			return PARSE_SYNTAX;   /* a typo beats an overflow */
		d = (unsigned) (s[i] - '0');
		if (v > (limit - d) / 10)
			range = true;
		else
			v = v * 10 + d;
	}
	if (range)
		return PARSE_RANGE;
	/* INT64_MIN has no positive counterpart to negate. */
	if (neg)
		*out = v > (uint64_t) INT64_MAX ? INT64_MIN : -(int64_t) v;
	else
		*out = (int64_t) v;
	return PARSE_OK;
}

static void int_append(ValueBuf *b, int64_t v)
{
	char tmp[24];
	size_t k = sizeof tmp;
	uint64_t u = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;

	do {
		tmp[--k] = (char) ('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		tmp[--k] = '-';
	buf_put(b, tmp + k, sizeof tmp - k);
}

/* ---------------------------------------------------------------------
 * Decimal numbers (float8 and numeric text)
 * ------------------------------------------------------------------ */

/* A decimal as written: [+-]digits[.digits][e[+-]digits]. */
typedef struct Decimal {
	bool neg;
	const char *ip;       /* integer digits */
	size_t ilen;
	const char *fp;       /* fraction digits */
	size_t flen;
	const char *ep;       /* exponent after the 'e', with its sign */
	size_t elen;          /* 0: no exponent */
	int64_t exp;          /* its value, clamped to +-EXP_CLAMP */
} Decimal;

/* Far past any double's range, yet safe to add sizes to in int64. */
#define EXP_CLAMP INT64_C(100000000)

static bool decimal_parse(const char *s, size_t n, bool allow_exp,
			  Decimal *d)
{
	size_t i = 0;

	memset(d, 0, sizeof *d);
	if (i < n && (s[i] == '-' || s[i] == '+'))
		d->neg = s[i++] == '-';
	d->ip = s + i;
	while (i < n && is_digit(s[i]))
		i++;
	d->ilen = (size_t) (s + i - d->ip);
	d->fp = s + i;
	if (i < n && s[i] == '.') {
		d->fp = s + ++i;
		while (i < n && is_digit(s[i]))
			i++;
		d->flen = (size_t) (s + i - d->fp);
	}
	if (d->ilen + d->flen == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;
		size_t start;

		if (!allow_exp)
			return false;
		d->ep = s + ++i;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		start = i;
		for (; i < n && is_digit(s[i]); i++)
			if (d->exp < EXP_CLAMP)
				d->exp = d->exp * 10 + (s[i] - '0');
		if (i == start)
			return false;
		if (d->exp > EXP_CLAMP)
			d->exp = EXP_CLAMP;
		if (eneg)
			d->exp = -d->exp;
		d->elen = (size_t) (s + i - d->ep);
	}
	return i == n;
}

/*
 * Significant digits handed to strtod. A double's rounding never depends
 * on more than 767 of them, so 800 plus a sticky digit for anything
 * nonzero beyond decides it exactly.
 */
#define SIG_DIGITS_MAX 800

/*
 * The double nearest d, correctly rounded. The digits are handed to strtod
 * as "DIGITSeEXP", without a decimal point: the point is the one thing the
 * C locale changes in strtod, so this is exact whatever LC_NUMERIC says.
 */
static ParseResult decimal_to_double(const Decimal *d, double *out)
{
	char tmp[1 + SIG_DIGITS_MAX + 1 + 1 + 24];
	size_t k = 0, nsig = 0;
	int64_t exp10, dropped = 0;
	bool sticky = false;
	char *end;
	double v;
	int saved_errno = errno;

	if (d->neg)
		tmp[k++] = '-';
	/* value = DIGITS * 10^(exp - flen), DIGITS = integer ++ fraction */
	for (size_t i = 0; i < d->ilen + d->flen; i++) {
		char c = i < d->ilen ? d->ip[i] : d->fp[i - d->ilen];

		if (nsig == 0 && c == '0')
			continue;
		if (nsig == SIG_DIGITS_MAX) {
			dropped++;
			sticky |= c != '0';
			continue;
		}
		tmp[k++] = c;
		nsig++;
	}
	if (nsig == 0) {
		*out = d->neg ? -0.0 : 0.0;
		return PARSE_OK;
	}
	exp10 = d->exp - (int64_t) d->flen + dropped;
	if (sticky) {
		tmp[k++] = '1';
		exp10--;
	}
	k += (size_t) snprintf(tmp + k, sizeof tmp - k, "e%" PRId64, exp10);

	errno = 0;
	v = strtod(tmp, &end);
	if (end != tmp + k) {
		errno = saved_errno;
		return PARSE_SYNTAX;
	}
	/* ERANGE also flags a subnormal result, which is a fine value; only
	 * overflow and underflow to zero are out of range (float8in). */
	if (errno == ERANGE && (v == 0.0 || isinf(v))) {
		errno = saved_errno;
		return PARSE_RANGE;
	}
	errno = saved_errno;
	*out = v;
	return PARSE_OK;
}

/*
 * d as a JSON number. PostgreSQL's output is JSON already; this also keeps
 * forms array_in would accept (".5", "+1", "1.", "007") valid JSON.
 */
static void decimal_append_json(ValueBuf *b, const Decimal *d)
{
	size_t i = 0;

	if (d->neg)
		buf_putc(b, '-');
	while (i + 1 < d->ilen && d->ip[i] == '0')
		i++;
	if (d->ilen == 0)
		buf_putc(b, '0');
	else
		buf_put(b, d->ip + i, d->ilen - i);
	if (d->flen > 0) {
		buf_putc(b, '.');
		buf_put(b, d->fp, d->flen);
	}
	if (d->elen > 0) {
		buf_putc(b, 'e');
		buf_put(b, d->ep, d->elen);
	}
}

/* The words float8out and numeric_out write for the special values. */
static bool is_nan(const char *s, size_t n)
{
	return equals(s, n, "NaN");
}

static bool is_infinity(const char *s, size_t n, bool *neg)
{
	*neg = equals(s, n, "-Infinity");
	return *neg || equals(s, n, "Infinity");
}

/* ---------------------------------------------------------------------
 * Timestamps
 * ------------------------------------------------------------------ */

/* A timestamp's fields as written. */
typedef struct Stamp {
	int64_t year;         /* astronomical: 1 BC is 0, 2 BC is -1 */
	int mon, day, hour, min, sec;
	const char *frac;     /* digits after the point */
	size_t flen;          /* 0: no fraction */
} Stamp;

/* PostgreSQL writes at least four year digits; nine is far past its
 * limit (294276 AD) and keeps every sum below in int64 and our buffers. */
#define YEAR_DIGITS_MAX 9
/* Microseconds: what PostgreSQL keeps and writes. */
#define FRAC_DIGITS 6
/* Longest stamp_append output: 10 year digits, "-MM-DD HH:MM:SS",
 * ".ffffff", " BC". */
#define STAMP_TEXT_MAX 40

/* Exactly count digits at *pos. */
static bool fixed_digits(const char *s, size_t n, size_t *pos, int count,
			 int *out)
{
	int v = 0;

	for (int k = 0; k < count; k++, (*pos)++) {
		if (*pos >= n || !is_digit(s[*pos]))
			return false;
		v = v * 10 + (s[*pos] - '0');
	}
	*out = v;
	return true;
}

static bool expect_char(const char *s, size_t n, size_t *pos, char c)
{
	if (*pos >= n || s[*pos] != c)
		return false;
	(*pos)++;
	return true;
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* "YYYY-MM-DD HH:MM:SS[.f...]" at *pos; the era is settled later. */
static bool stamp_parse_fields(const char *s, size_t n, size_t *pos, Stamp *t)
{
	size_t start = *pos;

	memset(t, 0, sizeof *t);
	while (*pos < n && is_digit(s[*pos])) {
		if (*pos - start == YEAR_DIGITS_MAX)
			return false;
		t->year = t->year * 10 + (s[(*pos)++] - '0');
	}
	if (*pos - start < 4)
		return false;
	if (!expect_char(s, n, pos, '-') ||
	    !fixed_digits(s, n, pos, 2, &t->mon) ||
	    !expect_char(s, n, pos, '-') ||
	    !fixed_digits(s, n, pos, 2, &t->day) ||
	    !expect_char(s, n, pos, ' ') ||
	    !fixed_digits(s, n, pos, 2, &t->hour) ||
	    !expect_char(s, n, pos, ':') ||
	    !fixed_digits(s, n, pos, 2, &t->min) ||
	    !expect_char(s, n, pos, ':') ||
	    !fixed_digits(s, n, pos, 2, &t->sec))
		return false;
	if (*pos < n && s[*pos] == '.') {
		t->frac = s + ++(*pos);
		while (*pos < n && is_digit(s[*pos]))
			(*pos)++;
		t->flen = (size_t) (s + *pos - t->frac);
		if (t->flen == 0 || t->flen > FRAC_DIGITS)
			return false;
	}
	return true;
}

/* The optional " BC" at *pos, then the end; applies the era and checks
 * the fields against the calendar. */
static bool stamp_finish(const char *s, size_t n, size_t *pos, Stamp *t)
{
	if (t->year == 0)
		return false;    /* neither era has a year 0 */
	if (n - *pos == 3 && memcmp(s + *pos, " BC", 3) == 0) {
		*pos = n;
		t->year = 1 - t->year;
	}
	if (*pos != n)
		return false;
	return t->mon >= 1 && t->mon <= 12 &&
	       t->day >= 1 && t->day <= days_in_month(t->year, t->mon) &&
	       t->hour <= 23 && t->min <= 59 && t->sec <= 59;
}

/*
 * Days since 1970-01-01 of a proleptic Gregorian date with an astronomical
 * year, and back (Howard Hinnant's algorithms, exact for every year that
 * fits). PostgreSQL's calendar is the same proleptic Gregorian one.
 */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* Moves t by -offset seconds, across days, months and years. */
static void stamp_shift(Stamp *t, int64_t offset)
{
	int64_t days = days_from_civil(t->year, t->mon, t->day);
	int64_t secs = t->hour * INT64_C(3600) + t->min * 60 + t->sec - offset;
	int64_t carry = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);

	secs -= carry * 86400;
	civil_from_days(days + carry, &t->year, &t->mon, &t->day);
	t->hour = (int) (secs / 3600);
	t->min = (int) (secs / 60 % 60);
	t->sec = (int) (secs % 60);
}

/* The stored form: "YYYY-MM-DD HH:MM:SS[.ffffff][ BC]". */
static void stamp_append(ValueBuf *b, const Stamp *t)
{
	char tmp[STAMP_TEXT_MAX + 24];
	bool bc = t->year <= 0;
	int k;

	k = snprintf(tmp, sizeof tmp, "%04" PRId64 "-%02d-%02d %02d:%02d:%02d",
		     bc ? 1 - t->year : t->year, t->mon, t->day,
		     t->hour, t->min, t->sec);
	buf_put(b, tmp, (size_t) k);
	if (t->flen > 0) {
		buf_putc(b, '.');
		buf_put(b, t->frac, t->flen);
		buf_put(b, "000000", FRAC_DIGITS - t->flen);
	}
	if (bc)
		buf_puts(b, " BC");
}

static bool is_infinity_word(const char *s, size_t n)
{
	return equals(s, n, "infinity") || equals(s, n, "-infinity");
}

/* timestamp: appends the stored form of s to b. */
static bool timestamp_append(ValueBuf *b, const char *s, size_t n, Err *e)
{
	Stamp t;
	size_t pos = 0;

	if (!stamp_parse_fields(s, n, &pos, &t) ||
	    !stamp_finish(s, n, &pos, &t))
		return invalid(e, VT_TIMESTAMP, s, n);
	stamp_append(b, &t);
	return true;
}

/*
 * timestamptz: "...+HH[:MM[:SS]][ BC]" (the offset is PostgreSQL's, seconds
 * included for old local mean times) to the same form in UTC.
 */
static bool timestamptz_append(ValueBuf *b, const char *s, size_t n, Err *e)
{
	Stamp t;
	size_t pos = 0;
	int oh, om = 0, os = 0;
	bool neg;
	int64_t offset;

	if (!stamp_parse_fields(s, n, &pos, &t) || pos >= n ||
	    (s[pos] != '+' && s[pos] != '-'))
		return invalid(e, VT_TIMESTAMPTZ, s, n);
	neg = s[pos++] == '-';
	if (!fixed_digits(s, n, &pos, 2, &oh))
		return invalid(e, VT_TIMESTAMPTZ, s, n);
	if (pos < n && s[pos] == ':') {
		pos++;
		if (!fixed_digits(s, n, &pos, 2, &om))
			return invalid(e, VT_TIMESTAMPTZ, s, n);
		if (pos < n && s[pos] == ':') {
			pos++;
			if (!fixed_digits(s, n, &pos, 2, &os))
				return invalid(e, VT_TIMESTAMPTZ, s, n);
		}
	}
	if (oh > 23 || om > 59 || os > 59 || !stamp_finish(s, n, &pos, &t))
		return invalid(e, VT_TIMESTAMPTZ, s, n);
	offset = oh * INT64_C(3600) + om * 60 + os;
	if (offset != 0)
		stamp_shift(&t, neg ? -offset : offset);
	stamp_append(b, &t);
	return true;
}

/* ---------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------ */

/*
 * Nesting a JSON element may have: PostgreSQL's own parser stops at about
 * this depth (JSON_TD_MAX_STACK), and a bit per level keeps the check off
 * the heap.
 */
#define JSON_DEPTH_MAX 6400

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t json_skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && json_space(s[i]))
		i++;
	return i;
}

/* The string at *pos (on its '"'): escapes well formed, no raw control
 * characters, valid UTF-8. */
static bool json_string(const char *s, size_t n, size_t *pos)
{
	Utf8State st = { 0 };
	size_t i = *pos + 1;

	while (i < n) {
		unsigned char c = (unsigned char) s[i];

		if (st.need == 0 && c == '"') {
			*pos = i + 1;
			return true;
		}
		if (st.need == 0 && c == '\\') {
			if (++i >= n)
				return false;
			if (s[i] == 'u') {
				for (int k = 0; k < 4; k++)
					if (++i >= n || hex_value(s[i]) < 0)
						return false;
			} else if (strchr("\"\\/bfnrt", s[i]) == NULL || s[i] == '\0') {
				return false;
			}
			i++;
			continue;
		}
		if (c < 0x20 || !utf8_step(&st, c))
			return false;
		i++;
	}
	return false;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at *pos. */
static bool json_number(const char *s, size_t n, size_t *pos)
{
	size_t i = *pos, start;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else {
		start = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return false;
	}
	if (i < n && s[i] == '.') {
		start = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return false;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		start = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return false;
	}
	*pos = i;
	return true;
}

/*
 * Whether s[0..n) is one JSON value (RFC 8259). A json element goes into
 * the array's JSON as it is, so a broken one would break the whole array.
 */
static bool json_valid(const char *s, size_t n)
{
	unsigned char is_object[JSON_DEPTH_MAX / 8];
	int depth = 0;
	size_t i = 0;
	enum { VALUE, KEY, AFTER } state = VALUE;

#define TOP_IS_OBJECT() (is_object[(depth - 1) / 8] & (1u << ((depth - 1) % 8)))
	for (;;) {
		i = json_skip_space(s, n, i);
		if (state == KEY) {
			if (i >= n || s[i] != '"' || !json_string(s, n, &i))
				return false;
			i = json_skip_space(s, n, i);
			if (i >= n || s[i] != ':')
				return false;
			i++;
			state = VALUE;
		} else if (state == VALUE) {
			if (i >= n)
				return false;
			if (s[i] == '{' || s[i] == '[') {
				bool obj = s[i] == '{';

				if (depth == JSON_DEPTH_MAX)
					return false;
				if (obj)
					is_object[depth / 8] |= (unsigned char) (1u << (depth % 8));
				else
					is_object[depth / 8] &= (unsigned char) ~(1u << (depth % 8));
				depth++;
				i = json_skip_space(s, n, i + 1);
				if (i < n && s[i] == (obj ? '}' : ']')) {
					i++;
					depth--;
					state = AFTER;
				} else {
					state = obj ? KEY : VALUE;
				}
				continue;
			}
			if (s[i] == '"') {
				if (!json_string(s, n, &i))
					return false;
			} else if (n - i >= 4 && memcmp(s + i, "true", 4) == 0) {
				i += 4;
			} else if (n - i >= 5 && memcmp(s + i, "false", 5) == 0) {
				i += 5;
			} else if (n - i >= 4 && memcmp(s + i, "null", 4) == 0) {
				i += 4;
			} else if (!json_number(s, n, &i)) {
				return false;
			}
			state = AFTER;
		} else {
			if (depth == 0)
				return i == n;
			if (i >= n)
				return false;
			if (s[i] == ',') {
				i++;
				state = TOP_IS_OBJECT() ? KEY : VALUE;
			} else if (s[i] == (TOP_IS_OBJECT() ? '}' : ']')) {
				i++;
				depth--;
			} else {
				return false;
			}
		}
	}
#undef TOP_IS_OBJECT
}

/* ---------------------------------------------------------------------
 * Bytea
 * ------------------------------------------------------------------ */

/* Whether s is bytea_output=hex: "\x" and pairs of hex digits. */
static bool bytea_hex_valid(const char *s, size_t n)
{
	if (n < 2 || s[0] != '\\' || s[1] != 'x' || (n - 2) % 2 != 0)
		return false;
	for (size_t i = 2; i < n; i++)
		if (hex_value(s[i]) < 0)
			return false;
	return true;
}

/* ---------------------------------------------------------------------
 * Arrays
 * ------------------------------------------------------------------ */

/* PostgreSQL's MAXDIM. */
#define ARRAY_DIM_MAX 6

/* array_in's idea of white space around elements and braces. */
static bool array_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* Undoes array_out's quoting: a backslash takes the next byte as is.
 * Returns the unescaped length (never more than n). */
static size_t array_unescape(char *dst, const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n)
			i++;
		dst[k++] = s[i];
	}
	return k;
}


/*
 * Appends an element's text as a JSON string. escaped: s still has
 * array_out's backslashes, which are undone on the way. Text is UTF-8 here
 * (the session asks for it); anything else would make the whole array
 * invalid JSON, so it is refused rather than mangled.
 */
static bool json_string_append(ValueBuf *b, const char *s, size_t n,
			       bool escaped, Err *e)
{
	static const char hex[] = "0123456789abcdef";
	Utf8State st = { 0 };
	bool valid = true;
	char *w;

	/* Worst case: every byte a control character, written \u00XX. */
	buf_reserve(b, size_mul_add(n, 6, 2));
	w = b->data + b->len;
	*w++ = '"';
	for (size_t i = 0; i < n && valid; i++) {
		unsigned char c;

		if (escaped && s[i] == '\\' && i + 1 < n)
			i++;
		c = (unsigned char) s[i];
		valid = utf8_step(&st, c);
		if (c == '"' || c == '\\') {
			*w++ = '\\';
			*w++ = (char) c;
		} else if (c < 0x20) {
			memcpy(w, "\\u00", 4);
			w[4] = hex[c >> 4];
			w[5] = hex[c & 0xf];
			w += 6;
		} else {
			*w++ = (char) c;
		}
	}
	if (!valid || st.need != 0) {
		char q[ERR_QUOTED_SIZE];

		quote_value(q, s, n);
		return fail(e, "invalid UTF-8 in array element: %s", q);
	}
	*w++ = '"';
	b->len = (size_t) (w - b->data);
	return true;
}

static size_t size_add(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/*
 * Most that value_json_append writes for an element of n bytes; the
 * escaped path of element_append relies on it being an upper bound.
 */
static size_t element_room(ValueType vt, size_t n)
{
	switch (vt) {
	case VT_BOOL:
		return 5;                    /* false */
	case VT_INT:
		return 20;                   /* -9223372036854775808 */
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		return STAMP_TEXT_MAX + 2;   /* quoted */
	case VT_JSON:
		return n;
	default:
		return size_add(n, 2);       /* "0" before ".5", or quotes */
	}
}

/* An element of a type JSON has a form for, from its plain text. */
static bool value_json_append(ValueType vt, const char *s, size_t n,
			      ValueBuf *b, Err *e)
{
	Decimal d;
	int64_t iv;
	double dv;
	bool neg;

	switch (vt) {
	case VT_BOOL:
		if (equals(s, n, "t"))
			buf_puts(b, "true");
		else if (equals(s, n, "f"))
			buf_puts(b, "false");
		else
			return invalid(e, vt, s, n);
		return true;
	case VT_INT:
		switch (int_parse(s, n, &iv)) {
		case PARSE_OK:
			int_append(b, iv);
			return true;
		case PARSE_RANGE:
			return out_of_range(e, vt, s, n);
		default:
			return invalid(e, vt, s, n);
		}
	case VT_FLOAT:
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
		/* JSON has no NaN or Infinity: keep PostgreSQL's word. */
		if (is_nan(s, n) || is_infinity(s, n, &neg)) {
			buf_putc(b, '"');
			buf_put(b, s, n);
			buf_putc(b, '"');
			return true;
		}
		if (!decimal_parse(s, n, vt == VT_FLOAT, &d))
			return invalid(e, vt, s, n);
		if (vt == VT_FLOAT && decimal_to_double(&d, &dv) != PARSE_OK)
			return out_of_range(e, vt, s, n);
		decimal_append_json(b, &d);
		return true;
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		buf_putc(b, '"');
		if (is_infinity_word(s, n))
			buf_put(b, s, n);
		else if (!(vt == VT_TIMESTAMP ? timestamp_append(b, s, n, e) :
			   timestamptz_append(b, s, n, e)))
			return false;
		buf_putc(b, '"');
		return true;
	case VT_JSON:
		if (!json_valid(s, n))
			return invalid(e, vt, s, n);
		buf_put(b, s, n);
		return true;
	default:
		return json_string_append(b, s, n, false, e);
	}
}

/* Appends one non-NULL element, s[0..n) as it stands in the array text. */
static bool element_append(ValueType vt, const char *s, size_t n,
			   bool escaped, ValueBuf *b, Err *e)
{
	size_t start = b->len, base, ulen, rn;
	const char *r, *data;
	bool ok;

	switch (vt) {
	case VT_BOOL:
	case VT_INT:
	case VT_FLOAT:
	case VT_NUMERIC_NUM:
	case VT_NUMERIC_TEXT:
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
	case VT_JSON:
		break;
	case VT_BYTEA:
		/*
		 * Stays PostgreSQL's text, as a JSON string. The JSON form of
		 * valid hex text is exactly "\\x" and hex digits (any other
		 * byte would be written differently), so check that.
		 */
		if (!json_string_append(b, s, n, escaped, e))
			return false;
		r = b->data + start;
		rn = b->len - start;
		if (rn < 5 || memcmp(r, "\"\\\\x", 4) != 0 || (rn - 5) % 2 != 0)
			return invalid(e, vt, s, n);
		for (size_t i = 4; i < rn - 1; i++)
			if (hex_value(r[i]) < 0)
				return invalid(e, vt, s, n);
		return true;
	case VT_DATE:
		if (!json_string_append(b, s, n, escaped, e))
			return false;
		if (b->len - start == 2)
			return invalid(e, vt, s, n);
		return true;
	default:
		return json_string_append(b, s, n, escaped, e);
	}
	if (!escaped)
		return value_json_append(vt, s, n, b, e);

	/*
	 * These types are parsed from their plain text, and a quoted element
	 * (always so for json) may have backslashes. Unescape it into the tail
	 * of b, convert from there to just past it, and move the result down
	 * over the copy. Room is reserved first so that b cannot move while
	 * the copy is read.
	 */
	buf_reserve(b, size_add(n, element_room(vt, n)));
	base = b->len;
	data = b->data;
	ulen = array_unescape(b->data + base, s, n);
	b->len = base + ulen;
	ok = value_json_append(vt, b->data + base, ulen, b, e);
	assert(b->data == data);
	if (ok)
		memmove(b->data + base, b->data + base + ulen,
			b->len - base - ulen);
	b->len = ok ? b->len - ulen : base;
	return ok;
}

static bool PGM_PRINTF(4, 5) array_malformed(Err *e, const char *s, size_t n,
					      const char *fmt, ...)
{
	char q[ERR_QUOTED_SIZE], why[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	quote_value(q, s, n);
	return fail(e, "malformed array literal: %s: %s", q, why);
}

/* One bound of "[lb:ub]": an int4, as array_out writes it. */
static bool array_bound(const char *s, size_t n, size_t *pos, int64_t *out)
{
	size_t start = *pos;

	if (*pos < n && (s[*pos] == '-' || s[*pos] == '+'))
		(*pos)++;
	while (*pos < n && is_digit(s[*pos]) && *pos - start <= 11)
		(*pos)++;
	return int_parse(s + start, *pos - start, out) == PARSE_OK &&
	       *out >= INT32_MIN && *out <= INT32_MAX;
}

static bool array_special(char c, char delim)
{
	return c == '{' || c == '}' || c == delim || c == '"' || c == '\\';
}

/* A delimiter array_out's text can be split on: not a byte with a
 * meaning of its own there. */
static bool array_delim_usable(char delim)
{
	return delim != '\0' && !array_special(delim, '\0') && !array_space(delim);
}

/*
 * PostgreSQL's array text (array_out) to a JSON array: braces become
 * brackets, delim (the element type's typdelim) a comma, an unquoted NULL
 * null, and elements are written by element_append. The structure is checked as array_in checks it: at
 * most ARRAY_DIM_MAX dimensions, all elements at the same depth, sub-arrays
 * of one depth of equal length, and dimension information, when present,
 * matching the contents.
 */
static bool array_to_json(ValueType elem_vt, char delim, const char *s, size_t n,
			  ValueBuf *b, Err *e)
{
	int64_t dim_len[ARRAY_DIM_MAX];
	size_t count[ARRAY_DIM_MAX + 1];   /* items so far, per open level */
	size_t expect[ARRAY_DIM_MAX + 1];  /* items per array at each depth */
	size_t ndims = 0, i = 0;
	int depth, leaf = 0;               /* depth of the elements; 0: none yet */
	bool after_item = false;

	/* "[lb:ub]...=" when a lower bound is not 1: JSON has no bounds. */
	while (i < n && s[i] == '[') {
		int64_t lb, ub;

		if (ndims == ARRAY_DIM_MAX)
			return array_malformed(e, s, n, "more than %d dimensions",
					       ARRAY_DIM_MAX);
		i++;
		if (!array_bound(s, n, &i, &lb) || !expect_char(s, n, &i, ':') ||
		    !array_bound(s, n, &i, &ub) || !expect_char(s, n, &i, ']') ||
		    ub < lb)
			return array_malformed(e, s, n, "invalid dimension information");
		dim_len[ndims++] = ub - lb + 1;
	}
	if (ndims > 0 && !expect_char(s, n, &i, '='))
		return array_malformed(e, s, n,
				       "missing \"=\" after dimension information");
	while (i < n && array_space(s[i]))
		i++;
	if (i >= n || s[i] != '{')
		return array_malformed(e, s, n,
				       "array value must start with \"{\" or dimension information");
	i++;
	depth = 1;
	count[1] = 0;
	for (int k = 0; k <= ARRAY_DIM_MAX; k++)
		expect[k] = SIZE_MAX;
	buf_putc(b, '[');

	/* {} is the empty array, whatever its type; nowhere else is a level
	 * empty. */
	while (i < n && array_space(s[i]))
		i++;
	if (i < n && s[i] == '}') {
		i++;
		depth = 0;
		buf_putc(b, ']');
	}

	while (depth > 0) {
		while (i < n && array_space(s[i]))
			i++;
		if (i >= n)
			return array_malformed(e, s, n, "unexpected end of input");

		if (after_item) {
			if (s[i] == delim) {
				buf_putc(b, ',');
				after_item = false;
			} else if (s[i] == '}') {
				if (expect[depth] == SIZE_MAX)
					expect[depth] = count[depth];
				else if (expect[depth] != count[depth])
					goto mismatch;
				buf_putc(b, ']');
				if (--depth > 0)
					count[depth]++;
			} else {
				goto unexpected;
			}
			i++;
			continue;
		}

		if (s[i] == '{') {
			if (leaf != 0 && depth >= leaf)
				goto mismatch;
			if (depth == ARRAY_DIM_MAX)
				return array_malformed(e, s, n, "more than %d dimensions",
						       ARRAY_DIM_MAX);
			count[++depth] = 0;
			buf_putc(b, '[');
			i++;
			continue;
		}
		if (s[i] == '}' || s[i] == delim)
			goto unexpected;

		if (leaf == 0)
			leaf = depth;
		else if (depth != leaf)
			goto mismatch;
		if (s[i] == '"') {
			/* Quoted: array_out escapes '"' and '\' with a backslash. */
			size_t start = ++i;
			bool escaped = false;

			while (i < n && s[i] != '"') {
				if (s[i] == '\\') {
					escaped = true;
					i++;
				}
				i++;
			}
			if (i >= n)
				return array_malformed(e, s, n, "unexpected end of input");
			if (!element_append(elem_vt, s + start, i - start, escaped, b, e))
				return false;
			i++;
		} else {
			/* Unquoted: up to the next special byte, less the white
			 * space array_in would trim. NULL in any case is NULL. */
			size_t start = i, end;

			while (i < n && !array_special(s[i], delim))
				i++;
			if (i >= n)
				return array_malformed(e, s, n, "unexpected end of input");
			if (s[i] == '{' || s[i] == '"' || s[i] == '\\')
				goto unexpected;
			for (end = i; end > start && array_space(s[end - 1]); end--)
				;
			if (equals_nocase(s + start, end - start, "null"))
				buf_puts(b, "null");
			else if (!element_append(elem_vt, s + start, end - start,
						 false, b, e))
				return false;
		}
		count[depth]++;
		after_item = true;
	}

	while (i < n && array_space(s[i]))
		i++;
	if (i != n)
		return array_malformed(e, s, n, "junk after closing right brace");
	if (ndims > 0) {
		if (ndims != (size_t) leaf)
			goto dims;
		for (size_t k = 0; k < ndims; k++)
			if ((uint64_t) dim_len[k] != expect[k + 1])
				goto dims;
	}
	return true;

unexpected:
	return array_malformed(e, s, n, "unexpected character at offset %zu", i);
mismatch:
	return array_malformed(e, s, n,
			       "sub-arrays must have matching dimensions");
dims:
	return array_malformed(e, s, n,
			       "dimension information does not match the contents");
}

/* ---------------------------------------------------------------------
 * Scalars
 * ------------------------------------------------------------------ */

static bool convert_float(const char *s, size_t n, Value *out, Err *e)
{
	Decimal d;
	bool neg;

	if (is_nan(s, n)) {
		/* SQLite has no NaN: a REAL NaN would be stored as NULL. */
		set_text(out, VAL_TEXT, s, n);
		return true;
	}
	out->kind = VAL_REAL;
	if (is_infinity(s, n, &neg)) {
		out->r = neg ? -INFINITY : INFINITY;
		return true;
	}
	if (!decimal_parse(s, n, true, &d))
		return invalid(e, VT_FLOAT, s, n);
	if (decimal_to_double(&d, &out->r) != PARSE_OK)
		return out_of_range(e, VT_FLOAT, s, n);
	return true;
}

/* numeric(p,s) with p <= 15: an integer when the value is one, else the
 * double, which holds any 15 significant digits exactly. */
static bool convert_numeric_num(const char *s, size_t n, Value *out, Err *e)
{
	Decimal d;
	bool neg, integral = true;

	if (is_nan(s, n)) {
		set_text(out, VAL_TEXT, s, n);
		return true;
	}
	if (is_infinity(s, n, &neg)) {
		out->kind = VAL_REAL;
		out->r = neg ? -INFINITY : INFINITY;
		return true;
	}
	if (!decimal_parse(s, n, false, &d))
		return invalid(e, VT_NUMERIC_NUM, s, n);
	for (size_t i = 0; i < d.flen; i++)
		integral &= d.fp[i] == '0';
	if (integral) {
		out->kind = VAL_INT;
		if (d.ilen == 0)
			return true;                  /* ".00" */
		/* Sign and integer digits, which start the text. */
		if (int_parse(s, (size_t) (d.ip + d.ilen - s), &out->i) == PARSE_OK)
			return true;
		/* Past int64 the declared precision was not kept to (a
		 * retyped column, say): fall back to the nearest real, as
		 * SQLite's NUMERIC affinity itself would. */
	}
	out->kind = VAL_REAL;
	if (decimal_to_double(&d, &out->r) != PARSE_OK)
		return out_of_range(e, VT_NUMERIC_NUM, s, n);
	return true;
}

static bool convert_bytea(const char *s, size_t n, ValueBuf *b, Value *out,
			  Err *e)
{
	size_t nbytes;

	if (!bytea_hex_valid(s, n))
		return invalid(e, VT_BYTEA, s, n);
	nbytes = (n - 2) / 2;
	buf_reserve(b, nbytes);
	for (size_t i = 0; i < nbytes; i++)
		b->data[i] = (char) (hex_value(s[2 + 2 * i]) << 4 |
				     hex_value(s[3 + 2 * i]));
	b->len = nbytes;
	set_from_buf(out, VAL_BLOB, b);
	return true;
}

/*
 * Text stored as it came must be UTF-8. The server converts to the UTF-8
 * the session asks for from any encoding but SQL_ASCII, whose bytes come
 * as stored, unchecked: those that are not UTF-8 are refused rather than
 * stored as TEXT that no reader can decode.
 */
static bool text_check_utf8(const char *s, size_t n, Err *e)
{
	char q[ERR_QUOTED_SIZE];
	Utf8State st = { 0 };

	for (size_t i = 0; i < n; i++)
		if (!utf8_step(&st, (unsigned char) s[i]))
			goto invalid;
	if (st.need == 0)
		return true;
invalid:
	quote_value(q, s, n);
	return fail(e, "invalid UTF-8 in text %s: the source must send UTF-8, which a "
		    "SQL_ASCII database does not check; correct the value on the source", q);
}

bool values_convert(ColumnType type, const char *text, size_t len,
		    ValueBuf *buf, Value *out, char *err, size_t errsize)
{
	Err e = { err, errsize };
	bool neg;

	memset(out, 0, sizeof *out);
	out->kind = VAL_NULL;
	buf->len = 0;
	if (text == NULL) {
		if (len != 0)
			return fail(&e, "value of %zu bytes has no data", len);
		text = empty;
	}

	switch (type.vt) {
	case VT_TEXT:
	case VT_JSON:
		if (!text_check_utf8(text, len, &e))
			return false;
		set_text(out, VAL_TEXT, text, len);
		return true;
	case VT_DATE:
		if (len == 0)
			return invalid(&e, VT_DATE, text, len);
		if (!text_check_utf8(text, len, &e))
			return false;
		set_text(out, VAL_TEXT, text, len);
		return true;
	case VT_BOOL:
		if (!equals(text, len, "t") && !equals(text, len, "f"))
			return invalid(&e, VT_BOOL, text, len);
		out->kind = VAL_INT;
		out->i = text[0] == 't';
		return true;
	case VT_INT:
		out->kind = VAL_INT;
		switch (int_parse(text, len, &out->i)) {
		case PARSE_OK:
			return true;
		case PARSE_RANGE:
			return out_of_range(&e, VT_INT, text, len);
		default:
			return invalid(&e, VT_INT, text, len);
		}
	case VT_FLOAT:
		return convert_float(text, len, out, &e);
	case VT_NUMERIC_NUM:
		return convert_numeric_num(text, len, out, &e);
	case VT_NUMERIC_TEXT: {
		Decimal d;

		if (!is_nan(text, len) && !is_infinity(text, len, &neg) &&
		    !decimal_parse(text, len, false, &d))
			return invalid(&e, VT_NUMERIC_TEXT, text, len);
		set_text(out, VAL_TEXT, text, len);
		return true;
	}
	case VT_BYTEA:
		return convert_bytea(text, len, buf, out, &e);
	case VT_TIMESTAMP:
	case VT_TIMESTAMPTZ:
		if (is_infinity_word(text, len)) {
			set_text(out, VAL_TEXT, text, len);
			return true;
		}
		if (!(type.vt == VT_TIMESTAMP ? timestamp_append(buf, text, len, &e) :
		      timestamptz_append(buf, text, len, &e)))
			return false;
		set_from_buf(out, VAL_TEXT, buf);
		return true;
	case VT_ARRAY:
		if (!array_delim_usable(type.delim))
			return fail(&e, "arrays with element delimiter %d are not supported",
				    (unsigned char) type.delim);
		if (!array_to_json(type.elem_vt, type.delim, text, len, buf, &e))
			return false;
		set_from_buf(out, VAL_TEXT, buf);
		return true;
	}
	return fail(&e, "unknown value type %d", (int) type.vt);
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

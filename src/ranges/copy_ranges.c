/*
 * copy_ranges.c: the key ranges of a copy in parts, their text in the
 * mirror, and which changes apply to a row in them (copy_ranges.h). The
 * copy (copy_parts.c) writes them and the applier (apply_ranges.c) asks
 * them, so they stand below both, in src/ranges/ with the order of their
 * keys (copy_keys.c).
 *
 * Keys compare as the source orders them in the copy's query, each key
 * column by its kind (copy_keys.h), which its every key in the text
 * names: an integer by value, anything else by copy_keys.c's order of its
 * text.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_keys.h"
#include "pgmirror/copy_ranges.h"

#define MAGIC "pgmirror-copy 1 "

static void key_free(CopyKeyItem *key, int nkeys)
{
	if (key == NULL)
		return;
	for (int i = 0; i < nkeys; i++)
		free(key[i].s);
	free(key);
}

void copy_ranges_free(CopyRanges *cr)
{
	if (cr == NULL)
		return;
	for (int i = 0; i < cr->n; i++)
		key_free(cr->r[i].key, cr->nkeys);
	free(cr->r);
	free(cr->kinds);
	free(cr);
}

uint64_t copy_ranges_hash(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	if (h == 0)
		h = UINT64_C(14695981039346656037);
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* Reads an unsigned decimal ending at stop; false when there is none. */
static bool read_number(const char **p, char stop, bool sign, int64_t *out)
{
	char *end;
	long long v;

	if (!(**p >= '0' && **p <= '9') && !(sign && **p == '-'))
		return false;
	errno = 0;
	v = strtoll(*p, &end, 10);
	if (errno != 0 || end == *p || *end != stop)
		return false;
	*out = v;
	*p = end + 1;
	return true;
}

/* One key item from p into it, of kind; false when malformed. */
static bool parse_item(const char **p, char kind, CopyKeyItem *it)
{
	int64_t len;

	it->kind = kind;
	if (kind == COPY_KEY_INT)
		return read_number(p, ';', true, &it->i);
	/* the text goes on for len bytes (not strlen(): a parse stays linear) */
	if (!read_number(p, ':', false, &len) || strnlen(*p, (size_t)len) < (size_t)len)
		return false;
	it->s = xmalloc((size_t)len + 1);
	memcpy(it->s, *p, (size_t)len);
	it->s[len] = '\0';
	it->len = (size_t)len;
	*p += len;
	return copy_key_text_valid(kind, it->s, it->len);
}

/*
 * One range's line from p, into r; false when malformed. Its key is the
 * items up to the line's end (each one ends where its kind says: an
 * integer at its ';', any other after its length), so the text itself
 * says how many key columns there are, and what kind each is: the first
 * line with a key sets them in cr, and every later one must have them.
 */
static bool parse_range(const char **p, CopyRanges *cr, CopyRange *r)
{
	const char *sp = strchr(*p, ' ');
	char lsn[LSN_TEXT_SIZE];
	int k = 0, cap;

	if (sp == NULL || (size_t)(sp - *p) >= sizeof(lsn))
		return false;
	memcpy(lsn, *p, (size_t)(sp - *p));
	lsn[sp - *p] = '\0';
	if (!lsn_parse(lsn, &r->lsn))
		return false;
	*p = sp + 1;
	if (**p == '*') {
		r->to_end = true;
		*p += 1;
		return *(*p)++ == '\n';
	}
	cap = cr->kinds != NULL ? cr->nkeys : 4;
	r->key = xcalloc((size_t)cap, sizeof(CopyKeyItem));
	do {
		char kind = **p;

		if (cr->kinds != NULL ? k >= cr->nkeys || kind != cr->kinds[k]
				      : !copy_key_kind_valid(kind))
			goto bad;
		if (k == cap) {
			r->key = xreallocarray(r->key, (size_t)cap * 2, sizeof(CopyKeyItem));
			memset(r->key + cap, 0, (size_t)cap * sizeof(CopyKeyItem));
			cap *= 2;
		}
		*p += 1;
		if (!parse_item(p, kind, &r->key[k++]))
			goto bad;
	} while (**p != '\n');
	*p += 1;
	if (cr->kinds == NULL) {
		cr->nkeys = k;
		cr->kinds = xcalloc((size_t)k + 1, 1);
		for (int i = 0; i < k; i++)
			cr->kinds[i] = r->key[i].kind;
	}
	if (k == cr->nkeys)
		return true;
bad:
	key_free(r->key, cap);
	r->key = NULL;
	return false;
}

CopyRanges *copy_ranges_parse(const char *text, char *err, size_t errsize)
{
	CopyRanges *cr = xcalloc(1, sizeof(*cr));
	const char *p = text;
	char *end;

	if (strncmp(p, MAGIC, strlen(MAGIC)) != 0)
		goto bad;
	p += strlen(MAGIC);
	errno = 0;
	cr->signature = strtoull(p, &end, 16);
	if (errno != 0 || end == p || *end != '\n')
		goto bad;
	p = end + 1;
	while (*p != '\0') {
		CopyRange *r;

		/* nothing follows the range that reaches the end */
		if (cr->n > 0 && cr->r[cr->n - 1].to_end)
			goto bad;
		cr->r = xreallocarray(cr->r, (size_t)cr->n + 1, sizeof(CopyRange));
		r = &cr->r[cr->n++];
		memset(r, 0, sizeof(*r));
		if (!parse_range(&p, cr, r))
			goto bad;
		/* a later try has a later snapshot */
		if (cr->n > 1 && r->lsn < cr->r[cr->n - 2].lsn)
			goto bad;
	}
	return cr;
bad:
	snprintf(err, errsize, "malformed near byte %zu", (size_t)(p - text));
	copy_ranges_free(cr);
	return NULL;
}

char *copy_ranges_format(const CopyRanges *cr)
{
	size_t cap = 64, len;
	char *out = xmalloc(cap);

	len = (size_t)snprintf(out, cap, MAGIC "%016" PRIx64 "\n", cr->signature);
	for (int i = 0; i < cr->n; i++) {
		const CopyRange *r = &cr->r[i];
		char lsn[LSN_TEXT_SIZE];
		size_t need = LSN_TEXT_SIZE + 4;

		for (int k = 0; !r->to_end && k < cr->nkeys; k++)
			need += 24 + r->key[k].len;
		if (cap - len < need) {
			cap = len + need + cap;
			out = xreallocarray(out, cap, 1);
		}
		len += (size_t)snprintf(out + len, cap - len, "%s ", lsn_format(r->lsn, lsn));
		if (r->to_end)
			out[len++] = '*';
		for (int k = 0; !r->to_end && k < cr->nkeys; k++) {
			const CopyKeyItem *it = &r->key[k];

			if (it->kind == COPY_KEY_INT) {
				len += (size_t)snprintf(out + len, cap - len, "i%" PRId64 ";", it->i);
				continue;
			}
			len += (size_t)snprintf(out + len, cap - len, "%c%zu:", it->kind, it->len);
			memcpy(out + len, it->s, it->len);
			len += it->len;
		}
		out[len++] = '\n';
		out[len] = '\0';
	}
	return out;
}

bool copy_state_unfinished(const char *state)
{
	CopyRanges *cr;
	char err[128];
	bool unfinished;

	if (state == NULL)
		return false;
	cr = copy_ranges_parse(state, err, sizeof(err));
	unfinished = cr == NULL || !copy_ranges_done(cr);
	copy_ranges_free(cr);
	return unfinished;
}

bool copy_ranges_done(const CopyRanges *cr)
{
	return cr->n > 0 && cr->r[cr->n - 1].to_end;
}

Lsn copy_ranges_max_lsn(const CopyRanges *cr)
{
	return cr->n > 0 ? cr->r[cr->n - 1].lsn : LSN_INVALID;
}

void copy_ranges_reach(CopyRanges *cr, Lsn lsn, const Value *vals)
{
	CopyRange *r;

	if (cr->n > 0 && cr->r[cr->n - 1].lsn == lsn && !cr->r[cr->n - 1].to_end) {
		r = &cr->r[cr->n - 1];
		key_free(r->key, cr->nkeys);
	} else {
		cr->r = xreallocarray(cr->r, (size_t)cr->n + 1, sizeof(CopyRange));
		r = &cr->r[cr->n++];
	}
	memset(r, 0, sizeof(*r));
	r->lsn = lsn;
	if (vals == NULL) {
		r->to_end = true;
		return;
	}
	r->key = xcalloc((size_t)cr->nkeys, sizeof(CopyKeyItem));
	for (int k = 0; k < cr->nkeys; k++) {
		CopyKeyItem *it = &r->key[k];

		it->kind = copy_ranges_kind(cr, k, &vals[k]);
		if (it->kind == COPY_KEY_INT)
			it->i = vals[k].i; /* a Value's len is the text's only */
		else
			it->s = copy_key_text(it->kind, &vals[k], &it->len);
	}
}

char *copy_key_literal(const CopyKeyItem *it)
{
	return it->kind == COPY_KEY_INT ? xasprintf("%" PRId64, it->i) : xstrdup(it->s);
}

char copy_ranges_kind(const CopyRanges *cr, int k, const Value *v)
{
	if (cr->kinds != NULL && cr->kinds[k] != '\0')
		return cr->kinds[k];
	return v->kind == VAL_INT ? COPY_KEY_INT : COPY_KEY_BYTES;
}

static int compare_item(const Value *v, const CopyKeyItem *it)
{
	bool numeric = it->kind == COPY_KEY_NUMERIC || it->kind == COPY_KEY_FLOAT8 ||
		       it->kind == COPY_KEY_FLOAT4;

	if (v->kind == VAL_INT && it->kind == COPY_KEY_INT)
		return v->i < it->i ? -1 : v->i > it->i;
	if (it->kind == COPY_KEY_INT) /* never in one key column */
		return 1;
	if (v->kind == VAL_INT && !numeric) /* nor this */
		return -1;
	return copy_key_cmp_value(it->kind, v, it->s, it->len);
}

int copy_key_compare(const Value *vals, const CopyKeyItem *key, int nkeys)
{
	for (int k = 0; k < nkeys; k++) {
		int c = compare_item(&vals[k], &key[k]);

		if (c != 0)
			return c;
	}
	return 0;
}

/* copy_key_compare() of the key columns of a row's values */
static int compare_row(const Value *vals, const bool *is_key, int ncols, const CopyKeyItem *key)
{
	for (int i = 0, k = 0; i < ncols; i++) {
		int c;

		if (!is_key[i])
			continue;
		if ((c = compare_item(&vals[i], &key[k++])) != 0)
			return c;
	}
	return 0;
}

bool copy_ranges_applies(const CopyRanges *cr, const Value *vals, const bool *is_key, int ncols,
			 Lsn commit_lsn)
{
	for (int i = 0; i < cr->n; i++) {
		const CopyRange *r = &cr->r[i];

		if (r->to_end || compare_row(vals, is_key, ncols, r->key) <= 0)
			return commit_lsn >= r->lsn;
	}
	return false;
}

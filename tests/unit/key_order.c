/*
 * key_order.c: the other half of tests/integration/test_copy_key_order.py,
 * which has the server sort values of a key type and hands them here, in
 * the server's order, one a line (tab-separated):
 *
 *     TYPE_OID TYPMOD RANK TEXT_HEX BINARY_HEX
 *
 * RANK: the value's place (equal values share one); TEXT_HEX: the type's
 * text output under pgmirror's session settings, BINARY_HEX: its send
 * function's bytes ('-': none), both in hex after an 'x'. argv[1] is the server's
 * version (PQserverVersion()). Each value becomes the Value pgmirror makes
 * of it from text and from binary (they must be equal), and the key item
 * a copy in parts would keep (through copy_state's text and back); every
 * value is then compared with every item, which must agree with the
 * server's order. The literal the copy would go on after each value is
 * printed in hex, one a line, for the test to check on the server. Exit 0:
 * all agree; 1 with the disagreements on stderr.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_keys.h"
#include "pgmirror/copy_ranges.h"
#include "pgmirror/values.h"

typedef struct Item {
	Value v;      /* its Value, bytes owned (vtext) */
	char *vtext;
	long rank;
} Item;

static size_t unhex(const char *h, char *out)
{
	size_t n = 0;

	for (; h[0] != '\0' && h[1] != '\0'; h += 2)
		out[n++] = (char)(hex_digit_value(h[0]) << 4 | hex_digit_value(h[1]));
	return n;
}

static bool same_value(const Value *a, const Value *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case VAL_INT:
		return a->i == b->i;
	case VAL_REAL:
		return memcmp(&a->r, &b->r, sizeof(a->r)) == 0;
	case VAL_TEXT: case VAL_BLOB:
		return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
	default:
		return true;
	}
}

int main(int argc, char **argv)
{
	int version = argc > 1 ? atoi(argv[1]) : 0, nbad = 0;
	size_t n = 0, cap = 0;
	Item *items = NULL;
	char line[1 << 16];
	uint32_t oid = 0;
	int32_t typmod = -1;
	ColumnType ct;
	CopyRanges *cr = xcalloc(1, sizeof(*cr)), *back;
	char *state, err[256];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char text[sizeof(line) / 2], bin[sizeof(line) / 2], th[sizeof(line)], bh[sizeof(line)];
		size_t tlen, blen;
		ValueBuf tb = {0}, bb = {0};
		Value tv, bv;
		long rank;
		unsigned o;
		int tm;

		if (sscanf(line, "%u %d %ld %s %s", &o, &tm, &rank, th, bh) != 5) {
			fprintf(stderr, "bad input line: %s", line);
			return 2;
		}
		oid = o;
		typmod = tm;
		if (!values_builtin_type(oid, typmod, &ct)) {
			fprintf(stderr, "type %u is not built in\n", oid);
			return 2;
		}
		tlen = unhex(th + 1, text);
		if (!values_convert(ct, text, tlen, &tb, &tv, err, sizeof(err))) {
			fprintf(stderr, "text %.*s: %s\n", (int)tlen, text, err);
			return 2;
		}
		if (strcmp(bh, "-") != 0) {
			if (!values_binary_supported(oid, ct, version)) {
				fprintf(stderr, "type %u has no binary form here\n", oid);
				return 2;
			}
			blen = unhex(bh + 1, bin);
			if (!values_convert_binary(oid, ct, version, bin, blen, &bb, &bv, err,
						   sizeof(err))) {
				fprintf(stderr, "binary of %.*s: %s\n", (int)tlen, text, err);
				return 2;
			}
			if (!same_value(&tv, &bv)) {
				fprintf(stderr, "%.*s: its text and its binary form give other values\n",
					(int)tlen, text);
				nbad++;
			}
		}
		if (n == cap)
			items = xreallocarray(items, cap = cap * 2 + 64, sizeof(Item));
		items[n].v = tv;
		items[n].vtext = xmalloc(tv.len + 1);
		if (tv.kind == VAL_TEXT || tv.kind == VAL_BLOB) {
			memcpy(items[n].vtext, tv.p, tv.len);
			items[n].v.p = items[n].vtext;
		}
		items[n].rank = rank;
		n++;
		values_buf_free(&tb);
		values_buf_free(&bb);
	}
	/* each value the last key of a try of its own, through copy_state */
	cr->nkeys = 1;
	cr->kinds = xcalloc(2, 1);
	cr->kinds[0] = copy_key_kind(oid, typmod, true);
	if (cr->kinds[0] == 0) {
		fprintf(stderr, "type %u (%d) has no key kind\n", oid, typmod);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		copy_ranges_reach(cr, (Lsn)i + 1, &items[i].v);
	state = copy_ranges_format(cr);
	back = copy_ranges_parse(state, err, sizeof(err));
	if (back == NULL || back->n != (int)n) {
		fprintf(stderr, "copy_state did not parse back: %s\n", back == NULL ? err : "");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int c = copy_key_compare(&items[i].v, back->r[j].key, 1);
			int want = items[i].rank < items[j].rank ? -1 : items[i].rank > items[j].rank;

			if ((c > 0) - (c < 0) != want && nbad++ < 20)
				fprintf(stderr, "value %zu (rank %ld) vs key %zu (rank %ld, \"%s\"): %d, "
					"the server says %d\n", i, items[i].rank, j, items[j].rank,
					back->r[j].key[0].kind == COPY_KEY_INT ? "(integer)"
					: back->r[j].key[0].s, c, want);
		}
	for (size_t i = 0; i < n; i++) {
		char *lit = copy_key_literal(&back->r[i].key[0]);

		printf("x");
		for (const char *p = lit; *p != '\0'; p++)
			printf("%02x", (unsigned char)*p);
		printf("\n");
		free(lit);
		free(items[i].vtext);
	}
	free(items);
	free(state);
	copy_ranges_free(back);
	copy_ranges_free(cr);
	fprintf(stderr, "%zu values of type %u (%d): %s\n", n, oid, typmod,
		nbad == 0 ? "the server's order" : "DISAGREE");
	return nbad == 0 ? 0 : 1;
}

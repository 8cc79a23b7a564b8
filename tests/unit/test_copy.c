/*
 * test_copy.c: copy_parse_row() against COPY's text format: fields, NULL,
 * every escape, and the exact error text for malformed rows. Each row is
 * parsed from a heap copy of exactly its length, so ASan catches any read
 * past it.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pgmirror/copy_text.h"

#define MAXCOLS 8

typedef struct Parsed {
	bool ok;
	char err[256];
	PgoValue vals[MAXCOLS];
	char *row;
} Parsed;

static Parsed *parse(const char *text, size_t len, int ncols)
{
	Parsed *p = calloc(1, sizeof(*p));

	p->row = malloc(len ? len : 1);
	memcpy(p->row, text, len);
	p->ok = copy_parse_row(p->row, len, p->vals, ncols, p->err, sizeof(p->err));
	return p;
}

static void parsed_free(Parsed *p)
{
	free(p->row);
	free(p);
}

static void assert_text(const PgoValue *v, const char *want, size_t len)
{
	assert_int_equal(v->kind, PGO_COL_TEXT);
	assert_int_equal(v->len, len);
	assert_memory_equal(v->data, want, len);
}

#define ROW(s, n) parse(s, sizeof(s) - 1, n)

static void test_fields_and_null(void **state)
{
	Parsed *p = ROW("1\tabc\t\\N\t\t\\\\N\n", 5);

	(void)state;
	assert_true(p->ok);
	assert_text(&p->vals[0], "1", 1);
	assert_text(&p->vals[1], "abc", 3);
	assert_int_equal(p->vals[2].kind, PGO_COL_NULL);
	assert_null(p->vals[2].data);
	assert_text(&p->vals[3], "", 0);
	assert_text(&p->vals[4], "\\N", 2); /* an escaped backslash and N is text */
	parsed_free(p);

	p = ROW("\\N\n", 1);
	assert_true(p->ok);
	assert_int_equal(p->vals[0].kind, PGO_COL_NULL);
	parsed_free(p);

	p = ROW("\\Nx\n", 1); /* not the NULL marker: an escaped N */
	assert_true(p->ok);
	assert_text(&p->vals[0], "Nx", 2);
	parsed_free(p);
}

static void test_escapes(void **state)
{
	Parsed *p = ROW("\\b\\f\\n\\r\\t\\v\\\\\\q\t\\101\\7\\0101\t\\x41\\x4a\\xg\\x7\n", 3);

	(void)state;
	assert_true(p->ok);
	assert_text(&p->vals[0], "\b\f\n\r\t\v\\q", 8);
	assert_text(&p->vals[1], "A\a\0101", 4);
	assert_text(&p->vals[2], "AJxg\a", 5);
	parsed_free(p);

	/* plain runs before, between and after escapes move back in place */
	p = ROW("abc\\tdef\\\\ghi\tx\\ny z\\\\\t\\101BC\n", 3);
	assert_true(p->ok);
	assert_text(&p->vals[0], "abc\tdef\\ghi", 11);
	assert_text(&p->vals[1], "x\ny z\\", 6);
	assert_text(&p->vals[2], "ABC", 3);
	parsed_free(p);

	p = ROW("\\377\n", 1); /* octal keeps the low byte */
	assert_true(p->ok);
	assert_text(&p->vals[0], "\377", 1);
	parsed_free(p);
}

static void test_malformed(void **state)
{
	Parsed *p = ROW("1\t2", 2);

	(void)state;
	assert_false(p->ok);
	assert_string_equal(p->err, "the row does not end with a newline");
	parsed_free(p);

	p = ROW("1\t2\t3\n", 2);
	assert_false(p->ok);
	assert_string_equal(p->err, "more than the 2 columns expected");
	parsed_free(p);

	p = ROW("1\n", 2);
	assert_false(p->ok);
	assert_string_equal(p->err, "1 columns, expected 2");
	parsed_free(p);

	p = ROW("1\\\n", 1);
	assert_false(p->ok);
	assert_string_equal(p->err, "the row ends with a lone backslash");
	parsed_free(p);

	p = parse("", 0, 1);
	assert_false(p->ok);
	assert_string_equal(p->err, "the row does not end with a newline");
	parsed_free(p);
}

static void test_zero_columns(void **state)
{
	Parsed *p = ROW("\n", 0);

	(void)state;
	assert_true(p->ok);
	parsed_free(p);
	p = ROW("x\n", 0);
	assert_false(p->ok);
	assert_string_equal(p->err, "more than the 0 columns expected");
	parsed_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_and_null),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_zero_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_mirror_verify.c: --verify's comparison (mirror_verify.c) on a real
 * SQLite mirror: exact counts of missing, unexpected and changed rows for a
 * table with a key; a value that SQLite's IS calls equal but that is
 * stored in another storage class counts as changed; a keyless table is a
 * bag of rows (one of two equal rows gone is 1 missing, NULLs are equal);
 * a table of 600 columns compares (no expression too deep for SQLite);
 * nothing is left in the mirror file.
 */
#include "config.h"

#include "pgmirror/mirror_verify.h"
#include "mirror_fixture.h"

static const char *type_name(uint32_t oid)
{
	return oid == OID_INT4 ? "int4" : oid == OID_TEXT ? "text" : "bytea";
}

/* Table t (id int4, s text, b bytea), keyed on id unless replident 'f'. */
static void make_table(Fixture *f, char replident)
{
	static const uint32_t oids[3] = {OID_INT4, OID_TEXT, OID_BYTEA};
	static const char *const names[3] = {"id", "s", "b"};

	for (int i = 0; i < 3; i++) {
		fixture_column(&f->cols[i], names[i], oids[i], type_name(oids[i]),
			       replident == 'f' || i == 0, i + 1);
	}
	fixture_table(&f->def, f->cols, 3, replident);
	assert_true(mirror_begin(f->m));
	mirror_table_free(fixture_sync(f->m, &f->def));
	assert_true(mirror_commit(f->m));
}

static int setup(void **state)
{
	*state = fixture_setup("verify");
	return 0;
}

/* A row (id, s, b): s NULL when NULL; b as text bytes, or the real br
 * when b is NULL and br is not 0. */
typedef struct Row {
	int id;
	const char *s;
	const char *b;
	double br;
	int64_t bi;        /* b as an integer when b is NULL, br 0 and bi not 0 */
} Row;

static void to_values(const Row *r, Value v[3])
{
	memset(v, 0, 3 * sizeof(Value));
	v[0].kind = VAL_INT;
	v[0].i = r->id;
	if (r->s != NULL) {
		v[1].kind = VAL_TEXT;
		v[1].p = r->s;
		v[1].len = strlen(r->s);
	}
	if (r->b != NULL) {
		v[2].kind = VAL_BLOB;
		v[2].p = r->b;
		v[2].len = strlen(r->b);
	} else if (r->br != 0) {
		v[2].kind = VAL_REAL;
		v[2].r = r->br;
	} else if (r->bi != 0) {
		v[2].kind = VAL_INT;
		v[2].i = r->bi;
	}
}

static void fill_mirror(Fixture *f, const Row *rows, int n)
{
	MirrorTable *t;

	assert_true(mirror_begin(f->m));
	t = fixture_sync(f->m, &f->def);
	for (int i = 0; i < n; i++) {
		Value v[3];

		to_values(&rows[i], v);
		assert_true(mirror_table_insert(t, v));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
}

static MirrorDiff compare(Fixture *f, const Row *rows, int n)
{
	MirrorCompare *c = NULL;
	MirrorDiff d;
	ColumnType types[3];
	const char *names[3];
	bool is_key[3];

	/* a keyless table's columns are all keys of its match, none of the compare's */
	for (int i = 0; i < 3; i++) {
		types[i] = f->cols[i].type;
		names[i] = f->cols[i].name;
		is_key[i] = f->def.replident != 'f' && f->cols[i].is_key;
	}
	assert_true(mirror_compare_begin(f->m, "t", names, types, is_key, 3, &c));
	for (int i = 0; i < n; i++) {
		Value v[3];

		to_values(&rows[i], v);
		assert_true(mirror_compare_add(c, v));
	}
	assert_true(mirror_compare_end(c, &d));
	mirror_compare_free(c);
	return d;
}

static void assert_diff(MirrorDiff d, int64_t missing, int64_t unexpected, int64_t changed)
{
	assert_int_equal(d.missing, missing);
	assert_int_equal(d.unexpected, unexpected);
	assert_int_equal(d.changed, changed);
}

static void test_keyed(void **state)
{
	Fixture *f = *state;
	const Row mirror[] = {
		{1, "a", "x", 0, 0}, {2, "b", NULL, 0, 0}, {3, "c", "z", 0, 0},
		{4, NULL, NULL, 0, 1}, {5, "e", "e", 0, 0}, {100, "stray", NULL, 0, 0},
	};
	const Row source[] = {
		{1, "a", "x", 0, 0}, {2, "b", NULL, 0, 0}, {3, "C", "z", 0, 0},
		/* 1 and 1.0 are equal to IS, not in storage class (a BLOB column
		 * keeps both as they are) */
		{4, NULL, NULL, 1.0, 0},
		{5, "e", "e", 0, 0}, {6, "new", NULL, 0, 0}, {7, "new", NULL, 0, 0},
	};

	make_table(f, 'd');
	fill_mirror(f, mirror, 6);
	assert_diff(compare(f, mirror, 6), 0, 0, 0);
	assert_diff(compare(f, source, 7), 2, 1, 2);
	assert_diff(compare(f, source, 0), 0, 6, 0);
}

static void test_keyless(void **state)
{
	Fixture *f = *state;
	const Row mirror[] = {
		{1, "x", NULL, 0, 0}, {2, NULL, NULL, 0, 0}, {2, NULL, NULL, 0, 0},
		{3, "y", "b", 0, 0}, {3, "y", "b", 0, 0}, {3, "y", "b", 0, 0},
	};
	const Row source[] = {
		{1, "x", NULL, 0, 0}, {1, "x", NULL, 0, 0}, {2, NULL, NULL, 0, 0},
		{2, NULL, NULL, 0, 0}, {3, "y", "b", 0, 0}, {3, "Y", "b", 0, 0},
	};

	make_table(f, 'f');
	fill_mirror(f, mirror, 6);
	assert_diff(compare(f, mirror, 6), 0, 0, 0);
	/* (1,x) once more in the source; (3,y,b) twice too many in the
	 * mirror; (3,Y,b) only in the source */
	assert_diff(compare(f, source, 6), 2, 2, 0);
}

/*
 * A table of ncols INTEGER columns (keyed on the first, or keyless): a
 * mirror row against the same row with its last value changed. The
 * comparison of every value must not make an expression deeper than
 * SQLite takes (1000), nor, keyless, a select list or GROUP BY past its
 * 2,000 columns, up to the widest table SQLite holds.
 */
static void compare_wide(Fixture *f, int ncols, bool keyed)
{
	MirrorColumnDef *cols = calloc((size_t)ncols, sizeof(MirrorColumnDef));
	ColumnType *types = calloc((size_t)ncols, sizeof(ColumnType));
	const char **names = calloc((size_t)ncols, sizeof(char *));
	bool *is_key = calloc((size_t)ncols, sizeof(bool));
	Value *vals = calloc((size_t)ncols, sizeof(Value));
	char (*buf)[8] = calloc((size_t)ncols, 8);
	MirrorTableDef def = {.name = "w", .source_schema = "public", .source_table = "w",
			      .relation_oid = 16385, .replident = keyed ? 'd' : 'f',
			      .ncols = ncols, .cols = cols};
	MirrorCompare *c = NULL;
	MirrorTable *t;
	MirrorDiff d;

	for (int i = 0; i < ncols; i++) {
		snprintf(buf[i], 8, "c%d", i);
		fixture_column(&cols[i], buf[i], OID_INT4, "int4", keyed && i == 0, i + 1);
		names[i] = cols[i].name;
		types[i] = cols[i].type;
		is_key[i] = cols[i].is_key;
		vals[i].kind = VAL_INT;
		vals[i].i = i;
	}
	assert_true(mirror_begin(f->m));
	t = fixture_sync(f->m, &def);
	assert_true(mirror_table_insert(t, vals));
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));

	for (int round = 0; round < 2; round++) {
		vals[ncols - 1].i = round == 0 ? ncols - 1 : -1;
		assert_true(mirror_compare_begin(f->m, "w", names, types, is_key, ncols, &c));
		assert_true(mirror_compare_add(c, vals));
		if (!mirror_compare_end(c, &d))
			fail_msg("%d columns: %s", ncols, mirror_error(f->m));
		mirror_compare_free(c);
		if (round == 0)
			assert_diff(d, 0, 0, 0);
		else if (keyed)
			assert_diff(d, 0, 0, 1);
		else
			assert_diff(d, 1, 1, 0);
	}
	free(cols);
	free(types);
	free(names);
	free(is_key);
	free(vals);
	free(buf);
}

static void test_wide(void **state)
{
	compare_wide(*state, 600, true);
}

static void test_widest(void **state)
{
	compare_wide(*state, 2000, true);
}

static void test_wide_keyless(void **state)
{
	compare_wide(*state, 1000, false);
}

static void test_widest_keyless(void **state)
{
	compare_wide(*state, 1999, false);
}

static void test_widest_keyless2(void **state)
{
	compare_wide(*state, 2000, false);
}

/* The schema of the mirror file, as another connection sees it. */
static char *schema_text(const Fixture *f)
{
	return fixture_rows(f->path, "SELECT type || ' ' || name FROM sqlite_master ORDER BY 1",
			    "", "\n");
}

/* The scratch database goes with the comparison: the mirror file keeps
 * only its own tables, and the next comparison starts afresh. */
static void test_nothing_left(void **state)
{
	Fixture *f = *state;
	const Row rows[] = {{1, "a", NULL, 0, 0}};
	char *before, *after;

	make_table(f, 'd');
	fill_mirror(f, rows, 1);
	before = schema_text(f);
	assert_non_null(strstr(before, "table t\n"));
	assert_diff(compare(f, rows, 1), 0, 0, 0);
	assert_diff(compare(f, rows, 1), 0, 0, 0);
	after = schema_text(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keyed, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_keyless, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_wide, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_widest, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_wide_keyless, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_widest_keyless, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_widest_keyless2, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_nothing_left, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

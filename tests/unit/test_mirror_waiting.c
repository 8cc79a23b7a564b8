/*
 * test_mirror_waiting.c: pgmirror_waiting (mirror_waiting.c). A table set
 * to wait is listed with its names, reason and since; set again for the
 * same reason it keeps its since and is not news, for another reason it
 * is news and keeps its since; removed, it waits no more; a rolled-back
 * transaction leaves nothing; a rebuild's mirror_drop_all_tables() forgets
 * every waiting table; and a mirror file without the table (made by an
 * older pgmirror, opened to read) has none.
 */
#include "config.h"

#include "mirror_fixture.h"
#include "pgmirror/mirror_waiting.h"

static int setup(void **state)
{
	*state = fixture_setup("waiting");
	return 0;
}

static void assert_one(Mirror *m, uint32_t oid, const char *table, const char *reason)
{
	MirrorWaiting *w;
	int n;

	assert_true(mirror_waiting_list(m, &w, &n));
	assert_int_equal(n, 1);
	assert_int_equal(w[0].relation_oid, oid);
	assert_string_equal(w[0].source_schema, "public");
	assert_string_equal(w[0].source_table, table);
	assert_string_equal(w[0].reason, reason);
	assert_non_null(w[0].since);
	mirror_waiting_free(w, n);
}

static char *since_of(Mirror *m)
{
	MirrorWaiting *w;
	int n;
	char *since;

	assert_true(mirror_waiting_list(m, &w, &n));
	assert_int_equal(n, 1);
	since = strdup(w[0].since);
	mirror_waiting_free(w, n);
	return since;
}

static void test_set_keep_remove(void **state)
{
	Fixture *f = *state;
	bool news, has;
	char *since, *again;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_set(f->m, 42, "public", "secret", "no grant", &news));
	assert_true(mirror_commit(f->m));
	assert_true(news);
	assert_one(f->m, 42, "secret", "no grant");
	assert_true(mirror_waiting_has(f->m, 42, &has));
	assert_true(has);
	assert_true(mirror_waiting_has(f->m, 43, &has));
	assert_false(has);
	assert_true(mirror_waiting_same(f->m, 42, "public", "secret", "no grant", &has));
	assert_true(has);
	assert_true(mirror_waiting_same(f->m, 42, "public", "secret2", "no grant", &has));
	assert_false(has);
	assert_true(mirror_waiting_same(f->m, 42, "public", "secret", "other", &has));
	assert_false(has);
	assert_true(mirror_waiting_same(f->m, 43, "public", "secret", "no grant", &has));
	assert_false(has);
	since = since_of(f->m);

	usleep(2000); /* a new since would differ */
	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_set(f->m, 42, "public", "secret", "no grant", &news));
	assert_true(mirror_commit(f->m));
	assert_false(news);
	again = since_of(f->m);
	assert_string_equal(again, since);
	free(again);

	/* renamed, and for another reason: news, the same since */
	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_set(f->m, 42, "public", "pgmirror_s", "reserved", &news));
	assert_true(mirror_commit(f->m));
	assert_true(news);
	assert_one(f->m, 42, "pgmirror_s", "reserved");
	again = since_of(f->m);
	assert_string_equal(again, since);
	free(again);
	free(since);

	/* stored on one line: a server's message may hold line breaks */
	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_set(f->m, 42, "public", "pgmirror_s", "ERROR:  no\nDETAIL:  x",
				       &news));
	assert_true(mirror_commit(f->m));
	assert_true(news);
	assert_one(f->m, 42, "pgmirror_s", "ERROR:  no; DETAIL:  x");
	assert_true(mirror_waiting_same(f->m, 42, "public", "pgmirror_s", "ERROR:  no\nDETAIL:  x",
					&has));
	assert_true(has);

	/* rolled back: still waits */
	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_remove(f->m, 42));
	mirror_rollback(f->m);
	assert_one(f->m, 42, "pgmirror_s", "ERROR:  no; DETAIL:  x");

	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_remove(f->m, 42));
	assert_true(mirror_commit(f->m));
	assert_true(mirror_waiting_has(f->m, 42, &has));
	assert_false(has);
}

/* A rebuild starts over: the copy decides again which tables wait. */
static void test_drop_all(void **state)
{
	Fixture *f = *state;
	MirrorWaiting *w;
	int n;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_set(f->m, 7, "public", "a", "why", NULL));
	assert_true(mirror_waiting_set(f->m, 8, "public", "b", "why", NULL));
	assert_true(mirror_drop_all_tables(f->m));
	assert_true(mirror_commit(f->m));
	assert_true(mirror_waiting_list(f->m, &w, &n));
	assert_int_equal(n, 0);
	mirror_waiting_free(w, n);
}

/* An older pgmirror's file, opened to read (--status), is not upgraded. */
static void test_older_file(void **state)
{
	Fixture *f = *state;
	MirrorWaiting *w;
	char *err = NULL;
	int n;

	mirror_close(f->m);
	fixture_exec(f->path, "DROP TABLE pgmirror_waiting");
	assert_int_equal(mirror_open(f->path, MIRROR_READ, &f->m, &err), MIRROR_OPEN_OK);
	assert_true(mirror_waiting_list(f->m, &w, &n));
	assert_int_equal(n, 0);
	assert_null(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_set_keep_remove, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_drop_all, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_older_file, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

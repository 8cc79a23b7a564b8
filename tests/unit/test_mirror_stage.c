/*
 * test_mirror_stage.c: a table copied again behind the readers' backs
 * (mirror_stage.c) and the tables still to copy (mirror_pending.c). A
 * table set aside keeps its rows and the user's view under its name but
 * is no longer the mirror's; its staged table, registered for the same
 * relation, takes its place only once its copy is done, with the view
 * made again; a table set aside without a staged table goes at a
 * rebuild's end (finish) and not before; forgetting one drops it;
 * setting every table aside drops an earlier rebuild's staged table. The
 * list of tables pending counts only those with neither a mirror table
 * nor a waiting row, and emptying an empty list writes nothing.
 */
#include "config.h"

#include "mirror_fixture.h"
#include "pgmirror/mirror_pending.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/mirror_waiting.h"

static int setup(void **state)
{
	Fixture *f = fixture_setup("stage");

	fixture_column(&f->cols[0], "id", OID_INT4, "int4", true, 1);
	fixture_column(&f->cols[1], "v", OID_TEXT, "text", false, 2);
	fixture_table(&f->def, f->cols, 2, 'd');
	assert_true(mirror_begin(f->m));
	mirror_table_free(fixture_sync(f->m, &f->def));
	assert_true(mirror_commit(f->m));
	fixture_exec(f->path, "INSERT INTO t VALUES (1, 'old'), (2, 'old'); "
		     "CREATE VIEW app_v AS SELECT v FROM t");
	*state = f;
	return 0;
}

/* Makes the staged table of t with new rows (its copy done). */
static void make_staged(Fixture *f)
{
	char buf[32];
	MirrorTableDef def = f->def;

	def.name = mirror_stage_name(FIXTURE_RELID, buf);
	assert_string_equal(def.name, "pgmirror_stage_16384");
	assert_true(mirror_stage_is_name(def.name));
	assert_true(mirror_begin(f->m));
	mirror_table_free(fixture_sync(f->m, &def));
	assert_true(mirror_commit(f->m));
	fixture_exec(f->path, "INSERT INTO pgmirror_stage_16384 VALUES (1, 'new'), (3, 'new')");
}

/* Swaps (finish: a rebuild's end); want swapped, and dropped of the
 * user's objects that no longer apply. */
static void swap(Fixture *f, bool finish, int want, int want_dropped)
{
	char **dropped;
	int ndropped, nswapped;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_stage_swap(f->m, 0, finish, &dropped, &ndropped, &nswapped));
	assert_true(mirror_commit(f->m));
	assert_int_equal(ndropped, want_dropped);
	assert_int_equal(nswapped, want);
	strv_free(dropped, ndropped);
}

static void test_set_aside_then_swap(void **state)
{
	Fixture *f = *state;
	MirrorStaged *s;
	bool staged, found;
	char *old;
	int n;
	MirrorTableInfo info;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_stage_begin(f->m, FIXTURE_RELID));
	assert_true(mirror_stage_begin(f->m, FIXTURE_RELID)); /* once is enough */
	assert_true(mirror_commit(f->m));
	/* the old rows stay readable, the mirror no longer has the table */
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM app_v WHERE v = 'old'"), 2);
	assert_true(mirror_table_by_oid(f->m, FIXTURE_RELID, &found, &info));
	assert_false(found);
	assert_true(mirror_stage_of(f->m, FIXTURE_RELID, &staged, &old));
	assert_true(staged);
	assert_string_equal(old, "t");
	free(old);
	/* not begun: nothing to swap, but a rebuild's end would drop it */
	swap(f, false, 0, 0);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM t"), 2);
	make_staged(f);
	assert_true(mirror_stage_list(f->m, &s, &n));
	assert_int_equal(n, 1);
	assert_string_equal(s[0].staged, "pgmirror_stage_16384");
	assert_true(s[0].done);
	mirror_stage_list_free(s, n);
	/* unfinished: it waits */
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_state = 'pgmirror-copy 1 0\n"
		     "0/10 i1;\n'");
	swap(f, true, 0, 0);
	/* also when its last key (text) ends as a done copy's line does */
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_state = 'pgmirror-copy 1 0\n"
		     "0/10 t13:item 010240 *\n'");
	swap(f, true, 0, 0);
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_state = 'pgmirror-copy 1 0\n"
		     "0/10 t8:a\n0/20 *\n'");
	swap(f, true, 0, 0);
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_state = NULL");
	swap(f, false, 1, 0);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM app_v WHERE v = 'new'"), 2);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pgmirror_staged"), 0);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name "
				     "GLOB 'pgmirror_stage_[0-9]*'"), 0);
	assert_true(mirror_table_by_oid(f->m, FIXTURE_RELID, &found, &info));
	assert_true(found);
	assert_string_equal(info.name, "t");
	mirror_table_info_clear(&info);
}

static void test_finish_and_forget(void **state)
{
	Fixture *f = *state;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_stage_begin(f->m, FIXTURE_RELID));
	assert_true(mirror_commit(f->m));
	swap(f, true, 0, 1); /* no staged table at a rebuild's end: it goes, with the view */
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name "
				     "= 't'"), 0);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pgmirror_staged"), 0);

	fixture_exec(f->path, "CREATE TABLE t (id, v); INSERT INTO pgmirror_staged VALUES "
		     "(16384, 't')");
	make_staged(f);
	assert_true(mirror_begin(f->m));
	assert_true(mirror_stage_all(f->m)); /* an earlier rebuild's copy goes */
	assert_true(mirror_stage_forget(f->m, FIXTURE_RELID));
	assert_true(mirror_commit(f->m));
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type = "
				     "'table' AND name IN ('t', 'pgmirror_stage_16384')"), 0);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pgmirror_tables"), 0);
}

/* A table set aside whose new copy is not complete is not "as the
 * mirror follows it": the publications' detail must be read again, even
 * when nothing changed on the source, or a run without --resync would
 * never go on with a keyless table's copy (which stores nothing before
 * its end). */
static void test_fingerprint_while_staged(void **state)
{
	Fixture *f = *state;
	char *fp;

	MirrorState st = {.slot = "s", .publications = "p", .system_identifier = "1",
			  .database = "d", .confirmed_lsn = 0x100, .initial_copy_done = true};

	fixture_exec(f->path, "UPDATE pgmirror_tables SET definition = 'd'");
	assert_true(mirror_begin(f->m));
	assert_true(mirror_write_state(f->m, &st));
	assert_true(mirror_set_publication_fingerprint(f->m, "fp1"));
	assert_true(mirror_commit(f->m));
	assert_true(mirror_publication_fingerprint(f->m, &fp));
	assert_non_null(fp);
	free(fp);
	assert_true(mirror_begin(f->m));
	assert_true(mirror_stage_begin(f->m, FIXTURE_RELID));
	assert_true(mirror_commit(f->m));
	assert_true(mirror_publication_fingerprint(f->m, &fp));
	assert_null(fp);
	make_staged(f);
	swap(f, false, 1, 0);
	fixture_exec(f->path, "UPDATE pgmirror_tables SET definition = 'd'");
	assert_true(mirror_publication_fingerprint(f->m, &fp));
	assert_non_null(fp);
	assert_string_equal(fp, "fp1");
	free(fp);
	/* a copy in parts that goes on: none, whatever its last key ends in */
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_state = 'pgmirror-copy 1 0\n"
		     "0/10 t13:item 010240 *\n'");
	assert_true(mirror_publication_fingerprint(f->m, &fp));
	assert_null(fp);
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_state = 'pgmirror-copy 1 0\n"
		     "0/10 t13:item 010240 *\n0/20 *\n'");
	assert_true(mirror_publication_fingerprint(f->m, &fp));
	assert_non_null(fp);
	free(fp);
}

static void test_pending(void **state)
{
	Fixture *f = *state;
	MirrorPending want[3] = {{FIXTURE_RELID, "public", "t", 5},
				 {42, "public", "later", -1}, {43, "public", "waits", 7}};
	MirrorPending *p;
	int n;
	bool news;

	assert_true(mirror_pending_set(f->m, want, 3));
	assert_true(mirror_begin(f->m));
	assert_true(mirror_waiting_set(f->m, 43, "public", "waits", "no grant", &news));
	assert_true(mirror_commit(f->m));
	assert_true(mirror_pending_list(f->m, &p, &n));
	assert_int_equal(n, 1); /* t has its table, waits waits */
	assert_int_equal(p[0].relation_oid, 42);
	assert_string_equal(p[0].source_table, "later");
	assert_int_equal(p[0].estimate, -1);
	mirror_pending_free(p, n);
	assert_true(mirror_pending_set(f->m, NULL, 0));
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pgmirror_pending"), 0);
	/* an empty list stays so without a write: no transaction is begun */
	assert_true(mirror_begin(f->m));
	assert_true(mirror_pending_set(f->m, NULL, 0));
	assert_true(mirror_commit(f->m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_set_aside_then_swap, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_finish_and_forget, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fingerprint_while_staged, setup,
						fixture_teardown),
		cmocka_unit_test_setup_teardown(test_pending, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

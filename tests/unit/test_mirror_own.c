/*
 * test_mirror_own.c: pgmirror's own tables read as untrusted input
 * (mirror_own.c). A value pgmirror never writes there (a NULL, an OID out
 * of range, a replica identity that is none, an LSN that is not one) makes
 * the reader fail with an error that names the table, the column and the
 * value (control characters as '?', a long text cut), and notes the damage
 * as SQLite's reports are noted; the integrity check names it with its
 * rowid and calls the file damaged. A lag that cannot be one is not known,
 * and not damage. A last check time that is not a time makes the check
 * due (as text it compared above every time, and held the check off).
 */
#include "config.h"

#include "mirror_fixture.h"

static int setup(void **state)
{
	Fixture *f = fixture_setup("own");
	MirrorState st = {.present = true, .slot = "s", .publications = "p",
			  .system_identifier = "1", .database = "d"};

	fixture_column(&f->cols[0], "id", OID_INT4, "int4", true, 1);
	fixture_column(&f->cols[1], "v", OID_TEXT, "text", false, 2);
	fixture_table(&f->def, f->cols, 2, 'd');
	assert_true(mirror_begin(f->m));
	assert_true(mirror_write_state(f->m, &st));
	mirror_table_free(fixture_sync(f->m, &f->def));
	assert_true(mirror_commit(f->m));
	*state = f;
	return 0;
}

/* The reader's error, and the damage noted, for sql run on the file. */
static void expect_damage(Fixture *f, const char *sql, const char *found)
{
	MirrorTableInfo *t = NULL;
	char want[512];
	int n = 0;

	fixture_exec(f->path, sql);
	mirror_damage_forget();
	assert_false(mirror_table_infos(f->m, &t, &n));
	assert_null(t);
	snprintf(want, sizeof(want), "mirror \"%s\" is damaged: %s", f->path, found);
	assert_string_equal(mirror_error(f->m), want);
	assert_true(mirror_damage_own());
	assert_string_equal(mirror_damage_seen(), found);
	mirror_damage_forget();
}

static void test_reader(void **state)
{
	Fixture *f = *state;
	MirrorTableInfo *t = NULL;
	int n = 0;

	assert_true(mirror_table_infos(f->m, &t, &n));
	assert_int_equal(n, 1);
	assert_int_equal(t[0].relation_oid, FIXTURE_RELID);
	mirror_table_infos_free(t, n);
	expect_damage(f, "UPDATE pgmirror_tables SET relation_oid = 5000000000",
		      "pgmirror_tables.relation_oid is 5000000000, not an integer from 1 to "
		      "4294967295");
	expect_damage(f, "UPDATE pgmirror_tables SET relation_oid = 16384, sync_lsn = "
			 "'x\ny' || printf('%050d', 7)",
		      "pgmirror_tables.sync_lsn is 'x?y0000000000000000000000000000000000000...', "
		      "not an LSN (X/Y)");
	expect_damage(f, "UPDATE pgmirror_tables SET sync_lsn = NULL, copy_rows = -1",
		      "pgmirror_tables.copy_rows is -1, not an integer of 0 or more");
	expect_damage(f, "UPDATE pgmirror_tables SET copy_rows = 0, copy_estimate = 2.5",
		      "pgmirror_tables.copy_estimate is 2.5, not an integer");
	fixture_exec(f->path, "UPDATE pgmirror_tables SET copy_estimate = NULL");
	assert_true(mirror_table_infos(f->m, &t, &n));
	assert_int_equal(t[0].copy_estimate, -1);
	mirror_table_infos_free(t, n);
	assert_null(mirror_damage_seen());
}

/* A file whose pgmirror_tables has no NOT NULL (an older one, or one
 * edited): a NULL name fails the list of tables, once crashed --status. */
static void test_null_name(void **state)
{
	Fixture *f = *state;
	char **names = NULL, want[256];
	int n = 0;

	mirror_close(f->m);
	f->m = NULL;
	fixture_exec(f->path, "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = "
			      "replace(sql, 'NOT NULL', '') WHERE name = 'pgmirror_tables'; "
			      "PRAGMA writable_schema = OFF");
	fixture_exec(f->path, "PRAGMA schema_version = 1000; "
			      "UPDATE pgmirror_tables SET table_name = NULL");
	assert_int_equal(mirror_open(f->path, MIRROR_READ, &f->m, &(char *){NULL}),
			 MIRROR_OPEN_OK);
	mirror_damage_forget();
	assert_false(mirror_list_tables(f->m, &names, &n));
	assert_null(names);
	assert_int_equal(n, 0);
	snprintf(want, sizeof(want), "mirror \"%s\" is damaged: pgmirror_tables.table_name is NULL",
		 f->path);
	assert_string_equal(mirror_error(f->m), want);
	assert_string_equal(mirror_damage_seen(), "pgmirror_tables.table_name is NULL");
	mirror_damage_forget();
}

static void test_check(void **state)
{
	Fixture *f = *state;
	char *found = NULL;

	assert_int_equal(mirror_check_file(f->path, &found), MIRROR_CHECK_SOUND);
	assert_string_equal(found, "ok");
	free(found);
	fixture_exec(f->path, "UPDATE pgmirror_tables SET replica_identity = 'full'; "
			      "UPDATE pgmirror_columns SET position = 0 WHERE column_name = 'v'");
	assert_int_equal(mirror_check_file(f->path, &found), MIRROR_CHECK_DAMAGED);
	assert_string_equal(found, "pgmirror_tables.replica_identity is 'full', not one of the "
			    "letters dnfi (rowid 1); pgmirror_columns.position is 0, not an "
			    "integer from 1 to 2147483647 (rowid 2)");
	free(found);
	/* the check's finding is its result, not a reader's noted damage */
	assert_null(mirror_damage_seen());
}

static void test_lag(void **state)
{
	Fixture *f = *state;
	MirrorHealth h;
	char *found = NULL;

	assert_true(mirror_note_sync(f->m, "2026-01-02 03:04:05", 10, 1.5));
	assert_true(mirror_read_health(f->m, &h));
	assert_true(h.has_lag);
	assert_int_equal(h.lag_bytes, 10);
	assert_true(h.lag_seconds == 1.5);
	mirror_health_clear(&h);
	fixture_exec(f->path, "UPDATE pgmirror_state SET last_sync_lag_seconds = 1e999");
	assert_true(mirror_read_health(f->m, &h));
	assert_false(h.has_lag);
	assert_true(h.lag_seconds == 0);
	mirror_health_clear(&h);
	fixture_exec(f->path, "UPDATE pgmirror_state SET last_sync_lag_seconds = 2, "
			      "last_sync_lag_bytes = -4");
	assert_true(mirror_read_health(f->m, &h));
	assert_false(h.has_lag);
	mirror_health_clear(&h);
	assert_null(mirror_damage_seen());
	/* a report, not damage */
	assert_int_equal(mirror_check_file(f->path, &found), MIRROR_CHECK_SOUND);
	assert_string_equal(found, "ok");
	free(found);
}

static void test_check_due(void **state)
{
	Fixture *f = *state;
	bool due = true;

	assert_true(mirror_note_check(f->m, "ok"));
	assert_true(mirror_check_due(f->m, 3600, &due));
	assert_false(due);
	fixture_exec(f->path, "UPDATE pgmirror_state SET last_check_time = 'zzz'");
	assert_true(mirror_check_due(f->m, 3600, &due));
	assert_true(due);
	fixture_exec(f->path, "UPDATE pgmirror_state SET last_check_time = datetime('now'), "
			      "last_check_result = 'damaged', last_rebuild_time = 'zzz'");
	assert_true(mirror_check_due(f->m, 3600, &due));
	assert_true(due);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reader, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_null_name, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_check, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_lag, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_check_due, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

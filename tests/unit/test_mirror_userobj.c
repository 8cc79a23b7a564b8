/*
 * test_mirror_userobj.c: the user's objects through a table rebuild
 * (mirror_user_objects_save/restore). Saved, they are out of the file
 * (nothing of the user's fires or stands in the way) but for the user's
 * tables and their indexes; made again after the rebuild, each that still
 * applies is back, and each that names the dropped column, or a view that
 * is gone, is left out with its reason (a view may name one made after
 * it: views are checked once all are made); a view that only a function of
 * the user's program breaks is kept. Columns renamed on the source are
 * renamed in place first, and the user's objects follow them (a swap of
 * names included). A rollback puts everything back.
 */
#include "config.h"

#include "mirror_fixture.h"

/* t (id key, v, w); ncols 2: w dropped. */
static void define(Fixture *f, int ncols)
{
	fixture_column(&f->cols[0], "id", OID_INT4, "int4", true, 1);
	fixture_column(&f->cols[1], "v", OID_INT4, "int4", false, 2);
	fixture_column(&f->cols[2], "w", OID_INT4, "int4", false, 3);
	fixture_table(&f->def, f->cols, ncols, 'd');
}

/* The names of the file's objects but pgmirror's, comma-separated. */
static char *user_names(Fixture *f)
{
	return fixture_rows(f->path, "SELECT name FROM sqlite_schema WHERE name NOT LIKE "
			    "'pgmirror%' AND name NOT LIKE 'sqlite%' ORDER BY name", ",", "");
}

static void assert_names(Fixture *f, const char *want)
{
	char *got = user_names(f);

	assert_string_equal(got, want);
	free(got);
}

#define ALL "app_fn,ix_v,ix_w,log,log_v,t,tr_ins,tr_log,tr_w,v_fn,vv,vvv,vvw,vw"

/* t with two rows, and the user's objects. */
static int setup(void **state)
{
	Fixture *f = fixture_setup("userobj");
	MirrorTable *t;

	define(f, 3);
	assert_true(mirror_begin(f->m));
	t = fixture_sync(f->m, &f->def);
	for (int i = 1; i <= 2; i++) {
		Value vals[3] = {{.kind = VAL_INT, .i = i}, {.kind = VAL_INT, .i = 10 * i},
				 {.kind = VAL_INT, .i = 100 * i}};

		assert_true(mirror_table_insert(t, vals));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
	/* the user's, on a connection of their own */
	fixture_exec(f->path, "CREATE TABLE log (id INTEGER, v INTEGER); CREATE INDEX log_v ON log (v);"
		    "CREATE INDEX ix_v ON t (v); CREATE INDEX ix_w ON t (w);"
		    /* vvv and vvw name views made after them */
		    "CREATE VIEW vvv AS SELECT * FROM vv; CREATE VIEW vvw AS SELECT * FROM vw;"
		    "CREATE VIEW vv AS SELECT id, v FROM t; CREATE VIEW vw AS SELECT w FROM t;"
		    "CREATE VIEW v_fn AS SELECT app_fn(v) FROM t;"
		    "CREATE TRIGGER tr_ins AFTER INSERT ON t "
		    "BEGIN INSERT INTO log VALUES (new.id, new.v); END;"
		    "CREATE TRIGGER tr_w AFTER UPDATE ON t BEGIN SELECT new.w; END;"
		    "CREATE TRIGGER tr_log AFTER INSERT ON log "
		    "BEGIN SELECT w FROM t WHERE id = new.id; END;"
		    /* a table whose name sorts among them, to show it is kept */
		    "CREATE TABLE app_fn (x)");
	assert_names(f, ALL);
	*state = f;
	return 0;
}

/* w is dropped on the source: the table is rebuilt without it. */
static void test_rebuild_drops_column(void **state)
{
	Fixture *f = *state;
	const char *tables[] = {"T"};
	MirrorUserObjects *u;
	MirrorTable *t;
	char **dropped;
	int n;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_user_objects_save(f->m, tables, 1, &u));
	assert_true(mirror_commit(f->m));
	/* the user's tables and their indexes stay */
	assert_names(f, "app_fn,log,log_v,t");
	assert_true(mirror_begin(f->m));
	define(f, 2);
	t = fixture_sync(f->m, &f->def);
	assert_true(mirror_user_objects_restore(f->m, u, &dropped, &n));
	mirror_user_objects_free(u);
	assert_int_equal(n, 5);
	assert_string_equal(dropped[0], "index \"ix_w\" (no such column: w)");
	assert_string_equal(dropped[1], "view \"vvw\" (no such column: w)");
	assert_string_equal(dropped[2], "view \"vw\" (no such column: w)");
	assert_string_equal(dropped[3], "trigger \"tr_w\" (no such column: new.w)");
	assert_string_equal(dropped[4], "trigger \"tr_log\" (no such column: w)");
	strv_free(dropped, n);
	/* they are back, and fire */
	{
		Value vals[2] = {{.kind = VAL_INT, .i = 3}, {.kind = VAL_INT, .i = 30}};

		assert_true(mirror_table_insert(t, vals));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
	assert_names(f, "app_fn,ix_v,log,log_v,t,tr_ins,v_fn,vv,vvv");
	assert_int_equal(fixture_int(f->path, "SELECT sum(v) FROM vvv"), 60);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM log WHERE id = 3 AND v = 30"), 1);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM log"), 1);
	assert_int_equal(fixture_int(f->path, "SELECT sum(v) FROM vv"), 60);
}

/* v and w swap names on the source: the user's objects follow the
 * columns (by attnum), not the names. */
static void test_columns_swap_names(void **state)
{
	Fixture *f = *state;
	const char *tables[] = {"t"};
	MirrorUserObjects *u;
	MirrorPlan plan;
	MirrorTable *t;
	char **dropped;
	int n;

	define(f, 3);
	f->cols[1].name = "w";
	f->cols[2].name = "v";
	assert_true(mirror_begin(f->m));
	assert_true(mirror_table_plan(f->m, &f->def, false, &plan));
	assert_false(plan.same);
	assert_true(mirror_table_rename_columns(f->m, &f->def, &plan));
	assert_string_equal(plan.src[1], "w");
	assert_true(mirror_user_objects_save(f->m, tables, 1, &u));
	assert_true(mirror_table_sync(f->m, &f->def, &plan, NULL, &t));
	mirror_plan_free(&plan);
	assert_true(mirror_user_objects_restore(f->m, u, &dropped, &n));
	mirror_user_objects_free(u);
	assert_int_equal(n, 0);
	{
		Value vals[3] = {{.kind = VAL_INT, .i = 3}, {.kind = VAL_INT, .i = 30},
				 {.kind = VAL_INT, .i = 300}};

		assert_true(mirror_table_insert(t, vals));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
	assert_names(f, ALL);
	/* vv shows what was v, now w; the trigger logs it */
	assert_int_equal(fixture_int(f->path, "SELECT sum(w) FROM vv"), 60);
	assert_int_equal(fixture_int(f->path, "SELECT sum(v) FROM vw"), 600);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM log WHERE id = 3 AND v = 30"), 1);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pragma_index_info('ix_v') "
				     "WHERE name = 'w'"), 1);
}

/* Every mirror table's (NULL), then a rollback: all back as it was. */
static void test_rollback(void **state)
{
	Fixture *f = *state;
	MirrorUserObjects *u;

	assert_true(mirror_begin(f->m));
	assert_true(mirror_user_objects_save(f->m, NULL, 0, &u));
	mirror_user_objects_free(u);
	assert_true(mirror_drop_all_tables(f->m));
	mirror_rollback(f->m);
	assert_names(f, ALL);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM vv"), 2);
}

/*
 * A planted (or damaged) file whose stored SQL does more than make an
 * object: each object's SQL runs alone, as one statement that makes an
 * object of its own kind and name in main, under SQLite's defensive mode:
 * a view whose text goes on with an ATTACH and a table in the attached
 * file, one that goes on to drop a mirror table, a trigger that is made
 * temporary: each left out with its reason, nothing attached, dropped or
 * written beside the mirror, the rest made again.
 */
static void test_planted(void **state)
{
	Fixture *f = *state;
	Mirror *p = NULL;
	MirrorUserObjects *u = NULL;
	char planted[128], stolen[128], *err = NULL, *sql, *got, **dropped = NULL;
	int ndropped = 0;

	snprintf(planted, sizeof(planted), "%s/planted.db", f->dir);
	snprintf(stolen, sizeof(stolen), "%s/stolen.db", f->dir);
	assert_int_equal(mirror_open(planted, MIRROR_CREATE, &p, &err), MIRROR_OPEN_OK);
	mirror_close(p);
	sql = sqlite3_mprintf(
		"CREATE TABLE own (a); INSERT INTO own VALUES (1); "
		"CREATE VIEW good AS SELECT a FROM own; CREATE VIEW evil AS SELECT 1; "
		"CREATE VIEW sneaky AS SELECT 2; "
		"CREATE TRIGGER tmp AFTER INSERT ON own BEGIN SELECT 1; END; "
		"PRAGMA writable_schema = ON; "
		"UPDATE sqlite_master SET sql = 'CREATE VIEW evil AS SELECT 1; ATTACH ''%q'' AS x; "
		"CREATE TABLE x.pwn (a)' WHERE name = 'evil'; "
		"UPDATE sqlite_master SET sql = 'CREATE VIEW sneaky AS SELECT 2; DROP TABLE t' "
		"WHERE name = 'sneaky'; "
		"UPDATE sqlite_master SET sql = 'CREATE TEMP TRIGGER tmp AFTER INSERT ON own "
		"BEGIN SELECT 1; END' WHERE name = 'tmp'; "
		"PRAGMA writable_schema = OFF", stolen);
	fixture_exec(planted, sql);
	sqlite3_free(sql);
	if (mirror_open(planted, MIRROR_READ, &p, &err) != MIRROR_OPEN_OK)
		fail_msg("%s", err);
	assert_true(mirror_user_objects_read(p, &u));
	mirror_close(p);

	assert_true(mirror_user_objects_restore_from(f->m, planted, u, &dropped, &ndropped));
	mirror_user_objects_free(u);
	got = strv_join(dropped, ndropped, "\n");
	if (ndropped != 3 || strstr(got, "view \"evil\" (") == NULL ||
	    strstr(got, "view \"sneaky\" (") == NULL || strstr(got, "trigger \"tmp\" (") == NULL)
		fail_msg("left out:\n%s", got);
	free(got);
	strv_free(dropped, ndropped);
	assert_int_equal(access(stolen, F_OK), -1);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pragma_database_list"), 1);
	assert_names(f, "app_fn,good,ix_v,ix_w,log,log_v,own,t,tr_ins,tr_log,tr_w,v_fn,vv,vvv,vvw,vw");
	assert_int_equal(fixture_int(f->path, "SELECT a FROM good"), 1);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM t"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rebuild_drops_column, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_columns_swap_names, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_planted, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

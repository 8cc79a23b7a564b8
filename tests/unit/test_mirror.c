/*
 * test_mirror.c: the tick of long SQLite statements (mirror_set_tick). A
 * rebuild of a table with many rows calls it while it runs; when it says
 * stop, the rebuild fails ("interrupted") and a rollback leaves the table
 * as it was; a commit runs to its end whatever it says. Also: a mirror of
 * a newer format is refused; a name another source table holds is too.
 * Renames (mirror_tables_rename): a swap keeps each table's rows, its
 * metadata, and the user's index, view and trigger on it; a name the
 * user's own table has is refused. pgmirror's indexes
 * (mirror_table_indexes) and what rebuilds do to them. Damage
 * (mirror_check.c): a leaf page overwritten is reported by the statement
 * that reads it and by the integrity check, the file shows pgmirror's mark
 * (a text file does not), and is set aside with its -wal.
 */
#include "config.h"

#include <sys/stat.h>

#include "mirror_fixture.h"

#define NROWS 100000
#define FEW 10

typedef struct Ticks {
	int calls;
	int stop_after;   /* say stop from this call on; -1: never */
} Ticks;

static bool count_tick(void *ctx)
{
	Ticks *t = ctx;

	t->calls++;
	return t->stop_after < 0 || t->calls < t->stop_after;
}

static void define(Fixture *f, uint32_t v_oid)
{
	fixture_column(&f->cols[0], "id", OID_INT4, "int4", true, 1);
	fixture_column(&f->cols[1], "v", v_oid, v_oid == OID_INT4 ? "int4" : "int8", false, 2);
	fixture_table(&f->def, f->cols, 2, 'd');
}

/* A mirror with table t (id int4 key, v int4) of n rows. */
static Fixture *setup_rows(int n)
{
	Fixture *f = fixture_setup("mirror");
	MirrorTable *t;

	define(f, OID_INT4);
	assert_true(mirror_begin(f->m));
	t = fixture_sync(f->m, &f->def);
	for (int i = 0; i < n; i++) {
		Value vals[2] = {{.kind = VAL_INT, .i = i}, {.kind = VAL_INT, .i = i * 2}};

		assert_true(mirror_table_insert(t, vals));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
	return f;
}

/* t of NROWS rows, for the tick of a long rebuild; FEW for the others
 * (under valgrind, a tenth of the unit tests' time went to filling t) */
static int setup_many(void **state)
{
	*state = setup_rows(NROWS);
	return 0;
}

static int setup(void **state)
{
	*state = setup_rows(FEW);
	return 0;
}

/* v int4 -> int8: a rebuild that copies every row. */
static bool rebuild(Fixture *f)
{
	MirrorPlan plan;
	MirrorTable *t = NULL;
	bool ok;

	define(f, OID_INT8);
	assert_true(mirror_table_plan(f->m, &f->def, false, &plan));
	assert_false(plan.same);
	ok = mirror_table_sync(f->m, &f->def, &plan, NULL, &t);
	mirror_plan_free(&plan);
	mirror_table_free(t);
	return ok;
}

static void test_rebuild_ticks(void **state)
{
	Fixture *f = *state;
	Ticks ticks = {0, -1};
	int64_t n = 0;

	mirror_set_tick(f->m, count_tick, &ticks);
	assert_true(mirror_begin(f->m));
	assert_true(rebuild(f));
	assert_true(mirror_commit(f->m));
	mirror_set_tick(f->m, NULL, NULL);
	/* every PROGRESS_OPS steps of the INSERT ... SELECT of NROWS rows */
	assert_true(ticks.calls >= 10);
	assert_true(mirror_count_rows(f->m, "t", &n));
	assert_int_equal(n, NROWS);
}

static void test_rebuild_stopped(void **state)
{
	Fixture *f = *state;
	Ticks ticks = {0, 3};
	int64_t n = 0;
	MirrorPlan plan;

	mirror_set_tick(f->m, count_tick, &ticks);
	assert_true(mirror_begin(f->m));
	assert_false(rebuild(f));
	assert_non_null(strstr(mirror_error(f->m), "interrupted"));
	assert_int_equal(ticks.calls, 3);
	mirror_rollback(f->m);
	mirror_set_tick(f->m, NULL, NULL);
	/* the table is as it was: int4, every row */
	define(f, OID_INT4);
	assert_true(mirror_table_plan(f->m, &f->def, false, &plan));
	assert_true(plan.same);
	mirror_plan_free(&plan);
	assert_true(mirror_count_rows(f->m, "t", &n));
	assert_int_equal(n, NROWS);
	/* and the next attempt, not stopped, does it */
	assert_true(mirror_begin(f->m));
	assert_true(rebuild(f));
	assert_true(mirror_commit(f->m));
}

static void test_commit_not_interrupted(void **state)
{
	Fixture *f = *state;
	Ticks ticks = {0, 0}; /* says stop from the first call */
	int64_t n = 0;

	assert_true(mirror_begin(f->m));
	assert_true(rebuild(f));
	mirror_set_tick(f->m, count_tick, &ticks);
	assert_true(mirror_commit(f->m));
	mirror_set_tick(f->m, NULL, NULL);
	assert_true(mirror_count_rows(f->m, "t", &n));
	assert_int_equal(n, NROWS);
}

/* Writes a state (a first run's) and closes the mirror. */
static void close_with_state(Fixture *f)
{
	MirrorState st = {.slot = "s", .publications = "p", .system_identifier = "1",
			  .database = "d"};

	assert_true(mirror_begin(f->m));
	assert_true(mirror_write_state(f->m, &st));
	assert_true(mirror_commit(f->m));
	mirror_close(f->m);
	f->m = NULL;
}

/* Sets the file's format version, outside pgmirror. */
static void set_format_version(Fixture *f, int version)
{
	char *sql = sqlite3_mprintf("UPDATE pgmirror_state SET format_version = %d", version);

	fixture_exec(f->path, sql);
	sqlite3_free(sql);
}

/* format_version: the current one opens; a newer one is refused, for
 * writing and for reading, and the file is left as it was. */
static void test_format_version(void **state)
{
	Fixture *f = *state;
	Mirror *m = NULL;
	char *err = NULL, *expect;

	close_with_state(f);

	assert_int_equal(mirror_open(f->path, MIRROR_WRITE, &f->m, &err), MIRROR_OPEN_OK);
	mirror_close(f->m);
	f->m = NULL;

	set_format_version(f, MIRROR_FORMAT_VERSION + 1);

	expect = sqlite3_mprintf("mirror \"%s\" was made by a newer pgmirror (format version "
				 "%d; this pgmirror knows format version %d and older); use a "
				 "newer pgmirror", f->path, MIRROR_FORMAT_VERSION + 1,
				 MIRROR_FORMAT_VERSION);
	assert_int_equal(mirror_open(f->path, MIRROR_WRITE, &m, &err), MIRROR_OPEN_ERROR);
	assert_null(m);
	assert_string_equal(err, expect);
	free(err);
	assert_int_equal(mirror_open(f->path, MIRROR_READ, &m, &err), MIRROR_OPEN_ERROR);
	assert_string_equal(err, expect);
	free(err);
	sqlite3_free(expect);
	/* put back, so that teardown finds a mirror it can open */
	set_format_version(f, MIRROR_FORMAT_VERSION);
	assert_int_equal(mirror_open(f->path, MIRROR_WRITE, &f->m, &err), MIRROR_OPEN_OK);
}

/* A mirror of format 1 (no pgmirror_tables.sync_lsn) opened for writing
 * gets the column, NULL for its tables (every change applies), and format
 * 2, which an older pgmirror refuses. */
static void test_format_upgrade(void **state)
{
	Fixture *f = *state;
	MirrorTableInfo *mt = NULL;
	int nmt = 0;
	char *err = NULL;

	close_with_state(f);
	fixture_exec(f->path, "UPDATE pgmirror_state SET format_version = 1; "
		     "DROP TABLE pgmirror_tables; "
		     "CREATE TABLE pgmirror_tables (table_name TEXT PRIMARY KEY, "
		     "source_schema TEXT NOT NULL, source_table TEXT NOT NULL, "
		     "relation_oid INTEGER NOT NULL, replica_identity TEXT NOT NULL); "
		     "INSERT INTO pgmirror_tables VALUES ('t', 'public', 't', 16384, 'd')");

	assert_int_equal(mirror_open(f->path, MIRROR_WRITE, &f->m, &err), MIRROR_OPEN_OK);
	assert_true(mirror_table_infos(f->m, &mt, &nmt));
	assert_int_equal(nmt, 1);
	assert_int_equal(mt[0].relation_oid, 16384);
	assert_true(mt[0].sync_lsn == LSN_INVALID);
	mirror_table_infos_free(mt, nmt);
	assert_int_equal(fixture_int(f->path, "SELECT format_version FROM pgmirror_state"),
			 MIRROR_FORMAT_VERSION);
}

/* Another source table under the same name, in another case. */
static void test_name_taken(void **state)
{
	Fixture *f = *state;
	MirrorPlan plan;

	define(f, OID_INT4);
	f->def.name = "T";
	f->def.source_table = "T";
	f->def.relation_oid = 16385;
	assert_false(mirror_table_plan(f->m, &f->def, false, &plan));
	assert_string_equal(mirror_error(f->m),
			    "source tables \"public\".\"t\" and \"public\".\"T\" would both be "
			    "mirrored as \"T\" (SQLite ignores case in names); leave one of them "
			    "out of the publication or rename it");
}

/* A replica identity none of PostgreSQL's four is refused, not spliced
 * into pgmirror_tables; each of the four is stored as it is. */
static void test_replica_identity(void **state)
{
	static const char bad[] = {'\'', 'x', '\0', 'D'};
	Fixture *f = *state;
	MirrorPlan plan;
	MirrorTable *t;
	char want[160], sql[96];

	define(f, OID_INT4);
	f->def.name = "r";
	f->def.source_table = "r";
	for (size_t i = 0; i < sizeof(bad); i++) {
		f->def.relation_oid = 16390;
		f->def.replident = bad[i];
		assert_false(mirror_table_plan(f->m, &f->def, false, &plan));
		mirror_plan_free(&plan);
		snprintf(want, sizeof(want), "source table \"public.r\" has replica identity 0x%02x, "
			 "which is none of PostgreSQL's (d, n, f, i); check the source's catalog",
			 (unsigned char)bad[i]);
		assert_string_equal(mirror_error(f->m), want);
	}
	for (const char *ri = "dnfi"; *ri != '\0'; ri++) {
		f->def.replident = *ri;
		f->def.relation_oid = 16391 + (uint32_t)(ri - "dnfi");
		f->def.name = f->def.source_table = (char[2]){(char)('a' + (ri - "dnfi")), '\0'};
		assert_true(mirror_begin(f->m));
		t = fixture_sync(f->m, &f->def);
		mirror_table_free(t);
		assert_true(mirror_commit(f->m));
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM pgmirror_tables WHERE table_name = "
			 "'%s' AND replica_identity = '%c'", f->def.name, *ri);
		assert_int_equal(fixture_int(f->path, sql), 1);
	}
}

/* Runs sql on the mirror file outside pgmirror (the user's own objects),
 * with the mirror closed meanwhile. */
static void user_sql(Fixture *f, const char *sql)
{
	char *err = NULL;

	mirror_close(f->m);
	fixture_exec(f->path, sql);
	assert_int_equal(mirror_open(f->path, MIRROR_WRITE, &f->m, &err), MIRROR_OPEN_OK);
}

static void assert_named(Fixture *f, uint32_t oid, const char *name, const char *table)
{
	MirrorTableInfo info;
	bool found;

	assert_true(mirror_table_by_oid(f->m, oid, &found, &info));
	assert_true(found);
	assert_string_equal(info.name, name);
	assert_string_equal(info.source_table, table);
	mirror_table_info_clear(&info);
}

/* t (FEW rows) and u (3 rows) swap names, as on the source. */
static void test_rename_swap(void **state)
{
	Fixture *f = *state;
	MirrorPlan plan;
	MirrorTable *t;
	MirrorRename rn[2] = {{16384, "u", "public", "u"}, {16390, "t", "public", "t"}};

	define(f, OID_INT4);
	f->def.name = f->def.source_table = "u";
	f->def.relation_oid = 16390;
	assert_true(mirror_begin(f->m));
	t = fixture_sync(f->m, &f->def);
	for (int i = 0; i < 3; i++) {
		Value vals[2] = {{.kind = VAL_INT, .i = i}, {.kind = VAL_INT, .i = i}};

		assert_true(mirror_table_insert(t, vals));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
	user_sql(f, "CREATE INDEX ix_t ON t (v); CREATE VIEW vt AS SELECT * FROM t; "
		    "CREATE TABLE audit (id INTEGER); CREATE TRIGGER tr_u AFTER INSERT ON u "
		    "BEGIN INSERT INTO audit VALUES (new.id); END");

	assert_true(mirror_begin(f->m));
	assert_true(mirror_tables_rename(f->m, rn, 2));
	assert_true(mirror_commit(f->m));
	assert_named(f, 16384, "u", "u");
	assert_named(f, 16390, "t", "t");
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM u"), FEW);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM t"), 3);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM vt"), FEW);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM sqlite_schema WHERE name = 'ix_t' "
				     "AND tbl_name = 'u'"), 1);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM sqlite_schema WHERE name = 'tr_u' "
				     "AND tbl_name = 't'"), 1);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM pgmirror_columns WHERE table_name = 'u'"),
			 2);
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM sqlite_schema WHERE name LIKE "
				     "'pgmirror_renaming%'"), 0);
	/* a table is found by its OID, not by a name it had */
	define(f, OID_INT4);
	assert_true(mirror_begin(f->m));
	assert_false(mirror_table_plan(f->m, &f->def, false, &plan));
	assert_string_equal(mirror_error(f->m), "mirror table \"u\" of source relation OID 16384 "
			    "is not named \"t\" yet");
	mirror_rollback(f->m);
	/* the user's trigger fires on its table's inserts */
	f->def.name = f->def.source_table = "t";
	f->def.relation_oid = 16390;
	assert_true(mirror_begin(f->m));
	assert_true(mirror_table_plan(f->m, &f->def, false, &plan));
	assert_true(plan.same);
	assert_true(mirror_table_sync(f->m, &f->def, &plan, NULL, &t));
	mirror_plan_free(&plan);
	{
		Value vals[2] = {{.kind = VAL_INT, .i = 7}, {.kind = VAL_INT, .i = 7}};

		assert_true(mirror_table_insert(t, vals));
	}
	mirror_table_free(t);
	assert_true(mirror_commit(f->m));
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM audit WHERE id = 7"), 1);
}

/* A new name that a table of the user's own has; one its trigger has. */
static void test_rename_onto_user_table(void **state)
{
	Fixture *f = *state;
	MirrorRename rn = {16384, "X", "public", "X"};

	user_sql(f, "CREATE TABLE x (a); CREATE TRIGGER y AFTER INSERT ON x BEGIN SELECT 1; END");
	assert_true(mirror_begin(f->m));
	assert_false(mirror_tables_rename(f->m, &rn, 1));
	assert_string_equal(mirror_error(f->m),
			    "cannot rename mirror table \"t\" to \"X\", the new name of its source "
			    "table: the mirror file has a table of that name, which is not pgmirror's; "
			    "rename or drop it");
	mirror_rollback(f->m);
	assert_named(f, 16384, "t", "t");
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM t"), FEW);
	/* a trigger's name is not a table's */
	rn.name = rn.source_table = "y";
	assert_true(mirror_begin(f->m));
	assert_true(mirror_tables_rename(f->m, &rn, 1));
	assert_true(mirror_commit(f->m));
	assert_named(f, 16384, "y", "y");
	assert_int_equal(fixture_int(f->path, "SELECT count(*) FROM y"), FEW);
}

/* t's indexes are want: the CREATE of each, one a line. */
static void assert_indexes(Fixture *f, const char *want)
{
	char *got = fixture_rows(f->path, "SELECT sql FROM sqlite_schema WHERE type = 'index' AND "
				 "tbl_name = 't' AND sql IS NOT NULL ORDER BY name", "", "\n");

	assert_string_equal(got, want);
	free(got);
}

/* Source indexes on the table's columns are made (one on a column the
 * table lacks is not), kept by a rebuild, and go with a dropped column;
 * under REPLICA IDENTITY FULL the match index comes too. */
static void test_indexes(void **state)
{
	Fixture *f = *state;
	const char *c1[] = {"v"}, *c2[] = {"nope"}, *c3[] = {"v", "id"};
	const bool d1[] = {false}, d3[] = {true, false};
	MirrorIndexDef defs[] = {{100, "t_v", 1, c1, d1}, {101, "t_nope", 1, c2, d1},
				 {102, "t v\"id", 2, c3, d3}};

	assert_true(mirror_begin(f->m));
	assert_true(mirror_table_indexes(f->m, "t", defs, 3));
	assert_true(mirror_commit(f->m));
	assert_indexes(f, "CREATE INDEX \"pgmirror_index_100_t_v\" ON \"t\" (\"v\")\n"
			  "CREATE INDEX \"pgmirror_index_102_t v\"\"id\" ON \"t\" (\"v\" DESC, "
			  "\"id\")\n");

	/* a rebuild (v retyped) keeps them */
	assert_true(mirror_begin(f->m));
	assert_true(rebuild(f));
	assert_true(mirror_commit(f->m));
	assert_indexes(f, "CREATE INDEX \"pgmirror_index_100_t_v\" ON \"t\" (\"v\")\n"
			  "CREATE INDEX \"pgmirror_index_102_t v\"\"id\" ON \"t\" (\"v\" DESC, "
			  "\"id\")\n");

	/* REPLICA IDENTITY FULL: the match index, on both (short) columns */
	define(f, OID_INT8);
	f->def.replident = 'f';
	assert_true(mirror_begin(f->m));
	mirror_table_free(fixture_sync(f->m, &f->def));
	assert_true(mirror_commit(f->m));
	assert_indexes(f, "CREATE INDEX \"pgmirror_index_100_t_v\" ON \"t\" (\"v\")\n"
			  "CREATE INDEX \"pgmirror_index_102_t v\"\"id\" ON \"t\" (\"v\" DESC, "
			  "\"id\")\n"
			  "CREATE INDEX \"pgmirror_match_16384\" ON \"t\" (\"id\", \"v\")\n");

	/* v dropped: its indexes go */
	define(f, OID_INT8);
	f->def.replident = 'f';
	f->def.ncols = 1;
	assert_true(mirror_begin(f->m));
	mirror_table_free(fixture_sync(f->m, &f->def));
	assert_true(mirror_commit(f->m));
	assert_indexes(f, "CREATE INDEX \"pgmirror_match_16384\" ON \"t\" (\"id\")\n");

	/* and asked again with none: only the match index stays */
	assert_true(mirror_begin(f->m));
	assert_true(mirror_table_indexes(f->m, "t", NULL, 0));
	assert_true(mirror_commit(f->m));
	assert_indexes(f, "CREATE INDEX \"pgmirror_match_16384\" ON \"t\" (\"id\")\n");
}

/* 0xff over the 11th leaf page of t, as dd would write it. */
static void smash_leaf(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	long page, size;
	FILE *fp;
	char *junk;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	/* the rows are in the -wal yet: into the file with them */
	assert_int_equal(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT pageno, (SELECT page_size FROM "
					    "pragma_page_size) FROM dbstat WHERE name = 't' AND "
					    "pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 10",
					    -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	page = sqlite3_column_int(q, 0);
	size = sqlite3_column_int(q, 1);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	junk = malloc((size_t)size);
	memset(junk, 0xff, (size_t)size);
	fp = fopen(path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, (page - 1) * size, SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, (size_t)size, fp), (size_t)size);
	fclose(fp);
	free(junk);
}

static void test_damage(void **state)
{
	Fixture *f = *state;
	char *found = NULL, text[128], aside[128];
	int64_t n;
	FILE *fp;

	assert_int_equal(mirror_check_file(f->path, &found), MIRROR_CHECK_SOUND);
	assert_string_equal(found, "ok");
	free(found);
	assert_true(mirror_file_was_mirror(f->path));
	snprintf(text, sizeof(text), "%s/notes.txt", f->dir);
	fp = fopen(text, "w");
	fputs("table pgmirror_state, but as text\n", fp);
	fclose(fp);
	assert_false(mirror_file_was_mirror(text));

	smash_leaf(f->path);
	mirror_damage_forget();
	assert_int_equal(mirror_check_file(f->path, &found), MIRROR_CHECK_DAMAGED);
	assert_string_not_equal(found, "ok");
	free(found);
	assert_string_equal(mirror_damage_seen(), "database disk image is malformed");
	mirror_damage_forget();
	assert_null(mirror_damage_seen());
	assert_false(mirror_count_rows(f->m, "t", &n));
	assert_non_null(mirror_damage_seen());
	mirror_damage_forget();

	mirror_close_as_is(f->m);
	f->m = NULL;
	assert_true(mirror_set_aside(f->path, NULL, &found));
	assert_int_equal(access(f->path, F_OK), -1);
	snprintf(aside, sizeof(aside), "%s.damaged", f->path);
	assert_int_equal(access(aside, F_OK), 0);
	snprintf(aside, sizeof(aside), "%s-wal", f->path);
	assert_int_equal(access(aside, F_OK), -1);
}

/*
 * What the check found, on one line and with SQLite's words: the reserved
 * bytes per page in the header changed make every page read wrongly, and
 * SQLite lists the problems in one row under a heading ("*** in database
 * main ***"); the whole row was once left out with the heading, and the
 * finding read "out of memory".
 */
static void test_check_report(void **state)
{
	Fixture *f = *state;
	char *found = NULL;
	unsigned char b;
	FILE *fp;

	mirror_close(f->m);
	f->m = NULL;
	fp = fopen(f->path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
	assert_int_equal(fread(&b, 1, 1, fp), 1);
	b ^= 0xa5;
	assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
	assert_int_equal(fwrite(&b, 1, 1, fp), 1);
	fclose(fp);
	assert_int_equal(mirror_check_file(f->path, &found), MIRROR_CHECK_DAMAGED);
	assert_non_null(strstr(found, "Page "));
	assert_null(strstr(found, "***"));
	assert_null(strchr(found, '\n'));
	assert_string_not_equal(found, "out of memory");
	free(found);
	mirror_damage_forget();
}

/* A file of someone else's (here: of the test's) that a symlink names. */
static void plant_link(const char *dir, const char *link, char *victim, size_t n)
{
	FILE *fp;

	snprintf(victim, n, "%s/victim", dir);
	fp = fopen(victim, "w");
	assert_non_null(fp);
	fputs("precious", fp);
	fclose(fp);
	assert_int_equal(chmod(victim, 0600), 0);
	assert_int_equal(symlink(victim, link), 0);
}

static void assert_victim_untouched(const char *victim)
{
	struct stat st;
	char buf[16] = "";
	FILE *fp = fopen(victim, "r");

	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "precious");
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

/*
 * The side files pgmirror makes and the modes it sets never go through a
 * symlink put in their place: the copy a heal reads a damaged mirror
 * through is made anew (O_EXCL | O_NOFOLLOW), not written into the file a
 * symlink names; the new file of a heal gets the old one's mode on itself,
 * not on what a symlink under its name names.
 */
static void test_side_files_no_follow(void **state)
{
	Fixture *f = *state;
	char copy[128], victim[128], fresh[128], *err = NULL;
	Mirror *c;

	snprintf(copy, sizeof(copy), "%s.rebuild-src", f->path);
	plant_link(f->dir, copy, victim, sizeof(victim));
	c = mirror_open_repaired(f->m, copy);
	mirror_close(c);
	assert_victim_untouched(victim);
	mirror_remove_files(copy);

	snprintf(fresh, sizeof(fresh), "%s.fresh", f->path);
	assert_int_equal(symlink(victim, fresh), 0);
	assert_int_equal(chmod(f->path, 0644), 0);
	mirror_close(f->m);
	f->m = NULL;
	(void)mirror_set_aside(f->path, fresh, &err);
	free(err);
	assert_victim_untouched(victim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rebuild_ticks, setup_many, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rebuild_stopped, setup_many, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_commit_not_interrupted, setup_many, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_format_version, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_format_upgrade, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_name_taken, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_replica_identity, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rename_swap, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rename_onto_user_table, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_indexes, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_damage, setup_many, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_check_report, setup_many, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_side_files_no_follow, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

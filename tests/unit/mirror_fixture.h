/*
 * mirror_fixture.h: what the unit tests of the mirror module share: the
 * Fixture of each test (a mirror file in a directory of its own, made by
 * fixture_setup() and removed by fixture_teardown()), the definition of
 * a table "t" of "public" (relation OID 16384), making it in the mirror,
 * and a connection of the test's own to the file. Include after config.h;
 * it includes cmocka.h.
 */
#ifndef PGMIRROR_TEST_MIRROR_FIXTURE_H
#define PGMIRROR_TEST_MIRROR_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pgmirror/mirror.h"
#include "pgmirror/values.h"

#define FIXTURE_RELID 16384

/* The built-in types of the tests' columns. */
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_INT4 23
#define OID_TEXT 25

/* A test's mirror file (path, in dir), open as m, and its table t: def,
 * with up to three columns. */
typedef struct Fixture {
	char dir[64];
	char path[96];
	Mirror *m;
	MirrorColumnDef cols[3];
	MirrorTableDef def;
} Fixture;

/* A new Fixture with a new mirror m.db in a new directory
 * /tmp/pgm_test_NAME.XXXXXX; t is not defined yet. */
static inline Fixture *fixture_setup(const char *name)
{
	Fixture *f = calloc(1, sizeof(*f));
	char *err = NULL;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pgm_test_%s.XXXXXX", name);
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/m.db", f->dir);
	assert_int_equal(mirror_open(f->path, MIRROR_CREATE, &f->m, &err), MIRROR_OPEN_OK);
	return f;
}

/* Each test's teardown: closes the mirror and removes its directory. */
static inline int fixture_teardown(void **state)
{
	Fixture *f = *state;
	char cmd[128];

	mirror_close(f->m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Column attnum of t: a built-in type named pg_type. */
static inline void fixture_column(MirrorColumnDef *c, const char *name, uint32_t type_oid,
				  const char *pg_type, bool key, int attnum)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->pg_type = pg_type;
	c->type_oid = type_oid;
	c->type_mod = -1;
	assert_true(values_builtin_type(type_oid, -1, &c->type));
	c->is_key = key;
	c->attnum = attnum;
}

/* Table t of public with its ncols columns cols. */
static inline void fixture_table(MirrorTableDef *def, MirrorColumnDef *cols, int ncols,
				 char replident)
{
	memset(def, 0, sizeof(*def));
	def->name = "t";
	def->source_schema = "public";
	def->source_table = "t";
	def->relation_oid = FIXTURE_RELID;
	def->replident = replident;
	def->ncols = ncols;
	def->cols = cols;
}

/* Makes the mirror table of def as planned (in the open transaction). */
static inline MirrorTable *fixture_sync(Mirror *m, const MirrorTableDef *def)
{
	MirrorPlan plan;
	MirrorTable *t = NULL;

	assert_true(mirror_table_plan(m, def, false, &plan));
	assert_true(mirror_table_sync(m, def, &plan, NULL, &t));
	mirror_plan_free(&plan);
	return t;
}

/* Runs sql on the file at path, on a connection of the test's own. */
static inline void fixture_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	char *err = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* The one integer sql yields on the file at path. */
static inline int64_t fixture_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	int64_t v;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	return v;
}

/*
 * The first column of every row sql yields on the file at path, each
 * followed by end ("" for none) and separated by sep; malloc'd.
 */
static inline char *fixture_rows(const char *path, const char *sql, const char *sep,
				 const char *end)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	sqlite3_str *s = sqlite3_str_new(NULL);
	char *out;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	while (sqlite3_step(q) == SQLITE_ROW)
		sqlite3_str_appendf(s, "%s%s%s", sqlite3_str_length(s) ? sep : "",
				    (const char *)sqlite3_column_text(q, 0), end);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	out = strdup(sqlite3_str_value(s) ? sqlite3_str_value(s) : "");
	sqlite3_free(sqlite3_str_finish(s));
	return out;
}

#endif

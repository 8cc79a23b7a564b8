/*
 * test_apply.c: the applier and the mirror together, without a server.
 * Decoded messages (PgoMessage structs as the decoder makes them) go into
 * an applier over a mirror in a temporary directory; a fake Catalog
 * stands for the source's catalog. The tests read the mirror back with a
 * connection of their own and compare rows and pgmirror_columns.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/apply.h"
#include "pgmirror/mirror.h"

#define OID_INT4 23
#define OID_TEXT 25
#define UNCHANGED ((const char *)1) /* a 'u' column in a tuple */
#define MAXCOLS 8

/* --- the fake source catalog ------------------------------------------- */

typedef struct FakeSource {
	const char *names[MAXCOLS];   /* the relation's columns now ... */
	int attnums[MAXCOLS];         /* ... and their attnums */
	int ncols;
	const char *keys[4];          /* column_values(): key text per row ... */
	const char *vals[4];          /* ... and the column's value (NULL: NULL) */
	int nrows;
	const char *column_asked;     /* the column column_values() was asked for */
	SourceFill fill;              /* column_fill()'s answer (missing borrowed) */
	struct {
		uint32_t oid;
		const char *nspname, *relname;
	} now[4];                     /* relation_name(): names now; others are gone */
	int nnow;
} FakeSource;

static bool fake_type_info(void *ctx, uint32_t oid, SourceType *out)
{
	(void)ctx;
	(void)oid;
	memset(out, 0, sizeof(*out));
	return false; /* every type of these tests is built in */
}

static bool fake_column_fill(void *ctx, uint32_t relid, const char *column, SourceFill *out)
{
	FakeSource *s = ctx;

	(void)relid;
	(void)column;
	*out = s->fill;
	out->missing = s->fill.missing ? strdup(s->fill.missing) : NULL;
	return true;
}

static bool fake_column_attnums(void *ctx, uint32_t relid, const char *const *names, int n,
				int *attnums)
{
	FakeSource *s = ctx;

	(void)relid;
	for (int i = 0; i < n; i++) {
		attnums[i] = 0;
		for (int j = 0; j < s->ncols; j++)
			if (strcmp(names[i], s->names[j]) == 0)
				attnums[i] = s->attnums[j];
	}
	return true;
}

static bool fake_column_values(void *ctx, uint32_t relid, const char *const *keys, int nkeys,
			       const char *column, CatalogRowFn row, void *arg)
{
	FakeSource *s = ctx;

	(void)relid;
	(void)keys;
	assert_int_equal(nkeys, 1);
	s->column_asked = column;
	for (int r = 0; r < s->nrows; r++) {
		const char *vals[2] = {s->keys[r], s->vals[r]};
		int lens[2] = {(int)strlen(s->keys[r]), s->vals[r] ? (int)strlen(s->vals[r]) : 0};

		if (!row(arg, vals, lens))
			return false;
	}
	return true;
}

static bool fake_relation_name(void *ctx, uint32_t relid, char **nspname, char **relname)
{
	FakeSource *s = ctx;

	*nspname = *relname = NULL;
	for (int i = 0; i < s->nnow; i++) {
		if (s->now[i].oid == relid) {
			*nspname = strdup(s->now[i].nspname);
			*relname = strdup(s->now[i].relname);
		}
	}
	return true;
}

static const char *fake_error(void *ctx)
{
	(void)ctx;
	return "fake catalog error";
}

/* --- fixture ------------------------------------------------------------ */

typedef struct Fixture {
	char dir[64];
	char path[96];
	Mirror *m;
	Applier *a;
	FakeSource src;
	Catalog catalog;
	Lsn lsn;              /* the last commit's LSN */
} Fixture;

static int setup(void **state)
{
	Fixture *f = calloc(1, sizeof(*f));
	MirrorState st = {0};
	char *err = NULL;

	strcpy(f->dir, "/tmp/pgm_test_apply.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/m.db", f->dir);
	assert_int_equal(mirror_open(f->path, MIRROR_CREATE, &f->m, &err), MIRROR_OPEN_OK);
	st.slot = "s";
	st.publications = "p";
	st.system_identifier = "1";
	st.database = "d";
	st.confirmed_lsn = 0x100;
	st.initial_copy_done = true;
	assert_true(mirror_begin(f->m));
	assert_true(mirror_write_state(f->m, &st));
	assert_true(mirror_commit(f->m));
	f->catalog = (Catalog){&f->src, fake_type_info, fake_column_fill, fake_column_attnums,
			       fake_column_values, fake_error, NULL, fake_relation_name, NULL, NULL};
	f->a = apply_new(f->m, 0x100, &f->catalog);
	f->lsn = 0x1000;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	Fixture *f = *state;
	char cmd[128];

	apply_free(f->a);
	mirror_close(f->m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* The result of sql on the mirror, read on a connection of its own: rows
 * joined by ';', columns by '|', NULL as "-". */
static char *query(Fixture *f, const char *sql)
{
	static char out[2048];
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t n = 0;

	out[0] = '\0';
	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);

			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s",
					      i ? "|" : (n ? ";" : ""), v ? v : "-");
			assert_true(n < sizeof(out));
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return out;
}

/* --- messages ----------------------------------------------------------- */

/* Sets what the fake source says its relation's columns are now. */
static void source_columns(Fixture *f, int n, const char *const *names, const int *attnums)
{
	f->src.ncols = n;
	for (int i = 0; i < n; i++) {
		f->src.names[i] = names[i];
		f->src.attnums[i] = attnums[i];
	}
}

static void send(Fixture *f, const PgoMessage *msg)
{
	if (!apply_message(f->a, msg))
		fail_msg("apply_message: %s", apply_error(f->a));
}

static void begin(Fixture *f)
{
	PgoMessage m = {.type = PGO_BEGIN};

	f->lsn += 0x100;
	m.u.begin.final_lsn = f->lsn;
	m.u.begin.commit_time = 1;
	send(f, &m);
}

static void commit(Fixture *f)
{
	PgoMessage m = {.type = PGO_COMMIT};

	m.u.commit.commit_lsn = f->lsn;
	m.u.commit.end_lsn = f->lsn + 8;
	m.u.commit.commit_time = 1;
	send(f, &m);
	assert_true(apply_flush(f->a));
}

/* A Relation message: types[i] of each column, keys flagged by a 1. */
static void relation(Fixture *f, uint32_t oid, const char *relname, char replident, int n,
		     const char *const *names, const uint32_t *types, const int *keys)
{
	PgoColumn cols[MAXCOLS];
	PgoMessage m = {.type = PGO_RELATION};

	for (int i = 0; i < n; i++)
		cols[i] = (PgoColumn){keys[i] ? PGO_COLUMN_KEY : 0, names[i], types[i], -1};
	m.u.relation = (PgoRelation){oid, "public", relname, replident, (uint16_t)n, cols};
	send(f, &m);
}

/* Whether the mirror has a table for relation oid. */
static bool in_mirror(Fixture *f, uint32_t oid)
{
	MirrorTableInfo info;
	bool found;

	assert_true(mirror_table_by_oid(f->m, oid, &found, &info));
	mirror_table_info_clear(&info);
	return found;
}

/* The stream applies changes only to tables the mirror has: make the
 * table of a relation just described, as the initial copy does. */
static void make_table(Fixture *f, uint32_t oid)
{
	begin(f);
	if (!apply_make_table(f->a, oid, LSN_INVALID, NULL))
		fail_msg("apply_make_table: %s", apply_error(f->a));
	commit(f);
}

/* A Relation message for a table the mirror has, made if need be. */
static void relation_in_mirror(Fixture *f, uint32_t oid, const char *relname, char replident,
			       int n, const char *const *names, const uint32_t *types,
			       const int *keys)
{
	relation(f, oid, relname, replident, n, names, types, keys);
	if (!apply_in_transaction(f->a) && !in_mirror(f, oid))
		make_table(f, oid);
}

static void tuple(PgoTuple *t, PgoValue *buf, int n, const char *const *vals)
{
	for (int i = 0; i < n; i++) {
		if (vals[i] == NULL)
			buf[i] = (PgoValue){PGO_COL_NULL, 0, NULL};
		else if (vals[i] == UNCHANGED)
			buf[i] = (PgoValue){PGO_COL_UNCHANGED, 0, NULL};
		else
			buf[i] = (PgoValue){PGO_COL_TEXT, (uint32_t)strlen(vals[i]),
					    (const uint8_t *)vals[i]};
	}
	t->ncols = (uint16_t)n;
	t->cols = buf;
}

static PgoMessage insert_msg(uint32_t relid, int n, const char *const *vals, PgoValue *buf)
{
	PgoMessage m = {.type = PGO_INSERT};

	m.u.insert.relid = relid;
	tuple(&m.u.insert.newtup, buf, n, vals);
	return m;
}

static void insert(Fixture *f, uint32_t relid, int n, const char *const *vals)
{
	PgoValue buf[MAXCOLS];
	PgoMessage m = insert_msg(relid, n, vals, buf);

	send(f, &m);
}

/* old_kind 0: no old tuple (oldvals ignored). */
static void update(Fixture *f, uint32_t relid, int n, char old_kind, const char *const *oldvals,
		   const char *const *newvals)
{
	PgoValue oldbuf[MAXCOLS], newbuf[MAXCOLS];
	PgoMessage m = {.type = PGO_UPDATE};

	m.u.update.relid = relid;
	m.u.update.old_kind = old_kind;
	if (old_kind != 0)
		tuple(&m.u.update.oldtup, oldbuf, n, oldvals);
	tuple(&m.u.update.newtup, newbuf, n, newvals);
	send(f, &m);
}

static void delete(Fixture *f, uint32_t relid, int n, char old_kind, const char *const *vals)
{
	PgoValue buf[MAXCOLS];
	PgoMessage m = {.type = PGO_DELETE};

	m.u.delete.relid = relid;
	m.u.delete.old_kind = old_kind;
	tuple(&m.u.delete.oldtup, buf, n, vals);
	send(f, &m);
}

#define ROW(...) ((const char *const[]){__VA_ARGS__})
#define NAMES(...) ((const char *const[]){__VA_ARGS__})
#define TYPES(...) ((const uint32_t[]){__VA_ARGS__})
#define INTS(...) ((const int[]){__VA_ARGS__})

static const char columns_sql[] =
	"SELECT column_name, pg_type, is_key, source_attnum FROM pgmirror_columns "
	"WHERE table_name = '%s' ORDER BY position";

static char *columns_of(Fixture *f, const char *table)
{
	char sql[256];

	snprintf(sql, sizeof(sql), columns_sql, table);
	return query(f, sql);
}

/* public.t (id int4 key, v text, big text), with rows 1 and 2. */
static void make_t(Fixture *f)
{
	source_columns(f, 3, NAMES("id", "v", "big"), INTS(1, 2, 3));
	relation_in_mirror(f, 1000, "t", 'd', 3, NAMES("id", "v", "big"),
			   TYPES(OID_INT4, OID_TEXT, OID_TEXT), INTS(1, 0, 0));
	begin(f);
	insert(f, 1000, 3, ROW("1", "a", "big1"));
	insert(f, 1000, 3, ROW("2", "b", "big2"));
	commit(f);
}

/* --- tests -------------------------------------------------------------- */

static void test_insert_update_unchanged_toast(void **state)
{
	Fixture *f = *state;

	make_t(f);
	assert_string_equal(query(f, "SELECT * FROM t ORDER BY id"), "1|a|big1;2|b|big2");
	assert_string_equal(columns_of(f, "t"), "id|int4|1|1;v|text|0|2;big|text|0|3");
	/* the key did not change: no old tuple; big was not sent ('u') */
	begin(f);
	update(f, 1000, 3, 0, NULL, ROW("1", "a2", UNCHANGED));
	commit(f);
	assert_string_equal(query(f, "SELECT * FROM t ORDER BY id"), "1|a2|big1;2|b|big2");
	/* the key changed: the old key ('K') finds the row */
	begin(f);
	update(f, 1000, 3, 'K', ROW("2", NULL, NULL), ROW("3", "c", UNCHANGED));
	commit(f);
	assert_string_equal(query(f, "SELECT * FROM t ORDER BY id"), "1|a2|big1;3|c|big2");
	/* the position is the last commit's end, with its changes */
	assert_int_equal(apply_durable_lsn(f->a), f->lsn + 8);
	assert_string_equal(query(f, "SELECT confirmed_lsn FROM pgmirror_state"), "0/1408");
}

static void test_delete_and_truncate(void **state)
{
	Fixture *f = *state;
	uint32_t relids[1] = {1000};
	PgoMessage tr = {.type = PGO_TRUNCATE};

	make_t(f);
	begin(f);
	delete(f, 1000, 3, 'K', ROW("1", NULL, NULL));
	commit(f);
	assert_string_equal(query(f, "SELECT id FROM t"), "2");
	tr.u.truncate.nrelids = 1;
	tr.u.truncate.relids = relids;
	begin(f);
	send(f, &tr);
	commit(f);
	assert_string_equal(query(f, "SELECT count(*) FROM t"), "0");
}

/* REPLICA IDENTITY FULL, three equal rows: a Delete or an Update changes
 * exactly one of them. */
static void test_identity_full_duplicates(void **state)
{
	Fixture *f = *state;

	source_columns(f, 2, NAMES("a", "b"), INTS(1, 2));
	relation_in_mirror(f, 2000, "f", 'f', 2, NAMES("a", "b"), TYPES(OID_INT4, OID_TEXT), INTS(1, 1));
	begin(f);
	for (int i = 0; i < 3; i++)
		insert(f, 2000, 2, ROW("1", "x"));
	insert(f, 2000, 2, ROW("2", NULL));
	commit(f);
	assert_string_equal(query(f, "SELECT count(*) FROM f"), "4");

	begin(f);
	delete(f, 2000, 2, 'O', ROW("1", "x"));
	commit(f);
	assert_string_equal(query(f, "SELECT a, b, count(*) FROM f GROUP BY 1, 2 ORDER BY 1"),
			    "1|x|2;2|-|1");
	begin(f);
	update(f, 2000, 2, 'O', ROW("1", "x"), ROW("1", "y"));
	/* NULL matches NULL under FULL */
	update(f, 2000, 2, 'O', ROW("2", NULL), ROW("2", "z"));
	commit(f);
	assert_string_equal(query(f, "SELECT a, b, count(*) FROM f GROUP BY 1, 2 ORDER BY 1, 2"),
			    "1|x|1;1|y|1;2|z|1");
	assert_string_equal(columns_of(f, "f"), "a|int4|1|1;b|text|1|2");
}

/* The same where columns take every name of SQLite's row id, so that no
 * statement can pick one row: all are taken out and all but one put back. */
static void test_identity_full_no_rowid_name(void **state)
{
	Fixture *f = *state;

	source_columns(f, 3, NAMES("rowid", "_rowid_", "oid"), INTS(1, 2, 3));
	relation_in_mirror(f, 2100, "r", 'f', 3, NAMES("rowid", "_rowid_", "oid"),
			   TYPES(OID_INT4, OID_INT4, OID_TEXT), INTS(1, 1, 1));
	begin(f);
	for (int i = 0; i < 3; i++)
		insert(f, 2100, 3, ROW("1", "2", "x"));
	commit(f);
	begin(f);
	delete(f, 2100, 3, 'O', ROW("1", "2", "x"));
	update(f, 2100, 3, 'O', ROW("1", "2", "x"), ROW("1", "2", "y"));
	commit(f);
	assert_string_equal(query(f, "SELECT \"oid\", count(*) FROM r GROUP BY 1 ORDER BY 1"),
			    "x|1;y|1");
}

/* Columns added (refilled from the source), dropped, renamed and retyped
 * (refilled: the source may have converted with USING) on a keyed table. */
static void test_schema_changes(void **state)
{
	Fixture *f = *state;

	make_t(f);
	/* added: c int4 (attnum 4); the source holds 10 and 20 in it */
	source_columns(f, 4, NAMES("id", "v", "big", "c"), INTS(1, 2, 3, 4));
	f->src.nrows = 2;
	f->src.keys[0] = "1";
	f->src.vals[0] = "10";
	f->src.keys[1] = "2";
	f->src.vals[1] = "20";
	relation(f, 1000, "t", 'd', 4, NAMES("id", "v", "big", "c"),
		 TYPES(OID_INT4, OID_TEXT, OID_TEXT, OID_INT4), INTS(1, 0, 0, 0));
	begin(f);
	insert(f, 1000, 4, ROW("3", "c", "big3", "30"));
	commit(f);
	assert_string_equal(f->src.column_asked, "c");
	assert_string_equal(query(f, "SELECT * FROM t ORDER BY id"),
			    "1|a|big1|10;2|b|big2|20;3|c|big3|30");
	assert_string_equal(columns_of(f, "t"),
			    "id|int4|1|1;v|text|0|2;big|text|0|3;c|int4|0|4");

	/* dropped: big; renamed: v -> w (same attnum, values kept) */
	f->src.column_asked = NULL;
	source_columns(f, 3, NAMES("id", "w", "c"), INTS(1, 2, 4));
	relation(f, 1000, "t", 'd', 3, NAMES("id", "w", "c"),
		 TYPES(OID_INT4, OID_TEXT, OID_INT4), INTS(1, 0, 0));
	begin(f);
	delete(f, 1000, 3, 'K', ROW("3", NULL, NULL));
	commit(f);
	assert_null(f->src.column_asked);
	assert_string_equal(query(f, "SELECT * FROM t ORDER BY id"), "1|a|10;2|b|20");
	assert_string_equal(columns_of(f, "t"), "id|int4|1|1;w|text|0|2;c|int4|0|4");

	/* retyped: c int4 -> text, read again from the source */
	f->src.vals[0] = "ten";
	f->src.vals[1] = NULL;
	relation(f, 1000, "t", 'd', 3, NAMES("id", "w", "c"),
		 TYPES(OID_INT4, OID_TEXT, OID_TEXT), INTS(1, 0, 0));
	begin(f);
	update(f, 1000, 3, 0, NULL, ROW("1", "a1", UNCHANGED));
	commit(f);
	assert_string_equal(f->src.column_asked, "c");
	assert_string_equal(query(f, "SELECT id, w, c, typeof(c) FROM t ORDER BY id"),
			    "1|a1|ten|text;2|b|-|null");
	assert_string_equal(columns_of(f, "t"), "id|int4|1|1;w|text|0|2;c|text|0|4");
}

/*
 * A column of type type_oid added to a table without a key: existing rows
 * get the constant the source gave them (missing), which the converted
 * value may borrow: it must live until the rebuild has written it.
 */
static void added_column_keyless(Fixture *f, uint32_t type_oid, const char *missing,
				 const char *want_rows)
{
	source_columns(f, 1, NAMES("a"), INTS(1));
	relation_in_mirror(f, 3000, "k", 'f', 1, NAMES("a"), TYPES(OID_INT4), INTS(1));
	begin(f);
	insert(f, 3000, 1, ROW("1"));
	insert(f, 3000, 1, ROW("2"));
	commit(f);
	source_columns(f, 2, NAMES("a", "b"), INTS(1, 2));
	f->src.fill = (SourceFill){true, true, (char *)missing, true};
	relation(f, 3000, "k", 'f', 2, NAMES("a", "b"), TYPES(OID_INT4, type_oid), INTS(1, 1));
	begin(f);
	insert(f, 3000, 2, ROW("3", "8"));
	commit(f);
	assert_string_equal(query(f, "SELECT * FROM k ORDER BY a"), want_rows);
}

static void test_added_column_keyless(void **state)
{
	Fixture *f = *state;

	added_column_keyless(f, OID_INT4, "7", "1|7;2|7;3|8");
	assert_string_equal(columns_of(f, "k"), "a|int4|1|1;b|int4|1|2");
}

static void test_added_text_column_keyless(void **state)
{
	added_column_keyless(*state, OID_TEXT, "hello", "1|hello;2|hello;3|8");
}

/* A transaction whose commit lies before the mirror's position was
 * applied already: skipped. */
static void test_skip_applied(void **state)
{
	Fixture *f = *state;
	PgoMessage m = {.type = PGO_BEGIN};

	make_t(f);
	m.u.begin.final_lsn = 0x80; /* before the durable 0x100 of setup */
	send(f, &m);
	insert(f, 1000, 3, ROW("9", "old", "x"));
	m = (PgoMessage){.type = PGO_COMMIT};
	m.u.commit.commit_lsn = 0x80;
	m.u.commit.end_lsn = 0x88;
	send(f, &m);
	assert_true(apply_flush(f->a));
	assert_string_equal(query(f, "SELECT id FROM t ORDER BY id"), "1;2");
}

/*
 * A value the mirror cannot store makes its table wait: the table's mirror
 * table goes with its rows of the transaction, its later changes are
 * skipped, and the transaction's changes of other tables are applied; the
 * reason names the column.
 */
static void test_value_makes_table_wait(void **state)
{
	Fixture *f = *state;
	PgoValue buf[MAXCOLS];
	PgoMessage m;

	make_t(f);
	relation_in_mirror(f, 1001, "b", 'f', 3, NAMES("i", "t", "n"),
			   TYPES(OID_INT4, OID_TEXT, 1700), INTS(1, 1, 1));
	begin(f);
	insert(f, 1000, 3, ROW("5", "e", "big5"));
	insert(f, 1001, 3, ROW("1", "a", "1.5"));
	m = insert_msg(1000, 3, ROW("x", "e", "big"), buf);
	assert_true(apply_message(f->a, &m));
	insert(f, 1000, 3, ROW("6", "e", "big6"));
	insert(f, 1001, 3, ROW("2", "b", "2.5"));
	commit(f);
	assert_true(apply_flush(f->a));
	assert_string_equal(query(f, "SELECT count(*) FROM sqlite_master WHERE name = 't'"), "0");
	assert_string_equal(query(f, "SELECT i FROM b ORDER BY i"), "1;2");
	assert_string_equal(query(f, "SELECT reason LIKE '%Insert to \"public.t\": column \"id\"%"
				  "cannot store%' FROM pgmirror_waiting WHERE relation_oid = 1000"),
			    "1");
}

/* Protocol errors say what was wrong. */
static void test_errors_name_columns(void **state)
{
	Fixture *f = *state;
	PgoValue buf[MAXCOLS];
	PgoMessage m;

	make_t(f);
	begin(f);
	m = (PgoMessage){.type = PGO_DELETE};
	m.u.delete.relid = 1000;
	m.u.delete.old_kind = 'K';
	tuple(&m.u.delete.oldtup, buf, 3, ROW(UNCHANGED, NULL, NULL));
	assert_false(apply_message(f->a, &m));
	assert_string_equal(apply_error(f->a),
			    "protocol error: Delete for \"public.t\" lacks key column \"id\"");

	m = (PgoMessage){.type = PGO_BEGIN};
	m.u.begin.final_lsn = 0x2000;
	send(f, &m);
	assert_false(apply_message(f->a, &m));
	assert_string_equal(apply_error(f->a),
			    "protocol error: Begin at 0/2000 inside a transaction");
}

/*
 * Values in binary format ('b', a stream in binary): converted by their
 * type's binary reader into what their text stores, in a row inserted and
 * in the old row of REPLICA IDENTITY FULL that finds it; a type that is
 * not read in binary (here point, OID 600) is an error naming the column.
 */
static void test_binary_values(void **state)
{
	Fixture *f = *state;
	PgoValue buf[MAXCOLS], oldbuf[MAXCOLS];
	PgoMessage m;
	/* int4 7, text "é", numeric(10,2) 12.50 (ndigits 2, weight 0, scale 2:
	 * 12, 5000) */
	static const char int7[] = "\0\0\0\x07", num[] = "\0\x02\0\0\0\0\0\x02\0\x0c\x13\x88";

	relation_in_mirror(f, 1001, "b", 'f', 3, NAMES("i", "t", "n"),
			   TYPES(OID_INT4, OID_TEXT, 1700), INTS(1, 1, 1));
	begin(f);
	m = insert_msg(1001, 3, ROW("0", "é", "0"), buf);
	buf[0] = (PgoValue){PGO_COL_BINARY, 4, (const uint8_t *)int7};
	buf[1] = (PgoValue){PGO_COL_BINARY, 2, (const uint8_t *)"é"};
	buf[2] = (PgoValue){PGO_COL_BINARY, 12, (const uint8_t *)num};
	send(f, &m);
	commit(f);
	assert_string_equal(query(f, "SELECT quote(i), quote(t), typeof(n), n FROM b"),
			    "7|'é'|text|12.50");
	/* the same row, in binary, is found by all its values */
	begin(f);
	m = (PgoMessage){.type = PGO_DELETE};
	m.u.delete.relid = 1001;
	m.u.delete.old_kind = 'O';
	tuple(&m.u.delete.oldtup, oldbuf, 3, ROW("0", "0", "0"));
	oldbuf[0] = buf[0];
	oldbuf[1] = buf[1];
	oldbuf[2] = buf[2];
	send(f, &m);
	commit(f);
	assert_string_equal(query(f, "SELECT count(*) FROM b"), "0");

	relation_in_mirror(f, 1002, "p", 'd', 2, NAMES("id", "pt"), TYPES(OID_INT4, 600),
			   INTS(1, 0));
	begin(f);
	m = insert_msg(1002, 2, ROW("1", "x"), buf);
	buf[1] = (PgoValue){PGO_COL_BINARY, 16, (const uint8_t *)"0123456789abcdef"};
	assert_false(apply_message(f->a, &m));
	assert_string_equal(apply_error(f->a),
			    "could not apply Insert to \"public.p\": column \"pt\": a value in "
			    "binary format of type OID 600, which pgmirror reads only in text format");
}

/* Two source tables whose names SQLite does not tell apart. */
static void test_name_clash(void **state)
{
	Fixture *f = *state;
	PgoValue buf[MAXCOLS];
	PgoMessage m;

	make_t(f);
	/* both are on the source now, under those names */
	f->src.now[0].oid = 1000;
	f->src.now[0].nspname = "public";
	f->src.now[0].relname = "t";
	f->src.now[1].oid = 4000;
	f->src.now[1].nspname = "public";
	f->src.now[1].relname = "T";
	f->src.nnow = 2;
	source_columns(f, 1, NAMES("id"), INTS(1));
	relation(f, 4000, "T", 'd', 1, NAMES("id"), TYPES(OID_INT4), INTS(1));
	begin(f);
	(void)buf;
	(void)m;
	assert_false(apply_make_table(f->a, 4000, LSN_INVALID, NULL));
	assert_string_equal(apply_error(f->a),
			    "could not mirror table \"public.T\": source tables \"public\".\"t\" "
			    "and \"public\".\"T\" would both be mirrored as \"T\" (SQLite ignores "
			    "case in names); leave one of them out of the publication or rename it");
}

/*
 * The skip rule: a change for a relation the mirror has no table for is
 * skipped and noted (once) for the table sync; a synced table's changes
 * apply only from transactions that commit at or after its sync LSN.
 */
static void test_skip_unknown_and_before_sync(void **state)
{
	Fixture *f = *state;
	const uint32_t *oids;
	Lsn synced;

	make_t(f);
	source_columns(f, 1, NAMES("a"), INTS(1));
	relation(f, 5000, "u", 'd', 1, NAMES("a"), TYPES(OID_INT4), INTS(1));
	begin(f);
	insert(f, 5000, 1, ROW("1"));
	insert(f, 5000, 1, ROW("2"));
	insert(f, 1000, 3, ROW("3", "c", "big3"));
	commit(f);
	assert_false(in_mirror(f, 5000));
	assert_int_equal(apply_unknown_relations(f->a, &oids), 1);
	assert_int_equal(oids[0], 5000);
	assert_string_equal(query(f, "SELECT id FROM t ORDER BY id"), "1;2;3");
	apply_clear_unknown(f->a);
	assert_int_equal(apply_unknown_relations(f->a, &oids), 0);

	/* an Insert without a value (an UPDATE moved the row into a row
	 * filter, its TOASTed column unchanged): t is to be copied again, and
	 * its changes are skipped until then, the rest of the transaction's too */
	begin(f);
	insert(f, 1000, 3, ROW("7", "g", "big7"));
	insert(f, 1000, 3, ROW("8", "h", UNCHANGED));
	insert(f, 1000, 3, ROW("9", "i", "big9"));
	commit(f);
	assert_int_equal(apply_unknown_relations(f->a, &oids), 1);
	assert_int_equal(oids[0], 1000);
	assert_string_equal(query(f, "SELECT id FROM t ORDER BY id"), "1;2;3;7");
	/* stored, for a run that ends before the copy */
	assert_string_equal(query(f, "SELECT definition LIKE '(to be synced again%' FROM "
				  "pgmirror_tables WHERE relation_oid = 1000"), "1");
	apply_forget_table(f->a, 1000);
	apply_clear_unknown(f->a);

	/* t synced at a snapshot two transactions ahead of the stream */
	source_columns(f, 3, NAMES("id", "v", "big"), INTS(1, 2, 3));
	synced = f->lsn + 0x200;
	assert_true(mirror_begin(f->m));
	assert_true(mirror_set_sync_lsn(f->m, 1000, synced));
	assert_true(mirror_commit(f->m));
	apply_forget_table(f->a, 1000);
	begin(f); /* commits before the sync LSN: the snapshot has it */
	insert(f, 1000, 3, ROW("4", "d", "big4"));
	commit(f);
	begin(f); /* commits at the sync LSN: after the snapshot */
	assert_true(f->lsn == synced);
	insert(f, 1000, 3, ROW("5", "e", "big5"));
	commit(f);
	assert_string_equal(query(f, "SELECT id FROM t ORDER BY id"), "1;2;3;5;7");
	/* a changed definition keeps the sync LSN */
	assert_string_equal(query(f, "SELECT sync_lsn IS NOT NULL FROM pgmirror_tables "
				  "WHERE relation_oid = 1000"), "1");
}

/*
 * A table the initial copy makes gets its sync LSN at once, in the copy's
 * transaction and before any row, so that the transaction writes that row
 * of pgmirror_tables once (copy.c); the copy's rows, at that LSN, apply.
 */
static void test_make_table_with_sync_lsn(void **state)
{
	Fixture *f = *state;
	char lsn[LSN_TEXT_SIZE];

	source_columns(f, 1, NAMES("a"), INTS(1));
	relation(f, 5000, "u", 'd', 1, NAMES("a"), TYPES(OID_INT4), INTS(1));
	begin(f);
	if (!apply_make_table(f->a, 5000, f->lsn, "d"))
		fail_msg("apply_make_table: %s", apply_error(f->a));
	insert(f, 5000, 1, ROW("1"));
	commit(f);
	assert_string_equal(query(f, "SELECT sync_lsn FROM pgmirror_tables WHERE relation_oid = 5000"),
			    lsn_format(f->lsn, lsn));
	assert_string_equal(query(f, "SELECT a FROM u"), "1");
	begin(f);
	insert(f, 5000, 1, ROW("2"));
	commit(f);
	assert_string_equal(query(f, "SELECT a FROM u ORDER BY a"), "1;2");
}

static void now_named(Fixture *f, int i, uint32_t oid, const char *relname)
{
	f->src.now[i].oid = oid;
	f->src.now[i].nspname = "public";
	f->src.now[i].relname = relname;
	if (f->src.nnow <= i)
		f->src.nnow = i + 1;
}

/*
 * A mirror table belongs to its relation OID: a Relation message under a
 * new name renames it, keeping its rows; one under an old name (history
 * replayed) leaves it under the name the source has now; a swap moves
 * both, and the next change of the other table goes to its own table.
 */
static void test_rename_follows_oid(void **state)
{
	Fixture *f = *state;

	make_t(f);
	now_named(f, 0, 1000, "t2");
	relation(f, 1000, "t2", 'd', 3, NAMES("id", "v", "big"),
		 TYPES(OID_INT4, OID_TEXT, OID_TEXT), INTS(1, 0, 0));
	begin(f);
	insert(f, 1000, 3, ROW("3", "c", "big3"));
	commit(f);
	assert_string_equal(query(f, "SELECT table_name, source_table FROM pgmirror_tables"),
			    "t2|t2");
	assert_string_equal(query(f, "SELECT id FROM t2 ORDER BY id"), "1;2;3");
	assert_string_equal(columns_of(f, "t2"), "id|int4|1|1;v|text|0|2;big|text|0|3");

	/* the stream describes it by its old name: the source's name now wins */
	relation(f, 1000, "t", 'd', 3, NAMES("id", "v", "big"),
		 TYPES(OID_INT4, OID_TEXT, OID_TEXT), INTS(1, 0, 0));
	begin(f);
	insert(f, 1000, 3, ROW("4", "d", "big4"));
	commit(f);
	assert_string_equal(query(f, "SELECT table_name FROM pgmirror_tables"), "t2");
	assert_string_equal(query(f, "SELECT id FROM t2 ORDER BY id"), "1;2;3;4");

	/* u, then a swap of t2 and u, of which the stream shows u's side */
	now_named(f, 1, 2000, "u");
	relation_in_mirror(f, 2000, "u", 'd', 3, NAMES("id", "v", "big"),
			   TYPES(OID_INT4, OID_TEXT, OID_TEXT), INTS(1, 0, 0));
	begin(f);
	insert(f, 2000, 3, ROW("10", "x", "y"));
	commit(f);
	now_named(f, 0, 1000, "u");
	now_named(f, 1, 2000, "t2");
	relation(f, 2000, "t2", 'd', 3, NAMES("id", "v", "big"),
		 TYPES(OID_INT4, OID_TEXT, OID_TEXT), INTS(1, 0, 0));
	begin(f);
	insert(f, 2000, 3, ROW("11", "x", "y"));
	insert(f, 1000, 3, ROW("5", "e", "big5"));
	commit(f);
	assert_string_equal(query(f, "SELECT table_name, relation_oid FROM pgmirror_tables "
				  "ORDER BY 1"), "t2|2000;u|1000");
	assert_string_equal(query(f, "SELECT id FROM u ORDER BY id"), "1;2;3;4;5");
	assert_string_equal(query(f, "SELECT id FROM t2 ORDER BY id"), "10;11");

	/* renamed by someone else (the start's renames): the applier forgets
	 * its statements, and the next change finds the table by OID */
	{
		MirrorRename rn = {1000, "w", "public", "w"};

		now_named(f, 0, 1000, "w");
		assert_true(mirror_begin(f->m));
		assert_true(mirror_tables_rename(f->m, &rn, 1));
		assert_true(mirror_commit(f->m));
	}
	apply_forget_tables(f->a);
	begin(f);
	insert(f, 1000, 3, ROW("6", "f", "big6"));
	commit(f);
	assert_string_equal(query(f, "SELECT id FROM w ORDER BY id"), "1;2;3;4;5;6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_insert_update_unchanged_toast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_and_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identity_full_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identity_full_no_rowid_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_added_column_keyless, setup, teardown),
		cmocka_unit_test_setup_teardown(test_added_text_column_keyless, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skip_applied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_value_makes_table_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_name_columns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_binary_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_clash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skip_unknown_and_before_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_table_with_sync_lsn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_follows_oid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

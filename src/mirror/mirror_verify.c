/*
 * mirror_verify.c: the SQLite side of --verify (see mirror_verify.h).
 *
 * The source's rows go, as the applier would store them, into the table
 * "src" of a private temporary on-disk database (ATTACH ''), whose
 * columns have the declared types a fresh mirror table would have, so
 * SQLite's type affinity does to them what it does in a mirror table.
 * Nothing is held in memory beyond SQLite's page caches, and the scratch
 * database is deleted when it is detached: nothing of the comparison is
 * ever written to the mirror file.
 *
 * Values are equal when they are the same value of the same storage
 * class: `a IS b AND typeof(a) = typeof(b)`, so that an integer 1 and a
 * real 1.0, or the text '1' and the integer 1, differ.
 *
 * With a key, rows are matched by key (the mirror's primary key): missing
 * and unexpected rows, and rows whose key matches but some value differs
 * (changed). Without a key
 * (REPLICA IDENTITY FULL, or none), both sides are grouped into distinct
 * rows with their counts and the counts compared, so that a row the
 * source holds twice and the mirror once is one missing row; "changed"
 * has no meaning there and stays 0.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"
#include "pgmirror/mirror_verify.h"

#define SCRATCH "pgmirror_verify"

/*
 * SQLite's limit on the columns of a result, the terms of a GROUP BY and
 * the columns aggregates read (SQLITE_MAX_COLUMN, which a table of that
 * many columns reaches too).
 */
#define MAX_RESULT_COLUMNS 2000

struct MirrorCompare {
	Mirror *m;
	const char *table;
	const char *const *names;
	const bool *is_key;
	int ncols;
	bool keyed;
	bool attached;
	bool in_txn;
	sqlite3_stmt *ins;     /* INSERT INTO src */
};

bool mirror_table_of_relation(Mirror *m, uint32_t oid, char **name)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT table_name FROM pgmirror_tables "
					 "WHERE relation_oid = ?", false);
	int rc;

	*name = NULL;
	if (q == NULL)
		return false;
	sqlite3_bind_int64(q, 1, oid);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && !mirror_own_text(m, q, 0, "pgmirror_tables.table_name", name)) {
		sqlite3_finalize(q);
		return false; /* damaged: the error is set */
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read pgmirror_tables: %s", sqlite3_errmsg(m->db));
		return false;
	}
	return true;
}

bool mirror_table_has_columns(Mirror *m, const char *table, const char *const *names,
			      int ncols, bool *same)
{
	sqlite3_stmt *q = mirror_prepare(m, "SELECT name FROM pragma_table_info(?, 'main') "
					 "ORDER BY cid", false);
	int rc, i = 0;

	*same = true;
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (i >= ncols || strcmp((const char *)sqlite3_column_text(q, 0), names[i]) != 0)
			*same = false;
		i++;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read the columns of \"%s\": %s", table,
			  sqlite3_errmsg(m->db));
		return false;
	}
	if (i != ncols)
		*same = false;
	return true;
}

/* fmt (with the column's name twice, %w each) for every key column,
 * joined by sep. */
static void append_keys(sqlite3_str *s, const MirrorCompare *c, const char *fmt,
			const char *sep)
{
	bool first = true;

	for (int i = 0; i < c->ncols; i++) {
		if (!c->is_key[i])
			continue;
		if (!first)
			sqlite3_str_appendall(s, sep);
		first = false;
		sqlite3_str_appendf(s, fmt, c->names[i], c->names[i]);
	}
}

/*
 * leaf (a format naming the column up to four times, each %w) for columns
 * lo..hi-1, joined by op as a balanced tree: SQLite refuses an expression
 * deeper than 1000, which a plain chain over a wide table would be.
 */
static void append_tree(sqlite3_str *s, const MirrorCompare *c, int lo, int hi,
			const char *leaf, const char *op)
{
	if (hi - lo == 1) {
		sqlite3_str_appendf(s, leaf, c->names[lo], c->names[lo], c->names[lo],
				    c->names[lo]);
		return;
	}
	sqlite3_str_appendall(s, "(");
	append_tree(s, c, lo, lo + (hi - lo) / 2, leaf, op);
	sqlite3_str_appendall(s, op);
	append_tree(s, c, lo + (hi - lo) / 2, hi, leaf, op);
	sqlite3_str_appendall(s, ")");
}

/* "m.c IS s.c AND typeof(m.c) = typeof(s.c)" for columns lo..hi-1 */
static void append_equal(sqlite3_str *s, const MirrorCompare *c, int lo, int hi)
{
	append_tree(s, c, lo, hi, "(m.\"%w\" IS s.\"%w\" AND typeof(m.\"%w\") = "
		    "typeof(s.\"%w\"))", " AND ");
}

/* The finished text of s (fatal when out of memory); free with sqlite3_free. */
static char *str_done(sqlite3_str *s)
{
	char *sql = sqlite3_str_finish(s);

	if (sql == NULL) {
		fprintf(stderr, "pgmirror: out of memory\n");
		exit(1);
	}
	return sql;
}

bool mirror_compare_begin(Mirror *m, const char *table, const char *const *names,
			  const ColumnType *types, const bool *is_key, int ncols,
			  MirrorCompare **out)
{
	MirrorCompare *c = xcalloc(1, sizeof(*c));
	sqlite3_str *s;
	char *sql;

	c->m = m;
	c->table = table;
	c->names = names;
	c->is_key = is_key;
	c->ncols = ncols;
	for (int i = 0; i < ncols; i++)
		c->keyed = c->keyed || is_key[i];
	*out = c;
	/*
	 * An attached "" database is kept in memory when temp_store says
	 * so; only a build with SQLITE_TEMP_STORE=3 ignores the pragma.
	 */
	if (sqlite3_compileoption_used("TEMP_STORE=3")) {
		errbuf_set(&m->err, "this SQLite keeps temporary databases in memory "
			  "(SQLITE_TEMP_STORE=3), which --verify does not use, so as not to hold "
			  "a table in memory; build pgmirror with another SQLite");
		return false;
	}
	/* nothing to keep after a crash: no journal */
	if (!mirror_exec(m, "PRAGMA temp_store = FILE; ATTACH DATABASE '' AS " SCRATCH "; "
			 "PRAGMA " SCRATCH ".journal_mode = OFF"))
		return false;
	c->attached = true;
	s = sqlite3_str_new(m->db);
	sqlite3_str_appendall(s, "CREATE TABLE " SCRATCH ".src (");
	for (int i = 0; i < ncols; i++)
		sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", names[i],
				    values_declared_type(types[i]));
	sqlite3_str_appendall(s, ")");
	if (!mirror_exec_owned(m, str_done(s)))
		return false;
	s = sqlite3_str_new(m->db);
	sqlite3_str_appendall(s, "INSERT INTO " SCRATCH ".src VALUES (");
	for (int i = 0; i < ncols; i++)
		sqlite3_str_appendf(s, "%s?", i ? ", " : "");
	sqlite3_str_appendall(s, ")");
	sql = str_done(s);
	c->ins = mirror_prepare(m, sql, true);
	sqlite3_free(sql);
	if (c->ins == NULL || !mirror_exec(m, "BEGIN"))
		return false;
	c->in_txn = true;
	return true;
}

bool mirror_compare_add(MirrorCompare *c, const Value *vals)
{
	for (int i = 0; i < c->ncols; i++)
		mirror_bind_value(c->ins, i + 1, &vals[i]);
	return mirror_step_done(c->m, c->ins, "store a source row for the comparison");
}

/* The first n (at most 3) integers of the one row sql yields; sql is
 * freed. */
static bool query_counts(Mirror *m, char *sql, int n, int64_t *out)
{
	sqlite3_stmt *q = mirror_prepare(m, sql, false);
	int rc;

	sqlite3_free(sql);
	if (q == NULL)
		return false;
	rc = sqlite3_step(q);
	for (int i = 0; rc == SQLITE_ROW && i < n; i++)
		out[i] = sqlite3_column_int64(q, i);
	if (rc != SQLITE_ROW)
		errbuf_set(&m->err, "could not compare mirror \"%s\" with the source: %s", m->path,
			  sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return rc == SQLITE_ROW;
}

/*
 * With a key: one pass over "src", each row looked up in the mirror by its
 * primary key. Keys are unique on both sides (the source's replica
 * identity is a unique index, the mirror's its primary key), so every
 * mirror row that no source row matched is unexpected: the mirror's count
 * less the matches. A matched row has its first key column non-NULL,
 * since = never matches NULL.
 */
static bool compare_keyed(MirrorCompare *c, MirrorDiff *out)
{
	Mirror *m = c->m;
	sqlite3_str *s = sqlite3_str_new(m->db);
	const char *first = NULL;
	int64_t n[3], nmirror;

	for (int i = 0; first == NULL && i < c->ncols; i++)
		if (c->is_key[i])
			first = c->names[i];
	/*
	 * Every column an aggregate reads counts against SQLite's limit of
	 * 2,000 (both sides' are read): past it, the changed rows are counted
	 * by a second pass that reads them in its WHERE instead.
	 */
	bool split = 2 * c->ncols + 1 > MAX_RESULT_COLUMNS;

	sqlite3_str_appendf(s, "SELECT count(*), coalesce(sum(m.\"%w\" IS NULL), 0), ", first);
	if (split) {
		sqlite3_str_appendall(s, "0");
	} else {
		sqlite3_str_appendf(s, "coalesce(sum(m.\"%w\" IS NOT NULL AND NOT (", first);
		append_equal(s, c, 0, c->ncols);
		sqlite3_str_appendall(s, ")), 0)");
	}
	sqlite3_str_appendf(s, " FROM " SCRATCH ".src s LEFT JOIN main.\"%w\" m ON ", c->table);
	append_keys(s, c, "m.\"%w\" = s.\"%w\"", " AND ");
	if (!query_counts(m, str_done(s), 3, n))
		return false;
	out->missing = n[1];
	out->changed = n[2];
	if (split) {
		s = sqlite3_str_new(m->db);
		sqlite3_str_appendf(s, "SELECT count(*) FROM " SCRATCH ".src s JOIN main.\"%w\" m "
				    "ON ", c->table);
		append_keys(s, c, "m.\"%w\" = s.\"%w\"", " AND ");
		sqlite3_str_appendall(s, " WHERE NOT ");
		append_equal(s, c, 0, c->ncols);
		if (!query_counts(m, str_done(s), 1, &out->changed))
			return false;
	}
	if (!mirror_count_rows(m, c->table, &nmirror))
		return false;
	out->unexpected = nmirror - (n[0] - out->missing);
	if (out->unexpected < 0)
		out->unexpected = 0; /* two source keys stored as one value */
	return true;
}

/* How many columns compare_keyless() groups by as they are: the others
 * go into one column of their quote()d values (SQLite's quote() of a real
 * is exact), so that a side's select list stays within the limit. */
static int keyless_plain(const MirrorCompare *c)
{
	return c->ncols + 2 <= MAX_RESULT_COLUMNS ? c->ncols : MAX_RESULT_COLUMNS - 3;
}

/*
 * The columns of one side for compare_keyless(): each value as it is (c0,
 * c1, ...: a source column may have any name), the values past
 * keyless_plain() as one quoted list (r), the storage classes of all as
 * one word of initials (t: i, r, t, b or n, so that 1 and 1.0 differ),
 * then the side: at most 2,000 columns, whatever the table's width.
 */
static void append_side(sqlite3_str *s, const MirrorCompare *c, const char *schema,
			const char *table, int side)
{
	int plain = keyless_plain(c);

	sqlite3_str_appendall(s, "SELECT ");
	for (int i = 0; i < plain; i++)
		sqlite3_str_appendf(s, "\"%w\" AS c%d, ", c->names[i], i);
	if (plain < c->ncols) {
		append_tree(s, c, plain, c->ncols, "quote(\"%w\")", " || ',' || ");
		sqlite3_str_appendall(s, " AS r, ");
	}
	append_tree(s, c, 0, c->ncols, "substr(typeof(\"%w\"), 1, 1)", " || ");
	sqlite3_str_appendf(s, " AS t, %d AS side FROM %s.\"%w\"", side, schema, table);
}

/*
 * Without a key: the rows of both sides in one sort, grouped by every
 * value with its storage class (GROUP BY alone would put 1 and 1.0
 * together), and each group's counts compared, so that duplicates count.
 * The sort spills to temporary files, as the scratch database does.
 */
static bool compare_keyless(MirrorCompare *c, MirrorDiff *out)
{
	sqlite3_str *s = sqlite3_str_new(c->m->db);
	int plain = keyless_plain(c);
	int64_t n[2];

	sqlite3_str_appendall(s, "SELECT coalesce(sum(max(ns - nm, 0)), 0), "
			      "coalesce(sum(max(nm - ns, 0)), 0) FROM (SELECT "
			      "sum(side = 0) AS ns, sum(side = 1) AS nm FROM (");
	append_side(s, c, SCRATCH, "src", 0);
	sqlite3_str_appendall(s, " UNION ALL ");
	append_side(s, c, "main", c->table, 1);
	sqlite3_str_appendall(s, ") GROUP BY ");
	for (int i = 0; i < plain; i++)
		sqlite3_str_appendf(s, "c%d, ", i);
	sqlite3_str_appendall(s, plain < c->ncols ? "r, t)" : "t)");
	if (!query_counts(c->m, str_done(s), 2, n))
		return false;
	out->missing = n[0];
	out->unexpected = n[1];
	out->changed = 0;
	return true;
}

bool mirror_compare_end(MirrorCompare *c, MirrorDiff *out)
{
	memset(out, 0, sizeof(*out));
	if (!mirror_exec(c->m, "COMMIT"))
		return false;
	c->in_txn = false;
	return c->keyed ? compare_keyed(c, out) : compare_keyless(c, out);
}

void mirror_compare_free(MirrorCompare *c)
{
	if (c == NULL)
		return;
	sqlite3_finalize(c->ins);
	if (c->in_txn)
		sqlite3_exec(c->m->db, "ROLLBACK", NULL, NULL, NULL);
	if (c->attached)
		sqlite3_exec(c->m->db, "DETACH DATABASE " SCRATCH, NULL, NULL, NULL);
	free(c);
}

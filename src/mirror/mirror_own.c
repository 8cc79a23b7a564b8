/*
 * mirror_own.c: pgmirror's own tables read as untrusted input. The file is
 * the user's, who may edit it with sqlite3, and a flipped bit that SQLite
 * cannot see leaves a value it reads well: what pgmirror reads back from
 * its tables is checked against what it writes there, one rule per column
 * (rules[] below), by the readers (mirror_own_text() and its siblings) and
 * by the integrity check (mirror_own_sweep(), after SQLite's own).
 *
 * A value that breaks its rule is damage: a reader fails with an error
 * that names the table, the column and the value, and notes the damage as
 * SQLite's reports are noted (mirror_damage.c), so that a run heals it as
 * it heals other damage; the check names its row too. SQLite cannot add
 * NOT NULL to a column of an existing file (sql/schema.sql has it where it
 * belongs, for a new one), so these checks are what holds for every file.
 *
 * The health figures of pgmirror_state (the last sync's lag, the times of
 * the last check, rebuild and error) are reports, not rules: the next
 * sync or check writes them again, and mirror_health.c shows one that
 * cannot be right as not known.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

typedef enum OwnKind {
	OWN_TEXT,  /* any text */
	OWN_INT,   /* an integer from min to max */
	OWN_LSN,   /* an LSN as text, X/Y */
	OWN_CHAR,  /* one character of chars */
} OwnKind;

typedef struct OwnRule {
	const char *what;  /* "table.column" */
	OwnKind kind;
	bool null_ok;      /* NULL is a value of its own (not known, none) */
	int64_t min, max;  /* OWN_INT */
	const char *chars; /* OWN_CHAR */
} OwnRule;

#define OID_MAX INT64_C(4294967295)
#define TEXT(w) { w, OWN_TEXT, false, 0, 0, NULL }
#define INT(w, lo, hi) { w, OWN_INT, false, lo, hi, NULL }

/* What pgmirror writes in its own tables' columns (sql/schema.sql); a
 * column not listed may hold anything (NULL included). */
static const OwnRule rules[] = {
	TEXT("pgmirror_state.slot"),
	TEXT("pgmirror_state.publications"),
	TEXT("pgmirror_state.system_identifier"),
	TEXT("pgmirror_state.database"),
	{ "pgmirror_state.confirmed_lsn", OWN_LSN, false, 0, 0, NULL },
	INT("pgmirror_state.last_generation", 0, INT64_MAX),
	TEXT("pgmirror_tables.table_name"),
	TEXT("pgmirror_tables.source_schema"),
	TEXT("pgmirror_tables.source_table"),
	INT("pgmirror_tables.relation_oid", 1, OID_MAX),
	{ "pgmirror_tables.replica_identity", OWN_CHAR, false, 0, 0, "dnfi" },
	{ "pgmirror_tables.sync_lsn", OWN_LSN, true, 0, 0, NULL },
	INT("pgmirror_tables.generation", 0, INT64_MAX),
	INT("pgmirror_tables.copy_rows", 0, INT64_MAX),
	{ "pgmirror_tables.copy_estimate", OWN_INT, true, INT64_MIN, INT64_MAX, NULL },
	TEXT("pgmirror_columns.table_name"),
	TEXT("pgmirror_columns.column_name"),
	INT("pgmirror_columns.position", 1, INT32_MAX),
	TEXT("pgmirror_columns.pg_type"),
	INT("pgmirror_columns.type_modifier", INT32_MIN, INT32_MAX),
	INT("pgmirror_columns.is_key", 0, 1),
	INT("pgmirror_columns.type_oid", 0, OID_MAX),
	INT("pgmirror_columns.value_type", INT32_MIN, INT32_MAX),
	INT("pgmirror_columns.source_attnum", 0, INT16_MAX),
	INT("pgmirror_waiting.relation_oid", 1, OID_MAX),
	TEXT("pgmirror_waiting.source_schema"),
	TEXT("pgmirror_waiting.source_table"),
	TEXT("pgmirror_waiting.reason"),
	TEXT("pgmirror_waiting.since"),
	INT("pgmirror_pending.relation_oid", 1, OID_MAX),
	TEXT("pgmirror_pending.source_schema"),
	TEXT("pgmirror_pending.source_table"),
	{ "pgmirror_pending.estimate", OWN_INT, true, INT64_MIN, INT64_MAX, NULL },
	INT("pgmirror_staged.relation_oid", 1, OID_MAX),
	TEXT("pgmirror_staged.old_name"),
};

#define NRULES (sizeof rules / sizeof rules[0])

static const OwnRule *rule_of(const char *what)
{
	for (size_t i = 0; i < NRULES; i++)
		if (strcmp(rules[i].what, what) == 0)
			return &rules[i];
	/* a reader names a column that has no rule: a mistake of pgmirror's */
	fprintf(stderr, "pgmirror: no rule for column %s of pgmirror's own tables\n", what);
	abort();
}

void mirror_own_show(sqlite3_stmt *q, int col, int type, char *buf, size_t size)
{
	const unsigned char *t;
	bool quote = type == SQLITE_TEXT || type == SQLITE_BLOB;
	size_t n, k = 0, cut;

	if (type == SQLITE_NULL) {
		snprintf(buf, size, "NULL");
		return;
	}
	t = sqlite3_column_text(q, col);
	n = t != NULL ? strlen((const char *)t) : 0;
	cut = n > 40 ? 40 : n;
	while (cut < n && cut > 0 && (t[cut] & 0xc0) == 0x80)
		cut--;
	if (quote && k + 1 < size)
		buf[k++] = '\'';
	for (size_t i = 0; i < cut && k + 1 < size; i++)
		buf[k++] = t[i] < 0x20 || t[i] == 0x7f ? '?' : (char)t[i];
	if (cut < n && k + 4 < size) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	if (quote && k + 1 < size)
		buf[k++] = '\'';
	buf[k < size ? k : size - 1] = '\0';
}

/* Whether column col of q's row keeps rule r; if not, what it holds and
 * why that is wrong ("is NULL") into buf. The column's type is read
 * first: reading it as another type may change what SQLite says it is. */
static bool keeps(sqlite3_stmt *q, int col, const OwnRule *r, char *buf, size_t size)
{
	int type = sqlite3_column_type(q, col);
	const char *text;
	char shown[64];
	int64_t v;
	Lsn lsn;

	if (type == SQLITE_NULL) {
		snprintf(buf, size, "is NULL");
		return r->null_ok;
	}
	switch (r->kind) {
	case OWN_TEXT:
		return true;
	case OWN_INT:
		v = sqlite3_column_int64(q, col);
		if (type == SQLITE_INTEGER && v >= r->min && v <= r->max)
			return true;
		break;
	case OWN_LSN:
		text = (const char *)sqlite3_column_text(q, col);
		if (text != NULL && lsn_parse(text, &lsn))
			return true;
		break;
	case OWN_CHAR:
		text = (const char *)sqlite3_column_text(q, col);
		if (text != NULL && text[0] != '\0' && text[1] == '\0' &&
		    strchr(r->chars, text[0]) != NULL)
			return true;
		break;
	}
	mirror_own_show(q, col, type, shown, sizeof(shown));
	if (r->kind == OWN_LSN)
		snprintf(buf, size, "is %s, not an LSN (X/Y)", shown);
	else if (r->kind == OWN_CHAR)
		snprintf(buf, size, "is %s, not one of the letters %s", shown, r->chars);
	else if (r->min == INT64_MIN)
		snprintf(buf, size, "is %s, not an integer", shown);
	else if (r->max == INT64_MAX)
		snprintf(buf, size, "is %s, not an integer of %lld or more", shown,
			 (long long)r->min);
	else
		snprintf(buf, size, "is %s, not an integer from %lld to %lld", shown,
			 (long long)r->min, (long long)r->max);
	return false;
}

/* Column col of q's row, read as what (rules[]); false with the damage
 * set on m and noted when it breaks its rule. */
static bool own_value(Mirror *m, sqlite3_stmt *q, int col, const char *what)
{
	char why[160], found[256];

	if (keeps(q, col, rule_of(what), why, sizeof(why)))
		return true;
	snprintf(found, sizeof(found), "%s %s", what, why);
	errbuf_set(&m->err, "mirror \"%s\" is damaged: %s", m->path, found);
	mirror_damage_note(found);
	return false;
}

bool mirror_own_text(Mirror *m, sqlite3_stmt *q, int col, const char *what, char **out)
{
	*out = NULL;
	if (!own_value(m, q, col, what))
		return false;
	*out = mirror_column_dup(q, col);
	return true;
}

bool mirror_own_int(Mirror *m, sqlite3_stmt *q, int col, const char *what, int64_t *out)
{
	*out = -1;
	if (!own_value(m, q, col, what))
		return false;
	if (sqlite3_column_type(q, col) != SQLITE_NULL)
		*out = sqlite3_column_int64(q, col);
	return true;
}

bool mirror_own_lsn(Mirror *m, sqlite3_stmt *q, int col, const char *what, Lsn *out)
{
	*out = LSN_INVALID;
	if (!own_value(m, q, col, what))
		return false;
	/* own_value() parsed it already */
	return sqlite3_column_type(q, col) == SQLITE_NULL ||
	       lsn_parse((const char *)sqlite3_column_text(q, col), out);
}

/* The rules from rules[i] on that are of the same table (they stand
 * together): *n of them; those of columns the file's table has into have
 * (*nhave; none: no such table, or a file of an older format). */
static bool table_rules(sqlite3 *db, size_t i, size_t *n, const OwnRule **have, int *nhave)
{
	int len = (int)strcspn(rules[i].what, ".");
	sqlite3_stmt *q = NULL;

	*n = 0;
	*nhave = 0;
	while (i + *n < NRULES && strncmp(rules[i + *n].what, rules[i].what, (size_t)len + 1) == 0)
		(*n)++;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &q,
			       NULL) != SQLITE_OK)
		return false;
	for (size_t k = i; k < i + *n; k++) {
		sqlite3_bind_text(q, 1, rules[k].what, len, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, rules[k].what + len + 1, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW)
			have[(*nhave)++] = &rules[k];
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	return true;
}

/* SELECT rowid and the columns of have from their table. */
static char *sweep_sql(const OwnRule *const *have, int nhave)
{
	int len = (int)strcspn(have[0]->what, ".");
	sqlite3_str *s = sqlite3_str_new(NULL);
	char table[64], *sql;

	snprintf(table, sizeof(table), "%.*s", len, have[0]->what);
	sqlite3_str_appendall(s, "SELECT rowid");
	for (int k = 0; k < nhave; k++)
		sqlite3_str_appendf(s, ", \"%w\"", have[k]->what + len + 1);
	sqlite3_str_appendf(s, " FROM \"%w\" ORDER BY rowid", table);
	sql = sqlite3_str_finish(s);
	if (sql == NULL) {
		fprintf(stderr, "pgmirror: out of memory\n");
		exit(1);
	}
	return sql;
}

int mirror_own_sweep(sqlite3 *db, sqlite3_str *found, int limit)
{
	int nfound = 0;
	size_t n = 0;

	for (size_t i = 0; i < NRULES && nfound < limit; i += n) {
		const OwnRule *have[NRULES];
		sqlite3_stmt *q = NULL;
		char *sql;
		int nhave, rc;

		if (!table_rules(db, i, &n, have, &nhave))
			goto sqlerr;
		if (nhave == 0)
			continue;
		sql = sweep_sql(have, nhave);
		rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			goto sqlerr;
		while (nfound < limit && (rc = sqlite3_step(q)) == SQLITE_ROW) {
			for (int k = 0; k < nhave && nfound < limit; k++) {
				char why[160];

				if (keeps(q, k + 1, have[k], why, sizeof(why)))
					continue;
				sqlite3_str_appendf(found, "%s%s %s (rowid %lld)",
						    sqlite3_str_length(found) > 0 ? "; " : "",
						    have[k]->what, why,
						    (long long)sqlite3_column_int64(q, 0));
				nfound++;
			}
		}
		sqlite3_finalize(q);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			goto sqlerr;
	}
	return nfound;
sqlerr:
	sqlite3_str_appendf(found, "%scould not read pgmirror's own tables: %s",
			    sqlite3_str_length(found) > 0 ? "; " : "", sqlite3_errmsg(db));
	return -1;
}

/*
 * mirror.c: the SQLite side of pgmirror.
 *
 * The file is opened in WAL mode so readers never block the writer nor
 * see a transaction in progress; synchronous=FULL, because a commit that
 * is reported to the server as flushed must survive power loss. A second
 * pgmirror is kept out with flock() on the database file itself: SQLite
 * uses POSIX record locks, which on Linux are independent of flock(), so
 * readers are unaffected. The descriptor stays open until after
 * sqlite3_close(), because closing any descriptor of a file drops the
 * process's POSIX locks on it.
 *
 * Every identifier that comes from the source is quoted with "%w" in
 * sqlite3_mprintf(); no source string is spliced into SQL otherwise.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pgmirror/mirror.h"

extern const char mirror_schema_sql[];

struct Mirror {
	sqlite3 *db;
	int lock_fd;             /* flock()ed descriptor of the file */
	char *path;
	bool in_txn;
	sqlite3_stmt *set_pos;   /* UPDATE pgmirror_state SET confirmed_lsn... */
	TickFn tick;             /* called from long statements; NULL: none */
	void *tick_ctx;
	bool no_interrupt;       /* a commit or rollback: tick, never stop */
	ErrBuf err;          /* the last error */
};

struct MirrorTable {
	Mirror *m;
	char *name;
	int ncols;
	bool *is_key;            /* per column */
	bool full;               /* REPLICA IDENTITY FULL: match on all columns */
	const char *rowid;       /* FULL: a name of the row id no column takes, or NULL */
	char *collist;           /* "a","b",... quoted */
	char **qcols;            /* each column quoted, "a" */
	sqlite3_stmt *ins;       /* prepared on first use, reused */
	sqlite3_stmt *upd;
	sqlite3_stmt *del;
	sqlite3_stmt *sel;       /* FULL without a row id name: the matching rows */
	sqlite3_stmt *trunc;
	sqlite3_stmt *setcol;    /* mirror_table_set_column, for column setcol_index */
	int setcol_index;
};

const char *mirror_error(const Mirror *m)
{
	return m->err.text;
}

/* Runs SQL text (one or more statements); false with the error set. */
static bool exec_sql(Mirror *m, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(m->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		errbuf_set(&m->err, "could not update mirror \"%s\": %s", m->path,
			  err ? err : sqlite3_errmsg(m->db));
		sqlite3_free(err);
		return false;
	}
	return true;
}

/* Like exec_sql, but frees the sqlite3_mprintf'd sql. */
static bool exec_owned(Mirror *m, char *sql)
{
	bool ok;

	if (sql == NULL) {
		fprintf(stderr, "pgmirror: out of memory\n");
		exit(1);
	}
	ok = exec_sql(m, sql);
	sqlite3_free(sql);
	return ok;
}

static sqlite3_stmt *prepare(Mirror *m, const char *sql, bool persistent)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v3(m->db, sql, -1,
			       persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st,
			       NULL) != SQLITE_OK) {
		errbuf_set(&m->err, "could not prepare statement on mirror \"%s\": %s",
			  m->path, sqlite3_errmsg(m->db));
		return NULL;
	}
	return st;
}

/* Steps a statement to completion and resets it. */
static bool step_done(Mirror *m, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not %s in mirror \"%s\": %s", what, m->path,
			  sqlite3_errmsg(m->db));
		return false;
	}
	return true;
}

static void mirror_free(Mirror *m)
{
	if (m == NULL)
		return;
	sqlite3_finalize(m->set_pos);
	if (m->db != NULL)
		sqlite3_close(m->db);
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	free(m->path);
	free(m);
}

/* True when the database already holds tables but not pgmirror's. */
static bool is_foreign_database(Mirror *m, bool *foreign)
{
	sqlite3_stmt *st = prepare(m,
		"SELECT count(*), count(*) FILTER (WHERE name = 'pgmirror_state') "
		"FROM sqlite_schema WHERE type = 'table'", false);
	int rc;

	if (st == NULL)
		return false;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		errbuf_set(&m->err, "could not read mirror \"%s\": %s", m->path,
			  sqlite3_errmsg(m->db));
		sqlite3_finalize(st);
		return false;
	}
	*foreign = sqlite3_column_int(st, 0) > 0 && sqlite3_column_int(st, 1) == 0;
	sqlite3_finalize(st);
	return true;
}

/*
 * SQLite keeps a WAL database's index in the -shm file, mapped shared into
 * every process that uses the database; where the filesystem cannot map it
 * (or the path is not a file at all), readers and writer could not work
 * side by side, so the mirror is refused rather than run in another mode.
 * mode_or_null: the journal mode SQLite reported, or NULL after an error.
 */
static void set_wal_error(Mirror *m, const char *mode_or_null)
{
	char why[256];

	if (mode_or_null != NULL)
		snprintf(why, sizeof(why), "its journal mode stays \"%s\"", mode_or_null);
	else
		snprintf(why, sizeof(why), "%s", sqlite3_errmsg(m->db));
	errbuf_set(&m->err, "mirror \"%s\" cannot use SQLite's WAL journal mode (%s), which pgmirror "
		  "needs so that readers never see part of a transaction; put the mirror on a "
		  "local filesystem that supports shared memory mappings", m->path, why);
}

/* True when the last error came from the -shm file of the WAL index. */
static bool is_wal_index_error(Mirror *m)
{
	switch (sqlite3_extended_errcode(m->db)) {
	case SQLITE_IOERR_SHMOPEN:
	case SQLITE_IOERR_SHMSIZE:
	case SQLITE_IOERR_SHMLOCK:
	case SQLITE_IOERR_SHMMAP:
		return true;
	default:
		return false;
	}
}

/* Puts the database in WAL mode and reads through the WAL index once. */
static bool use_wal(Mirror *m)
{
	sqlite3_stmt *st = prepare(m, "PRAGMA journal_mode = WAL", false);
	const char *mode;
	bool ok = false;

	if (st == NULL)
		return false;
	if (sqlite3_step(st) != SQLITE_ROW) {
		if (is_wal_index_error(m))
			set_wal_error(m, NULL);
		else
			errbuf_set(&m->err, "could not set the journal mode of mirror \"%s\": %s",
				  m->path, sqlite3_errmsg(m->db));
		goto done;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || sqlite3_stricmp(mode, "wal") != 0) {
		set_wal_error(m, mode ? mode : "");
		goto done;
	}
	ok = true;
done:
	sqlite3_finalize(st);
	/* the switch maps nothing yet: the next read does */
	if (ok && sqlite3_exec(m->db, "SELECT count(*) FROM sqlite_schema", NULL, NULL,
			       NULL) != SQLITE_OK) {
		set_wal_error(m, NULL);
		ok = false;
	}
	return ok;
}

/* Removes a mirror file that mirror_open() created and could not make a
 * mirror, with what SQLite made beside it, so no broken mirror remains. */
static void remove_new_file(const char *path)
{
	static const char *const suffixes[] = {"-wal", "-shm", "-journal", ""};

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *name = sqlite3_mprintf("%s%s", path, suffixes[i]);

		if (name == NULL) {
			fprintf(stderr, "pgmirror: out of memory\n");
			exit(1);
		}
		(void)unlink(name);
		sqlite3_free(name);
	}
}

MirrorOpenResult mirror_open(const char *path, MirrorMode mode, Mirror **out,
			     char **errmsg)
{
	Mirror *m = xcalloc(1, sizeof(*m));
	MirrorOpenResult res = MIRROR_OPEN_ERROR;
	bool foreign = false, create = mode == MIRROR_CREATE, created = false;
	int flags = (mode == MIRROR_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
		    SQLITE_OPEN_NOMUTEX;

	m->lock_fd = -1;
	m->path = xstrdup(path);
	*out = NULL;
	*errmsg = NULL;

	/* A new mirror holds the source's rows: only its owner may read it
	 * (SQLite gives -wal and -shm the mode of the database file). An
	 * existing file keeps the mode its owner gave it. */
	if (create) {
		m->lock_fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0600);
		created = m->lock_fd >= 0;
	}
	if (m->lock_fd < 0 && (!create || errno == EEXIST))
		m->lock_fd = open(path, (mode == MIRROR_READ ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (m->lock_fd < 0) {
		if (create && errno == ENOENT)
			errbuf_set(&m->err, "could not create mirror \"%s\": %s; create its directory "
				  "first, or give another path", path, strerror(errno));
		else
			errbuf_set(&m->err, "could not open mirror \"%s\": %s", path, strerror(errno));
		goto error;
	}
	if (mode != MIRROR_READ && flock(m->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		created = false; /* another process has it now: it is not ours to remove */
		if (errno == EWOULDBLOCK) {
			errbuf_set(&m->err, "mirror \"%s\" is in use by another pgmirror process", path);
			res = MIRROR_OPEN_LOCKED;
		} else
			errbuf_set(&m->err, "could not lock mirror \"%s\": %s", path, strerror(errno));
		goto error;
	}
	if (sqlite3_open_v2(path, &m->db, flags, NULL) != SQLITE_OK) {
		errbuf_set(&m->err, "could not open mirror \"%s\": %s", path,
			  m->db ? sqlite3_errmsg(m->db) : "out of memory");
		goto error;
	}
	sqlite3_extended_result_codes(m->db, 1);
	sqlite3_busy_timeout(m->db, 10000);
	/* The first read tells whether this is an SQLite file at all. */
	if (!is_foreign_database(m, &foreign)) {
		if (sqlite3_errcode(m->db) == SQLITE_NOTADB)
			errbuf_set(&m->err, "\"%s\" is not an SQLite database, so not a mirror; give a "
				  "new file name or an existing mirror", path);
		else if (is_wal_index_error(m))
			set_wal_error(m, NULL);
		else
			errbuf_set(&m->err, "could not open mirror \"%s\": %s", path,
				  sqlite3_errmsg(m->db));
		goto error;
	}
	if (foreign) {
		errbuf_set(&m->err, "\"%s\" is an SQLite database but not a pgmirror mirror; "
			  "give a new file name or an existing mirror", path);
		goto error;
	}
	if (mode == MIRROR_READ) {
		*out = m;
		return MIRROR_OPEN_OK;
	}
	if (!use_wal(m) ||
	    !exec_sql(m, "PRAGMA synchronous = FULL; "
		      "PRAGMA foreign_keys = OFF; PRAGMA trusted_schema = OFF"))
		goto error;
	if (!exec_sql(m, "BEGIN IMMEDIATE") || !exec_sql(m, mirror_schema_sql) ||
	    !exec_sql(m, "COMMIT")) {
		(void)sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
		goto error;
	}
	m->set_pos = prepare(m,
		"UPDATE pgmirror_state SET confirmed_lsn = ?1, "
		"last_commit_time = coalesce(?2, last_commit_time) WHERE id = 1",
		true);
	if (m->set_pos == NULL)
		goto error;
	*out = m;
	return MIRROR_OPEN_OK;

error:
	*errmsg = xstrdup(m->err.text);
	/* still locked by us: nobody else can have started using the new file */
	if (created) {
		sqlite3_close(m->db);
		m->db = NULL;
		remove_new_file(path);
	}
	mirror_free(m);
	return res;
}

void mirror_close(Mirror *m)
{
	if (m != NULL && m->in_txn)
		mirror_rollback(m);
	mirror_free(m);
}

void mirror_state_clear(MirrorState *st)
{
	free(st->slot);
	free(st->publications);
	free(st->system_identifier);
	free(st->database);
	free(st->last_commit_time);
	memset(st, 0, sizeof(*st));
}

static char *column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

bool mirror_read_state(Mirror *m, MirrorState *st)
{
	sqlite3_stmt *q;
	int rc;
	const unsigned char *lsn;
	bool ok = false;

	memset(st, 0, sizeof(*st));
	q = prepare(m,
		"SELECT slot, publications, system_identifier, database, "
		"confirmed_lsn, last_commit_time, initial_copy_done "
		"FROM pgmirror_state WHERE id = 1", false);
	if (q == NULL)
		return false;
	rc = sqlite3_step(q);
	if (rc == SQLITE_DONE) {
		ok = true;
		goto done;
	}
	if (rc != SQLITE_ROW) {
		errbuf_set(&m->err, "could not read pgmirror_state from \"%s\": %s",
			  m->path, sqlite3_errmsg(m->db));
		goto done;
	}
	st->present = true;
	st->slot = column_dup(q, 0);
	st->publications = column_dup(q, 1);
	st->system_identifier = column_dup(q, 2);
	st->database = column_dup(q, 3);
	lsn = sqlite3_column_text(q, 4);
	st->last_commit_time = column_dup(q, 5);
	st->initial_copy_done = sqlite3_column_int(q, 6) != 0;
	if (lsn == NULL || !lsn_parse((const char *)lsn, &st->confirmed_lsn) ||
	    st->slot == NULL || st->publications == NULL) {
		errbuf_set(&m->err, "mirror \"%s\" has a damaged pgmirror_state row "
			  "(confirmed_lsn \"%s\"); restore it or start a new mirror",
			  m->path, lsn ? (const char *)lsn : "");
		mirror_state_clear(st);
		goto done;
	}
	ok = true;
done:
	sqlite3_finalize(q);
	return ok;
}

bool mirror_write_state(Mirror *m, const MirrorState *st)
{
	char lsn[LSN_TEXT_SIZE];

	return exec_owned(m, sqlite3_mprintf(
		"INSERT OR REPLACE INTO pgmirror_state (id, slot, publications, "
		"system_identifier, database, confirmed_lsn, last_commit_time, "
		"initial_copy_done) VALUES (1, %Q, %Q, %Q, %Q, %Q, %Q, %d)",
		st->slot, st->publications, st->system_identifier, st->database,
		lsn_format(st->confirmed_lsn, lsn), st->last_commit_time,
		st->initial_copy_done ? 1 : 0));
}

bool mirror_set_position(Mirror *m, Lsn lsn, const char *commit_time)
{
	char text[LSN_TEXT_SIZE];

	lsn_format(lsn, text);
	sqlite3_bind_text(m->set_pos, 1, text, -1, SQLITE_TRANSIENT);
	if (commit_time != NULL)
		sqlite3_bind_text(m->set_pos, 2, commit_time, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(m->set_pos, 2);
	return step_done(m, m->set_pos, "store the confirmed position");
}

/*
 * SQLite calls this every PROGRESS_OPS virtual machine steps of any
 * statement: a rebuild's INSERT ... SELECT over a big table, a DROP, a
 * scan for a row without a key. Non-zero interrupts the statement, which
 * fails with SQLITE_INTERRUPT; a commit or rollback is never interrupted.
 */
#define PROGRESS_OPS 10000

static int on_progress(void *arg)
{
	Mirror *m = arg;

	return !m->tick(m->tick_ctx) && !m->no_interrupt;
}

void mirror_set_tick(Mirror *m, TickFn tick, void *ctx)
{
	m->tick = tick;
	m->tick_ctx = ctx;
	sqlite3_progress_handler(m->db, tick ? PROGRESS_OPS : 0, tick ? on_progress : NULL, m);
}

bool mirror_begin(Mirror *m)
{
	if (!exec_sql(m, "BEGIN IMMEDIATE"))
		return false;
	m->in_txn = true;
	return true;
}

bool mirror_commit(Mirror *m)
{
	bool ok;

	m->no_interrupt = true;
	ok = exec_sql(m, "COMMIT");
	m->no_interrupt = false;
	if (!ok) {
		mirror_rollback(m);
		return false;
	}
	m->in_txn = false;
	return true;
}

void mirror_rollback(Mirror *m)
{
	m->no_interrupt = true;
	if (m->in_txn || !sqlite3_get_autocommit(m->db))
		(void)sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
	m->no_interrupt = false;
	m->in_txn = false;
}

bool mirror_drop_all_tables(Mirror *m)
{
	char **names;
	int n;
	bool ok;

	/* Names first: SQLite cannot drop a table while a SELECT is running. */
	if (!mirror_list_tables(m, &names, &n))
		return false;
	ok = true;
	for (int i = 0; i < n; i++) {
		ok = ok && exec_owned(m, sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\"", names[i]));
		free(names[i]);
	}
	free(names);
	return ok && exec_sql(m, "DELETE FROM pgmirror_tables; DELETE FROM pgmirror_columns");
}

/* --- tables --------------------------------------------------------- */

/* A column as recorded in pgmirror_columns. */
typedef struct OldColumn {
	char *name;
	uint32_t type_oid;
	int32_t type_mod;
	int value_type;
	bool is_key;
	int attnum;          /* 0: unknown */
	bool matched;
} OldColumn;

static void old_columns_free(OldColumn *cols, int n)
{
	for (int i = 0; i < n; i++)
		free(cols[i].name);
	free(cols);
}

/* Reads what the mirror records of table name; *exists false if nothing. */
static bool read_definition(Mirror *m, const MirrorTableDef *def, bool *exists,
			    bool *same_table, bool *same_oid, OldColumn **cols, int *ncols)
{
	sqlite3_stmt *q;
	int rc;
	bool ok = false;

	*exists = false;
	*same_table = true;
	*same_oid = true;
	*cols = NULL;
	*ncols = 0;
	/* SQLite does not tell names apart by (ASCII) case: neither may we */
	q = prepare(m, "SELECT replica_identity, source_schema, source_table, relation_oid "
		    "FROM pgmirror_tables WHERE table_name = ?1 COLLATE NOCASE", false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, def->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		const char *ri = (const char *)sqlite3_column_text(q, 0);
		const char *sch = (const char *)sqlite3_column_text(q, 1);
		const char *tab = (const char *)sqlite3_column_text(q, 2);

		*exists = true;
		if (sch == NULL || tab == NULL || strcmp(sch, def->source_schema) != 0 ||
		    strcmp(tab, def->source_table) != 0) {
			errbuf_set(&m->err, "source tables \"%s\".\"%s\" and \"%s\".\"%s\" would both be "
				  "mirrored as \"%s\"; leave one of them out of the publication or "
				  "rename it", sch ? sch : "", tab ? tab : "", def->source_schema,
				  def->source_table, def->name);
			goto done;
		}
		*same_table = ri != NULL && ri[0] == def->replident;
		*same_oid = (uint32_t)sqlite3_column_int64(q, 3) == def->relation_oid;
	} else if (rc != SQLITE_DONE)
		goto sqlerr;
	sqlite3_finalize(q);
	q = NULL;
	if (!*exists)
		return true;

	q = prepare(m, "SELECT column_name, type_oid, type_modifier, value_type, is_key, "
		    "source_attnum FROM pgmirror_columns WHERE table_name = ?1 ORDER BY position",
		    false);
	if (q == NULL)
		return false;
	sqlite3_bind_text(q, 1, def->name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		OldColumn *c;

		*cols = xreallocarray(*cols, (size_t)*ncols + 1, sizeof(OldColumn));
		c = &(*cols)[(*ncols)++];
		c->name = xstrdup((const char *)sqlite3_column_text(q, 0));
		c->type_oid = (uint32_t)sqlite3_column_int64(q, 1);
		c->type_mod = sqlite3_column_int(q, 2);
		c->value_type = sqlite3_column_int(q, 3);
		c->is_key = sqlite3_column_int(q, 4) != 0;
		c->attnum = sqlite3_column_int(q, 5);
		c->matched = false;
	}
	if (rc != SQLITE_DONE)
		goto sqlerr;
	ok = true;
	goto done;
sqlerr:
	errbuf_set(&m->err, "could not read the definition of table \"%s\": %s", def->name,
		  sqlite3_errmsg(m->db));
done:
	sqlite3_finalize(q);
	if (!ok) {
		old_columns_free(*cols, *ncols);
		*cols = NULL;
		*ncols = 0;
	}
	return ok;
}

/*
 * How values of old column o become values of new column c, or false when
 * the source's conversion cannot be reproduced from what the mirror holds
 * (the rules: values_retype()).
 */
static bool conversion(const OldColumn *o, const MirrorColumnDef *c, ColumnConv *conv)
{
	*conv = CONV_COPY;
	switch (values_retype(o->type_oid, o->type_mod, o->value_type, c->type_oid,
			      c->type_mod, c->type)) {
	case RETYPE_COPY:
		return true;
	case RETYPE_TEXT:
		*conv = CONV_TEXT;
		return true;
	case RETYPE_REAL:
		*conv = CONV_REAL;
		return true;
	default:
		return false;
	}
}

void mirror_plan_free(MirrorPlan *plan)
{
	if (plan->src != NULL)
		for (int i = 0; i < plan->ncols; i++)
			free(plan->src[i]);
	free(plan->src);
	free(plan->conv);
	memset(plan, 0, sizeof(*plan));
}

/* The one integer sql (with a "%w" for the table name) yields on table. */
static bool table_scalar(Mirror *m, const char *sql_fmt, const char *table, int64_t *out)
{
	char *sql = sqlite3_mprintf(sql_fmt, table);
	sqlite3_stmt *q = prepare(m, sql, false);
	bool ok = false;

	sqlite3_free(sql);
	if (q == NULL)
		return false;
	if (sqlite3_step(q) == SQLITE_ROW) {
		*out = sqlite3_column_int64(q, 0);
		ok = true;
	} else
		errbuf_set(&m->err, "could not read table \"%s\": %s", table, sqlite3_errmsg(m->db));
	sqlite3_finalize(q);
	return ok;
}

static bool table_has_rows(Mirror *m, const char *name, bool *has)
{
	int64_t v = 0;
	bool ok = table_scalar(m, "SELECT EXISTS (SELECT 1 FROM \"%w\")", name, &v);

	*has = v != 0;
	return ok;
}

/*
 * Is o the old version of new column c, by the rules of pass 0..2? With
 * refill, a column the source knows is read again rather than guessed to
 * be one whose source column was never known (its values may be stale).
 */
static bool same_column(const OldColumn *o, int i, const MirrorColumnDef *c, int j, int pass,
			bool refill)
{
	if (o->matched)
		return false;
	if (pass == 0) /* both attnums known */
		return o->attnum != 0 && c->attnum != 0 && o->attnum == c->attnum;
	if (o->attnum != 0 && c->attnum != 0)
		return false; /* known to be different columns */
	if (refill && c->attnum != 0 && !c->is_key)
		return false;
	if (pass == 1)
		return strcmp(o->name, c->name) == 0;
	return i == j && o->type_oid == c->type_oid && o->type_mod == c->type_mod;
}

bool mirror_table_plan(Mirror *m, const MirrorTableDef *def, bool refill, MirrorPlan *plan)
{
	OldColumn *old = NULL;
	int nold = 0;
	bool same_table, same_oid, ok = false;

	memset(plan, 0, sizeof(*plan));
	plan->ncols = def->ncols;
	plan->conv = xcalloc((size_t)def->ncols + 1, sizeof(ColumnConv));
	plan->src = xcalloc((size_t)def->ncols + 1, sizeof(char *));
	if (!read_definition(m, def, &plan->exists, &same_table, &same_oid, &old, &nold))
		goto done;
	if (!plan->exists) {
		ok = true;
		goto done;
	}
	plan->same = same_table && same_oid && nold == def->ncols;
	/* another table of the same name: none of its rows are this one's */
	for (int pass = 0; same_oid && pass < 3; pass++) {
		for (int j = 0; j < def->ncols; j++) {
			const MirrorColumnDef *c = &def->cols[j];
			OldColumn *o = NULL;

			if (plan->src[j] != NULL)
				continue;
			for (int i = 0; i < nold && o == NULL; i++)
				if (same_column(&old[i], i, c, j, pass, refill))
					o = &old[i];
			if (o == NULL)
				continue;
			o->matched = true;
			if (!conversion(o, c, &plan->conv[j])) {
				if (!refill || c->is_key) {
					errbuf_set(&m->err, "column \"%s\" of mirror table \"%s\" changed type on "
						  "the source (type OID %u modifier %d to OID %u modifier %d), "
						  "and pgmirror cannot convert the rows it holds the way the "
						  "source did; start this mirror over (--drop-slot, remove the "
						  "file, run again)", c->name, def->name, o->type_oid,
						  o->type_mod, c->type_oid, c->type_mod);
					goto done;
				}
				plan->same = false;
				continue; /* refilled from the source */
			}
			/* with a key, a retyped column is read again: the source may
			 * have converted it with USING */
			if (refill && !c->is_key &&
			    (o->type_oid != c->type_oid || o->type_mod != c->type_mod)) {
				plan->same = false;
				continue;
			}
			plan->src[j] = xstrdup(o->name);
			if (plan->conv[j] != CONV_COPY || strcmp(o->name, c->name) != 0 ||
			    o->type_oid != c->type_oid || o->type_mod != c->type_mod ||
			    o->is_key != c->is_key || o - old != j || o->attnum != c->attnum)
				plan->same = false;
		}
	}
	for (int j = 0; j < def->ncols; j++) {
		if (plan->src[j] == NULL) {
			plan->conv[j] = CONV_FILL;
			plan->same = false;
		}
	}
	plan->keep_rows = same_oid;
	ok = plan->same || !same_oid || table_has_rows(m, def->name, &plan->has_rows);
	for (int j = 0; ok && plan->has_rows && j < def->ncols; j++) {
		/* under REPLICA IDENTITY FULL every column is flagged; an added
		 * one is filled with what the source gave the rows */
		if (plan->conv[j] == CONV_FILL && def->cols[j].is_key && def->replident != 'f' &&
		    def->replident != 'n') {
			/* rows would be found by a key they do not have yet */
			errbuf_set(&m->err, "the key of mirror table \"%s\" now includes column \"%s\", "
				  "which its rows do not have; start this mirror over (--drop-slot, "
				  "remove the file, run again)", def->name, def->cols[j].name);
			ok = false;
		}
	}
done:
	old_columns_free(old, nold);
	if (!ok)
		mirror_plan_free(plan);
	return ok;
}

/* CREATE TABLE "name" (...) for def. */
static char *create_table_sql(const MirrorTableDef *def, const char *name)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	bool first_key = true;

	sqlite3_str_appendf(s, "CREATE TABLE \"%w\" (", name);
	for (int i = 0; i < def->ncols; i++)
		sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", def->cols[i].name,
				    values_declared_type(def->cols[i].type));
	if (def->replident != 'f' && def->replident != 'n') {
		for (int i = 0; i < def->ncols; i++) {
			if (!def->cols[i].is_key)
				continue;
			sqlite3_str_appendf(s, "%s\"%w\"", first_key ? ", PRIMARY KEY (" : ", ",
					    def->cols[i].name);
			first_key = false;
		}
		if (!first_key)
			sqlite3_str_appendall(s, ")");
	}
	sqlite3_str_appendall(s, ")");
	return sqlite3_str_finish(s);
}

static bool record_definition(Mirror *m, const MirrorTableDef *def)
{
	sqlite3_stmt *ins;
	bool ok = true;

	if (!exec_owned(m, sqlite3_mprintf(
		    "DELETE FROM pgmirror_columns WHERE table_name = %Q;"
		    "INSERT OR REPLACE INTO pgmirror_tables (table_name, source_schema, "
		    "source_table, relation_oid, replica_identity) VALUES (%Q, %Q, %Q, %u, '%c')",
		    def->name, def->name, def->source_schema, def->source_table,
		    def->relation_oid, def->replident)))
		return false;
	ins = prepare(m, "INSERT INTO pgmirror_columns (table_name, column_name, position, "
		      "pg_type, type_modifier, is_key, type_oid, value_type, source_attnum) "
		      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", false);
	if (ins == NULL)
		return false;
	for (int i = 0; ok && i < def->ncols; i++) {
		const MirrorColumnDef *c = &def->cols[i];

		sqlite3_bind_text(ins, 1, def->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, c->name, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 3, i + 1);
		sqlite3_bind_text(ins, 4, c->pg_type, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 5, c->type_mod);
		sqlite3_bind_int(ins, 6, c->is_key);
		sqlite3_bind_int64(ins, 7, c->type_oid);
		sqlite3_bind_int(ins, 8, (int)c->type.vt);
		sqlite3_bind_int(ins, 9, c->attnum);
		ok = step_done(m, ins, "record a column");
	}
	sqlite3_finalize(ins);
	return ok;
}

static void bind_value(sqlite3_stmt *st, int idx, const Value *v);

/*
 * Rebuilds the table for a changed definition: a new table is filled from
 * the old one as planned, then takes its name. Runs inside the caller's
 * transaction, so readers see the old table or the new one, never a mix.
 */
static bool rebuild_table(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
			  const Value *fill)
{
	static const char tmp[] = "pgmirror_rebuild";
	sqlite3_str *s = sqlite3_str_new(NULL);
	sqlite3_stmt *st = NULL;
	char *sql;
	bool ok;

	sqlite3_str_appendf(s, "INSERT INTO %s SELECT ", tmp);
	for (int j = 0; j < def->ncols; j++) {
		const char *sep = j ? ", " : "";

		switch (plan->conv[j]) {
		case CONV_COPY:
			sqlite3_str_appendf(s, "%s\"%w\"", sep, plan->src[j]);
			break;
		case CONV_TEXT:
			sqlite3_str_appendf(s, "%sCAST(\"%w\" AS TEXT)", sep, plan->src[j]);
			break;
		case CONV_REAL:
			sqlite3_str_appendf(s, "%sCAST(\"%w\" AS REAL)", sep, plan->src[j]);
			break;
		case CONV_FILL:
			sqlite3_str_appendf(s, "%s?%d", sep, j + 1);
			break;
		}
	}
	sqlite3_str_appendf(s, " FROM \"%w\"", def->name);
	sql = sqlite3_str_finish(s);

	ok = exec_owned(m, sqlite3_mprintf("DROP TABLE IF EXISTS %s", tmp)) &&
	     exec_owned(m, create_table_sql(def, tmp)) &&
	     (!plan->keep_rows || (st = prepare(m, sql, false)) != NULL);
	sqlite3_free(sql);
	if (ok && plan->keep_rows) {
		for (int j = 0; j < def->ncols; j++)
			if (plan->conv[j] == CONV_FILL)
				bind_value(st, j + 1, &fill[j]);
		ok = step_done(m, st, "copy rows into the rebuilt table");
	}
	sqlite3_finalize(st);
	return ok &&
	       exec_owned(m, sqlite3_mprintf("DROP TABLE \"%w\"", def->name)) &&
	       exec_owned(m, sqlite3_mprintf("ALTER TABLE %s RENAME TO \"%w\"", tmp, def->name));
}

/*
 * A name under which SQLite's row id of a table with def's columns is
 * reachable: a column named rowid, _rowid_ or oid (in any case) hides
 * that name of it. NULL when the table has all three.
 */
static const char *rowid_name(const MirrorTableDef *def)
{
	static const char *const names[] = {"rowid", "_rowid_", "oid"};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		bool taken = false;

		for (int i = 0; i < def->ncols && !taken; i++)
			taken = sqlite3_stricmp(def->cols[i].name, names[k]) == 0;
		if (!taken)
			return names[k];
	}
	return NULL;
}

bool mirror_table_sync(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
		       const Value *fill, MirrorTable **out)
{
	MirrorTable *t;
	sqlite3_str *cols;

	*out = NULL;
	if (!plan->exists) {
		if (!exec_owned(m, create_table_sql(def, def->name)) ||
		    !record_definition(m, def))
			return false;
	} else if (!plan->same) {
		if (!rebuild_table(m, def, plan, fill) || !record_definition(m, def))
			return false;
	}

	t = xcalloc(1, sizeof(*t));
	t->m = m;
	t->name = xstrdup(def->name);
	t->ncols = def->ncols;
	t->full = def->replident == 'f';
	t->is_key = xcalloc((size_t)def->ncols + 1, sizeof(bool));
	t->qcols = xcalloc((size_t)def->ncols + 1, sizeof(char *));
	cols = sqlite3_str_new(NULL);
	for (int i = 0; i < def->ncols; i++) {
		t->is_key[i] = t->full || def->cols[i].is_key;
		t->qcols[i] = sqlite3_mprintf("\"%w\"", def->cols[i].name);
		sqlite3_str_appendf(cols, "%s%s", i ? ", " : "", t->qcols[i]);
	}
	t->collist = sqlite3_str_finish(cols);
	if (t->collist == NULL)
		t->collist = sqlite3_mprintf("%s", "");
	t->rowid = t->full ? rowid_name(def) : NULL;
	*out = t;
	return true;
}

void mirror_table_free(MirrorTable *t)
{
	if (t == NULL)
		return;
	sqlite3_finalize(t->ins);
	sqlite3_finalize(t->upd);
	sqlite3_finalize(t->del);
	sqlite3_finalize(t->sel);
	sqlite3_finalize(t->trunc);
	sqlite3_finalize(t->setcol);
	for (int i = 0; i < t->ncols; i++)
		sqlite3_free(t->qcols[i]);
	free(t->qcols);
	free(t->is_key);
	sqlite3_free(t->collist);
	free(t->name);
	free(t);
}

static void bind_value(sqlite3_stmt *st, int idx, const Value *v)
{
	switch (v->kind) {
	case VAL_NULL:
		sqlite3_bind_null(st, idx);
		break;
	case VAL_INT:
		sqlite3_bind_int64(st, idx, v->i);
		break;
	case VAL_REAL:
		sqlite3_bind_double(st, idx, v->r);
		break;
	case VAL_TEXT:
		sqlite3_bind_text64(st, idx, v->p, v->len, SQLITE_STATIC, SQLITE_UTF8);
		break;
	case VAL_BLOB:
		sqlite3_bind_blob64(st, idx, v->len ? v->p : "", v->len, SQLITE_STATIC);
		break;
	}
}

/*
 * The row-matching condition. With a key: "k1" IS ?a AND ... (uses the
 * primary key). With REPLICA IDENTITY FULL: the row id of the first row
 * whose every sent column is equal, so that exactly one of several
 * identical rows changes (without a name for the row id, every such row:
 * see change_full_unnamed). first is the parameter number of column 0's
 * value; under FULL, the "not sent" flags follow the values.
 */
static void append_match(sqlite3_str *s, const MirrorTable *t, int first)
{
	bool any = false, one = t->full && t->rowid != NULL;

	if (one)
		sqlite3_str_appendf(s, " WHERE %s = (SELECT %s FROM \"%w\" WHERE ",
				    t->rowid, t->rowid, t->name);
	else
		sqlite3_str_appendall(s, " WHERE ");
	for (int i = 0; i < t->ncols; i++) {
		if (!t->is_key[i])
			continue;
		if (t->full)
			sqlite3_str_appendf(s, "%s(%s IS ?%d OR ?%d)", any ? " AND " : "",
					    t->qcols[i], first + i, first + t->ncols + i);
		else
			sqlite3_str_appendf(s, "%s%s IS ?%d", any ? " AND " : "", t->qcols[i],
					    first + i);
		any = true;
	}
	if (!any)
		sqlite3_str_appendall(s, "0");
	if (one)
		sqlite3_str_appendall(s, " LIMIT 1)");
}

static void bind_match(const MirrorTable *t, sqlite3_stmt *st, int first,
		       const Value *match, const bool *used)
{
	for (int i = 0; i < t->ncols; i++) {
		if (!t->is_key[i])
			continue;
		bind_value(st, first + i, &match[i]);
		if (t->full)
			sqlite3_bind_int(st, first + t->ncols + i, !used[i]);
	}
}

static sqlite3_stmt *table_stmt(MirrorTable *t, sqlite3_stmt **slot,
				char *(*build)(const MirrorTable *))
{
	if (*slot == NULL) {
		char *sql = build(t);

		*slot = prepare(t->m, sql, true);
		sqlite3_free(sql);
	}
	return *slot;
}

/* An insert whose key the mirror already holds replaces that row: a
 * publication that sends only inserts never sends the delete in between,
 * and the mirror holds the last version the source sent. */
static char *build_insert(const MirrorTable *t)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "INSERT OR REPLACE INTO \"%w\" (%s) VALUES (", t->name, t->collist);
	for (int i = 0; i < t->ncols; i++)
		sqlite3_str_appendf(s, "%s?%d", i ? ", " : "", i + 1);
	sqlite3_str_appendall(s, ")");
	return sqlite3_str_finish(s);
}

/* SET col = CASE WHEN ?keep THEN col ELSE ?value END, for every column:
 * one statement serves rows with and without unchanged TOASTed columns. */
static char *build_update(const MirrorTable *t)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "UPDATE \"%w\" SET ", t->name);
	for (int i = 0; i < t->ncols; i++)
		sqlite3_str_appendf(s, "%s%s = CASE WHEN ?%d THEN %s ELSE ?%d END",
				    i ? ", " : "", t->qcols[i], t->ncols + i + 1,
				    t->qcols[i], i + 1);
	append_match(s, t, 2 * t->ncols + 1);
	return sqlite3_str_finish(s);
}

static char *build_delete(const MirrorTable *t)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "DELETE FROM \"%w\"", t->name);
	append_match(s, t, 1);
	return sqlite3_str_finish(s);
}

static char *build_select(const MirrorTable *t)
{
	sqlite3_str *s = sqlite3_str_new(NULL);

	sqlite3_str_appendf(s, "SELECT %s FROM \"%w\"", t->collist, t->name);
	append_match(s, t, 1);
	return sqlite3_str_finish(s);
}

static char *build_truncate(const MirrorTable *t)
{
	return sqlite3_mprintf("DELETE FROM \"%w\"", t->name);
}

bool mirror_table_insert(MirrorTable *t, const Value *vals)
{
	sqlite3_stmt *st = table_stmt(t, &t->ins, build_insert);

	if (st == NULL)
		return false;
	for (int i = 0; i < t->ncols; i++)
		bind_value(st, i + 1, &vals[i]);
	return step_done(t->m, st, "insert a row");
}

/*
 * A keyless table with columns named rowid, _rowid_ and oid has no name
 * left for SQLite's row id, so no statement can pick one of several equal
 * rows. Then every matching row is taken out, and all are put back but
 * the first, which is left out (vals NULL: a delete) or put back changed
 * (keep[i]: column i keeps its value). Rare, so it may allocate.
 */
static bool change_full_unnamed(MirrorTable *t, const Value *match, const bool *match_used,
				const Value *vals, const bool *keep, int *nchanged)
{
	sqlite3_stmt *sel = table_stmt(t, &t->sel, build_select);
	sqlite3_stmt *del = table_stmt(t, &t->del, build_delete);
	sqlite3_stmt *ins = table_stmt(t, &t->ins, build_insert);
	sqlite3_value **rows = NULL;
	size_t nrows = 0, n;
	bool ok = false;
	int rc;

	if (sel == NULL || del == NULL || ins == NULL)
		return false;
	bind_match(t, sel, 1, match, match_used);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		rows = xreallocarray(rows, (nrows + 1) * (size_t)t->ncols, sizeof(*rows));
		for (int i = 0; i < t->ncols; i++) {
			sqlite3_value *v = sqlite3_value_dup(sqlite3_column_value(sel, i));

			if (v == NULL) {
				fprintf(stderr, "pgmirror: out of memory\n");
				exit(1);
			}
			rows[nrows * (size_t)t->ncols + (size_t)i] = v;
		}
		nrows++;
	}
	sqlite3_reset(sel);
	if (rc != SQLITE_DONE) {
		errbuf_set(&t->m->err, "could not find a row in mirror \"%s\": %s", t->m->path,
			  sqlite3_errmsg(t->m->db));
		goto done;
	}
	*nchanged = nrows > 0;
	if (nrows == 0) {
		ok = true;
		goto done;
	}
	bind_match(t, del, 1, match, match_used);
	if (!step_done(t->m, del, "delete a row"))
		goto done;
	ok = true;
	for (size_t r = vals == NULL ? 1 : 0; ok && r < nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			if (r == 0 && !keep[i])
				bind_value(ins, i + 1, &vals[i]);
			else
				sqlite3_bind_value(ins, i + 1, rows[r * (size_t)t->ncols + (size_t)i]);
		}
		ok = step_done(t->m, ins, r == 0 ? "update a row" : "put back a row");
	}
done:
	n = nrows * (size_t)t->ncols;
	for (size_t i = 0; i < n; i++)
		sqlite3_value_free(rows[i]);
	free(rows);
	return ok;
}

bool mirror_table_update(MirrorTable *t, const Value *match, const bool *match_used,
			 const Value *vals, const bool *keep, int *nchanged)
{
	sqlite3_stmt *st;

	if (t->full && t->rowid == NULL)
		return change_full_unnamed(t, match, match_used, vals, keep, nchanged);
	st = table_stmt(t, &t->upd, build_update);
	if (st == NULL)
		return false;
	for (int i = 0; i < t->ncols; i++) {
		bind_value(st, i + 1, &vals[i]);
		sqlite3_bind_int(st, t->ncols + i + 1, keep[i]);
	}
	bind_match(t, st, 2 * t->ncols + 1, match, match_used);
	if (!step_done(t->m, st, "update a row"))
		return false;
	*nchanged = sqlite3_changes(t->m->db);
	return true;
}

bool mirror_table_delete(MirrorTable *t, const Value *match, const bool *match_used,
			 int *nchanged)
{
	sqlite3_stmt *st;

	if (t->full && t->rowid == NULL)
		return change_full_unnamed(t, match, match_used, NULL, NULL, nchanged);
	st = table_stmt(t, &t->del, build_delete);
	if (st == NULL)
		return false;
	bind_match(t, st, 1, match, match_used);
	if (!step_done(t->m, st, "delete a row"))
		return false;
	*nchanged = sqlite3_changes(t->m->db);
	return true;
}

bool mirror_table_truncate(MirrorTable *t)
{
	sqlite3_stmt *st = table_stmt(t, &t->trunc, build_truncate);

	return st != NULL && step_done(t->m, st, "truncate a table");
}

bool mirror_table_set_column(MirrorTable *t, int col, const Value *match, const Value *v)
{
	if (t->setcol != NULL && t->setcol_index != col) {
		sqlite3_finalize(t->setcol);
		t->setcol = NULL;
	}
	if (t->setcol == NULL) {
		sqlite3_str *s = sqlite3_str_new(NULL);
		char *sql;

		sqlite3_str_appendf(s, "UPDATE \"%w\" SET %s = ?%d", t->name, t->qcols[col],
				    2 * t->ncols + 1);
		append_match(s, t, 1);
		sql = sqlite3_str_finish(s);
		t->setcol = prepare(t->m, sql, false);
		sqlite3_free(sql);
		if (t->setcol == NULL)
			return false;
		t->setcol_index = col;
	}
	for (int i = 0; i < t->ncols; i++)
		if (t->is_key[i])
			bind_value(t->setcol, i + 1, &match[i]);
	bind_value(t->setcol, 2 * t->ncols + 1, v);
	return step_done(t->m, t->setcol, "fill an added column");
}

bool mirror_count_rows(Mirror *m, const char *table, int64_t *count)
{
	return table_scalar(m, "SELECT count(*) FROM \"%w\"", table, count);
}

bool mirror_list_tables(Mirror *m, char ***names, int *n)
{
	sqlite3_stmt *q = prepare(m, "SELECT table_name FROM pgmirror_tables ORDER BY 1", false);
	int rc;

	*names = NULL;
	*n = 0;
	if (q == NULL)
		return false;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		*names = xreallocarray(*names, (size_t)*n + 1, sizeof(char *));
		(*names)[(*n)++] = xstrdup((const char *)sqlite3_column_text(q, 0));
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read pgmirror_tables: %s", sqlite3_errmsg(m->db));
		return false;
	}
	return true;
}

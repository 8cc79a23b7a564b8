/*
 * mirror.c: the mirror file and its lock. Opens the file with the pragmas
 * and checks its format version; transactions and the tick of long
 * statements. pgmirror_state's identity and position are in
 * mirror_state.c, the SQL helpers every mirror file uses in mirror_sql.c,
 * table plans and rebuilds in mirror_plan.c, row statements in
 * mirror_rows.c.
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
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mirror_internal.h"
#include "pgmirror/durable.h"

extern const char mirror_schema_sql[];

const char *mirror_sqlite_version(void)
{
	return sqlite3_libversion();
}

/*
 * SQLite 3.7.0 to 3.51.2 can lose commits when one connection checkpoints
 * while another resets the -wal (fixed in 3.51.3, and in 3.44.6 and
 * 3.50.7). pgmirror alone never meets it: docs/durability.md.
 */
bool mirror_sqlite_wal_reset_bug(void)
{
	int v = sqlite3_libversion_number();

	return v >= 3007000 && v < 3051003 && !(v / 1000 == 3044 && v >= 3044006) &&
	       !(v / 1000 == 3050 && v >= 3050007);
}

static void mirror_free(Mirror *m)
{
	if (m == NULL)
		return;
	sqlite3_finalize(m->set_pos);
	sqlite3_finalize(m->feed_pos);
	sqlite3_finalize(m->feed_grp);
	if (m->db != NULL)
		sqlite3_close(m->db);
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	free(m->path);
	free(m);
}

/* Whether the database already holds tables but not pgmirror's
 * (*foreign), and whether it holds pgmirror_state (*has_state). */
static bool is_foreign_database(Mirror *m, bool *foreign, bool *has_state)
{
	sqlite3_stmt *st = mirror_prepare(m,
		"SELECT count(*), coalesce(sum(name = 'pgmirror_state'), 0) "
		"FROM sqlite_master WHERE type = 'table'", false);
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
	*has_state = sqlite3_column_int(st, 1) > 0;
	sqlite3_finalize(st);
	return true;
}

/* Gives the file pgmirror's application ID (mirror_internal.h), once: a
 * file an older pgmirror made gets it at its next open for writing. */
static bool mark_mirror(Mirror *m)
{
	sqlite3_stmt *q = mirror_prepare(m, "PRAGMA application_id", false);
	int64_t id = 0;

	if (q == NULL)
		return false;
	if (sqlite3_step(q) == SQLITE_ROW)
		id = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return id == MIRROR_APPLICATION_ID ||
	       mirror_exec_owned(m, sqlite3_mprintf("PRAGMA application_id = %d",
						     MIRROR_APPLICATION_ID));
}

/*
 * Refuses a mirror that a newer pgmirror made in a format this one does
 * not know (pgmirror_state.format_version): writing to it, or reading its
 * state, could damage it or mislead. Before anything is changed in it.
 */
static bool check_format(Mirror *m)
{
	sqlite3_stmt *st = mirror_prepare(m,
		"SELECT format_version FROM pgmirror_state WHERE id = 1", false);
	int rc;
	bool ok = false;

	if (st == NULL)
		return false;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > MIRROR_FORMAT_VERSION)
		errbuf_set(&m->err, "mirror \"%s\" was made by a newer pgmirror (format version "
			  "%lld; this pgmirror knows format version %d and older); use a newer "
			  "pgmirror", m->path, (long long)sqlite3_column_int64(st, 0),
			  MIRROR_FORMAT_VERSION);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		errbuf_set(&m->err, "could not read pgmirror_state from \"%s\": %s", m->path,
			  sqlite3_errmsg(m->db));
	else
		ok = true;
	sqlite3_finalize(st);
	return ok;
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
	sqlite3_stmt *st = mirror_prepare(m, "PRAGMA journal_mode = WAL", false);
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
	if (ok && sqlite3_exec(m->db, "SELECT count(*) FROM sqlite_master", NULL, NULL,
			       NULL) != SQLITE_OK) {
		set_wal_error(m, NULL);
		ok = false;
	}
	return ok;
}

/*
 * SQLite assumes by default that writing a sector leaves the bytes around
 * it as they were (powersafe overwrite), and starts each commit in the
 * -wal right after the last one, in the same sector. Flash storage that
 * tears a sector in a power cut may then take the last confirmed commit
 * with it. Off, SQLite pads each commit to a sector's end (a frame more
 * per commit: measured in docs/durability.md). SQLite takes the setting
 * when it opens the file, so it comes in the name, as a URI (malloc'd):
 * every byte but letters, digits and "/._-~" percent-encoded, and an
 * absolute path after an empty authority ("file://", so that "//x" is no
 * host's name).
 */
static char *uri_without_psow(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *uri = xmalloc(3 * n + sizeof("file://?psow=0")), *o = uri;

	o += sprintf(o, path[0] == '/' ? "file://" : "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-~", *p) != NULL) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	strcpy(o, "?psow=0");
	return uri;
}

/*
 * The oldest SQLite whose SQL pgmirror's needs: ALTER TABLE RENAME COLUMN,
 * and renames that carry over into views and triggers (3.25), with
 * legacy_alter_table (3.26). configure asks for it too, but the library on
 * a device may be older than the headers pgmirror was built with.
 */
#define SQLITE_MIN_VERSION 3026000
#define SQLITE_MIN_VERSION_TEXT "3.26.0"

/*
 * SQLite's process-wide settings, before its first use. Its memory
 * statistics (on by default) take a global mutex around every allocation
 * and free: a lock and an unlock for each row a statement writes, a twentieth
 * of the writer's CPU in a copy, for figures pgmirror never reads. The call
 * fails harmlessly if the process used SQLite before; the setting is then
 * SQLite's default.
 */
static pthread_once_t library_configured = PTHREAD_ONCE_INIT;

static void configure_library(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* every report of damage, whatever statement meets it (mirror_check.c) */
	(void)sqlite3_config(SQLITE_CONFIG_LOG, mirror_on_sqlite_log, NULL);
}

void mirror_library_init(void)
{
	(void)pthread_once(&library_configured, configure_library);
}

/*
 * A mirror pgmirror may not write for want of its directory: SQLite says
 * "attempt to write a readonly database" (it could not make the -wal),
 * open() "Permission denied" (a new file). When the directory is the
 * cause, the error names it and what is needed.
 */
static void explain_directory(Mirror *m, const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	const char *d = slash == NULL ? "." : slash == dir ? "/" : (*slash = '\0', dir);

	if (access(d, W_OK | X_OK) != 0 && errno == EACCES)
		errbuf_set(&m->err, "could not write mirror \"%s\": pgmirror may not write in its "
			  "directory \"%s\", where SQLite makes the mirror's -wal and -shm files "
			  "(and a first run the mirror itself); give the user pgmirror runs as "
			  "write and search permission on that directory (chown, or chmod u+wx "
			  "\"%s\"), or keep the mirror in a directory it may write", path, d, d);
	free(dir);
}

MirrorOpenResult mirror_open(const char *path, MirrorMode mode, Mirror **out,
			     char **errmsg)
{
	Mirror *m = xcalloc(1, sizeof(*m));
	MirrorOpenResult res = MIRROR_OPEN_ERROR;
	int failed = SQLITE_OK; /* the code of the statement that failed */
	char *uri;
	int rc, open_errno = 0;
	bool foreign = false, has_state = false, create = mode == MIRROR_CREATE, created = false;
	int flags = (mode == MIRROR_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
		    SQLITE_OPEN_NOMUTEX;

	mirror_library_init();
	m->lock_fd = -1;
	m->path = xstrdup(path);
	*out = NULL;
	*errmsg = NULL;
	if (sqlite3_libversion_number() < SQLITE_MIN_VERSION) {
		errbuf_set(&m->err, "could not open mirror \"%s\": the SQLite library is version "
			  "%s, and pgmirror needs %s or newer; install a newer libsqlite3", path,
			  sqlite3_libversion(), SQLITE_MIN_VERSION_TEXT);
		goto error;
	}

	/* A new mirror holds the source's rows: only its owner may read it
	 * (SQLite gives -wal and -shm the mode of the database file). An
	 * existing file keeps the mode its owner gave it. */
	if (create) {
		m->lock_fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0600);
		created = m->lock_fd >= 0;
		/* the name survives a power cut before a slot is made for it */
		if (created && !durable_sync_dir(path)) {
			errbuf_set(&m->err, "could not sync the directory of mirror \"%s\": %s",
				  path, strerror(errno));
			goto error;
		}
	}
	if (m->lock_fd < 0 && (!create || errno == EEXIST))
		m->lock_fd = open(path, (mode == MIRROR_READ ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (m->lock_fd < 0) {
		open_errno = errno;
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
			long pid;
			char *unit;

			if (mirror_holder(path, &pid, &unit))
				errbuf_set(&m->err, "mirror \"%s\" is in use by another pgmirror "
					  "(process %ld%s%s)", path, pid, unit ? ", systemd unit " : "",
					  unit ? unit : "");
			else
				errbuf_set(&m->err, "mirror \"%s\" is in use by another pgmirror "
					  "process", path);
			free(unit);
			res = MIRROR_OPEN_LOCKED;
		} else
			errbuf_set(&m->err, "could not lock mirror \"%s\": %s", path, strerror(errno));
		goto error;
	}
	if (mode != MIRROR_READ && !mirror_share_mend(m))
		goto error;
	/* a URI: any name is a path (mirror_file_name()'s "file:" too) */
	uri = uri_without_psow(path);
	rc = sqlite3_open_v2(uri, &m->db, flags | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		errbuf_set(&m->err, "could not open mirror \"%s\": %s", path,
			  m->db ? sqlite3_errmsg(m->db) : "out of memory");
		goto error;
	}
	sqlite3_extended_result_codes(m->db, 1);
	sqlite3_busy_timeout(m->db, 10000);
	/* The first read tells whether this is an SQLite file at all. */
	if (!is_foreign_database(m, &foreign, &has_state)) {
		if ((mirror_is_damage_code(sqlite3_extended_errcode(m->db)) ||
		     mirror_header_error(m->db)) && mirror_was_mirror(m))
			goto damaged;
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
	if (has_state && !check_format(m))
		goto error_or_damaged;
	if (mode == MIRROR_READ) {
		/* the first read made -wal and -shm if an account that may write
		 * the mirror had removed them: give them the file's group */
		mirror_share_files(m);
		*out = m;
		return MIRROR_OPEN_OK;
	}
	mirror_share_keep_wal(m);
	/* FULL before the WAL is switched on: the switch itself commits */
	if (!mirror_exec(m, "PRAGMA synchronous = FULL") || !use_wal(m) ||
	    !mirror_exec(m,
		      /* the kept -wal is emptied on close, and shrinks after a
		       * big transaction */
		      "PRAGMA journal_size_limit = 67108864; "
		      "PRAGMA foreign_keys = OFF; PRAGMA trusted_schema = OFF; "
		      /* a renamed table's views and triggers follow it */
		      "PRAGMA legacy_alter_table = OFF"))
		goto error;
	if (!mirror_exec(m, "BEGIN IMMEDIATE") || !mirror_exec(m, mirror_schema_sql) ||
	    !mirror_upgrade(m) || !mark_mirror(m) || !mirror_exec(m, "COMMIT")) {
		/* taken before the ROLLBACK, which resets it */
		failed = sqlite3_extended_errcode(m->db);
		(void)sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
		goto error_or_damaged;
	}
	mirror_share_files(m);
	m->set_pos = mirror_prepare(m,
		"UPDATE pgmirror_state SET confirmed_lsn = ?1, "
		"last_commit_time = coalesce(?2, last_commit_time) WHERE id = 1",
		true);
	if (m->set_pos == NULL)
		goto error;
	*out = m;
	return MIRROR_OPEN_OK;

error_or_damaged:
	if (failed == SQLITE_OK)
		failed = sqlite3_extended_errcode(m->db);
	if (!has_state || !mirror_is_damage_code(failed))
		goto error;
damaged:
	/* locked, and kept for the caller to set aside (mirror_close_as_is()) */
	errbuf_set(&m->err, "mirror \"%s\" is damaged (%s); a run of pgmirror sets it aside as "
		  "\"%s.damaged\" and rebuilds it from a fresh copy", path,
		  failed != SQLITE_OK ? sqlite3_errstr(failed) : sqlite3_errmsg(m->db), path);
	if (mode == MIRROR_READ)
		goto error; /* a reader (--status) only says so */
	*errmsg = xstrdup(m->err.text);
	*out = m;
	return MIRROR_OPEN_DAMAGED;

error:
	if (failed == SQLITE_OK && m->db != NULL)
		failed = sqlite3_extended_errcode(m->db);
	if (mode != MIRROR_READ && ((failed & 0xff) == SQLITE_READONLY ||
				    (failed & 0xff) == SQLITE_CANTOPEN || open_errno == EACCES))
		explain_directory(m, path);
	*errmsg = xstrdup(m->err.text);
	/* still locked by us: nobody else can have started using the new file */
	if (created) {
		sqlite3_close(m->db);
		m->db = NULL;
		mirror_remove_files(path); /* so no broken mirror remains */
	}
	mirror_free(m);
	return res;
}

void mirror_close_as_is(Mirror *m)
{
	if (m != NULL && m->db != NULL) {
		m->no_interrupt = true;
		if (!sqlite3_get_autocommit(m->db))
			(void)sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
		m->in_txn = false;
		(void)sqlite3_db_config(m->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	}
	mirror_close(m);
}

void mirror_close(Mirror *m)
{
	if (m != NULL && m->in_txn)
		mirror_rollback(m);
	mirror_free(m);
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

	/* a long statement that writes (a rebuild's INSERT ... SELECT, an
	 * UPDATE of every row) takes about ten steps a row */
	mirror_writeback_note(m, PROGRESS_OPS / 10);
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
	if (!mirror_exec(m, "BEGIN IMMEDIATE"))
		return false;
	m->in_txn = true;
	m->hooked_txn = true;
	m->content_changed = false;
	if (m->hooks.before_commit != NULL &&
	    !mirror_scalar(m, "PRAGMA %w.schema_version", "main", &m->schema_version)) {
		mirror_rollback(m);
		return false;
	}
	return true;
}

/* SQLite's update hook, while hooks are set: notes a row changed in a
 * table that is not one of pgmirror's own that only a run reads (its
 * state, the waiting and pending tables, the feed's row). */
static void on_row_change(void *arg, int op, const char *db, const char *table,
			  sqlite3_int64 rowid)
{
	Mirror *m = arg;

	(void)op;
	(void)db;
	(void)rowid;
	if (m->content_changed)
		return;
	m->content_changed = strcmp(table, "pgmirror_state") != 0 &&
			     strcmp(table, "pgmirror_waiting") != 0 &&
			     strcmp(table, "pgmirror_pending") != 0 &&
			     strcmp(table, "pgmirror_feed") != 0;
}

void mirror_set_commit_hooks(Mirror *m, const MirrorCommitHooks *hooks)
{
	static const MirrorCommitHooks none = {0};

	m->hooks = hooks != NULL ? *hooks : none;
	sqlite3_update_hook(m->db, hooks != NULL ? on_row_change : NULL, m);
}

bool mirror_commit_hooks_are(const Mirror *m, const void *ctx)
{
	return m->hooks.ctx == ctx;
}

bool mirror_txn_changed_content(Mirror *m, bool *changed)
{
	int64_t v = 0;

	*changed = m->content_changed;
	if (*changed)
		return true;
	if (!mirror_scalar(m, "PRAGMA %w.schema_version", "main", &v))
		return false;
	*changed = v != m->schema_version;
	return true;
}

bool mirror_begin_read(Mirror *m)
{
	if (!mirror_exec(m, "BEGIN DEFERRED"))
		return false;
	m->in_txn = true;
	return true;
}

bool mirror_commit(Mirror *m)
{
	bool ok, hooked = m->hooked_txn;

	if (hooked && m->hooks.before_commit != NULL &&
	    !m->hooks.before_commit(m->hooks.ctx, m, &m->err)) {
		mirror_rollback(m);
		return false;
	}
	m->no_interrupt = true;
	ok = mirror_exec(m, "COMMIT");
	m->no_interrupt = false;
	mirror_writeback_end(m);
	if (!ok) {
		mirror_rollback(m);
		return false;
	}
	m->in_txn = false;
	m->hooked_txn = false;
	if (hooked && m->hooks.committed != NULL)
		m->hooks.committed(m->hooks.ctx);
	mirror_share_files(m);
	return true;
}

void mirror_rollback(Mirror *m)
{
	bool hooked = m->hooked_txn;

	m->no_interrupt = true;
	if (m->in_txn || !sqlite3_get_autocommit(m->db))
		(void)sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
	m->no_interrupt = false;
	m->in_txn = false;
	m->hooked_txn = false;
	mirror_writeback_end(m);
	if (hooked && m->hooks.rolled_back != NULL)
		m->hooks.rolled_back(m->hooks.ctx);
}

/* The names of the tables sql (one text column, of what) yields. */
static bool names_of(Mirror *m, const char *sql, const char *what, char ***names, int *n)
{
	sqlite3_stmt *q = mirror_prepare(m, sql, false);
	int rc;

	*names = NULL;
	*n = 0;
	if (q == NULL)
		return false;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		*names = xreallocarray(*names, (size_t)*n + 1, sizeof(char *));
		if (!mirror_own_text(m, q, 0, what, &(*names)[*n]))
			break;
		(*n)++;
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_ROW) { /* damaged: the error is set */
		strv_free(*names, *n);
		*names = NULL;
		*n = 0;
		return false;
	}
	if (rc != SQLITE_DONE) {
		errbuf_set(&m->err, "could not read pgmirror_tables: %s", sqlite3_errmsg(m->db));
		strv_free(*names, *n);
		*names = NULL;
		*n = 0;
		return false;
	}
	return true;
}

bool mirror_drop_all_tables(Mirror *m)
{
	char **names;
	int n;
	bool ok;

	/* Names first: SQLite cannot drop a table while a SELECT is running.
	 * The tables set aside to be copied again go too (mirror_stage.h). A
	 * row without a name (damage) names no table; the DELETEs take it. */
	if (!names_of(m, "SELECT table_name FROM pgmirror_tables WHERE table_name IS NOT NULL "
		      "UNION SELECT old_name FROM pgmirror_staged WHERE old_name IS NOT NULL",
		      "pgmirror_tables.table_name", &names, &n))
		return false;
	ok = true;
	for (int i = 0; i < n; i++)
		ok = ok && mirror_exec_owned(m, sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\"", names[i]));
	strv_free(names, n);
	return ok && mirror_exec(m, "DELETE FROM pgmirror_tables; DELETE FROM pgmirror_columns; "
				 "DELETE FROM pgmirror_waiting; DELETE FROM pgmirror_pending; "
				 "DELETE FROM pgmirror_staged");
}

bool mirror_list_tables(Mirror *m, char ***names, int *n)
{
	return names_of(m, "SELECT table_name FROM pgmirror_tables ORDER BY 1",
			"pgmirror_tables.table_name", names, n);
}

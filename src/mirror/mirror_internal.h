/*
 * mirror_internal.h: what the three files of the mirror module share and
 * nobody else sees: the Mirror and MirrorTable structs and the few SQL
 * helpers every part uses. mirror.c owns the file, its state and its
 * lock; mirror_plan.c the table plans and rebuilds; mirror_rows.c the row
 * statements; mirror_index.c pgmirror's indexes on mirror tables; mirror_userobj.c
 * the user's objects; mirror_writeback.c a big transaction's disk
 * writes; mirror_share.c the -wal and -shm that readers in other accounts
 * need. Only these files include sqlite3.h.
 */
#ifndef PGMIRROR_MIRROR_INTERNAL_H
#define PGMIRROR_MIRROR_INTERNAL_H

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "pgmirror/mirror.h"

typedef struct MirrorWriteback MirrorWriteback;

/*
 * The SQLite header's application ID (bytes 68-71, PRAGMA application_id)
 * of every mirror file: "pgMr". It marks the file as a mirror in its
 * first page's first bytes, which survive where the catalog entry of
 * pgmirror_state (mirror_damage.c) may not: a truncated file, or one whose
 * catalog grew past its first page and lost the page that holds it.
 */
#define MIRROR_APPLICATION_ID 0x70674d72

struct Mirror {
	sqlite3 *db;
	int lock_fd;             /* flock()ed descriptor of the file */
	char *path;
	bool in_txn;
	sqlite3_stmt *set_pos;   /* UPDATE pgmirror_state SET confirmed_lsn... */
	sqlite3_stmt *feed_pos;  /* a hub's every group: the position (mirror_feed.c) */
	sqlite3_stmt *feed_grp;  /* and its number; prepared at first use */
	TickFn tick;             /* called from long statements; NULL: none */
	void *tick_ctx;
	bool no_interrupt;       /* a commit or rollback: tick, never stop */
	int txn_rows;            /* about how many rows the transaction wrote */
	bool wb_started;         /* the writeback helper was started for it */
	MirrorWriteback *wb;     /* the helper, while it runs; NULL: none */
	bool share_warned;       /* -wal/-shm could not take the file's group: said once */
	bool share_done;         /* -wal and -shm are there and have share_mode, share_gid */
	mode_t share_mode;       /* the mirror file's mode and group then */
	gid_t share_gid;
	MirrorCommitHooks hooks; /* a feed's writer's (mirror_set_commit_hooks()) */
	bool hooked_txn;         /* a write transaction the hooks hear of is open */
	bool content_changed;    /* with hooks: it changed a mirror table or its metadata */
	int64_t schema_version;  /* with hooks: PRAGMA schema_version at its BEGIN */
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
	sqlite3_stmt *upd_all;   /* FULL, every column sent: indexable matches */
	sqlite3_stmt *del_all;
	sqlite3_stmt *sel;       /* FULL without a row id name: the matching rows */
	sqlite3_stmt *trunc;
	sqlite3_stmt *setcol;    /* mirror_table_set_column, for column setcol_index */
	int setcol_index;
};

/* Runs SQL text (one or more statements); false with the error set. */
/* mirror_sql.c: path as SQLite must be given it to take it as a path,
 * never a URI (free with sqlite3_free; NULL: out of memory). */
char *mirror_file_name(const char *path);
bool mirror_exec(Mirror *m, const char *sql) PGM_MUST_CHECK;
/* Like mirror_exec, but frees the sqlite3_mprintf'd sql (NULL: out of
 * memory, fatal). */
bool mirror_exec_owned(Mirror *m, char *sql) PGM_MUST_CHECK;
/* A prepared statement, or NULL with the error set. */
sqlite3_stmt *mirror_prepare(Mirror *m, const char *sql, bool persistent);
/* Steps a statement to completion and resets it; what names the step in
 * the error ("insert a row"). */
bool mirror_step_done(Mirror *m, sqlite3_stmt *st, const char *what) PGM_MUST_CHECK;
/* The one integer sql_fmt (with a "%w" for the table name) yields on table. */
bool mirror_scalar(Mirror *m, const char *sql_fmt, const char *table, int64_t *out)
	PGM_MUST_CHECK;

/* Whether pgmirror's own table name is in the file (*has): one of a newer
 * format is not in a file an older pgmirror made, opened to read. */
bool mirror_has_own_table(Mirror *m, const char *name, bool *has) PGM_MUST_CHECK;

/* Column i of the row st is on, as a malloc'd string; NULL for NULL. */
char *mirror_column_dup(sqlite3_stmt *st, int i);

/*
 * mirror_own.c: column col of the row q is on, a value of pgmirror's own
 * table column what ("pgmirror_tables.table_name"), kept to what pgmirror
 * writes there; false, with m's error naming it ("mirror ... is damaged:
 * ...") and the damage noted (mirror_damage_note()), when it is not.
 * Where NULL is a value of the column's own: *out NULL, -1, LSN_INVALID.
 */
bool mirror_own_text(Mirror *m, sqlite3_stmt *q, int col, const char *what, char **out)
	PGM_MUST_CHECK;
bool mirror_own_int(Mirror *m, sqlite3_stmt *q, int col, const char *what, int64_t *out)
	PGM_MUST_CHECK;
bool mirror_own_lsn(Mirror *m, sqlite3_stmt *q, int col, const char *what, Lsn *out)
	PGM_MUST_CHECK;
/* mirror_own.c: column col of q's row, of type (sqlite3_column_type(),
 * read before any other look at it), as a message shows it: text quoted,
 * at most 40 bytes of it (no UTF-8 character cut), control characters as
 * '?'; NULL as NULL. */
void mirror_own_show(sqlite3_stmt *q, int col, int type, char *buf, size_t size);
/* mirror_own.c: appends to found ("; " between) every value of pgmirror's
 * own tables in db that is not what pgmirror writes there, with its rowid,
 * up to limit of them; how many, or -1 when the tables cannot be read
 * (found says why). */
int mirror_own_sweep(sqlite3 *db, sqlite3_str *found, int limit);
/* mirror_damage.c: a reader found what (one line) in pgmirror's own
 * tables: damage, as SQLite's reports (mirror_damage_seen()). */
void mirror_damage_note(const char *what);

/* mirror_writeback.c: notes that the open transaction wrote about rows
 * rows; past a threshold, a helper thread starts the disk's writes of its
 * pages while it goes on. */
void mirror_writeback_note(Mirror *m, int rows);
/* mirror_writeback.c: at the end of a transaction (after its commit and
 * checkpoint, or its rollback): stops the helper, if any. */
void mirror_writeback_end(Mirror *m);

/* mirror_share.c: before SQLite opens the mirror (locked, writing):
 * removes a -wal or -shm that a reader made under its own account while
 * pgmirror was not running, when nothing has the mirror open; false with
 * the error set (what to do) when that cannot be done. */
bool mirror_share_mend(Mirror *m) PGM_MUST_CHECK;
/* mirror_share.c: SQLite keeps -wal (emptied) and -shm when pgmirror
 * closes the mirror, so readers in other accounts can open it then. */
void mirror_share_keep_wal(Mirror *m);
/* mirror_share.c: gives -wal and -shm the mirror file's group and mode
 * (a warning, once, when the group cannot be given). */
void mirror_share_files(Mirror *m);
/* mirror_share.c: gives file name (when it is a regular file pgmirror
 * owns, never what a symlink names) the mode and group of like, through a
 * descriptor of what was looked at. *owned: it was such a file. -1, errno
 * set, when the group could not be given. */
int mirror_share_like(const char *name, const struct stat *like, bool *owned);
/* mirror.c: SQLite's process-wide settings, once, before its first use. */
void mirror_library_init(void);
/* mirror_check.c: SQLite's error log (SQLITE_CONFIG_LOG): notes damage. */
void mirror_on_sqlite_log(void *arg, int code, const char *msg);
/* mirror_check.c: mirror_file_was_mirror() for an open mirror, read
 * through its own descriptor. */
bool mirror_was_mirror(const Mirror *m);
/* mirror_damage.c: whether the last error on db says its header cannot be
 * read: SQLITE_NOTADB, or a schema format number SQLite does not know
 * (bytes 44-47 changed). */
bool mirror_header_error(sqlite3 *db);

/* mirror_sync.c: brings an older mirror's own tables up to this
 * format; inside the open's transaction. */
bool mirror_upgrade(Mirror *m) PGM_MUST_CHECK;

/* mirror_rows.c: binds v (borrowed until the step) as parameter idx. */
void mirror_bind_value(sqlite3_stmt *st, int idx, const Value *v);
/* mirror_rows.c: the handle of table def, whose SQLite table is made. */
MirrorTable *mirror_table_new(Mirror *m, const MirrorTableDef *def);

/* mirror_index.c: the source indexes of a table, saved over a rebuild. */
typedef struct SavedIndex {
	char *name;
	int ncols;
	char **cols;
	bool *desc;
} SavedIndex;

typedef struct SavedIndexes {
	int n;
	SavedIndex *idx;
} SavedIndexes;

/* Saves the pgmirror_index_* indexes of table (before it is dropped). */
bool mirror_save_indexes(Mirror *m, const char *table, SavedIndexes *s) PGM_MUST_CHECK;
/* Makes them again on the rebuilt table def, with their columns' new
 * names (plan), but those on a column that is gone; and the match index
 * of a REPLICA IDENTITY FULL table. After record_definition(). */
bool mirror_restore_indexes(Mirror *m, const MirrorTableDef *def, const MirrorPlan *plan,
			    const SavedIndexes *s) PGM_MUST_CHECK;
void mirror_saved_indexes_free(SavedIndexes *s);

#endif

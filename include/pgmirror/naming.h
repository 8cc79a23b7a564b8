/*
 * naming.h: how a source table is named in the mirror, and when names
 * clash. One rule for the whole program: the applier names the tables it
 * makes with it, the first run checks a publication's tables with it, and
 * the mirror refuses a second source table under a name it holds. SQLite
 * ignores (ASCII) case in names, so every comparison here does too.
 */
#ifndef PGMIRROR_NAMING_H
#define PGMIRROR_NAMING_H

/* The SQLite name of source table nspname.relname (malloc'd): relname for
 * public, nspname_relname otherwise. */
char *naming_table(const char *nspname, const char *relname);

/* Why source table nspname.relname cannot be mirrored under its name
 * (malloc'd text: the name is reserved for pgmirror or SQLite), or NULL. */
char *naming_name_problem(const char *nspname, const char *relname);

/*
 * Why source table nspname.relname, with these column names, cannot be
 * mirrored (malloc'd text), or NULL when it can: a name reserved for
 * pgmirror, no columns, or column names SQLite does not tell apart.
 */
char *naming_table_problem(const char *nspname, const char *relname,
			   const char *const *cols, int ncols);

/*
 * Why source tables a (mirrored, or seen first) and b cannot both be
 * mirrored (malloc'd text), or NULL when they can: they are two tables
 * whose mirror names SQLite does not tell apart.
 */
char *naming_clash(const char *nsp_a, const char *rel_a, const char *nsp_b,
		   const char *rel_b);

#endif

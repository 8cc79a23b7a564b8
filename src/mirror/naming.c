/*
 * naming.c: the mirror's table naming rule and its collision checks (see
 * naming.h). Pure: no SQLite, no libpq.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pgmirror/naming.h"
#include "pgmirror/util.h"

char *naming_table(const char *nspname, const char *relname)
{
	if (strcmp(nspname, "public") == 0)
		return xstrdup(relname);
	return xasprintf("%s_%s", nspname, relname);
}

char *naming_name_problem(const char *nspname, const char *relname)
{
	char *name = naming_table(nspname, relname), *why = NULL;

	/* SQLite ignores (ASCII) case in names, so the checks do too */
	if (strncasecmp(name, "pgmirror_", 9) == 0)
		why = xasprintf("source table \"%s\".\"%s\" would be mirrored as \"%s\", a name "
				"reserved for pgmirror's own tables; rename it or leave it out of the "
				"publication", nspname, relname, name);
	else if (strncasecmp(name, "sqlite_", 7) == 0)
		why = xasprintf("source table \"%s\".\"%s\" would be mirrored as \"%s\", a name "
				"reserved for SQLite's own tables; rename it or leave it out of the "
				"publication", nspname, relname, name);
	free(name);
	return why;
}

char *naming_table_problem(const char *nspname, const char *relname,
			   const char *const *cols, int ncols)
{
	char *why = naming_name_problem(nspname, relname);

	if (why == NULL && ncols == 0)
		why = xasprintf("source table \"%s\".\"%s\" has no published columns (it holds "
				"only a count of rows), and an SQLite table needs one; add a column to "
				"it or to its column list, or leave it out of the publication",
				nspname, relname);
	for (int i = 0; why == NULL && i < ncols; i++)
		for (int j = 0; why == NULL && j < i; j++)
			if (strcasecmp(cols[i], cols[j]) == 0)
				why = xasprintf("source table \"%s\".\"%s\" has columns \"%s\" and "
						"\"%s\", which SQLite cannot tell apart (it ignores "
						"case in names); rename one of them, or leave one out "
						"with a column list in the publication", nspname,
						relname, cols[j], cols[i]);
	return why;
}

char *naming_clash(const char *nsp_a, const char *rel_a, const char *nsp_b,
		   const char *rel_b)
{
	char *name_a, *name_b, *why = NULL;

	if (strcmp(nsp_a, nsp_b) == 0 && strcmp(rel_a, rel_b) == 0)
		return NULL; /* the same table */
	name_a = naming_table(nsp_a, rel_a);
	name_b = naming_table(nsp_b, rel_b);
	if (strcasecmp(name_a, name_b) == 0)
		why = xasprintf("source tables \"%s\".\"%s\" and \"%s\".\"%s\" would both be "
				"mirrored as \"%s\" (SQLite ignores case in names); leave one of "
				"them out of the publication or rename it", nsp_a, rel_a, nsp_b,
				rel_b, name_b);
	free(name_a);
	free(name_b);
	return why;
}

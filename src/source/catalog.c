/*
 * catalog.c: freeing the source's catalog facts that catalog.h declares
 * (a type, a column's fill, the indexes), beside that header: the applier
 * and indexes.c free what the catalog's answers gave them without
 * reaching into the session files that ask the source.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pgmirror/catalog.h"

void source_type_clear(SourceType *t)
{
	free(t->name);
	memset(t, 0, sizeof(*t));
}

void source_fill_clear(SourceFill *f)
{
	free(f->missing);
	memset(f, 0, sizeof(*f));
}

void source_indexes_free(SourceIndex *idx, int n)
{
	for (int i = 0; i < n; i++) {
		for (int c = 0; c < idx[i].ncols; c++)
			free(idx[i].cols[c]);
		free(idx[i].cols);
		free(idx[i].desc);
		free(idx[i].name);
	}
	free(idx);
}

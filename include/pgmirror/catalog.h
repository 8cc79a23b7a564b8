/*
 * catalog.h: what the applier may ask of the source's catalog while it
 * streams (a column's type when it is not built in; what existing rows
 * hold in an added column; what a renamed table is called now). The replication loop answers over a plain
 * connection; the applier sees only these callbacks.
 */
#ifndef PGMIRROR_CATALOG_H
#define PGMIRROR_CATALOG_H

#include <stdbool.h>
#include <stdint.h>

/* What the source's catalog says of a type. */
typedef struct SourceType {
	char *name;          /* pg_type.typname; NULL: no such type (dropped) */
	char typtype;        /* b base, d domain, e enum, c composite, r range, ... */
	uint32_t basetype;   /* domain: its base type */
	int32_t typmod;      /* domain: the base type's modifier */
	uint32_t elemtype;   /* array: the element type; else 0 */
	char elemdelim;      /* array: the element type's typdelim */
} SourceType;

/* What existing rows hold in a column added to a table. */
typedef struct SourceFill {
	bool found;          /* the column exists on the source now */
	bool has_missing;    /* a constant the source gave existing rows */
	char *missing;       /* its text (NULL: the constant is NULL) */
	bool has_default;    /* the column has a default expression */
} SourceFill;

/* A source index the mirror copies (sql/source-indexes.sql). */
typedef struct SourceIndex {
	uint32_t relid;      /* the table's OID */
	uint32_t oid;        /* the index's OID */
	char *name;          /* the index's name */
	int ncols;           /* key columns, in index order */
	char **cols;
	bool *desc;          /* per column: DESC */
} SourceIndex;

void source_type_clear(SourceType *t);
void source_fill_clear(SourceFill *f);
void source_indexes_free(SourceIndex *idx, int n);

/*
 * Receives one row of column_values(): vals[i] (lens[i] bytes, NULL for
 * NULL) for the key columns, then the column asked for. False stops.
 */
typedef bool (*CatalogRowFn)(void *arg, const char *const *vals, const int *lens);

/* Each call returns false with an error text from error(ctx). */
typedef struct Catalog {
	void *ctx;
	bool (*type_info)(void *ctx, uint32_t oid, SourceType *out);
	bool (*column_fill)(void *ctx, uint32_t relid, const char *column, SourceFill *out);
	/* The attnums the named columns of relid have now; 0 for a name the
	 * relation has no column of (any more). */
	bool (*column_attnums)(void *ctx, uint32_t relid, const char *const *names, int n,
			       int *attnums);
	/* The source's current values of column of relid (found by its OID,
	 * whatever it is called now), with the keys of their rows, row by row,
	 * in text form. */
	bool (*column_values)(void *ctx, uint32_t relid, const char *const *keys, int nkeys,
			      const char *column, CatalogRowFn row, void *arg);
	const char *(*error)(void *ctx);
	/* The last call failed because the source could not be reached (a
	 * connection refused or broken, a server shutting down): the caller
	 * may try again once it is back. NULL: never. */
	bool (*lost)(void *ctx);
	/* The schema and name relid has now (malloc'd), or NULLs when the
	 * source has no such relation (dropped since). NULL: never asked, the
	 * stream's names are taken as they come. */
	bool (*relation_name)(void *ctx, uint32_t relid, char **nspname, char **relname);
	/* The indexes of the relations relids[0..n-1] that the mirror copies,
	 * ordered by relation (*out malloc'd: source_indexes_free()), as the
	 * source has them once transaction xid (0: none) is visible there.
	 * NULL: the mirror's indexes are left as they are. */
	bool (*indexes)(void *ctx, const uint32_t *relids, int n, uint32_t xid,
			SourceIndex **out, int *nout);
	/* Whether the mirror's publications publish relid now. NULL: never
	 * asked, every relation counts as published. */
	bool (*relation_published)(void *ctx, uint32_t relid, bool *published);
} Catalog;

#endif

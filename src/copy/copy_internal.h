/*
 * copy_internal.h: what copy.c lends copy_parts.c, which copies a table
 * in parts with copy.c's reader and writer.
 */
#ifndef PGMIRROR_COPY_INTERNAL_H
#define PGMIRROR_COPY_INTERNAL_H

#include "pgmirror/copy.h"

/* Called on the writer's thread once a batch's nrows rows (vals: nrows x
 * the table's columns; bytes of values) are inserted; false to stop the
 * copy, with the copier's error set (copy_set_error()). */
typedef bool (*CopyBatchHook)(void *ctx, const Value *vals, int nrows, size_t bytes);

/* Makes the mirror table of t, empty, with sync_lsn (unless LSN_INVALID). */
bool copy_make_table(Copier *c, const SourceTable *t, Lsn sync_lsn) PGM_MUST_CHECK;
/* Copies t's rows (order NULL: as the server reads them), calling hook
 * (unless NULL) after each batch. */
bool copy_rows_ordered(Copier *c, const SourceTable *t, const SourceOrder *order,
		       CopyBatchHook hook, void *ctx) PGM_MUST_CHECK;
Applier *copy_applier(const Copier *c);
Session *copy_session(const Copier *c);
void copy_set_error(Copier *c, const char *text);

#endif

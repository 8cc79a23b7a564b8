/*
 * copy_internal.h: what copy.c (the row pump: a reader thread, a ring of
 * batches, the writer) lends copy_parts.c, which copies a table in parts
 * with it, and copy_tables.c, which makes a copy's synthetic transaction.
 */
#ifndef PGMIRROR_COPY_INTERNAL_H
#define PGMIRROR_COPY_INTERNAL_H

#include <pthread.h>

#include "pgmirror/copy.h"
#include "pgmirror/copy_binary.h"


/* Hands msg to the applier; false with the copier's error set. */
bool copy_feed(Copier *c, const PgoMessage *msg) PGM_MUST_CHECK;
/* True when the copy is to stop (a signal, the caller's check), with the
 * error set saying so for t. */
bool copy_stopped(Copier *c, const SourceTable *t);
/* Copies t's rows as the server reads them (copy_rows_ordered() unordered). */
bool copy_table_rows(Copier *c, const SourceTable *t) PGM_MUST_CHECK;

/* Called on the writer's thread once a batch's nrows rows (vals: nrows x
 * the table's columns; bytes of values) are inserted; false to stop the
 * copy, with the copier's error set (copy_set_error()). */
typedef bool (*CopyBatchHook)(void *ctx, const Value *vals, int nrows, size_t bytes);

#define NBATCHES 32
#define BATCH_ROWS 512
#define BATCH_VALUES 4096       /* fewer rows of a wide table */
#define BATCH_BYTES ((size_t)64 << 10)

/* Rows converted by the reader for the writer; one of the ring. */
typedef struct Batch {
	int nrows;
	Value *vals;         /* nrows x ncols; text and blobs point into data */
	size_t *offs;        /* where each value's bytes start in data */
	size_t nvals_cap;    /* of vals and offs */
	char *data;          /* the values' bytes */
	size_t len, cap;     /* of data */
} Batch;

/* The reader thread's state, shared with the writer under mu. */
typedef struct Reader {
	pthread_mutex_t mu;
	pthread_cond_t filled;   /* a batch was filled, or the reader ended */
	pthread_cond_t freed;    /* a batch was used, or the writer gave up */
	Batch batches[NBATCHES];
	int head;                /* the oldest filled batch */
	int nfilled;             /* filled batches from head on */
	size_t filled_bytes;     /* the bytes of their values */
	bool done;               /* the reader ended (see failed) */
	bool failed;             /* ... with an error in err (or stopped) */
	bool stopped;            /* ... because the stop check said so */
	bool bad_value;          /* ... on a value the mirror cannot store */
	/* the reader's own, not shared until done */
	const SourceTable *t;
	const ColumnType *types; /* the applier's, read-only meanwhile */
	bool binary;             /* the COPY is in binary format ... */
	CopyBinary bin;          /* ... and is there */
	int server_version;      /* the source's: binary values are read per it */
	PgoValue *fields;        /* one row's fields */
	ValueBuf *scratch;       /* per column, reused */
	uint64_t rows;           /* rows read */
	int64_t waited_room;     /* usecs the reader waited for a free batch */
	int64_t waited_rows;     /* usecs the writer waited for a filled one */
	int64_t reader_cpu;      /* usecs of CPU the reader used, once done */
	ErrBuf err;
} Reader;

struct Copier {
	Session *s;
	Applier *a;
	bool (*stopping)(void);  /* a signal asked pgmirror to stop */
	Reader rd;               /* buffers kept from table to table */
	int ncols_cap;           /* of rd.fields and rd.scratch */
	const SourceOrder *order; /* the next table's key order (copy_parts.c) */
	CopyBatchHook hook;      /* ... and what to do after each batch of it */
	void *hook_ctx;
	bool bad_value;          /* the last error is of a value (copy.h) */
	ErrBuf err;              /* the last error */
};

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

/*
 * feed_answer.h: catalog answers, the A records of a segment (docs/feed.md,
 * "Catalog answers"): what the hub's applier asked the source's catalog
 * (catalog.h) and what it was told, so that a device's applier is told the
 * same without a source.
 *
 *	A body = u8 question · the question's key · the answer
 *
 * The question byte and the key are the question's canonical key: the
 * same question asked twice gives the same bytes. A device keeps each
 * answer under its key (FeedAnswer.key); when its applier asks, the
 * feed_key_*() function of that question gives the bytes to look up. The
 * hub writes each record with the feed_put_answer_*() of its question,
 * which write the key with the same feed_key_*().
 */
#ifndef PGMIRROR_FEED_ANSWER_H
#define PGMIRROR_FEED_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/catalog.h"
#include "pgmirror/feed_format.h"
#include "pgmirror/util.h"

typedef enum FeedQuestion {
	FEED_Q_TYPE = 1,        /* Catalog.type_info */
	FEED_Q_FILL = 2,        /* Catalog.column_fill */
	FEED_Q_ATTNUMS = 3,     /* Catalog.column_attnums */
	FEED_Q_VALUES = 4,      /* Catalog.column_values */
	FEED_Q_RELNAME = 5,     /* Catalog.relation_name */
	FEED_Q_INDEXES = 6,     /* Catalog.indexes */
	FEED_Q_PUBLISHED = 7,   /* Catalog.relation_published */
} FeedQuestion;

/* "type", "column fill", ...; NULL for a number that is no question. */
const char *feed_question_name(int question);

/* The canonical key of each question (question byte and key), appended
 * to b. Strings are C strings; an array of n. */
void feed_key_type(FeedBuf *b, uint32_t oid);
void feed_key_fill(FeedBuf *b, uint32_t relid, const char *column);
void feed_key_attnums(FeedBuf *b, uint32_t relid, const char *const *names, int n);
void feed_key_values(FeedBuf *b, uint32_t relid, const char *const *keys, int nkeys,
		     const char *column);
void feed_key_relname(FeedBuf *b, uint32_t relid);
void feed_key_indexes(FeedBuf *b, const uint32_t *relids, int n, uint32_t xid);
void feed_key_published(FeedBuf *b, uint32_t relid);

/* A records, the question's arguments then the answer as the Catalog
 * callback gave it. */
void feed_put_answer_type(FeedBuf *b, uint32_t oid, const SourceType *t);
void feed_put_answer_fill(FeedBuf *b, uint32_t relid, const char *column, const SourceFill *f);
void feed_put_answer_attnums(FeedBuf *b, uint32_t relid, const char *const *names, int n,
			     const int *attnums);
void feed_put_answer_relname(FeedBuf *b, uint32_t relid, const char *nspname,
			     const char *relname);
void feed_put_answer_indexes(FeedBuf *b, const uint32_t *relids, int n, uint32_t xid,
			     const SourceIndex *idx, int nidx);
void feed_put_answer_published(FeedBuf *b, uint32_t relid, bool published);

/*
 * Question 4's answer comes row by row (Catalog.column_values calls back
 * once a row): begin() writes the record's start and key, row() one row
 * (vals[i], lens[i] bytes, NULL for NULL, for the nkeys keys and the
 * column, as CatalogRowFn gets them), end() the row count and the length.
 */
typedef struct FeedValuesWriter {
	size_t start;      /* where the record starts in the buffer */
	size_t rows_at;    /* where its row count goes */
	uint64_t nrows;    /* rows written so far */
	int nkeys;
} FeedValuesWriter;
void feed_put_answer_values_begin(FeedBuf *b, FeedValuesWriter *w, uint32_t relid,
				  const char *const *keys, int nkeys, const char *column);
void feed_put_answer_values_row(FeedBuf *b, FeedValuesWriter *w, const char *const *vals,
				const int *lens);
void feed_put_answer_values_end(FeedBuf *b, FeedValuesWriter *w);

/* An A record read back. Strings and arrays are malloc'd (freed by
 * feed_answer_clear()) but for key and question 4's rows, which are
 * borrowed from the record's body. */
typedef struct FeedAnswer {
	FeedQuestion question;
	const uint8_t *key;        /* the canonical key: question byte and key */
	size_t key_len;
	union {
		SourceType type;                                    /* 1 */
		SourceFill fill;                                    /* 2 */
		struct { int n; int *attnums; } attnums;            /* 3: n as asked */
		struct {                                            /* 4 */
			int nkeys;           /* key columns asked */
			uint32_t nrows;
			const uint8_t *rows; /* nrows × (nkeys + 1) ostr, checked */
			size_t len;
		} values;
		struct { char *nspname; char *relname; } relname;   /* 5: NULLs: none */
		struct { SourceIndex *idx; int n; } indexes;        /* 6 */
		bool published;                                     /* 7 */
	} u;
} FeedAnswer;

/*
 * Decodes an A record whole: false with a message in err ("malformed
 * catalog answer record at offset 120: unknown question 9 at body byte 0")
 * when it is not exactly one of the seven; *out is then empty. Strings
 * that become C strings (names, a type's name, a constant) may not hold a
 * NUL byte; neither may question 4's values; an attnum is never negative.
 */
bool feed_read_answer(const FeedRecord *rec, FeedAnswer *out, ErrBuf *err) PGM_MUST_CHECK;
void feed_answer_clear(FeedAnswer *a);

/* Question 4's rows, handed to fn one by one as Catalog.column_values
 * does (values not NUL-terminated: lens says how long); false when fn
 * stopped. */
bool feed_answer_values_each(const FeedAnswer *a, CatalogRowFn fn, void *arg);

#endif

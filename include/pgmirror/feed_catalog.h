/*
 * feed_catalog.h: the catalog answers of a feed (docs/feed.md, "Catalog
 * answers"), on both sides. On a hub, a tap: a Catalog that asks the
 * source's (the look-ups) and writes each answer its applier gets as an A
 * record of the open group. On a device, the answers read from the feed,
 * kept under their questions' keys, and a Catalog that answers from them:
 * its applier asks what the hub's asked and is told the same, with no
 * source to reach.
 */
#ifndef PGMIRROR_FEED_CATALOG_H
#define PGMIRROR_FEED_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "pgmirror/catalog.h"
#include "pgmirror/feed_answer.h"
#include "pgmirror/feed_writer.h"

typedef struct FeedTap FeedTap;

/* A tap on inner (which must outlive it) that writes into w (NULL: not
 * yet, every answer passes through as it is; feed_tap_set_writer()). */
FeedTap *feed_tap_new(const Catalog *inner, FeedWriter *w);
void feed_tap_set_writer(FeedTap *t, FeedWriter *w);
void feed_tap_free(FeedTap *t);
/* Its Catalog (the same callbacks inner has, each also writing). */
const Catalog *feed_tap_catalog(FeedTap *t);

typedef struct FeedAnswers FeedAnswers;

FeedAnswers *feed_answers_new(void);
void feed_answers_free(FeedAnswers *s);
/* Keeps the answer of A record rec (a newer one replaces an older one of
 * the same question); false with err set when rec is damaged. */
bool feed_answers_add(FeedAnswers *s, const FeedRecord *rec, ErrBuf *err) PGM_MUST_CHECK;
/* A Catalog that answers from s; a question s has no answer for is an
 * error that says so (the feed is damaged, or of another pgmirror). */
const Catalog *feed_answers_catalog(FeedAnswers *s);

#endif

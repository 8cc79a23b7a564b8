/*
 * feed_check.c: a segment's contents checked whole
 * (include/pgmirror/feed_check.h). Above the record readers of
 * feed_format.c, feed_answer.c and feed_op.c, and the only file that
 * calls all three: what a record holds is read by the same code a
 * device's replay will run, so nothing passes here that replay refuses.
 */
#include "config.h"

#include <string.h>

#include "pgmirror/feed_answer.h"
#include "pgmirror/feed_check.h"
#include "pgmirror/feed_op.h"

/* The body of one record, read by its kind's reader (H, C and E the
 * reader has read already). */
static bool check_body(const FeedRecord *rec, ErrBuf *err)
{
	FeedMessage msg;
	FeedAnswer answer;
	FeedOp op;

	switch (rec->kind) {
	case FEED_RELATION:
	case FEED_MESSAGE:
		return feed_read_message(rec, &msg, err);
	case FEED_ANSWER:
		if (!feed_read_answer(rec, &answer, err))
			return false;
		feed_answer_clear(&answer);
		return true;
	case FEED_OP:
		if (!feed_read_op(rec, &op, err))
			return false;
		feed_op_clear(&op);
		return true;
	default:
		return true;
	}
}

bool feed_check_segment(const uint8_t *contents, size_t len, FeedSegmentInfo *out,
			ErrBuf *err)
{
	FeedReader r;
	FeedRecord rec;
	FeedNext next;

	memset(out, 0, sizeof *out);
	feed_reader_init(&r, contents, len);
	while ((next = feed_reader_next(&r, &rec)) == FEED_NEXT_RECORD) {
		if (!check_body(&rec, err))
			return false;
		out->nrecords++;
	}
	if (next == FEED_NEXT_ERROR) {
		errbuf_set(err, "%s", feed_reader_error(&r));
		return false;
	}
	out->header = r.header;
	out->end = r.end;
	return true;
}

/*
 * fuzz_feed.c: libFuzzer target for what a device reads of a feed
 * (docs/feed.md), linked against the real objects of libpgmirror.a: the
 * first byte selects, the rest is
 *
 *	even  a segment's decompressed contents: checked whole
 *	      (feed_check_segment()), then walked record by record with every
 *	      catalog answer and operation read, as a device would;
 *	odd   a manifest.json: parsed and checked (feed_manifest_parse()).
 *
 * Beyond what ASan and UBSan catch, the target traps when a failure leaves
 * no error text, or when the whole check and the walk disagree.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/feed_answer.h"
#include "pgmirror/feed_check.h"
#include "pgmirror/feed_format.h"
#include "pgmirror/feed_manifest.h"
#include "pgmirror/feed_op.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t size, bool sound)
{
	FeedReader r;
	FeedRecord rec;
	FeedNext next;
	ErrBuf err;
	bool ok = true;

	feed_reader_init(&r, data, size);
	while ((next = feed_reader_next(&r, &rec)) == FEED_NEXT_RECORD) {
		if (rec.kind == FEED_ANSWER) {
			FeedAnswer a;

			memset(&a, 0, sizeof(a));
			ok = feed_read_answer(&rec, &a, &err) && ok;
			feed_answer_clear(&a);
		} else if (rec.kind == FEED_OP) {
			FeedOp op;

			memset(&op, 0, sizeof(op));
			ok = feed_read_op(&rec, &op, &err) && ok;
			feed_op_clear(&op);
		}
	}
	if (next == FEED_NEXT_ERROR && feed_reader_error(&r)[0] == '\0')
		abort(); /* a failure says why */
	if (sound && (next != FEED_NEXT_DONE || !ok))
		abort(); /* the whole check passed what the walk refuses */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ErrBuf err = {{0}};

	if (size < 1)
		return 0;
	if (data[0] % 2 == 0) {
		FeedSegmentInfo info;
		bool sound = feed_check_segment(data + 1, size - 1, &info, &err);

		if (!sound && err.text[0] == '\0')
			abort();
		walk(data + 1, size - 1, sound);
	} else {
		FeedManifest m;
		char *text = malloc(size);

		if (text == NULL)
			return 0;

		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		if (!feed_manifest_parse(text, size - 1, &m, &err) && err.text[0] == '\0')
			abort();
		feed_manifest_free(&m);
		free(text);
	}
	return 0;
}

/*
 * device_replay.c: a segment's groups applied to a device's mirror
 * (device.h; docs/feed.md, "A segment").
 *
 * The records are checked whole first (feed_check_segment()). Then each
 * M record of a group the device has not applied goes to a pgoutput
 * decoder and the applier, just as a message from PostgreSQL would; the
 * applier's catalog answers from the A records read so far. The newest
 * Relation and Type message of every relation is kept (from R records and
 * from every M record, applied or skipped), and handed to the applier
 * before the first change of a relation it has not been handed since the
 * replay began, as pgoutput does on a new connection: a second decoder
 * reads it, so that the change decoded first stays intact. Whole groups
 * are committed together, as the stream groups source transactions: at a
 * group's C, once the groups since the last commit hold BATCH_TXNS source
 * transactions or took BATCH_USECS, and at the segment's end, the
 * applier's group is committed with the last group's position, and the
 * mirror's before_commit stores that group's number in the same
 * transaction. (A hub that follows a trickle of small transactions
 * commits, and so ends, a group for nearly each one: a commit per group
 * made a device's catch-up wait for a sync per source transaction.)
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pgmirror/apply.h"
#include "pgmirror/feed_catalog.h"
#include "pgmirror/feed_check.h"
#include "pgmirror/feed_format.h"
#include "pgmirror/pgoutput.h"
#include "device.h"

/* A commit once the whole groups applied since the last one hold this
 * many source transactions, or took this long (stream.c's bounds). */
#define BATCH_TXNS 5000
#define BATCH_USECS INT64_C(500000)

/* The newest Relation or Type message of a relation or type. */
typedef struct Kept {
	uint32_t oid;
	bool type;                /* a Type message; else a Relation message */
	uint8_t *data;
	size_t len;
	bool handed;              /* the applier has this one */
} Kept;

struct Replay {
	Mirror *m;
	Applier *a;
	FeedAnswers *answers;
	PgoDecoder *dec;          /* the M records' */
	PgoDecoder *rdec;         /* the kept messages' */
	int proto;
	Kept *kept;
	size_t nkept;
	uint64_t group;           /* the last group committed */
	Lsn lsn;                  /* the position after it */
	uint64_t batch_group;     /* the last whole group applied since (0: none) */
	Lsn batch_lsn;            /* the position after it */
	int64_t batch_started;    /* when the groups since the last commit began */
	uint64_t storing;         /* the group whose commit runs (0: none) */
	bool stored;              /* before_commit stored it */
	Lsn endpos;
	ErrBuf err;
};

const char *replay_error(const Replay *r)
{
	return r->err.text;
}

uint64_t replay_group(const Replay *r)
{
	return r->group;
}

Lsn replay_lsn(const Replay *r)
{
	return r->lsn;
}

static bool on_before_commit(void *ctx, Mirror *m, ErrBuf *err)
{
	Replay *r = ctx;

	if (r->storing == 0)
		return true;
	if (!mirror_feed_set_group(m, r->storing)) {
		errbuf_set(err, "%s", mirror_error(m));
		return false;
	}
	r->stored = true;
	return true;
}

Replay *replay_new(Mirror *m, Lsn lsn, uint64_t group, Lsn endpos)
{
	Replay *r = xcalloc(1, sizeof(*r));
	MirrorCommitHooks hooks = {on_before_commit, NULL, NULL, r};

	r->m = m;
	r->answers = feed_answers_new();
	r->a = apply_new(m, lsn, feed_answers_catalog(r->answers));
	r->group = group;
	r->lsn = lsn;
	r->endpos = endpos;
	mirror_set_commit_hooks(m, &hooks);
	return r;
}

void replay_free(Replay *r)
{
	if (r == NULL)
		return;
	mirror_rollback(r->m);
	mirror_set_commit_hooks(r->m, NULL);
	apply_free(r->a);
	feed_answers_free(r->answers);
	pgoutput_decoder_free(r->dec);
	pgoutput_decoder_free(r->rdec);
	for (size_t i = 0; i < r->nkept; i++)
		free(r->kept[i].data);
	free(r->kept);
	free(r);
}

/* Keeps msg (data, len: its bytes) when it is a Relation or Type message;
 * handed: the applier takes it now. */
static void keep(Replay *r, const PgoMessage *msg, const uint8_t *data, size_t len, bool handed)
{
	bool type = msg->type == PGO_TYPE;
	uint32_t oid;
	size_t i;

	if (msg->type != PGO_RELATION && !type)
		return;
	oid = type ? msg->u.type.oid : msg->u.relation.oid;
	for (i = 0; i < r->nkept; i++)
		if (r->kept[i].oid == oid && r->kept[i].type == type)
			break;
	if (i < r->nkept && r->kept[i].len == len && memcmp(r->kept[i].data, data, len) == 0) {
		r->kept[i].handed = r->kept[i].handed || handed;
		return;
	}
	if (i == r->nkept) {
		r->kept = xreallocarray(r->kept, r->nkept + 1, sizeof(Kept));
		r->nkept++;
		r->kept[i].data = NULL;
	}
	free(r->kept[i].data);
	r->kept[i].oid = oid;
	r->kept[i].type = type;
	r->kept[i].data = xmalloc(len);
	memcpy(r->kept[i].data, data, len);
	r->kept[i].len = len;
	r->kept[i].handed = handed;
}

/* Hands the applier kept message k; false with the error set. */
static bool hand(Replay *r, Kept *k)
{
	PgoMessage msg;

	if (!pgoutput_decode(r->rdec, k->data, k->len, &msg)) {
		errbuf_set(&r->err, "%s", pgoutput_error(r->rdec));
		return false;
	}
	if (!apply_message(r->a, &msg)) {
		errbuf_set(&r->err, "%s", apply_error(r->a));
		return false;
	}
	k->handed = true;
	return true;
}

/* Before a change of relation relid: the types and the relation the
 * applier has not been handed yet. */
static bool hand_relation(Replay *r, uint32_t relid)
{
	for (size_t i = 0; i < r->nkept; i++) {
		Kept *k = &r->kept[i];

		if (!k->type && k->oid == relid && !k->handed) {
			for (size_t j = 0; j < r->nkept; j++)
				if (r->kept[j].type && !r->kept[j].handed && !hand(r, &r->kept[j]))
					return false;
			return hand(r, k);
		}
	}
	return true;
}

static bool hand_relations_of(Replay *r, const PgoMessage *msg)
{
	switch (msg->type) {
	case PGO_INSERT:
		return hand_relation(r, msg->u.insert.relid);
	case PGO_UPDATE:
		return hand_relation(r, msg->u.update.relid);
	case PGO_DELETE:
		return hand_relation(r, msg->u.delete.relid);
	case PGO_TRUNCATE:
		for (uint32_t i = 0; i < msg->u.truncate.nrelids; i++)
			if (!hand_relation(r, msg->u.truncate.relids[i]))
				return false;
		return true;
	default:
		return true;
	}
}

/* The decoders of a segment whose messages are of protocol proto. */
static void decoders_for(Replay *r, int proto)
{
	if (r->dec != NULL && r->proto == proto)
		return;
	pgoutput_decoder_free(r->dec);
	pgoutput_decoder_free(r->rdec);
	r->dec = pgoutput_decoder_new(proto, false);
	r->rdec = pgoutput_decoder_new(proto, false);
	r->proto = proto;
}

/* An M record of a group to apply, or (skip) of one applied already. */
static bool take_message(Replay *r, const FeedMessage *fm, bool skip, bool *reached)
{
	PgoMessage msg;

	if (!pgoutput_decode(r->dec, fm->data, fm->len, &msg)) {
		errbuf_set(&r->err, "%s", pgoutput_error(r->dec));
		return false;
	}
	keep(r, &msg, fm->data, fm->len, !skip);
	if (skip)
		return true;
	if (msg.type == PGO_BEGIN && r->endpos != LSN_INVALID &&
	    msg.u.begin.final_lsn > r->endpos) {
		*reached = true; /* it commits past the end position */
		return true;
	}
	if (!hand_relations_of(r, &msg))
		return false;
	if (!apply_message(r->a, &msg)) {
		errbuf_set(&r->err, "%s", apply_error(r->a));
		return false;
	}
	return true;
}

/* What the applier holds committed, with the position and number of the
 * last whole group in it (none: only its whole transactions, as at an end
 * position within a group; the next run reads that group again and skips
 * them by position). */
static bool commit_groups(Replay *r)
{
	bool ok = true;

	r->storing = r->batch_group;
	r->stored = false;
	if (r->batch_group != 0 && r->batch_lsn > apply_applied_lsn(r->a))
		ok = apply_advance(r->a, r->batch_lsn);
	ok = ok && apply_flush(r->a);
	/* groups that changed nothing the applier commits: the number alone */
	if (ok && r->batch_group != 0 && !r->stored)
		ok = mirror_begin(r->m) && mirror_commit(r->m);
	if (!ok) {
		errbuf_set(&r->err, "%s", apply_error(r->a)[0] != '\0' ? apply_error(r->a)
			   : mirror_error(r->m));
		mirror_rollback(r->m);
	}
	r->storing = 0;
	if (ok && r->batch_group != 0) {
		r->group = r->batch_group;
		r->lsn = r->batch_lsn;
	}
	r->batch_group = 0;
	r->batch_started = mono_usecs();
	return ok;
}

/* A group's end: it joins the groups to commit, committed when due. */
static bool end_group(Replay *r, const FeedGroupEnd *c)
{
	r->batch_group = c->group;
	r->batch_lsn = c->confirmed_lsn;
	if (apply_pending(r->a) < BATCH_TXNS && mono_usecs() - r->batch_started < BATCH_USECS)
		return true;
	return commit_groups(r);
}

bool replay_segment(Replay *r, const char *name, const uint8_t *contents, size_t len,
		    bool *reached)
{
	FeedSegmentInfo info;
	FeedReader rd;
	FeedRecord rec;
	FeedNext next;
	uint64_t group;
	ErrBuf err;
	bool ok = true;

	*reached = false;
	if (!feed_check_segment(contents, len, &info, &err)) {
		errbuf_set(&r->err, "feed segment \"%s\" is damaged: %s", name, err.text);
		return false;
	}
	decoders_for(r, info.header.proto_version);
	if (info.header.binary)
		apply_set_binary(r->a, (int)info.header.server_version);
	feed_reader_init(&rd, contents, len);
	group = info.header.first_group;
	r->batch_group = 0;
	r->batch_started = mono_usecs();
	while (ok && !*reached && (next = feed_reader_next(&rd, &rec)) == FEED_NEXT_RECORD) {
		FeedMessage fm;
		FeedGroupEnd c;

		switch (rec.kind) {
		case FEED_RELATION:
			if ((ok = feed_read_message(&rec, &fm, &err))) {
				PgoMessage msg;

				ok = pgoutput_decode(r->rdec, fm.data, fm.len, &msg);
				if (ok)
					keep(r, &msg, fm.data, fm.len, false);
				else
					errbuf_set(&err, "%s", pgoutput_error(r->rdec));
			}
			break;
		case FEED_ANSWER:
			ok = feed_answers_add(r->answers, &rec, &err);
			break;
		case FEED_MESSAGE:
			ok = feed_read_message(&rec, &fm, &err);
			if (ok && !take_message(r, &fm, group <= r->group, reached)) {
				errbuf_set(&err, "%s", r->err.text);
				ok = false;
			}
			break;
		case FEED_OP:
			errbuf_set(&err, "an operation this pgmirror does not know (record at offset "
				   "%zu): a feed of a later pgmirror", rec.offset);
			ok = false;
			break;
		case FEED_GROUP_END:
			ok = feed_read_group_end(&rec, &c, &err);
			if (ok && c.group > r->group && !end_group(r, &c)) {
				errbuf_set(&err, "%s", r->err.text);
				ok = false;
			}
			group = c.group + 1;
			break;
		default:
			break;
		}
	}
	if (ok && !*reached && next == FEED_NEXT_ERROR) {
		errbuf_set(&err, "%s", feed_reader_error(&rd));
		ok = false;
	}
	/* the groups applied since the last commit, and at an end position
	 * within a group, that group's whole transactions before it */
	if (ok && !commit_groups(r)) {
		errbuf_set(&err, "%s", r->err.text);
		ok = false;
	}
	if (!ok) {
		mirror_rollback(r->m);
		errbuf_set(&r->err, "could not apply feed segment \"%s\": %s", name, err.text);
	}
	return ok;
}

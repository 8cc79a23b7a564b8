/*
 * test_mirror_feed.c: the mirror's side of a feed. The commit hooks
 * (mirror_set_commit_hooks): before_commit runs inside the transaction
 * (what it writes commits with it; false rolls all back), committed after
 * a commit, rolled_back after a rollback, and neither for a read. A
 * snapshot (mirror_snapshot_to) is the file as it stood, from one read
 * transaction, and is refused inside a transaction.
 */
#include "config.h"

#include <sys/stat.h>

#include "mirror_fixture.h"

typedef struct Heard {
	int before, committed, rolled_back;
	bool fail;        /* before_commit says no */
} Heard;

static bool on_before(void *ctx, Mirror *m, ErrBuf *err)
{
	Heard *h = ctx;

	(void)m;
	h->before++;
	if (h->fail) {
		errbuf_set(err, "the feed could not be synced");
		return false;
	}
	return true;
}

static void on_committed(void *ctx)
{
	((Heard *)ctx)->committed++;
}

static void on_rolled_back(void *ctx)
{
	((Heard *)ctx)->rolled_back++;
}

static int setup(void **state)
{
	*state = fixture_setup("mirror_feed");
	return 0;
}

static void hook(Fixture *f, Heard *h)
{
	MirrorCommitHooks hooks = {on_before, on_committed, on_rolled_back, h};

	mirror_set_commit_hooks(f->m, &hooks);
}

static void test_hooks(void **state)
{
	Fixture *f = *state;
	Heard h = {0};

	hook(f, &h);
	assert_true(mirror_begin(f->m));
	assert_true(mirror_commit(f->m));
	assert_int_equal(h.before, 1);
	assert_int_equal(h.committed, 1);
	assert_int_equal(h.rolled_back, 0);

	assert_true(mirror_begin(f->m));
	mirror_rollback(f->m);
	assert_int_equal(h.before, 1);
	assert_int_equal(h.rolled_back, 1);

	/* a read transaction is not the feed's business */
	assert_true(mirror_begin_read(f->m));
	mirror_rollback(f->m);
	assert_int_equal(h.rolled_back, 1);

	/* a hook that fails rolls the transaction back: the commit fails */
	h.fail = true;
	assert_true(mirror_begin(f->m));
	assert_false(mirror_commit(f->m));
	assert_string_equal(mirror_error(f->m), "the feed could not be synced");
	assert_int_equal(h.before, 2);
	assert_int_equal(h.committed, 1);
	assert_int_equal(h.rolled_back, 2);

	mirror_set_commit_hooks(f->m, NULL);
	assert_true(mirror_begin(f->m));
	assert_true(mirror_commit(f->m));
	assert_int_equal(h.before, 2);
	assert_int_equal(h.committed, 1);
}

/* A snapshot holds what was committed, and is a mirror file. */
static void test_snapshot(void **state)
{
	Fixture *f = *state;
	char snap[128];
	Mirror *s = NULL;
	char *err = NULL;
	int64_t n = -1;
	struct stat st;

	fixture_column(&f->cols[0], "id", OID_INT4, "int4", true, 1);
	fixture_table(&f->def, f->cols, 1, 'd');
	assert_true(mirror_begin(f->m));
	mirror_table_free(fixture_sync(f->m, &f->def));
	assert_true(mirror_commit(f->m));
	fixture_exec(f->path, "INSERT INTO t VALUES (1), (2), (3)");

	snprintf(snap, sizeof(snap), "%s/snap.db", f->dir);
	assert_true(mirror_begin(f->m));
	assert_false(mirror_snapshot_to(f->m, snap));
	mirror_rollback(f->m);
	assert_int_equal(stat(snap, &st), -1);

	assert_true(mirror_snapshot_to(f->m, snap));
	/* a snapshot is never written over */
	assert_false(mirror_snapshot_to(f->m, snap));
	assert_int_equal(mirror_open(snap, MIRROR_WRITE, &s, &err), MIRROR_OPEN_OK);
	assert_true(mirror_count_rows(s, "t", &n));
	assert_int_equal(n, 3);
	mirror_close(s);
}

/* pgmirror_feed's row: none at first; written whole, its group set in a
 * transaction; a damaged value is refused, naming the column. */
static void test_feed_state(void **state)
{
	Fixture *f = *state;
	MirrorFeedState st = {0}, got = {0};
	Lsn lsn;

	assert_true(mirror_feed_read(f->m, &got));
	assert_false(got.present);
	st.hub = true;
	st.location = "/srv/feed";
	memcpy(st.epoch, "0123456789abcdef0123456789abcdef", 33);
	st.group = 7;
	st.seq = 3;
	assert_true(mirror_begin(f->m));
	assert_true(mirror_feed_write(f->m, &st));
	assert_true(mirror_feed_set_group(f->m, 8));
	assert_true(mirror_commit(f->m));
	assert_true(mirror_feed_read(f->m, &got));
	assert_true(got.present && got.hub);
	assert_string_equal(got.location, "/srv/feed");
	assert_string_equal(got.epoch, st.epoch);
	assert_int_equal(got.group, 8);
	assert_int_equal(got.seq, 3);
	assert_int_equal(got.end_group, 0);
	assert_int_equal(got.end_lsn, LSN_INVALID);
	mirror_feed_state_clear(&got);

	fixture_exec(f->path, "UPDATE pgmirror_feed SET feed_group = -1");
	assert_false(mirror_feed_read(f->m, &got));
	assert_non_null(strstr(mirror_error(f->m), "damaged pgmirror_feed row (feed_group)"));
	fixture_exec(f->path, "UPDATE pgmirror_feed SET feed_group = 1, epoch = 'x'");
	assert_false(mirror_feed_read(f->m, &got));
	assert_non_null(strstr(mirror_error(f->m), "(epoch)"));

	/* no state row yet: no position */
	assert_false(mirror_read_position(f->m, &lsn));
}

/* What a transaction changed, as a hub tells a group from a step of its
 * own: the run's own tables are not content; a table made, and rows of a
 * mirror table, are. */
static void test_changed_content(void **state)
{
	Fixture *f = *state;
	Heard h = {0};
	MirrorTable *t;
	Value v = {.kind = VAL_INT, .i = 1};
	bool changed = true;
	MirrorState st = {.slot = "s", .publications = "p", .system_identifier = "1",
			  .database = "d"};

	hook(f, &h);
	assert_true(mirror_begin(f->m));
	assert_true(mirror_write_state(f->m, &st));
	assert_true(mirror_txn_changed_content(f->m, &changed));
	assert_false(changed);
	mirror_rollback(f->m);

	fixture_column(&f->cols[0], "id", OID_INT4, "int4", true, 1);
	fixture_table(&f->def, f->cols, 1, 'd');
	assert_true(mirror_begin(f->m));
	t = fixture_sync(f->m, &f->def);
	assert_true(mirror_txn_changed_content(f->m, &changed));
	assert_true(changed);
	assert_true(mirror_commit(f->m));

	assert_true(mirror_begin(f->m));
	assert_true(mirror_txn_changed_content(f->m, &changed));
	assert_false(changed);
	assert_true(mirror_table_insert(t, &v));
	assert_true(mirror_txn_changed_content(f->m, &changed));
	assert_true(changed);
	assert_true(mirror_commit(f->m));
	mirror_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_snapshot, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_feed_state, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_changed_content, setup, fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * mirror_writeback.c: the disk's work of a big transaction, started while
 * the transaction is written rather than at its commit.
 *
 * SQLite writes a transaction's pages into the WAL through the kernel's
 * page cache, and the kernel writes dirty pages back on its own only after
 * 30 s or once they fill a tenth of memory: so nothing of a big transaction
 * reaches the disk until the commit's fdatasync() of the WAL, and the
 * checkpoint that follows copies the pages into the database file and
 * waits for a second fdatasync(). Both write the whole transaction while
 * pgmirror waits: for the copy of a million rows (80 MB), 135 ms of a
 * second here, and seconds on a device's SD card.
 *
 * Once a transaction has written about WRITEBACK_AFTER rows (counted by
 * its row statements, and by a long statement's progress calls: a
 * rebuild's), a helper thread asks the kernel every WRITEBACK_MS to start
 * writing what is dirty in the WAL and in the database file
 * (sync_file_range() with SYNC_FILE_RANGE_WRITE: it starts the writes and
 * waits for none). The disk then works while rows are
 * inserted and while the checkpoint copies them, and the commit's syncs
 * find most pages written. The helper ends when the transaction does,
 * after the commit's checkpoint. Durability is unchanged: it comes from
 * SQLite's own syncs. Where sync_file_range() does not exist, nothing is
 * done.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mirror_internal.h"

#define WRITEBACK_AFTER 10000 /* rows written in one transaction */
#define WRITEBACK_MS 5

struct MirrorWriteback {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;     /* stop was set */
	bool stop;
	int db_fd;               /* the mirror's lock_fd, borrowed */
	int wal_fd;              /* the -wal file, or -1 */
	int pushes;              /* times the kernel was asked */
};

#ifdef HAVE_SYNC_FILE_RANGE

static void push(int fd)
{
	/* a hint: a failure (EIO comes back from the sync) changes nothing */
	if (fd >= 0)
		(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

static void *writeback_main(void *arg)
{
	MirrorWriteback *wb = arg;
	struct timespec at;

	pthread_mutex_lock(&wb->mu);
	while (!wb->stop) {
		pthread_mutex_unlock(&wb->mu);
		push(wb->wal_fd);
		push(wb->db_fd);
		pthread_mutex_lock(&wb->mu);
		wb->pushes++;
		at = mono_deadline(WRITEBACK_MS);
		while (!wb->stop && pthread_cond_timedwait(&wb->wake, &wb->mu, &at) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&wb->mu);
	return NULL;
}

static void writeback_free(MirrorWriteback *wb)
{
	if (wb->wal_fd >= 0)
		close(wb->wal_fd);
	pthread_cond_destroy(&wb->wake);
	pthread_mutex_destroy(&wb->mu);
	free(wb);
}

static void writeback_start(Mirror *m)
{
	MirrorWriteback *wb = xcalloc(1, sizeof(*wb));
	pthread_condattr_t attr;
	char *wal;
	int rc;

	pthread_mutex_init(&wb->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&wb->wake, &attr);
	pthread_condattr_destroy(&attr);
	wb->db_fd = m->lock_fd;
	/* SQLite's own name of the WAL: the database's full path and "-wal" */
	wal = xasprintf("%s-wal", sqlite3_db_filename(m->db, "main"));
	wb->wal_fd = open(wal, O_RDONLY | O_CLOEXEC);
	free(wal);
	rc = thread_start_quiet(&wb->thread, writeback_main, wb);
	if (rc != 0) {
		/* the syncs at the commit write it all, as without the helper */
		log_debug("could not start the thread that writes mirror \"%s\" ahead: %s", m->path,
			  strerror(rc));
		writeback_free(wb);
		return;
	}
	m->wb = wb;
}

#else

static void writeback_start(Mirror *m)
{
	(void)m;
}

#endif

void mirror_writeback_note(Mirror *m, int rows)
{
	if (!m->in_txn || m->wb_started)
		return;
	m->txn_rows += rows;
	if (m->txn_rows >= WRITEBACK_AFTER) {
		m->wb_started = true; /* or tried: once a transaction */
		writeback_start(m);
	}
}

void mirror_writeback_end(Mirror *m)
{
	MirrorWriteback *wb = m->wb;

	m->txn_rows = 0;
	m->wb_started = false;
	if (wb == NULL)
		return;
	m->wb = NULL;
	pthread_mutex_lock(&wb->mu);
	wb->stop = true;
	pthread_cond_signal(&wb->wake);
	pthread_mutex_unlock(&wb->mu);
	pthread_join(wb->thread, NULL);
	log_debug("mirror \"%s\": the disk was asked %d times to start writing the transaction's "
		  "pages before its commit", m->path, wb->pushes);
	writeback_free(wb);
}

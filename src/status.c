/*
 * status.c: --status, the mirror's state read from the file alone.
 *
 * The output is one "key: value" per line, stable for scripts; each table
 * is a line "table: ROWS NAME" (the name last, as it may hold spaces).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "pgmirror/mirror.h"
#include "pgmirror/replicate.h" /* the exit codes */
#include "pgmirror/status.h"

int status_print(const char *mirror_path)
{
	Mirror *m = NULL;
	MirrorState st = {0};
	char *err = NULL, **names = NULL, lsn[LSN_TEXT_SIZE];
	int n = 0, rc = EXIT_ERROR;
	struct stat sb;
	MirrorOpenResult r;

	if (stat(mirror_path, &sb) != 0) {
		log_error("mirror \"%s\" does not exist; give the path of an existing mirror file",
			  mirror_path);
		return EXIT_ERROR;
	}
	r = mirror_open(mirror_path, MIRROR_READ, &m, &err);
	if (r != MIRROR_OPEN_OK) {
		log_error("%s", err);
		free(err);
		return r == MIRROR_OPEN_LOCKED ? EXIT_IN_USE : EXIT_ERROR;
	}
	if (!mirror_read_state(m, &st) || !mirror_list_tables(m, &names, &n)) {
		log_error("%s", mirror_error(m));
		goto done;
	}
	if (!st.present) {
		log_error("mirror \"%s\" has no state yet: its first run did not get far",
			  mirror_path);
		goto done;
	}
	printf("mirror: %s\n", mirror_path);
	printf("slot: %s\n", st.slot);
	printf("publications: %s\n", st.publications);
	printf("system_identifier: %s\n", st.system_identifier);
	printf("database: %s\n", st.database);
	printf("confirmed_lsn: %s\n", lsn_format(st.confirmed_lsn, lsn));
	printf("last_commit_time: %s\n", st.last_commit_time ? st.last_commit_time : "");
	printf("initial_copy: %s\n", st.initial_copy_done ? "done" : "incomplete");
	printf("tables: %d\n", n);
	for (int i = 0; i < n; i++) {
		int64_t count;

		if (!mirror_count_rows(m, names[i], &count)) {
			log_error("%s", mirror_error(m));
			goto done;
		}
		printf("table: %" PRId64 " %s\n", count, names[i]);
	}
	rc = EXIT_OK;
done:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	mirror_state_clear(&st);
	mirror_close(m);
	return rc;
}

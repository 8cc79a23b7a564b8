/*
 * apply_common.c: the small steps every applier file takes, below them
 * all (apply.c on top, apply_schema.c, apply_rename.c): opening the
 * group's SQLite transaction, putting the user's objects back after a
 * table was made again, noting that a catalog question failed because
 * the source was lost, and setting aside a table that can no longer be
 * held, to wait (invariant 14), and noting the changes of one that waits
 * after its copy met a value (src/run/waiting.c copies it again then).
 */
#include "config.h"

#include <stdlib.h>

#include "apply_internal.h"
#include "pgmirror/mirror_waiting.h"

bool apply_open_group(Applier *a)
{
	if (a->group_open)
		return true;
	if (!mirror_begin(a->m)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	a->group_open = true;
	return true;
}

bool apply_restore_user_objects(Applier *a, MirrorUserObjects *u, const char *what)
{
	char **dropped;
	int n;
	bool ok = mirror_user_objects_restore(a->m, u, &dropped, &n);

	mirror_user_objects_free(u);
	if (!ok) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	for (int i = 0; i < n; i++)
		log_warning("dropped the user's %s from the mirror: it no longer applies after %s",
			    dropped[i], what);
	strv_free(dropped, n);
	return true;
}

void apply_catalog_failed(Applier *a)
{
	a->source_lost = a->catalog->lost != NULL && a->catalog->lost(a->catalog->ctx);
}

bool apply_wait_table(Applier *a, RelEntry *r, const char *why)
{
	a->err.text[0] = '\0';
	if (!apply_open_group(a) || !mirror_table_drop(a->m, r->oid) ||
	    !mirror_waiting_set(a->m, r->oid, r->def.source_schema, r->def.source_table, why,
				NULL)) {
		if (a->err.text[0] == '\0')
			errbuf_set(&a->err, "could not set table \"%s\" aside to wait: %s",
				   r->display, mirror_error(a->m));
		return false;
	}
	log_warning("source table \"%s\" waits: %s; its mirror table is removed, its changes "
		    "are skipped, and it is copied again once it can be taken (tried at every "
		    "start and every check)", r->display, why);
	mirror_table_free(r->table);
	r->table = NULL;
	r->in_mirror = false;
	r->waiting = true;
	r->watch_lsn = LSN_INVALID; /* a copy is tried at the next check */
	r->sync_known = true;
	return true;
}

bool apply_watch_waiting(Applier *a, RelEntry *r)
{
	MirrorWaitCopy c;

	if (!mirror_waiting_copy(a->m, r->oid, &r->waiting, &c)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	if (c.shape != NULL && !c.changed)
		r->watch_lsn = c.lsn;
	mirror_wait_copy_clear(&c);
	return true;
}

bool apply_note_waiting_change(Applier *a, RelEntry *r)
{
	if (!apply_open_group(a) || !mirror_waiting_note_change(a->m, r->oid)) {
		errbuf_set(&a->err, "could not note a change of waiting table \"%s\": %s",
			  r->display, mirror_error(a->m));
		return false;
	}
	log_debug("source table \"%s\", which waits after its copy met a value the mirror "
		  "cannot store, changed: it is copied again at the next check", r->display);
	r->watch_lsn = LSN_INVALID;
	a->waiting_changed = true;
	return true;
}

char *apply_start_over_hint(Applier *a)
{
	char *cmd = a->command != NULL ? a->command(a->command_ctx, "--drop-slot")
				       : xstrdup("pgmirror --drop-slot");
	char *hint = xasprintf("; to start over: %s, then remove the mirror file and run "
			       "again", cmd);

	free(cmd);
	return hint;
}

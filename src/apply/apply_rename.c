/*
 * apply_rename.c: in the stream, a mirror table follows its source
 * table's renames and schema moves. A mirror table belongs to a source
 * relation OID; the first change after a Relation message makes the table
 * match it (rel_sync), and before its columns are planned this gives the
 * table its name, in the same SQLite transaction as that change.
 *
 * The stream replays history: a Relation message names the table as it
 * was called when the change was made, and the start (renames_at_start())
 * may have given the table a later name already. So when the message's
 * name is not the mirror table's, the source's catalog says what the
 * table is called now, and that name is taken: the mirror never goes back
 * to an older name while it catches up.
 *
 * The new name may be held by another mirror table: one whose source
 * table was renamed too, though its Relation message has not come yet
 * (then it moves to the name its source table has now, and so on along a
 * chain; names that go round, as in a swap, move together through
 * temporary names, mirror_tables_rename()), or one whose source table is
 * gone (dropped: its mirror table is removed, as the next start would). A
 * holder whose source table is still called so is a real clash, refused
 * as before.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apply_internal.h"
#include "pgmirror/mirror_stage.h"
#include "pgmirror/naming.h"

/* One table of the chain of renames. */
typedef struct Move {
	uint32_t oid;
	char *old;           /* the SQLite name it had */
	char *name;          /* the new SQLite name */
	char *nspname;       /* the source's names now */
	char *relname;
} Move;

/* Frees the handle (and so the statements) of the relation of oid: they
 * name its old table. Its next change makes a new one. */
static void forget_table(Applier *a, uint32_t oid)
{
	for (size_t i = 0; i < a->nrels_cap; i++) {
		if (a->rels[i].oid == oid && a->rels[i].table != NULL) {
			mirror_table_free(a->rels[i].table);
			a->rels[i].table = NULL;
		}
	}
}

/* What relation oid is called on the source now (NULLs: no such relation,
 * or no catalog to ask). */
static bool name_now(Applier *a, uint32_t oid, char **nspname, char **relname)
{
	*nspname = *relname = NULL;
	if (a->catalog->relation_name == NULL)
		return true;
	if (!a->catalog->relation_name(a->catalog->ctx, oid, nspname, relname)) {
		apply_catalog_failed(a);
		errbuf_set(&a->err, "could not look up the name of the relation with OID %u on the "
			  "source: %s", oid, a->catalog->error(a->catalog->ctx));
		return false;
	}
	return true;
}

/* r's mirror names become nspname.relname's (owned by r). */
static void set_names(RelEntry *r, const char *nspname, const char *relname)
{
	free((char *)r->def.name);
	free((char *)r->def.source_schema);
	free((char *)r->def.source_table);
	r->def.name = naming_table(nspname, relname);
	r->def.source_schema = xstrdup(nspname);
	r->def.source_table = xstrdup(relname);
}

/* r's mirror names stay those the mirror has (owned by r). */
static void keep_names(RelEntry *r, const MirrorTableInfo *cur)
{
	free((char *)r->def.name);
	free((char *)r->def.source_schema);
	free((char *)r->def.source_table);
	r->def.name = xstrdup(cur->name);
	r->def.source_schema = xstrdup(cur->source_schema);
	r->def.source_table = xstrdup(cur->source_table);
}

static void moves_free(Move *mv, int n)
{
	for (int i = 0; i < n; i++) {
		free(mv[i].old);
		free(mv[i].name);
		free(mv[i].nspname);
		free(mv[i].relname);
	}
	free(mv);
}

static bool in_moves(const Move *mv, int n, uint32_t oid)
{
	for (int i = 0; i < n; i++)
		if (mv[i].oid == oid)
			return true;
	return false;
}

/* Whether holder h's source table is published now (asked only when its
 * name is what r is to take). */
static bool holder_published(Applier *a, const MirrorTableInfo *h, bool *published)
{
	*published = true;
	if (a->catalog->relation_published == NULL)
		return true;
	if (!a->catalog->relation_published(a->catalog->ctx, h->relation_oid, published)) {
		apply_catalog_failed(a);
		errbuf_set(&a->err, "could not ask whether table \"%s\" is still published on "
			  "the source: %s", h->name, a->catalog->error(a->catalog->ctx));
		return false;
	}
	return true;
}

/*
 * Makes name free for r: the chain of holders, each moved to its source
 * table's name now, appended to *mv; a holder whose source table is gone
 * in *drop. False, error set, on a real clash.
 */
static bool clear_name(Applier *a, RelEntry *r, Move **mv, int *nmv, uint32_t *drop)
{
	const char *target = r->def.name;
	bool ok = true;

	*drop = 0;
	while (ok) {
		MirrorTableInfo h;
		bool held;
		char *nsp = NULL, *rel = NULL, *why = NULL;
		Move *m;

		if (!mirror_table_by_name(a->m, target, &held, &h)) {
			errbuf_set(&a->err, "%s", mirror_error(a->m));
			return false;
		}
		if (!held || h.relation_oid == r->oid || in_moves(*mv, *nmv, h.relation_oid)) {
			mirror_table_info_clear(&h);
			return true; /* free, or freed by a move of the chain */
		}
		ok = name_now(a, h.relation_oid, &nsp, &rel);
		if (ok && nsp == NULL) {
			*drop = h.relation_oid;
			log_warning("mirror table \"%s\" is removed: its source table \"%s\".\"%s\" is "
				    "gone from the source, and \"%s\" takes its name", h.name,
				    h.source_schema, h.source_table, r->display);
			mirror_table_info_clear(&h);
			return true;
		}
		if (ok) {
			char *name = naming_table(nsp, rel);
			bool clash = strcasecmp(name, target) == 0, published = true;

			if (clash && !holder_published(a, &h, &published)) {
				free(name);
				name = NULL;
				ok = false;
			} else if (clash && !published) {
				/* it left the publications: the next check removes
				 * it, as a start does at once (renames.c) */
				*drop = h.relation_oid;
				log_warning("mirror table \"%s\" is removed: its source table "
					    "\"%s\".\"%s\" is no longer published, and \"%s\" "
					    "takes its name", h.name, nsp, rel, r->display);
				free(name);
				free(nsp);
				free(rel);
				mirror_table_info_clear(&h);
				return true;
			} else if (clash) {
				why = naming_clash(nsp, rel, r->def.source_schema, r->def.source_table);
				if (why == NULL) /* r's names are history: not its own now */
					why = xasprintf("mirror table \"%s\" has the name \"%s\".\"%s\" "
							"had once, and keeps it", h.name, nsp, rel);
			} else
				why = naming_name_problem(nsp, rel);
			if (why != NULL) {
				errbuf_set(&a->err, "could not mirror table \"%s\": %s", r->display, why);
				ok = false;
			}
			if (name != NULL) {
				*mv = xreallocarray(*mv, (size_t)*nmv + 1, sizeof(Move));
				m = &(*mv)[(*nmv)++];
				m->oid = h.relation_oid;
				m->old = xstrdup(h.name);
				m->name = name;
				m->nspname = nsp;
				m->relname = rel;
				target = m->name;
				nsp = rel = NULL;
			}
		}
		free(why);
		free(nsp);
		free(rel);
		mirror_table_info_clear(&h);
	}
	return false;
}

/*
 * A relation new to the mirror whose name another mirror table holds: the
 * stream may describe it by a name it had once (it was renamed since, and
 * is made under its name now), or it may be gone from the source while
 * the holder's source table is still called so. Then its changes are
 * history of a table the mirror never needs (r->gone): not applied.
 */
static bool new_table_name(Applier *a, RelEntry *r)
{
	MirrorTableInfo h;
	bool held, ok = false;
	char *nsp = NULL, *rel = NULL, *hnsp = NULL, *hrel = NULL, *why = NULL, *hname = NULL;

	if (!mirror_table_by_name(a->m, r->def.name, &held, &h)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	if (!held || h.relation_oid == r->oid) {
		ok = true;
		goto done;
	}
	if (!name_now(a, r->oid, &nsp, &rel))
		goto done;
	if (nsp != NULL) {
		why = naming_name_problem(nsp, rel);
		if (why != NULL) {
			errbuf_set(&a->err, "could not mirror table \"%s\": %s", r->display, why);
			goto done;
		}
		set_names(r, nsp, rel);
		ok = true;
		goto done;
	}
	if (!name_now(a, h.relation_oid, &hnsp, &hrel))
		goto done;
	hname = hnsp != NULL ? naming_table(hnsp, hrel) : NULL;
	if (hname != NULL && strcasecmp(hname, r->def.name) == 0) {
		r->gone = true;
		log_warning("changes to table \"%s\" are not mirrored: it is gone from the source, "
			    "and mirror table \"%s\" belongs to source table \"%s\".\"%s\" now",
			    r->display, h.name, hnsp, hrel);
	}
	ok = true;
done:
	mirror_table_info_clear(&h);
	free(nsp);
	free(rel);
	free(hnsp);
	free(hrel);
	free(hname);
	free(why);
	return ok;
}

/*
 * Whether r's mirror table is set aside to be copied again (*staged): its
 * copy goes into its staged table, a name of its own that nobody holds
 * and that does not follow the source's (mirror_stage.h).
 */
static bool stage_name(Applier *a, RelEntry *r, bool *staged)
{
	char *old = NULL, buf[32];

	if (!mirror_stage_of(a->m, r->oid, staged, &old)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	free(old);
	if (*staged) {
		free((char *)r->def.name);
		r->def.name = xstrdup(mirror_stage_name(r->oid, buf));
	}
	return true;
}

bool apply_follow_name(Applier *a, RelEntry *r)
{
	MirrorTableInfo cur;
	Move *mv = NULL;
	MirrorRename *rn = NULL;
	int nmv = 0;
	uint32_t drop = 0;
	bool found, staged, ok = false;

	if (!stage_name(a, r, &staged))
		return false;
	if (staged)
		return true;
	if (!mirror_table_by_oid(a->m, r->oid, &found, &cur)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		return false;
	}
	if (found && strcmp(cur.name, r->def.name) == 0)
		goto ok; /* the usual case: no question to ask */
	if (found) {
		char *nsp, *rel, *why;

		/* the source's name now, not the one the stream describes; a
		 * table gone from the source keeps its name (the next start
		 * removes it) */
		if (!name_now(a, r->oid, &nsp, &rel))
			goto done;
		if (nsp == NULL) {
			keep_names(r, &cur);
			goto ok;
		}
		why = naming_name_problem(nsp, rel);
		if (why == NULL)
			set_names(r, nsp, rel);
		free(nsp);
		free(rel);
		if (why != NULL) {
			/* renamed to a name the mirror cannot hold: it waits */
			bool waits = apply_wait_table(a, r, why);

			free(why);
			if (waits)
				goto ok;
			goto done;
		}
		if (strcmp(cur.name, r->def.name) == 0)
			goto ok;
		mv = xcalloc(1, sizeof(Move));
		mv[0] = (Move){r->oid, xstrdup(cur.name), xstrdup(r->def.name),
			       xstrdup(r->def.source_schema), xstrdup(r->def.source_table)};
		nmv = 1;
	}
	if (!found && !new_table_name(a, r))
		goto done;
	if (r->gone)
		goto ok;
	/* a new table, or one renamed: its name may be held */
	if (!clear_name(a, r, &mv, &nmv, &drop))
		goto done;
	if (drop != 0 && !mirror_table_drop(a->m, drop)) {
		errbuf_set(&a->err, "%s", mirror_error(a->m));
		goto done;
	}
	if (drop != 0)
		forget_table(a, drop);
	rn = xcalloc((size_t)nmv + 1, sizeof(MirrorRename));
	for (int i = 0; i < nmv; i++) {
		rn[i] = (MirrorRename){mv[i].oid, mv[i].name, mv[i].nspname, mv[i].relname};
		forget_table(a, mv[i].oid);
	}
	if (nmv > 0 && !mirror_tables_rename(a->m, rn, nmv)) {
		errbuf_set(&a->err, "could not rename the mirror table of \"%s\": %s", r->display,
			  mirror_error(a->m));
		goto done;
	}
	for (int i = 0; i < nmv; i++)
		log_info("mirror table \"%s\" is renamed \"%s\": its source table is \"%s\".\"%s\" "
			 "now", mv[i].old, mv[i].name, mv[i].nspname, mv[i].relname);
ok:
	ok = true;
done:
	mirror_table_info_clear(&cur);
	moves_free(mv, nmv);
	free(rn);
	return ok;
}

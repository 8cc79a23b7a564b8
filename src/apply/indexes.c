/*
 * indexes.c: the source's indexes on the mirror (see indexes.h). One
 * catalog question for all the tables asked about; each table's answer is
 * handed to the mirror, which adds and drops its own indexes to match and
 * leaves out an index on a column it does not have.
 */
#include "config.h"

#include <stdlib.h>

#include "pgmirror/indexes.h"

bool indexes_sync(Mirror *m, const Catalog *catalog, char *const *tables,
		  const uint32_t *relids, int n, uint32_t xid, ErrBuf *err, bool *lost)
{
	SourceIndex *idx = NULL;
	MirrorIndexDef *defs;
	int nidx = 0;
	bool ok = true;

	*lost = false;
	if (catalog == NULL || catalog->indexes == NULL || n == 0)
		return true;
	if (!catalog->indexes(catalog->ctx, relids, n, xid, &idx, &nidx)) {
		*lost = catalog->lost != NULL && catalog->lost(catalog->ctx);
		errbuf_set(err, "could not look up the indexes of the mirrored tables on the "
			   "source: %s", catalog->error(catalog->ctx));
		return false;
	}
	defs = xcalloc((size_t)nidx + 1, sizeof(MirrorIndexDef));
	for (int t = 0; ok && t < n; t++) {
		int nd = 0;

		for (int i = 0; i < nidx; i++) {
			if (idx[i].relid != relids[t])
				continue;
			defs[nd++] = (MirrorIndexDef){idx[i].oid, idx[i].name, idx[i].ncols,
						      (const char *const *)idx[i].cols, idx[i].desc};
		}
		ok = mirror_table_indexes(m, tables[t], defs, nd);
		if (!ok)
			errbuf_set(err, "could not make the indexes of mirror table \"%s\": %s",
				   tables[t], mirror_error(m));
	}
	free(defs);
	source_indexes_free(idx, nidx);
	return ok;
}

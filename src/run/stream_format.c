/*
 * stream_format.c: in which format the stream asks for values, text or
 * binary, and when a binary stream must go back to text.
 *
 * pgoutput sends values in binary (binary 'true', PostgreSQL 14+) when the
 * stream asks for it: fewer bytes for the server to send and for pgmirror
 * to read. A stream asks for it when every column of every published
 * table has a type pgmirror reads in binary (format_type_binary(): the
 * set the initial copy reads in binary), as the catalog has them when the
 * stream starts, unless --no-binary. The stream may still bring a column
 * of another type (added to a table, or in a table that joins): its
 * Relation message comes before any row with it, inside the transaction
 * that first changes that table after the change. Then nothing of that
 * transaction is applied: the round ends (STREAM_RECONNECT), its open
 * group is rolled back, and the next round streams in text from the
 * mirror's confirmed position (the last commit), so that each transaction
 * is applied once. Run.text_until keeps the next rounds in text until that
 * transaction is durable, whatever the catalog says by then (the column
 * may be gone again: a round in binary would meet the same Relation
 * message and switch for ever).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgmirror/catalog.h"
#include "pgmirror/values.h"
#include "replicate_internal.h"

/* Room for a type's name in a message (NAMEDATALEN 64, or "with OID n"). */
#define TYPE_TEXT_SIZE 80

/*
 * Whether a column of type type_oid (with typmod) is read in binary from a
 * source of server_version: the one place the stream asks, at its start
 * and at each Relation message.
 */
static bool format_type_binary(uint32_t type_oid, int32_t typmod, int server_version)
{
	ColumnType ct;

	return values_builtin_type(type_oid, typmod, &ct) &&
	       values_binary_supported(type_oid, ct, server_version);
}

/* A type's name for a message: built in, else as the source's catalog
 * (session, or the run's look-ups) calls it, else as the stream (apply)
 * does, which for a domain is its base type's name (pgoutput's Type
 * message), the last resort. */
static void type_label(Run *run, Applier *apply, Session *session, uint32_t type_oid,
		       char *buf, size_t size)
{
	const char *name = values_builtin_type_name(type_oid);
	SourceType st = {0};

	if (name == NULL && session != NULL && session_type_info(session, type_oid, &st))
		name = st.name;
	else if (name == NULL && session == NULL && run->catalog != NULL &&
		 run->catalog->type_info(run->catalog->ctx, type_oid, &st))
		name = st.name;
	if (name == NULL && apply != NULL)
		name = apply_type_sent_name(apply, type_oid);
	if (name != NULL)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "with OID %u", (unsigned)type_oid);
	source_type_clear(&st);
}

/*
 * The published columns' types, "oid:typmod,...": as the check on this
 * connection found them (pubcheck.c), else asked now (a first run, a
 * rebuild); NULL with the session's error when they cannot be read.
 * malloc'd.
 */
static char *published_types(Run *run, char *const *pubs, int npubs)
{
	PubFingerprint fp = {0};
	char *types;

	if (run->pub_types != NULL)
		return xstrdup(run->pub_types);
	if (!session_publication_fingerprint(run->session, pubs, npubs, &fp))
		return NULL;
	types = fp.types;
	fp.types = NULL;
	pub_fingerprint_clear(&fp);
	return types;
}

/* With -v: which published column of type oid (typmod) keeps the stream
 * in text, from the detail of the published tables. */
static void log_text_column(Run *run, char *const *pubs, int npubs, uint32_t oid,
			    int32_t typmod)
{
	SourceTable *tables = NULL;
	int ntables = 0;
	char type[TYPE_TEXT_SIZE];

	type_label(run, NULL, run->session, oid, type, sizeof(type));
	if (session_publication_tables(run->session, pubs, npubs, &tables, &ntables))
		for (int i = 0; i < ntables; i++)
			for (int k = 0; k < tables[i].ncols; k++)
				if (tables[i].cols[k].type_oid == oid &&
				    tables[i].cols[k].type_mod == typmod) {
					log_debug("streaming in text: column \"%s\".\"%s\".\"%s\" of "
						  "type %s is not read in binary", tables[i].nspname,
						  tables[i].relname, tables[i].cols[k].name, type);
					source_tables_free(tables, ntables);
					return;
				}
	source_tables_free(tables, ntables);
	log_debug("streaming in text: a column of a published table is of type %s, not read "
		  "in binary", type);
}

bool stream_format_choose(Run *run, Lsn durable, char *const *pubs, int npubs, bool *binary)
{
	int version = session_server_version(run->session);
	char *types, *p, lsn[LSN_TEXT_SIZE];

	*binary = false;
	if (run->opt->no_binary) {
		log_debug("streaming in text: --no-binary");
		return true;
	}
	if (version < 140000) {
		log_debug("streaming in text: the source is PostgreSQL %d, binary needs 14 or later",
			  version / 10000);
		return true;
	}
	if (run->text_until != LSN_INVALID && durable <= run->text_until) {
		log_debug("streaming in text until the transaction committed at %s is applied",
			  lsn_format(run->text_until, lsn));
		return true;
	}
	if ((types = published_types(run, pubs, npubs)) == NULL)
		return false;
	*binary = true;
	for (p = types; *p != '\0' && *binary; p += strcspn(p, ","), p += *p == ',') {
		char *end;
		uint32_t oid = (uint32_t)strtoul(p, &end, 10);
		int32_t typmod = *end == ':' ? (int32_t)strtol(end + 1, NULL, 10) : -1;

		if (format_type_binary(oid, typmod, version))
			continue;
		*binary = false;
		if (log_get_level() >= LOG_DEBUG)
			log_text_column(run, pubs, npubs, oid, typmod);
	}
	if (*binary)
		log_debug("streaming in binary: every published column's type is read in binary");
	free(types);
	return true;
}

bool stream_format_relation(Run *run, Applier *apply, const PgoRelation *rel, Lsn txn_final)
{
	char lsn[LSN_TEXT_SIZE], from[LSN_TEXT_SIZE], type[TYPE_TEXT_SIZE];

	for (int i = 0; i < rel->ncols; i++) {
		const PgoColumn *c = &rel->cols[i];

		if (format_type_binary(c->type_oid, c->type_mod,
				       session_server_version(run->session)))
			continue;
		run->text_until = txn_final;
		if (log_get_level() < LOG_DEBUG)
			return false;
		type_label(run, apply, NULL, c->type_oid, type, sizeof(type));
		log_debug("going back to text: column \"%s\".\"%s\".\"%s\" of type %s, in the "
			  "transaction committed at %s, is not read in binary; streaming again in "
			  "text from %s", rel->nspname, rel->relname, c->name, type,
			  lsn_format(txn_final, lsn), lsn_format(apply_durable_lsn(apply), from));
		return false;
	}
	return true;
}

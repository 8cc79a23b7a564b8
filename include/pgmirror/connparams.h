/*
 * connparams.h: where the source is, as the command line says it, the way
 * PostgreSQL's own tools take it: -d (a database name, a keyword/value
 * string or a URI) and the -h, -p, -U that override it, and the password
 * -W asked for. Plain data: session.c turns it into libpq's keywords, in
 * the same way for the replication connection and the plain one.
 */
#ifndef PGMIRROR_CONNPARAMS_H
#define PGMIRROR_CONNPARAMS_H

typedef struct ConnParams {
	const char *dbname;    /* -d; NULL: the PG* environment alone */
	const char *host;      /* -h; NULL: what -d and the environment say */
	const char *port;      /* -p; likewise */
	const char *user;      /* -U; likewise */
	const char *password;  /* -W's answer; NULL: .pgpass, PGPASSWORD, ... */
} ConnParams;

#endif

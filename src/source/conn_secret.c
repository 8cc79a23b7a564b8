/*
 * conn_secret.c: the passwords the connection options carry, handed to
 * the log to be masked (log_hide()) before anything can quote them: -d's
 * (keyword/value or URI form, whether or not libpq can parse it: a
 * malformed URI is quoted whole in libpq's own error), -W's answer,
 * PGPASSWORD, and the one libpq took from a service file.
 *
 * libpq's parser (PQconninfoParse) finds the password of a string it can
 * read, decoded. The text's own forms are found by hand as well, for a
 * string it cannot read and because the command line holds the raw form
 * (percent-encoded, quoted): "password" followed by "=" and a value
 * (quoted with '...' and backslashes, or up to a blank or '&': the keyword
 * form and a URI's query), and a URI's user information up to the first
 * '@' or '/' after "scheme://", the password after its first ':' (as
 * libpq's conninfo_uri_parse_options reads it).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/* value (raw, n bytes) and its percent-decoded form, hidden */
static void hide_raw(const char *value, size_t n)
{
	char *raw = xstrndup(value, n), *dec = xstrndup(value, n), *w = dec;

	for (const char *r = raw; *r != '\0'; r++) {
		int hi = r[0] == '%' ? hex_digit_value(r[1]) : -1;
		int lo = hi >= 0 ? hex_digit_value(r[2]) : -1;

		if (lo >= 0) {
			*w++ = (char)(hi * 16 + lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	log_hide(raw);
	log_hide(dec);
	free(raw);
	free(dec);
}

/* Each "password = value" in text (the keyword form, a URI's query). */
static bool hide_keyword_values(const char *text)
{
	bool found = false;

	for (const char *p = strstr(text, "password"); p != NULL; p = strstr(p + 1, "password")) {
		const char *v = p + strlen("password"), *end;
		char *unq, *w;

		while (*v == ' ' || *v == '\t' || *v == '\n')
			v++;
		if (*v++ != '=')
			continue;
		while (*v == ' ' || *v == '\t' || *v == '\n')
			v++;
		found = true;
		if (*v != '\'') {
			end = v + strcspn(v, " \t\n&");
			hide_raw(v, (size_t)(end - v));
			continue;
		}
		/* quoted: the text as written, and the value it stands for */
		unq = w = xstrdup(++v);
		for (end = v; *end != '\0' && *end != '\''; end++) {
			if (*end == '\\' && end[1] != '\0')
				end++;
			*w++ = *end;
		}
		*w = '\0';
		log_hide(unq);
		hide_raw(v, (size_t)(end - v));
		free(unq);
	}
	return found;
}

/* A URI's password in its user information ("scheme://user:password@"). */
static bool hide_uri_password(const char *text)
{
	const char *p = strstr(text, "://"), *colon;
	size_t n;

	if (p == NULL || (strncmp(text, "postgresql://", 13) != 0 &&
			  strncmp(text, "postgres://", 11) != 0))
		return false;
	p += 3;
	n = strcspn(p, "@/");
	if (p[n] != '@' || (colon = memchr(p, ':', n)) == NULL)
		return false;
	hide_raw(colon + 1, (size_t)(p + n - colon - 1));
	return true;
}

bool session_hide_passwords(const ConnParams *cp)
{
	PQconninfoOption *opts;
	bool found = false;

	log_hide(cp->password);
	log_hide(getenv("PGPASSWORD"));
	if (cp->dbname == NULL)
		return false;
	found = hide_uri_password(cp->dbname);
	found = hide_keyword_values(cp->dbname) || found;
	opts = PQconninfoParse(cp->dbname, NULL);
	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL && *o->val != '\0') {
			log_hide(o->val);
			found = true;
		}
	PQconninfoFree(opts);
	return found;
}

void session_hide_conn_password(PGconn *conn)
{
	PQconninfoOption *opts = PQconninfo(conn);

	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 || strcmp(o->keyword, "sslpassword") == 0)
			log_hide(o->val);
	PQconninfoFree(opts);
}

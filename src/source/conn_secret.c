/*
 * conn_secret.c: the passwords the connection options carry. Each is
 * handed to the log to be masked (log_hide()) before anything can quote
 * it: -d's (keyword/value or URI form, whether or not libpq can parse it:
 * a malformed URI is quoted whole in libpq's own error), -W's answer,
 * PGPASSWORD, and the ones libpq took from a service file. And -d as a
 * message may show it, built from libpq's parse with each secret's value
 * masked before anything quotes it (session_conninfo_shown()): a mask
 * applied to the final text finds no secret that a quoting has changed.
 *
 * libpq's parser (PQconninfoParse) finds the secrets of a string it can
 * read, decoded: the options it marks for hiding (dispchar "*": password,
 * sslpassword). The text's own forms are found by hand as well, for a
 * string it cannot read and because the command line holds the raw form
 * (percent-encoded, quoted, escaped): "password" followed by "=" and a
 * value (quoted with '...' and backslashes; else up to a blank that no
 * backslash escapes, as libpq reads it, and up to the first blank or '&',
 * as a URI's query ends it), and a URI's user information up to the
 * first '@' or '/' after "scheme://", the password after its first ':'
 * (as libpq's conninfo_uri_parse_options reads it).
 */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/* A URI, and a connection string of either form, as libpq's expand_dbname
 * tells them from a database name. */
static bool is_uri(const char *text)
{
	return strncmp(text, "postgresql://", 13) == 0 || strncmp(text, "postgres://", 11) == 0;
}

static bool is_conninfo(const char *text)
{
	return is_uri(text) || strchr(text, '=') != NULL;
}

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

/*
 * The value at v as libpq's keyword form reads it: quoted, up to the
 * closing quote, else up to a blank; a backslash escapes the character
 * after it ("Secr\ et" is "Secr et"). Both the text as written and the
 * value it stands for are hidden.
 */
static void hide_escaped(const char *v, bool quoted)
{
	char *unq = xstrdup(v), *w = unq;
	const char *end;

	for (end = v; *end != '\0' && (quoted ? *end != '\'' : !isspace((unsigned char)*end));
	     end++) {
		if (*end == '\\' && end[1] != '\0')
			end++;
		*w++ = *end;
	}
	*w = '\0';
	log_hide(unq);
	hide_raw(v, (size_t)(end - v));
	free(unq);
}

/* Each "password = value" in text (the keyword form, or a URI's query). */
static bool hide_keyword_values(const char *text, bool uri)
{
	bool found = false;

	for (const char *p = strstr(text, "password"); p != NULL; p = strstr(p + 1, "password")) {
		const char *v = p + strlen("password");

		while (*v == ' ' || *v == '\t' || *v == '\n')
			v++;
		if (*v++ != '=')
			continue;
		while (*v == ' ' || *v == '\t' || *v == '\n')
			v++;
		found = true;
		if (*v == '\'') {
			hide_escaped(v + 1, true);
			continue;
		}
		hide_raw(v, strcspn(v, " \t\n&"));
		if (uri) /* a query's value ends at '&' */
			hide_raw(v, strcspn(v, "&"));
		else
			hide_escaped(v, false);
	}
	return found;
}

/* A URI's password in its user information ("scheme://user:password@"). */
static bool hide_uri_password(const char *text)
{
	const char *p = strstr(text, "://"), *colon;
	size_t n;

	if (p == NULL || !is_uri(text))
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
	found = hide_keyword_values(cp->dbname, is_uri(cp->dbname)) || found;
	opts = PQconninfoParse(cp->dbname, NULL);
	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		if (o->dispchar[0] == '*' && o->val != NULL && *o->val != '\0') {
			log_hide(o->val);
			found = true;
		}
	PQconninfoFree(opts);
	return found;
}

/* value, as the keyword/value form reads it back, appended to *text */
static void append_option(char **text, const char *keyword, const char *value)
{
	char *q = xmalloc(2 * strlen(value) + 3), *w = q, *next;
	bool quote = *value == '\0';

	for (const char *r = value; *r != '\0' && !quote; r++)
		quote = isspace((unsigned char)*r) || *r == '\'' || *r == '\\';
	if (quote)
		*w++ = '\'';
	for (const char *r = value; *r != '\0'; r++) {
		if (quote && (*r == '\'' || *r == '\\'))
			*w++ = '\\';
		*w++ = *r;
	}
	if (quote)
		*w++ = '\'';
	*w = '\0';
	next = xasprintf("%s%s%s=%s", *text, **text != '\0' ? " " : "", keyword, q);
	free(q);
	free(*text);
	*text = next;
}

char *session_conninfo_shown(const char *dbname)
{
	PQconninfoOption *opts;
	char *shown;

	if (!is_conninfo(dbname))
		return xstrdup(dbname);
	opts = PQconninfoParse(dbname, NULL);
	if (opts == NULL)
		return xstrdup(LOG_SECRET_MASK);
	shown = xstrdup("");
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (o->val != NULL)
			append_option(&shown, o->keyword,
				      o->dispchar[0] == '*' ? LOG_SECRET_MASK : o->val);
	PQconninfoFree(opts);
	return shown;
}

void session_hide_conn_password(PGconn *conn)
{
	PQconninfoOption *opts = PQconninfo(conn);

	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		if (o->dispchar[0] == '*')
			log_hide(o->val);
	PQconninfoFree(opts);
}

/*
 * session_link.c: a link that vanishes without a word (a mobile link
 * dropping, a NAT entry expiring: packets simply stop, no reset, no end
 * of file) is noticed within a bound, the link's bound: the connection's
 * tcp_user_timeout, which pgmirror sets to LINK_BOUND_MS unless the user's
 * -d does (session_link_defaults()).
 *
 * Two layers, the second for what the first cannot see:
 *  - the kernel's: TCP keepalives and tcp_user_timeout (pgmirror's
 *    defaults, libpq's own parameters), for a link whose packets are lost;
 *  - the connection's: the server may be silent for long and rightly so
 *    (a sort before a COPY's first row, a lock, a walsender decoding a
 *    big transaction the mirror has no part of), so a wait silent for
 *    half the bound asks the server on a new connection to the same
 *    address (the probe); the link is given up when neither the
 *    connection nor the probe has heard from the server within the bound.
 *    Any answer to the probe, a refusal included, shows the link carries.
 *    A stream first asks the server itself for a reply (stream.c), which
 *    an idle walsender gives at once, so that it seldom needs the probe.
 * The second also sees a link that vanished behind a middlebox that
 * keeps the TCP connections up (a proxy, a tunnel).
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/* The link's bound when the connection sets none (tcp_user_timeout=0). */
#define LINK_BOUND_MS 30000

int session_link_defaults(const char **keys, const char **vals)
{
	/*
	 * Linux aborts a connection whose keepalive probes go unanswered for
	 * tcp_user_timeout, whatever keepalives_count says: probes from 10 s
	 * of silence, every 5 s, and the link is given up after 30 s.
	 */
	static const char *const defaults[][2] = {
		{"keepalives", "1"},
		{"keepalives_idle", "10"},
		{"keepalives_interval", "5"},
		{"keepalives_count", "4"},
		{"tcp_user_timeout", "30000"},
	};
	int n = (int)(sizeof(defaults) / sizeof(defaults[0]));

	for (int i = 0; i < n; i++) {
		keys[i] = defaults[i][0];
		vals[i] = defaults[i][1];
	}
	return n;
}

int session_link_bound_ms(Session *s)
{
	PQconninfoOption *opts;
	int ms = 0;

	/* asked at every wait of the stream: PQconninfo() is read once a
	 * connection (it was two thirds of a catch-up's CPU: bench/feed) */
	if (s->conn != NULL && s->bound_for == s->conn)
		return s->link_bound_ms;
	opts = s->conn != NULL ? PQconninfo(s->conn) : NULL;
	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "tcp_user_timeout") == 0 && o->val != NULL)
			ms = atoi(o->val);
	PQconninfoFree(opts);
	s->link_bound_ms = ms > 0 ? ms : LINK_BOUND_MS;
	s->bound_for = s->conn;
	return s->link_bound_ms;
}

int64_t session_heard_at(const Session *s)
{
	return s->heard_at;
}

/* Ends the probe under way, if any. */
static void probe_end(Session *s)
{
	if (s->probe != NULL)
		PQfinish(s->probe);
	s->probe = NULL;
}

void session_link_heard(Session *s)
{
	s->heard_at = mono_usecs();
	probe_end(s); /* not needed any more */
}

void session_link_free(Session *s)
{
	probe_end(s);
	s->heard_at = 0;
	free(s->pin_host);
	free(s->pin_hostaddr);
	free(s->pin_port);
	s->pin_host = s->pin_hostaddr = s->pin_port = NULL;
}

static bool is_connected(const Session *s)
{
	return s != NULL && s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK;
}

void session_pin_address(Session *s, const Session *from)
{
	const char *host, *hostaddr, *port;

	if (from == s)
		return;
	free(s->pin_host);
	free(s->pin_hostaddr);
	free(s->pin_port);
	s->pin_host = s->pin_hostaddr = s->pin_port = NULL;
	/* from not connected (a failover under way): where -d says */
	if (!is_connected(from))
		return;
	host = PQhost(from->conn);
	hostaddr = PQhostaddr(from->conn);
	port = PQport(from->conn);
	/* a unix socket's directory has no address to pin, nor needs one */
	s->pin_host = host != NULL && host[0] != '\0' ? xstrdup(host) : NULL;
	s->pin_hostaddr = hostaddr != NULL && hostaddr[0] != '\0' ? xstrdup(hostaddr) : NULL;
	s->pin_port = port != NULL && port[0] != '\0' ? xstrdup(port) : NULL;
}

int session_pin_keywords(const Session *s, const char **keys, const char **vals)
{
	int n = 0;

	if (s->pin_host == NULL)
		return 0;
	keys[n] = "host";
	vals[n++] = s->pin_host;
	/* none for a unix socket (libpq skips an empty value), where -d can
	 * have given none either */
	keys[n] = "hostaddr";
	vals[n++] = s->pin_hostaddr != NULL ? s->pin_hostaddr : "";
	keys[n] = "port";
	vals[n++] = s->pin_port;
	return n;
}

/*
 * Begins the probe: a plain connection with s's own options, as libpq
 * took them (user, password, TLS, ...), to the address s is connected to
 * (no host name to resolve, which would block).
 */
static void probe_begin(Session *s)
{
	PQconninfoOption *opts = PQconninfo(s->conn);
	Session pin = {0};
	const char **keys, **vals;
	int n = 0, size = SESSION_PIN_KEYWORDS + 1;

	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
		size++;
	keys = xcalloc((size_t)size, sizeof(char *));
	vals = xcalloc((size_t)size, sizeof(char *));
	for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++) {
		if (o->val == NULL || strcmp(o->keyword, "replication") == 0 ||
		    strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0 ||
		    strcmp(o->keyword, "port") == 0)
			continue;
		keys[n] = o->keyword;
		vals[n++] = o->val;
	}
	session_pin_address(&pin, s);
	n += session_pin_keywords(&pin, keys + n, vals + n);
	keys[n] = vals[n] = NULL;
	s->probe = PQconnectStartParams(keys, vals, 0);
	s->probe_write = true; /* as PQconnectStart()'s caller must assume */
	session_link_free(&pin);
	free(keys);
	free(vals);
	PQconninfoFree(opts);
}

/* Whether the probe has heard from the server: its connection made, or
 * refused (an answer too); false while under way. */
static bool probe_answered(Session *s)
{
	struct pollfd pfd = {.fd = PQsocket(s->probe), .events = s->probe_write ? POLLOUT : POLLIN};
	PostgresPollingStatusType st;

	if (PQstatus(s->probe) == CONNECTION_BAD || pfd.fd < 0)
		return true;
	if (poll(&pfd, 1, 0) <= 0)
		return false;
	st = PQconnectPoll(s->probe);
	s->probe_write = st == PGRES_POLLING_WRITING;
	return st == PGRES_POLLING_OK || st == PGRES_POLLING_FAILED;
}

bool session_link_alive(Session *s)
{
	int64_t now = mono_usecs(), bound = (int64_t)session_link_bound_ms(s) * 1000;

	if (s->heard_at == 0 || now - s->heard_at < bound / 2)
		return true;
	if (s->probe == NULL) {
		log_debug("nothing heard from the source for %.0f s: asking it on another "
			  "connection whether the link still carries",
			  (double)(now - s->heard_at) / 1e6);
		probe_begin(s);
		s->probe_at = now;
	}
	if (s->probe == NULL || probe_answered(s)) {
		/* the server is there, just slow (a sort, a lock, a long decoding) */
		probe_end(s);
		s->heard_at = now;
		return true;
	}
	/* the probe too has its half of the bound (a caller back from a long
	 * step of its own finds the silence long already) */
	if (now - s->heard_at < bound || now - s->probe_at < bound / 2)
		return true;
	probe_end(s);
	errbuf_set(&s->err, "nothing heard from the source for %.0f s, nor on a new connection "
		   "to it: the link seems gone (tcp_user_timeout in -d sets how long to wait, "
		   "%d ms here)", (double)(now - s->heard_at) / 1e6, session_link_bound_ms(s));
	return false;
}

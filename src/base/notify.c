/*
 * notify.c: systemd's notify protocol, written here rather than linked
 * from libsystemd: it is one datagram of "KEY=value" lines to the unix
 * socket named by NOTIFY_SOCKET (a path, or '@' for an abstract name), as
 * sd_notify(3) documents it as a stable interface; libsystemd would add a
 * library (and its own dependencies) to every device and every cross
 * build for these few lines.
 *
 * The watchdog is armed by systemd once the start is complete (READY=1);
 * before that the start's timeout applies, which notify_alive() extends
 * while the run makes progress. Both come from the places where work is
 * done (the stream's loop, a copy's batches), not from a timer, so a run
 * that hangs stops sending them and systemd restarts it.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pgmirror/notify.h"

/* While starting, each sign of progress gives the start this much more. */
#define EXTEND_USECS INT64_C(90000000)
/* Without a watchdog, the start is extended at most this often. */
#define EXTEND_EVERY_USECS INT64_C(10000000)

static struct {
	int fd;                   /* -1: not under systemd */
	struct sockaddr_un addr;
	socklen_t addr_len;
	int64_t alive_every;      /* usecs between two WATCHDOG=1 (0: none) */
	int64_t last_alive;       /* mono_usecs() of the last one */
	bool ready;               /* READY=1 was sent */
	char status[256];         /* the last STATUS= sent */
} notify = {.fd = -1};

/* Sends text as one datagram; async-signal-safe. */
static void send_text(const char *text, size_t len)
{
	ssize_t r;

	if (notify.fd < 0)
		return;
	do
		r = sendto(notify.fd, text, len, MSG_NOSIGNAL, (struct sockaddr *)&notify.addr,
			   notify.addr_len);
	while (r < 0 && errno == EINTR);
}

void notify_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET"), *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	size_t n;

	if (notify.fd >= 0 || path == NULL || (path[0] != '/' && path[0] != '@'))
		return;
	n = strlen(path);
	if (n >= sizeof(notify.addr.sun_path))
		return;
	notify.addr.sun_family = AF_UNIX;
	memcpy(notify.addr.sun_path, path, n);
	if (path[0] == '@')
		notify.addr.sun_path[0] = '\0'; /* abstract: no NUL at the end */
	notify.addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
				      (path[0] == '/'));
	notify.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/* the watchdog is for this process only (WATCHDOG_PID, when set) */
	if (usec != NULL && (pid == NULL || strtoll(pid, NULL, 10) == (long long)getpid())) {
		long long v = strtoll(usec, NULL, 10);

		if (v > 0)
			notify.alive_every = v / 4;
	}
	notify.last_alive = mono_usecs();
}

void notify_ready(void)
{
	char text[300];
	int n;

	if (notify.fd < 0 || notify.ready)
		return;
	notify.ready = true;
	n = snprintf(text, sizeof(text), "READY=1\nSTATUS=%s",
		     notify.status[0] ? notify.status : "caught up with the source");
	send_text(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

void notify_status(const char *fmt, ...)
{
	char line[sizeof(notify.status)], text[sizeof(line) + 8];
	va_list ap;

	if (notify.fd < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one line: systemctl status shows it as one */
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	if (strcmp(line, notify.status) == 0)
		return;
	memcpy(notify.status, line, sizeof(line));
	send_text(text, (size_t)snprintf(text, sizeof(text), "STATUS=%s", line));
}

void notify_alive(void)
{
	int64_t now, every;
	char text[80];
	int n = 0;

	if (notify.fd < 0)
		return;
	every = notify.alive_every;
	if (!notify.ready && (every == 0 || every > EXTEND_EVERY_USECS))
		every = EXTEND_EVERY_USECS;
	if (every == 0)
		return;
	now = mono_usecs();
	if (now - notify.last_alive < every)
		return;
	notify.last_alive = now;
	if (notify.alive_every > 0)
		n = snprintf(text, sizeof(text), "WATCHDOG=1\n");
	if (!notify.ready)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "EXTEND_TIMEOUT_USEC=%lld\n",
			      (long long)EXTEND_USECS);
	send_text(text, (size_t)n - 1);
}

int notify_wait_ms(int wait_ms)
{
	int64_t due;

	if (notify.fd < 0 || notify.alive_every == 0)
		return wait_ms;
	/* until the next WATCHDOG=1 is due, rounded up to a whole ms */
	due = (notify.last_alive + notify.alive_every - mono_usecs() + 999) / 1000;
	if (due <= 0)
		return 0;
	return due < wait_ms ? (int)due : wait_ms;
}

void notify_stopping(void)
{
	static const char text[] = "STOPPING=1";

	send_text(text, sizeof(text) - 1);
}

/*
 * util.c: allocation wrappers that end the program on failure, stderr
 * logging with a verbosity level, and LSN / timestamp text.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/time.h>

#include "pgmirror/util.h"

static int log_level = LOG_INFO;

static PGM_NORETURN void out_of_memory(size_t size)
{
	fprintf(stderr, "pgmirror: out of memory (allocating %zu bytes)\n", size);
	exit(1);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		out_of_memory(size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		out_of_memory(n * size);
	return p;
}

void *xreallocarray(void *ptr, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	p = realloc(ptr, n * size != 0 ? n * size : 1);
	if (p == NULL)
		out_of_memory(n * size);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX)
		out_of_memory(n);
	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		out_of_memory(0);
	return p;
}

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", ""};
	va_list ap;

	if (level > log_level)
		return;
	fprintf(stderr, "pgmirror: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

char *lsn_format(Lsn lsn, char buf[LSN_TEXT_SIZE])
{
	snprintf(buf, LSN_TEXT_SIZE, "%X/%X", (uint32_t)(lsn >> 32), (uint32_t)lsn);
	return buf;
}

static bool parse_hex32(const char *s, size_t n, uint32_t *out)
{
	uint32_t v = 0;

	if (n == 0 || n > 8)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return true;
}

bool lsn_parse(const char *text, Lsn *out)
{
	const char *slash = strchr(text, '/');
	uint32_t hi, lo;

	if (slash == NULL)
		return false;
	if (!parse_hex32(text, (size_t)(slash - text), &hi) ||
	    !parse_hex32(slash + 1, strlen(slash + 1), &lo))
		return false;
	*out = (Lsn)hi << 32 | lo;
	return true;
}

char *pgtime_format_utc(int64_t pg_usecs, char *buf, size_t size)
{
	int64_t secs = pg_usecs / 1000000, usecs = pg_usecs % 1000000;
	time_t t;
	struct tm tm;
	size_t n;

	if (usecs < 0) {
		usecs += 1000000;
		secs -= 1;
	}
	t = (time_t)(secs + PG_EPOCH_OFFSET_SECS);
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, size, "invalid");
		return buf;
	}
	n = strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
	if (usecs != 0 && n < size)
		snprintf(buf + n, size - n, ".%06" PRId64, usecs);
	return buf;
}

int64_t pgtime_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return ((int64_t)tv.tv_sec - PG_EPOCH_OFFSET_SECS) * 1000000 + tv.tv_usec;
}

/*
 * util.c: allocation wrappers that end the program on failure, stderr
 * logging with a verbosity level, and LSN / timestamp text.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
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

/* The last error logged, for the mirror's last_error (log_last_error()). */
static char last_error[1024];

/* Whether stderr is the journal (systemd sets JOURNAL_STREAM to its
 * "device:inode"): then each line starts with its syslog priority. */
static int journal_stderr = -1; /* -1: not looked at yet */

static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/*
 * Secrets the log never shows (log_hide()): each is replaced by
 * LOG_SECRET_MASK wherever it appears in a message, an error text or a text
 * stored in the mirror. Longest first, so that a secret holding another is
 * masked whole.
 */
static char **secrets;
static int nsecrets;

void log_hide(const char *secret)
{
	int at = 0;

	if (secret == NULL || *secret == '\0' || strv_contains(secrets, nsecrets, secret))
		return;
	while (at < nsecrets && strlen(secrets[at]) >= strlen(secret))
		at++;
	secrets = xreallocarray(secrets, (size_t)nsecrets + 1, sizeof(char *));
	memmove(secrets + at + 1, secrets + at, (size_t)(nsecrets - at) * sizeof(char *));
	secrets[at] = xstrdup(secret);
	nsecrets++;
}

/* The registered secret that starts at p, or NULL. */
static const char *secret_at(const char *p)
{
	for (int i = 0; i < nsecrets; i++)
		if (strncmp(p, secrets[i], strlen(secrets[i])) == 0)
			return secrets[i];
	return NULL;
}

void log_blank(char *text)
{
	for (char *p = text; *p != '\0';) {
		const char *s = secret_at(p);
		size_t n = s != NULL ? strlen(s) : 1;

		if (s != NULL)
			memset(p, '*', n);
		p += n;
	}
}

/*
 * text on one line (malloc'd), secrets masked: a server's message may run
 * over several ("ERROR:  ...\nDETAIL:  ...\nHINT:  ..."), and a line
 * without pgmirror's prefix (and priority) would read as another message,
 * or none. Each line break and the blanks after it become "; "; breaks at
 * the end go; any other control character (libpq's tabs) becomes a blank.
 */
static char *clean(const char *text, bool one_line)
{
	size_t grow = sizeof(LOG_SECRET_MASK) > 2 ? sizeof(LOG_SECRET_MASK) : 2;
	char *out = xreallocarray(NULL, strlen(text) + 1, grow), *w = out;

	for (const char *r = text; *r != '\0';) {
		const char *s = secret_at(r);

		if (s != NULL) {
			memcpy(w, LOG_SECRET_MASK, strlen(LOG_SECRET_MASK));
			w += strlen(LOG_SECRET_MASK);
			r += strlen(s);
			continue;
		}
		if (!one_line || (*r != '\n' && *r != '\r')) {
			*w++ = one_line && ((unsigned char)*r < ' ' || *r == 0x7f) ? ' ' : *r;
			r++;
			continue;
		}
		while (*r == '\n' || *r == '\r' || *r == ' ' || *r == '\t')
			r++;
		if (*r != '\0' && w != out) {
			*w++ = ';';
			*w++ = ' ';
		}
	}
	*w = '\0';
	return out;
}

char *log_clean(const char *text)
{
	return clean(text, true);
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", ""};
	static const char *const priority[] = {"<3>", "<4>", "<6>", "<7>"};
	char *raw, *text;
	va_list ap;

	if (level > log_level) /* never an error: those always show */
		return;
	va_start(ap, fmt);
	if (vasprintf(&raw, fmt, ap) < 0)
		out_of_memory(0);
	va_end(ap);
	text = log_clean(raw);
	free(raw);
	if (level == LOG_ERROR)
		snprintf(last_error, sizeof(last_error), "%s", text);
	if (journal_stderr < 0)
		journal_stderr = stderr_is_journal();
	fprintf(stderr, "%spgmirror: %s%s\n", journal_stderr ? priority[level] : "",
		prefix[level], text);
	free(text);
}

const char *log_last_error(void)
{
	return last_error[0] != '\0' ? last_error : NULL;
}

/*
 * Masked whole, then cut to the buffer: a text cut first could end inside
 * a secret, whose start the mask would then no longer find.
 */
void errbuf_vset(ErrBuf *e, const char *fmt, va_list ap)
{
	char *raw, *masked;
	size_t n;

	if (vasprintf(&raw, fmt, ap) < 0)
		out_of_memory(0);
	masked = clean(raw, false);
	free(raw);
	snprintf(e->text, sizeof(e->text), "%s", masked);
	free(masked);
	n = strlen(e->text);
	while (n > 0 && e->text[n - 1] == '\n')
		e->text[--n] = '\0';
}

void errbuf_set(ErrBuf *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(e, fmt, ap);
	va_end(ap);
}

int strv_split(const char *text, char sep, char ***out)
{
	char **v = NULL;
	int n = 0;

	for (const char *p = text;; p++) {
		const char *end = strchr(p, sep);
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		v = xreallocarray(v, (size_t)n + 1, sizeof(char *));
		v[n++] = xstrndup(p, len);
		if (end == NULL)
			break;
		p = end;
	}
	*out = v;
	return n;
}

char *strv_join(char *const *v, int n, const char *sep)
{
	size_t seplen = strlen(sep), len = 1;
	char *s, *w;

	for (int i = 0; i < n; i++) {
		size_t add = strlen(v[i]) + (i > 0 ? seplen : 0);

		if (add > SIZE_MAX - len)
			out_of_memory(SIZE_MAX);
		len += add;
	}
	w = s = xmalloc(len);
	for (int i = 0; i < n; i++) {
		if (i > 0) {
			memcpy(w, sep, seplen);
			w += seplen;
		}
		memcpy(w, v[i], strlen(v[i]));
		w += strlen(v[i]);
	}
	*w = '\0';
	return s;
}

void strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

bool strv_contains(char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

int hex_digit_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int64_t clock_usecs(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t mono_usecs(void)
{
	return clock_usecs(CLOCK_MONOTONIC);
}

int64_t thread_cpu_usecs(void)
{
	return clock_usecs(CLOCK_THREAD_CPUTIME_ID);
}

struct timespec mono_deadline(int ms)
{
	struct timespec at;

	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_sec += ms / 1000;
	at.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000L;
	}
	return at;
}

int thread_start_quiet(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int backoff_next(int secs, int max_secs)
{
	return secs < 1 ? 1 : secs > max_secs / 2 ? max_secs : secs * 2;
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
		int d = hex_digit_value((unsigned char)s[i]);

		if (d < 0)
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

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil): no time_t, which is 32 bits on armhf. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

bool pgtime_parse_utc(const char *text, double *unix_secs)
{
	int y, mo, d, h, mi, s, n = 0, digits = 0;
	double frac = 0, scale = 0.1;

	if (text == NULL ||
	    sscanf(text, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 ||
	    n != 19)
		return false;
	if (text[n] == '.')
		for (n++; text[n] >= '0' && text[n] <= '9' && digits < 9; n++, digits++, scale /= 10)
			frac += (text[n] - '0') * scale;
	if (text[n] != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    s > 60 || y < 0 || h < 0 || mi < 0 || s < 0)
		return false;
	*unix_secs = (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) + frac;
	return true;
}

size_t utf8_char_length(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
		     : s[0] >= 0xe0 && s[0] < 0xf0 ? 3 : s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : 0;

	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates and beyond U+10FFFF */
	if ((len == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (len == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (len == 4 && s[0] == 0xf0 && s[1] < 0x90) || (len == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

int64_t civil_days(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

int civil_days_in_month(int64_t y, int m)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

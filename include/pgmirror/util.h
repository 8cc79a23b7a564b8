/*
 * util.h: the small things every module needs: allocation that never
 * returns NULL, logging to stderr at a chosen verbosity, and LSN text.
 */
#ifndef PGMIRROR_UTIL_H
#define PGMIRROR_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define PGM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define PGM_NORETURN __attribute__((noreturn))
#define PGM_MUST_CHECK __attribute__((warn_unused_result))

/* A WAL position, as PostgreSQL's XLogRecPtr. */
typedef uint64_t Lsn;
#define LSN_INVALID ((Lsn) 0)
/* "X/Y" with X and Y in hex; 8 + 1 + 8 + NUL */
#define LSN_TEXT_SIZE 18

/*
 * Called now and then during a step that may run long (a refill, a
 * rebuild, a wait on the source): it keeps the server answered, and
 * returns false when the step must stop (SIGTERM, or the source is gone).
 */
typedef bool (*TickFn)(void *ctx);

/* Out of memory, or a size that overflows, ends the program. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xreallocarray(void *ptr, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PGM_PRINTF(1, 2);

/*
 * The error text an object owns (STYLE: the object owns its error text, as
 * sqlite3_errmsg does). errbuf_set() formats into it, secrets masked
 * (log_hide()) before the text is cut to the buffer, dropping the final
 * newlines libpq's messages end with.
 */
typedef struct ErrBuf {
	char text[2048];
} ErrBuf;
void errbuf_set(ErrBuf *e, const char *fmt, ...) PGM_PRINTF(2, 3);
void errbuf_vset(ErrBuf *e, const char *fmt, va_list ap) PGM_PRINTF(2, 0);

/* A list of strings: text split at every sep ("a,,b" gives "a", "", "b";
 * "" gives ""), joined with sep (one allocation), freed. */
int strv_split(const char *text, char sep, char ***out);
char *strv_join(char *const *v, int n, const char *sep);
void strv_free(char **v, int n);
/* Whether one of v[0..n-1] equals s. */
bool strv_contains(char *const *v, int n, const char *s);

/* The value of a hex digit, or -1 for any other character. */
int hex_digit_value(int c);

/* A monotonic clock in microseconds, for intervals. */
int64_t mono_usecs(void);

/* The CPU time the calling thread has used, in microseconds (0 where the
 * system cannot tell). */
int64_t thread_cpu_usecs(void);

/* The monotonic clock's time ms milliseconds from now: the deadline for
 * pthread_cond_timedwait() on a condition made with CLOCK_MONOTONIC. */
struct timespec mono_deadline(int ms);

/* pthread_create(), with every signal blocked in the new thread: signals
 * stay with the threads whose waits they are meant to interrupt. Returns
 * pthread_create()'s result. */
int thread_start_quiet(pthread_t *thread, void *(*fn)(void *), void *arg);

/* The next wait of an exponential backoff: twice secs, at most max_secs;
 * 1 after 0 (a first try again at once). */
int backoff_next(int secs, int max_secs);

/* Log levels; messages at or below the current level are printed. */
enum LogLevel { LOG_ERROR = 0, LOG_WARNING = 1, LOG_INFO = 2, LOG_DEBUG = 3 };
void log_set_level(int level);
int log_get_level(void);
void log_msg(int level, const char *fmt, ...) PGM_PRINTF(2, 3);
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
/*
 * Secrets (passwords) the log never shows: log_hide() registers one (a
 * copy; NULL and "" are ignored); from then on every message logged, every
 * ErrBuf text and every text log_clean() returns shows it masked.
 * log_blank() overwrites each one in text with '*'s, keeping its length
 * (the command line's copy of -d, as /proc shows it).
 */
#define LOG_SECRET_MASK "********" /* what a secret shows as */
void log_hide(const char *secret);
void log_blank(char *text);
/* text as it may be shown or stored (malloc'd): on one line (line breaks
 * as "; ", other control characters as blanks), secrets masked. */
char *log_clean(const char *text);
/* The text of the last error logged (at any level setting), or NULL. */
const char *log_last_error(void);

/* Formats lsn as "X/Y" into buf (LSN_TEXT_SIZE bytes); returns buf. */
char *lsn_format(Lsn lsn, char buf[LSN_TEXT_SIZE]);
/* Parses "X/Y"; false on anything else (nothing trailing allowed). */
bool lsn_parse(const char *text, Lsn *out) PGM_MUST_CHECK;

/* Microseconds since 2000-01-01 UTC (PostgreSQL's epoch) as UTC text
 * "YYYY-MM-DD HH:MM:SS[.ffffff]" into buf (at least 32 bytes). */
#define PG_EPOCH_OFFSET_SECS INT64_C(946684800)
char *pgtime_format_utc(int64_t pg_usecs, char *buf, size_t size);
/* Current time in microseconds since the PostgreSQL epoch. */
int64_t pgtime_now(void);
/* Parses such UTC text back into seconds since 1970 (Unix time); false on
 * anything else. */
bool pgtime_parse_utc(const char *text, double *unix_secs) PGM_MUST_CHECK;

/* The proleptic Gregorian calendar, with an astronomical year (Howard
 * Hinnant's algorithms, exact for every year that fits): days since
 * 1970-01-01 of a date and back, and the days of a month (1-12). */
int64_t civil_days(int64_t y, int m, int d);
void civil_from_days(int64_t z, int64_t *y, int *m, int *d);
int civil_days_in_month(int64_t y, int m);

/* The length of the UTF-8 sequence at s (n > 0 bytes left), or 0 when the
 * bytes there are not one (overlong forms and surrogates included). */
size_t utf8_char_length(const unsigned char *s, size_t n);

#endif

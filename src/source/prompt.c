/*
 * prompt.c: -W's password prompt. Like psql's simple_prompt(): the
 * terminal itself (/dev/tty) is used when there is one, so that the
 * answer does not come from a redirected stdin and the prompt is not lost
 * in a redirected stderr; echo is turned off while the line is typed and
 * turned back on even when the read fails.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "pgmirror/prompt.h"

char *prompt_password(const char *prompt, ErrBuf *err)
{
	FILE *tty = fopen("/dev/tty", "r+e");
	FILE *in = tty ? tty : stdin, *out = tty ? tty : stderr;
	struct termios saved, quiet;
	bool echo_off = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int saved_errno;

	if (isatty(fileno(in)) && tcgetattr(fileno(in), &saved) == 0) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		echo_off = tcsetattr(fileno(in), TCSAFLUSH, &quiet) == 0;
	}
	fputs(prompt, out);
	fflush(out);
	errno = 0;
	n = getline(&line, &cap, in);
	saved_errno = errno;
	if (echo_off)
		(void)tcsetattr(fileno(in), TCSAFLUSH, &saved);
	/* the typed newline was not shown, or nothing was typed here */
	if (echo_off || !isatty(fileno(in))) {
		fputc('\n', out);
		fflush(out);
	}
	if (tty != NULL)
		fclose(tty);
	if (n < 0) {
		free(line);
		if (saved_errno == EINTR)
			errbuf_set(err, "stopped by a signal while asking for the password");
		else
			errbuf_set(err, "could not read a password from %s: %s",
				   tty ? "the terminal" : "standard input",
				   saved_errno ? strerror(saved_errno) : "end of input");
		errno = saved_errno;
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

/*
 * prompt.h: asking the user for a password on the terminal, as -W does in
 * PostgreSQL's own tools.
 */
#ifndef PGMIRROR_PROMPT_H
#define PGMIRROR_PROMPT_H

#include "pgmirror/util.h"

/*
 * Writes prompt to the terminal (/dev/tty; without one, stderr), reads one
 * line from it with echo off (without a terminal, from stdin) and returns
 * it without its newline (xmalloc'd). NULL with err set when nothing could
 * be read (end of input, or a signal: errno is then EINTR).
 */
char *prompt_password(const char *prompt, ErrBuf *err);

#endif

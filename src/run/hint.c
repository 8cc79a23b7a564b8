/*
 * hint.c: the commands a message tells the user to run, written so that
 * they run as written: this run's connection options (-h, -p, -U as given;
 * -d as session_conninfo_shown() writes it, a connection string in
 * keyword/value form with its password masked before anything quotes it:
 * the mask, like everywhere, and a password is better in a password file)
 * its feed (--feed, a hub's: a run from the source without it is
 * refused) and its mirror file, each quoted for the shell.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replicate_internal.h"

/* word, quoted for a POSIX shell where it needs it, appended to *cmd */
static void append_word(char **cmd, const char *word)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-./:@%+=,";
	char *q, *w, *next;

	if (*word != '\0' && word[strspn(word, plain)] == '\0') {
		q = xstrdup(word);
	} else {
		/* '...', each ' as '\'' */
		q = w = xmalloc(4 * strlen(word) + 3);
		*w++ = '\'';
		for (const char *r = word; *r != '\0'; r++) {
			if (*r == '\'') {
				memcpy(w, "'\\''", 4);
				w += 4;
			} else {
				*w++ = *r;
			}
		}
		*w++ = '\'';
		*w = '\0';
	}
	next = xasprintf("%s %s", *cmd, q);
	free(q);
	free(*cmd);
	*cmd = next;
}

char *replicate_command(const ReplicateOptions *opt, const char *what, const char *slot)
{
	const char *conn[][2] = {{"-d", opt->conn.dbname}, {"-h", opt->conn.host},
				 {"-p", opt->conn.port}, {"-U", opt->conn.user}};
	/* --status and --check refuse the connection options */
	bool local = strcmp(what, "--status") == 0 || strcmp(what, "--check") == 0;
	char *cmd = xstrdup("pgmirror");

	for (size_t i = 0; i < sizeof(conn) / sizeof(conn[0]); i++)
		if (conn[i][1] != NULL && !local) {
			/* -d's secrets masked in its parse, not in this text */
			char *value = strcmp(conn[i][0], "-d") == 0
					      ? session_conninfo_shown(conn[i][1])
					      : xstrdup(conn[i][1]);

			append_word(&cmd, conn[i][0]);
			append_word(&cmd, value);
			free(value);
		}
	append_word(&cmd, what);
	if (slot != NULL) {
		append_word(&cmd, "-S");
		append_word(&cmd, slot);
	}
	/* --drop-slot refuses --feed too */
	if (opt->feed_dir != NULL && !local && strcmp(what, "--drop-slot") != 0) {
		char *feed = xasprintf("--feed=%s", opt->feed_dir);

		append_word(&cmd, feed);
		free(feed);
	}
	append_word(&cmd, opt->mirror_path);
	return cmd;
}

char *replicate_hint_command(void *run, const char *option)
{
	return replicate_command(((const Run *)run)->opt, option, NULL);
}

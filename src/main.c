/*
 * main.c: pgmirror's command line, signals, and the choice of job.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "pgmirror/notify.h"
#include "pgmirror/mirror.h"
#include "pgmirror/prompt.h"
#include "pgmirror/replicate.h"
#include "pgmirror/session.h"
#include "pgmirror/status.h"

static void usage(FILE *out)
{
	fprintf(out,
		"pgmirror keeps a SQLite file equal to a set of PostgreSQL tables.\n"
		"\n"
		"Usage:\n"
		"  pgmirror [OPTION]... MIRROR.db\n"
		"\n"
		"Options:\n"
		"  -S, --slot=NAME              replication slot (default \"pgmirror\")\n"
		"  -P, --publication=NAME[,..]  publication(s) to mirror; needed on the first run\n"
		"      --once                   stop once everything committed before connecting\n"
		"                               is applied (for cron)\n"
		"  -E, --endpos=LSN             stop once everything up to LSN (X/Y) is applied\n"
		"      --no-initial-copy        on a first run, do not copy existing rows\n"
		"      --resync[=TABLE,...]     copy these mirror tables (all when none is named)\n"
		"                               again from the source, then go on\n"
		"      --failover               make the slot a failover slot (PostgreSQL 17+)\n"
		"      --no-binary              stream in text format, never in binary\n"
		"      --drop-slot              drop the replication slot and exit\n"
		"      --verify                 bring the mirror to a fresh point of the source,\n"
		"                               compare every table with it, and exit\n"
		"      --status [--json | --prometheus]\n"
		"                               print the mirror's state and exit (no connection);\n"
		"                               --json: as one JSON object; --prometheus: in\n"
		"                               Prometheus' text format\n"
		"      --check                  check the mirror file for damage and exit\n"
		"                               (no connection)\n"
		"      --feed=DIR               also write a feed of everything the mirror takes\n"
		"                               into DIR, for devices to replay (a hub)\n"
		"      --feed-snapshot          with --feed: write a snapshot of the mirror into\n"
		"                               the feed at the end of this run\n"
		"      --feed-keep=N            with --feed: keep the newest N snapshots and the\n"
		"                               files after the oldest of them (default 3)\n"
		"      --feed-interval=SECS     with --feed: close a segment of the feed at most\n"
		"                               SECS after its first change (default 60)\n"
		"      --from=URL               read the feed at URL (a directory or file://)\n"
		"                               instead of PostgreSQL (a device)\n"
		"  -s, --status-interval=SECS   feedback to the server every SECS (default 10)\n"
		"  -v, --verbose                more messages\n"
		"  -q, --quiet                  only errors\n"
		"  -V, --version                print the versions of pgmirror, libpq and SQLite\n"
		"                               and exit\n"
		"  -?, --help                   print this help and exit\n"
		"\n"
		"Connection options (as in psql; -h, -p and -U override -d and PG* variables):\n"
		"  -d, --dbname=DBNAME          source database: a name, a connection string\n"
		"                               or a URI\n"
		"  -h, --host=HOSTNAME          source server host or socket directory\n"
		"  -p, --port=PORT              source server port\n"
		"  -U, --username=USERNAME      connect as this user\n"
		"  -w, --no-password            never prompt for a password (the default)\n"
		"  -W, --password               prompt for a password before connecting\n"
		"\n"
		"Exit status: 0 success, 1 error, 2 usage error, 3 mirror or slot in use,\n"
		"4 --verify found a difference, 5 --check found the mirror file damaged.\n");
}

/* -V: pgmirror's version and the libraries' in use, which may differ from
 * those it was built with. */
static void print_version(void)
{
	printf("pgmirror %s\nlibpq %s\nSQLite %s\n", PACKAGE_VERSION, session_libpq_version(),
	       mirror_sqlite_version());
}

static void handle_stop(int sig)
{
	(void)sig;
	notify_stopping();
	replicate_request_stop();
}

static void handle_check(int sig)
{
	(void)sig;
	replicate_request_check();
}

/* The message quotes the command line: its secrets masked (log_clean()). */
static PGM_NORETURN PGM_PRINTF(1, 2) void usage_error(const char *fmt, ...)
{
	va_list ap;
	char *raw, *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&raw, fmt, ap);
	va_end(ap);
	if (n < 0)
		exit(EXIT_USAGE);
	text = log_clean(raw);
	fprintf(stderr, "pgmirror: %s\nTry \"pgmirror --help\" for more information.\n", text);
	free(text);
	free(raw);
	exit(EXIT_USAGE);
}

/* -h, -p, -U: a value, which libpq would otherwise skip when empty. */
static const char *conn_value(const char *opt, const char *arg)
{
	if (*arg == '\0')
		usage_error("%s needs a value: the empty string would silently fall back to what "
			    "-d and the environment say", opt);
	return arg;
}

/* -W: asks before anything connects, with psql's prompt. */
static int ask_password(ReplicateOptions *opt, char **password)
{
	ErrBuf err;
	char *prompt = opt->conn.user
		? xasprintf("Password for user %s: ", opt->conn.user)
		: xstrdup("Password: ");

	*password = prompt_password(prompt, &err);
	free(prompt);
	if (*password == NULL) {
		fprintf(stderr, "pgmirror: %s\n", err.text);
		return errno == EINTR ? EXIT_OK : EXIT_ERROR;
	}
	opt->conn.password = *password;
	log_hide(*password);
	return -1;
}

/* Slot names are limited by the server to [a-z0-9_], 63 bytes. */
static bool valid_slot_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the comma-separated names in arg, skipping duplicates. */
static void add_publications(ReplicateOptions *opt, const char *arg)
{
	char **names;
	int n = strv_split(arg, ',', &names);

	for (int j = 0; j < n; j++) {
		const char *p = names[j];
		bool dup = false;

		if (*p == '\0')
			usage_error("invalid publication list \"%s\": empty name", arg);
		if (strlen(p) > 63)
			usage_error("invalid publication name \"%s\": longer than 63 bytes", p);
		for (int i = 0; i < opt->npubs; i++)
			dup = dup || strcmp(opt->pubs[i], p) == 0;
		if (!dup) {
			opt->pubs = xreallocarray(opt->pubs, (size_t)opt->npubs + 1, sizeof(char *));
			opt->pubs[opt->npubs++] = xstrdup(p);
		}
	}
	strv_free(names, n);
}

/*
 * pgmirror holds a password (from -d, -W, PGPASSWORD or a service file)
 * and the rows it mirrors from its first moment: a crash leaves no core
 * dump with them, whatever the limits it was started with (its units set
 * LimitCORE=0; cron, a shell or a container may not), and, not dumpable,
 * its memory and environment (/proc/PID/mem, /proc/PID/environ, ptrace)
 * are closed to the other processes of its user. False when the system
 * refuses either.
 */
static bool refuse_core_dumps(void)
{
	const struct rlimit none = {0, 0};

	if (setrlimit(RLIMIT_CORE, &none) != 0) {
		log_error("could not turn off core dumps (RLIMIT_CORE): %s", strerror(errno));
		return false;
	}
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		log_error("could not make the process not dumpable (PR_SET_DUMPABLE): %s",
			  strerror(errno));
		return false;
	}
	return true;
}

/* Adds the comma-separated mirror table names of --resync=arg. */
static void add_resync_tables(ReplicateOptions *opt, const char *arg)
{
	char **names;
	int n = strv_split(arg, ',', &names);

	for (int j = 0; j < n; j++) {
		if (*names[j] == '\0')
			usage_error("invalid table list \"%s\" for --resync: empty name", arg);
		opt->resync_tables = xreallocarray(opt->resync_tables, (size_t)opt->nresync + 1,
						   sizeof(char *));
		opt->resync_tables[opt->nresync++] = xstrdup(names[j]);
	}
	strv_free(names, n);
}

int main(int argc, char **argv)
{
	enum { OPT_ONCE = 256, OPT_NO_COPY, OPT_DROP_SLOT, OPT_STATUS, OPT_VERIFY, OPT_RESYNC,
	       OPT_FAILOVER, OPT_NO_BINARY, OPT_HELP, OPT_JSON, OPT_CHECK,
	       OPT_PROMETHEUS, OPT_FEED, OPT_FEED_SNAPSHOT, OPT_FEED_KEEP, OPT_FROM,
	       OPT_FEED_INTERVAL };
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"host", required_argument, NULL, 'h'},
		{"port", required_argument, NULL, 'p'},
		{"username", required_argument, NULL, 'U'},
		{"no-password", no_argument, NULL, 'w'},
		{"password", no_argument, NULL, 'W'},
		{"slot", required_argument, NULL, 'S'},
		{"publication", required_argument, NULL, 'P'},
		{"once", no_argument, NULL, OPT_ONCE},
		{"endpos", required_argument, NULL, 'E'},
		{"no-initial-copy", no_argument, NULL, OPT_NO_COPY},
		{"resync", optional_argument, NULL, OPT_RESYNC},
		{"failover", no_argument, NULL, OPT_FAILOVER},
		{"no-binary", no_argument, NULL, OPT_NO_BINARY},
		{"drop-slot", no_argument, NULL, OPT_DROP_SLOT},
		{"status", no_argument, NULL, OPT_STATUS},
		{"json", no_argument, NULL, OPT_JSON},
		{"prometheus", no_argument, NULL, OPT_PROMETHEUS},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"check", no_argument, NULL, OPT_CHECK},
		{"feed", required_argument, NULL, OPT_FEED},
		{"feed-snapshot", no_argument, NULL, OPT_FEED_SNAPSHOT},
		{"feed-keep", required_argument, NULL, OPT_FEED_KEEP},
		{"feed-interval", required_argument, NULL, OPT_FEED_INTERVAL},
		{"from", required_argument, NULL, OPT_FROM},
		{"status-interval", required_argument, NULL, 's'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	ReplicateOptions opt = {.slot = "pgmirror", .status_interval = 10};
	bool drop_slot = false, status = false, check = false;
	StatusFormat format = STATUS_TEXT;
	bool no_password = false, ask = false;
	char *password = NULL, *dbname = NULL;
	bool dbname_pw = false;
	int level = LOG_INFO, c, rc;
	struct sigaction sa;

	if (!refuse_core_dumps())
		return EXIT_ERROR;
	while ((c = getopt_long(argc, argv, "d:h:p:U:wWS:P:E:s:vqV?", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			/* a copy: argv's is blanked below, as /proc shows it */
			free(dbname);
			opt.conn.dbname = dbname = xstrdup(optarg);
			dbname_pw = session_hide_passwords(&opt.conn) || dbname_pw;
			log_blank(optarg);
			break;
		case 'h':
			opt.conn.host = conn_value("-h/--host", optarg);
			break;
		case 'p':
			opt.conn.port = conn_value("-p/--port", optarg);
			break;
		case 'U':
			opt.conn.user = conn_value("-U/--username", optarg);
			break;
		case 'w':
			no_password = true;
			break;
		case 'W':
			ask = true;
			break;
		case 'S':
			if (!valid_slot_name(optarg))
				usage_error("invalid slot name \"%s\": use 1 to 63 lower-case letters, "
					    "digits and underscores", optarg);
			opt.slot = optarg;
			opt.slot_given = true;
			break;
		case 'P':
			add_publications(&opt, optarg);
			break;
		case OPT_ONCE:
			opt.once = true;
			break;
		case 'E':
			if (!lsn_parse(optarg, &opt.endpos) || opt.endpos == LSN_INVALID)
				usage_error("invalid end position \"%s\": expected an LSN like 0/16B3748",
					    optarg);
			break;
		case OPT_NO_COPY:
			opt.no_initial_copy = true;
			break;
		case OPT_RESYNC:
			opt.resync = true;
			if (optarg != NULL)
				add_resync_tables(&opt, optarg);
			break;
		case OPT_FAILOVER:
			opt.failover = true;
			break;
		case OPT_NO_BINARY:
			opt.no_binary = true;
			break;
		case OPT_DROP_SLOT:
			drop_slot = true;
			break;
		case OPT_STATUS:
			status = true;
			break;
		case OPT_JSON:
		case OPT_PROMETHEUS:
			if (format != STATUS_TEXT)
				usage_error("%s", "--json and --prometheus do not go together");
			format = c == OPT_JSON ? STATUS_JSON : STATUS_PROMETHEUS;
			break;
		case OPT_VERIFY:
			opt.verify = true;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case OPT_FEED:
			if (*optarg == '\0')
				usage_error("%s", "--feed needs a directory");
			opt.feed_dir = optarg;
			break;
		case OPT_FROM:
			if (*optarg == '\0')
				usage_error("%s", "--from needs the feed's URL or directory");
			opt.feed_from = optarg;
			break;
		case OPT_FEED_SNAPSHOT:
			opt.feed_snapshot = true;
			break;
		case OPT_FEED_KEEP: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || v < 2 || v > 1000)
				usage_error("invalid --feed-keep \"%s\": expected a number of snapshots "
					    "from 2 to 1000", optarg);
			opt.feed_keep = (int)v;
			break;
		}
		case 's':
		case OPT_FEED_INTERVAL: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || v < 1 || v > 3600)
				usage_error("invalid %s \"%s\": expected whole seconds from 1 to 3600",
					    c == 's' ? "status interval" : "--feed-interval", optarg);
			if (c == 's')
				opt.status_interval = (int)v;
			else
				opt.feed_interval = (int)v;
			break;
		}
		case 'v':
			level = level < LOG_INFO ? LOG_INFO : LOG_DEBUG;
			break;
		case 'q':
			level = LOG_ERROR;
			break;
		case 'V':
			print_version();
			return EXIT_OK;
		case OPT_HELP:
			usage(stdout);
			return EXIT_OK;
		case '?':
			/* getopt's answer to an unknown option too, after its
			 * message: -? itself is told apart as psql does */
			if (strcmp(argv[optind - 1], "-?") == 0) {
				usage(stdout);
				return EXIT_OK;
			}
			fprintf(stderr, "Try \"pgmirror --help\" for more information.\n");
			return EXIT_USAGE;
		default:
			fprintf(stderr, "Try \"pgmirror --help\" for more information.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		usage_error("%s", "no mirror file given (pgmirror [OPTION]... MIRROR.db)");
	if (optind + 1 < argc) {
		/* a -d the shell split ("-d host=h password=pw"): the words left
		 * over may hold its password */
		for (int i = optind; i < argc; i++)
			session_hide_passwords(&(ConnParams){.dbname = argv[i]});
		usage_error("too many arguments: the mirror file is \"%s\", and \"%s\" is left "
			    "over", argv[optind], argv[optind + 1]);
	}
	opt.mirror_path = argv[optind];
	if (opt.mirror_path[0] == '\0')
		usage_error("%s", "the mirror file name is empty");
	if ((int)drop_slot + (int)status + (int)opt.verify + (int)check +
	    (int)(opt.once || opt.endpos != LSN_INVALID) > 1)
		usage_error("%s", "--drop-slot, --status, --check, --verify and --once/--endpos do "
			    "not go together");
	if (opt.once && opt.endpos != LSN_INVALID)
		usage_error("%s", "--once and --endpos do not go together");
	if (format != STATUS_TEXT && !status)
		usage_error("%s", "--json and --prometheus go only with --status");
	if (opt.resync && (drop_slot || status || opt.verify || check))
		usage_error("%s", "--resync does not go with --drop-slot, --status, --check or "
			    "--verify");
	/* a device reads the hub's feed: what concerns the source is the hub's */
	if (opt.feed_from != NULL) {
		const char *hub = opt.conn.dbname ? "-d" : opt.conn.host ? "-h" : opt.conn.port ? "-p"
			: opt.conn.user ? "-U" : opt.slot_given ? "-S" : opt.npubs > 0 ? "-P"
			: opt.feed_dir ? "--feed" : drop_slot ? "--drop-slot" : opt.verify ? "--verify"
			: opt.resync ? "--resync" : opt.failover ? "--failover"
			: opt.no_initial_copy ? "--no-initial-copy" : opt.no_binary ? "--no-binary"
			: opt.feed_snapshot ? "--feed-snapshot" : opt.feed_keep > 0 ? "--feed-keep"
			: opt.feed_interval > 0 ? "--feed-interval"
			: no_password ? "-w" : ask ? "-W" : NULL;

		if (hub != NULL)
			usage_error("%s does not go with --from: a device reads the feed, and the "
				    "source, its slot and its tables are the hub's (run %s on the hub)",
				    hub, hub);
		if (status || check)
			usage_error("%s", "--from does not go with --status or --check, which read the "
				    "mirror file alone");
	}
	if ((opt.feed_snapshot || opt.feed_keep > 0 || opt.feed_interval > 0) &&
	    opt.feed_dir == NULL)
		usage_error("%s", "--feed-snapshot, --feed-keep and --feed-interval go only with "
			    "--feed");
	if (opt.feed_dir != NULL && (drop_slot || status || check))
		usage_error("%s", "--feed does not go with --drop-slot, --status or --check");
	if (no_password && ask)
		usage_error("%s", "-w/--no-password and -W/--password do not go together");
	if ((status || check) && ask)
		usage_error("%s", "-W/--password does not go with --status or --check, which do not "
			    "connect");
	/* they read the file alone: an option that would go unheeded is refused */
	if ((status || check) && (opt.conn.dbname || opt.conn.host || opt.conn.port ||
				  opt.conn.user || no_password || opt.slot_given || opt.npubs > 0))
		usage_error("%s does not connect and reads the slot and the publications from the "
			    "mirror file: leave out -d, -h, -p, -U, -w, -S and -P",
			    status ? "--status" : "--check");
	log_set_level(level);
	session_hide_passwords(&opt.conn); /* PGPASSWORD, when no -d */
	if (dbname_pw)
		log_warning("%s", "a password in -d can be read by other users of this machine "
			    "while pgmirror starts; put it in a password file (~/.pgpass, or the "
			    "file PGPASSFILE names; under systemd, LoadCredential=) instead");
	if (opt.npubs > 1)
		qsort(opt.pubs, (size_t)opt.npubs, sizeof(char *), cmp_str);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handle_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* SIGHUP never ends pgmirror: it asks for the publications' check */
	sa.sa_handler = handle_check;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	notify_init();
	if (ask && (rc = ask_password(&opt, &password)) >= 0)
		return rc;

	if (status)
		rc = status_print(opt.mirror_path, format);
	else if (check)
		rc = replicate_check(opt.mirror_path);
	else if (drop_slot)
		rc = replicate_drop_slot(&opt);
	else if (opt.feed_from != NULL)
		rc = replicate_device(&opt);
	else
		rc = replicate_run(&opt);
	for (int i = 0; i < opt.nresync; i++)
		free(opt.resync_tables[i]);
	free(opt.resync_tables);
	for (int i = 0; i < opt.npubs; i++)
		free(opt.pubs[i]);
	free(opt.pubs);
	if (password != NULL) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	if (dbname != NULL) {
		explicit_bzero(dbname, strlen(dbname));
		free(dbname);
	}
	return rc;
}

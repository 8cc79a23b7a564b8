/*
 * test_session.c: what the session module can be tested on without a
 * server: binding values into the catalog SQL of a walsender connection
 * (session_sql_bind()), the catalog SQL as compiled in, the names of
 * temporary slots, and the secrets of the connection options (-d as a
 * message shows it, the passwords handed to the log to be masked).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/source/session_internal.h"

static void expect_bind(const char *sql, const char *const *args, int nargs,
			const char *want)
{
	char *got = session_sql_bind(sql, args, nargs);

	assert_string_equal(got, want);
	free(got);
}

static void test_sql_bind(void **state)
{
	const char *args[] = {"'a', 'b'", "NULL::text", "x\ny"};

	(void)state;
	expect_bind("", args, 3, "");
	expect_bind("SELECT 1", args, 3, "SELECT 1");
	expect_bind("WHERE n IN ($1)", args, 3, "WHERE n IN ('a', 'b')");
	expect_bind("$2 AS f, $2", args, 3, "NULL::text AS f, NULL::text");
	/* beyond the arguments given, and $0 or a lone $, stay as they are */
	expect_bind("$4 $0 $ $$", args, 3, "$4 $0 $ $$");
	expect_bind("$1", args, 0, "$1");
	/* $10 is $1 then 0: at most nine arguments */
	expect_bind("$10", args, 1, "'a', 'b'0");
	/* not inside a literal, a quoted name or a comment: a value with a
	 * newline must never end a comment early */
	expect_bind("'$1' \"$1\" $1", args, 1, "'$1' \"$1\" 'a', 'b'");
	expect_bind("'it''s $1' $1", args, 1, "'it''s $1' 'a', 'b'");
	expect_bind("-- where $3 goes\nSELECT $3", args, 3, "-- where $3 goes\nSELECT x\ny");
	expect_bind("SELECT 1 - -$1", args, 1, "SELECT 1 - -'a', 'b'");
	expect_bind("SELECT '--' || $2", args, 3, "SELECT '--' || NULL::text");
	/* a value is not looked into again */
	args[0] = "$2";
	expect_bind("$1", args, 3, "$2");
}

/* Each catalog query as compiled in has the placeholders its caller binds
 * and no others, outside its comments. */
static void test_sql_placeholders(void **state)
{
	static const struct {
		const char *sql;
		int nargs;
	} queries[] = {
		{session_sql_tables, 9},
		{session_sql_slot, 4},
		{session_sql_missing_publications, 1},
		{session_sql_type, 1},
		{session_sql_column_fill, 2},
		{session_sql_column_attnums, 1},
		{session_sql_relation_name, 1},
	};
	const char *marks[] = {"<1>", "<2>", "<3>", "<4>", "<5>", "<6>", "<7>", "<8>", "<9>"};

	(void)state;
	for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
		char *bound = session_sql_bind(queries[q].sql, marks, 9);

		for (int i = 0; i < 9; i++) {
			if (i < queries[q].nargs)
				assert_non_null(strstr(bound, marks[i]));
			else
				assert_null(strstr(bound, marks[i]));
		}
		free(bound);
	}
}

/* A temporary slot's name: the mirror's slot (cut short), what for and 16
 * random hex digits, a valid slot name within 63 bytes; never the same
 * twice, whatever the pid. */
static void test_temp_slot_name(void **state)
{
	char a[SLOT_NAME_SIZE], b[SLOT_NAME_SIZE], base[80];
	size_t n;

	(void)state;
	session_temp_slot_name("pgmirror", "sync", a);
	session_temp_slot_name("pgmirror", "sync", b);
	assert_int_equal(strlen(a), strlen("pgmirror_sync_") + 16);
	assert_memory_equal(a, "pgmirror_sync_", 14);
	assert_int_equal(strspn(a + 14, "0123456789abcdef"), 16);
	assert_string_not_equal(a, b);
	memset(base, 'x', 63);
	base[63] = '\0';
	session_temp_slot_name(base, "verify", a);
	n = strlen(a);
	assert_int_equal(n, 63);
	assert_memory_equal(a + n - 24, "_verify_", 8);
	assert_int_equal(strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789_"), n);
}

static void expect_shown(const char *dbname, const char *want)
{
	char *got = session_conninfo_shown(dbname);

	assert_string_equal(got, want);
	free(got);
}

/*
 * -d as a command in a message shows it: the secrets masked in libpq's
 * parse, before the value is quoted, whatever form they were written in
 * (a quote once came out as '\'' around the mask's reach, and an escaped
 * blank left the value's tail); the rest as libpq reads it back.
 */
static void test_conninfo_shown(void **state)
{
	PQconninfoOption *opts;
	char *shown;

	(void)state;
	expect_shown("shop", "shop");
	expect_shown("dbname=d password='Sup3r\\'Secret'", "password=******** dbname=d");
	expect_shown("postgresql://u:Pass'word@h/d", "user=u password=******** dbname=d host=h");
	expect_shown("postgres://u:Pass%27word@h/d", "user=u password=******** dbname=d host=h");
	expect_shown("dbname=d password=Secr\\ etTail", "password=******** dbname=d");
	expect_shown("postgresql://h/d?password=Qu3ry&sslpassword=K3y",
		     "password=******** dbname=d host=h sslpassword=********");
	expect_shown("dbname='my db' password=''", "password=******** dbname='my db'");
	/* libpq cannot parse it: nothing of it shows */
	expect_shown("password=Sup3r junk", "********");
	expect_shown("postgresql://u:Sup3r@[h/d", "********");
	/* a quote or backslash in another value: quoted back as libpq reads it */
	shown = session_conninfo_shown("dbname=it\\'s\\\\ host=h");
	assert_string_equal(shown, "dbname='it\\'s\\\\' host=h");
	opts = PQconninfoParse(shown, NULL);
	assert_non_null(opts);
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "dbname") == 0)
			assert_string_equal(o->val, "it's\\");
	PQconninfoFree(opts);
	free(shown);
}

/*
 * The passwords of -d are masked in every form a text can hold them: as
 * written (quoted, escaped, percent-encoded) and as libpq reads them; the
 * command line's copy is blanked whole, an escaped blank included.
 */
static void test_hide_passwords(void **state)
{
	ConnParams kw = {.dbname = "host=h password=Jm5\\ Tp2 sslpassword='K q' dbname=d"};
	ConnParams uri = {.dbname = "postgresql://u:Kw4'Vy%38@h/d"};
	char arg[] = "host=h password=Jm5\\ Tp2 sslpassword='K q' dbname=d";
	char *clean;

	(void)state;
	assert_true(session_hide_passwords(&kw));
	assert_true(session_hide_passwords(&uri));
	log_blank(arg);
	assert_string_equal(arg, "host=h password=******** sslpassword='***' dbname=d");
	clean = log_clean("a Jm5 Tp2 b Jm5\\ Tp2 c K q d Kw4'Vy8 e Kw4'Vy%38");
	assert_string_equal(clean, "a ******** b ******** c ******** d ******** e ********");
	free(clean);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sql_bind),
		cmocka_unit_test(test_sql_placeholders),
		cmocka_unit_test(test_temp_slot_name),
		cmocka_unit_test(test_conninfo_shown),
		cmocka_unit_test(test_hide_passwords),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

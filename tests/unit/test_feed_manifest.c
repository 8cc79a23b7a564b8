/*
 * test_feed_manifest.c: manifest.json (src/feed/feed_manifest.c,
 * feed_manifest_write.c): a manifest written by hand from docs/feed.md
 * read member by member; the writer's text, read back equal; each way a
 * manifest is refused (does not parse, another format or version, a
 * member missing, of another type or out of range, an epoch, digest,
 * position, time or name of another shape, segments out of order or with
 * a gap, bounds and snapshots that make no sense) with its exact message,
 * made from the good text by one change; unknown members and "expires".
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pgmirror/feed_manifest.h"

#define EPOCH "5f0c2d6e9b1a47c3a8e4d2b6c9f01a37"
#define TAIL "0123456789abcdef0123456789abcdef0123456789abcdef"
#define SHA_A "9c1e55d0a3b2f417" TAIL
#define SHA_B "aaaabbbbccccdddd" TAIL
#define SHA_C "2b7d0c9e1a4f8e36" TAIL
#define SHA_D "3c3c3c3c3c3c3c3c" TAIL
#define SEG_A "seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f417.pgmf.zst"
#define SEG_B "seg/" EPOCH "/00000000000010a8-00000000000013f8-aaaabbbbccccdddd.pgmf.zst"
#define SNAP_C "snap/" EPOCH "/0000000000000f42-2b7d0c9e1a4f8e36.sqlite.zst"
#define SNAP_D "snap/" EPOCH "/00000000000010a7-3c3c3c3c3c3c3c3c.sqlite.zst"

/* Two segments (groups 3907 to 4263 and 4264 to 5112), two snapshots
 * (after 3906 and 4263). */
static const char good[] =
	"{\n"
	"  \"format\": \"pgmirror-feed\",\n"
	"  \"version\": 1,\n"
	"  \"source\": {\n"
	"    \"system_identifier\": \"7412345678901234567\",\n"
	"    \"database\": \"shop\",\n"
	"    \"slot\": \"shop_hub\",\n"
	"    \"publications\": [\"orders\", \"shop\"]\n"
	"  },\n"
	"  \"epoch\": \"" EPOCH "\",\n"
	"  \"seq\": 1841,\n"
	"  \"issued_at\": \"2026-12-07T18:02:11Z\",\n"
	"  \"server_version\": 150018,\n"
	"  \"end\": {\"group\": 5112, \"lsn\": \"0/3A2F1C8\", \"time\": \"2026-12-07T18:02:10.448Z\"},\n"
	"  \"oldest\": {\"group\": 3907, \"lsn\": \"0/2F00A10\"},\n"
	"  \"segments\": [\n"
	"    {\"name\": \"" SEG_A "\",\n"
	"     \"first_group\": 3907, \"last_group\": 4263,\n"
	"     \"start_lsn\": \"0/2F00A10\", \"end_lsn\": \"0/31AA4F0\",\n"
	"     \"size\": 1048211, \"raw_size\": 6291488,\n"
	"     \"sha256\": \"" SHA_A "\"},\n"
	"    {\"name\": \"" SEG_B "\",\n"
	"     \"first_group\": 4264, \"last_group\": 5112,\n"
	"     \"start_lsn\": \"0/31AA4F0\", \"end_lsn\": \"0/3A2F1C8\",\n"
	"     \"size\": 2000, \"raw_size\": 9000,\n"
	"     \"sha256\": \"" SHA_B "\"}\n"
	"  ],\n"
	"  \"snapshots\": [\n"
	"    {\"name\": \"" SNAP_C "\",\n"
	"     \"group\": 3906, \"lsn\": \"0/2F00A10\",\n"
	"     \"size\": 18874112, \"raw_size\": 80211968,\n"
	"     \"sha256\": \"" SHA_C "\"},\n"
	"    {\"name\": \"" SNAP_D "\",\n"
	"     \"group\": 4263, \"lsn\": \"0/31AA4F0\",\n"
	"     \"size\": 100, \"raw_size\": 4096,\n"
	"     \"sha256\": \"" SHA_D "\"}\n"
	"  ]\n"
	"}\n";

/* good with the first from replaced by to (which must be there). */
static char *mutate(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out;

	if (at == NULL)
		fail_msg("no \"%s\" in the manifest", from);
	out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	return out;
}

static void assert_good(const FeedManifest *m)
{
	assert_string_equal(m->source.system_identifier, "7412345678901234567");
	assert_string_equal(m->source.database, "shop");
	assert_string_equal(m->source.slot, "shop_hub");
	assert_int_equal(m->source.npublications, 2);
	assert_string_equal(m->source.publications[0], "orders");
	assert_string_equal(m->source.publications[1], "shop");
	assert_string_equal(m->epoch, EPOCH);
	assert_int_equal(m->seq, 1841);
	assert_int_equal(m->issued_at, INT64_C(849981731000000));
	assert_int_equal(m->server_version, 150018);
	assert_int_equal(m->end_group, 5112);
	assert_int_equal(m->end_lsn, 0x3A2F1C8);
	assert_int_equal(m->end_time, INT64_C(849981730448000));
	assert_int_equal(m->oldest_group, 3907);
	assert_int_equal(m->oldest_lsn, 0x2F00A10);
	assert_int_equal(m->nsegments, 2);
	assert_string_equal(m->segments[0].name, SEG_A);
	assert_int_equal(m->segments[0].first_group, 3907);
	assert_int_equal(m->segments[0].last_group, 4263);
	assert_int_equal(m->segments[0].start_lsn, 0x2F00A10);
	assert_int_equal(m->segments[0].end_lsn, 0x31AA4F0);
	assert_int_equal(m->segments[0].size, 1048211);
	assert_int_equal(m->segments[0].raw_size, 6291488);
	assert_string_equal(m->segments[0].sha256, SHA_A);
	assert_string_equal(m->segments[1].name, SEG_B);
	assert_int_equal(m->segments[1].last_group, 5112);
	assert_int_equal(m->nsnapshots, 2);
	assert_string_equal(m->snapshots[0].name, SNAP_C);
	assert_int_equal(m->snapshots[0].group, 3906);
	assert_int_equal(m->snapshots[0].lsn, 0x2F00A10);
	assert_int_equal(m->snapshots[0].size, 18874112);
	assert_int_equal(m->snapshots[0].raw_size, 80211968);
	assert_string_equal(m->snapshots[0].sha256, SHA_C);
	assert_int_equal(m->snapshots[1].group, 4263);
	assert_false(m->has_expires);
}

static void test_parse_good(void **state)
{
	FeedManifest m;
	ErrBuf err;

	if (!feed_manifest_parse(good, strlen(good), &m, &err))
		fail_msg("%s", err.text);
	assert_good(&m);
	assert_int_equal(feed_manifest_find_segment(&m, 3906), -1);
	assert_int_equal(feed_manifest_find_segment(&m, 3907), 0);
	assert_int_equal(feed_manifest_find_segment(&m, 4263), 0);
	assert_int_equal(feed_manifest_find_segment(&m, 4264), 1);
	assert_int_equal(feed_manifest_find_segment(&m, 5112), 1);
	assert_int_equal(feed_manifest_find_segment(&m, 5113), -1);
	feed_manifest_free(&m);
}

static void test_write_reads_back(void **state)
{
	FeedManifest m, back;
	ErrBuf err;
	char *text, *again;

	assert_true(feed_manifest_parse(good, strlen(good), &m, &err));
	if (!feed_manifest_write(&m, &text, &err))
		fail_msg("%s", err.text);
	/* one member a line, in the documented order, no blank at a line's end */
	assert_non_null(strstr(text, "{\n  \"format\": \"pgmirror-feed\",\n  \"version\": 1,\n"
			       "  \"source\": {\n    \"system_identifier\": \"7412345678901234567\","));
	assert_non_null(strstr(text, "\"end\": {\n    \"group\": 5112,\n    \"lsn\": \"0/3A2F1C8\",\n"
			       "    \"time\": \"2026-12-07T18:02:10.448Z\"\n  },"));
	assert_null(strstr(text, " \n"));
	assert_int_equal(text[strlen(text) - 1], '\n');
	if (!feed_manifest_parse(text, strlen(text), &back, &err))
		fail_msg("%s", err.text);
	assert_good(&back);
	/* the writer's text is a fixed point */
	assert_true(feed_manifest_write(&back, &again, &err));
	assert_string_equal(text, again);
	free(again);
	feed_manifest_free(&back);
	free(text);

	/* no time at the end, an expiry, no segment, one snapshot */
	m.end_time = 0;
	m.has_expires = true;
	m.expires = INT64_C(849981731000001);
	m.nsnapshots = 1;
	m.end_group = 4263;
	m.end_lsn = 0x31AA4F0;
	m.oldest_group = 4264;
	m.oldest_lsn = 0x31AA4F0;
	for (int i = 0; i < m.nsegments; i++)
		free(m.segments[i].name);
	m.nsegments = 0;
	free(m.snapshots[0].name);
	m.snapshots[0] = m.snapshots[1];
	if (!feed_manifest_write(&m, &text, &err))
		fail_msg("%s", err.text);
	assert_non_null(strstr(text, "\"time\": null"));
	assert_non_null(strstr(text, "\"expires\": \"2026-12-07T18:02:11.000001Z\""));
	assert_non_null(strstr(text, "\"segments\": []"));
	assert_true(feed_manifest_parse(text, strlen(text), &back, &err));
	assert_int_equal(back.end_time, 0);
	assert_true(back.has_expires);
	assert_int_equal(back.expires, INT64_C(849981731000001));
	assert_int_equal(back.nsegments, 0);
	assert_int_equal(back.nsnapshots, 1);
	feed_manifest_free(&back);
	free(text);
	feed_manifest_free(&m);
}

static void test_write_refusals(void **state)
{
	FeedManifest m;
	ErrBuf err;
	char *text;

	assert_true(feed_manifest_parse(good, strlen(good), &m, &err));
	m.seq = UINT64_C(1) << 53;
	assert_false(feed_manifest_write(&m, &text, &err));
	assert_null(text);
	assert_string_equal(err.text, "could not write the manifest: member \"seq\" is "
			    "9007199254740992, past 2^53 - 1");
	m.seq = 1;
	m.segments[1].raw_size = UINT64_MAX;
	assert_false(feed_manifest_write(&m, &text, &err));
	assert_string_equal(err.text, "could not write the manifest: member \"segments[1].raw_size\" "
			    "is 18446744073709551615, past 2^53 - 1");
	m.segments[1].raw_size = 1;
	free(m.source.database);
	m.source.database = strdup("sh\xffop");
	assert_false(feed_manifest_write(&m, &text, &err));
	assert_string_equal(err.text, "could not write the manifest: member \"source.database\" is "
			    "not valid UTF-8");
	free(m.source.database);
	m.source.database = strdup("shop");
	m.issued_at = INT64_MAX;
	assert_false(feed_manifest_write(&m, &text, &err));
	assert_string_equal(err.text, "could not write the manifest: member \"issued_at\" is not a "
			    "time in the years 1 to 9999");
	m.issued_at = 0;
	/* what a reader refuses, the writer refuses */
	m.segments[1].first_group = 4265;
	assert_false(feed_manifest_write(&m, &text, &err));
	assert_string_equal(err.text, "invalid manifest: member \"segments[1].name\" does not match "
			    "its epoch, groups and sha256");
	feed_manifest_free(&m);
}

/* good, changed from -> to, is refused with exactly want. */
static void assert_refused(const char *from, const char *to, const char *want)
{
	char *text = mutate(good, from, to);
	FeedManifest m;
	ErrBuf err;

	if (feed_manifest_parse(text, strlen(text), &m, &err))
		fail_msg("taken with \"%s\" for \"%s\"", to, from);
	if (strcmp(err.text, want) != 0)
		fail_msg("\"%s\" for \"%s\":\n got \"%s\"\nwant \"%s\"", to, from, err.text, want);
	feed_manifest_free(&m);
	free(text);
}

/* Refused as text that does not parse: jansson's own words (its version's)
 * follow our prefix; they must name what and where. */
static void assert_unparsed(const char *from, const char *to, const char *what,
			    const char *where)
{
	static const char prefix[] = "invalid manifest: it does not parse as JSON: ";
	char *text = mutate(good, from, to);
	FeedManifest m;
	ErrBuf err;

	assert_false(feed_manifest_parse(text, strlen(text), &m, &err));
	if (strncmp(err.text, prefix, strlen(prefix)) != 0 || strstr(err.text, what) == NULL ||
	    strstr(err.text, where) == NULL)
		fail_msg("\"%s\" for \"%s\": \"%s\"", to, from, err.text);
	feed_manifest_free(&m);
	free(text);
}

static void test_refused_parse(void **state)
{
	FeedManifest m;
	ErrBuf err;
	char *big;

	assert_unparsed("{\n  \"format\"", "[\n  \"format\"", "expected", "(line 2, column ");
	assert_unparsed("\"seq\": 1841,", "\"seq\": 1841, \"seq\": 1842,", "duplicate",
			"(line 11, column ");
	assert_unparsed("  ]\n}\n", "  ]\n}\n{}", "end of file expected", "(line 39, column ");
	assert_false(feed_manifest_parse("[]", 2, &m, &err));
	assert_string_equal(err.text, "invalid manifest: it is not a JSON object");
	feed_manifest_free(&m);
	assert_false(feed_manifest_parse("", 0, &m, &err));
	assert_non_null(strstr(err.text, "invalid manifest: it does not parse as JSON: "));
	big = calloc(1, FEED_MANIFEST_MAX + 2);
	memset(big, ' ', FEED_MANIFEST_MAX + 1);
	assert_false(feed_manifest_parse(big, FEED_MANIFEST_MAX + 1, &m, &err));
	assert_string_equal(err.text, "invalid manifest: 16777217 bytes, more than 16777216");
	free(big);
	/* a NUL inside a string */
	assert_unparsed("\"shop_hub\"", "\"shop\\u0000hub\"", "\\u0000", "(line 7, column ");
}

static void test_refused_format(void **state)
{
	assert_refused("\"pgmirror-feed\"", "\"pgmirror-feeds\"",
		       "invalid manifest: member \"format\" is not \"pgmirror-feed\"");
	assert_refused("\"version\": 1", "\"version\": 2",
		       "invalid manifest: version 2 (this pgmirror reads version 1: a later "
		       "pgmirror is needed)");
	assert_refused("\"version\": 1", "\"version\": \"1\"",
		       "invalid manifest: member \"version\" is not an integer");
	assert_refused("\"version\": 1", "\"version\": 1.0",
		       "invalid manifest: member \"version\" is not an integer");
}

static void test_refused_missing(void **state)
{
	static const struct {
		const char *from, *to, *name;
	} cases[] = {
		{"\"format\": \"pgmirror-feed\",", "", "format"},
		{"\"version\": 1,", "", "version"},
		{"\"system_identifier\": \"7412345678901234567\",", "", "source.system_identifier"},
		{"\"database\": \"shop\",", "", "source.database"},
		{"\"slot\": \"shop_hub\",", "", "source.slot"},
		{",\n    \"publications\": [\"orders\", \"shop\"]", "", "source.publications"},
		{"\"source\"", "\"sources\"", "source"},
		{"\"epoch\"", "\"epoch_\"", "epoch"},
		{"\"seq\"", "\"seq_\"", "seq"},
		{"\"issued_at\"", "\"issued\"", "issued_at"},
		{"\"server_version\"", "\"server\"", "server_version"},
		{"\"end\"", "\"end_\"", "end"},
		{"{\"group\": 5112, ", "{", "end.group"},
		{"\"lsn\": \"0/3A2F1C8\", ", "", "end.lsn"},
		{", \"time\": \"2026-12-07T18:02:10.448Z\"", "", "end.time"},
		{"\"oldest\"", "\"old\"", "oldest"},
		{"{\"group\": 3907, ", "{", "oldest.group"},
		{", \"lsn\": \"0/2F00A10\"}", "}", "oldest.lsn"},
		{"\"segments\"", "\"segs\"", "segments"},
		{"\"name\": \"" SEG_A "\",", "", "segments[0].name"},
		{"\"first_group\": 4264, ", "", "segments[1].first_group"},
		{"\"last_group\": 4263,", "", "segments[0].last_group"},
		{"\"start_lsn\": \"0/2F00A10\", ", "", "segments[0].start_lsn"},
		{", \"end_lsn\": \"0/31AA4F0\"", "", "segments[0].end_lsn"},
		{"\"size\": 1048211, ", "", "segments[0].size"},
		{", \"raw_size\": 6291488", "", "segments[0].raw_size"},
		{",\n     \"sha256\": \"" SHA_B "\"", "", "segments[1].sha256"},
		{"\"snapshots\"", "\"snaps\"", "snapshots"},
		{"\"name\": \"" SNAP_C "\",", "", "snapshots[0].name"},
		{"\"group\": 3906, ", "", "snapshots[0].group"},
		{", \"lsn\": \"0/2F00A10\",\n     \"size\": 18874112", ",\n     \"size\": 18874112",
		 "snapshots[0].lsn"},
		{"\"size\": 100, ", "", "snapshots[1].size"},
		{", \"raw_size\": 4096", "", "snapshots[1].raw_size"},
		{",\n     \"sha256\": \"" SHA_C "\"", "", "snapshots[0].sha256"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char want[128];

		snprintf(want, sizeof want, "invalid manifest: member \"%s\" is missing",
			 cases[i].name);
		assert_refused(cases[i].from, cases[i].to, want);
	}
}

static void test_refused_types(void **state)
{
	assert_refused("\"seq\": 1841", "\"seq\": \"1841\"",
		       "invalid manifest: member \"seq\" is not an integer");
	assert_refused("\"seq\": 1841", "\"seq\": null",
		       "invalid manifest: member \"seq\" is not an integer");
	assert_refused("\"source\": {", "\"source\": [], \"x\": {",
		       "invalid manifest: member \"source\" is not an object");
	assert_refused("\"database\": \"shop\"", "\"database\": 5",
		       "invalid manifest: member \"source.database\" is not a string");
	assert_refused("[\"orders\", \"shop\"]", "\"orders\"",
		       "invalid manifest: member \"source.publications\" is not an array");
	assert_refused("[\"orders\", \"shop\"]", "[\"orders\", 7]",
		       "invalid manifest: member \"source.publications[1]\" is not a string");
	assert_refused("\"segments\": [", "\"segments\": [7, ",
		       "invalid manifest: member \"segments[0]\" is not an object");
	assert_refused("\"snapshots\": [\n", "\"snapshots\": {}, \"x\": [\n",
		       "invalid manifest: member \"snapshots\" is not an array");
	assert_refused("\"time\": \"2026-12-07T18:02:10.448Z\"", "\"time\": 5",
		       "invalid manifest: member \"end.time\" is not a string");
	assert_refused("\"end\": {\"group\": 5112", "\"end\": 5, \"x\": {\"group\": 5112",
		       "invalid manifest: member \"end\" is not an object");
	assert_refused("\"first_group\": 3907", "\"first_group\": true",
		       "invalid manifest: member \"segments[0].first_group\" is not an integer");
}

static void test_refused_ranges(void **state)
{
	assert_refused("\"seq\": 1841", "\"seq\": -1",
		       "invalid manifest: member \"seq\" is out of range: -1");
	assert_refused("\"seq\": 1841", "\"seq\": 9007199254740992",
		       "invalid manifest: member \"seq\" is out of range: 9007199254740992");
	assert_refused("\"size\": 2000", "\"size\": 9223372036854775807",
		       "invalid manifest: member \"segments[1].size\" is out of range: "
		       "9223372036854775807");
	assert_unparsed("\"seq\": 1841", "\"seq\": 92233720368547758070", "too big integer",
			"(line 11, column ");
	assert_refused("\"server_version\": 150018", "\"server_version\": 2147483648",
		       "invalid manifest: member \"server_version\" is out of range: 2147483648");
	assert_refused("{\"group\": 3907", "{\"group\": -3907",
		       "invalid manifest: member \"oldest.group\" is out of range: -3907");
}

static void test_refused_shapes(void **state)
{
	assert_refused("\"epoch\": \"5f0c", "\"epoch\": \"5F0c",
		       "invalid manifest: member \"epoch\" is not 32 lower-case hex digits");
	assert_refused("\"epoch\": \"5f0c", "\"epoch\": \"5f0",
		       "invalid manifest: member \"epoch\" is not 32 lower-case hex digits");
	assert_refused("\"sha256\": \"9c1e", "\"sha256\": \"9C1e",
		       "invalid manifest: member \"segments[0].sha256\" is not 64 lower-case hex "
		       "digits");
	assert_refused("\"sha256\": \"3c3c", "\"sha256\": \"3c3",
		       "invalid manifest: member \"snapshots[1].sha256\" is not 64 lower-case hex "
		       "digits");
	assert_refused("\"lsn\": \"0/3A2F1C8\"", "\"lsn\": \"0x3A2F1C8\"",
		       "invalid manifest: member \"end.lsn\" is not a position (X/Y in hex)");
	assert_refused("\"end_lsn\": \"0/31AA4F0\"", "\"end_lsn\": \"0/31AA4F0 \"",
		       "invalid manifest: member \"segments[0].end_lsn\" is not a position (X/Y in "
		       "hex)");
	assert_refused("\"lsn\": \"0/2F00A10\"}", "\"lsn\": \"/\"}",
		       "invalid manifest: member \"oldest.lsn\" is not a position (X/Y in hex)");
	assert_refused("\"2026-12-07T18:02:11Z\"", "\"2026-12-07 18:02:11Z\"",
		       "invalid manifest: member \"issued_at\" is not a UTC time "
		       "(YYYY-MM-DDTHH:MM:SS[.ffffff]Z)");
	assert_refused("\"2026-12-07T18:02:10.448Z\"", "\"2026-02-30T18:02:10.448Z\"",
		       "invalid manifest: member \"end.time\" is not a UTC time "
		       "(YYYY-MM-DDTHH:MM:SS[.ffffff]Z)");
	assert_refused("\"2026-12-07T18:02:11Z\",", "\"2026-12-07T18:02:11Z\", \"expires\": 5,",
		       "invalid manifest: member \"expires\" is not a string");
	assert_refused("\"2026-12-07T18:02:11Z\",", "\"2026-12-07T18:02:11Z\", \"expires\": \"x\",",
		       "invalid manifest: member \"expires\" is not a UTC time "
		       "(YYYY-MM-DDTHH:MM:SS[.ffffff]Z)");
	assert_refused("\"7412345678901234567\"", "\"74123456789012345x\"",
		       "invalid manifest: member \"source.system_identifier\" is not a system "
		       "identifier (1 to 20 decimal digits)");
	assert_refused("\"database\": \"shop\"", "\"database\": \"\"",
		       "invalid manifest: member \"source.database\" is empty");
	assert_refused("[\"orders\", \"shop\"]", "[\"shop\", \"orders\"]",
		       "invalid manifest: member \"source.publications\" is not sorted, or names a "
		       "publication twice");
	assert_refused("[\"orders\", \"shop\"]", "[\"shop\", \"shop\"]",
		       "invalid manifest: member \"source.publications\" is not sorted, or names a "
		       "publication twice");
	assert_refused("[\"orders\", \"shop\"]", "[]",
		       "invalid manifest: member \"source.publications\" is empty");
}

static void test_refused_names(void **state)
{
	static const char seg_shape[] = "invalid manifest: member \"segments[0].name\" is not a "
					"segment's name (seg/EPOCH/FIRST-LAST-HASH.pgmf.zst)";
	static const char seg_match[] = "invalid manifest: member \"segments[0].name\" does not "
					"match its epoch, groups and sha256";

	assert_refused(SEG_A, "../" SEG_A, seg_shape);
	assert_refused(SEG_A, "/" SEG_A, seg_shape);
	assert_refused(SEG_A, "seg/" EPOCH "/../../etc/passwd", seg_shape);
	assert_refused(SEG_A, "seg/" EPOCH "/0000000000000F43-00000000000010a7-9c1e55d0a3b2f417"
		       ".pgmf.zst", seg_shape);
	assert_refused(SEG_A, SNAP_C, seg_shape);
	assert_refused(SEG_A, "seg/00000000000000000000000000000000/0000000000000f43-"
		       "00000000000010a7-9c1e55d0a3b2f417.pgmf.zst", seg_match);
	assert_refused(SEG_A, "seg/" EPOCH "/0000000000000f44-00000000000010a7-9c1e55d0a3b2f417"
		       ".pgmf.zst", seg_match);
	assert_refused(SEG_A, "seg/" EPOCH "/0000000000000f43-00000000000010a6-9c1e55d0a3b2f417"
		       ".pgmf.zst", seg_match);
	assert_refused(SEG_A, "seg/" EPOCH "/0000000000000f43-00000000000010a7-9c1e55d0a3b2f418"
		       ".pgmf.zst", seg_match);
	assert_refused(SNAP_D, "snap/" EPOCH "/00000000000010a8-3c3c3c3c3c3c3c3c.sqlite.zst",
		       "invalid manifest: member \"snapshots[1].name\" does not match its epoch, "
		       "groups and sha256");
	assert_refused(SNAP_D, SEG_B, "invalid manifest: member \"snapshots[1].name\" is not a "
		       "snapshot's name (snap/EPOCH/GROUP-HASH.sqlite.zst)");
}

static void test_refused_order(void **state)
{
	/* a gap in groups, a gap in positions, a segment backwards */
	assert_refused("\"first_group\": 4264", "\"first_group\": 4265",
		       "invalid manifest: member \"segments[1].name\" does not match its epoch, "
		       "groups and sha256");
	assert_refused(SEG_B "\",\n     \"first_group\": 4264",
		       "seg/" EPOCH "/00000000000010a9-00000000000013f8-aaaabbbbccccdddd.pgmf.zst"
		       "\",\n     \"first_group\": 4265",
		       "invalid manifest: segments[1] begins at group 4265 at 0/31AA4F0; after "
		       "segments[0], group 4264 at 0/31AA4F0 is due");
	assert_refused("\"start_lsn\": \"0/31AA4F0\"", "\"start_lsn\": \"0/31AA4F1\"",
		       "invalid manifest: segments[1] begins at group 4264 at 0/31AA4F1; after "
		       "segments[0], group 4264 at 0/31AA4F0 is due");
	assert_refused("\"end_lsn\": \"0/31AA4F0\"", "\"end_lsn\": \"0/2F00A0F\"",
		       "invalid manifest: segments[0] holds groups 3907 to 4263 from 0/2F00A10 to "
		       "0/2F00A0F");
	/* oldest and end */
	assert_refused("{\"group\": 3907", "{\"group\": 3908",
		       "invalid manifest: oldest (group 3908 at 0/2F00A10) is not where segments[0] "
		       "begins (group 3907 at 0/2F00A10)");
	assert_refused("{\"group\": 5112", "{\"group\": 5111",
		       "invalid manifest: end (group 5111 at 0/3A2F1C8) is not where the last "
		       "segment ends (group 5112 at 0/3A2F1C8)");
	assert_refused("\"lsn\": \"0/3A2F1C8\"", "\"lsn\": \"0/3A2F1C9\"",
		       "invalid manifest: end (group 5112 at 0/3A2F1C9) is not where the last "
		       "segment ends (group 5112 at 0/3A2F1C8)");
	/* snapshots */
	assert_refused("\"group\": 4263, \"lsn\": \"0/31AA4F0\"",
		       "\"group\": 3906, \"lsn\": \"0/31AA4F0\"",
		       "invalid manifest: member \"snapshots[1].name\" does not match its epoch, "
		       "groups and sha256");
}

/* The good manifest with its snapshots replaced by one after group g at
 * position lsn. */
static void assert_snapshot_refused(uint64_t g, const char *lsn, const char *want)
{
	char name[128], repl[512], *text;
	const char *from = strstr(good, "  \"snapshots\": [");
	char *head = strndup(good, (size_t)(from - good));
	FeedManifest m;
	ErrBuf err;

	snprintf(name, sizeof name, "snap/" EPOCH "/%016llx-3c3c3c3c3c3c3c3c.sqlite.zst",
		 (unsigned long long)g);
	snprintf(repl, sizeof repl, "  \"snapshots\": [{\"name\": \"%s\", \"group\": %llu, "
		 "\"lsn\": \"%s\", \"size\": 1, \"raw_size\": 1, \"sha256\": \"" SHA_D "\"}]\n}\n",
		 name, (unsigned long long)g, lsn);
	text = malloc(strlen(head) + strlen(repl) + 1);
	strcpy(text, head);
	strcat(text, repl);
	if (want == NULL) {
		if (!feed_manifest_parse(text, strlen(text), &m, &err))
			fail_msg("%s", err.text);
	} else {
		assert_false(feed_manifest_parse(text, strlen(text), &m, &err));
		assert_string_equal(err.text, want);
	}
	feed_manifest_free(&m);
	free(text);
	free(head);
}

static void test_refused_snapshots(void **state)
{
	assert_snapshot_refused(3906, "0/2F00A10", NULL);
	assert_snapshot_refused(5112, "0/3A2F1C8", NULL);
	assert_snapshot_refused(3905, "0/2F00A10",
				"invalid manifest: snapshots[0] (after group 3905) is not between "
				"the group before oldest (3906) and end (5112)");
	assert_snapshot_refused(5113, "0/3A2F1C8",
				"invalid manifest: snapshots[0] (after group 5113) is not between "
				"the group before oldest (3906) and end (5112)");
	assert_snapshot_refused(5112, "0/3A2F1C9",
				"invalid manifest: snapshots[0] (after group 5112) is not between "
				"the group before oldest (3906) and end (5112)");
	/* two snapshots of one group */
	{
		FeedManifest m;
		ErrBuf err;

		assert_true(feed_manifest_parse(good, strlen(good), &m, &err));
		free(m.snapshots[1].name);
		m.snapshots[1] = m.snapshots[0];
		m.snapshots[1].name = strdup(m.snapshots[0].name);
		assert_false(feed_manifest_check(&m, &err));
		assert_string_equal(err.text, "invalid manifest: snapshots[1] (after group 3906) is "
				    "not newer than snapshots[0] (after group 3906)");
		feed_manifest_free(&m);
	}
}

static void test_no_segments(void **state)
{
	static const char bare[] =
		"{\"format\": \"pgmirror-feed\", \"version\": 1, \"source\": "
		"{\"system_identifier\": \"1\", \"database\": \"d\", \"slot\": \"s\", "
		"\"publications\": [\"p\"]}, \"epoch\": \"" EPOCH "\", \"seq\": 0, "
		"\"issued_at\": \"2026-12-07T18:02:11Z\", \"server_version\": 100000, "
		"\"end\": {\"group\": 0, \"lsn\": \"0/10\", \"time\": null}, "
		"\"oldest\": {\"group\": 1, \"lsn\": \"0/10\"}, \"segments\": [], \"snapshots\": [], "
		"\"future\": {\"anything\": [1, 2.5, null]}}";
	FeedManifest m;
	ErrBuf err;
	char *text;

	if (!feed_manifest_parse(bare, strlen(bare), &m, &err))
		fail_msg("%s", err.text);
	assert_int_equal(m.end_group, 0);
	assert_int_equal(m.end_time, 0);
	assert_int_equal(m.nsegments, 0);
	assert_int_equal(m.nsnapshots, 0);
	assert_int_equal(feed_manifest_find_segment(&m, 1), -1);
	feed_manifest_free(&m);
	text = mutate(bare, "\"oldest\": {\"group\": 1", "\"oldest\": {\"group\": 2");
	assert_false(feed_manifest_parse(text, strlen(text), &m, &err));
	assert_string_equal(err.text, "invalid manifest: with no segment, oldest (group 2 at 0/10) "
			    "must be the group after end (group 0 at 0/10)");
	feed_manifest_free(&m);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_write_reads_back),
		cmocka_unit_test(test_write_refusals),
		cmocka_unit_test(test_refused_parse),
		cmocka_unit_test(test_refused_format),
		cmocka_unit_test(test_refused_missing),
		cmocka_unit_test(test_refused_types),
		cmocka_unit_test(test_refused_ranges),
		cmocka_unit_test(test_refused_shapes),
		cmocka_unit_test(test_refused_names),
		cmocka_unit_test(test_refused_order),
		cmocka_unit_test(test_refused_snapshots),
		cmocka_unit_test(test_no_segments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

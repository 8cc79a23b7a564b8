/*
 * test_feed_file.c: the feed's files on disk (src/feed/feed_file.c), in a
 * directory of its own under $TMPDIR: SHA-256 of known vectors (FIPS
 * 180-2's "abc", the empty string) from a buffer and from a file; zstd
 * frames written from a buffer and from a file and read back into a
 * buffer and into a file, their size and digest as written; each damage
 * (not zstd, a flipped byte, a file cut anywhere, the wrong size expected,
 * bytes after the frame, an empty file, a window past the limit) with its
 * message; files put in place, directories made on the way, and names that
 * would leave the feed refused.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <zstd.h>

#include "pgmirror/feed_file.h"

#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static char dir[256];

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/test_feed_file.XXXXXX", tmp != NULL ? tmp : "/tmp");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);

	free(cmd);
	return rc == 0 ? 0 : -1;
}

/* dir/name, malloc'd */
static char *at(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* n bytes that compress some but not all: text with a pseudo-random part */
static uint8_t *sample(size_t n)
{
	uint8_t *buf = malloc(n);
	uint32_t x = 12345;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		buf[i] = i % 64 < 48 ? (uint8_t)("row of a table, "[i % 16]) : (uint8_t)(x >> 24);
	}
	return buf;
}

/* --- SHA-256 ----------------------------------------------------------------- */

static void test_sha256(void **state)
{
	char hex[FEED_SHA256_LEN + 1], *path = at("abc");
	uint64_t size;
	ErrBuf err;

	assert_true(feed_sha256_buf("abc", 3, hex, &err));
	assert_string_equal(hex, SHA_ABC);
	assert_true(feed_sha256_buf("", 0, hex, &err));
	assert_string_equal(hex, SHA_EMPTY);
	write_file(path, "abc", 3);
	assert_true(feed_sha256_file(path, hex, &size, &err));
	assert_string_equal(hex, SHA_ABC);
	assert_int_equal(size, 3);
	write_file(path, "", 0);
	assert_true(feed_sha256_file(path, hex, &size, &err));
	assert_string_equal(hex, SHA_EMPTY);
	assert_int_equal(size, 0);
	unlink(path);
	assert_false(feed_sha256_file(path, hex, &size, &err));
	assert_non_null(strstr(err.text, "could not open \""));
	assert_non_null(strstr(err.text, "/abc\": No such file or directory"));
	free(path);
}

static void test_sha256_big_file(void **state)
{
	size_t n = 3 * 65536 + 17;
	uint8_t *buf = sample(n);
	char a[FEED_SHA256_LEN + 1], b[FEED_SHA256_LEN + 1], *path = at("big");
	uint64_t size;
	ErrBuf err;

	write_file(path, buf, n);
	assert_true(feed_sha256_buf(buf, n, a, &err));
	assert_true(feed_sha256_file(path, b, &size, &err));
	assert_string_equal(a, b);
	assert_int_equal(size, n);
	unlink(path);
	free(path);
	free(buf);
}

/* --- zstd round trips ---------------------------------------------------------- */

/* The file at path is what info says. */
static void assert_info(const char *path, const FeedFileInfo *info, uint64_t raw_size)
{
	char hex[FEED_SHA256_LEN + 1];
	uint64_t size;
	ErrBuf err;

	assert_true(feed_sha256_file(path, hex, &size, &err));
	assert_int_equal(info->size, size);
	assert_string_equal(info->sha256, hex);
	assert_int_equal(info->raw_size, raw_size);
}

static void test_round_trip_buf(void **state)
{
	size_t sizes[] = {0, 1, 1000, 300000};
	char *path = at("frame.zst"), *out = at("frame.raw");
	FeedFileInfo info;
	ErrBuf err;

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		uint8_t *buf = sample(sizes[i]), *back, *raw;
		size_t len, rawlen;

		if (!feed_compress_buf(buf, sizes[i], path, &info, &err))
			fail_msg("%s", err.text);
		assert_info(path, &info, sizes[i]);
		if (sizes[i] > 1000)
			assert_true(info.size < sizes[i] / 2);
		if (!feed_decompress_to_buf(path, sizes[i], &back, &len, &err))
			fail_msg("%s", err.text);
		assert_int_equal(len, sizes[i]);
		if (len > 0)
			assert_memory_equal(back, buf, len);
		if (!feed_decompress_to_file(path, sizes[i], out, &err))
			fail_msg("%s", err.text);
		raw = read_file(out, &rawlen);
		assert_int_equal(rawlen, sizes[i]);
		if (rawlen > 0)
			assert_memory_equal(raw, buf, rawlen);
		free(raw);
		free(back);
		free(buf);
	}
	unlink(path);
	unlink(out);
	free(path);
	free(out);
}

static void test_round_trip_file(void **state)
{
	/* several of zstd's input pieces */
	size_t n = 3 * ZSTD_CStreamInSize() + 5;
	uint8_t *buf = sample(n), *back;
	char *src = at("src"), *path = at("src.zst");
	FeedFileInfo info, again;
	size_t len;
	ErrBuf err;

	write_file(src, buf, n);
	if (!feed_compress_file(src, path, &info, &err))
		fail_msg("%s", err.text);
	assert_info(path, &info, n);
	assert_true(feed_decompress_to_buf(path, n, &back, &len, &err));
	assert_int_equal(len, n);
	assert_memory_equal(back, buf, n);
	free(back);
	/* the same contents make the same file: a name stands for one content */
	assert_true(feed_compress_buf(buf, n, path, &again, &err));
	assert_string_equal(again.sha256, info.sha256);
	assert_int_equal(again.size, info.size);
	assert_false(feed_compress_file(dir, path, &info, &err));
	assert_non_null(strstr(err.text, "could not read \""));
	assert_non_null(strstr(err.text, "Is a directory"));
	unlink(src);
	unlink(path);
	free(src);
	free(path);
	free(buf);
}

/* --- damage ------------------------------------------------------------------ */

/* Decompressing bytes (written to a file) as raw_size fails with a message
 * that ends with want; so does the same into a file, which is then gone. */
static void assert_damage(const uint8_t *bytes, size_t len, uint64_t raw_size, const char *want)
{
	char *path = at("damaged.zst"), *out = at("damaged.raw"), *full;
	uint8_t *back = (uint8_t *)"x";
	size_t blen = 1;
	struct stat st;
	ErrBuf err;

	write_file(path, bytes, len);
	full = xasprintf("could not decompress \"%s\": %s", path, want);
	assert_false(feed_decompress_to_buf(path, raw_size, &back, &blen, &err));
	if (strcmp(err.text, full) != 0)
		fail_msg("%zu bytes as %llu: \"%s\"", len, (unsigned long long)raw_size, err.text);
	assert_null(back);
	assert_int_equal(blen, 0);
	assert_false(feed_decompress_to_file(path, raw_size, out, &err));
	assert_string_equal(err.text, full);
	assert_int_equal(stat(out, &st), -1);
	unlink(path);
	free(full);
	free(path);
	free(out);
}

/* A frame with a byte flipped at i is refused, whatever zstd says. */
static void assert_flip_fails(const uint8_t *bytes, size_t len, uint64_t raw_size, size_t i)
{
	char *path = at("flipped.zst"), *prefix = xasprintf("could not decompress \"%s\": ", path);
	uint8_t *back;
	size_t blen;
	ErrBuf err;

	write_file(path, bytes, len);
	if (feed_decompress_to_buf(path, raw_size, &back, &blen, &err))
		fail_msg("a frame with byte %zu flipped was read", i);
	if (strncmp(err.text, prefix, strlen(prefix)) != 0)
		fail_msg("byte %zu flipped: \"%s\"", i, err.text);
	unlink(path);
	free(prefix);
	free(path);
}

static void test_damage(void **state)
{
	size_t n = 100000;
	uint8_t *buf = sample(n), *frame, *twice;
	char *path = at("good.zst"), *want;
	FeedFileInfo info;
	size_t len;
	ErrBuf err;

	assert_true(feed_compress_buf(buf, n, path, &info, &err));
	frame = read_file(path, &len);
	/* not zstd at all */
	assert_damage((const uint8_t *)"plain text, not a frame", 23, n, "not a zstd frame");
	assert_damage(frame, 0, n, "the file is empty");
	/* the size expected */
	assert_damage(frame, len, n - 1, "it holds more than the 99999 bytes expected");
	assert_damage(frame, len, n + 1, "it holds 100000 bytes, not the 100001 expected");
	assert_damage(frame, len, 0, "it holds more than the 0 bytes expected");
	/* a flipped byte in the data, in the checksum */
	frame[len / 2] ^= 0x40;
	assert_damage(frame, len, n, "its checksum does not match its contents");
	frame[len / 2] ^= 0x40;
	for (size_t i = 0; i < len; i += i < 64 ? 1 : 97) {
		frame[i] ^= 0x40;
		assert_flip_fails(frame, len, n, i);
		frame[i] ^= 0x40;
	}
	frame[len - 1] ^= 0x01;
	assert_damage(frame, len, n, "its checksum does not match its contents");
	frame[len - 1] ^= 0x01;
	/* bytes after the frame: one, or a second frame */
	twice = malloc(2 * len);
	memcpy(twice, frame, len);
	memcpy(twice + len, frame, len);
	want = xasprintf("bytes follow its zstd frame at byte %zu", len);
	assert_damage(twice, len + 1, n, want);
	assert_damage(twice, 2 * len, n, want);
	free(want);
	free(twice);
	free(frame);
	free(buf);
	unlink(path);
	free(path);
}

static void test_every_cut_fails(void **state)
{
	uint8_t *buf = sample(5000), *frame;
	char *path = at("cut.zst"), *cut = at("cut.part");
	FeedFileInfo info;
	size_t len;
	ErrBuf err;

	assert_true(feed_compress_buf(buf, 5000, path, &info, &err));
	frame = read_file(path, &len);
	for (size_t n = 1; n < len; n++) {
		uint8_t *back;
		size_t blen;

		write_file(cut, frame, n);
		if (feed_decompress_to_buf(cut, 5000, &back, &blen, &err))
			fail_msg("a frame cut to %zu of %zu bytes was read", n, len);
		if (strstr(err.text, "the file ends inside its zstd frame") == NULL &&
		    strstr(err.text, "it holds") == NULL)
			fail_msg("cut to %zu bytes: \"%s\"", n, err.text);
	}
	unlink(cut);
	unlink(path);
	free(frame);
	free(buf);
	free(cut);
	free(path);
}

static void test_window_too_large(void **state)
{
	/* a frame that does not say its size, with a window of 32 MiB */
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	uint8_t out[256];
	ZSTD_outBuffer ob = {out, sizeof out, 0};
	ZSTD_inBuffer ib = {"abc", 3, 0};

	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 25)));
	assert_false(ZSTD_isError(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_continue)));
	ib = (ZSTD_inBuffer){NULL, 0, 0};
	assert_int_equal(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end), 0);
	ZSTD_freeCCtx(cctx);
	assert_damage(out, ob.pos, 3, "its window is larger than 8 MiB");
}

/* --- putting files in place ----------------------------------------------------- */

static void test_write_and_place(void **state)
{
	char *manifest = at("manifest.json"), *tmp = at(".hub/manifest.json.tmp");
	char *name = "seg/" "0123456789abcdef0123456789abcdef/x.pgmf.zst", *placed, *hubfile;
	struct stat st;
	uint8_t *back;
	size_t len;
	ErrBuf err;

	if (!feed_file_write(dir, "manifest.json", "{}\n", 3, &err))
		fail_msg("%s", err.text);
	back = read_file(manifest, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(back, "{}\n", 3);
	free(back);
	assert_int_equal(stat(tmp, &st), -1);
	/* replaced whole */
	assert_true(feed_file_write(dir, "manifest.json", "{\"a\": 1}\n", 9, &err));
	back = read_file(manifest, &len);
	assert_int_equal(len, 9);
	free(back);
	assert_int_equal(stat(manifest, &st), 0);
	assert_int_equal(st.st_mode & 0644, 0644);

	/* a segment into directories that are not there yet */
	assert_true(feed_file_hub_dir(dir, &err));
	hubfile = feed_file_hub_path(dir, "open.zst");
	assert_non_null(strstr(hubfile, "/.hub/open.zst"));
	write_file(hubfile, "zz", 2);
	if (!feed_file_place(dir, hubfile, name, &err))
		fail_msg("%s", err.text);
	placed = at(name);
	assert_int_equal(stat(placed, &st), 0);
	assert_int_equal(st.st_size, 2);
	assert_int_equal(stat(hubfile, &st), -1);
	/* the temporary file gone: nothing to place */
	assert_false(feed_file_place(dir, hubfile, name, &err));
	assert_non_null(strstr(err.text, "could not rename \""));
	assert_non_null(strstr(err.text, "No such file or directory"));
	free(hubfile);
	free(placed);
	free(manifest);
	free(tmp);
}

static void test_place_refused(void **state)
{
	static const char *const bad[] = {"", "/etc/x", "../x", "seg/../../x", "seg//x", "seg/./x",
					  "seg/x/", ".."};
	char *hubfile = feed_file_hub_path(dir, "refused"), *want, *blocker;
	ErrBuf err;

	assert_true(feed_file_hub_dir(dir, &err));
	write_file(hubfile, "a", 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		want = xasprintf("could not place \"%s\": not a name inside the feed", bad[i]);
		assert_false(feed_file_place(dir, hubfile, bad[i], &err));
		assert_string_equal(err.text, want);
		free(want);
	}
	/* a file where a directory is due */
	blocker = at("snap");
	write_file(blocker, "", 0);
	assert_false(feed_file_place(dir, hubfile, "snap/e/x.sqlite.zst", &err));
	want = xasprintf("could not create directory \"%s\": a file of that name is in the way",
			 blocker);
	assert_string_equal(err.text, want);
	free(want);
	unlink(blocker);
	free(blocker);
	unlink(hubfile);
	free(hubfile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_sha256_big_file),
		cmocka_unit_test(test_round_trip_buf),
		cmocka_unit_test(test_round_trip_file),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_every_cut_fails),
		cmocka_unit_test(test_window_too_large),
		cmocka_unit_test(test_write_and_place),
		cmocka_unit_test(test_place_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * values_json.c: JSON validation (RFC 8259, nesting bounded as PostgreSQL
 * bounds it, no recursion) for json elements of arrays, and escaping of
 * any text as a JSON string.
 */
#include "config.h"

#include <string.h>

#include "values_json.h"

/*
 * Nesting a JSON element may have: PostgreSQL's own parser stops at about
 * this depth (JSON_TD_MAX_STACK), and a bit per level keeps the check off
 * the heap.
 */
#define JSON_DEPTH_MAX 6400

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t json_skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && json_space(s[i]))
		i++;
	return i;
}

/* The string at *pos (on its '"'): escapes well formed, no raw control
 * characters, valid UTF-8. */
static bool json_string(const char *s, size_t n, size_t *pos)
{
	Utf8State st = { 0 };
	size_t i = *pos + 1;

	while (i < n) {
		unsigned char c = (unsigned char) s[i];

		if (st.need == 0 && c == '"') {
			*pos = i + 1;
			return true;
		}
		if (st.need == 0 && c == '\\') {
			if (++i >= n)
				return false;
			if (s[i] == 'u') {
				for (int k = 0; k < 4; k++)
					if (++i >= n || hex_digit_value((unsigned char) s[i]) < 0)
						return false;
			} else if (strchr("\"\\/bfnrt", s[i]) == NULL || s[i] == '\0') {
				return false;
			}
			i++;
			continue;
		}
		if (c < 0x20 || !values_utf8_step(&st, c))
			return false;
		i++;
	}
	return false;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at *pos. */
static bool json_number(const char *s, size_t n, size_t *pos)
{
	size_t i = *pos, start;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else {
		start = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return false;
	}
	if (i < n && s[i] == '.') {
		start = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return false;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		start = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == start)
			return false;
	}
	*pos = i;
	return true;
}

/*
 * Whether s[0..n) is one JSON value (RFC 8259). A json element goes into
 * the array's JSON as it is, so a broken one would break the whole array.
 */
bool values_json_valid(const char *s, size_t n)
{
	unsigned char is_object[JSON_DEPTH_MAX / 8];
	int depth = 0;
	size_t i = 0;
	enum { VALUE, KEY, AFTER } state = VALUE;

#define TOP_IS_OBJECT() (is_object[(depth - 1) / 8] & (1u << ((depth - 1) % 8)))
	for (;;) {
		i = json_skip_space(s, n, i);
		if (state == KEY) {
			if (i >= n || s[i] != '"' || !json_string(s, n, &i))
				return false;
			i = json_skip_space(s, n, i);
			if (i >= n || s[i] != ':')
				return false;
			i++;
			state = VALUE;
		} else if (state == VALUE) {
			if (i >= n)
				return false;
			if (s[i] == '{' || s[i] == '[') {
				bool obj = s[i] == '{';

				if (depth == JSON_DEPTH_MAX)
					return false;
				if (obj)
					is_object[depth / 8] |= (unsigned char) (1u << (depth % 8));
				else
					is_object[depth / 8] &= (unsigned char) ~(1u << (depth % 8));
				depth++;
				i = json_skip_space(s, n, i + 1);
				if (i < n && s[i] == (obj ? '}' : ']')) {
					i++;
					depth--;
					state = AFTER;
				} else {
					state = obj ? KEY : VALUE;
				}
				continue;
			}
			if (s[i] == '"') {
				if (!json_string(s, n, &i))
					return false;
			} else if (n - i >= 4 && memcmp(s + i, "true", 4) == 0) {
				i += 4;
			} else if (n - i >= 5 && memcmp(s + i, "false", 5) == 0) {
				i += 5;
			} else if (n - i >= 4 && memcmp(s + i, "null", 4) == 0) {
				i += 4;
			} else if (!json_number(s, n, &i)) {
				return false;
			}
			state = AFTER;
		} else {
			if (depth == 0)
				return i == n;
			if (i >= n)
				return false;
			if (s[i] == ',') {
				i++;
				state = TOP_IS_OBJECT() ? KEY : VALUE;
			} else if (s[i] == (TOP_IS_OBJECT() ? '}' : ']')) {
				i++;
				depth--;
			} else {
				return false;
			}
		}
	}
#undef TOP_IS_OBJECT
}


/*
 * Appends an element's text as a JSON string. escaped: s still has
 * array_out's backslashes, which are undone on the way. Text is UTF-8 here
 * (the session asks for it); anything else would make the whole array
 * invalid JSON, so it is refused rather than mangled.
 */
bool values_json_string_append(ValueBuf *b, const char *s, size_t n,
			       bool escaped, Err *e)
{
	static const char hex[] = "0123456789abcdef";
	Utf8State st = { 0 };
	bool valid = true;
	char *w;

	/* Worst case: every byte a control character, written \u00XX. */
	values_buf_reserve(b, values_size_mul_add(n, 6, 2));
	w = b->data + b->len;
	*w++ = '"';
	for (size_t i = 0; i < n && valid; i++) {
		unsigned char c;

		if (escaped && s[i] == '\\' && i + 1 < n)
			i++;
		c = (unsigned char) s[i];
		valid = values_utf8_step(&st, c);
		if (c == '"' || c == '\\') {
			*w++ = '\\';
			*w++ = (char) c;
		} else if (c < 0x20) {
			memcpy(w, "\\u00", 4);
			w[4] = hex[c >> 4];
			w[5] = hex[c & 0xf];
			w += 6;
		} else {
			*w++ = (char) c;
		}
	}
	if (!valid || st.need != 0) {
		char q[ERR_QUOTED_SIZE];

		values_quote(q, s, n);
		return values_fail(e, "invalid UTF-8 in array element: %s", q);
	}
	*w++ = '"';
	b->len = (size_t) (w - b->data);
	return true;
}

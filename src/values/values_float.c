/*
 * values_float.c: the text PostgreSQL 12 and later write for a float4 or
 * float8 when extra_float_digits is above 0 (the session sets 3): the
 * fewest significant digits that read back as the same float, of those
 * the ones nearest its exact value (ties to an even last digit), in fixed
 * notation when the first digit's decimal exponent is in [-4, 6) (float4)
 * or [-4, 15) (float8), else as D[.DDD]e+XX.
 *
 * The digits are found by trial: for a count of digits, the decimal
 * nearest the exact value (from libc's exact printf) and the one on the
 * other side of it are the only candidates that can lie inside the
 * float's rounding interval (its ends excluded, as PostgreSQL's Ryu
 * excludes them), and libc's correctly rounded strtold() says whether one
 * does. A count that works makes any larger count work, so the fewest is
 * found by bisection.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values_wire.h"

/* Significant digits printed first, for up to 17 (a float8) or 9 (a
 * float4) that may be kept: only a tail of "5" and zeros leaves their
 * rounding in doubt, and a value within 10^-17 of its own size of a
 * candidate is inside any float's rounding interval. */
#define FIRST_DIGITS 26
#define FIRST_DIGITS_FLOAT4 18
/* Then every digit: a double's exact value has at most 767 of them. */
#define ALL_DIGITS 800

/* v's first ndigits significant digits, correctly rounded, into dig (no
 * point, no sign), and the decimal exponent of the first. v > 0. */
static void exact_digits(double v, int ndigits, char *dig, int *exp10)
{
	char tmp[ALL_DIGITS + 32];
	int k = 0, i = 0;

	snprintf(tmp, sizeof tmp, "%.*e", ndigits - 1, v);
	/* "D.DDDDe[+-]XX"; the point is the locale's, so skip any non-digit */
	for (; tmp[i] != '\0' && tmp[i] != 'e'; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9')
			dig[k++] = tmp[i];
	dig[k] = '\0';
	*exp10 = tmp[i] == 'e' ? atoi(tmp + i + 1) : 0;
}

/* d[0..n) plus one in its last place; false when it carries out of the
 * first digit (the result is then "1000..." with the exponent one up). */
static bool increment(char *d, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		if (d[i] != '9') {
			d[i]++;
			return true;
		}
		d[i] = '0';
	}
	d[0] = '1';
	return false;
}

typedef struct Digits {
	char first[FIRST_DIGITS + 1];   /* v's digits, rounded to FIRST_DIGITS */
	int exp10;
	double v;
	bool single;
	long double lo, hi;             /* the midpoints to v's neighbours */
} Digits;

/* The decimal d[0..n) x 10^(e - n + 1) against m > 0, exactly: <0, 0, >0. */
static int compare_exact(const char *d, int n, int e, long double m)
{
	char md[ALL_DIGITS + 32];
	int me = 0, k = 0, i = 0, len;

	snprintf(md, sizeof md, "%.*Le", ALL_DIGITS - 1, m);
	for (; md[i] != '\0' && md[i] != 'e'; i++)
		if (md[i] >= '0' && md[i] <= '9')
			md[k++] = md[i];
	if (md[i] == 'e')
		me = atoi(md + i + 1);
	len = k;
	if (e != me)
		return e < me ? -1 : 1;
	for (i = 0; i < n || i < len; i++) {
		char a = i < n ? d[i] : '0', b = i < len ? md[i] : '0';

		if (a != b)
			return a < b ? -1 : 1;
	}
	return 0;
}

/*
 * Whether digits d[0..n) times 10^(e - n + 1) lie strictly inside v's
 * rounding interval, between the midpoints to its neighbours: Ryu as
 * PostgreSQL builds it (acceptBounds false) never writes a midpoint, even
 * one that would read back as v. The midpoints are exact long doubles.
 */
static bool reads_back(const char *d, int n, int e, const Digits *D)
{
	static const long double pow10[] = {
		1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L,
		1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L,
		1e24L, 1e25L, 1e26L, 1e27L,
	};
	int k = e - n + 1;
	long double x;

	if (n <= 19 && k >= -27 && k <= 27) {
		/* the digits and the power of ten are exact long doubles (10^27
		 * is 5^27 < 2^64 times a power of two): one operation rounds
		 * once, correctly, as strtold() would */
		uint64_t m = 0;

		for (int i = 0; i < n; i++)
			m = m * 10 + (uint64_t) (d[i] - '0');
		x = k >= 0 ? (long double) m * pow10[k] : (long double) m / pow10[-k];
	} else {
		char tmp[64];

		snprintf(tmp, sizeof tmp, "%.*se%d", n, d, k);
		x = strtold(tmp, NULL);
	}
	if (x < D->lo || x > D->hi)
		return false;
	if (x > D->lo && x < D->hi)
		return true;
	/* read as a midpoint: which side of it is the decimal? */
	return x == D->lo ? compare_exact(d, n, e, D->lo) > 0 : compare_exact(d, n, e, D->hi) < 0;
}

/* The midpoints between v > 0 and its neighbours, exact in a long double
 * (a float8's need 54 bits). */
static void midpoints(Digits *D)
{
	long double v = D->v;

	if (D->single) {
		float f = (float) D->v, below, above;
		uint32_t bits;

		memcpy(&bits, &f, sizeof bits);
		bits--;
		memcpy(&below, &bits, sizeof below);
		bits += 2;
		memcpy(&above, &bits, sizeof above);
		D->lo = (v + below) / 2;
		/* past the largest float, the gap below it */
		D->hi = isinf(above) ? v + (v - below) / 2 : (v + above) / 2;
	} else {
		double below, above;
		uint64_t bits;

		memcpy(&bits, &D->v, sizeof bits);
		bits--;
		memcpy(&below, &bits, sizeof below);
		bits += 2;
		memcpy(&above, &bits, sizeof above);
		D->lo = (v + below) / 2;
		D->hi = isinf(above) ? v + (v - below) / 2 : (v + above) / 2;
	}
}

/*
 * Whether some decimal of n significant digits reads back as D->v; if so,
 * the nearest such one in out (n digits) and its exponent in *e.
 */
static bool try_digits(const Digits *D, int n, char *out, int *e)
{
	const char *tail = D->first + n;
	int cmp = 0;                     /* the tail against one half */
	bool up, exact = true;

	memcpy(out, D->first, (size_t) n);
	out[n] = '\0';
	*e = D->exp10;
	for (const char *t = tail; *t != '\0'; t++)
		exact &= *t == '0';
	if (exact)
		return reads_back(out, n, *e, D);
	if (tail[0] != '5') {
		cmp = tail[0] > '5' ? 1 : -1;
	} else {
		for (const char *t = tail + 1; *t != '\0' && cmp == 0; t++)
			cmp = *t != '0';
		if (cmp == 0) {
			/* "5000...": the printed tail may be rounded; look at
			 * every digit */
			char all[ALL_DIGITS + 1];
			int x;

			exact_digits(D->v, ALL_DIGITS, all, &x);
			for (const char *t = all + n + 1; *t != '\0' && cmp == 0; t++)
				cmp = *t != '0';
		}
	}
	/* ties to even, as Ryu rounds */
	up = cmp > 0 || (cmp == 0 && (out[n - 1] - '0') % 2 == 1);
	if (up && !increment(out, n))
		(*e)++;
	if (reads_back(out, n, *e, D))
		return true;
	/* the neighbour on v's other side */
	memcpy(out, D->first, (size_t) n);
	*e = D->exp10;
	if (!up && !increment(out, n))
		(*e)++;
	return reads_back(out, n, *e, D);
}

/* Appends d (n digits, the first's exponent e) as float4out/float8out
 * lay them out. */
static void layout(ValueBuf *b, const char *d, int n, int e, bool single)
{
	if (e >= -4 && e < (single ? 6 : 15)) {
		if (e < 0) {
			values_buf_puts(b, "0.");
			for (int i = 0; i < -e - 1; i++)
				values_buf_putc(b, '0');
			values_buf_put(b, d, (size_t) n);
		} else if (n <= e + 1) {
			values_buf_put(b, d, (size_t) n);
			for (int i = n; i < e + 1; i++)
				values_buf_putc(b, '0');
		} else {
			values_buf_put(b, d, (size_t) e + 1);
			values_buf_putc(b, '.');
			values_buf_put(b, d + e + 1, (size_t) (n - e - 1));
		}
		return;
	}
	values_buf_putc(b, d[0]);
	if (n > 1) {
		values_buf_putc(b, '.');
		values_buf_put(b, d + 1, (size_t) n - 1);
	}
	values_buf_putc(b, 'e');
	values_buf_putc(b, e < 0 ? '-' : '+');
	if (e > -10 && e < 10)
		values_buf_putc(b, '0');
	values_int_append(b, e < 0 ? -e : e);
}

bool values_float8_text_exact(void)
{
	/* 1 + 2^-60 differs from 1 where long doubles carry 61 bits or more */
	volatile long double one = 1.0L, x = one + 0x1p-60L;

	return LDBL_MANT_DIG >= 54 && x != one;
}

void values_float_text(ValueBuf *b, double v, bool single)
{
	Digits D;
	char best[FIRST_DIGITS + 1], cand[FIRST_DIGITS + 1];
	int lo = 1, hi = single ? 9 : 17, best_e = 0, e;
	bool found = false;

	if (isnan(v)) {
		values_buf_puts(b, "NaN");
		return;
	}
	if (isinf(v)) {
		values_buf_puts(b, v < 0 ? "-Infinity" : "Infinity");
		return;
	}
	if (signbit(v))
		values_buf_putc(b, '-');
	v = signbit(v) ? -v : v;
	if (v == 0) {
		values_buf_putc(b, '0');
		return;
	}
	D.v = v;
	D.single = single;
	/* a float4 needs fewer: its count is at most 9 */
	exact_digits(v, single ? FIRST_DIGITS_FLOAT4 : FIRST_DIGITS, D.first, &D.exp10);
	midpoints(&D);
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (try_digits(&D, mid, cand, &e)) {
			hi = mid;
			memcpy(best, cand, (size_t) mid + 1);
			best_e = e;
			found = true;
		} else {
			lo = mid + 1;
		}
	}
	/* 9 digits always read back as the float4, 17 as the float8, where
	 * the midpoints are exact; should they not be, the 17 digits of %.17g
	 * read back too, without float8out's choice among them */
	if (!found && !try_digits(&D, hi, best, &best_e)) {
		char g[32];

		snprintf(g, sizeof g, "%.*g", single ? 9 : 17, v);
		values_buf_puts(b, g);
		return;
	}
	/* drop zeros a carry left at the end ("1999" up to "2000") */
	while (hi > 1 && best[hi - 1] == '0')
		hi--;
	layout(b, best, hi, best_e, single);
}

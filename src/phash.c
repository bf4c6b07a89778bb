/*
 * phash.c: perceptual hashes of pixels (see phash.h).
 *
 * Reads the caller's pixels, writes the caller's buffers; no state.  Any
 * thread: a hash thread (thumb.c's renditions), the main thread (a scan's
 * pass over stored renditions, store-phash.c), bench/phash-eval.c.
 *
 * Everything is integers: luma in thousandths of a level, grid cells in
 * 1/256 of a level, the DCT's cosines as 15-bit fixed point from one
 * table of 33 constants, sums in 64 bits.  So a hash does not depend on
 * the compiler's contraction of floating point (FMA) or on libm: the
 * same pixels give the same bits everywhere (tests/unit/test-phash.c
 * holds values that must not change).
 *
 * Invariants:
 *  1. A grid cell is the exact area-weighted mean of what it covers,
 *     rounded once: every source pixel's weights over the cells sum to
 *     the same total (tw * th units), checked by pix_phash_grey()'s
 *     assertion on the sum of weights.
 *  2. A hash bit compares a value with the median of its 64 values with
 *     no rounding (twice the value against the sum of the two middle
 *     ones): ties are "not above", as numpy's `>`.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "phash.h"

#include <string.h>

/* round(32768 cos(k pi / 64)), k = 0..32: every cosine of a 32-point
 * DCT-II is one of them, with a sign (dct_cos()). */
static const gint32 COS64[33] = {
	32768, 32729, 32610, 32413, 32138, 31786, 31357, 30853, 30274, 29622, 28899,
	28106, 27246, 26320, 25330, 24279, 23170, 22006, 20788, 19520, 18205, 16846,
	15447, 14010, 12540, 11039, 9512, 7962, 6393, 4808, 3212, 1608, 0,
};

/* round(32768 cos(pi (2x + 1) u / 64)) */
static gint32 dct_cos(guint u, guint x)
{
	guint k = ((2 * x + 1) * u) % 128;     /* the angle, in pi / 64 */
	if (k > 64)
		k = 128 - k;                    /* cos(2 pi - a) = cos(a) */
	return k <= 32 ? COS64[k] : -COS64[64 - k];   /* cos(pi - a) = -cos(a) */
}

/* A frequency's coefficient for a cosine of one grey level of amplitude
 * (both frequencies non-zero): 256 * (32768 * 16)^2. */
#define LEVEL_UNIT ((gint64)1 << 46)

#define MAX_CELLS 64

void pix_phash_grey(const guint8 *pixels, guint w, guint h, guint channels, guint tw, guint th, guint32 *out)
{
	g_assert(w > 0 && h > 0 && (channels == 1 || channels == 3));
	g_assert(tw > 0 && th > 0 && tw <= MAX_CELLS && th <= MAX_CELLS);
	/* Coordinates in units of 1/tw of a source pixel across (1/th down):
	 * source pixel x spans [x tw, (x + 1) tw), cell c spans [c w, (c + 1)
	 * w); their overlap is a whole number of units, and a cell gets w
	 * units across, h down, from all the pixels it covers. */
	guint64 acc[MAX_CELLS * MAX_CELLS];
	guint64 row[MAX_CELLS];
	guint64 weight_sum = 0;
	memset(acc, 0, sizeof(guint64) * tw * th);
	for (guint y = 0; y < h; y++) {
		memset(row, 0, sizeof(guint64) * tw);
		const guint8 *p = pixels + (gsize)y * w * channels;
		for (guint x = 0; x < w; x++, p += channels) {
			guint64 l = channels == 1 ? (guint64)p[0] * 1000 : (guint64)p[0] * 299 + (guint64)p[1] * 587 + (guint64)p[2] * 114;
			guint64 x0 = (guint64)x * tw, x1 = x0 + tw;
			for (guint c = (guint)(x0 / w); c < tw && (guint64)c * w < x1; c++) {
				guint64 c0 = (guint64)c * w, c1 = c0 + w;
				row[c] += l * (MIN(x1, c1) - MAX(x0, c0));
			}
		}
		guint64 y0 = (guint64)y * th, y1 = y0 + th;
		for (guint r = (guint)(y0 / h); r < th && (guint64)r * h < y1; r++) {
			guint64 r0 = (guint64)r * h, r1 = r0 + h;
			guint64 oy = MIN(y1, r1) - MAX(y0, r0);
			weight_sum += oy;
			for (guint c = 0; c < tw; c++)
				acc[r * tw + c] += row[c] * oy;
		}
	}
	/* invariant 1: each source row's weight went out whole */
	g_assert(weight_sum == (guint64)h * th);
	/* a cell: sum / (w h) thousandths of a level, as 1/256 of a level */
	guint64 den = (guint64)w * h * 1000;
	for (guint i = 0; i < tw * th; i++)
		out[i] = (guint32)((acc[i] * 256 + den / 2) / den);
}

static int compare_gint64(const void *a, const void *b)
{
	gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
	return x < y ? -1 : x > y;
}

/* Bit 63 - i for each of the 64 values above their median (invariant 2);
 * *n_decided: of values[1..63], those at least `level` from it. */
static guint64 above_median(const gint64 *values, gint64 level, guint *n_decided)
{
	gint64 sorted[64];
	memcpy(sorted, values, sizeof sorted);
	qsort(sorted, 64, sizeof(gint64), compare_gint64);
	gint64 median2 = sorted[31] + sorted[32];
	guint64 bits = 0;
	guint n = 0;
	for (guint i = 0; i < 64; i++) {
		gint64 d = 2 * values[i] - median2;
		if (d > 0)
			bits |= (guint64)1 << (63 - i);
		if (i > 0 && (d >= 2 * level || d <= -2 * level))
			n++;
	}
	if (n_decided != NULL)
		*n_decided = n;
	return bits;
}

guint64 pix_phash_dct(const guint32 *grid, guint *n_decided, gint64 *coeffs)
{
	enum { N = PIX_PHASH_GRID, K = 8 };
	gint64 rows[N][K];     /* each row's K lowest horizontal frequencies */
	gint64 d[K * K];
	for (guint y = 0; y < N; y++)
		for (guint u = 0; u < K; u++) {
			gint64 s = 0;
			for (guint x = 0; x < N; x++)
				s += (gint64)grid[y * N + x] * dct_cos(u, x);
			rows[y][u] = s;
		}
	for (guint v = 0; v < K; v++)
		for (guint u = 0; u < K; u++) {
			gint64 s = 0;
			for (guint y = 0; y < N; y++)
				s += dct_cos(v, y) * rows[y][u];
			d[v * K + u] = s;
		}
	if (coeffs != NULL)
		memcpy(coeffs, d, sizeof d);
	return above_median(d, (gint64)(PIX_PHASH_DECIDED_LEVEL * LEVEL_UNIT), n_decided);
}

guint64 pix_phash_dhash(const guint32 *grid9x8)
{
	guint64 bits = 0;
	for (guint y = 0; y < 8; y++)
		for (guint x = 0; x < 8; x++)
			if (grid9x8[y * 9 + x + 1] > grid9x8[y * 9 + x])
				bits |= (guint64)1 << (63 - (8 * y + x));
	return bits;
}

guint64 pix_phash_dhash_vertical(const guint32 *grid8x9)
{
	guint64 bits = 0;
	for (guint y = 0; y < 8; y++)
		for (guint x = 0; x < 8; x++)
			if (grid8x9[(y + 1) * 8 + x] > grid8x9[y * 8 + x])
				bits |= (guint64)1 << (63 - (8 * y + x));
	return bits;
}

guint64 pix_phash_whash(const guint32 *grid)
{
	enum { N = PIX_PHASH_GRID, B = PIX_PHASH_GRID / 8 };
	gint64 low[64];
	for (guint v = 0; v < 8; v++)
		for (guint u = 0; u < 8; u++) {
			gint64 s = 0;
			for (guint y = 0; y < B; y++)
				for (guint x = 0; x < B; x++)
					s += grid[(v * B + y) * N + u * B + x];
			low[v * 8 + u] = s;
		}
	return above_median(low, 0, NULL);
}

guint64 pix_phash_digest(const void *data, gsize len)
{
	guint8 sum[32];
	gsize n = sizeof sum;
	GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(c, data, (gssize)len);
	g_checksum_get_digest(c, sum, &n);
	g_checksum_free(c);
	guint64 v = 0;
	for (guint i = 0; i < 8; i++)
		v = v << 8 | sum[i];
	return v;
}

void pix_phash_of_rendition(PixPhash *out, const guint8 *pixels, guint w, guint h, guint channels, GBytes *stored)
{
	guint32 grid[PIX_PHASH_GRID * PIX_PHASH_GRID];
	memset(out, 0, sizeof *out);
	pix_phash_grey(pixels, w, h, channels, PIX_PHASH_GRID, PIX_PHASH_GRID, grid);
	out->value = pix_phash_dct(grid, &out->n_decided, NULL);
	out->is_set = TRUE;
	out->is_weak = w < PIX_PHASH_GRID || h < PIX_PHASH_GRID || out->n_decided < PIX_PHASH_MIN_DECIDED;
	if (out->is_weak) {
		gsize len = 0;
		const void *data = stored != NULL ? g_bytes_get_data(stored, &len) : NULL;
		out->is_set = data != NULL;
		out->value = data != NULL ? pix_phash_digest(data, len) : 0;
	}
}

void pix_phash_format(guint64 value, char out[17])
{
	g_snprintf(out, 17, "%016" G_GINT64_MODIFIER "x", value);
}

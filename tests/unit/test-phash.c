/*
 * test-phash.c: unit tests of src/phash.h, perceptual hashes of pixels.
 *
 * The reference is imagehash 4.3 (phash(), dhash(), whash()), run by
 * tests/tools/phash-ref.py on the grids that grid() makes here too: its
 * values are below, and every hash of phash.c must give them bit for
 * bit.  The DCT hash is also checked against a direct floating-point
 * DCT-II on random grids (the integer DCT must agree on every bit that
 * is not a tie to within rounding), the grey grid against the area
 * means it is defined by, and a rendition's hash against values that
 * must not change from run to run or machine to machine (they are what
 * catalogs hold).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "phash.h"
#include "testlib.h"

#include <math.h>

/* tests/tools/phash-ref.py: case, phash, dhash, whash */
static const struct {
	guint64 phash, dhash, whash;
} reference[] = {
	{ 0xe6db5335c219554aull, 0xb59ba89c375ca5aaull, 0x68f5e0d5d3825770ull },
	{ 0x8100015f757f755full, 0xfefefefefdfdfdfdull, 0x425529b48bd8f56aull },
	{ 0x8303530357fea957ull, 0xfffffffffffefefeull, 0x254993b62d5b92b6ull },
	{ 0xd146f3cc869e3474ull, 0x12d5ac128a36ba4cull, 0x7e6c441f520bbb29ull },
	{ 0xf96b86f629fd8001ull, 0xfdfbf6f5eddbdab6ull, 0x75ad0cc849be4a5bull },
	{ 0xa87ca9fca903fc03ull, 0xfefefefefeefefefull, 0x4b92262d5b96256full },
	{ 0xbde8829dcc10b997ull, 0xaec632b36e99d674ull, 0xcb655340ba8b2e1full },
	{ 0xe49f48e29386d6aaull, 0xfaf5ecdaba75f4eaull, 0x5e517a8cd67053e2ull },
	{ 0x95265556fca9a255ull, 0xefefefefefffffffull, 0x96254d5b962d4b9aull },
	{ 0xaef785ce10c4a599ull, 0xba555e34ab535c58ull, 0xffa0c325cd933807ull },
	{ 0xdfaa9eaa42291279ull, 0xf4ead9b4f4ead9b4ull, 0x15df0963e8749a34ull },
	{ 0x92316b91a2feb52aull, 0xfffffffffffefefeull, 0x2d4a1e352d5a9c3dull },
};

/* Grey levels of case `c`, w x h, as phash-ref.py's grid() makes them,
 * in pix_phash_grey()'s units (1/256 of a level). */
static void grid(guint c, guint w, guint h, guint32 *out)
{
	guint64 seed = (guint64)c * 2654435761u % ((guint64)1 << 32);
	for (guint y = 0; y < h; y++)
		for (guint x = 0; x < w; x++) {
			guint v;
			if (c % 3 == 0) {
				seed = (seed * 1103515245 + 12345) % ((guint64)1 << 31);
				v = (guint)((seed >> 16) % 256);
			} else if (c % 3 == 1) {
				v = (x * x * (c + 3) + y * (7 * c + 1) + x * y * (c % 5)) % 256;
			} else {
				v = (((x / 4 + y / 5 + c / 3) % 3) * 70 + x * (c / 3 + 1) + y) % 256;
			}
			out[y * w + x] = v * 256;
		}
}

/* The bits of the Haar hash of `g` whose block equals the median. */
static guint64 whash_ties(const guint32 *g)
{
	gint64 sum[64], sorted[64];
	for (guint b = 0; b < 64; b++) {
		sum[b] = 0;
		for (guint y = 0; y < 4; y++)
			for (guint x = 0; x < 4; x++)
				sum[b] += g[((b / 8) * 4 + y) * 32 + (b % 8) * 4 + x];
		sorted[b] = sum[b];
	}
	for (guint i = 1; i < 64; i++)
		for (guint k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
			gint64 x = sorted[k];
			sorted[k] = sorted[k - 1];
			sorted[k - 1] = x;
		}
	guint64 ties = 0;
	for (guint b = 0; b < 64; b++)
		if (2 * sum[b] == sorted[31] + sorted[32])
			ties |= (guint64)1 << (63 - b);
	return ties;
}

static void test_reference(void)
{
	for (guint c = 0; c < G_N_ELEMENTS(reference); c++) {
		guint32 g32[32 * 32], g98[9 * 8];
		grid(c, 32, 32, g32);
		grid(c, 9, 8, g98);
		g_assert_cmphex(pix_phash_dct(g32, NULL, NULL), ==, reference[c].phash);
		g_assert_cmphex(pix_phash_dhash(g98), ==, reference[c].dhash);
		/* whash: imagehash's blocks are floats after an inverse wavelet
		 * transform, so a block equal to the median falls either way by
		 * rounding: those bits are not compared */
		g_assert_cmphex(pix_phash_whash(g32) & ~whash_ties(g32), ==, reference[c].whash & ~whash_ties(g32));
	}
}

/* The DCT hash against a direct DCT-II in doubles, on random grids of
 * fine levels: every bit whose coefficient is not within rounding of the
 * median agrees. */
static void test_dct_direct(void)
{
	GRand *r = g_rand_new_with_seed(27);
	guint compared = 0;
	for (guint t = 0; t < 300; t++) {
		guint32 g[32 * 32];
		for (guint i = 0; i < 32 * 32; i++)
			g[i] = t % 2 == 0 ? (guint32)g_rand_int_range(r, 0, 65281)
			                  : (guint32)((i % 32) * 900 + (i / 32) * 700 + g_rand_int_range(r, 0, 3000));
		double d[64], sorted[64];
		for (guint v = 0; v < 8; v++)
			for (guint u = 0; u < 8; u++) {
				double s = 0;
				for (guint y = 0; y < 32; y++)
					for (guint x = 0; x < 32; x++)
						s += g[y * 32 + x] * cos(G_PI * (2 * x + 1) * u / 64) * cos(G_PI * (2 * y + 1) * v / 64);
				d[v * 8 + u] = sorted[v * 8 + u] = s;
			}
		for (guint i = 1; i < 64; i++)      /* insertion sort: 64 values */
			for (guint k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
				double x = sorted[k];
				sorted[k] = sorted[k - 1];
				sorted[k - 1] = x;
			}
		double med = (sorted[31] + sorted[32]) / 2, scale = fabs(sorted[63]) + fabs(sorted[0]);
		guint64 bits = pix_phash_dct(g, NULL, NULL);
		for (guint i = 0; i < 64; i++) {
			if (fabs(d[i] - med) < scale * 1e-4)
				continue;   /* a tie within the cosines' 15 bits */
			g_assert_cmpint((bits >> (63 - i)) & 1, ==, d[i] > med);
			compared++;
		}
	}
	g_assert_cmpuint(compared, >, 300 * 50);   /* few are ties */
	g_rand_free(r);
}

static void test_grey(void)
{
	/* RGB: BT.601 luma; one cell: the mean of all */
	const guint8 rgb[] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255 };
	guint32 one;
	pix_phash_grey(rgb, 2, 2, 3, 1, 1, &one);
	/* (299 + 587 + 114 + 1000) * 255 / 4 / 1000 levels, in 1/256 */
	g_assert_cmpuint(one, ==, (guint32)(((299 + 587 + 114 + 1000) * 255 * 256 + 2000) / 4000));

	/* a uniform image: every cell that level, whatever the sizes */
	g_autofree guint8 *flat = g_malloc(37 * 23);
	memset(flat, 77, 37 * 23);
	guint32 cells[32 * 32];
	pix_phash_grey(flat, 37, 23, 1, 32, 32, cells);
	for (guint i = 0; i < 32 * 32; i++)
		g_assert_cmpuint(cells[i], ==, 77 * 256);

	/* area means: 3 columns into 2 cells, the middle one split */
	const guint8 row[] = { 0, 90, 180 };
	guint32 two[2];
	pix_phash_grey(row, 3, 1, 1, 2, 1, two);
	g_assert_cmpuint(two[0], ==, 30 * 256);     /* (0 + 90 / 2) / 1.5 */
	g_assert_cmpuint(two[1], ==, 150 * 256);    /* (90 / 2 + 180) / 1.5 */

	/* an image smaller than the grid is spread over it */
	const guint8 px2[] = { 0, 200 };
	guint32 four[4];
	pix_phash_grey(px2, 2, 1, 1, 4, 1, four);
	g_assert_cmpuint(four[0], ==, 0);
	g_assert_cmpuint(four[1], ==, 0);
	g_assert_cmpuint(four[2], ==, 200 * 256);
	g_assert_cmpuint(four[3], ==, 200 * 256);
}

/* An RGB picture: smooth bands and a disc, w x h. */
static guint8 *picture(guint w, guint h, guint shift)
{
	guint8 *p = g_malloc((gsize)w * h * 3);
	for (guint y = 0; y < h; y++)
		for (guint x = 0; x < w; x++) {
			guint8 *o = p + ((gsize)y * w + x) * 3;
			guint dx = x * 100 / w, dy = y * 100 / h;
			gboolean in = (dx - 60) * (dx - 60) + (dy - 40) * (dy - 40) < 400;
			o[0] = (guint8)MIN(255u, (in ? 220 : dx * 2) + shift);
			o[1] = (guint8)MIN(255u, (in ? 40 : dy * 2) + shift);
			o[2] = (guint8)MIN(255u, ((dx + dy) % 50) * 4 + shift);
		}
	return p;
}

static void test_rendition(void)
{
	g_autofree guint8 *a = picture(256, 192, 0);
	PixPhash h;
	pix_phash_of_rendition(&h, a, 256, 192, 3, NULL);
	g_assert_true(h.is_set);
	g_assert_false(h.is_weak);
	g_assert_cmpuint(h.n_decided, >=, PIX_PHASH_MIN_DECIDED);
	/* the value catalogs hold for this picture: must never change
	 * (a change is a new PIX_PHASH_VERSION) */
	g_assert_cmphex(h.value, ==, 0x881337672d5e9e1aull);
	char hex[17];
	pix_phash_format(h.value, hex);
	g_assert_cmpstr(hex, ==, "881337672d5e9e1a");

	/* the same picture at another size, and brighter: near */
	g_autofree guint8 *b = picture(512, 384, 0);
	g_autofree guint8 *c = picture(256, 192, 20);
	PixPhash hb, hc;
	pix_phash_of_rendition(&hb, b, 512, 384, 3, NULL);
	pix_phash_of_rendition(&hc, c, 256, 192, 3, NULL);
	g_assert_cmpuint(pix_phash_distance(h.value, hb.value), <=, 2);
	g_assert_cmpuint(pix_phash_distance(h.value, hc.value), <=, PIX_PHASH_DEFAULT_DISTANCE);
	/* turned upside down: another picture */
	g_autofree guint8 *d = g_malloc(256 * 192 * 3);
	for (guint y = 0; y < 192; y++)
		memcpy(d + (gsize)y * 256 * 3, a + (gsize)(191 - y) * 256 * 3, 256 * 3);
	PixPhash hd;
	pix_phash_of_rendition(&hd, d, 256, 192, 3, NULL);
	g_assert_cmpuint(pix_phash_distance(h.value, hd.value), >, 2 * PIX_PHASH_DEFAULT_DISTANCE);
}

static void test_weak(void)
{
	GBytes *stored = g_bytes_new_static("rendition bytes", 15);
	GBytes *other = g_bytes_new_static("rendition bytez", 15);
	PixPhash h, h2;

	/* uniform: weak, its value the digest of the stored bytes */
	g_autofree guint8 *flat = g_malloc(256 * 192 * 3);
	memset(flat, 30, 256 * 192 * 3);
	pix_phash_of_rendition(&h, flat, 256, 192, 3, stored);
	g_assert_true(h.is_set && h.is_weak);
	g_assert_cmpuint(h.n_decided, ==, 0);
	g_assert_cmphex(h.value, ==, pix_phash_digest("rendition bytes", 15));
	pix_phash_of_rendition(&h2, flat, 256, 192, 3, other);
	g_assert_cmphex(h.value, !=, h2.value);
	/* no stored bytes: no hash at all */
	pix_phash_of_rendition(&h2, flat, 256, 192, 3, NULL);
	g_assert_false(h2.is_set);

	/* a smooth ramp (a clear sky): its few decided frequencies do not
	 * make a hash */
	for (guint y = 0; y < 192; y++)
		for (guint x = 0; x < 256 * 3; x++)
			flat[y * 256 * 3 + x] = (guint8)(100 + y / 4);
	pix_phash_of_rendition(&h, flat, 256, 192, 3, stored);
	g_assert_true(h.is_weak);
	g_assert_cmpuint(h.n_decided, <, PIX_PHASH_MIN_DECIDED);

	/* tiny: under the grid on an edge */
	g_autofree guint8 *tiny = picture(40, 20, 0);
	pix_phash_of_rendition(&h, tiny, 40, 20, 3, stored);
	g_assert_true(h.is_weak);
	g_autofree guint8 *small = picture(48, 32, 0);
	pix_phash_of_rendition(&h, small, 48, 32, 3, stored);
	g_assert_false(h.is_weak);
	g_bytes_unref(stored);
	g_bytes_unref(other);
}

static void test_digest(void)
{
	/* SHA-256("abc") begins ba7816bf8f01cfea */
	g_assert_cmphex(pix_phash_digest("abc", 3), ==, 0xba7816bf8f01cfeaull);
	g_assert_cmpuint(pix_phash_distance(0, ~(guint64)0), ==, 64);
	g_assert_cmpuint(pix_phash_distance(0xf0, 0x0f), ==, 8);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/phash/reference", test_reference);
	g_test_add_func("/phash/dct-direct", test_dct_direct);
	g_test_add_func("/phash/grey", test_grey);
	g_test_add_func("/phash/rendition", test_rendition);
	g_test_add_func("/phash/weak", test_weak);
	g_test_add_func("/phash/digest", test_digest);
	return g_test_run();
}

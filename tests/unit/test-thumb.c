/*
 * test-thumb.c: unit tests of src/thumb.h, thumbnails made from a file's
 * bytes as they are read.
 *
 * The JPEGs are made here with libjpeg: a smooth colour field (red across,
 * green down, blue constant), so that a rendition's pixels can be compared
 * with the field's value at the same place.  Fed in pieces of every size,
 * the maker must give the same bytes as fed at once (libjpeg suspends and
 * resumes at any byte); cut, hostile and foreign files give a note or
 * nothing, never a crash.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <jpeglib.h>

static guint8 field(guint x, guint y, guint w, guint h, guint k)
{
	switch (k) {
	case 0: return (guint8)(x * 255 / MAX(w - 1, 1));
	case 1: return (guint8)(y * 255 / MAX(h - 1, 1));
	default: return 96;
	}
}

/* A JPEG of w x h pixels, RGB (or gray), baseline or progressive. */
static GBytes *make_jpeg(guint w, guint h, gboolean is_gray, gboolean is_progressive)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr err;
	unsigned char *buf = NULL;
	unsigned long size = 0;
	c.err = jpeg_std_error(&err);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, &size);
	c.image_width = w;
	c.image_height = h;
	c.input_components = is_gray ? 1 : 3;
	c.in_color_space = is_gray ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 90, TRUE);
	if (is_progressive)
		jpeg_simple_progression(&c);
	jpeg_start_compress(&c, TRUE);
	g_autofree guint8 *row = g_malloc((gsize)w * 3);
	while (c.next_scanline < h) {
		for (guint x = 0; x < w; x++)
			for (guint k = 0; k < (guint)c.input_components; k++)
				row[x * c.input_components + k] = is_gray ? field(x, c.next_scanline, w, h, 0)
				                                          : field(x, c.next_scanline, w, h, k);
		JSAMPROW r = row;
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	GBytes *b = g_bytes_new(buf, size);
	free(buf);
	return b;
}

/* Decodes a rendition: its size, components and pixels (transfer full). */
static guint8 *decode(GBytes *jpeg, guint *w, guint *h, guint *comps)
{
	struct jpeg_decompress_struct d;
	struct jpeg_error_mgr err;
	gsize len;
	const guint8 *data = g_bytes_get_data(jpeg, &len);
	d.err = jpeg_std_error(&err);
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, data, len);
	g_assert_cmpint(jpeg_read_header(&d, TRUE), ==, JPEG_HEADER_OK);
	g_assert_false(d.progressive_mode);     /* baseline, for every consumer */
	jpeg_start_decompress(&d);
	*w = d.output_width;
	*h = d.output_height;
	*comps = (guint)d.output_components;
	guint8 *px = g_malloc((gsize)*w * *h * *comps);
	while (d.output_scanline < d.output_height) {
		JSAMPROW r = px + (gsize)d.output_scanline * *w * *comps;
		jpeg_read_scanlines(&d, &r, 1);
	}
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
	return px;
}

/* Feeds `f` in pieces of `piece` bytes (0: random sizes). */
static PixThumb *make_in_pieces(PixThumbMaker *m, GBytes *f, gsize piece, GRand *r)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(f, &len);
	for (gsize at = 0; at < len;) {
		gsize n = piece > 0 ? piece : (gsize)g_rand_int_range(r, 1, 70000);
		n = MIN(n, len - at);
		pix_thumb_maker_feed(m, data + at, n);
		at += n;
	}
	return pix_thumb_maker_finish(m);
}

/* Each rendition's size, and its pixels against the field. */
static void check_renditions(const PixThumb *t, guint w, guint h, gboolean is_gray)
{
	g_assert_null(t->note);
	g_assert_cmpstr(t->source, ==, "jpeg");
	for (guint i = 0; i < PIX_THUMB_N_SIZES; i++) {
		guint edge = pix_thumb_edge(i);
		guint long_edge = MAX(w, h) <= edge ? MAX(w, h) : edge;
		g_assert_cmpuint(MAX(t->width_px[i], t->height_px[i]), ==, long_edge);
		g_assert_cmpuint(w >= h, ==, t->width_px[i] >= t->height_px[i]);
		guint dw, dh, comps;
		g_autofree guint8 *px = decode(t->jpeg[i], &dw, &dh, &comps);
		g_assert_cmpuint(dw, ==, t->width_px[i]);
		g_assert_cmpuint(dh, ==, t->height_px[i]);
		g_assert_cmpuint(comps, ==, is_gray ? 1 : 3);
		/* the aspect ratio within a pixel */
		if (MIN(dw, dh) >= 4)
			g_assert_cmpfloat(fabs((double)dw / dh - (double)w / h) * MIN(dw, dh), <, 1.5);
		/* every 16th pixel within 12 levels of the field at that place
		 * (not for a strip a few pixels high: its blocks are mostly the
		 * encoder's padding, which a DC-only decode averages in) */
		for (guint y = 0; MIN(w, h) >= 64 && y < dh; y += 16)
			for (guint x = 0; x < dw; x += 16)
				for (guint k = 0; k < comps; k++) {
					guint sx = (guint)(((double)x + 0.5) * w / dw), sy = (guint)(((double)y + 0.5) * h / dh);
					int want = is_gray ? field(sx, sy, w, h, 0) : field(sx, sy, w, h, k);
					int got = px[((gsize)y * dw + x) * comps + k];
					if (abs(got - want) > 12)
						g_error("rendition %u (%ux%u), pixel %u,%u component %u: %d, the field %d", i, dw, dh,
						        x, y, k, got, want);
				}
	}
}

static void test_sizes(void)
{
	static const struct { guint w, h; gboolean is_gray, is_progressive; } cases[] = {
		{ 3000, 2000, FALSE, FALSE },   /* decoded at 2/8: 750 x 500 */
		{ 2000, 3000, FALSE, FALSE },   /* portrait */
		{ 1024, 768, TRUE, FALSE },     /* gray, at 4/8 */
		{ 640, 480, FALSE, TRUE },      /* progressive, at 7/8 */
		{ 300, 200, FALSE, FALSE },     /* smaller than x-large: never enlarged */
		{ 100, 40, FALSE, FALSE },      /* smaller than both */
		{ 4097, 3, FALSE, FALSE },      /* a strip */
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GBytes) f = make_jpeg(cases[i].w, cases[i].h, cases[i].is_gray, cases[i].is_progressive);
		gsize len;
		const guint8 *data = g_bytes_get_data(f, &len);
		g_autoptr(PixThumb) t = pix_thumb_from_buffer(data, len);
		g_assert_nonnull(t);
		check_renditions(t, cases[i].w, cases[i].h, cases[i].is_gray);
	}
}

/* The same bytes whatever the pieces: libjpeg resumes where it stopped. */
static void test_pieces(void)
{
	g_autoptr(GRand) r = g_rand_new_with_seed(7);
	g_autoptr(GBytes) f = make_jpeg(1600, 1200, FALSE, FALSE);
	g_autoptr(GBytes) p = make_jpeg(900, 700, FALSE, TRUE);
	PixThumbMaker *m = pix_thumb_maker_new();
	GBytes *files[] = { f, p };
	for (guint k = 0; k < G_N_ELEMENTS(files); k++) {
		g_autoptr(PixThumb) whole = make_in_pieces(m, files[k], G_MAXSIZE, NULL);
		static const gsize pieces[] = { 1, 3, 64, 4096, 65536, 0, 0 };
		for (guint i = 0; i < G_N_ELEMENTS(pieces); i++) {
			g_autoptr(PixThumb) t = make_in_pieces(m, files[k], pieces[i], r);
			g_assert_null(t->note);
			for (guint s = 0; s < PIX_THUMB_N_SIZES; s++)
				g_assert_true(g_bytes_equal(t->jpeg[s], whole->jpeg[s]));
		}
	}
	pix_thumb_maker_free(m);
}

static void test_truncated(void)
{
	g_autoptr(GBytes) f = make_jpeg(1200, 900, FALSE, FALSE);
	g_autoptr(GBytes) p = make_jpeg(1200, 900, FALSE, TRUE);
	PixThumbMaker *m = pix_thumb_maker_new();
	GBytes *files[] = { f, p };
	for (guint k = 0; k < G_N_ELEMENTS(files); k++) {
		gsize len;
		const guint8 *data = g_bytes_get_data(files[k], &len);
		static const double at[] = { 0.001, 0.01, 0.3, 0.7, 0.995 };
		for (guint i = 0; i < G_N_ELEMENTS(at); i++) {
			pix_thumb_maker_feed(m, data, MAX(3, (gsize)(len * at[i])));
			g_autoptr(PixThumb) t = pix_thumb_maker_finish(m);
			g_assert_nonnull(t);
			g_assert_nonnull(t->note);
			g_assert_null(t->jpeg[0]);
			g_assert_nonnull(strstr(t->note, "truncated"));
		}
		/* and the maker is as new after it */
		g_autoptr(PixThumb) t = make_in_pieces(m, files[k], 5000, NULL);
		check_renditions(t, 1200, 900, FALSE);
	}
	pix_thumb_maker_free(m);
}

/* A header claiming 65,500 x 65,500 pixels is refused before any decoding;
 * so is a huge progressive one whose coefficients would not fit. */
static void test_bounds(void)
{
	g_autoptr(GBytes) f = make_jpeg(16, 16, FALSE, FALSE);
	gsize len;
	const guint8 *orig = g_bytes_get_data(f, &len);
	g_autofree guint8 *data = g_memdup2(orig, len);
	gboolean is_patched = FALSE;
	for (gsize i = 0; i + 9 < len; i++)
		if (data[i] == 0xFF && data[i + 1] == 0xC0) {
			/* SOF0: length(2) precision(1) height(2) width(2) */
			data[i + 5] = 0xFF; data[i + 6] = 0xDC;
			data[i + 7] = 0xFF; data[i + 8] = 0xDC;
			is_patched = TRUE;
			break;
		}
	g_assert_true(is_patched);
	g_autoptr(PixThumb) t = pix_thumb_from_buffer(data, len);
	g_assert_nonnull(t);
	g_assert_nonnull(t->note);
	g_assert_nonnull(strstr(t->note, "65500 x 65500"));

	g_autoptr(GBytes) big = make_jpeg(6000, 6000, FALSE, TRUE);
	const guint8 *bd = g_bytes_get_data(big, &len);
	g_autoptr(PixThumb) b = pix_thumb_from_buffer(bd, len);
	g_assert_nonnull(b);
	g_assert_nonnull(b->note);
	g_assert_nonnull(strstr(b->note, "MiB"));
}

static void test_foreign(void)
{
	static const guint8 gif[] = { 'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0 };
	g_assert_null(pix_thumb_from_buffer(gif, sizeof gif));
	g_assert_null(pix_thumb_from_buffer(gif, 2));
	g_assert_null(pix_thumb_from_buffer(NULL, 0));
	/* a PNG's signature and nothing more: a note (PNGs are decoded) */
	static const guint8 png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0 };
	g_autoptr(PixThumb) p = pix_thumb_from_buffer(png, sizeof png);
	g_assert_nonnull(p);
	g_assert_cmpstr(p->note, ==, "a truncated PNG");
	/* a JPEG's start and then garbage: a note, not a crash */
	guint8 junk[4096];
	junk[0] = 0xFF; junk[1] = 0xD8; junk[2] = 0xFF;
	for (guint i = 3; i < sizeof junk; i++)
		junk[i] = (guint8)(i * 131 + 7);
	g_autoptr(PixThumb) t = pix_thumb_from_buffer(junk, sizeof junk);
	g_assert_nonnull(t);
	g_assert_nonnull(t->note);
}

/* Random damage to a good JPEG: a note or a thumbnail, never a crash
 * (ASan and UBSan watch the make check SANITIZE=1 pass). */
static void test_damage(void)
{
	g_autoptr(GRand) r = g_rand_new_with_seed(11);
	g_autoptr(GBytes) f = make_jpeg(800, 600, FALSE, FALSE);
	gsize len;
	const guint8 *orig = g_bytes_get_data(f, &len);
	g_autofree guint8 *data = g_malloc(len);
	PixThumbMaker *m = pix_thumb_maker_new();
	for (guint trial = 0; trial < 300; trial++) {
		memcpy(data, orig, len);
		guint n = (guint)g_rand_int_range(r, 1, 20);
		for (guint i = 0; i < n; i++)
			data[g_rand_int_range(r, 0, (gint32)MIN(len, 2000 + trial * 50))] = (guint8)g_rand_int(r);
		pix_thumb_maker_feed(m, data, len);
		g_autoptr(PixThumb) t = pix_thumb_maker_finish(m);
		if (t != NULL && t->note == NULL)
			for (guint s = 0; s < PIX_THUMB_N_SIZES; s++)
				g_assert_nonnull(t->jpeg[s]);
	}
	pix_thumb_maker_free(m);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/thumb/sizes", test_sizes);
	g_test_add_func("/thumb/pieces", test_pieces);
	g_test_add_func("/thumb/truncated", test_truncated);
	g_test_add_func("/thumb/bounds", test_bounds);
	g_test_add_func("/thumb/foreign", test_foreign);
	g_test_add_func("/thumb/damage", test_damage);
	return g_test_run();
}

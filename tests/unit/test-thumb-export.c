/*
 * test-thumb-export.c: unit tests of src/thumb-export.h: stored renditions
 * decoded (DCT-scaled), turned by each EXIF orientation, scaled, fitted as
 * each front end fits them, encoded; damaged ones refused.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-export.h"
#include "testlib.h"

#include <gio/gio.h>

/* A w x h image whose pixel (x, y) is (x, y, 7): every turn can be told. */
static PixPixels coords(guint w, guint h)
{
	PixPixels p = { .width = w, .height = h, .channels = 3, .data = g_malloc((gsize)w * h * 3) };
	for (guint y = 0; y < h; y++)
		for (guint x = 0; x < w; x++) {
			guint8 *px = p.data + ((gsize)y * w + x) * 3;
			px[0] = (guint8)x, px[1] = (guint8)y, px[2] = 7;
		}
	return p;
}

/* The source pixel (x, y) shown at the top left, top right and bottom
 * left once turned upright. */
static void corners(const PixPixels *p, guint out[6])
{
	const guint8 *tl = p->data, *tr = p->data + (gsize)(p->width - 1) * 3,
	             *bl = p->data + (gsize)(p->height - 1) * p->width * 3;
	out[0] = tl[0], out[1] = tl[1], out[2] = tr[0], out[3] = tr[1], out[4] = bl[0], out[5] = bl[1];
}

/* EXIF orientation as the specification draws it: the stored image is
 * 4 x 2 (x 0..3, y 0..1); after the turn, which stored pixel is at the
 * top left, top right and bottom left of what is shown. */
static void test_orient(void)
{
	static const struct {
		int orientation;
		guint w, h;
		guint want[6];
	} cases[] = {
		{ 1, 4, 2, { 0, 0, 3, 0, 0, 1 } },
		{ 2, 4, 2, { 3, 0, 0, 0, 3, 1 } },      /* mirrored left to right */
		{ 3, 4, 2, { 3, 1, 0, 1, 3, 0 } },      /* half a turn */
		{ 4, 4, 2, { 0, 1, 3, 1, 0, 0 } },      /* mirrored top to bottom */
		{ 5, 2, 4, { 0, 0, 0, 1, 3, 0 } },      /* transposed */
		{ 6, 2, 4, { 0, 1, 0, 0, 3, 1 } },      /* a quarter turn clockwise */
		{ 7, 2, 4, { 3, 1, 3, 0, 0, 1 } },      /* transversed */
		{ 8, 2, 4, { 3, 0, 3, 1, 0, 0 } },      /* a quarter turn counter-clockwise */
		{ 9, 4, 2, { 0, 0, 3, 0, 0, 1 } },      /* not an orientation: as it is */
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		PixPixels p = coords(4, 2);
		pix_pixels_orient(&p, cases[i].orientation);
		guint got[6];
		g_assert_cmpuint(p.width, ==, cases[i].w);
		g_assert_cmpuint(p.height, ==, cases[i].h);
		corners(&p, got);
		for (int k = 0; k < 6; k++)
			g_assert_cmpuint(got[k], ==, cases[i].want[k]);
		pix_pixels_clear(&p);
	}
	/* KPhotoAlbum's angles: clockwise */
	g_assert_cmpint(pix_orientation_of_angle(90), ==, 6);
	g_assert_cmpint(pix_orientation_of_angle(180), ==, 3);
	g_assert_cmpint(pix_orientation_of_angle(270), ==, 8);
	g_assert_cmpint(pix_orientation_of_angle(45), ==, 1);
}

static void test_fit(void)
{
	guint w, h;
	/* Qt's KeepAspectRatio: truncated, enlarged when smaller */
	pix_fit_box(300, 200, 256, &w, &h);
	g_assert_cmpuint(w, ==, 256);
	g_assert_cmpuint(h, ==, 170);
	pix_fit_box(300, 900, 256, &w, &h);
	g_assert_cmpuint(w, ==, 85);
	g_assert_cmpuint(h, ==, 256);
	pix_fit_box(64, 48, 256, &w, &h);
	g_assert_cmpuint(w, ==, 256);
	g_assert_cmpuint(h, ==, 192);
	pix_fit_box(5000, 1, 256, &w, &h);
	g_assert_cmpuint(w, ==, 256);
	g_assert_cmpuint(h, ==, 1);
	/* the freedesktop.org sizes: rounded, never enlarged */
	pix_fit_within(300, 200, 128, &w, &h);
	g_assert_cmpuint(w, ==, 128);
	g_assert_cmpuint(h, ==, 85);
	pix_fit_within(86, 256, 128, &w, &h);
	g_assert_cmpuint(w, ==, 43);
	g_assert_cmpuint(h, ==, 128);
	pix_fit_within(64, 48, 128, &w, &h);
	g_assert_cmpuint(w, ==, 64);
	g_assert_cmpuint(h, ==, 48);
}

/* An area average keeps a flat image flat and a mean where it shrinks; a
 * linear enlargement keeps the ends. */
static void test_scale(void)
{
	PixPixels p = { .width = 6, .height = 1, .channels = 1, .data = g_memdup2("\x00\x00\x00\xff\xff\xff", 6) };
	pix_pixels_scale(&p, 2, 1);
	g_assert_cmpuint(p.data[0], ==, 0);
	g_assert_cmpuint(p.data[1], ==, 255);
	pix_pixels_scale(&p, 3, 1);     /* 0 and 255 spread over three */
	g_assert_cmpuint(p.data[0], ==, 0);
	g_assert_cmpuint(p.data[2], ==, 255);
	g_assert_cmpuint(p.data[1], >, 100);
	g_assert_cmpuint(p.data[1], <, 155);
	pix_pixels_clear(&p);
	/* 4 x 4 into 3 x 3: each target pixel a third of the source's 4/3 */
	p = (PixPixels){ .width = 4, .height = 4, .channels = 1, .data = g_malloc(16) };
	memset(p.data, 200, 16);
	pix_pixels_scale(&p, 3, 3);
	for (int i = 0; i < 9; i++)
		g_assert_cmpuint(p.data[i], ==, 200);
	pix_pixels_scale(&p, 7, 5);
	for (int i = 0; i < 35; i++)
		g_assert_cmpuint(p.data[i], ==, 200);
	pix_pixels_clear(&p);
}

/* Encoded and decoded again: the size, the colours (within JPEG's loss),
 * and the DCT scale asked for. */
static void test_jpeg(void)
{
	PixPixels p = { .width = 64, .height = 48, .channels = 3, .data = g_malloc(64 * 48 * 3) };
	for (gsize i = 0; i < 64 * 48; i++)
		p.data[3 * i] = 250, p.data[3 * i + 1] = 20, p.data[3 * i + 2] = 100;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) jpeg = pix_pixels_to_jpeg(&p, &error);
	g_assert_no_error(error);
	pix_pixels_clear(&p);
	gsize len;
	const guint8 *b = g_bytes_get_data(jpeg, &len);
	g_assert_true(pix_pixels_from_jpeg(b, len, 0, &p, &error));
	g_assert_cmpuint(p.width, ==, 64);
	g_assert_cmpuint(p.height, ==, 48);
	g_assert_cmpuint(p.channels, ==, 3);
	g_assert_cmpint(abs((int)p.data[0] - 250), <, 6);
	g_assert_cmpint(abs((int)p.data[1] - 20), <, 6);
	g_assert_cmpint(abs((int)p.data[2] - 100), <, 6);
	pix_pixels_clear(&p);
	/* at least 30 px on the long edge: 4/8 of 64 is 32 */
	g_assert_true(pix_pixels_from_jpeg(b, len, 30, &p, &error));
	g_assert_cmpuint(p.width, ==, 32);
	g_assert_cmpuint(p.height, ==, 24);
	pix_pixels_clear(&p);
	/* cut, not a JPEG, a hostile size: an error, empty pixels */
	g_assert_false(pix_pixels_from_jpeg(b, len / 2, 0, &p, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
	g_assert_null(p.data);
	g_clear_error(&error);
	g_assert_false(pix_pixels_from_jpeg((const guint8 *)"GIF89a", 6, 0, &p, &error));
	g_clear_error(&error);
	g_autofree guint8 *big = g_memdup2(b, len);
	for (gsize i = 2; i + 9 < len; i++)
		if (big[i] == 0xFF && big[i + 1] == 0xC0) {   /* SOF0: height, width */
			big[i + 5] = 0x7F, big[i + 6] = 0xFF;
			break;
		}
	g_assert_false(pix_pixels_from_jpeg(big, len, 0, &p, &error));
	g_assert_nonnull(strstr(error->message, "claims"));
	g_clear_error(&error);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/thumb-export/orient", test_orient);
	g_test_add_func("/thumb-export/fit", test_fit);
	g_test_add_func("/thumb-export/scale", test_scale);
	g_test_add_func("/thumb-export/jpeg", test_jpeg);
	return g_test_run();
}

/*
 * thumb-png.c: PNGs decoded as they stream (see thumb-int.h).  The one
 * place that talks to libpng.
 *
 * Runs on a hash thread.  libpng's progressive reader (png_process_data)
 * takes the file's pieces as they come and calls back each row, which
 * goes straight into a ThumbShrink: what is held is zlib's window, one
 * row and the rendition, whatever the image's size.  Palette, low bit
 * depths and 16 bits are expanded or stripped to 8-bit gray or RGB; an
 * alpha channel (or tRNS) is laid over white.  An interlaced (Adam7)
 * image gives its rows in seven passes; the seventh holds every odd row
 * whole, and those rows alone make the rendition (so no pass is kept).
 *
 * Bounds: the size from IHDR against thumb_check_size() before a row is
 * allocated; ancillary chunks at most 8 MiB each once decompressed (iCCP,
 * zTXt bombs) and 1,000 of them.
 *
 * Invariants:
 *  1. libpng is only called under setjmp(png_jmpbuf()); its errors end
 *     the stream in THUMB_FAILED with a note, and its objects are then
 *     destroyed (a ThumbPng is made per file).
 *  2. Once out of THUMB_RUNNING, further input is ignored.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-int.h"

#include <png.h>
#include <string.h>

struct ThumbPng {
	ThumbState state;
	png_structp png;
	png_infop info;
	guint w, h;             /* the image's */
	guint in_c;             /* samples a row has: 1..4 */
	guint c;                /* samples the shrink takes: 1 or 3 */
	gboolean is_interlaced;
	guint8 *row;            /* a row without alpha (owned) */
	ThumbShrink xl;
	char *note;             /* (owned) */
};

static void on_png_error(png_structp png, png_const_charp msg)
{
	ThumbPng *d = png_get_error_ptr(png);
	if (d->note == NULL)
		d->note = g_strdup_printf("corrupt PNG: %s", msg);
	png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void on_info(png_structp png, png_infop info)
{
	ThumbPng *d = png_get_progressive_ptr(png);
	png_uint_32 w, h;
	int depth, color, interlace;
	png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
	char *note = NULL;
	if (!thumb_check_size(w, h, &note)) {
		d->note = note;
		png_longjmp(png, 1);
	}
	d->w = w;
	d->h = h;
	d->is_interlaced = interlace != PNG_INTERLACE_NONE;
	if (d->is_interlaced && h < 2) {
		d->note = g_strdup("an interlaced PNG one pixel high");
		png_longjmp(png, 1);
	}
	png_set_expand(png);
	png_set_strip_16(png);
	/* no png_set_interlace_handling(): each pass's rows come as they are */
	png_read_update_info(png, info);
	d->in_c = png_get_channels(png, info);
	d->c = d->in_c >= 3 ? 3 : 1;
	d->row = g_malloc((gsize)w * d->c);
	/* the rendition has the image's shape, whichever rows make it */
	guint tw, th, rows = d->is_interlaced ? h / 2 : h;
	thumb_fit(w, h, PIX_THUMB_MAX_EDGE, &tw, &th);
	thumb_shrink_init_to(&d->xl, w, rows, d->c, tw, MIN(th, rows));
}

/* A row of `in_c` samples to `c`, alpha laid over white. */
static const guint8 *flatten(ThumbPng *d, const guint8 *row)
{
	if (d->in_c == d->c)
		return row;
	guint n = d->c;
	for (guint x = 0; x < d->w; x++) {
		const guint8 *p = row + (gsize)x * d->in_c;
		guint a = p[n];
		for (guint k = 0; k < n; k++)
			d->row[(gsize)x * n + k] = (guint8)((p[k] * a + 255 * (255 - a) + 127) / 255);
	}
	return d->row;
}

static void on_row(png_structp png, png_bytep row, png_uint_32 row_num, int pass)
{
	ThumbPng *d = png_get_progressive_ptr(png);
	(void)row_num;
	if (row == NULL || (d->is_interlaced && pass != 6) || d->xl.y >= d->xl.sh)
		return;
	thumb_shrink_row(&d->xl, flatten(d, row));
}

static void on_end(png_structp png, png_infop info)
{
	ThumbPng *d = png_get_progressive_ptr(png);
	(void)info;
	if (thumb_shrink_is_done(&d->xl))
		d->state = THUMB_DONE;
}

static void destroy(ThumbPng *d)
{
	if (d->png != NULL)
		png_destroy_read_struct(&d->png, &d->info, NULL);
	d->png = NULL;
	d->info = NULL;
	g_clear_pointer(&d->row, g_free);
}

ThumbPng *thumb_png_new(void)
{
	ThumbPng *d = g_new0(ThumbPng, 1);
	d->state = THUMB_RUNNING;
	d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, on_png_error, on_png_warning);
	d->info = d->png != NULL ? png_create_info_struct(d->png) : NULL;
	if (d->info == NULL)
		g_error("libpng cannot start: out of memory");
	png_set_progressive_read_fn(d->png, d, on_info, on_row, on_end);
	png_set_chunk_malloc_max(d->png, (png_alloc_size_t)8 << 20);
	png_set_chunk_cache_max(d->png, 1000);
	/* a bad checksum costs a picture nothing: what is there is shown,
	 * as browsers do; damage to the data itself still fails in zlib */
	png_set_crc_action(d->png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
	/* the size is ours to judge (on_info), not libpng's default million */
	png_set_user_limits(d->png, 0x7fffffff, 0x7fffffff);
	return d;
}

void thumb_png_free(ThumbPng *d)
{
	if (d == NULL)
		return;
	destroy(d);
	thumb_shrink_clear(&d->xl);
	g_free(d->note);
	g_free(d);
}

ThumbState thumb_png_state(const ThumbPng *d)
{
	return d->state;
}

void thumb_png_feed(ThumbPng *d, const guint8 *data, gsize len)
{
	if (d->state != THUMB_RUNNING || len == 0)
		return;
	if (setjmp(png_jmpbuf(d->png))) {
		d->state = THUMB_FAILED;
		if (d->note == NULL)
			d->note = g_strdup("corrupt PNG");
		destroy(d);
		return;
	}
	png_process_data(d->png, d->info, (png_bytep)data, len);
	if (d->state == THUMB_DONE)
		destroy(d);
}

gboolean thumb_png_finish(ThumbPng *d, ThumbPixels *out, guint *width_px, guint *height_px, char **note)
{
	gboolean ok = FALSE;
	*note = NULL;
	if (d == NULL)
		return FALSE;
	if (d->state == THUMB_DONE) {
		thumb_shrink_take(&d->xl, out);
		*width_px = d->w;
		*height_px = d->h;
		ok = TRUE;
	} else if (d->state == THUMB_FAILED) {
		*note = g_steal_pointer(&d->note);
	} else {
		*note = g_strdup("a truncated PNG");
	}
	thumb_png_free(d);
	return ok;
}

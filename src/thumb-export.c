/*
 * thumb-export.c: stored renditions made into what a front end's cache
 * wants (see thumb-export.h): decoded (libjpeg, DCT-scaled when a smaller
 * size is wanted), turned, scaled, encoded again.
 *
 * Reads JPEG bytes from the catalog (never a file); writes memory only.
 * Any thread: every call has its own libjpeg objects and pixels.
 *
 * Invariants:
 *  1. libjpeg is only called under setjmp(); its errors and its warnings
 *     (a cut or damaged stream) come back as a GError, never as a
 *     message on stderr or an exit, and every object is destroyed.
 *  2. No pixel buffer is allocated before the frame's size has been
 *     checked against PIX_THUMB_EXPORT_MAX_EDGE: a hostile row costs at
 *     most 1024 x 1024 x 3 bytes, plus the scaler's floats.
 *  3. A PixPixels is either empty (data NULL, sizes 0) or holds exactly
 *     width * height * channels bytes (pixels_check()).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-export.h"
#include "thumb-int.h"

#include <gio/gio.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	gboolean has_warning;   /* a cut or damaged stream */
	char message[JMSG_LENGTH_MAX];
} ErrorMgr;

static gboolean pixels_check(const PixPixels *p)
{
	if (p->data == NULL)
		return p->width == 0 && p->height == 0;
	return p->width > 0 && p->height > 0 && (p->channels == 1 || p->channels == 3);
}

void pix_pixels_clear(PixPixels *p)
{
	g_free(p->data);
	memset(p, 0, sizeof *p);
}

static void on_error(j_common_ptr cinfo)
{
	ErrorMgr *e = (ErrorMgr *)cinfo->err;
	e->pub.format_message(cinfo, e->message);
	longjmp(e->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level)
{
	ErrorMgr *e = (ErrorMgr *)cinfo->err;
	if (level < 0 && !e->has_warning) {
		e->has_warning = TRUE;
		e->pub.format_message(cinfo, e->message);
	}
}

static void error_init(ErrorMgr *e)
{
	memset(e, 0, sizeof *e);
	jpeg_std_error(&e->pub);
	e->pub.error_exit = on_error;
	e->pub.emit_message = on_message;
}

static gboolean damaged(GError **error, const char *why)
{
	g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a stored thumbnail is damaged: %s", why);
	return FALSE;
}

/* The scale n/8 (1..8) whose output's long edge is the smallest still
 * at least `min_edge`. */
static int scale_for(guint long_edge, guint min_edge)
{
	if (min_edge == 0)
		return 8;
	for (int n = 1; n < 8; n++)
		if (((guint64)long_edge * (guint)n + 7) / 8 >= min_edge)
			return n;
	return 8;
}

gboolean pix_pixels_from_jpeg(const guint8 *jpeg, gsize len, guint min_edge, PixPixels *out, GError **error)
{
	struct jpeg_decompress_struct d;
	ErrorMgr e;
	guint8 *volatile data = NULL;

	pix_pixels_clear(out);
	if (len < 4 || len > G_MAXUINT32 || jpeg[0] != 0xFF || jpeg[1] != 0xD8)
		return damaged(error, "not a JPEG");
	error_init(&e);
	d.err = &e.pub;
	if (setjmp(e.jump)) {
		jpeg_destroy_decompress(&d);
		g_free(data);
		return damaged(error, e.message);
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, jpeg, (unsigned long)len);
	jpeg_read_header(&d, TRUE);
	if (d.image_width == 0 || d.image_height == 0 || d.image_width > PIX_THUMB_EXPORT_MAX_EDGE ||
	    d.image_height > PIX_THUMB_EXPORT_MAX_EDGE) {
		jpeg_destroy_decompress(&d);
		g_autofree char *why = g_strdup_printf("it claims %u x %u pixels", d.image_width, d.image_height);
		return damaged(error, why);
	}
	if (d.jpeg_color_space == JCS_GRAYSCALE) {
		d.out_color_space = JCS_GRAYSCALE;
	} else if (d.num_components == 3) {
		d.out_color_space = JCS_RGB;
	} else {
		jpeg_destroy_decompress(&d);
		return damaged(error, "its colours are neither grey nor RGB");
	}
	d.scale_num = (unsigned)scale_for(MAX(d.image_width, d.image_height), min_edge);
	d.scale_denom = 8;
	d.dct_method = JDCT_ISLOW;
	jpeg_start_decompress(&d);
	guint w = d.output_width, h = d.output_height, c = (guint)d.output_components;
	gsize stride = (gsize)w * c;
	data = g_malloc((gsize)h * stride);
	while (d.output_scanline < h) {
		JSAMPROW row = data + (gsize)d.output_scanline * stride;
		if (jpeg_read_scanlines(&d, &row, 1) != 1)
			break;
	}
	gboolean is_whole = d.output_scanline == h && !e.has_warning;
	if (is_whole)
		jpeg_finish_decompress(&d);
	is_whole = is_whole && !e.has_warning;
	jpeg_destroy_decompress(&d);
	if (!is_whole) {
		g_free(data);
		return damaged(error, e.message[0] != '\0' ? e.message : "it is cut");
	}
	*out = (PixPixels){ .width = w, .height = h, .channels = c, .data = data };
	g_assert(pixels_check(out));
	return TRUE;
}

int pix_orientation_of_angle(int angle)
{
	switch (angle) {
	case 90: return 6;
	case 180: return 3;
	case 270: return 8;
	default: return 1;
	}
}

void pix_pixels_orient(PixPixels *p, int orientation)
{
	g_assert(pixels_check(p));
	if (orientation < 2 || orientation > 8 || p->data == NULL)
		return;
	guint w = p->width, h = p->height, c = p->channels;
	gboolean is_swapped = orientation >= 5;
	guint ow = is_swapped ? h : w, oh = is_swapped ? w : h;
	guint8 *out = g_malloc((gsize)ow * oh * c);
	for (guint y = 0; y < oh; y++) {
		guint8 *dst = out + (gsize)y * ow * c;
		for (guint x = 0; x < ow; x++) {
			guint sx, sy;
			switch (orientation) {
			case 2: sx = w - 1 - x; sy = y; break;
			case 3: sx = w - 1 - x; sy = h - 1 - y; break;
			case 4: sx = x; sy = h - 1 - y; break;
			case 5: sx = y; sy = x; break;
			case 6: sx = y; sy = h - 1 - x; break;
			case 7: sx = w - 1 - y; sy = h - 1 - x; break;
			default: sx = w - 1 - y; sy = x; break;   /* 8 */
			}
			memcpy(dst + (gsize)x * c, p->data + ((gsize)sy * w + sx) * c, c);
		}
	}
	g_free(p->data);
	p->data = out;
	p->width = ow;
	p->height = oh;
}

/* How one target pixel along an axis is made: `n` source pixels from
 * `first`, with weights summing to 1. */
typedef struct {
	guint first, n;
	float *w;               /* n weights (borrowed from the axis' pool) */
} Tap;

typedef struct {
	Tap *taps;              /* one per target pixel (owned) */
	float *pool;            /* (owned) */
} Axis;

static void axis_clear(Axis *a)
{
	g_free(a->taps);
	g_free(a->pool);
}

/* The taps of `dst` target pixels made of `src` source pixels: each
 * target pixel's share of the source (an area average) when shrinking,
 * the two nearest source pixels' centres (linear) when growing. */
static void axis_init(Axis *a, guint src, guint dst)
{
	a->taps = g_new(Tap, dst);
	if (dst < src) {
		double step = (double)src / dst;
		guint max_n = (guint)ceil(step) + 1;
		a->pool = g_new(float, (gsize)dst * max_n);
		for (guint i = 0; i < dst; i++) {
			double lo = i * step, hi = MIN((i + 1) * step, (double)src);
			guint first = (guint)floor(lo), last = MIN((guint)ceil(hi), src) - 1;
			Tap *t = &a->taps[i];
			t->first = first;
			t->n = last - first + 1;
			g_assert(t->n <= max_n);
			t->w = a->pool + (gsize)i * max_n;
			for (guint k = 0; k < t->n; k++) {
				double from = MAX(lo, (double)(first + k)), to = MIN(hi, (double)(first + k + 1));
				t->w[k] = (float)((to - from) / (hi - lo));
			}
		}
	} else {
		a->pool = g_new(float, (gsize)dst * 2);
		for (guint i = 0; i < dst; i++) {
			double at = (i + 0.5) * src / dst - 0.5;
			at = CLAMP(at, 0.0, (double)(src - 1));
			guint first = MIN((guint)floor(at), src - 1);
			double f = at - first;
			Tap *t = &a->taps[i];
			t->first = first;
			t->w = a->pool + (gsize)i * 2;
			t->n = first + 1 < src && f > 0 ? 2 : 1;
			t->w[0] = (float)(t->n == 2 ? 1.0 - f : 1.0);
			if (t->n == 2)
				t->w[1] = (float)f;
		}
	}
}

static guint8 to_byte(float v)
{
	v += 0.5f;
	return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (guint8)v;
}

void pix_pixels_scale(PixPixels *p, guint width, guint height)
{
	g_assert(pixels_check(p) && p->data != NULL && width > 0 && height > 0);
	if (width == p->width && height == p->height)
		return;
	guint sw = p->width, sh = p->height, c = p->channels;
	Axis ax = { 0 }, ay = { 0 };
	axis_init(&ax, sw, width);
	axis_init(&ay, sh, height);
	/* across first, into floats: width x sh */
	float *mid = g_new(float, (gsize)width * sh * c);
	for (guint y = 0; y < sh; y++) {
		const guint8 *row = p->data + (gsize)y * sw * c;
		float *out = mid + (gsize)y * width * c;
		for (guint x = 0; x < width; x++) {
			const Tap *t = &ax.taps[x];
			for (guint k = 0; k < c; k++) {
				float sum = 0.0f;
				for (guint j = 0; j < t->n; j++)
					sum += t->w[j] * row[(gsize)(t->first + j) * c + k];
				out[(gsize)x * c + k] = sum;
			}
		}
	}
	/* then down */
	guint8 *data = g_malloc((gsize)width * height * c);
	gsize stride = (gsize)width * c;
	float *acc = g_new(float, stride);
	for (guint y = 0; y < height; y++) {
		const Tap *t = &ay.taps[y];
		memset(acc, 0, stride * sizeof *acc);
		for (guint j = 0; j < t->n; j++) {
			const float *row = mid + (gsize)(t->first + j) * stride;
			float wj = t->w[j];
			for (gsize i = 0; i < stride; i++)
				acc[i] += wj * row[i];
		}
		guint8 *out = data + (gsize)y * stride;
		for (gsize i = 0; i < stride; i++)
			out[i] = to_byte(acc[i]);
	}
	g_free(acc);
	g_free(mid);
	axis_clear(&ax);
	axis_clear(&ay);
	g_free(p->data);
	p->data = data;
	p->width = width;
	p->height = height;
}

void pix_fit_box(guint width, guint height, guint box, guint *out_width, guint *out_height)
{
	g_assert(width > 0 && height > 0 && box > 0);
	/* QSize::scaled: the height the box's width gives, if it fits */
	guint64 rw = (guint64)box * width / height;
	if (rw <= box) {
		*out_width = (guint)MAX(rw, 1);
		*out_height = box;
	} else {
		*out_width = box;
		*out_height = (guint)MAX((guint64)box * height / width, 1);
	}
}

void pix_fit_within(guint width, guint height, guint box, guint *out_width, guint *out_height)
{
	g_assert(width > 0 && height > 0 && box > 0);
	if (width <= box && height <= box) {
		*out_width = width;
		*out_height = height;
	} else if (width >= height) {
		*out_width = box;
		*out_height = (guint)MAX(((guint64)height * box * 2 + width) / (2 * (guint64)width), 1);
	} else {
		*out_height = box;
		*out_width = (guint)MAX(((guint64)width * box * 2 + height) / (2 * (guint64)height), 1);
	}
}

gboolean pix_fit_agrees(guint width, guint height, guint rend_width, guint rend_height)
{
	if (width == 0 || height == 0 || rend_width == 0 || rend_height == 0)
		return FALSE;
	guint w, h;
	pix_fit_within(width, height, MAX(rend_width, rend_height), &w, &h);
	return (w > rend_width ? w - rend_width : rend_width - w) <= 1 &&
	       (h > rend_height ? h - rend_height : rend_height - h) <= 1;
}

GBytes *pix_pixels_to_jpeg(const PixPixels *p, GError **error)
{
	g_assert(pixels_check(p) && p->data != NULL);
	const ThumbPixels t = { .w = p->width, .h = p->height, .c = p->channels, .data = p->data };
	char *note = NULL;
	GBytes *b = thumb_jpeg_encode(&t, &note);
	if (b == NULL)
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", note);
	g_free(note);
	return b;
}

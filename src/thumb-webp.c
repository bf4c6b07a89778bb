/*
 * thumb-webp.c: WebPs decoded as they stream (see thumb-int.h).  The one
 * place that talks to libwebp.
 *
 * Runs on a hash thread.  The first bytes (at most HEAD_MAX) are kept
 * until WebPGetFeatures() tells the canvas's size; then libwebp's
 * incremental decoder (WebPIAppend) takes the pieces as they come and
 * scales as it decodes (use_scaling) straight to the rendition's size, so
 * what is held is libwebp's state, its input (it keeps all of a lossless
 * image's, at most MAX_WEBP_INPUT bytes) and the rendition.  Alpha is laid
 * over white (libwebp gives premultiplied samples).  An animated WebP is
 * not decoded (the incremental decoder reads one image, not frames).
 *
 * Invariants:
 *  1. Once out of THUMB_RUNNING, further input is ignored; the decoder's
 *     objects go with the ThumbWebp (one per file).
 *  2. Input handed to libwebp is at most MAX_WEBP_INPUT bytes.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-int.h"

#include <string.h>
#include <webp/decode.h>

#define HEAD_MAX 4096
#define MAX_WEBP_INPUT ((gsize)64 << 20)

struct ThumbWebp {
	ThumbState state;
	GByteArray *head;       /* bytes before the features are known (owned) */
	WebPDecoderConfig config;
	WebPIDecoder *idec;     /* (owned) */
	gboolean has_alpha;
	guint w, h, tw, th;
	gsize fed;              /* bytes given to libwebp */
	char *note;             /* (owned) */
};

ThumbWebp *thumb_webp_new(void)
{
	ThumbWebp *d = g_new0(ThumbWebp, 1);
	d->state = THUMB_RUNNING;
	d->head = g_byte_array_new();
	if (!WebPInitDecoderConfig(&d->config))
		g_error("libwebp's decoder is not the version it was built with");
	return d;
}

static void drop(ThumbWebp *d)
{
	if (d->idec != NULL)
		WebPIDelete(d->idec);
	d->idec = NULL;
	WebPFreeDecBuffer(&d->config.output);
	if (d->head != NULL)
		g_byte_array_free(d->head, TRUE);
	d->head = NULL;
}

void thumb_webp_free(ThumbWebp *d)
{
	if (d == NULL)
		return;
	drop(d);
	g_free(d->note);
	g_free(d);
}

ThumbState thumb_webp_state(const ThumbWebp *d)
{
	return d->state;
}

static void fail(ThumbWebp *d, char *note)
{
	d->state = THUMB_FAILED;
	g_free(d->note);
	d->note = note;
	drop(d);
}

static const char *status_text(VP8StatusCode rc)
{
	switch (rc) {
	case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
	case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
	case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
	case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
	case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data";
	default: return "error";
	}
}

/* The features are known: set the decoder up for the rendition. */
static gboolean begin(ThumbWebp *d)
{
	WebPBitstreamFeatures *f = &d->config.input;
	char *note = NULL;
	if (f->has_animation) {
		fail(d, g_strdup("an animated WebP"));
		return FALSE;
	}
	if (!thumb_check_size((guint)f->width, (guint)f->height, &note)) {
		fail(d, note);
		return FALSE;
	}
	d->w = (guint)f->width;
	d->h = (guint)f->height;
	d->has_alpha = f->has_alpha;
	thumb_fit(d->w, d->h, PIX_THUMB_MAX_EDGE, &d->tw, &d->th);
	d->config.options.use_scaling = d->tw != d->w || d->th != d->h;
	d->config.options.scaled_width = (int)d->tw;
	d->config.options.scaled_height = (int)d->th;
	d->config.output.colorspace = d->has_alpha ? MODE_rgbA : MODE_RGB;
	d->idec = WebPIDecode(NULL, 0, &d->config);
	if (d->idec == NULL) {
		fail(d, g_strdup("libwebp cannot start a decoder for it"));
		return FALSE;
	}
	return TRUE;
}

static void append(ThumbWebp *d, const guint8 *data, gsize len)
{
	if (d->fed + len > MAX_WEBP_INPUT) {
		fail(d, g_strdup_printf("a WebP whose decoder would hold more than %zu MiB of it", MAX_WEBP_INPUT >> 20));
		return;
	}
	d->fed += len;
	VP8StatusCode rc = WebPIAppend(d->idec, data, len);
	if (rc == VP8_STATUS_OK) {
		d->state = THUMB_DONE;
		WebPIDelete(d->idec);
		d->idec = NULL;
	} else if (rc != VP8_STATUS_SUSPENDED) {
		fail(d, g_strdup_printf("corrupt WebP: %s", status_text(rc)));
	}
}

void thumb_webp_feed(ThumbWebp *d, const guint8 *data, gsize len)
{
	if (d->state != THUMB_RUNNING || len == 0)
		return;
	if (d->idec == NULL) {
		gsize take = MIN(len, HEAD_MAX - d->head->len);
		g_byte_array_append(d->head, data, (guint)take);
		data += take;
		len -= take;
		VP8StatusCode rc = WebPGetFeatures(d->head->data, d->head->len, &d->config.input);
		if (rc == VP8_STATUS_NOT_ENOUGH_DATA && d->head->len < HEAD_MAX)
			return;
		if (rc != VP8_STATUS_OK) {
			fail(d, g_strdup_printf("corrupt WebP: %s", status_text(rc)));
			return;
		}
		if (!begin(d))
			return;
		GByteArray *head = g_steal_pointer(&d->head);
		append(d, head->data, head->len);
		g_byte_array_free(head, TRUE);
	}
	if (len > 0 && d->state == THUMB_RUNNING)
		append(d, data, len);
}

gboolean thumb_webp_finish(ThumbWebp *d, ThumbPixels *out, guint *width_px, guint *height_px, char **note)
{
	gboolean ok = FALSE;
	*note = NULL;
	if (d == NULL)
		return FALSE;
	if (d->state == THUMB_DONE) {
		const WebPRGBABuffer *b = &d->config.output.u.RGBA;
		guint in_c = d->has_alpha ? 4 : 3;
		thumb_pixels_clear(out);
		out->w = d->tw;
		out->h = d->th;
		out->c = 3;
		out->data = g_malloc((gsize)d->tw * d->th * 3);
		for (guint y = 0; y < d->th; y++) {
			const guint8 *p = b->rgba + (gsize)y * (gsize)b->stride;
			guint8 *o = out->data + (gsize)y * d->tw * 3;
			for (guint x = 0; x < d->tw; x++, p += in_c, o += 3) {
				/* premultiplied: what is missing of the alpha is white */
				guint white = d->has_alpha ? 255u - p[3] : 0;
				o[0] = (guint8)MIN(255u, p[0] + white);
				o[1] = (guint8)MIN(255u, p[1] + white);
				o[2] = (guint8)MIN(255u, p[2] + white);
			}
		}
		*width_px = d->w;
		*height_px = d->h;
		ok = TRUE;
	} else if (d->state == THUMB_FAILED) {
		*note = g_steal_pointer(&d->note);
	} else {
		*note = g_strdup("a truncated WebP");
	}
	thumb_webp_free(d);
	return ok;
}

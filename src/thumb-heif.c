/*
 * thumb-heif.c: HEIF, HEIC and AVIF through libheif (see thumb-int.h).
 * The one place that talks to libheif.
 *
 * Runs on a hash thread.  libheif reads a file from memory, with random
 * access to its boxes and items, so the file's bytes are kept as they
 * come and decoded once it ended.  What may be kept is bounded: a file of
 * at most THUMB_HEIF_MAX_FILE bytes (larger: a note), and the bytes all
 * makers keep at once at most THUMB_HEIF_BUDGET (a file that finds the
 * budget in use is deferred: no note, the next scan with thumbnails reads
 * it again).  The size is reserved when the decoder is made, from the
 * file's size.
 *
 * Which image: the smallest thumbnail item of at least PIX_THUMB_MAX_EDGE
 * pixels ("heif-thumbnail": phones' are smaller, 320 px or so); else the
 * primary image ("heif"), if its decode fits THUMB_HEIF_MAX_DECODE bytes
 * (estimated: RGB and the coded planes), one such decode at a time in
 * the process (full_decode); else the largest thumbnail item of at least
 * 256 px.  libheif applies the image's transformations (irot, imir,
 * clap), as the size the metadata gives has them.  libheif's own limit on
 * the pixels is set to PIX_THUMB_MAX_PIXELS, its threads to one.
 *
 * Invariants:
 *  1. held_bytes (all makers) is the sum of the reservations of the live
 *     ThumbHeifs, at most THUMB_HEIF_BUDGET; a ThumbHeif's kept bytes are
 *     at most its reservation.
 *  2. Once out of THUMB_RUNNING, further input is ignored.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-int.h"

#include <libheif/heif.h>
#include <math.h>
#include <string.h>

#define MIN_THUMB_EDGE 256
#define MAX_THUMBS 16

static GMutex budget;           /* guards held_bytes */
static gsize held_bytes;        /* all ThumbHeifs' reservations */
static GMutex full_decode;      /* one primary image decoded at a time */

struct ThumbHeif {
	ThumbState state;
	gsize reserved;         /* of THUMB_HEIF_BUDGET */
	gboolean is_deferred;
	GByteArray *bytes;      /* the file so far (owned) */
	char *note;             /* (owned) */
};

/* Takes `n` bytes of the budget, if they are free. */
static gboolean reserve(gsize n)
{
	g_mutex_lock(&budget);
	gboolean ok = n <= THUMB_HEIF_BUDGET - held_bytes;
	if (ok)
		held_bytes += n;
	g_mutex_unlock(&budget);
	return ok;
}

static void release(gsize n)
{
	g_mutex_lock(&budget);
	g_assert(held_bytes >= n);
	held_bytes -= n;
	g_mutex_unlock(&budget);
}

ThumbHeif *thumb_heif_new(gint64 size_bytes)
{
	ThumbHeif *d = g_new0(ThumbHeif, 1);
	d->state = THUMB_RUNNING;
	/* unknown: as much as a file may be */
	gsize want = size_bytes >= 0 ? (gsize)size_bytes : THUMB_HEIF_MAX_FILE;
	if (want > THUMB_HEIF_MAX_FILE) {
		d->state = THUMB_FAILED;
		d->note = g_strdup_printf("a HEIF file of more than %zu MiB is not decoded", THUMB_HEIF_MAX_FILE >> 20);
	} else if (!reserve(want)) {
		d->state = THUMB_FAILED;
		d->is_deferred = TRUE;
		d->note = g_strdup_printf("HEIF files of %zu MiB were being kept for decoding at once",
		                          THUMB_HEIF_BUDGET >> 20);
	} else {
		d->reserved = want;
		d->bytes = g_byte_array_sized_new((guint)MIN(want, (gsize)1 << 20));
	}
	return d;
}

void thumb_heif_free(ThumbHeif *d)
{
	if (d == NULL)
		return;
	if (d->bytes != NULL)
		g_byte_array_free(d->bytes, TRUE);
	if (d->reserved > 0)
		release(d->reserved);
	g_free(d->note);
	g_free(d);
}

ThumbState thumb_heif_state(const ThumbHeif *d)
{
	return d->state;
}

gboolean thumb_heif_is_deferred(const ThumbHeif *d)
{
	return d != NULL && d->is_deferred;
}

void thumb_heif_feed(ThumbHeif *d, const guint8 *data, gsize len)
{
	if (d->state != THUMB_RUNNING || len == 0)
		return;
	if (d->bytes->len + len > d->reserved) {
		/* longer than its size said: written while read */
		d->state = THUMB_FAILED;
		d->note = g_strdup("the file grew while it was read");
		g_byte_array_set_size(d->bytes, 0);
		return;
	}
	g_byte_array_append(d->bytes, data, (guint)len);
}

static char *heif_note(const char *what, struct heif_error e)
{
	return g_strdup_printf("%s: %s", what, e.message != NULL ? e.message : "error");
}

/* Decodes `h` into `out` (at most PIX_THUMB_MAX_EDGE), or a note. */
static gboolean decode(struct heif_image_handle *h, ThumbPixels *out, char **note)
{
	struct heif_image *img = NULL;
	gboolean has_alpha = heif_image_handle_has_alpha_channel(h);
	struct heif_decoding_options *opt = heif_decoding_options_alloc();
	opt->convert_hdr_to_8bit = 1;
	struct heif_error e = heif_decode_image(h, &img, heif_colorspace_RGB,
	                                        has_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
	                                        opt);
	heif_decoding_options_free(opt);
	if (e.code != heif_error_Ok) {
		*note = heif_note("corrupt HEIF", e);
		return FALSE;
	}
	int stride = 0;
	int w = heif_image_get_width(img, heif_channel_interleaved);
	int ht = heif_image_get_height(img, heif_channel_interleaved);
	const guint8 *plane = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
	if (plane == NULL || w <= 0 || ht <= 0 || stride < w * (has_alpha ? 4 : 3) ||
	    heif_image_get_bits_per_pixel_range(img, heif_channel_interleaved) != 8) {
		heif_image_release(img);
		*note = g_strdup("corrupt HEIF: libheif gave no 8-bit RGB image");
		return FALSE;
	}
	guint in_c = has_alpha ? 4 : 3;
	ThumbShrink s = { 0 };
	g_autofree guint8 *row = g_malloc((gsize)w * 3);
	thumb_shrink_init(&s, (guint)w, (guint)ht, 3, PIX_THUMB_MAX_EDGE);
	for (int y = 0; y < ht; y++) {
		const guint8 *p = plane + (gsize)y * (gsize)stride;
		const guint8 *r = p;
		if (has_alpha) {
			for (int x = 0; x < w; x++) {
				guint a = p[4 * x + 3];
				for (guint k = 0; k < 3; k++)
					row[3 * x + k] = (guint8)((p[4 * x + k] * a + 255 * (255 - a) + 127) / 255);
			}
			r = row;
		}
		thumb_shrink_row(&s, r);
	}
	(void)in_c;
	heif_image_release(img);
	thumb_shrink_take(&s, out);
	return TRUE;
}

/* Bytes a decode of `h` needs, by estimate: RGB(A) out, and the coded
 * planes (4:4:4 at worst), twice over for more than 8 bits. */
static guint64 decode_bytes(const struct heif_image_handle *h)
{
	guint64 px = (guint64)heif_image_handle_get_width(h) * (guint64)heif_image_handle_get_height(h);
	guint64 depth = heif_image_handle_get_luma_bits_per_pixel(h) > 8 ? 2 : 1;
	return px * (4 + 3 * depth);
}

gboolean thumb_heif_finish(ThumbHeif *d, ThumbPixels *out, guint *width_px, guint *height_px,
                           const char **source, char **note)
{
	struct heif_context *ctx = NULL;
	struct heif_image_handle *primary = NULL, *chosen = NULL, *largest = NULL;
	gboolean ok = FALSE;
	*note = NULL;
	*source = NULL;
	if (d == NULL)
		return FALSE;
	if (d->state != THUMB_RUNNING) {
		*note = g_steal_pointer(&d->note);
		goto out;
	}
	ctx = heif_context_alloc();
	heif_context_set_maximum_image_size_limit(ctx, (int)sqrt((double)PIX_THUMB_MAX_PIXELS));
	heif_context_set_max_decoding_threads(ctx, 0);
	struct heif_error e = heif_context_read_from_memory_without_copy(ctx, d->bytes->data, d->bytes->len, NULL);
	if (e.code == heif_error_Ok)
		e = heif_context_get_primary_image_handle(ctx, &primary);
	if (e.code != heif_error_Ok) {
		*note = heif_note("corrupt HEIF", e);
		goto out;
	}
	guint pw = (guint)MAX(heif_image_handle_get_width(primary), 0);
	guint ph = (guint)MAX(heif_image_handle_get_height(primary), 0);
	if (!thumb_check_size(pw, ph, note))
		goto out;
	/* the thumbnail items: the smallest that serves, the largest else */
	heif_item_id ids[MAX_THUMBS];
	int n = heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, MAX_THUMBS);
	struct heif_image_handle *small_ok = NULL;
	guint small_edge = G_MAXUINT, large_edge = 0;
	for (int i = 0; i < n; i++) {
		struct heif_image_handle *t = NULL;
		if (heif_image_handle_get_thumbnail(primary, ids[i], &t).code != heif_error_Ok)
			continue;
		guint edge = (guint)MAX(MAX(heif_image_handle_get_width(t), heif_image_handle_get_height(t)), 0);
		gboolean keep = FALSE;
		if (edge >= PIX_THUMB_MAX_EDGE && edge < small_edge && edge < MAX(pw, ph)) {
			if (small_ok != NULL && small_ok != largest)
				heif_image_handle_release(small_ok);
			small_ok = t;
			small_edge = edge;
			keep = TRUE;
		}
		if (edge >= MIN_THUMB_EDGE && edge > large_edge) {
			if (largest != NULL && largest != small_ok)
				heif_image_handle_release(largest);
			largest = t;
			large_edge = edge;
			keep = TRUE;
		}
		if (!keep)
			heif_image_handle_release(t);
	}
	gboolean is_full = FALSE;
	if (small_ok != NULL) {
		chosen = small_ok;
	} else if (decode_bytes(primary) <= THUMB_HEIF_MAX_DECODE) {
		chosen = primary;
		is_full = TRUE;
	} else if (largest != NULL) {
		chosen = largest;
	}
	if (small_ok != NULL && small_ok != chosen)
		heif_image_handle_release(small_ok);
	if (largest == chosen)
		largest = NULL;
	if (chosen == NULL) {
		*note = g_strdup_printf("decoding it needs more than %zu MiB, and it has no thumbnail item of %u px",
		                        THUMB_HEIF_MAX_DECODE >> 20, MIN_THUMB_EDGE);
		goto out;
	}
	if (is_full)
		g_mutex_lock(&full_decode);
	ok = decode(chosen, out, note);
	if (is_full)
		g_mutex_unlock(&full_decode);
	if (!ok && is_full && largest != NULL) {
		/* the image is damaged: its thumbnail item may not be */
		g_clear_pointer(note, g_free);
		chosen = largest;
		largest = NULL;
		is_full = FALSE;
		ok = decode(chosen, out, note);
	}
	if (ok) {
		*width_px = (guint)heif_image_handle_get_width(chosen);
		*height_px = (guint)heif_image_handle_get_height(chosen);
		*source = is_full ? "heif" : "heif-thumbnail";
	}
	if (chosen != primary)
		heif_image_handle_release(chosen);
out:
	if (largest != NULL)
		heif_image_handle_release(largest);
	if (primary != NULL)
		heif_image_handle_release(primary);
	if (ctx != NULL)
		heif_context_free(ctx);
	thumb_heif_free(d);
	return ok;
}

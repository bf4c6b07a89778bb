/*
 * thumb-jpeg.c: JPEGs decoded as they stream, and the renditions encoded
 * (see thumb-int.h).  The one place that talks to libjpeg.
 *
 * Runs on a hash thread, fed by the maker (thumb.c) the bytes of a JPEG:
 * a whole file, or an embedded preview (an MPF image, a RAW file's
 * JpgFromRaw) cut out of the file as it goes by.
 *
 * libjpeg reads through a suspending data source: feed() appends the
 * piece to what libjpeg has not consumed yet and runs the decoder until it
 * asks for more (fill_input_buffer() returns FALSE, and libjpeg backs up
 * to the last point it can restart from: a marker, or the MCU being
 * decoded), so the bytes held are one MCU's or one marker segment's, not
 * the file.  The scale is the smallest n/8 whose long edge still holds
 * PIX_THUMB_MAX_EDGE pixels (at 1/8 libjpeg keeps each block's DC value
 * and computes no inverse DCT); decoded scanlines go straight into a
 * ThumbShrink.
 *
 * Invariants:
 *  1. libjpeg is only called under setjmp(j->jerr.jump); a libjpeg error
 *     ends the stream in THUMB_FAILED with a note, and libjpeg's objects
 *     are aborted (never destroyed mid-call), so the decoder is reusable.
 *  2. The bytes held (j->in) are at most MAX_HELD; beyond, the stream fails.
 *  3. Once out of THUMB_RUNNING, further input is ignored.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-int.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

#define MAX_HELD ((gsize)4 << 20)
#define JPEG_QUALITY 85

typedef enum {
	J_HEADER,     /* reading its header */
	J_START,      /* starting the decompressor */
	J_SCAN,       /* reading scanlines */
	J_END,        /* out of THUMB_RUNNING: see ThumbJpeg.state */
} JStep;

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	gboolean hit_eof;     /* libjpeg ran out of data at the file's end */
} ErrorMgr;

struct ThumbJpeg {
	ThumbState state;
	JStep step;
	ThumbJpegHeaderFn on_header;
	void *ctx;
	struct jpeg_decompress_struct dec;
	struct jpeg_source_mgr src;
	ErrorMgr jerr;
	GByteArray *in;       /* bytes libjpeg has not consumed (owned) */
	gsize skip;           /* bytes libjpeg skipped that have not come yet */
	guint8 *row;          /* one decoded scanline (owned) */
	gsize row_cap;
	guint8 *rgb;          /* a CMYK scanline as RGB (owned) */
	gsize rgb_cap;
	gboolean is_cmyk_inverted;
	guint width_px, height_px;   /* the image's, from its header */
	ThumbShrink xl;
	char *note;           /* (owned) */
	guint64 n_rows;       /* scanlines decoded, ever */
};

/* --- libjpeg's managers ------------------------------------------------------ */

static void on_error(j_common_ptr cinfo)
{
	ErrorMgr *e = (ErrorMgr *)cinfo->err;
	longjmp(e->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level)
{
	ErrorMgr *e = (ErrorMgr *)cinfo->err;
	/* warnings (level -1) of data that stops early: the image is cut */
	if (level < 0 && (e->pub.msg_code == JWRN_JPEG_EOF || e->pub.msg_code == JWRN_HIT_MARKER))
		e->hit_eof = TRUE;
}

static void src_init(j_decompress_ptr cinfo)
{
	(void)cinfo;
}

static boolean src_fill(j_decompress_ptr cinfo)
{
	(void)cinfo;
	return FALSE;   /* suspend: more comes with the next feed() */
}

static void src_skip(j_decompress_ptr cinfo, long n)
{
	ThumbJpeg *j = cinfo->client_data;
	if (n <= 0)
		return;
	if ((gsize)n <= j->src.bytes_in_buffer) {
		j->src.next_input_byte += n;
		j->src.bytes_in_buffer -= (gsize)n;
	} else {
		j->skip += (gsize)n - j->src.bytes_in_buffer;
		j->src.next_input_byte += j->src.bytes_in_buffer;
		j->src.bytes_in_buffer = 0;
	}
}

static void src_term(j_decompress_ptr cinfo)
{
	(void)cinfo;
}

/* --- the decoder ---------------------------------------------------------------- */

ThumbJpeg *thumb_jpeg_new(void)
{
	ThumbJpeg *j = g_new0(ThumbJpeg, 1);
	j->dec.err = jpeg_std_error(&j->jerr.pub);
	j->jerr.pub.error_exit = on_error;
	j->jerr.pub.emit_message = on_message;
	if (setjmp(j->jerr.jump))
		g_error("libjpeg cannot start: out of memory");
	jpeg_create_decompress(&j->dec);
	j->dec.client_data = j;
	j->src.init_source = src_init;
	j->src.fill_input_buffer = src_fill;
	j->src.skip_input_data = src_skip;
	j->src.resync_to_restart = jpeg_resync_to_restart;
	j->src.term_source = src_term;
	j->dec.src = &j->src;
	j->in = g_byte_array_new();
	j->state = THUMB_STOPPED;
	j->step = J_END;
	return j;
}

void thumb_jpeg_free(ThumbJpeg *j)
{
	if (j == NULL)
		return;
	jpeg_destroy_decompress(&j->dec);
	g_byte_array_free(j->in, TRUE);
	g_free(j->row);
	g_free(j->rgb);
	thumb_shrink_clear(&j->xl);
	g_free(j->note);
	g_free(j);
}

void thumb_jpeg_reset(ThumbJpeg *j)
{
	jpeg_abort_decompress(&j->dec);
	j->state = THUMB_STOPPED;
	j->step = J_END;
	j->on_header = NULL;
	j->ctx = NULL;
	g_byte_array_set_size(j->in, 0);
	if (j->in->len == 0 && j->row_cap > (1u << 20)) {
		/* a huge file's buffers are not kept for the next one */
		g_clear_pointer(&j->row, g_free);
		j->row_cap = 0;
	}
	j->src.next_input_byte = NULL;
	j->src.bytes_in_buffer = 0;
	j->skip = 0;
	j->jerr.hit_eof = FALSE;
	j->width_px = j->height_px = 0;
	thumb_shrink_clear(&j->xl);
	g_clear_pointer(&j->note, g_free);
}

void thumb_jpeg_start(ThumbJpeg *j, ThumbJpegHeaderFn fn, void *ctx)
{
	thumb_jpeg_reset(j);
	j->state = THUMB_RUNNING;
	j->step = J_HEADER;
	j->on_header = fn;
	j->ctx = ctx;
}

ThumbState thumb_jpeg_state(const ThumbJpeg *j)
{
	return j->state;
}

guint64 thumb_jpeg_rows(const ThumbJpeg *j)
{
	return j->n_rows;
}

static void end(ThumbJpeg *j, ThumbState state)
{
	j->state = state;
	j->step = J_END;
	jpeg_abort_decompress(&j->dec);
	g_byte_array_set_size(j->in, 0);
	j->src.bytes_in_buffer = 0;
}

static void fail(ThumbJpeg *j, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void fail(ThumbJpeg *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_free(j->note);
	j->note = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	end(j, THUMB_FAILED);
}

/* libjpeg's last error, as a note */
static void fail_jpeg(ThumbJpeg *j)
{
	char msg[JMSG_LENGTH_MAX];
	if (j->jerr.pub.msg_code == JERR_NO_BACKING_STORE) {
		fail(j, "decoding it needs more than %zu MiB", PIX_THUMB_MAX_MEMORY >> 20);
		return;
	}
	j->jerr.pub.format_message((j_common_ptr)&j->dec, msg);
	fail(j, "corrupt JPEG: %s", msg);
}

static guint8 *grow(guint8 **buf, gsize *cap, gsize len)
{
	if (*cap < len) {
		g_free(*buf);
		*buf = g_malloc(len);
		*cap = len;
	}
	return *buf;
}

static void header_done(ThumbJpeg *j)
{
	struct jpeg_decompress_struct *d = &j->dec;
	g_autofree char *note = NULL;
	if (!thumb_check_size(d->image_width, d->image_height, &note)) {
		fail(j, "%s", note);
		return;
	}
	j->width_px = d->image_width;
	j->height_px = d->image_height;
	if (j->on_header != NULL && !j->on_header(j->ctx, d->image_width, d->image_height)) {
		end(j, THUMB_STOPPED);
		return;
	}
	switch (d->jpeg_color_space) {
	case JCS_GRAYSCALE:
		d->out_color_space = JCS_GRAYSCALE;
		break;
	case JCS_CMYK:
	case JCS_YCCK:
		d->out_color_space = JCS_CMYK;
		/* Adobe's CMYK JPEGs store the inks inverted */
		j->is_cmyk_inverted = d->saw_Adobe_marker;
		break;
	default:
		d->out_color_space = JCS_RGB;
		break;
	}
	/* the smallest scale n/8 whose long edge still holds the largest
	 * rendition: at 1/8 libjpeg takes each block's DC value, no IDCT */
	guint lw = MAX(d->image_width, d->image_height);
	guint n = 1;
	while (n < 8 && ((guint64)lw * n + 7) / 8 < PIX_THUMB_MAX_EDGE)
		n++;
	d->scale_num = n;
	d->scale_denom = 8;
	d->dct_method = JDCT_ISLOW;
	d->do_fancy_upsampling = FALSE;
	d->do_block_smoothing = FALSE;
	d->mem->max_memory_to_use = (long)PIX_THUMB_MAX_MEMORY;
	j->step = J_START;
}

static void start_done(ThumbJpeg *j)
{
	struct jpeg_decompress_struct *d = &j->dec;
	grow(&j->row, &j->row_cap, (gsize)d->output_width * d->output_components);
	guint c = d->out_color_space == JCS_GRAYSCALE ? 1 : 3;
	if (d->out_color_space == JCS_CMYK)
		grow(&j->rgb, &j->rgb_cap, (gsize)d->output_width * 3);
	thumb_shrink_init(&j->xl, d->output_width, d->output_height, c, PIX_THUMB_MAX_EDGE);
	j->step = J_SCAN;
}

static void cmyk_to_rgb(ThumbJpeg *j, guint width)
{
	const guint8 *p = j->row;
	guint8 *o = j->rgb;
	for (guint x = 0; x < width; x++, p += 4, o += 3) {
		guint cc = p[0], mm = p[1], yy = p[2], kk = p[3];
		if (!j->is_cmyk_inverted) {
			cc = 255 - cc;
			mm = 255 - mm;
			yy = 255 - yy;
			kk = 255 - kk;
		}
		o[0] = (guint8)((cc * kk + 127) / 255);
		o[1] = (guint8)((mm * kk + 127) / 255);
		o[2] = (guint8)((yy * kk + 127) / 255);
	}
}

/* Runs libjpeg on what is held until it needs more or the image is done. */
static void run_jpeg(ThumbJpeg *j)
{
	struct jpeg_decompress_struct *d = &j->dec;
	if (setjmp(j->jerr.jump)) {
		fail_jpeg(j);
		return;
	}
	if (j->step == J_HEADER) {
		int rc = jpeg_read_header(d, TRUE);
		if (rc == JPEG_SUSPENDED)
			return;
		if (rc != JPEG_HEADER_OK) {
			fail(j, "a JPEG with no image");
			return;
		}
		header_done(j);
		if (j->step != J_START)
			return;
	}
	if (j->step == J_START) {
		if (!jpeg_start_decompress(d))
			return;
		start_done(j);
	}
	while (j->step == J_SCAN && d->output_scanline < d->output_height) {
		JSAMPROW rows[1] = { j->row };
		if (jpeg_read_scanlines(d, rows, 1) == 0)
			return;
		j->n_rows++;
		if (j->jerr.hit_eof) {
			fail(j, "a truncated JPEG");
			return;
		}
		if (d->out_color_space == JCS_CMYK) {
			cmyk_to_rgb(j, d->output_width);
			thumb_shrink_row(&j->xl, j->rgb);
		} else {
			thumb_shrink_row(&j->xl, j->row);
		}
	}
	if (j->step == J_SCAN)
		end(j, THUMB_DONE);
}

/* Runs libjpeg on what it has left and `data`: straight from `data` when
 * nothing is left (no copy), else joined to it a slice at a time; what it
 * has not consumed when it suspends is copied for the next piece. */
void thumb_jpeg_feed(ThumbJpeg *j, const guint8 *data, gsize len)
{
	while (len > 0 && j->state == THUMB_RUNNING) {
		gsize k = MIN(j->skip, len);
		j->skip -= k;
		data += k;
		len -= k;
		if (len == 0)
			return;
		gsize keep = j->src.bytes_in_buffer;
		if (keep == 0) {
			j->src.next_input_byte = data;
			j->src.bytes_in_buffer = len;
			run_jpeg(j);
			if (j->state != THUMB_RUNNING)
				return;
			gsize left = j->src.bytes_in_buffer;
			if (left > MAX_HELD) {
				fail(j, "a JPEG whose decoder held more than %zu MiB of its bytes", MAX_HELD >> 20);
				return;
			}
			g_byte_array_set_size(j->in, 0);
			g_byte_array_append(j->in, j->src.next_input_byte, (guint)left);
			j->src.next_input_byte = j->in->data;
			j->src.bytes_in_buffer = left;
			return;
		}
		if (j->src.next_input_byte != j->in->data)
			memmove(j->in->data, j->src.next_input_byte, keep);
		g_byte_array_set_size(j->in, (guint)keep);
		gsize n = MIN(len, (gsize)65536);
		if (keep + n > MAX_HELD) {
			fail(j, "a JPEG whose decoder held more than %zu MiB of its bytes", MAX_HELD >> 20);
			return;
		}
		g_byte_array_append(j->in, data, (guint)n);
		data += n;
		len -= n;
		j->src.next_input_byte = j->in->data;
		j->src.bytes_in_buffer = j->in->len;
		run_jpeg(j);
	}
}

gboolean thumb_jpeg_finish(ThumbJpeg *j, ThumbPixels *out, guint *width_px, guint *height_px, char **note)
{
	gboolean ok = FALSE;
	*note = NULL;
	if (j->state == THUMB_RUNNING)
		fail(j, "a truncated JPEG");
	if (j->state == THUMB_DONE) {
		thumb_shrink_take(&j->xl, out);
		*width_px = j->width_px;
		*height_px = j->height_px;
		ok = TRUE;
	} else if (j->state == THUMB_FAILED) {
		*note = g_steal_pointer(&j->note);
	}
	thumb_jpeg_reset(j);
	return ok;
}

/* --- the encoder ------------------------------------------------------------------ */

GBytes *thumb_jpeg_encode(const ThumbPixels *p, char **note)
{
	struct jpeg_compress_struct e;
	ErrorMgr jerr;
	/* in memory, not a local that longjmp may leave stale */
	struct {
		unsigned char *buf;
		unsigned long size;
	} *dest = g_new0(typeof(*dest), 1);

	e.err = jpeg_std_error(&jerr.pub);
	jerr.pub.error_exit = on_error;
	if (setjmp(jerr.jump)) {
		char msg[JMSG_LENGTH_MAX];
		jerr.pub.format_message((j_common_ptr)&e, msg);
		jpeg_destroy_compress(&e);
		free(dest->buf);
		g_free(dest);
		*note = g_strdup_printf("cannot encode the thumbnail: %s", msg);
		return NULL;
	}
	jpeg_create_compress(&e);
	jpeg_mem_dest(&e, &dest->buf, &dest->size);
	e.image_width = p->w;
	e.image_height = p->h;
	e.input_components = (int)p->c;
	e.in_color_space = p->c == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&e);
	jpeg_set_quality(&e, JPEG_QUALITY, TRUE);
	e.optimize_coding = TRUE;
	jpeg_start_compress(&e, TRUE);
	while (e.next_scanline < p->h) {
		JSAMPROW row = (JSAMPROW)(p->data + (gsize)e.next_scanline * p->w * p->c);
		jpeg_write_scanlines(&e, &row, 1);
	}
	jpeg_finish_compress(&e);
	jpeg_destroy_compress(&e);
	GBytes *b = g_bytes_new(dest->buf, dest->size);
	free(dest->buf);
	g_free(dest);
	return b;
}

/*
 * thumb.c: thumbnails from the bytes as they are read (see thumb.h).
 *
 * Runs on a hash thread, fed by the hasher the same pieces as the metadata
 * parser.  The one place that talks to libjpeg.
 *
 * A JPEG goes through libjpeg with a suspending data source: feed() appends
 * the piece to what libjpeg has not consumed yet and runs the decoder until
 * it asks for more (fill_input_buffer() returns FALSE, and libjpeg backs up
 * to the last point it can restart from: a marker, or the MCU being
 * decoded), so the bytes held are one MCU's or one marker segment's, not
 * the file.  Decoded scanlines go straight into a Shrink, which averages
 * them into the XLARGE rendition row by row; LARGE is then shrunk from
 * XLARGE's pixels the same way, and both are encoded as baseline JPEG.
 *
 * Invariants:
 *  1. libjpeg is only called under setjmp(m->jerr.jump); a libjpeg error
 *     ends the file in T_FAILED with a note, and libjpeg's objects are
 *     aborted (never destroyed mid-call), so the maker is reusable.
 *  2. The bytes held (m->in) are at most MAX_HELD; beyond, the file fails.
 *  3. Once in T_DONE, T_FAILED or T_IGNORED, further input is ignored.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

#define MAX_HELD ((gsize)4 << 20)
#define JPEG_QUALITY 85

typedef enum {
	T_SNIFF,      /* fewer than 3 bytes seen */
	T_HEADER,     /* JPEG: reading its header */
	T_START,      /* JPEG: starting the decompressor */
	T_SCAN,       /* JPEG: reading scanlines */
	T_DONE,
	T_FAILED,
	T_IGNORED,    /* not a format the maker reads */
} TState;

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	gboolean hit_eof;     /* libjpeg ran out of data at the file's end */
} ErrorMgr;

/* Averages rows of sw x sh pixels (c components) into tw x th, fed one
 * source row at a time; each source pixel falls into exactly one target
 * pixel (a box filter). */
typedef struct {
	guint sw, sh, tw, th, c;
	guint *xmap;          /* source x -> target x (owned) */
	guint *xcount;        /* source pixels per target column (owned) */
	guint32 *acc;         /* one target row's sums (owned) */
	guint y;              /* source rows fed */
	guint ty;             /* target row being summed */
	guint rows;           /* source rows in it so far */
	guint8 *out;          /* tw * th * c (owned) */
} Shrink;

struct PixThumbMaker {
	TState state;
	guint8 sniff[3];
	gsize n_sniffed;
	struct jpeg_decompress_struct dec;
	struct jpeg_compress_struct enc;
	struct jpeg_source_mgr src;
	ErrorMgr jerr;
	GByteArray *in;       /* bytes libjpeg has not consumed (owned) */
	gsize skip;           /* bytes libjpeg skipped that have not come yet */
	guint8 *row;          /* one decoded scanline (owned) */
	gsize row_cap;
	guint8 *rgb;          /* a CMYK scanline as RGB (owned) */
	gsize rgb_cap;
	gboolean is_cmyk_inverted;
	Shrink xl;
	char *note;           /* (owned) */
};

guint pix_thumb_edge(PixThumbSize size)
{
	return size == PIX_THUMB_LARGE ? 256 : 512;
}

PixThumb *pix_thumb_new_note(const char *fmt, ...)
{
	PixThumb *t = g_new0(PixThumb, 1);
	va_list ap;
	va_start(ap, fmt);
	t->note = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	return t;
}

void pix_thumb_free(PixThumb *t)
{
	if (t == NULL)
		return;
	for (guint i = 0; i < PIX_THUMB_N_SIZES; i++)
		if (t->jpeg[i] != NULL)
			g_bytes_unref(t->jpeg[i]);
	g_free(t->note);
	g_free(t);
}

/* --- Shrink ------------------------------------------------------------------ */

static void fit(guint sw, guint sh, guint edge, guint *tw, guint *th)
{
	guint lw = MAX(sw, sh);
	if (lw <= edge) {
		*tw = sw;
		*th = sh;
		return;
	}
	if (sw >= sh) {
		*tw = edge;
		*th = MAX(1u, (guint)(((guint64)sh * edge + lw / 2) / lw));
	} else {
		*th = edge;
		*tw = MAX(1u, (guint)(((guint64)sw * edge + lw / 2) / lw));
	}
}

static void shrink_clear(Shrink *s)
{
	g_free(s->xmap);
	g_free(s->xcount);
	g_free(s->acc);
	g_free(s->out);
	memset(s, 0, sizeof *s);
}

static void shrink_init(Shrink *s, guint sw, guint sh, guint c, guint edge)
{
	shrink_clear(s);
	s->sw = sw;
	s->sh = sh;
	s->c = c;
	fit(sw, sh, edge, &s->tw, &s->th);
	s->xmap = g_new(guint, sw);
	s->xcount = g_new0(guint, s->tw);
	for (guint x = 0; x < sw; x++) {
		s->xmap[x] = (guint)((guint64)x * s->tw / sw);
		s->xcount[s->xmap[x]]++;
	}
	s->acc = g_new0(guint32, (gsize)s->tw * c);
	s->out = g_malloc((gsize)s->tw * s->th * c);
}

static void shrink_flush(Shrink *s)
{
	guint8 *o = s->out + (gsize)s->ty * s->tw * s->c;
	for (guint tx = 0; tx < s->tw; tx++) {
		guint32 n = s->xcount[tx] * s->rows;
		for (guint k = 0; k < s->c; k++) {
			guint32 *a = &s->acc[(gsize)tx * s->c + k];
			o[(gsize)tx * s->c + k] = (guint8)((*a + n / 2) / n);
			*a = 0;
		}
	}
	s->rows = 0;
}

static void shrink_row(Shrink *s, const guint8 *row)
{
	g_assert(s->y < s->sh);
	guint ty = (guint)((guint64)s->y * s->th / s->sh);
	if (ty != s->ty && s->rows > 0)
		shrink_flush(s);
	s->ty = ty;
	if (s->c == 3) {
		for (guint x = 0; x < s->sw; x++) {
			guint32 *a = &s->acc[(gsize)s->xmap[x] * 3];
			a[0] += row[3 * x];
			a[1] += row[3 * x + 1];
			a[2] += row[3 * x + 2];
		}
	} else {
		for (guint x = 0; x < s->sw; x++)
			s->acc[s->xmap[x]] += row[x];
	}
	s->rows++;
	if (++s->y == s->sh)
		shrink_flush(s);
}

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
	PixThumbMaker *m = cinfo->client_data;
	if (n <= 0)
		return;
	if ((gsize)n <= m->src.bytes_in_buffer) {
		m->src.next_input_byte += n;
		m->src.bytes_in_buffer -= (gsize)n;
	} else {
		m->skip += (gsize)n - m->src.bytes_in_buffer;
		m->src.next_input_byte += m->src.bytes_in_buffer;
		m->src.bytes_in_buffer = 0;
	}
}

static void src_term(j_decompress_ptr cinfo)
{
	(void)cinfo;
}

/* --- the maker --------------------------------------------------------------- */

PixThumbMaker *pix_thumb_maker_new(void)
{
	PixThumbMaker *m = g_new0(PixThumbMaker, 1);
	m->dec.err = jpeg_std_error(&m->jerr.pub);
	m->jerr.pub.error_exit = on_error;
	m->jerr.pub.emit_message = on_message;
	m->enc.err = &m->jerr.pub;
	if (setjmp(m->jerr.jump))
		g_error("libjpeg cannot start: out of memory");
	jpeg_create_decompress(&m->dec);
	jpeg_create_compress(&m->enc);
	m->dec.client_data = m;
	m->src.init_source = src_init;
	m->src.fill_input_buffer = src_fill;
	m->src.skip_input_data = src_skip;
	m->src.resync_to_restart = jpeg_resync_to_restart;
	m->src.term_source = src_term;
	m->dec.src = &m->src;
	m->in = g_byte_array_new();
	return m;
}

void pix_thumb_maker_free(PixThumbMaker *m)
{
	if (m == NULL)
		return;
	jpeg_destroy_decompress(&m->dec);
	jpeg_destroy_compress(&m->enc);
	g_byte_array_free(m->in, TRUE);
	g_free(m->row);
	g_free(m->rgb);
	shrink_clear(&m->xl);
	g_free(m->note);
	g_free(m);
}

void pix_thumb_maker_reset(PixThumbMaker *m)
{
	jpeg_abort_decompress(&m->dec);
	m->state = T_SNIFF;
	m->n_sniffed = 0;
	g_byte_array_set_size(m->in, 0);
	if (m->in->len == 0 && m->row_cap > (1u << 20)) {
		/* a huge file's buffers are not kept for the next one */
		g_clear_pointer(&m->row, g_free);
		m->row_cap = 0;
	}
	m->src.next_input_byte = NULL;
	m->src.bytes_in_buffer = 0;
	m->skip = 0;
	m->jerr.hit_eof = FALSE;
	shrink_clear(&m->xl);
	g_clear_pointer(&m->note, g_free);
}

static void fail(PixThumbMaker *m, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void fail(PixThumbMaker *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_free(m->note);
	m->note = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	m->state = T_FAILED;
	jpeg_abort_decompress(&m->dec);
	g_byte_array_set_size(m->in, 0);
}

/* libjpeg's last error, as a note */
static void fail_jpeg(PixThumbMaker *m)
{
	char msg[JMSG_LENGTH_MAX];
	if (m->jerr.pub.msg_code == JERR_NO_BACKING_STORE) {
		fail(m, "decoding it needs more than %zu MiB", PIX_THUMB_MAX_MEMORY >> 20);
		return;
	}
	m->jerr.pub.format_message((j_common_ptr)&m->dec, msg);
	fail(m, "corrupt JPEG: %s", msg);
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

static void header_done(PixThumbMaker *m)
{
	struct jpeg_decompress_struct *d = &m->dec;
	guint64 pixels = (guint64)d->image_width * d->image_height;
	if (pixels > (guint64)PIX_THUMB_MAX_PIXELS) {
		fail(m, "an image of %u x %u pixels is over the bound of %" G_GINT64_FORMAT " megapixels",
		     d->image_width, d->image_height, PIX_THUMB_MAX_PIXELS / 1000000);
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
		m->is_cmyk_inverted = d->saw_Adobe_marker;
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
	m->state = T_START;
}

static void start_done(PixThumbMaker *m)
{
	struct jpeg_decompress_struct *d = &m->dec;
	grow(&m->row, &m->row_cap, (gsize)d->output_width * d->output_components);
	guint c = d->out_color_space == JCS_GRAYSCALE ? 1 : 3;
	if (d->out_color_space == JCS_CMYK)
		grow(&m->rgb, &m->rgb_cap, (gsize)d->output_width * 3);
	shrink_init(&m->xl, d->output_width, d->output_height, c, PIX_THUMB_MAX_EDGE);
	m->state = T_SCAN;
}

static void cmyk_to_rgb(PixThumbMaker *m, guint width)
{
	const guint8 *p = m->row;
	guint8 *o = m->rgb;
	for (guint x = 0; x < width; x++, p += 4, o += 3) {
		guint cc = p[0], mm = p[1], yy = p[2], kk = p[3];
		if (!m->is_cmyk_inverted) {
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
static void run_jpeg(PixThumbMaker *m)
{
	struct jpeg_decompress_struct *d = &m->dec;
	if (setjmp(m->jerr.jump)) {
		fail_jpeg(m);
		return;
	}
	if (m->state == T_HEADER) {
		int rc = jpeg_read_header(d, TRUE);
		if (rc == JPEG_SUSPENDED)
			return;
		if (rc != JPEG_HEADER_OK) {
			fail(m, "a JPEG with no image");
			return;
		}
		header_done(m);
		if (m->state != T_START)
			return;
	}
	if (m->state == T_START) {
		if (!jpeg_start_decompress(d))
			return;
		start_done(m);
	}
	while (m->state == T_SCAN && d->output_scanline < d->output_height) {
		JSAMPROW rows[1] = { m->row };
		if (jpeg_read_scanlines(d, rows, 1) == 0)
			return;
		if (m->jerr.hit_eof) {
			fail(m, "a truncated JPEG");
			return;
		}
		if (d->out_color_space == JCS_CMYK) {
			cmyk_to_rgb(m, d->output_width);
			shrink_row(&m->xl, m->rgb);
		} else {
			shrink_row(&m->xl, m->row);
		}
	}
	if (m->state == T_SCAN) {
		m->state = T_DONE;
		jpeg_abort_decompress(d);
		g_byte_array_set_size(m->in, 0);
	}
}

/* Runs libjpeg on what it has left and `data`: straight from `data` when
 * nothing is left (no copy), else joined to it a slice at a time; what it
 * has not consumed when it suspends is copied for the next piece. */
static void feed_jpeg(PixThumbMaker *m, const guint8 *data, gsize len)
{
	while (len > 0 && m->state < T_DONE) {
		gsize k = MIN(m->skip, len);
		m->skip -= k;
		data += k;
		len -= k;
		if (len == 0)
			return;
		gsize keep = m->src.bytes_in_buffer;
		if (keep == 0) {
			m->src.next_input_byte = data;
			m->src.bytes_in_buffer = len;
			run_jpeg(m);
			if (m->state >= T_DONE)
				return;
			gsize left = m->src.bytes_in_buffer;
			if (left > MAX_HELD) {
				fail(m, "a JPEG whose decoder held more than %zu MiB of its bytes", MAX_HELD >> 20);
				return;
			}
			g_byte_array_set_size(m->in, 0);
			g_byte_array_append(m->in, m->src.next_input_byte, (guint)left);
			m->src.next_input_byte = m->in->data;
			m->src.bytes_in_buffer = left;
			return;
		}
		if (m->src.next_input_byte != m->in->data)
			memmove(m->in->data, m->src.next_input_byte, keep);
		g_byte_array_set_size(m->in, (guint)keep);
		gsize n = MIN(len, (gsize)65536);
		if (keep + n > MAX_HELD) {
			fail(m, "a JPEG whose decoder held more than %zu MiB of its bytes", MAX_HELD >> 20);
			return;
		}
		g_byte_array_append(m->in, data, (guint)n);
		data += n;
		len -= n;
		m->src.next_input_byte = m->in->data;
		m->src.bytes_in_buffer = m->in->len;
		run_jpeg(m);
	}
}

void pix_thumb_maker_feed(PixThumbMaker *m, const guint8 *data, gsize len)
{
	if (m->state == T_SNIFF) {
		while (m->n_sniffed < 3 && len > 0) {
			m->sniff[m->n_sniffed++] = *data++;
			len--;
		}
		if (m->n_sniffed < 3)
			return;
		if (m->sniff[0] != 0xFF || m->sniff[1] != 0xD8 || m->sniff[2] != 0xFF) {
			m->state = T_IGNORED;
			return;
		}
		m->state = T_HEADER;
		jpeg_abort_decompress(&m->dec);
		feed_jpeg(m, m->sniff, 3);
	}
	if (m->state >= T_DONE || len == 0)
		return;
	feed_jpeg(m, data, len);
}

/* Encodes `s`'s pixels as a baseline JPEG (transfer full), or NULL with a
 * note. */
static GBytes *encode(PixThumbMaker *m, const guint8 *pixels, guint w, guint h, guint c)
{
	struct jpeg_compress_struct *e = &m->enc;
	unsigned char *buf = NULL;
	unsigned long size = 0;
	if (setjmp(m->jerr.jump)) {
		char msg[JMSG_LENGTH_MAX];
		m->jerr.pub.format_message((j_common_ptr)e, msg);
		jpeg_abort_compress(e);
		free(buf);
		g_free(m->note);
		m->note = g_strdup_printf("cannot encode the thumbnail: %s", msg);
		return NULL;
	}
	jpeg_mem_dest(e, &buf, &size);
	e->image_width = w;
	e->image_height = h;
	e->input_components = (int)c;
	e->in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(e);
	jpeg_set_quality(e, JPEG_QUALITY, TRUE);
	e->optimize_coding = TRUE;
	jpeg_start_compress(e, TRUE);
	while (e->next_scanline < h) {
		JSAMPROW row = (JSAMPROW)(pixels + (gsize)e->next_scanline * w * c);
		jpeg_write_scanlines(e, &row, 1);
	}
	jpeg_finish_compress(e);
	GBytes *b = g_bytes_new(buf, size);
	free(buf);
	return b;
}

static PixThumb *make_renditions(PixThumbMaker *m)
{
	g_autoptr(PixThumb) t = g_new0(PixThumb, 1);
	t->source = "jpeg";
	Shrink *xl = &m->xl;
	Shrink large = { 0 };
	shrink_init(&large, xl->tw, xl->th, xl->c, pix_thumb_edge(PIX_THUMB_LARGE));
	for (guint y = 0; y < xl->th; y++)
		shrink_row(&large, xl->out + (gsize)y * xl->tw * xl->c);
	const Shrink *by_size[PIX_THUMB_N_SIZES] = { &large, xl };
	for (guint i = 0; i < PIX_THUMB_N_SIZES; i++) {
		const Shrink *s = by_size[i];
		t->width_px[i] = s->tw;
		t->height_px[i] = s->th;
		t->jpeg[i] = encode(m, s->out, s->tw, s->th, s->c);
		if (t->jpeg[i] == NULL) {
			shrink_clear(&large);
			for (guint j = 0; j < PIX_THUMB_N_SIZES; j++)
				g_clear_pointer(&t->jpeg[j], g_bytes_unref);
			t->note = g_steal_pointer(&m->note);
			return g_steal_pointer(&t);
		}
	}
	if (t->note == NULL)
		pix_phash_of_rendition(&t->phash, large.out, large.tw, large.th, large.c, t->jpeg[PIX_THUMB_LARGE]);
	shrink_clear(&large);
	return g_steal_pointer(&t);
}

PixThumb *pix_thumb_maker_finish(PixThumbMaker *m)
{
	PixThumb *t = NULL;
	switch (m->state) {
	case T_SNIFF:
	case T_IGNORED:
		break;
	case T_HEADER:
	case T_START:
	case T_SCAN:
		fail(m, "a truncated JPEG");
		/* fall through */
	case T_FAILED:
		t = g_new0(PixThumb, 1);
		t->note = g_steal_pointer(&m->note);
		break;
	case T_DONE:
		t = make_renditions(m);
		break;
	}
	pix_thumb_maker_reset(m);
	return t;
}

PixThumb *pix_thumb_from_buffer(const guint8 *data, gsize len)
{
	PixThumbMaker *m = pix_thumb_maker_new();
	pix_thumb_maker_feed(m, data, len);
	PixThumb *t = pix_thumb_maker_finish(m);
	pix_thumb_maker_free(m);
	return t;
}

/* --- the index of contents with a thumbnail ------------------------------------ */

typedef struct {
	gint64 size_bytes;
	guint8 md5[16];
} Content;

struct PixThumbIndex {
	GArray *contents;     /* Content, sorted once sealed (owned) */
	gboolean is_sealed;
};

PixThumbIndex *pix_thumb_index_new(void)
{
	PixThumbIndex *x = g_new0(PixThumbIndex, 1);
	x->contents = g_array_new(FALSE, FALSE, sizeof(Content));
	return x;
}

void pix_thumb_index_free(PixThumbIndex *x)
{
	if (x == NULL)
		return;
	g_array_free(x->contents, TRUE);
	g_free(x);
}

void pix_thumb_index_add(PixThumbIndex *x, gint64 size_bytes, const guint8 md5[16])
{
	g_assert(!x->is_sealed);
	Content c = { .size_bytes = size_bytes };
	memcpy(c.md5, md5, 16);
	g_array_append_val(x->contents, c);
}

static int compare_contents(gconstpointer a, gconstpointer b)
{
	const Content *x = a, *y = b;
	if (x->size_bytes != y->size_bytes)
		return x->size_bytes < y->size_bytes ? -1 : 1;
	return memcmp(x->md5, y->md5, 16);
}

void pix_thumb_index_seal(PixThumbIndex *x)
{
	g_array_sort(x->contents, compare_contents);
	x->is_sealed = TRUE;
}

guint pix_thumb_index_len(const PixThumbIndex *x)
{
	return x->contents->len;
}

/* The first content not below `key` (by size, then MD5 unless `md5` is
 * NULL: the first of that size). */
static guint lower_bound(const PixThumbIndex *x, gint64 size_bytes, const guint8 *md5)
{
	guint lo = 0, hi = x->contents->len;
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		const Content *c = &g_array_index(x->contents, Content, mid);
		int cmp = c->size_bytes != size_bytes ? (c->size_bytes < size_bytes ? -1 : 1)
		                                      : md5 != NULL ? memcmp(c->md5, md5, 16) : 0;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

gboolean pix_thumb_index_has_size(const PixThumbIndex *x, gint64 size_bytes)
{
	g_assert(x->is_sealed);
	guint i = lower_bound(x, size_bytes, NULL);
	return i < x->contents->len && g_array_index(x->contents, Content, i).size_bytes == size_bytes;
}

gboolean pix_thumb_index_has(const PixThumbIndex *x, gint64 size_bytes, const guint8 md5[16])
{
	g_assert(x->is_sealed);
	guint i = lower_bound(x, size_bytes, md5);
	if (i >= x->contents->len)
		return FALSE;
	const Content *c = &g_array_index(x->contents, Content, i);
	return c->size_bytes == size_bytes && memcmp(c->md5, md5, 16) == 0;
}

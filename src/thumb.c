/*
 * thumb.c: thumbnails from the bytes as they are read (see thumb.h): the
 * maker, which tells a file's format from its first bytes, hands the
 * bytes to the decoder for it (thumb-int.h) and cuts out of them the
 * embedded previews the metadata parser finds, then makes the renditions
 * from the best pixels it got.
 *
 * Runs on a hash thread, fed by the hasher the same pieces as the
 * metadata parser, each piece after the parser has seen it: so the parser
 * has read a preview's pointer (an MPF index, a RAW file's directories)
 * before the maker sees the bytes it points to, when the pointer comes
 * first in the file, as cameras write them.
 *
 * Sources, cheapest first:
 *  - JPEG: the image is decoded as it streams (thumb-jpeg.c) unless its
 *    MPF index names a "large thumbnail" of at least PIX_THUMB_MAX_EDGE
 *    pixels and smaller than the image; then, once the header is read,
 *    the image is not decoded and that preview, after the image, is;
 *  - PNG and WebP: decoded as they stream (thumb-png.c, thumb-webp.c);
 *  - HEIF, HEIC, AVIF: the file kept and decoded at its end
 *    (thumb-heif.c);
 *  - anything else (RAW files): the JPEG previews the metadata parser
 *    finds, each decoded as its bytes go by, in file order, until one has
 *    PIX_THUMB_MAX_EDGE pixels; the largest serves.
 *
 * Invariants (maker_check):
 *  1. At most one decoder of the file's own format, and at most one
 *     preview being cut out (m->jpeg, which is then not the image's).
 *  2. m->pos counts the bytes fed; a preview being cut out started at or
 *     after the first byte fed after it was found, and ends at pv_end.
 *  3. `best` holds pixels only with a source, at most PIX_THUMB_MAX_EDGE
 *     on the long edge.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "thumb-int.h"
#include "meta.h"

#include <stdarg.h>
#include <string.h>

#define SNIFF_BYTES 12
/* the smallest rendition a preview must allow */
#define MIN_PREVIEW_EDGE 256

typedef enum {
	F_SNIFF,        /* fewer than SNIFF_BYTES seen */
	F_JPEG,
	F_PNG,
	F_WEBP,
	F_HEIF,
	F_PREVIEWS,     /* no decoder of its own: its previews, if any */
} Format;

struct PixThumbMaker {
	Format format;
	guint8 head[SNIFF_BYTES];
	gsize n_head;
	guint64 pos;                /* bytes fed */
	gint64 size_bytes;          /* the file's, -1 unknown */
	const PixMetaParser *meta;  /* (nullable, not owned) */
	ThumbJpeg *jpeg;            /* the image's decoder, or a preview's
	                               (owned, kept from file to file) */
	gboolean is_jpeg_image;     /* m->jpeg decodes the file itself */
	gboolean is_skipping_image; /* a JPEG whose MPF preview serves */
	ThumbPng *png;              /* (owned, nullable) */
	ThumbWebp *webp;            /* (owned, nullable) */
	ThumbHeif *heif;            /* (owned, nullable) */
	/* the preview being cut out of the bytes */
	gboolean in_preview;
	guint64 pv_off, pv_end;
	PixPreviewKind pv_kind;
	guint64 tried[PIX_META_MAX_PREVIEWS];   /* previews started or gone by, by offset */
	guint n_tried;
	gboolean is_previews_done;  /* one has PIX_THUMB_MAX_EDGE pixels */
	guint64 missed_off;         /* a preview that went by before it was known */
	gboolean has_missed;
	char *pv_note;              /* why the last preview gave nothing (owned) */
	/* the best pixels so far */
	ThumbPixels best;
	guint best_w, best_h;       /* the size of the image they came from */
	const char *best_source;    /* static, NULL when `best` is empty */
	gboolean is_best_preview;
	char *note;                 /* (owned) */
	gint64 image_w, image_h;    /* the image's stored size, -1 unknown */
	int orientation;            /* its EXIF orientation, -1 unknown */
	PixThumbStats stats;
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

gsize pix_thumb_bytes(const PixThumb *t)
{
	gsize n = 0;
	for (guint i = 0; t != NULL && i < PIX_THUMB_N_SIZES; i++)
		n += t->jpeg[i] != NULL ? g_bytes_get_size(t->jpeg[i]) : 0;
	return n;
}

/* --- pixels ------------------------------------------------------------------ */

void thumb_pixels_clear(ThumbPixels *p)
{
	g_free(p->data);
	memset(p, 0, sizeof *p);
}

gboolean thumb_check_size(guint64 w, guint64 h, char **note)
{
	if (w == 0 || h == 0) {
		*note = g_strdup("an image of no pixels");
		return FALSE;
	}
	if (w * h > (guint64)PIX_THUMB_MAX_PIXELS || w > THUMB_MAX_SIDE || h > THUMB_MAX_SIDE) {
		*note = g_strdup_printf("an image of %" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT
		                        " pixels is over the bound of %" G_GINT64_FORMAT " megapixels",
		                        w, h, PIX_THUMB_MAX_PIXELS / 1000000);
		return FALSE;
	}
	return TRUE;
}

void thumb_fit(guint sw, guint sh, guint edge, guint *tw, guint *th)
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

void thumb_shrink_clear(ThumbShrink *s)
{
	g_free(s->xcount);
	g_free(s->acc);
	g_free(s->out);
	memset(s, 0, sizeof *s);
}

void thumb_shrink_init(ThumbShrink *s, guint sw, guint sh, guint c, guint edge)
{
	guint tw, th;
	thumb_fit(sw, sh, edge, &tw, &th);
	thumb_shrink_init_to(s, sw, sh, c, tw, th);
}

void thumb_shrink_init_to(ThumbShrink *s, guint sw, guint sh, guint c, guint tw, guint th)
{
	g_assert(tw >= 1 && tw <= sw && th >= 1 && th <= sh);
	thumb_shrink_clear(s);
	s->sw = sw;
	s->sh = sh;
	s->c = c;
	s->tw = tw;
	s->th = th;
	/* source column x goes to target column x * tw / sw: in order, at
	 * least one to each (tw <= sw) */
	s->xcount = g_new0(guint, s->tw);
	for (guint x = 0; x < sw; x++)
		s->xcount[(guint64)x * s->tw / sw]++;
	s->acc = g_new0(guint32, (gsize)s->tw * c);
	s->out = g_malloc((gsize)s->tw * s->th * c);
}

/*
 * Each output sample is the rounded mean of its box, (sum + n/2) / n.  The
 * division goes by a multiply: with m = ceil(2^36 / n), (x * m) >> 36 is
 * x / n for every x below 2^20 (n < 2^16; Granlund and Montgomery), so for
 * every sum of n bytes when n < 4096, checked for all of them; a box
 * holds a few columns and rows, so n takes one or two values per row of
 * output and m is worked out again only when it changes.  (Dividing each
 * sample was half of the shrinking's time, 2% of a scan with thumbnails.)
 */
#define SHRINK_RECIP_MAX_N 4096
static void shrink_flush(ThumbShrink *s)
{
	guint8 *o = s->out + (gsize)s->ty * s->tw * s->c;
	guint32 last_n = 0;
	guint64 m = 0;
	for (guint tx = 0; tx < s->tw; tx++) {
		guint32 n = s->xcount[tx] * s->rows;
		if (n != last_n) {
			last_n = n;
			m = ((G_GUINT64_CONSTANT(1) << 36) + n - 1) / n;
		}
		for (guint k = 0; k < s->c; k++) {
			guint32 *a = &s->acc[(gsize)tx * s->c + k];
			guint32 x = *a + n / 2;
			o[(gsize)tx * s->c + k] = (guint8)(n < SHRINK_RECIP_MAX_N ? (guint32)((x * m) >> 36) : x / n);
			*a = 0;
		}
	}
	s->rows = 0;
}

void thumb_shrink_row(ThumbShrink *s, const guint8 *row)
{
	g_assert(s->y < s->sh);
	if (s->tw == s->sw && s->th == s->sh) {
		/* a box of one pixel: the row itself (an image no larger than
		 * the rendition, 10% of a scan of small JPEGs summed and divided
		 * one sample at a time) */
		memcpy(s->out + (gsize)s->y * s->sw * s->c, row, (gsize)s->sw * s->c);
		s->y++;
		return;
	}
	guint ty = (guint)((guint64)s->y * s->th / s->sh);
	if (ty != s->ty && s->rows > 0)
		shrink_flush(s);
	s->ty = ty;
	/* each box's columns summed in registers, then added to its sums
	 * once (added sample by sample in memory, each addition waited for
	 * the store of the one before: 2.5-2.7% of a scan of RAW files with
	 * thumbnails went here, 1.7% now) */
	const guint8 *p = row;
	guint32 *a = s->acc;
	if (s->c == 3) {
		for (guint tx = 0; tx < s->tw; tx++, a += 3) {
			guint32 r = 0, g = 0, b = 0;
			for (guint k = s->xcount[tx]; k > 0; k--, p += 3) {
				r += p[0];
				g += p[1];
				b += p[2];
			}
			a[0] += r;
			a[1] += g;
			a[2] += b;
		}
	} else {
		for (guint tx = 0; tx < s->tw; tx++) {
			guint32 v = 0;
			for (guint k = s->xcount[tx]; k > 0; k--)
				v += *p++;
			a[tx] += v;
		}
	}
	s->rows++;
	if (++s->y == s->sh)
		shrink_flush(s);
}

gboolean thumb_shrink_is_done(const ThumbShrink *s)
{
	return s->out != NULL && s->y == s->sh;
}

void thumb_shrink_take(ThumbShrink *s, ThumbPixels *out)
{
	g_assert(thumb_shrink_is_done(s));
	thumb_pixels_clear(out);
	out->w = s->tw;
	out->h = s->th;
	out->c = s->c;
	out->data = g_steal_pointer(&s->out);
	thumb_shrink_clear(s);
}

/*
 * Pixels a camera stored as shown (a preview it turned upright) back in
 * the image's stored order, which the renditions keep: orientation `o`
 * (5..8) maps stored pixels S to shown ones D; S = D under the inverse.
 */
static void unrotate(ThumbPixels *p, int o)
{
	guint dw = p->w, dh = p->h, c = p->c, sw = dh, sh = dw;
	guint8 *s = g_malloc((gsize)sw * sh * c);
	for (guint sy = 0; sy < sh; sy++) {
		for (guint sx = 0; sx < sw; sx++) {
			guint dx, dy;
			switch (o) {
			case 5: dx = sy; dy = sx; break;                     /* transpose */
			case 6: dx = sh - 1 - sy; dy = sx; break;            /* shown turned 90 clockwise */
			case 7: dx = sh - 1 - sy; dy = sw - 1 - sx; break;   /* transverse */
			default: dx = sy; dy = sw - 1 - sx; break;           /* 8: turned 90 anticlockwise */
			}
			memcpy(s + ((gsize)sy * sw + sx) * c, p->data + ((gsize)dy * dw + dx) * c, c);
		}
	}
	g_free(p->data);
	p->data = s;
	p->w = sw;
	p->h = sh;
}

/* --- the maker --------------------------------------------------------------- */

PixThumbMaker *pix_thumb_maker_new(void)
{
	PixThumbMaker *m = g_new0(PixThumbMaker, 1);
	pix_thumb_maker_reset(m);
	return m;
}

static void drop_decoders(PixThumbMaker *m)
{
	if (m->jpeg != NULL)
		thumb_jpeg_reset(m->jpeg);
	g_clear_pointer(&m->png, thumb_png_free);
	g_clear_pointer(&m->webp, thumb_webp_free);
	g_clear_pointer(&m->heif, thumb_heif_free);
}

void pix_thumb_maker_reset(PixThumbMaker *m)
{
	drop_decoders(m);
	m->format = F_SNIFF;
	m->n_head = 0;
	m->pos = 0;
	m->size_bytes = -1;
	m->meta = NULL;
	m->is_jpeg_image = FALSE;
	m->is_skipping_image = FALSE;
	m->in_preview = FALSE;
	m->n_tried = 0;
	m->is_previews_done = FALSE;
	m->has_missed = FALSE;
	g_clear_pointer(&m->pv_note, g_free);
	thumb_pixels_clear(&m->best);
	m->best_source = NULL;
	m->is_best_preview = FALSE;
	g_clear_pointer(&m->note, g_free);
	m->image_w = m->image_h = -1;
	m->orientation = -1;
}

void pix_thumb_maker_free(PixThumbMaker *m)
{
	if (m == NULL)
		return;
	pix_thumb_maker_reset(m);
	thumb_jpeg_free(m->jpeg);
	g_free(m);
}

void pix_thumb_maker_start(PixThumbMaker *m, const PixMetaParser *meta, gint64 size_bytes)
{
	pix_thumb_maker_reset(m);
	m->meta = meta;
	m->size_bytes = size_bytes;
}

void pix_thumb_maker_set_image(PixThumbMaker *m, gint64 width_px, gint64 height_px, int orientation)
{
	m->image_w = width_px;
	m->image_h = height_px;
	m->orientation = orientation;
}

void pix_thumb_maker_stats(const PixThumbMaker *m, PixThumbStats *out)
{
	*out = m->stats;
	if (m->jpeg != NULL)
		out->n_jpeg_rows = thumb_jpeg_rows(m->jpeg);
}

static gboolean maker_check(const PixThumbMaker *m)
{
	if (m->in_preview && (m->is_jpeg_image || m->pv_end <= m->pv_off))
		return FALSE;
	if ((m->best.data != NULL) != (m->best_source != NULL))
		return FALSE;
	return m->best.data == NULL || MAX(m->best.w, m->best.h) <= PIX_THUMB_MAX_EDGE;
}

/* Keeps `p` (from an image of w x h) if it is the best yet. */
static void offer(PixThumbMaker *m, ThumbPixels *p, guint w, guint h, const char *source, gboolean is_preview)
{
	if (m->best.data != NULL && MAX(w, h) <= MAX(m->best_w, m->best_h)) {
		thumb_pixels_clear(p);
		return;
	}
	thumb_pixels_clear(&m->best);
	m->best = *p;
	memset(p, 0, sizeof *p);
	m->best_w = w;
	m->best_h = h;
	m->best_source = source;
	m->is_best_preview = is_preview;
}

static const char *preview_source(PixPreviewKind kind)
{
	return kind == PIX_PREVIEW_MPF ? "mpf-preview" : "raw-preview";
}

/* The preview just cut out (or cut short) is decoded: its pixels, or why
 * not. */
static void end_preview(PixThumbMaker *m)
{
	ThumbPixels p = { 0 };
	guint w = 0, h = 0;
	g_autofree char *note = NULL;
	m->in_preview = FALSE;
	if (thumb_jpeg_finish(m->jpeg, &p, &w, &h, &note)) {
		if (MAX(w, h) >= PIX_THUMB_MAX_EDGE)
			m->is_previews_done = TRUE;
		offer(m, &p, w, h, preview_source(m->pv_kind), TRUE);
	} else if (note != NULL) {
		g_free(m->pv_note);
		m->pv_note = g_strdup_printf("its preview at byte %" G_GUINT64_FORMAT " is damaged (%s)", m->pv_off,
		                             note);
	}
}

static gboolean was_tried(const PixThumbMaker *m, guint64 off)
{
	for (guint i = 0; i < m->n_tried; i++)
		if (m->tried[i] == off)
			return TRUE;
	return FALSE;
}

static void mark_tried(PixThumbMaker *m, guint64 off)
{
	if (m->n_tried < PIX_META_MAX_PREVIEWS)
		m->tried[m->n_tried++] = off;
}

/* The next preview to cut out, at or after m->pos (FALSE: none known);
 * those known only once they went by are noted. */
static gboolean next_preview(PixThumbMaker *m, guint64 pos, PixPreview *next)
{
	guint n = 0;
	const PixPreview *pv = m->meta != NULL ? pix_meta_parser_previews(m->meta, &n) : NULL;
	gboolean found = FALSE;
	for (guint i = 0; i < n; i++) {
		const PixPreview *p = &pv[i];
		if (m->is_skipping_image && p->kind != PIX_PREVIEW_MPF)
			continue;
		if (was_tried(m, p->off) || m->n_tried == PIX_META_MAX_PREVIEWS)
			continue;
		if (m->size_bytes >= 0 && p->off + p->len > (guint64)m->size_bytes) {
			mark_tried(m, p->off);
			g_free(m->pv_note);
			m->pv_note = g_strdup_printf("its preview at byte %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
			                             " bytes) runs past the end of the file", p->off, p->len);
			continue;
		}
		if (p->off < pos) {
			mark_tried(m, p->off);
			if (!m->has_missed) {
				m->has_missed = TRUE;
				m->missed_off = p->off;
			}
			continue;
		}
		if (!found || p->off < next->off) {
			*next = *p;
			found = TRUE;
		}
	}
	return found;
}

/* The previews' share of the bytes [m->pos, m->pos + len). */
static void feed_previews(PixThumbMaker *m, const guint8 *data, gsize len)
{
	guint64 pos = m->pos;
	while (len > 0 && !m->is_previews_done) {
		if (m->in_preview) {
			gsize n = (gsize)MIN((guint64)len, m->pv_end - pos);
			thumb_jpeg_feed(m->jpeg, data, n);
			pos += n;
			data += n;
			len -= n;
			if (pos == m->pv_end || thumb_jpeg_state(m->jpeg) != THUMB_RUNNING)
				end_preview(m);
			continue;
		}
		PixPreview next = { 0 };
		if (!next_preview(m, pos, &next) || next.off >= pos + len)
			break;
		gsize skip = (gsize)(next.off - pos);
		pos += skip;
		data += skip;
		len -= skip;
		mark_tried(m, next.off);
		m->in_preview = TRUE;
		m->pv_off = next.off;
		m->pv_end = next.off + next.len;
		m->pv_kind = next.kind;
		m->stats.n_decodes++;
		if (m->jpeg == NULL)
			m->jpeg = thumb_jpeg_new();
		thumb_jpeg_start(m->jpeg, NULL, NULL);
	}
}

/*
 * A JPEG's header is read: decode the image, unless its MPF index (read
 * by the metadata parser from the same header) names a large thumbnail
 * of at least PIX_THUMB_MAX_EDGE pixels, smaller than the image, that
 * lies within the file: then that preview serves, and the image's bytes
 * are only hashed.
 */
static gboolean on_image_header(void *ctx, guint width_px, guint height_px)
{
	PixThumbMaker *m = ctx;
	guint n = 0;
	const PixPreview *pv = m->meta != NULL ? pix_meta_parser_previews(m->meta, &n) : NULL;
	for (guint i = 0; i < n; i++) {
		const PixPreview *p = &pv[i];
		if (p->kind != PIX_PREVIEW_MPF || p->class_px < PIX_THUMB_MAX_EDGE ||
		    p->class_px >= MAX(width_px, height_px))
			continue;
		if (m->size_bytes >= 0 && p->off + p->len > (guint64)m->size_bytes)
			continue;
		m->is_skipping_image = TRUE;
		return FALSE;
	}
	return TRUE;
}

static void decide(PixThumbMaker *m)
{
	const guint8 *h = m->head;
	gsize n = m->n_head;
	static const char *const heif_brands[] = { "heic", "heix", "hevc", "heim", "heis", "hevm", "hevs",
		                                   "mif1", "msf1", "avif", "avis" };
	m->format = F_PREVIEWS;
	if (n >= 3 && memcmp(h, "\xff\xd8\xff", 3) == 0) {
		m->format = F_JPEG;
		if (m->jpeg == NULL)
			m->jpeg = thumb_jpeg_new();
		thumb_jpeg_start(m->jpeg, on_image_header, m);
		m->is_jpeg_image = TRUE;
	} else if (n >= 8 && memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0) {
		m->format = F_PNG;
		m->png = thumb_png_new();
	} else if (n >= 12 && memcmp(h, "RIFF", 4) == 0 && memcmp(h + 8, "WEBP", 4) == 0) {
		m->format = F_WEBP;
		m->webp = thumb_webp_new();
	} else if (n >= 12 && memcmp(h + 4, "ftyp", 4) == 0) {
		for (guint i = 0; i < G_N_ELEMENTS(heif_brands); i++) {
			if (memcmp(h + 8, heif_brands[i], 4) == 0) {
				m->format = F_HEIF;
				m->heif = thumb_heif_new(m->size_bytes);
				break;
			}
		}
	}
	if (m->format != F_PREVIEWS)
		m->stats.n_decodes++;
}

/* Bytes from m->pos on, after the format is decided. */
static void feed_decided(PixThumbMaker *m, const guint8 *data, gsize len)
{
	switch (m->format) {
	case F_JPEG:
		if (m->is_jpeg_image) {
			thumb_jpeg_feed(m->jpeg, data, len);
			if (m->is_skipping_image && thumb_jpeg_state(m->jpeg) == THUMB_STOPPED) {
				thumb_jpeg_reset(m->jpeg);
				m->is_jpeg_image = FALSE;
			}
		}
		if (m->is_skipping_image)
			feed_previews(m, data, len);
		break;
	case F_PNG:
		thumb_png_feed(m->png, data, len);
		break;
	case F_WEBP:
		thumb_webp_feed(m->webp, data, len);
		break;
	case F_HEIF:
		thumb_heif_feed(m->heif, data, len);
		break;
	case F_PREVIEWS:
		feed_previews(m, data, len);
		break;
	case F_SNIFF:
		g_assert_not_reached();
	}
	m->pos += len;
	g_assert(maker_check(m));
}

void pix_thumb_maker_feed(PixThumbMaker *m, const guint8 *data, gsize len)
{
	if (len == 0)
		return;
	if (m->format == F_SNIFF) {
		gsize take = MIN(len, SNIFF_BYTES - m->n_head);
		memcpy(m->head + m->n_head, data, take);
		m->n_head += take;
		data += take;
		len -= take;
		if (m->n_head < SNIFF_BYTES)
			return;
		decide(m);
		/* the head went in before the format was known: replay it */
		feed_decided(m, m->head, m->n_head);
	}
	if (len > 0)
		feed_decided(m, data, len);
}

/* --- the renditions ------------------------------------------------------------ */

static PixThumb *make_renditions(PixThumbMaker *m)
{
	ThumbPixels *xl = &m->best;
	/* a preview the camera turned upright goes back to the image's
	 * stored order: its long side is across the image's short one, and
	 * the orientation turns it by 90 degrees */
	if (m->is_best_preview && m->orientation >= 5 && m->orientation <= 8 && m->image_w > 0 &&
	    m->image_h > 0 && m->image_w != m->image_h && m->best_w != m->best_h &&
	    (m->image_w > m->image_h) != (m->best_w > m->best_h))
		unrotate(xl, m->orientation);
	g_autoptr(PixThumb) t = g_new0(PixThumb, 1);
	t->source = m->best_source;
	ThumbShrink large = { 0 };
	ThumbPixels lp = { 0 };
	thumb_shrink_init(&large, xl->w, xl->h, xl->c, pix_thumb_edge(PIX_THUMB_LARGE));
	for (guint y = 0; y < xl->h; y++)
		thumb_shrink_row(&large, xl->data + (gsize)y * xl->w * xl->c);
	thumb_shrink_take(&large, &lp);
	const ThumbPixels *by_size[PIX_THUMB_N_SIZES] = { &lp, xl };
	for (guint i = 0; i < PIX_THUMB_N_SIZES; i++) {
		const ThumbPixels *p = by_size[i];
		t->width_px[i] = p->w;
		t->height_px[i] = p->h;
		t->jpeg[i] = thumb_jpeg_encode(p, &t->note);
		if (t->jpeg[i] == NULL) {
			for (guint j = 0; j < PIX_THUMB_N_SIZES; j++)
				g_clear_pointer(&t->jpeg[j], g_bytes_unref);
			t->source = NULL;
			break;
		}
	}
	if (t->note == NULL)
		pix_phash_of_rendition(&t->phash, lp.data, lp.w, lp.h, lp.c, t->jpeg[PIX_THUMB_LARGE]);
	thumb_pixels_clear(&lp);
	return g_steal_pointer(&t);
}

/* What a maker that follows previews says when none served. */
static char *previews_note(PixThumbMaker *m, gboolean is_mpf)
{
	if (m->best.data != NULL)
		return g_strdup_printf("its largest preview is %u x %u pixels, under %u", m->best_w, m->best_h,
		                       MIN_PREVIEW_EDGE);
	if (m->pv_note != NULL)
		return is_mpf ? g_strdup_printf("%s; the image itself was not decoded (its preview was to serve)",
		                                m->pv_note)
		              : g_strdup(m->pv_note);
	if (m->has_missed)
		return g_strdup_printf("its preview at byte %" G_GUINT64_FORMAT " comes before the directory that "
		                       "points to it, and went by unkept", m->missed_off);
	if (is_mpf)
		return g_strdup("its MPF preview was not found; the image itself was not decoded");
	return NULL;
}

/* The pixels of a decoder of the file's own format, or its note. */
static void take_image(PixThumbMaker *m, gboolean ok, ThumbPixels *p, guint w, guint h, const char *source,
                       char *note)
{
	if (ok)
		offer(m, p, w, h, source, FALSE);
	else if (note != NULL)
		m->note = note;
}

PixThumb *pix_thumb_maker_finish(PixThumbMaker *m)
{
	PixThumb *t = NULL;
	ThumbPixels p = { 0 };
	guint w = 0, h = 0;
	char *note = NULL;
	const char *source = NULL;
	gboolean ok, is_deferred = FALSE;

	if (m->format == F_SNIFF) {
		decide(m);
		if (m->n_head > 0)
			feed_decided(m, m->head, m->n_head);
	}
	if (m->in_preview)
		end_preview(m);
	switch (m->format) {
	case F_JPEG:
		if (m->is_jpeg_image && !m->is_skipping_image) {
			ok = thumb_jpeg_finish(m->jpeg, &p, &w, &h, &note);
			take_image(m, ok, &p, w, h, "jpeg", note);
		}
		break;
	case F_PNG:
		ok = thumb_png_finish(g_steal_pointer(&m->png), &p, &w, &h, &note);
		take_image(m, ok, &p, w, h, "png", note);
		break;
	case F_WEBP:
		ok = thumb_webp_finish(g_steal_pointer(&m->webp), &p, &w, &h, &note);
		take_image(m, ok, &p, w, h, "webp", note);
		break;
	case F_HEIF:
		is_deferred = thumb_heif_is_deferred(m->heif);
		ok = thumb_heif_finish(g_steal_pointer(&m->heif), &p, &w, &h, &source, &note);
		take_image(m, ok, &p, w, h, source, note);
		break;
	default:
		break;
	}
	gboolean is_mpf = m->format == F_JPEG && m->is_skipping_image;
	if (m->best.data != NULL && (!m->is_best_preview || MAX(m->best_w, m->best_h) >= MIN_PREVIEW_EDGE)) {
		t = make_renditions(m);
	} else if (m->note != NULL) {
		t = pix_thumb_new_note("%s", m->note);
		t->is_deferred = is_deferred;
	} else if (m->format == F_PREVIEWS || is_mpf) {
		g_autofree char *why = previews_note(m, is_mpf);
		if (why != NULL)
			t = pix_thumb_new_note("%s", why);
	}
	pix_thumb_maker_reset(m);
	return t;
}

PixThumb *pix_thumb_from_buffer(const guint8 *data, gsize len)
{
	PixThumbMaker *m = pix_thumb_maker_new();
	pix_thumb_maker_start(m, NULL, (gint64)len);
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

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
#include "meta.h"
#include "thumb.h"
#include "thumb-int.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <jpeglib.h>
#include <libheif/heif.h>
#include <png.h>
#include <unistd.h>
#include <webp/encode.h>

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
static void check_renditions_of(const PixThumb *t, guint w, guint h, gboolean is_gray, const char *source)
{
	g_assert_null(t->note);
	g_assert_cmpstr(t->source, ==, source);
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

static void check_renditions(const PixThumb *t, guint w, guint h, gboolean is_gray)
{
	check_renditions_of(t, w, h, is_gray, "jpeg");
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


/* --- sources other than the image's JPEG --------------------------------- */

static void put_be16(GByteArray *b, guint v)
{
	guint8 x[2] = { (guint8)(v >> 8), (guint8)v };
	g_byte_array_append(b, x, 2);
}

static void put_be32(GByteArray *b, guint32 v)
{
	guint8 x[4] = { (guint8)(v >> 24), (guint8)(v >> 16), (guint8)(v >> 8), (guint8)v };
	g_byte_array_append(b, x, 4);
}

static void set_be32(guint8 *p, guint32 v)
{
	p[0] = (guint8)(v >> 24), p[1] = (guint8)(v >> 16), p[2] = (guint8)(v >> 8), p[3] = (guint8)v;
}

/* A camera JPEG: `image` with an APP2 MPF index naming `preview`
 * (appended after it) a large thumbnail of type code `type`. */
static GBytes *make_mpf(GBytes *image, GBytes *preview, guint32 type)
{
	gsize ilen, plen;
	const guint8 *img = g_bytes_get_data(image, &ilen), *pv = g_bytes_get_data(preview, &plen);
	GByteArray *a = g_byte_array_new();
	g_byte_array_append(a, (const guint8 *)"MPF\0MM\0\x2a\0\0\0\x08", 12);
	put_be16(a, 1);
	put_be16(a, 0xB002);
	put_be16(a, 7);
	put_be32(a, 32);
	put_be32(a, 8 + 2 + 12 + 4);      /* the entries, after the IFD */
	put_be32(a, 0);
	guint e = a->len;
	put_be32(a, 0x20030000);          /* the primary */
	put_be32(a, 0);
	put_be32(a, 0);
	put_be32(a, 0);
	put_be32(a, type);
	put_be32(a, (guint32)plen);
	put_be32(a, 0);
	put_be32(a, 0);
	guint32 total = (guint32)(ilen + 4 + a->len);
	set_be32(a->data + e + 4, total);
	set_be32(a->data + e + 24, total - (2 + 4 + 4));
	GByteArray *out = g_byte_array_new();
	g_byte_array_append(out, img, 2);
	g_byte_array_append(out, (const guint8 *)"\xff\xe2", 2);
	put_be16(out, a->len + 2);
	g_byte_array_append(out, a->data, a->len);
	g_byte_array_append(out, img + 2, (guint)ilen - 2);
	g_byte_array_append(out, pv, (guint)plen);
	g_byte_array_free(a, TRUE);
	return g_byte_array_free_to_bytes(out);
}

static void put_le16(GByteArray *b, guint v)
{
	guint8 x[2] = { (guint8)v, (guint8)(v >> 8) };
	g_byte_array_append(b, x, 2);
}

static void put_le32(GByteArray *b, guint32 v)
{
	put_le16(b, v & 0xffff);
	put_le16(b, v >> 16);
}

static void entry(GByteArray *b, guint tag, guint type, guint32 count, guint32 value)
{
	put_le16(b, tag);
	put_le16(b, type);
	put_le32(b, count);
	put_le32(b, value);
}

/* A TIFF-based RAW file (a NEF's layout): IFD0 with Make, Orientation
 * and a JPEGInterchangeFormat pointer to `preview`, a SubIFD of w x h CFA
 * data (`raw_bytes` of noise).  The directories come first, or after the
 * preview and the data (`is_preview_first`). */
static GBytes *make_raw(GBytes *preview, guint orientation, guint w, guint h, gsize raw_bytes,
                        gboolean is_preview_first)
{
	gsize plen;
	const guint8 *pv = g_bytes_get_data(preview, &plen);
	static const char make[] = "NIKON CORPORATION";
	gsize dirs_len = (2 + 5 * 12 + 4) + (2 + 6 * 12 + 4) + sizeof make;
	guint32 dirs = is_preview_first ? (guint32)(8 + plen + raw_bytes) : 8;
	guint32 pv_at = is_preview_first ? 8 : (guint32)(8 + dirs_len);
	guint32 raw_at = (guint32)(pv_at + plen);
	guint32 sub = dirs + 2 + 5 * 12 + 4, make_at = sub + 2 + 6 * 12 + 4;
	GByteArray *d = g_byte_array_new();
	put_le16(d, 5);
	entry(d, 0x010f, 2, sizeof make, make_at);
	entry(d, 0x0112, 3, 1, orientation);
	entry(d, 0x014a, 4, 1, sub);
	entry(d, 0x0201, 4, 1, pv_at);
	entry(d, 0x0202, 4, 1, (guint32)plen);
	put_le32(d, 0);
	put_le16(d, 6);
	entry(d, 0x00fe, 4, 1, 0);
	entry(d, 0x0100, 4, 1, w);
	entry(d, 0x0101, 4, 1, h);
	entry(d, 0x0106, 3, 1, 32803);
	entry(d, 0x0111, 4, 1, raw_at);
	entry(d, 0x0117, 4, 1, (guint32)raw_bytes);
	put_le32(d, 0);
	g_byte_array_append(d, (const guint8 *)make, sizeof make);
	GByteArray *out = g_byte_array_new();
	g_byte_array_append(out, (const guint8 *)"II\x2a\0", 4);
	put_le32(out, dirs);
	g_autofree guint8 *noise = g_malloc(raw_bytes);
	for (gsize i = 0; i < raw_bytes; i++)
		noise[i] = (guint8)(i * 2654435761u >> 13);
	if (!is_preview_first)
		g_byte_array_append(out, d->data, d->len);
	g_byte_array_append(out, pv, (guint)plen);
	g_byte_array_append(out, noise, (guint)raw_bytes);
	if (is_preview_first)
		g_byte_array_append(out, d->data, d->len);
	g_byte_array_free(d, TRUE);
	return g_byte_array_free_to_bytes(out);
}

/*
 * As the hasher runs them: each piece of `piece` bytes to the metadata
 * parser, then to the maker, which asks the parser where the previews
 * are; the image's size and orientation from the metadata at the end.
 */
static PixThumb *make_as_hashed(GBytes *f, gsize piece, PixThumbStats *stats)
{
	gsize len;
	const guint8 *data = g_bytes_get_data(f, &len);
	PixMetaParser *mp = pix_meta_parser_new();
	PixThumbMaker *m = pix_thumb_maker_new();
	pix_thumb_maker_start(m, mp, (gint64)len);
	for (gsize at = 0; at < len;) {
		gsize n = MIN(piece, len - at);
		pix_meta_parser_feed(mp, data + at, n);
		pix_thumb_maker_feed(m, data + at, n);
		at += n;
	}
	PixDir *dir = pix_dir_new("/");
	g_autoptr(PixItem) item = pix_item_new(PIX_ACT_ADD, dir, "x");
	pix_dir_unref(dir);
	pix_meta_parser_finish(mp, item);
	if (item->meta != NULL)
		pix_thumb_maker_set_image(m, item->meta->width_px, item->meta->height_px, item->meta->orientation);
	PixThumb *t = pix_thumb_maker_finish(m);
	if (stats != NULL)
		pix_thumb_maker_stats(m, stats);
	pix_thumb_maker_free(m);
	pix_meta_parser_free(mp);
	return t;
}

/* A camera JPEG whose MPF preview has 512 px: the preview is decoded, the
 * image is not (libjpeg decoded the preview's rows alone). */
static void test_mpf(void)
{
	g_autoptr(GBytes) image = make_jpeg(3000, 2000, FALSE, FALSE);
	g_autoptr(GBytes) preview = make_jpeg(960, 640, FALSE, FALSE);
	g_autoptr(GBytes) f = make_mpf(image, preview, 0x010001);
	PixThumbStats alone, st;
	g_autoptr(PixThumb) p = make_as_hashed(preview, 1 << 20, &alone);
	static const gsize pieces[] = { 1 << 20, 4096, 333 };
	for (guint i = 0; i < G_N_ELEMENTS(pieces); i++) {
		g_autoptr(PixThumb) t = make_as_hashed(f, pieces[i], &st);
		check_renditions_of(t, 3000, 2000, FALSE, "mpf-preview");
		g_assert_cmpuint(st.n_jpeg_rows, ==, alone.n_jpeg_rows);
		g_assert_cmpuint(st.n_decodes, ==, 2);   /* the image's header, the preview */
	}
	/* without the metadata parser (or with a preview class under 512 px,
	 * or a preview as large as the image) the image is decoded */
	g_autoptr(PixThumb) t0 = pix_thumb_from_buffer(g_bytes_get_data(f, NULL), g_bytes_get_size(f));
	check_renditions(t0, 3000, 2000, FALSE);
	g_autoptr(GBytes) small_pv = make_jpeg(320, 213, FALSE, FALSE);
	g_autoptr(GBytes) small = make_mpf(image, small_pv, 0x020002);
	g_autoptr(PixThumb) t1 = make_as_hashed(small, 65536, NULL);
	check_renditions(t1, 3000, 2000, FALSE);
	g_autoptr(GBytes) small_image = make_jpeg(600, 400, FALSE, FALSE);
	g_autoptr(GBytes) big = make_mpf(small_image, preview, 0x010002);
	g_autoptr(PixThumb) t2 = make_as_hashed(big, 65536, NULL);
	check_renditions(t2, 600, 400, FALSE);
	/* a preview cut off the end is seen at the image's header (the index
	 * names bytes past the file's size): the image is decoded */
	gsize len = g_bytes_get_size(f);
	g_autoptr(GBytes) cut = g_bytes_new_from_bytes(f, 0, len - 1000);
	g_autoptr(PixThumb) tc = make_as_hashed(cut, 65536, NULL);
	check_renditions(tc, 3000, 2000, FALSE);
	/* a damaged preview is seen too late: the image was not decoded, a
	 * note says so */
	guint8 *bad = g_bytes_unref_to_data(g_bytes_ref(f), &len);
	gsize plen = g_bytes_get_size(preview);
	for (gsize i = len - plen; i + 1 < len; i++)
		if (bad[i] == 0xFF && bad[i + 1] == 0xC0) {
			bad[i + 1] = 0xC3;      /* lossless: libjpeg 2.1 refuses it */
			break;
		}
	g_autoptr(GBytes) damaged = g_bytes_new_take(bad, len);
	g_autoptr(PixThumb) t3 = make_as_hashed(damaged, 65536, NULL);
	g_assert_nonnull(t3->note);
	g_assert_nonnull(strstr(t3->note, "damaged"));
	g_assert_nonnull(strstr(t3->note, "not decoded"));
}

static void test_raw_preview(void)
{
	g_autoptr(GBytes) preview = make_jpeg(1500, 1000, FALSE, FALSE);
	g_autoptr(GBytes) f = make_raw(preview, 1, 6000, 4000, 300000, FALSE);
	PixThumbStats st;
	static const gsize pieces[] = { 1 << 20, 65536, 1000, 7 };
	for (guint i = 0; i < G_N_ELEMENTS(pieces); i++) {
		g_autoptr(PixThumb) t = make_as_hashed(f, pieces[i], &st);
		check_renditions_of(t, 1500, 1000, FALSE, "raw-preview");
		g_assert_cmpuint(st.n_decodes, ==, 1);
	}
	/* the preview before its directory: kept only when it came in the
	 * same piece as the pointer; else a note says why */
	g_autoptr(GBytes) first = make_raw(preview, 1, 6000, 4000, 300000, TRUE);
	g_autoptr(PixThumb) whole = make_as_hashed(first, 1 << 20, NULL);
	check_renditions_of(whole, 1500, 1000, FALSE, "raw-preview");
	g_autoptr(PixThumb) t = make_as_hashed(first, 65536, &st);
	g_assert_nonnull(t->note);
	g_assert_nonnull(strstr(t->note, "comes before the directory"));
	g_assert_cmpuint(st.n_decodes, ==, 0);
	/* a preview under 256 px is no thumbnail */
	g_autoptr(GBytes) tiny_pv = make_jpeg(160, 120, FALSE, FALSE);
	g_autoptr(GBytes) tiny = make_raw(tiny_pv, 1, 6000, 4000, 1000, FALSE);
	g_autoptr(PixThumb) t4 = make_as_hashed(tiny, 65536, NULL);
	g_assert_cmpstr(t4->note, ==, "its largest preview is 160 x 120 pixels, under 256");
	/* a RAW without a preview: no note of the maker's (the hasher's
	 * "not made yet" stands) */
	g_autoptr(GBytes) none = g_bytes_new_static("", 0);
	g_autoptr(GBytes) bare = make_raw(none, 1, 60, 40, 100, FALSE);
	g_autoptr(PixThumb) t5 = make_as_hashed(bare, 4096, NULL);
	g_assert_null(t5);
}

/* A preview the camera stored upright (portrait, for a landscape sensor
 * with orientation 6 or 8) is turned back to the stored order: the same
 * pixels as a landscape preview. */
static void test_raw_upright(void)
{
	g_autoptr(GBytes) land = make_jpeg(1500, 1000, FALSE, FALSE);
	g_autoptr(GBytes) land_raw = make_raw(land, 1, 6000, 4000, 1000, FALSE);
	g_autoptr(PixThumb) want = make_as_hashed(land_raw, 65536, NULL);
	guint w, h, c;
	g_autofree guint8 *wp = decode(want->jpeg[PIX_THUMB_XLARGE], &w, &h, &c);
	for (guint o = 6; o <= 8; o += 2) {
		/* the field, turned as the camera shows it */
		struct jpeg_compress_struct cc;
		struct jpeg_error_mgr err;
		unsigned char *buf = NULL;
		unsigned long size = 0;
		cc.err = jpeg_std_error(&err);
		jpeg_create_compress(&cc);
		jpeg_mem_dest(&cc, &buf, &size);
		cc.image_width = 1000;
		cc.image_height = 1500;
		cc.input_components = 3;
		cc.in_color_space = JCS_RGB;
		jpeg_set_defaults(&cc);
		jpeg_set_quality(&cc, 90, TRUE);
		jpeg_start_compress(&cc, TRUE);
		guint8 row[3000];
		while (cc.next_scanline < 1500) {
			guint y = cc.next_scanline;
			for (guint x = 0; x < 1000; x++) {
				/* shown (x, y) is stored (sx, sy) */
				guint sx = o == 6 ? y : 1499 - y, sy = o == 6 ? 999 - x : x;
				for (guint k = 0; k < 3; k++)
					row[3 * x + k] = field(sx, sy, 1500, 1000, k);
			}
			JSAMPROW r = row;
			jpeg_write_scanlines(&cc, &r, 1);
		}
		jpeg_finish_compress(&cc);
		jpeg_destroy_compress(&cc);
		g_autoptr(GBytes) upright = g_bytes_new(buf, size);
		free(buf);
		g_autoptr(GBytes) raw = make_raw(upright, o, 6000, 4000, 1000, FALSE);
		g_autoptr(PixThumb) t = make_as_hashed(raw, 65536, NULL);
		check_renditions_of(t, 1500, 1000, FALSE, "raw-preview");
		guint tw, th, tc;
		g_autofree guint8 *tp = decode(t->jpeg[PIX_THUMB_XLARGE], &tw, &th, &tc);
		g_assert_cmpuint(tw, ==, w);
		g_assert_cmpuint(th, ==, h);
		double diff = 0;
		for (gsize i = 0; i < (gsize)w * h * c; i++)
			diff += abs(tp[i] - wp[i]);
		g_assert_cmpfloat(diff / ((gsize)w * h * c), <, 3.0);
	}
}

/* A PNG of w x h, 8-bit RGB(A) (alpha: opaque left half, clear right
 * half), interlaced or not. */
static GBytes *make_png(guint w, guint h, gboolean has_alpha, gboolean is_interlaced)
{
	png_image img;
	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	img.width = w;
	img.height = h;
	img.format = has_alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
	guint c = has_alpha ? 4 : 3;
	g_autofree guint8 *px = g_malloc((gsize)w * h * c);
	for (guint y = 0; y < h; y++)
		for (guint x = 0; x < w; x++)
			for (guint k = 0; k < c; k++)
				px[((gsize)y * w + x) * c + k] = k < 3 ? field(x, y, w, h, k) : (x < w / 2 ? 255 : 0);
	png_alloc_size_t size = 0;
	g_assert_true(png_image_write_get_memory_size(img, size, 0, px, 0, NULL));
	guint8 *buf = g_malloc(size);
	g_assert_true(png_image_write_to_memory(&img, buf, &size, 0, px, 0, NULL));
	GBytes *b = g_bytes_new_take(buf, size);
	if (!is_interlaced)
		return b;
	/* the simplified API writes no Adam7: through the full one */
	g_bytes_unref(b);
	FILE *f = tmpfile();
	png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(p);
	png_init_io(p, f);
	png_set_IHDR(p, info, w, h, 8, has_alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_ADAM7,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	g_autofree png_bytep *rows = g_new(png_bytep, h);
	for (guint y = 0; y < h; y++)
		rows[y] = px + (gsize)y * w * c;
	png_set_rows(p, info, rows);
	png_write_png(p, info, PNG_TRANSFORM_IDENTITY, NULL);
	png_destroy_write_struct(&p, &info);
	long n = ftell(f);
	rewind(f);
	guint8 *all = g_malloc((gsize)n);
	g_assert_cmpuint(fread(all, 1, (gsize)n, f), ==, (gsize)n);
	fclose(f);
	return g_bytes_new_take(all, (gsize)n);
}

static void test_png(void)
{
	static const struct { guint w, h; gboolean has_alpha, is_interlaced; } cases[] = {
		{ 1200, 800, FALSE, FALSE }, { 800, 1200, FALSE, TRUE }, { 300, 200, FALSE, FALSE },
		{ 1201, 799, FALSE, TRUE },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GBytes) f = make_png(cases[i].w, cases[i].h, cases[i].has_alpha, cases[i].is_interlaced);
		for (gsize piece = 7; piece < (1 << 21); piece *= 97) {
			g_autoptr(PixThumb) t = make_as_hashed(f, piece, NULL);
			check_renditions_of(t, cases[i].w, cases[i].h, FALSE, "png");
		}
	}
	/* alpha laid over white: the clear right half is white */
	g_autoptr(GBytes) a = make_png(600, 400, TRUE, FALSE);
	g_autoptr(PixThumb) t = make_as_hashed(a, 4096, NULL);
	guint w, h, c;
	g_autofree guint8 *px = decode(t->jpeg[PIX_THUMB_XLARGE], &w, &h, &c);
	g_assert_cmpuint(px[((gsize)(h / 2) * w + w - 8) * c + 2], >, 240);
	/* cut: a note */
	g_autoptr(GBytes) cut = g_bytes_new_from_bytes(a, 0, g_bytes_get_size(a) / 2);
	g_autoptr(PixThumb) tc = make_as_hashed(cut, 4096, NULL);
	g_assert_nonnull(tc->note);
}

static void test_webp(void)
{
	for (guint lossless = 0; lossless < 2; lossless++) {
		guint w = 1000, h = 700;
		g_autofree guint8 *px = g_malloc((gsize)w * h * 3);
		for (guint y = 0; y < h; y++)
			for (guint x = 0; x < w; x++)
				for (guint k = 0; k < 3; k++)
					px[((gsize)y * w + x) * 3 + k] = field(x, y, w, h, k);
		guint8 *out = NULL;
		gsize n = lossless ? WebPEncodeLosslessRGB(px, (int)w, (int)h, (int)w * 3, &out)
		                   : WebPEncodeRGB(px, (int)w, (int)h, (int)w * 3, 90, &out);
		g_assert_cmpuint(n, >, 0);
		g_autoptr(GBytes) f = g_bytes_new(out, n);
		WebPFree(out);
		for (gsize piece = 5; piece < (1 << 21); piece *= 113) {
			g_autoptr(PixThumb) t = make_as_hashed(f, piece, NULL);
			check_renditions_of(t, w, h, FALSE, "webp");
		}
		g_autoptr(GBytes) cut = g_bytes_new_from_bytes(f, 0, n * 2 / 3);
		g_autoptr(PixThumb) tc = make_as_hashed(cut, 4096, NULL);
		g_assert_nonnull(tc->note);
	}
}

/* x265, the encoder behind make_heic(), leaks a few buffers per encoder
 * (not photoidx's: it only decodes); LeakSanitizer's hook for a
 * program's own suppressions (SANITIZE=1). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libx265\n";
}

/* A HEIC of w x h by libheif's encoder, with a thumbnail item of
 * `thumb_edge` px (0: none); NULL (test skipped) without an encoder. */
static GBytes *make_heic(guint w, guint h, guint thumb_edge)
{
	struct heif_context *ctx = heif_context_alloc();
	struct heif_encoder *enc = NULL;
	if (heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &enc).code != heif_error_Ok) {
		heif_context_free(ctx);
		return NULL;
	}
	heif_encoder_set_lossy_quality(enc, 80);
	struct heif_image *img = NULL;
	heif_image_create((int)w, (int)h, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &img);
	heif_image_add_plane(img, heif_channel_interleaved, (int)w, (int)h, 8);
	int stride;
	guint8 *p = heif_image_get_plane(img, heif_channel_interleaved, &stride);
	for (guint y = 0; y < h; y++)
		for (guint x = 0; x < w; x++)
			for (guint k = 0; k < 3; k++)
				p[(gsize)y * stride + 3 * x + k] = field(x, y, w, h, k);
	struct heif_image_handle *handle = NULL;
	g_assert_cmpint(heif_context_encode_image(ctx, img, enc, NULL, &handle).code, ==, heif_error_Ok);
	if (thumb_edge > 0)
		g_assert_cmpint(heif_context_encode_thumbnail(ctx, img, handle, enc, NULL, (int)thumb_edge, NULL).code, ==,
		                heif_error_Ok);
	heif_image_handle_release(handle);
	heif_image_release(img);
	heif_encoder_release(enc);
	char path[] = "/tmp/test-thumb-XXXXXX";
	int fd = g_mkstemp(path);
	close(fd);
	g_assert_cmpint(heif_context_write_to_file(ctx, path).code, ==, heif_error_Ok);
	heif_context_free(ctx);
	gchar *data;
	gsize len;
	g_assert_true(g_file_get_contents(path, &data, &len, NULL));
	unlink(path);
	return g_bytes_new_take(data, len);
}

static void test_heif(void)
{
	g_autoptr(GBytes) plain = make_heic(1024, 768, 0);
	if (plain == NULL) {
		g_test_skip("libheif has no HEVC encoder here");
		return;
	}
	g_autoptr(PixThumb) t = make_as_hashed(plain, 4096, NULL);
	check_renditions_of(t, 1024, 768, FALSE, "heif");
	/* a thumbnail item of 512 px or more serves; a smaller one does not */
	g_autoptr(GBytes) th = make_heic(1024, 768, 600);
	g_autoptr(PixThumb) t1 = make_as_hashed(th, 65536, NULL);
	check_renditions_of(t1, 600, 450, FALSE, "heif-thumbnail");
	g_autoptr(GBytes) small = make_heic(1024, 768, 320);
	g_autoptr(PixThumb) t2 = make_as_hashed(small, 65536, NULL);
	check_renditions_of(t2, 1024, 768, FALSE, "heif");
	/* absurd dimensions in 'ispe': a note, no allocation of them */
	gsize len;
	guint8 *bad = g_bytes_unref_to_data(g_bytes_ref(plain), &len);
	for (gsize i = 0; i + 12 < len; i++)
		if (memcmp(bad + i, "ispe", 4) == 0) {
			set_be32(bad + i + 8, 1000000);
			set_be32(bad + i + 12, 1000000);
		}
	g_autoptr(GBytes) huge = g_bytes_new_take(bad, len);
	g_autoptr(PixThumb) t3 = make_as_hashed(huge, 65536, NULL);
	g_assert_nonnull(t3->note);
	/* cut: a note */
	g_autoptr(GBytes) cut = g_bytes_new_from_bytes(plain, 0, g_bytes_get_size(plain) / 2);
	g_autoptr(PixThumb) t4 = make_as_hashed(cut, 4096, NULL);
	g_assert_nonnull(t4->note);
}

/* Headers that claim what no decoder should allocate: a note each,
 * before any pixel buffer (ASan's and the RSS limit's business too). */
static void test_hostile_sizes(void)
{
	/* a JPEG of 65,500 x 65,500 (libjpeg's own limit refuses 65,535) */
	g_autoptr(GBytes) j = make_jpeg(64, 64, FALSE, FALSE);
	gsize len;
	guint8 *d = g_bytes_unref_to_data(g_bytes_ref(j), &len);
	for (gsize i = 0; i + 8 < len; i++)
		if (d[i] == 0xFF && d[i + 1] == 0xC0) {
			d[i + 5] = d[i + 7] = 0xFF;
			d[i + 6] = d[i + 8] = 0xDC;
			break;
		}
	g_autoptr(GBytes) jb = g_bytes_new_take(d, len);
	g_autoptr(PixThumb) t = make_as_hashed(jb, 4096, NULL);
	g_assert_nonnull(t->note);
	if (strstr(t->note, "over the bound") == NULL)
		g_error("note: %s", t->note);
	/* a PNG of 2^31 pixels (65536 x 32768), its IHDR's CRC right */
	g_autoptr(GBytes) p = make_png(16, 16, FALSE, FALSE);
	d = g_bytes_unref_to_data(g_bytes_ref(p), &len);
	set_be32(d + 16, 65536);
	set_be32(d + 20, 32768);
	guint32 crc = 0xffffffffu;
	for (guint i = 12; i < 29; i++) {
		crc ^= d[i];
		for (guint k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	crc ^= 0xffffffffu;
	set_be32(d + 29, crc);
	g_autoptr(GBytes) pb = g_bytes_new_take(d, len);
	g_autoptr(PixThumb) tp = make_as_hashed(pb, 4096, NULL);
	g_assert_nonnull(tp->note);
	g_assert_nonnull(strstr(tp->note, "over the bound"));
	/* a WebP whose VP8L header claims 16384 x 16384 and has no data */
	static const guint8 webp[] = { 'R', 'I', 'F', 'F', 26, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'L',
		                       14, 0, 0, 0, 0x2f, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0 };
	g_autoptr(GBytes) wb = g_bytes_new_static(webp, sizeof webp);
	g_autoptr(PixThumb) tw = make_as_hashed(wb, 4096, NULL);
	g_assert_nonnull(tw->note);
}

/* The box filter: each target sample is the rounded mean of its box,
 * (sum + n/2) / n, computed here directly, for boxes of 1 to 10,000
 * samples (the multiply that replaces the division below 4,096, and the
 * division above), gray and RGB, on noise that hits every rounding. */
static void test_shrink_box_means(void)
{
	static const guint sizes[][4] = {
		{ 750, 500, 512, 341 }, { 606, 405, 512, 342 }, { 512, 341, 256, 170 }, { 97, 61, 13, 7 },
		{ 64, 64, 64, 64 }, { 4095, 2, 1, 1 }, { 2048, 2, 1, 1 }, { 5000, 2, 1, 1 }, { 3, 9000, 1, 2 },
	};
	GRand *rng = g_rand_new_with_seed(26);
	for (guint t = 0; t < G_N_ELEMENTS(sizes); t++) {
		for (guint c = 1; c <= 3; c += 2) {
			guint sw = sizes[t][0], sh = sizes[t][1], tw = sizes[t][2], th = sizes[t][3];
			g_autofree guint8 *img = g_malloc((gsize)sw * sh * c);
			for (gsize i = 0; i < (gsize)sw * sh * c; i++)
				img[i] = (guint8)g_rand_int_range(rng, 0, 256);
			ThumbShrink sh_ = { 0 };
			thumb_shrink_init_to(&sh_, sw, sh, c, tw, th);
			for (guint y = 0; y < sh; y++)
				thumb_shrink_row(&sh_, img + (gsize)y * sw * c);
			ThumbPixels out = { 0 };
			thumb_shrink_take(&sh_, &out);
			g_assert_cmpuint(out.w, ==, tw);
			g_assert_cmpuint(out.h, ==, th);
			/* the sums and counts of every box, in one pass */
			g_autofree guint64 *sum = g_new0(guint64, (gsize)tw * th * c);
			g_autofree guint64 *n = g_new0(guint64, (gsize)tw * th);
			for (guint y = 0; y < sh; y++) {
				guint ty = (guint)((guint64)y * th / sh);
				for (guint x = 0; x < sw; x++) {
					gsize b = (gsize)ty * tw + (guint)((guint64)x * tw / sw);
					n[b]++;
					for (guint k = 0; k < c; k++)
						sum[b * c + k] += img[((gsize)y * sw + x) * c + k];
				}
			}
			for (gsize b = 0; b < (gsize)tw * th; b++)
				for (guint k = 0; k < c; k++)
					g_assert_cmpuint(out.data[b * c + k], ==, (sum[b * c + k] + n[b] / 2) / n[b]);
			thumb_pixels_clear(&out);
		}
	}
	g_rand_free(rng);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/thumb/sizes", test_sizes);
	g_test_add_func("/thumb/shrink-box-means", test_shrink_box_means);
	g_test_add_func("/thumb/pieces", test_pieces);
	g_test_add_func("/thumb/truncated", test_truncated);
	g_test_add_func("/thumb/bounds", test_bounds);
	g_test_add_func("/thumb/foreign", test_foreign);
	g_test_add_func("/thumb/damage", test_damage);
	g_test_add_func("/thumb/mpf", test_mpf);
	g_test_add_func("/thumb/raw-preview", test_raw_preview);
	g_test_add_func("/thumb/raw-upright", test_raw_upright);
	g_test_add_func("/thumb/png", test_png);
	g_test_add_func("/thumb/webp", test_webp);
	g_test_add_func("/thumb/heif", test_heif);
	g_test_add_func("/thumb/hostile-sizes", test_hostile_sizes);
	return g_test_run();
}

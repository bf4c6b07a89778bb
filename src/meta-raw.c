/*
 * meta-raw.c: RAW formats that are not TIFF-based, as PixContainers (see
 * meta.h): Fujifilm RAF and Minolta MRW.
 *
 * Reads the file through the stream; writes PixMeta.  Runs on a hash
 * thread.
 *
 * RAF: a header ("FUJIFILMCCD-RAW ", versions, the camera's name) whose
 * big-endian words at 84 give the offset and length of a JPEG preview,
 * at 92 those of the RAF directory and at 100 those of the raw (CFA) data.
 * The camera's EXIF is the preview's, so the preview is read as a JPEG
 * stream (PixJpegParser), piece by piece as the read passes it, keeping
 * only what that parser keeps.  The pixel size is the preview's, as
 * exiftool's ImageWidth/ImageHeight give it (the sensor's sizes are in the
 * RAF directory, which is not read).  A file shorter than the preview or
 * the raw data it announces is truncated.
 *
 * MRW: "\0MRM", a big-endian length of the blocks that follow (the raw
 * data starts after them), then blocks of a 4-byte name ("\0PRD",
 * "\0TTW", "\0WBG", "\0RIF", "\0PAD") and a big-endian length: PRD gives
 * the image size, TTW is a TIFF block with the camera's EXIF.
 *
 * Invariants:
 *  1. The preview is asked for in pieces at increasing offsets, at most
 *     MAX_PREVIEW bytes in all; MRW blocks are asked for at strictly
 *     increasing offsets within the header, at most MAX_BLOCKS of them.
 *  2. At most MAX_TTW bytes of a TTW block are captured.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "meta.h"

#include <string.h>

#define RAF_MAGIC "FUJIFILMCCD-RAW "
#define RAF_HEADER 108          /* through the raw data's length */
#define PREVIEW_PIECE (256u << 10)
#define MAX_PREVIEW (64u << 20)

#define MRW_BLOCKS_AT 8
#define MAX_BLOCKS 64
#define MAX_TTW (4u << 20)

static guint16 be16(const guint8 *p)
{
	return (guint16)(p[0] << 8 | p[1]);
}

static guint32 be32(const guint8 *p)
{
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
}

/* --- RAF --- */

typedef struct {
	gboolean has_header;
	guint64 jpeg_off, jpeg_len;     /* the preview, as announced */
	guint64 cfa_off, cfa_len;       /* the raw data, as announced */
	guint64 fed;                    /* preview bytes fed to the parser */
	gboolean is_cut;                /* the preview ended before its length */
	PixJpegParser *jpeg;            /* (owned) */
} Raf;

static void on_preview(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Raf *r = ctx;
	(void)off;

	pix_jpeg_parser_feed(r->jpeg, data, len);
	r->fed += len;
	if (len < arg) {
		r->is_cut = TRUE;
		return;
	}
	guint64 left = MIN(r->jpeg_len, MAX_PREVIEW) - r->fed;
	if (left > 0)
		pix_stream_want(s, r->jpeg_off + r->fed, MIN(left, PREVIEW_PIECE), on_preview, r, MIN(left, PREVIEW_PIECE));
}

static void on_raf_header(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Raf *r = ctx;
	(void)arg;
	(void)off;

	if (len < RAF_HEADER) {
		pix_stream_problem(s, "truncated RAF: the file ends at byte %" G_GUINT64_FORMAT " inside the header",
		                   pix_stream_pos(s));
		return;
	}
	if (memcmp(data, RAF_MAGIC, strlen(RAF_MAGIC)) != 0)
		return;
	r->has_header = TRUE;
	r->jpeg_off = be32(data + 84);
	r->jpeg_len = be32(data + 88);
	r->cfa_off = be32(data + 100);
	r->cfa_len = be32(data + 104);
	if (r->jpeg_len == 0)
		return;
	if (r->jpeg_off < RAF_HEADER) {
		pix_stream_problem(s, "corrupt RAF: the preview's offset %" G_GUINT64_FORMAT " lies inside the header",
		                   r->jpeg_off);
		r->jpeg_len = 0;
		return;
	}
	r->jpeg = pix_jpeg_parser_new();
	guint64 n = MIN(r->jpeg_len, PREVIEW_PIECE);
	pix_stream_want(s, r->jpeg_off, n, on_preview, r, n);
}

static void *raf_start(PixStream *s)
{
	Raf *r = g_new0(Raf, 1);
	pix_stream_want(s, 0, RAF_HEADER, on_raf_header, r, 0);
	return r;
}

static void raf_finish(void *state, PixStream *s, PixMeta *m)
{
	Raf *r = state;
	guint64 size = pix_stream_pos(s);

	if (!r->has_header)
		return;
	if (r->jpeg_len > 0 && r->jpeg_off + r->jpeg_len > size)
		pix_stream_problem(s, "truncated RAF: the preview at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
		                   " bytes) runs past the end of the file (%" G_GUINT64_FORMAT " bytes)",
		                   r->jpeg_off, r->jpeg_len, size);
	else if (r->cfa_len > 0 && r->cfa_off + r->cfa_len > size)
		pix_stream_problem(s, "truncated RAF: the raw data at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
		                   " bytes) runs past the end of the file (%" G_GUINT64_FORMAT " bytes)",
		                   r->cfa_off, r->cfa_len, size);
	if (r->jpeg == NULL)
		return;

	PixJpegInfo info;
	pix_jpeg_parser_finish(r->jpeg, &info);
	if (m->width_px < 0 && m->height_px < 0 && info.width_px > 0) {
		m->width_px = info.width_px;
		m->height_px = info.height_px;
	}
	/* a cut preview is the truncation reported above */
	if (info.error != NULL && !r->is_cut && r->jpeg_len <= MAX_PREVIEW)
		pix_stream_problem(s, "corrupt RAF: the preview at offset %" G_GUINT64_FORMAT ": %s", r->jpeg_off, info.error);
	gsize exif_len = 0;
	const guint8 *app1 = info.exif != NULL ? g_bytes_get_data(info.exif, &exif_len) : NULL;
	if (exif_len > 6)   /* after its "Exif\0\0" */
		pix_meta_read_tiff(s, app1 + 6, exif_len - 6, PIX_TIFF_ROLE_MAIN, m);
	if (info.xmp != NULL) {
		gsize len;
		const guint8 *xmp = g_bytes_get_data(info.xmp, &len);
		pix_meta_read_xmp(xmp, len, m);
	}
	pix_jpeg_info_clear(&info);
}

static void raf_free(void *state)
{
	Raf *r = state;
	if (r == NULL)
		return;
	pix_jpeg_parser_free(r->jpeg);
	g_free(r);
}

const PixContainer pix_container_raf = {
	.name = "RAF",
	.keep_head = 0,
	.keep_tail = 0,
	.start = raf_start,
	.finish = raf_finish,
	.free = raf_free,
};

/* --- MRW --- */

typedef struct {
	guint64 data_off;       /* where the raw data starts (the blocks' end) */
	gboolean has_header;
	guint n_blocks;         /* headers asked for */
	gint64 width_px, height_px;     /* PRD, -1 unknown */
	GBytes *ttw;            /* the TTW block (owned), or NULL */
} Mrw;

typedef enum {
	BLOCK_PRD,
	BLOCK_TTW,
} Block;

static void on_block(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);

static void want_block(Mrw *w, PixStream *s, guint64 off)
{
	if (off + 8 > w->data_off || w->n_blocks >= MAX_BLOCKS)
		return;
	w->n_blocks++;
	pix_stream_want(s, off, 8, on_block, w, 0);
}

static void on_block_data(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Mrw *w = ctx;
	Block block = (Block)(arg & 0xff);
	gsize want = (gsize)(arg >> 8);
	(void)off;

	if (len < want)
		return;   /* cut short: the end reports the truncation */
	if (block == BLOCK_PRD) {
		guint16 h = be16(data + 12), wd = be16(data + 14);
		if (wd > 0 && h > 0) {
			w->width_px = wd;
			w->height_px = h;
		} else {
			pix_stream_problem(s, "corrupt MRW: PRD block gives a size of %ux%u", wd, h);
		}
	} else if (w->ttw == NULL) {
		w->ttw = g_bytes_new(data, len);
	}
}

static void on_block(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Mrw *w = ctx;
	(void)arg;

	if (len < 8)
		return;   /* cut short: the end reports the truncation */
	guint32 n = be32(data + 4);
	guint64 end = off + 8 + n;
	char name[4];
	for (int i = 0; i < 3; i++)
		name[i] = g_ascii_isprint(data[1 + i]) ? (char)data[1 + i] : '?';
	name[3] = '\0';
	if (end > w->data_off) {
		pix_stream_problem(s, "corrupt MRW: block '%s' at offset %" G_GUINT64_FORMAT " runs past the raw data's start (%"
		                   G_GUINT64_FORMAT ")", name, off, w->data_off);
		return;
	}
	if (memcmp(data, "\0PRD", 4) == 0) {
		if (n < 16)
			pix_stream_problem(s, "corrupt MRW: PRD block at offset %" G_GUINT64_FORMAT " has %u bytes", off, n);
		else
			pix_stream_want(s, off + 8, 16, on_block_data, w, (guint64)16 << 8 | BLOCK_PRD);
	} else if (memcmp(data, "\0TTW", 4) == 0 && w->ttw == NULL && n > 0) {
		if (n <= MAX_TTW)
			pix_stream_want(s, off + 8, n, on_block_data, w, (guint64)n << 8 | BLOCK_TTW);
		else
			pix_stream_problem(s, "MRW: TTW block at offset %" G_GUINT64_FORMAT " is larger than %u MiB (not read)",
			                   off, MAX_TTW >> 20);
	}
	want_block(w, s, end);
}

static void on_mrw_header(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Mrw *w = ctx;
	(void)arg;
	(void)off;

	if (len < 8 || memcmp(data, "\0MRM", 4) != 0)
		return;
	w->has_header = TRUE;
	w->data_off = MRW_BLOCKS_AT + (guint64)be32(data + 4);
	want_block(w, s, MRW_BLOCKS_AT);
}

static void *mrw_start(PixStream *s)
{
	Mrw *w = g_new0(Mrw, 1);
	w->width_px = -1;
	w->height_px = -1;
	pix_stream_want(s, 0, 8, on_mrw_header, w, 0);
	return w;
}

static void mrw_finish(void *state, PixStream *s, PixMeta *m)
{
	Mrw *w = state;
	guint64 size = pix_stream_pos(s);

	if (!w->has_header)
		return;
	if (w->data_off > size)
		pix_stream_problem(s, "truncated MRW: the file ends at byte %" G_GUINT64_FORMAT
		                   ", before the raw data (at %" G_GUINT64_FORMAT ")", size, w->data_off);
	if (m->width_px < 0 && m->height_px < 0 && w->width_px > 0) {
		m->width_px = w->width_px;
		m->height_px = w->height_px;
	}
	if (w->ttw != NULL) {
		gsize len;
		const guint8 *tiff = g_bytes_get_data(w->ttw, &len);
		pix_meta_read_tiff(s, tiff, len, PIX_TIFF_ROLE_MAIN, m);
	}
}

static void mrw_free(void *state)
{
	Mrw *w = state;
	if (w == NULL)
		return;
	if (w->ttw != NULL)
		g_bytes_unref(w->ttw);
	g_free(w);
}

const PixContainer pix_container_mrw = {
	.name = "MRW",
	.keep_head = 0,
	.keep_tail = 0,
	.start = mrw_start,
	.finish = mrw_finish,
	.free = mrw_free,
};

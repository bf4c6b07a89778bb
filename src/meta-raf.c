/*
 * meta-raf.c: Fujifilm RAF, as a PixContainer (see meta-int.h).
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
 * Invariants:
 *  1. The preview is asked for in pieces at increasing offsets, at most
 *     MAX_PREVIEW bytes in all.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <string.h>

#define RAF_MAGIC "FUJIFILMCCD-RAW "
#define RAF_HEADER 108          /* through the raw data's length */
#define PREVIEW_PIECE (256u << 10)
#define MAX_PREVIEW (64u << 20)

typedef struct {
	gboolean has_header;
	guint64 jpeg_off, jpeg_len;     /* the preview, as announced */
	guint64 cfa_off, cfa_len;       /* the raw data, as announced */
	guint64 fed;                    /* preview bytes fed to the parser */
	gboolean is_cut;                /* the preview ended before its length */
	PixJpegParser *jpeg;            /* (owned) */
	PixPreview preview;             /* the preview, for the thumbnail maker */
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
	r->jpeg_off = pix_be32(data + 84);
	r->jpeg_len = pix_be32(data + 88);
	r->cfa_off = pix_be32(data + 100);
	r->cfa_len = pix_be32(data + 104);
	if (r->jpeg_len == 0)
		return;
	if (r->jpeg_off < RAF_HEADER) {
		pix_stream_problem(s, "corrupt RAF: the preview's offset %" G_GUINT64_FORMAT " lies inside the header",
		                   r->jpeg_off);
		r->jpeg_len = 0;
		return;
	}
	r->jpeg = pix_jpeg_parser_new();
	r->preview = (PixPreview){ .off = r->jpeg_off, .len = r->jpeg_len, .kind = PIX_PREVIEW_RAW };
	guint64 n = MIN(r->jpeg_len, PREVIEW_PIECE);
	pix_stream_want(s, r->jpeg_off, n, on_preview, r, n);
}

static const PixPreview *raf_previews(void *state, guint *n)
{
	Raf *r = state;
	*n = r->jpeg != NULL ? 1 : 0;
	return &r->preview;
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
	.previews = raf_previews,
	.free = raf_free,
};

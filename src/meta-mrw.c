/*
 * meta-mrw.c: Minolta MRW, as a PixContainer (see meta-int.h).
 *
 * Reads the file through the stream; writes PixMeta.  Runs on a hash
 * thread.
 *
 * MRW: "\0MRM", a big-endian length of the blocks that follow (the raw
 * data starts after them), then blocks of a 4-byte name ("\0PRD",
 * "\0TTW", "\0WBG", "\0RIF", "\0PAD") and a big-endian length: PRD gives
 * the image size, TTW is a TIFF block with the camera's EXIF.
 *
 * Invariants:
 *  1. Blocks are asked for at strictly increasing offsets within the
 *     header, at most MAX_BLOCKS of them.
 *  2. At most MAX_TTW bytes of a TTW block are captured.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <string.h>

#define MRW_BLOCKS_AT 8
#define MAX_BLOCKS 64
#define MAX_TTW (4u << 20)

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
		guint16 h = pix_be16(data + 12), wd = pix_be16(data + 14);
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
	guint32 n = pix_be32(data + 4);
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
	w->data_off = MRW_BLOCKS_AT + (guint64)pix_be32(data + 4);
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

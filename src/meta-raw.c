/*
 * meta-raw.c: RAW formats that are not TIFF-based, as PixContainers (see
 * meta.h): Fujifilm RAF, Minolta MRW, Canon CRW and Sigma X3F.
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
 * CRW (Canon's CIFF, 2000-2004 cameras): "II" or "MM", the header's
 * length (26), "HEAPCCDR"; the rest of the file is the root heap.  A heap
 * ends with the offset of its directory (relative to the heap's start); a
 * directory is a 16-bit count of 10-byte records (tag, size, offset in the
 * heap).  A record whose tag has 0x4000 set holds its 8 bytes of data
 * itself; one of type 0x2800 or 0x3000 is a heap of its own.  Read, as
 * exiftool reads them: make and model (0x080a), the date (0x180e, Unix
 * seconds of the camera's clock, so shown as UTC), the size (0x1810
 * ImageInfo) and the ISO of exiftool's Composite:ISO (0x102d
 * CameraSettings' CameraISO when it is a number, else BaseISO times
 * AutoISO of 0x102a ShotInfo).  A heap's directory lies at its end, the
 * root's at the file's end, known only once the file has gone by: so the
 * walk runs at the end over the kept head and tail (KEEP_TAIL), where
 * cameras put the small heaps that hold these records (the raw data and
 * the preview come first).  Records, directories and heaps outside what
 * is kept are skipped, unread and unreported.  A CRW does not give its
 * length: a cut file shows as a root directory pointer that makes no
 * sense, or as heaps without any of the records every camera writes.
 *
 * X3F (Sigma, Foveon): "FOVb", a version, the image's columns and rows at
 * bytes 28 and 32 (40 and 44 from version 4), as exiftool's ImageWidth
 * and ImageHeight; the file's last 4 bytes give the offset of the section
 * directory ("SECd", a version, a count, then offset, length and a 4-byte
 * type per section).  The PROP section ("SECp") holds UTF-16LE name/value
 * pairs: CAMMANUF, CAMMODEL, TIME (Unix seconds of the camera's clock,
 * shown as UTC as exiftool does) and ISO.  Read at the end from the kept
 * tail, like CRW.  The EXIF of the JPEG preview that cameras after the
 * SD10 add (IMA2) is not read: its place is known only at the end.
 *
 * Invariants:
 *  1. The preview is asked for in pieces at increasing offsets, at most
 *     MAX_PREVIEW bytes in all; MRW blocks are asked for at strictly
 *     increasing offsets within the header, at most MAX_BLOCKS of them.
 *  2. At most MAX_TTW bytes of a TTW block are captured.
 *  3. A CRW record's data lies within its heap, before the heap's
 *     directory; so a heap lies strictly within its parent, and is walked
 *     only when its directory has not been walked before; at most
 *     MAX_HEAP_DEPTH deep, MAX_HEAPS heaps and MAX_RECORDS records in all.
 *  4. X3F: at most MAX_SECTIONS sections and MAX_PROPS properties are
 *     read; each name or value is read for at most MAX_PROP_CHARS
 *     characters, and lies within the PROP section.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta.h"
#include "exif.h"

#include <math.h>
#include <string.h>

#define RAF_MAGIC "FUJIFILMCCD-RAW "
#define RAF_HEADER 108          /* through the raw data's length */
#define PREVIEW_PIECE (256u << 10)
#define MAX_PREVIEW (64u << 20)

#define MRW_BLOCKS_AT 8
#define MAX_BLOCKS 64
#define MAX_TTW (4u << 20)

/* CRW and X3F: what the walk at the end can reach */
#define KEEP_HEAD 64
#define KEEP_TAIL (1u << 20)

#define CRW_HEADER 14           /* byte order, header length, "HEAPCCDR" */
#define MAX_HEAP_DEPTH 8
#define MAX_HEAPS 256
#define MAX_RECORDS 4096
#define MAX_CRW_TEXT 256        /* bytes of make and model read */

#define X3F_HEADER 40           /* what exiftool reads before the version */
#define X3F_HEADER4 48          /* through the size of version 4 */
#define MAX_SECTIONS 64
#define MAX_PROPS 1024
#define MAX_PROP_CHARS 256

/* Unix seconds of a camera's clock as date_taken (exiftool's
 * ConvertUnixTime: the clock's time, read as UTC); NULL for 0 (exiftool's
 * "0000:00:00 00:00:00") and what GDateTime cannot hold. */
static char *clock_date(gint64 secs)
{
	if (secs == 0)
		return NULL;
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc(secs);
	return t != NULL ? g_date_time_format(t, "%Y-%m-%dT%H:%M:%S") : NULL;
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

/* --- CRW --- */

typedef struct {
	gboolean is_big;
	guint64 dirs[MAX_HEAPS];        /* directories walked (file offsets) */
	guint n_heaps;
	guint n_records;
	gboolean is_over;               /* a limit was reached (and said) */
	gboolean is_skipped;            /* something lay outside what is kept */
	/* what the records gave; NULL, -1 or FALSE when absent */
	char *make, *model;             /* (owned) */
	gint64 time_s;
	gboolean has_time;
	gint64 width_px, height_px;
	gint camera_iso;                /* CameraSettings[16], raw */
	gint auto_iso, base_iso;        /* ShotInfo[1], [2], raw */
	gboolean has_camera_iso, has_shot_info;
} Crw;

static guint16 crw16(const Crw *c, const guint8 *p)
{
	return c->is_big ? pix_be16(p) : pix_le16(p);
}

static guint32 crw32(const Crw *c, const guint8 *p)
{
	return c->is_big ? pix_be32(p) : pix_le32(p);
}

static void walk_heap(Crw *c, PixStream *s, guint64 start, guint64 len, guint depth);

/* `len` bytes at `off` when kept, else NULL (and noted). */
static const guint8 *crw_peek(Crw *c, PixStream *s, guint64 off, guint64 len)
{
	const guint8 *p = pix_stream_peek(s, off, (gsize)len);
	if (p == NULL)
		c->is_skipped = TRUE;
	return p;
}

/* The data of a record we read: `need` bytes at least, of `len`. */
static const guint8 *record_data(Crw *c, PixStream *s, guint16 tag, guint64 at, guint64 len, guint64 need)
{
	if (len < need) {
		pix_stream_problem(s, "corrupt CRW: record 0x%04x has %" G_GUINT64_FORMAT " bytes at offset %" G_GUINT64_FORMAT
		                   ", fewer than %" G_GUINT64_FORMAT, tag, len, at, need);
		return NULL;
	}
	return crw_peek(c, s, at, len);
}

/* One record of the heap at `start` whose data (what precedes its
 * directory) has `len` bytes; the record's 10 bytes are at `rec` (file
 * offset `rec_at`).  Returns FALSE when the directory's walk must stop. */
static gboolean read_record(Crw *c, PixStream *s, guint64 start, guint64 len, guint depth, const guint8 *rec,
                            guint64 rec_at)
{
	guint16 tag = crw16(c, rec);
	guint32 size = crw32(c, rec + 2), off = crw32(c, rec + 6);
	guint id = tag & 0x3fff, type = (tag >> 8) & 0x38;

	if (tag & 0x8000) {
		pix_stream_problem(s, "corrupt CRW: record at offset %" G_GUINT64_FORMAT " has a bad tag 0x%04x", rec_at, tag);
		return FALSE;
	}
	guint64 at = rec_at + 2, data_len = 8;   /* the record's own 8 bytes */
	if (!(tag & 0x4000)) {
		if (off > len || size > len - off) {
			pix_stream_problem(s, "corrupt CRW: record 0x%04x at offset %" G_GUINT64_FORMAT " points outside its heap's"
			                   " data (%u bytes at %u of %" G_GUINT64_FORMAT ")", tag, rec_at, size, off, len);
			return TRUE;
		}
		at = start + off;
		data_len = size;
		if (type == 0x28 || type == 0x30) {
			walk_heap(c, s, at, data_len, depth + 1);
			return !c->is_over;
		}
	}
	const guint8 *d;
	switch (id) {
	case 0x080a:    /* make (6 bytes, "Canon\0") and model */
		if ((d = record_data(c, s, tag, at, MIN(data_len, MAX_CRW_TEXT), 6)) != NULL && c->make == NULL) {
			c->make = pix_exif_text(d, 6);
			c->model = pix_exif_text(d + 6, MIN(data_len, MAX_CRW_TEXT) - 6);
		}
		break;
	case 0x180e:    /* TimeStamp: seconds, time zone code, info */
		if ((d = record_data(c, s, tag, at, MIN(data_len, 4), 4)) != NULL && !c->has_time) {
			c->time_s = crw32(c, d);
			c->has_time = TRUE;
		}
		break;
	case 0x1810:    /* ImageInfo: width, height, aspect, rotation ... */
		if ((d = record_data(c, s, tag, at, MIN(data_len, 8), 8)) != NULL && c->width_px < 0) {
			c->width_px = crw32(c, d);
			c->height_px = crw32(c, d + 4);
		}
		break;
	case 0x102a:    /* ShotInfo: int16s [1] AutoISO, [2] BaseISO */
		if ((d = record_data(c, s, tag, at, MIN(data_len, 6), 6)) != NULL && !c->has_shot_info) {
			c->auto_iso = (gint16)crw16(c, d + 2);
			c->base_iso = (gint16)crw16(c, d + 4);
			c->has_shot_info = TRUE;
		}
		break;
	case 0x102d:    /* CameraSettings: int16s [16] CameraISO */
		if ((d = record_data(c, s, tag, at, MIN(data_len, 34), 34)) != NULL && !c->has_camera_iso) {
			c->camera_iso = (gint16)crw16(c, d + 32);
			c->has_camera_iso = TRUE;
		}
		break;
	default:
		break;
	}
	return TRUE;
}

/* Walks the heap [start, start + len): its directory, then each record. */
static void walk_heap(Crw *c, PixStream *s, guint64 start, guint64 len, guint depth)
{
	if (depth >= MAX_HEAP_DEPTH) {
		pix_stream_problem(s, "corrupt CRW: heaps nested deeper than %u (at offset %" G_GUINT64_FORMAT ")",
		                   MAX_HEAP_DEPTH, start);
		return;
	}
	if (len < 6) {
		pix_stream_problem(s, "corrupt CRW: the heap at offset %" G_GUINT64_FORMAT " has %" G_GUINT64_FORMAT " bytes",
		                   start, len);
		return;
	}
	const guint8 *p = crw_peek(c, s, start + len - 4, 4);
	if (p == NULL)
		return;
	guint64 end = start + len - 4;  /* the directory's offset is the rest */
	guint64 dir = start + crw32(c, p);
	if (dir + 2 > end) {
		pix_stream_problem(s, "corrupt CRW: the heap at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
		                   " bytes) has its directory outside it, at offset %" G_GUINT64_FORMAT, start, len, dir);
		return;
	}
	for (guint i = 0; i < c->n_heaps; i++) {
		if (c->dirs[i] == dir) {
			pix_stream_problem(s, "corrupt CRW: the heap at offset %" G_GUINT64_FORMAT " has the directory at offset %"
			                   G_GUINT64_FORMAT " that another heap has", start, dir);
			return;
		}
	}
	if (c->n_heaps >= MAX_HEAPS) {
		pix_stream_problem(s, "corrupt CRW: more than %u heaps", MAX_HEAPS);
		c->is_over = TRUE;
		return;
	}
	c->dirs[c->n_heaps++] = dir;
	if ((p = crw_peek(c, s, dir, 2)) == NULL)
		return;
	guint n = crw16(c, p);
	if (dir + 2 + 10 * (guint64)n > end) {
		pix_stream_problem(s, "corrupt CRW: the directory at offset %" G_GUINT64_FORMAT " holds %u records, more than"
		                   " its heap has room for", dir, n);
		return;
	}
	const guint8 *recs = crw_peek(c, s, dir + 2, 10 * (guint64)n);
	for (guint i = 0; recs != NULL && i < n; i++) {
		if (c->n_records >= MAX_RECORDS) {
			pix_stream_problem(s, "corrupt CRW: more than %u records", MAX_RECORDS);
			c->is_over = TRUE;
			return;
		}
		c->n_records++;
		if (!read_record(c, s, start, dir - start, depth, recs + 10 * i, dir + 2 + 10 * (guint64)i))
			return;
	}
}

/* exiftool's Composite:ISO: CameraISO when it is a number, else BaseISO
 * times AutoISO over 100 (both from ShotInfo); rounded as exiftool prints
 * it.  -1 when neither is there. */
static gint64 crw_iso(const Crw *c)
{
	if (c->has_camera_iso && c->camera_iso != 0x7fff) {
		/* exiftool masks the value as Perl does, negative ones as unsigned */
		guint64 v = (guint64)(gint64)c->camera_iso;
		static const gint64 codes[] = { 50, 100, 200, 400, 800 };   /* codes 16-20 */
		if (v & 0x4000) {
			if ((v & 0x3fff) != 0)
				return (gint64)(v & 0x3fff);
		} else if (v >= 16 && v <= 20) {
			return codes[v - 16];
		}
	}
	if (c->has_shot_info && c->base_iso != 0) {
		double base = exp2(c->base_iso / 32.0) * 100 / 32, autoiso = exp2(c->auto_iso / 32.0) * 100;
		double iso = round(base * autoiso / 100);
		if (iso >= 1 && iso < 1e9)
			return (gint64)iso;
	}
	return -1;
}

static void *crw_start(PixStream *s)
{
	(void)s;
	Crw *c = g_new0(Crw, 1);
	c->width_px = -1;
	c->height_px = -1;
	return c;
}

static void crw_finish(void *state, PixStream *s, PixMeta *m)
{
	Crw *c = state;
	guint64 size = pix_stream_pos(s);

	const guint8 *h = pix_stream_peek(s, 0, MIN(size, CRW_HEADER));
	if (h == NULL || size < 2 || (memcmp(h, "II", 2) != 0 && memcmp(h, "MM", 2) != 0))
		return;
	if (size < CRW_HEADER) {
		pix_stream_problem(s, "truncated CRW: the file ends at byte %" G_GUINT64_FORMAT " inside the header", size);
		return;
	}
	if (memcmp(h + 6, "HEAPCCDR", 8) != 0 && memcmp(h + 6, "HEAPJPGM", 8) != 0)
		return;
	c->is_big = h[0] == 'M';
	guint32 header_len = crw32(c, h + 2);
	if (header_len < CRW_HEADER) {
		pix_stream_problem(s, "corrupt CRW: a header length of %u", header_len);
		return;
	}
	if (header_len >= size) {
		pix_stream_problem(s, "truncated CRW: the file ends at byte %" G_GUINT64_FORMAT ", before its heap (at %u)",
		                   size, header_len);
		return;
	}
	walk_heap(c, s, header_len, size - header_len, 0);
	/* every camera writes them: without them (and other damage found)
	 * the directory's offset is garbage, as where the file was cut */
	g_autofree char *problems = pix_stream_problems(s);
	if (c->make == NULL && c->model == NULL && !c->has_time && c->width_px < 0 && !c->has_shot_info &&
	    !c->has_camera_iso && !c->is_skipped && problems == NULL)
		pix_stream_problem(s, "corrupt CRW: no make, model, date or image size in its %u records (truncated?)",
		                   c->n_records);

	pix_exif_set_string(&m->make, g_steal_pointer(&c->make));
	pix_exif_set_string(&m->model, g_steal_pointer(&c->model));
	if (m->date_taken == NULL && c->has_time && (m->date_taken = clock_date(c->time_s)) != NULL)
		m->date_source = "CRW TimeStamp";
	if (m->width_px < 0 && m->height_px < 0 && c->width_px > 0 && c->height_px > 0) {
		m->width_px = c->width_px;
		m->height_px = c->height_px;
	}
	if (m->iso < 0)
		m->iso = crw_iso(c);
}

static void crw_free(void *state)
{
	Crw *c = state;
	if (c == NULL)
		return;
	g_free(c->make);
	g_free(c->model);
	g_free(c);
}

const PixContainer pix_container_crw = {
	.name = "CRW",
	.keep_head = KEEP_HEAD,
	.keep_tail = KEEP_TAIL,
	.start = crw_start,
	.finish = crw_finish,
	.free = crw_free,
};

/* --- X3F --- */

typedef struct {
	gboolean has_prop;      /* a PROP section was read */
} X3f;

/* Whether the characters at `chars[at]` (of `n`) are the ASCII `name`,
 * ended by a NUL or the end. */
static gboolean prop_is(const guint8 *chars, guint64 n, guint64 at, const char *name)
{
	gsize len = strlen(name);
	if (at + len > n)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (pix_le16(chars + 2 * (at + i)) != (guint8)name[i])
			return FALSE;
	}
	return at + len == n || pix_le16(chars + 2 * (at + len)) == 0;
}

/* The string at `chars[at]` (of `n`), to its NUL or the end, at most
 * MAX_PROP_CHARS characters, as trimmed UTF-8; NULL when empty or not
 * UTF-16 (transfer full). */
static char *prop_text(const guint8 *chars, guint64 n, guint64 at)
{
	gunichar2 u[MAX_PROP_CHARS];
	glong len = 0;
	while (at + (guint64)len < n && len < MAX_PROP_CHARS && (u[len] = pix_le16(chars + 2 * (at + (guint64)len))) != 0)
		len++;
	g_autofree char *t = g_utf16_to_utf8(u, len, NULL, NULL, NULL);
	if (t == NULL)
		return NULL;
	g_strstrip(t);
	return t[0] != '\0' ? g_steal_pointer(&t) : NULL;
}

/* A number property (exiftool's -n value is the text), NAN when the text
 * does not start with one. */
static double prop_number(const char *text)
{
	char *end;
	double v = text != NULL ? g_ascii_strtod(text, &end) : NAN;
	return text != NULL && end != text && isfinite(v) ? v : NAN;
}

/* The PROP section of `len` bytes at `off`. */
static void read_prop(PixStream *s, guint64 off, guint64 len, PixMeta *m)
{
	const guint8 *p = pix_stream_peek(s, off, (gsize)MIN(len, G_MAXSIZE));
	if (p == NULL)
		return;   /* not kept */
	if (len < 24 || memcmp(p, "SECp", 4) != 0) {
		pix_stream_problem(s, "corrupt X3F: the PROP section at offset %" G_GUINT64_FORMAT " has no 'SECp' header",
		                   off);
		return;
	}
	guint32 n = pix_le32(p + 8), format = pix_le32(p + 12), n_chars = pix_le32(p + 20);
	/* exiftool's check, which counts the characters as bytes */
	if (24 + 8 * (guint64)n + n_chars > len) {
		pix_stream_problem(s, "corrupt X3F: the PROP section at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
		                   " bytes) announces %u properties and %u characters", off, len, n, n_chars);
		return;
	}
	if (format != 0) {
		pix_stream_problem(s, "X3F: the PROP section at offset %" G_GUINT64_FORMAT " has characters of format %u"
		                   " (not read)", off, format);
		return;
	}
	guint64 chars_at = 24 + 8 * (guint64)n;
	guint64 have = MIN(n_chars, (len - chars_at) / 2);
	const guint8 *chars = p + chars_at;
	if (n > MAX_PROPS) {
		pix_stream_problem(s, "corrupt X3F: the PROP section at offset %" G_GUINT64_FORMAT " holds %u properties,"
		                   " more than %u (the rest not read)", off, n, MAX_PROPS);
		n = MAX_PROPS;
	}
	for (guint32 i = 0; i < n; i++) {
		guint32 name = pix_le32(p + 24 + 8 * i), value = pix_le32(p + 28 + 8 * i);
		if (name >= have || value >= have) {
			pix_stream_problem(s, "corrupt X3F: property %u of the PROP section at offset %" G_GUINT64_FORMAT
			                   " points past its %" G_GUINT64_FORMAT " characters", i, off, have);
			return;
		}
		if (prop_is(chars, have, name, "CAMMANUF")) {
			pix_exif_set_string(&m->make, prop_text(chars, have, value));
		} else if (prop_is(chars, have, name, "CAMMODEL")) {
			pix_exif_set_string(&m->model, prop_text(chars, have, value));
		} else if (prop_is(chars, have, name, "TIME") && m->date_taken == NULL) {
			g_autofree char *t = prop_text(chars, have, value);
			double secs = prop_number(t);
			/* exiftool's int($time + 1e-6), here for the years 1970-9999 */
			if (secs >= 1 && secs < 253402300800.0 && (m->date_taken = clock_date((gint64)(secs + 1e-6))) != NULL)
				m->date_source = "X3F TIME";
		} else if (prop_is(chars, have, name, "ISO") && m->iso < 0) {
			g_autofree char *t = prop_text(chars, have, value);
			double iso = round(prop_number(t));
			if (iso >= 1 && iso < 1e9)
				m->iso = (gint64)iso;
		}
	}
}

static void *x3f_start(PixStream *s)
{
	(void)s;
	return g_new0(X3f, 1);
}

static void x3f_finish(void *state, PixStream *s, PixMeta *m)
{
	X3f *x = state;
	guint64 size = pix_stream_pos(s);

	const guint8 *h = pix_stream_peek(s, 0, (gsize)MIN(size, X3F_HEADER4));
	if (h == NULL || size < 4 || memcmp(h, "FOVb", 4) != 0)
		return;
	if (size < X3F_HEADER) {
		pix_stream_problem(s, "truncated X3F: the file ends at byte %" G_GUINT64_FORMAT " inside the header", size);
		return;
	}
	/* version 4 (Quattro) moved the size */
	gboolean is_v4 = pix_le32(h + 4) >> 16 >= 4;
	gsize size_at = is_v4 ? 40 : 28;
	if (size_at + 8 <= size && m->width_px < 0 && m->height_px < 0 && pix_le32(h + size_at) > 0 &&
	    pix_le32(h + size_at + 4) > 0) {
		m->width_px = pix_le32(h + size_at);
		m->height_px = pix_le32(h + size_at + 4);
	}

	const guint8 *p = pix_stream_peek(s, size - 4, 4);
	if (p == NULL)
		return;
	guint64 dir = pix_le32(p), end = size - 4;
	if (dir + 12 > end) {
		pix_stream_problem(s, "corrupt X3F: the directory's offset %" G_GUINT64_FORMAT " (in the last 4 bytes) lies"
		                   " past the end of the file (%" G_GUINT64_FORMAT " bytes)", dir, size);
		return;
	}
	if ((p = pix_stream_peek(s, dir, 12)) == NULL)
		return;   /* not kept */
	if (memcmp(p, "SECd", 4) != 0) {
		pix_stream_problem(s, "corrupt X3F: no directory ('SECd') at offset %" G_GUINT64_FORMAT, dir);
		return;
	}
	guint32 n = pix_le32(p + 8);
	if (dir + 12 + 12 * (guint64)n > end) {
		pix_stream_problem(s, "corrupt X3F: the directory at offset %" G_GUINT64_FORMAT " holds %u sections, past"
		                   " the end of the file", dir, n);
		return;
	}
	if (n > MAX_SECTIONS) {
		pix_stream_problem(s, "corrupt X3F: the directory at offset %" G_GUINT64_FORMAT " holds %u sections, more"
		                   " than %u (the rest not read)", dir, n, MAX_SECTIONS);
		n = MAX_SECTIONS;
	}
	const guint8 *e = pix_stream_peek(s, dir + 12, 12 * (gsize)n);
	for (guint32 i = 0; e != NULL && i < n; i++, e += 12) {
		guint64 off = pix_le32(e), len = pix_le32(e + 4);
		char name[5];
		for (int k = 0; k < 4; k++)
			name[k] = g_ascii_isprint(e[8 + k]) ? (char)e[8 + k] : '?';
		name[4] = '\0';
		if (off + len > size) {
			pix_stream_problem(s, "corrupt X3F: section '%s' at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
			                   " bytes) runs past the end of the file (%" G_GUINT64_FORMAT " bytes)", name, off, len,
			                   size);
			continue;
		}
		if (memcmp(e + 8, "PROP", 4) == 0 && !x->has_prop) {
			x->has_prop = TRUE;
			read_prop(s, off, len, m);
		}
	}
}

static void x3f_free(void *state)
{
	g_free(state);
}

const PixContainer pix_container_x3f = {
	.name = "X3F",
	.keep_head = KEEP_HEAD,
	.keep_tail = KEEP_TAIL,
	.start = x3f_start,
	.finish = x3f_finish,
	.free = x3f_free,
};

/*
 * meta-crw.c: Canon CRW (CIFF), as a PixContainer (see meta-int.h).
 *
 * Reads the file through the stream; writes PixMeta.  Runs on a hash
 * thread.
 *
 * Canon's CIFF (2000-2004 cameras): "II" or "MM", the header's
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
 * Invariants:
 *  1. A record's data lies within its heap, before the heap's directory;
 *     so a heap lies strictly within its parent, and is walked only when
 *     its directory has not been walked before; at most MAX_HEAP_DEPTH
 *     deep, MAX_HEAPS heaps and MAX_RECORDS records in all.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <math.h>
#include <string.h>

/* what the walk at the end can reach */
#define KEEP_HEAD 64
#define KEEP_TAIL (1u << 20)

#define CRW_HEADER 14           /* byte order, header length, "HEAPCCDR" */
#define MAX_HEAP_DEPTH 8
#define MAX_HEAPS 256
#define MAX_RECORDS 4096
#define MAX_CRW_TEXT 256        /* bytes of make and model read */

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
			c->make = pix_meta_text(d, 6);
			c->model = pix_meta_text(d + 6, MIN(data_len, MAX_CRW_TEXT) - 6);
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

	pix_meta_set_string(&m->make, g_steal_pointer(&c->make));
	pix_meta_set_string(&m->model, g_steal_pointer(&c->model));
	if (m->date_taken == NULL && c->has_time && (m->date_taken = pix_meta_clock_date(c->time_s)) != NULL)
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

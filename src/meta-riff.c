/*
 * meta-riff.c: RIFF files as a PixContainer (see meta.h): WebP images and
 * AVI videos.
 *
 * Reads the file's chunks through the stream; writes PixMeta.  Runs on a
 * hash thread.
 *
 * A RIFF file is a chunk "RIFF" (4-byte little-endian size, 4-byte form
 * type) holding chunks of an id, a size and data padded to an even length;
 * a "LIST" chunk holds a list type and chunks of its own.  The walk asks
 * for each chunk header as the read reaches it, descends into the lists
 * that hold metadata and skips the rest (an AVI's 'movi' list, one chunk
 * per frame, is never walked).
 *  - WebP: the pixel size from VP8X (the canvas), else from the VP8 or
 *    VP8L bitstream header; the 'EXIF' chunk (a TIFF block, after an
 *    "Exif\0\0" header with some writers) and the 'XMP ' chunk.
 *  - AVI: 'avih' in 'hdrl' (frame period, frame count, size), each stream's
 *    'strh' and 'strf' in 'strl' (the first video stream's rate, length
 *    and frame size) and the 'IDIT' date.  The duration follows exiftool:
 *    frames times period from avih, unless that is 1.9 to 3.1 times the
 *    first video stream's length / rate (avih counting the frames of
 *    several tracks): then the stream's.  The size is the first video stream's
 *    BITMAPINFOHEADER's, else avih's.  A file larger than 1 GiB continues
 *    in further "RIFF" 'AVIX' chunks, which are only checked for
 *    truncation.
 *
 * EXIF and XMP are kept (the first of each) and decoded at the end, after
 * the container's own size is known, which takes precedence.
 *
 * Invariants:
 *  1. A chunk lies within its list: one that claims to run past it is
 *     recorded as a problem and the walk goes on after that list.  Headers
 *     are asked for at strictly increasing offsets (a chunk occupies at
 *     least 8 bytes), at most MAX_CHUNKS of them, and lists nest at most
 *     MAX_DEPTH deep: the walk always ends.
 *  2. At most MAX_BLOCK bytes of any chunk are captured.
 *  3. A file shorter than its RIFF chunks claim is recorded as truncated
 *     once, at the end.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <math.h>
#include <string.h>

#define MAX_DEPTH 8
#define MAX_CHUNKS 60000       /* an animated WebP has a chunk per frame */
#define MAX_BLOCK (4u << 20)    /* an EXIF or XMP chunk */
#define HEADER_WANT 12          /* id, size, and a list's type */

#define FOURCC(a, b, c, d) ((guint32)(a) | (guint32)(b) << 8 | (guint32)(c) << 16 | (guint32)(d) << 24)
#define ID_RIFF FOURCC('R', 'I', 'F', 'F')
#define ID_LIST FOURCC('L', 'I', 'S', 'T')

typedef enum {
	FORM_WEBP,
	FORM_AVI,
	FORM_OTHER,
} Form;

/* What a payload callback is given to read (its `arg`). */
typedef enum {
	PART_VP8X,
	PART_VP8,
	PART_VP8L,
	PART_EXIF,
	PART_XMP,
	PART_AVIH,
	PART_STRH,
	PART_STRF,
	PART_IDIT,
} Part;

/* A list being walked. */
typedef struct {
	guint64 end;            /* offset after its last byte */
	guint64 next;           /* where its parent's next chunk starts (end, padded) */
	guint32 type;
} Level;

typedef struct {
	Form form;
	const char *name;       /* "WebP", "AVI", "RIFF", for messages */
	Level levels[MAX_DEPTH];
	guint depth;            /* levels open; 0 between top-level chunks */
	guint n_chunks;         /* headers asked for */
	guint64 claimed_end;    /* the end of the last top-level RIFF chunk */

	/* WebP */
	gint64 canvas_w, canvas_h;      /* VP8X, -1 unknown */
	gint64 bitstream_w, bitstream_h; /* VP8 / VP8L, -1 unknown */
	GBytes *exif;           /* TIFF block (owned), or NULL */
	GBytes *xmp;            /* XMP packet (owned), or NULL */

	/* AVI */
	gboolean has_avih;
	guint32 us_per_frame, total_frames, avih_w, avih_h;
	guint n_streams;        /* strh chunks read */
	guint32 stream_type;    /* of the stream whose strl is being read */
	gint video_stream;      /* index of the first video stream, -1 none */
	guint32 v_scale, v_rate, v_length;
	gint64 video_w, video_h; /* first video stream's strf, -1 unknown */
	char *idit;             /* the IDIT text (owned), or NULL */
} Riff;

static void id_text(const guint8 *id, char out[5])
{
	for (int i = 0; i < 4; i++)
		out[i] = g_ascii_isprint(id[i]) ? (char)id[i] : '?';
	out[4] = '\0';
}

static void on_chunk(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);
static void on_top(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);

/* Asks for the chunk header at `off`, closing the lists it is past. */
static void walk(Riff *r, PixStream *s, guint64 off)
{
	while (r->depth > 0 && (off >= r->levels[r->depth - 1].end || r->levels[r->depth - 1].end - off < 8)) {
		off = r->levels[r->depth - 1].next;
		r->depth--;
	}
	if (r->n_chunks >= MAX_CHUNKS)
		return;
	r->n_chunks++;
	if (r->depth > 0)
		pix_stream_want(s, off, HEADER_WANT, on_chunk, r, 0);
	else if (r->form == FORM_AVI)
		pix_stream_want(s, off, HEADER_WANT, on_top, r, 0);
}

static void *riff_start(PixStream *s)
{
	Riff *r = g_new0(Riff, 1);
	r->form = FORM_OTHER;
	r->name = "RIFF";
	r->canvas_w = r->canvas_h = -1;
	r->bitstream_w = r->bitstream_h = -1;
	r->video_stream = -1;
	r->video_w = r->video_h = -1;
	r->n_chunks = 1;
	pix_stream_want(s, 0, HEADER_WANT, on_top, r, 0);
	return r;
}

/* A top-level chunk: the first "RIFF" chunk (its form type says which
 * format), then an AVI's 'AVIX' extensions. */
static void on_top(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Riff *r = ctx;
	(void)arg;

	if (len < 8 || pix_le32(data) != ID_RIFF)
		return;   /* the end, or trailing bytes */
	guint32 size = pix_le32(data + 4);
	guint64 end = off + 8 + size;
	if (off == 0) {
		if (len < HEADER_WANT)
			return;
		if (memcmp(data + 8, "WEBP", 4) == 0) {
			r->form = FORM_WEBP;
			r->name = "WebP";
		} else if (memcmp(data + 8, "AVI ", 4) == 0) {
			r->form = FORM_AVI;
			r->name = "AVI";
		} else {
			return;
		}
	} else if (len >= HEADER_WANT && memcmp(data + 8, "AVIX", 4) != 0) {
		return;   /* not an extension (a cut one is judged by its size) */
	}
	if (size < 4) {
		pix_stream_problem(s, "corrupt %s: RIFF chunk at offset %" G_GUINT64_FORMAT " has a size of %u",
		                   r->name, off, size);
		return;
	}
	r->claimed_end = end;
	if (off > 0) {
		walk(r, s, end + (size & 1));   /* an AVIX's content is image data */
		return;
	}
	r->levels[0] = (Level){ .end = end, .next = end + (size & 1), .type = pix_le32(data + 8) };
	r->depth = 1;
	walk(r, s, off + 12);
}

/* Keeps the first EXIF block, without an "Exif\0\0" header. */
static void keep_exif(Riff *r, const guint8 *data, gsize len)
{
	if (len >= 6 && memcmp(data, "Exif\0\0", 6) == 0) {
		data += 6;
		len -= 6;
	}
	if (r->exif == NULL && len > 0)
		r->exif = g_bytes_new(data, len);
}

static void on_part(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Riff *r = ctx;
	Part part = (Part)(arg & 0xff);
	gsize want = (gsize)(arg >> 8);

	if (len < want)
		return;   /* cut short: reported as a truncation at the end */
	switch (part) {
	case PART_VP8X:
		r->canvas_w = 1 + (gint64)pix_le24(data + 4);
		r->canvas_h = 1 + (gint64)pix_le24(data + 7);
		break;
	case PART_VP8:
		/* a key frame: 3-byte frame tag, start code, 14-bit sizes */
		if ((data[0] & 1) != 0 || memcmp(data + 3, "\x9d\x01\x2a", 3) != 0) {
			pix_stream_problem(s, "corrupt WebP: the VP8 bitstream at offset %" G_GUINT64_FORMAT
			                   " does not start with a key frame", off);
			break;
		}
		r->bitstream_w = pix_le16(data + 6) & 0x3fff;
		r->bitstream_h = pix_le16(data + 8) & 0x3fff;
		break;
	case PART_VP8L:
		if (data[0] != 0x2f) {
			pix_stream_problem(s, "corrupt WebP: the VP8L bitstream at offset %" G_GUINT64_FORMAT
			                   " has no signature", off);
			break;
		}
		r->bitstream_w = 1 + (gint64)(pix_le32(data + 1) & 0x3fff);
		r->bitstream_h = 1 + (gint64)(pix_le32(data + 1) >> 14 & 0x3fff);
		break;
	case PART_EXIF:
		keep_exif(r, data, len);
		break;
	case PART_XMP:
		if (r->xmp == NULL)
			r->xmp = g_bytes_new(data, len);
		break;
	case PART_AVIH:
		if (!r->has_avih) {
			r->has_avih = TRUE;
			r->us_per_frame = pix_le32(data);
			r->total_frames = pix_le32(data + 16);
			r->avih_w = pix_le32(data + 32);
			r->avih_h = pix_le32(data + 36);
		}
		break;
	case PART_STRH:
		r->stream_type = pix_le32(data);
		if (r->stream_type == FOURCC('v', 'i', 'd', 's') && r->video_stream < 0) {
			r->video_stream = (gint)r->n_streams;
			r->v_scale = pix_le32(data + 20);
			r->v_rate = pix_le32(data + 24);
			r->v_length = pix_le32(data + 32);
		}
		r->n_streams++;
		break;
	case PART_STRF:
		/* BITMAPINFOHEADER: header size, width, height (negative when
		 * the rows run top down) */
		if (r->video_w < 0) {
			gint32 h = (gint32)pix_le32(data + 8);
			r->video_w = pix_le32(data + 4);
			r->video_h = h < 0 ? -(gint64)h : h;
		}
		break;
	case PART_IDIT:
		if (r->idit == NULL)
			r->idit = g_strndup((const char *)data, len);
		break;
	}
}

/* Asks for `part`'s first `n` bytes at `off` (all `size` when n is 0); a
 * part shorter than `min` bytes is corrupt. */
static void want_part(Riff *r, PixStream *s, const char *id, guint64 off, guint32 size, Part part, gsize n, gsize min)
{
	if (size < min) {
		pix_stream_problem(s, "corrupt %s: '%s' chunk at offset %" G_GUINT64_FORMAT " has %u bytes, fewer than %"
		                   G_GSIZE_FORMAT, r->name, id, off - 8, size, min);
		return;
	}
	if (n == 0) {
		if (size > MAX_BLOCK) {
			pix_stream_problem(s, "%s: '%s' chunk at offset %" G_GUINT64_FORMAT " is larger than %u MiB (not read)",
			                   r->name, id, off - 8, MAX_BLOCK >> 20);
			return;
		}
		n = size;
	}
	n = MIN(n, size);
	if (n > 0)
		pix_stream_want(s, off, n, on_part, r, (guint64)n << 8 | part);
}

/* A chunk's data at `off`, `size` bytes, in the list of type `list`. */
static void chunk(Riff *r, PixStream *s, const guint8 *idb, guint32 list, guint64 off, guint32 size)
{
	char id[5];
	id_text(idb, id);
	guint32 v = pix_le32(idb);

	if (r->form == FORM_WEBP) {
		if (r->depth != 1)
			return;
		if (v == FOURCC('V', 'P', '8', 'X'))
			want_part(r, s, id, off, size, PART_VP8X, 10, 10);
		else if (v == FOURCC('V', 'P', '8', ' '))
			want_part(r, s, id, off, size, PART_VP8, 10, 10);
		else if (v == FOURCC('V', 'P', '8', 'L'))
			want_part(r, s, id, off, size, PART_VP8L, 5, 5);
		else if (v == FOURCC('E', 'X', 'I', 'F') && r->exif == NULL)
			want_part(r, s, id, off, size, PART_EXIF, 0, 0);
		else if ((v == FOURCC('X', 'M', 'P', ' ') || v == FOURCC('X', 'M', 'P', '\0')) && r->xmp == NULL)
			want_part(r, s, id, off, size, PART_XMP, 0, 0);
		return;
	}
	if (r->form != FORM_AVI)
		return;
	if (v == FOURCC('I', 'D', 'I', 'T') && r->idit == NULL)
		want_part(r, s, id, off, size, PART_IDIT, 64, 0);
	else if (list == FOURCC('h', 'd', 'r', 'l') && v == FOURCC('a', 'v', 'i', 'h'))
		want_part(r, s, id, off, size, PART_AVIH, 40, 40);
	else if (list == FOURCC('s', 't', 'r', 'l') && v == FOURCC('s', 't', 'r', 'h'))
		want_part(r, s, id, off, size, PART_STRH, 36, 36);
	else if (list == FOURCC('s', 't', 'r', 'l') && v == FOURCC('s', 't', 'r', 'f') && r->video_w < 0 &&
	         r->stream_type == FOURCC('v', 'i', 'd', 's') && r->video_stream >= 0 &&
	         (guint)r->video_stream + 1 == r->n_streams)
		want_part(r, s, id, off, size, PART_STRF, 12, 12);
}

/* The lists an AVI's metadata is in. */
static gboolean is_walked_list(const Riff *r, guint32 type)
{
	return r->form == FORM_AVI && (type == FOURCC('h', 'd', 'r', 'l') || type == FOURCC('s', 't', 'r', 'l'));
}

static void on_chunk(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Riff *r = ctx;
	(void)arg;

	if (len < 8 || r->depth == 0)
		return;   /* cut short: reported as a truncation at the end */
	const Level *parent = &r->levels[r->depth - 1];
	guint32 size = pix_le32(data + 4);
	guint64 end = off + 8 + size, next = end + (size & 1);
	char id[5];
	id_text(data, id);

	if (end > parent->end) {
		char list[5];
		const guint8 t[4] = { parent->type & 0xff, parent->type >> 8 & 0xff, parent->type >> 16 & 0xff,
		                      parent->type >> 24 };
		id_text(t, list);
		pix_stream_problem(s, "corrupt %s: '%s' chunk at offset %" G_GUINT64_FORMAT " runs %" G_GUINT64_FORMAT
		                   " bytes past the end of %s '%s'", r->name, id, off, end - parent->end,
		                   r->depth == 1 ? "RIFF" : "LIST", list);
		walk(r, s, parent->end);
		return;
	}
	if (pix_le32(data) == ID_LIST) {
		if (size < 4) {
			pix_stream_problem(s, "corrupt %s: LIST chunk at offset %" G_GUINT64_FORMAT " has a size of %u",
			                   r->name, off, size);
			walk(r, s, next);
			return;
		}
		if (len < 12)
			return;
		guint32 type = pix_le32(data + 8);
		if (is_walked_list(r, type)) {
			if (r->depth >= MAX_DEPTH) {
				pix_stream_problem(s, "corrupt %s: lists nested deeper than %d at offset %" G_GUINT64_FORMAT,
				                   r->name, MAX_DEPTH, off);
				walk(r, s, next);
				return;
			}
			r->levels[r->depth++] = (Level){ .end = end, .next = next, .type = type };
			walk(r, s, off + 12);
			return;
		}
		walk(r, s, next);
		return;
	}
	chunk(r, s, data, parent->type, off + 8, size);
	walk(r, s, next);
}

/* The numbers in `text` (at most `max`, each cut at 6 digits) into v;
 * returns how many. */
static guint numbers(const char *text, int *v, guint max)
{
	guint n = 0;
	for (const char *p = text; *p != '\0' && n < max;) {
		if (!g_ascii_isdigit(*p)) {
			p++;
			continue;
		}
		int x = 0;
		for (int digits = 0; g_ascii_isdigit(*p); p++, digits++) {
			if (digits < 6)
				x = x * 10 + (*p - '0');
		}
		v[n++] = x;
	}
	return n;
}

/*
 * An AVI date as "YYYY:MM:DD HH:MM:SS" (transfer full), or NULL: the
 * standard "Mon Mar 10 15:04:43 2003", or the year-first forms cameras
 * write instead ("2001/ 1/27  1:42PM", "2005/11/28/ 09:19",
 * "2002-12-16  15:35:01").  The result is validated by the caller.
 */
static char *avi_date(const char *text)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	g_auto(GStrv) part = g_strsplit_set(text, " \t\r\n", -1);
	const char *word[5];
	guint n = 0;
	for (guint i = 0; part[i] != NULL && n < G_N_ELEMENTS(word); i++) {
		if (part[i][0] != '\0')
			word[n++] = part[i];
	}
	if (n == 5 && strlen(word[1]) == 3) {
		char mon[4] = { g_ascii_toupper(word[1][0]), g_ascii_tolower(word[1][1]), g_ascii_tolower(word[1][2]), 0 };
		const char *at = strstr(months, mon);
		int v[2];
		if (at != NULL && (at - months) % 3 == 0 && numbers(word[2], v, 1) == 1 && numbers(word[4], v + 1, 1) == 1 &&
		    strlen(word[3]) == 8)
			return g_strdup_printf("%04d:%02d:%02d %s", v[1], (int)(at - months) / 3 + 1, v[0], word[3]);
	}

	int v[6] = { 0 };
	guint k = numbers(text, v, 6);
	if (k < 5 || v[0] < 1000)
		return NULL;
	int hour = v[3];
	const char *ampm = strpbrk(text, "AaPp");
	if (ampm != NULL && (ampm[1] == 'M' || ampm[1] == 'm')) {
		gboolean is_pm = ampm[0] == 'P' || ampm[0] == 'p';
		if (is_pm && hour < 12)
			hour += 12;
		else if (!is_pm && hour == 12)
			hour = 0;
	}
	return g_strdup_printf("%04d:%02d:%02d %02d:%02d:%02d", v[0], v[1], v[2], hour, v[4], k >= 6 ? v[5] : 0);
}

/* Duration, seconds, as exiftool's Composite:Duration computes it. */
static double avi_duration(const Riff *r)
{
	if (!r->has_avih || r->us_per_frame == 0)
		return NAN;
	double dur = (double)r->total_frames * r->us_per_frame / 1e6;
	if (r->video_stream >= 0 && r->v_scale != 0 && r->v_rate != 0 && r->v_length != 0) {
		double video = (double)r->v_length * r->v_scale / r->v_rate;
		double ratio = dur / video;
		if (ratio > 1.9 && ratio < 3.1)
			dur = video;
	}
	return dur;
}

static void riff_finish(void *state, PixStream *s, PixMeta *m)
{
	Riff *r = state;
	guint64 size = pix_stream_pos(s);

	if (r->form == FORM_OTHER)
		return;
	if (r->claimed_end > size)
		pix_stream_problem(s, "truncated %s: the file has %" G_GUINT64_FORMAT " bytes, its RIFF chunks claim %"
		                   G_GUINT64_FORMAT, r->name, size, r->claimed_end);

	gint64 w = -1, h = -1;
	if (r->canvas_w > 0) {
		w = r->canvas_w;
		h = r->canvas_h;
	} else if (r->bitstream_w > 0 && r->bitstream_h > 0) {
		w = r->bitstream_w;
		h = r->bitstream_h;
	} else if (r->video_w > 0 && r->video_h > 0) {
		w = r->video_w;
		h = r->video_h;
	} else if (r->avih_w > 0 && r->avih_h > 0) {
		w = r->avih_w;
		h = r->avih_h;
	}
	if (m->width_px < 0 && m->height_px < 0 && w > 0) {
		m->width_px = w;
		m->height_px = h;
	}
	if (isnan(m->duration_s))
		m->duration_s = avi_duration(r);
	if (r->idit != NULL) {
		g_autofree char *date = avi_date(r->idit);
		if (date != NULL)
			pix_meta_set_exif_date(m, date, NULL, NULL, "IDIT");
	}

	pix_meta_read_captured(s, r->exif, r->xmp, m);
}

static void riff_free(void *state)
{
	Riff *r = state;
	if (r == NULL)
		return;
	if (r->exif != NULL)
		g_bytes_unref(r->exif);
	if (r->xmp != NULL)
		g_bytes_unref(r->xmp);
	g_free(r->idit);
	g_free(r);
}

const PixContainer pix_container_riff = {
	.name = "RIFF",
	.keep_head = 0,
	.keep_tail = 0,
	.start = riff_start,
	.finish = riff_finish,
	.free = riff_free,
};

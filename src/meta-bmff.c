/*
 * meta-bmff.c: ISO base media files (ISO/IEC 14496-12) and QuickTime as a
 * PixContainer (see meta.h): HEIF/HEIC/AVIF images, Canon CR3, MP4, MOV,
 * 3GP, M4V, and JPEG XL (its container is made of the same boxes, and a
 * bare JPEG XL codestream is read here too).
 *
 * Reads the file's boxes through the stream; writes PixMeta.  Runs on a
 * hash thread.
 *
 * The walk asks for each box header as the read reaches it, descends into
 * the boxes that hold metadata and skips the rest (media data, sample
 * tables) without keeping a byte of them:
 *  - images (HEIF, AVIF): the top-level 'meta' box whole (iinf, iloc,
 *    pitm, iprp); then the extents of its 'Exif' and XMP items (usually in
 *    'mdat', after 'meta'; one that lies before it went by unkept), put
 *    together, and the primary item's 'ispe' for the pixel size;
 *  - CR3: the Canon 'uuid' box in 'moov', whose CMT1, CMT2 and CMT4 boxes
 *    are TIFF blocks for IFD0, the Exif IFD and the GPS IFD;
 *  - video: 'mvhd' (creation date, duration), each track's 'tkhd' (size)
 *    and 'hdlr' (which track is video), 'udta' ('(c)xyz' position,
 *    '(c)mak', '(c)mod') and QuickTime's 'meta' keys ('mdta' location,
 *    make, model, creationdate; the 'ilst' items one by one, so cover art
 *    of any size is skipped);
 *  - JPEG XL: 'Exif' and 'xml ' boxes, and the size in the first bytes of
 *    the codestream.
 * A box too large for metadata (over MAX_LEAF) is left unread, not called
 * damage; after MAX_HEADERS boxes (a long fragmented movie) the walk stops.
 *
 * Damage: a box walked or kept, or any top-level box, that runs past the
 * file's end (a truncated file: an 'mdat' whose size says more media data
 * than the file holds is the commonest cut, a copy that stopped short, as
 * exiftool's "Truncated 'mdat' data" says too), and a movie or CR3
 * without 'moov', an HEIF without 'meta' (cut before it was written).
 * Boxes skipped inside a walked box lie within it, so its end judges
 * them.  An 'mdat' of size 0 (to the file's end) says nothing of its
 * length, and the sample tables' chunk offsets are not read: such a cut
 * goes unseen.  An item whose extents lie in the 'meta' box that
 * describes it is damage too.
 *
 * The video date is the movie header's creation time, which the format
 * defines as UTC; when Apple's creationdate gives the local offset, the
 * date is shown in that offset (the same instant).
 *
 * Invariants:
 *  1. A child box lies within its parent: a box that claims to run past its
 *     parent's end (or is shorter than its header) ends the walk at that
 *     level, with a problem recorded; nesting deeper than MAX_DEPTH is not
 *     followed.  Sibling headers are asked for at strictly increasing
 *     offsets, so the walk always ends.
 *  2. Every field read from a captured box is bounds-checked against the
 *     bytes delivered.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 12
#define MAX_NODES 4096
#define HEADER_WANT 40          /* size, type, largesize, uuid, and a peek */
#define MAX_LEAF (1u << 20)     /* metadata boxes kept (mvhd, keys, CMTn...) */
#define MAX_META (4u << 20)     /* a HEIF 'meta' box */
#define MAX_EXIF (4u << 20)     /* an Exif item */
#define MAX_HEADERS 20000       /* boxes walked in a file */

/* seconds from 1904-01-01 (QuickTime's epoch) to 1970-01-01 */
#define EPOCH_1904 2082844800LL

static const guint8 canon_uuid[16] = {
	0x85, 0xc0, 0xb6, 0x87, 0x82, 0x0f, 0x11, 0xe0, 0x81, 0x11, 0xf4, 0xce, 0x46, 0x2b, 0x6a, 0x48,
};
/* Adobe's XMP box (CR3, MP4): BE7ACFCB-97A9-42E8-9C71-999491E3AFAC */
static const guint8 xmp_uuid[16] = {
	0xbe, 0x7a, 0xcf, 0xcb, 0x97, 0xa9, 0x42, 0xe8, 0x9c, 0x71, 0x99, 0x94, 0x91, 0xe3, 0xaf, 0xac,
};

typedef enum {
	MODE_VIDEO,
	MODE_HEIF,
	MODE_CR3,
	MODE_JXL,
} Mode;

typedef struct Bmff Bmff;

/* An item's extents, as 'iloc' gives them. */
#define MAX_EXTENTS 16

typedef struct {
	guint n;
	guint64 off[MAX_EXTENTS];   /* file offsets, or offsets in 'idat' */
	guint64 len[MAX_EXTENTS];
	gboolean is_idat;           /* construction method 1 */
} Extents;

/* A HEIF item (Exif, XMP) being gathered from its extents. */
typedef struct {
	Extents ext;
	GByteArray *parts[MAX_EXTENTS];  /* what arrived, by extent (owned) */
	guint n_arrived;
	gboolean is_lost;       /* an extent could not be read */
	void (*read)(Bmff *b, const guint8 *data, gsize len);
} Item;

/* A container box being walked. */
typedef struct {
	guint64 end;            /* offset after its last byte (G_MAXUINT64: the file's end) */
	guint32 type;
	gint parent;            /* node index, -1 for the file */
	guint depth;
	/* a 'trak': what its tkhd and hdlr said */
	gint64 track_w, track_h;
	gboolean is_video_track;
} Node;

struct Bmff {
	PixStream *s;
	Mode mode;
	gboolean is_mode_known;
	GArray *nodes;          /* Node; index 0 is the file itself */
	guint n_headers;        /* box headers asked for, against MAX_HEADERS */
	/* the walked, kept or top-level box that ends furthest into the
	 * file, of those whose size says where they end: beyond the file's
	 * end, the file is truncated */
	guint64 far_end;
	guint64 far_off;
	guint32 far_type;
	gboolean has_moov;      /* a top-level 'moov' (a movie's, a CR3's metadata) */
	gboolean has_meta;      /* a top-level 'meta' (an HEIF's items) */

	/* video */
	gint64 created_s;       /* mvhd creation time, Unix seconds; 0 unknown */
	double duration_s;
	gint64 video_w, video_h;
	double lat, lon, alt;
	char *make, *model;
	char *apple_date;       /* mdta creationdate, as written */
	GPtrArray *keys;        /* mdta key names, index = key number - 1 */

	/* HEIF */
	guint32 primary_id;
	guint32 exif_id;
	guint32 xmp_id;
	gint64 ispe_w, ispe_h;
	guint64 exif_lost_at;   /* where the Exif item was that could not be read, 0 */
	guint64 meta_off;       /* the top-level 'meta' box, [meta_off, meta_end) */
	guint64 meta_end;
	Item items[2];          /* Exif, XMP */

	PixMeta *m;             /* fields read from TIFF/XMP blocks as they come */
};

#define FOURCC(a, b, c, d) ((guint32)(a) << 24 | (guint32)(b) << 16 | (guint32)(c) << 8 | (guint32)(d))

/* An n-byte big-endian number (n = 0, 4 or 8, as iloc sizes are). */
static gboolean ben(const guint8 *p, gsize avail, gsize *at, guint n, guint64 *out)
{
	if (n != 0 && n != 4 && n != 8)
		return FALSE;
	if (*at + n > avail)
		return FALSE;
	*out = n == 0 ? 0 : n == 4 ? pix_be32(p + *at) : pix_be64(p + *at);
	*at += n;
	return TRUE;
}

static void fourcc_text(guint32 t, char out[5])
{
	for (int i = 0; i < 4; i++) {
		char c = (char)(t >> (24 - 8 * i));
		out[i] = g_ascii_isprint(c) ? c : '?';
	}
	out[4] = '\0';
}

static void on_header(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);

/* Asks for the header of the box at `off` inside node `parent`.  After
 * MAX_HEADERS boxes the walk stops quietly: a long fragmented movie has a
 * 'moof' and an 'mdat' per second, and its metadata came first. */
static void want_header(Bmff *b, guint64 off, gint parent)
{
	const Node *p = &g_array_index(b->nodes, Node, parent);
	if (++b->n_headers > MAX_HEADERS)
		return;
	if (off >= p->end || off >= pix_stream_pos(b->s) + G_MAXINT64)
		return;
	if (p->end != G_MAXUINT64 && p->end - off < 8) {
		char name[5];
		fourcc_text(p->type, name);
		pix_stream_problem(b->s, "corrupt %s: %" G_GUINT64_FORMAT " stray bytes at the end of box '%s'",
		                   b->mode == MODE_JXL ? "JPEG XL" : "ISO media file", p->end - off, name);
		return;
	}
	pix_stream_want(b->s, off, HEADER_WANT, on_header, b, (guint64)parent);
}

/* Enters a container box: its children start at `first`. */
static void enter(Bmff *b, gint parent, guint32 type, guint64 first, guint64 end)
{
	const Node *p = &g_array_index(b->nodes, Node, parent);
	if (p->depth + 1 > MAX_DEPTH || b->nodes->len >= MAX_NODES) {
		pix_stream_problem(b->s, "corrupt ISO media file: boxes nested too deep or too many");
		return;
	}
	Node n = { .end = end, .type = type, .parent = parent, .depth = p->depth + 1, .track_w = -1, .track_h = -1 };
	g_array_append_val(b->nodes, n);
	want_header(b, first, (gint)b->nodes->len - 1);
}

/* --- leaves ------------------------------------------------------------- */

static void on_leaf(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len);

/* The node of the nearest enclosing box of `type`, or -1. */
static gint ancestor(const Bmff *b, gint node, guint32 type)
{
	for (gint i = node; i > 0; i = g_array_index(b->nodes, Node, i).parent)
		if (g_array_index(b->nodes, Node, i).type == type)
			return i;
	return -1;
}

static void read_mvhd(Bmff *b, const guint8 *p, gsize len)
{
	guint64 created, timescale, duration;
	if (len < 4)
		return;
	if (p[0] == 1 && len >= 4 + 28) {
		created = pix_be64(p + 4);
		timescale = pix_be32(p + 20);
		duration = pix_be64(p + 24);
		if (duration == G_MAXUINT64)
			duration = 0;
	} else if (p[0] == 0 && len >= 4 + 16) {
		created = pix_be32(p + 4);
		timescale = pix_be32(p + 12);
		duration = pix_be32(p + 16);
		if (duration == G_MAXUINT32)
			duration = 0;
	} else {
		return;
	}
	/* before 1970 or unset (0): cameras without a clock */
	if (created > (guint64)EPOCH_1904 && created < (guint64)EPOCH_1904 + (G_GUINT64_CONSTANT(1) << 40))
		b->created_s = (gint64)created - EPOCH_1904;
	if (timescale > 0 && duration > 0)
		b->duration_s = (double)duration / (double)timescale;
}

static void read_tkhd(Bmff *b, gint node, const guint8 *p, gsize len)
{
	gint trak = ancestor(b, node, FOURCC('t', 'r', 'a', 'k'));
	gsize at = len >= 4 && p[0] == 1 ? 88 : 76;   /* width, height: 16.16 fixed point */
	if (trak < 0 || len < at + 8)
		return;
	Node *t = &g_array_index(b->nodes, Node, trak);
	t->track_w = pix_be32(p + at) >> 16;
	t->track_h = pix_be32(p + at + 4) >> 16;
}

static void read_hdlr(Bmff *b, gint node, const guint8 *p, gsize len)
{
	gint trak = ancestor(b, node, FOURCC('t', 'r', 'a', 'k'));
	if (trak < 0 || len < 12 || pix_be32(p + 8) != FOURCC('v', 'i', 'd', 'e'))
		return;
	Node *t = &g_array_index(b->nodes, Node, trak);
	t->is_video_track = TRUE;
	/* the first video track with a size is the movie's */
	if (b->video_w < 0 && t->track_w > 0 && t->track_h > 0) {
		b->video_w = t->track_w;
		b->video_h = t->track_h;
	}
}

/* One ISO 6709 coordinate: sign, then degrees (DD / DDD), optionally with
 * minutes (and seconds) run together, and a decimal fraction. */
static gboolean iso6709_part(const char **sp, guint deg_digits, double *out)
{
	const char *s = *sp;
	if (*s != '+' && *s != '-')
		return FALSE;
	double sign = *s == '-' ? -1 : 1;
	s++;
	guint n_int = 0;
	while (g_ascii_isdigit(s[n_int]))
		n_int++;
	char *end;
	double v = g_ascii_strtod(s, &end);
	if (end == s || n_int < deg_digits)
		return FALSE;
	if (n_int == deg_digits + 2) {          /* DDMM.mmm */
		double deg = floor(v / 100);
		v = deg + (v - deg * 100) / 60;
	} else if (n_int == deg_digits + 4) {   /* DDMMSS.sss */
		double deg = floor(v / 10000), min = floor((v - deg * 10000) / 100);
		v = deg + min / 60 + (v - deg * 10000 - min * 100) / 3600;
	} else if (n_int != deg_digits) {
		return FALSE;
	}
	*out = sign * v;
	*sp = end;
	return TRUE;
}

/* "+32.0929+034.8620+028.516/": latitude, longitude, altitude. */
static void read_iso6709(Bmff *b, const char *text)
{
	const char *s = text;
	double lat, lon, alt;
	if (!isnan(b->lat) || !iso6709_part(&s, 2, &lat) || !iso6709_part(&s, 3, &lon))
		return;
	if (fabs(lat) > 90 || fabs(lon) > 180)
		return;
	b->lat = lat;
	b->lon = lon;
	if (*s == '+' || *s == '-') {
		char *end;
		alt = g_ascii_strtod(s, &end);
		if (end != s && isfinite(alt))
			b->alt = alt;
	}
}

/* Bytes as a trimmed UTF-8 string, NULL when empty or not UTF-8. */
static char *text_of(const guint8 *p, gsize len)
{
	g_autofree char *t = g_strndup((const char *)p, len);
	g_strstrip(t);
	if (t[0] == '\0' || !g_utf8_validate(t, -1, NULL))
		return NULL;
	return g_steal_pointer(&t);
}

/* A QuickTime user-data text atom: 16-bit length, 16-bit language, text. */
static char *udta_text(const guint8 *p, gsize len)
{
	if (len < 4)
		return NULL;
	gsize n = pix_be16(p);
	return text_of(p + 4, MIN(n, len - 4));
}

static void read_keys(Bmff *b, const guint8 *p, gsize len)
{
	if (len < 8 || b->keys != NULL)
		return;
	guint32 count = pix_be32(p + 4);
	gsize at = 8;
	b->keys = g_ptr_array_new_with_free_func(g_free);
	for (guint32 i = 0; i < count && at + 8 <= len && b->keys->len < 4096; i++) {
		guint32 size = pix_be32(p + at);
		if (size < 8 || size > len - at)
			break;
		g_ptr_array_add(b->keys, g_strndup((const char *)p + at + 8, size - 8));
		at += size;
	}
}

/* An 'ilst' item (a child box, walked as the read passes it, so cover art
 * of any size costs nothing): its box type is the key number; a 'data' box
 * holds the value (type 1: UTF-8). */
static void read_ilst_item(Bmff *b, guint32 key, const guint8 *item, gsize item_len)
{
	if (b->keys == NULL || key == 0 || key > b->keys->len || item_len < 16 ||
	    pix_be32(item + 4) != FOURCC('d', 'a', 't', 'a') || pix_be32(item) > item_len || pix_be32(item) < 16 ||
	    pix_be32(item + 8) != 1)
		return;
	const char *name = g_ptr_array_index(b->keys, key - 1);
	char *value = text_of(item + 16, pix_be32(item) - 16);
	if (value == NULL)
		return;
	if (g_str_equal(name, "com.apple.quicktime.location.ISO6709"))
		read_iso6709(b, value);
	else if (g_str_equal(name, "com.apple.quicktime.make"))
		pix_meta_set_string(&b->make, g_steal_pointer(&value));
	else if (g_str_equal(name, "com.apple.quicktime.model"))
		pix_meta_set_string(&b->model, g_steal_pointer(&value));
	else if (g_str_equal(name, "com.apple.quicktime.creationdate"))
		pix_meta_set_string(&b->apple_date, g_steal_pointer(&value));
	g_free(value);
}

/* --- HEIF items --------------------------------------------------------- */

/* The extents of item `id` from an 'iloc' payload (the first
 * MAX_EXTENTS).  Every count is checked against the bytes there, so a
 * hostile box costs time in proportion to its size. */
static gboolean iloc_find(const guint8 *p, gsize len, guint32 id, Extents *out)
{
	if (len < 6)
		return FALSE;
	guint version = p[0];
	guint offset_size = p[4] >> 4, length_size = p[4] & 15, base_size = p[5] >> 4;
	guint index_size = version >= 1 ? p[5] & 15 : 0;
	gsize per_extent = index_size + offset_size + length_size;
	gsize at = 6;
	guint64 count;
	if (version > 2)
		return FALSE;
	if (version < 2) {
		if (at + 2 > len)
			return FALSE;
		count = pix_be16(p + at);
		at += 2;
	} else if (!ben(p, len, &at, 4, &count)) {
		return FALSE;
	}
	for (guint64 i = 0; i < count && at < len; i++) {
		guint64 item_id, base, extents, method = 0;
		if (version < 2) {
			if (at + 2 > len)
				return FALSE;
			item_id = pix_be16(p + at);
			at += 2;
		} else if (!ben(p, len, &at, 4, &item_id)) {
			return FALSE;
		}
		if (version >= 1) {
			if (at + 2 > len)
				return FALSE;
			method = pix_be16(p + at) & 15;
			at += 2;
		}
		at += 2;        /* data_reference_index */
		if (!ben(p, len, &at, base_size, &base) || at + 2 > len)
			return FALSE;
		extents = pix_be16(p + at);
		at += 2;
		if (extents * per_extent > len - at)
			return FALSE;
		if (item_id != id || per_extent == 0) {
			at += extents * per_extent;
			continue;
		}
		if (method > 1)
			return FALSE;
		out->n = 0;
		out->is_idat = method == 1;
		for (guint64 e = 0; e < extents && out->n < MAX_EXTENTS; e++) {
			guint64 index, e_off, e_len;
			if (!ben(p, len, &at, index_size, &index) || !ben(p, len, &at, offset_size, &e_off) ||
			    !ben(p, len, &at, length_size, &e_len) || base > G_MAXUINT64 - e_off)
				return FALSE;
			out->off[out->n] = base + e_off;
			out->len[out->n] = e_len;
			out->n++;
		}
		return out->n > 0;
	}
	return FALSE;
}

/* 'iinf': which items are Exif and XMP. */static void read_iinf(Bmff *b, const guint8 *p, gsize len)
{
	gsize at = p[0] == 0 ? 6 : 8;   /* full box header, 16- or 32-bit count */
	while (at + 8 <= len) {
		guint32 size = pix_be32(p + at);
		if (size < 8 || size > len - at)
			break;
		const guint8 *e = p + at;
		at += size;
		if (pix_be32(e + 4) != FOURCC('i', 'n', 'f', 'e') || size < 20 || e[8] < 2)
			continue;
		/* version 2: 16-bit id; version 3: 32-bit id; then protection
		 * index (16), item type (32), name, [content type] */
		gsize p_at = e[8] == 2 ? 12 : 14;
		guint32 item_id = e[8] == 2 ? pix_be16(e + 12) : pix_be32(e + 12);
		if (p_at + 2 + 4 > size)
			continue;
		guint32 type = pix_be32(e + p_at + 4);
		if (type == FOURCC('E', 'x', 'i', 'f') && b->exif_id == 0)
			b->exif_id = item_id;
		if (type == FOURCC('m', 'i', 'm', 'e') && b->xmp_id == 0) {
			/* name, then content type */
			gsize n_at = p_at + 6, name_len = strnlen((const char *)e + n_at, size - n_at);
			gsize c_at = n_at + name_len + 1;
			if (c_at < size && strncmp((const char *)e + c_at, "application/rdf+xml", size - c_at) == 0)
				b->xmp_id = item_id;
		}
	}
}

/* 'iprp': the primary item's 'ispe' (through 'ipma'), else the first. */
static void read_iprp(Bmff *b, const guint8 *p, gsize len)
{
	const guint8 *ipco = NULL, *ipma = NULL;
	gsize ipco_len = 0, ipma_len = 0;
	for (gsize at = 0; at + 8 <= len;) {
		guint32 size = pix_be32(p + at);
		if (size < 8 || size > len - at)
			break;
		if (pix_be32(p + at + 4) == FOURCC('i', 'p', 'c', 'o')) {
			ipco = p + at + 8;
			ipco_len = size - 8;
		} else if (pix_be32(p + at + 4) == FOURCC('i', 'p', 'm', 'a')) {
			ipma = p + at + 8;
			ipma_len = size - 8;
		}
		at += size;
	}
	if (ipco == NULL)
		return;
	/* the properties, numbered from 1 */
	GArray *props = g_array_new(FALSE, FALSE, sizeof(gsize));
	for (gsize at = 0; at + 8 <= ipco_len && props->len < 4096;) {
		guint32 size = pix_be32(ipco + at);
		if (size < 8 || size > ipco_len - at)
			break;
		g_array_append_val(props, at);
		at += size;
	}
	gint64 index = -1;
	if (ipma != NULL && ipma_len >= 8) {
		gboolean is_big = (ipma[3] & 1) != 0;
		guint32 count = pix_be32(ipma + 4);
		gsize at = 8;
		for (guint32 i = 0; i < count && index < 0; i++) {
			gsize id_len = ipma[0] < 1 ? 2 : 4;
			if (at + id_len + 1 > ipma_len)
				break;
			guint32 id = id_len == 2 ? pix_be16(ipma + at) : pix_be32(ipma + at);
			guint n = ipma[at + id_len];
			at += id_len + 1;
			for (guint k = 0; k < n; k++) {
				if (at + (is_big ? 2 : 1) > ipma_len)
					break;
				guint prop = is_big ? pix_be16(ipma + at) & 0x7fff : ipma[at] & 0x7f;
				at += is_big ? 2 : 1;
				if (id != b->primary_id || prop == 0 || prop > props->len)
					continue;
				gsize p_at = g_array_index(props, gsize, prop - 1);
				if (pix_be32(ipco + p_at + 4) == FOURCC('i', 's', 'p', 'e'))
					index = prop - 1;
			}
		}
	}
	for (guint i = 0; index < 0 && i < props->len; i++)
		if (pix_be32(ipco + g_array_index(props, gsize, i) + 4) == FOURCC('i', 's', 'p', 'e'))
			index = i;
	if (index >= 0) {
		gsize p_at = g_array_index(props, gsize, index);
		if (pix_be32(ipco + p_at) >= 20) {
			b->ispe_w = pix_be32(ipco + p_at + 12);
			b->ispe_h = pix_be32(ipco + p_at + 16);
		}
	}
	g_array_free(props, TRUE);
}

/* An Exif payload as HEIF's Exif item and JPEG XL's 'Exif' box hold it:
 * a 32-bit offset to the TIFF header (which follows "Exif\0\0"), then the
 * TIFF; `problem` when the offset points outside. */
static void read_exif_payload(Bmff *b, const guint8 *data, gsize len, const char *problem)
{
	if (len < 4 || pix_be32(data) > len - 4) {
		pix_stream_problem(b->s, "%s", problem);
		return;
	}
	pix_meta_read_tiff(b->s, data + 4 + pix_be32(data), len - 4 - pix_be32(data), PIX_TIFF_ROLE_MAIN, b->m);
}

static void read_exif_item(Bmff *b, const guint8 *data, gsize len)
{
	read_exif_payload(b, data, len, "corrupt HEIF: bad TIFF header offset in its Exif item");
}

static void read_xmp_item(Bmff *b, const guint8 *data, gsize len)
{
	pix_meta_read_xmp_in(b->s, data, len, b->m, NULL);
}

/* One extent of an item arrived; the item is read once all have. */
static void on_extent(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Bmff *b = ctx;
	Item *it = &b->items[arg >> 8];
	guint i = (guint)(arg & 0xff);
	(void)s;
	if (len < it->ext.len[i] || it->is_lost) {
		/* judged at the end: outside the file is damage, but an item
		 * stored before 'meta' went by before we knew of it */
		if (!it->is_lost && it->read == read_exif_item)
			b->exif_lost_at = off + len;
		it->is_lost = TRUE;
		return;
	}
	g_byte_array_append(it->parts[i] = g_byte_array_sized_new((guint)len), data, (guint)len);
	if (++it->n_arrived < it->ext.n)
		return;
	g_autoptr(GByteArray) whole = g_byte_array_new();
	for (guint k = 0; k < it->ext.n; k++)
		g_byte_array_append(whole, it->parts[k]->data, it->parts[k]->len);
	it->read(b, whole->data, whole->len);
}

/* Asks for the extents of item `id` (in the file, or copies them from
 * 'idat'): at most MAX_EXIF bytes in all. */
static void want_item(Bmff *b, guint which, const guint8 *iloc, gsize iloc_len, const guint8 *idat,
                      gsize idat_len, guint32 id, void (*read)(Bmff *, const guint8 *, gsize))
{
	Item *it = &b->items[which];
	guint64 total = 0;
	it->read = read;
	if (id == 0 || iloc == NULL || !iloc_find(iloc, iloc_len, id, &it->ext))
		return;
	for (guint i = 0; i < it->ext.n; i++) {
		/* the item's bytes cannot be the boxes that describe it */
		guint64 off = it->ext.off[i], len = it->ext.len[i];
		if (!it->ext.is_idat && off < b->meta_end && (off >= b->meta_off || len == 0 || len > b->meta_off - off)) {
			pix_stream_problem(b->s, "corrupt HEIF: its %s item at offset %" G_GUINT64_FORMAT
			                   " lies inside its 'meta' box", which == 0 ? "Exif" : "XMP", off);
			return;
		}
		if (it->ext.len[i] > MAX_EXIF - total) {
			pix_stream_problem(b->s, "corrupt HEIF: an item larger than %u MiB", MAX_EXIF >> 20);
			return;
		}
		total += it->ext.len[i];
	}
	if (it->ext.is_idat) {
		g_autoptr(GByteArray) whole = g_byte_array_new();
		for (guint i = 0; i < it->ext.n; i++) {
			/* a length of 0: to the end of the data */
			if (idat != NULL && it->ext.len[i] == 0 && it->ext.off[i] <= idat_len)
				it->ext.len[i] = MIN(idat_len - it->ext.off[i], MAX_EXIF);
			if (idat == NULL || it->ext.off[i] > idat_len || it->ext.len[i] > idat_len - it->ext.off[i]) {
				pix_stream_problem(b->s, "corrupt HEIF: an item outside its 'idat'");
				return;
			}
			g_byte_array_append(whole, idat + it->ext.off[i], (guint)it->ext.len[i]);
		}
		read(b, whole->data, whole->len);
		return;
	}
	/* a length of 0 runs to the end of the file: whatever arrives is it */
	for (guint i = 0; i < it->ext.n; i++)
		if (!pix_stream_want(b->s, it->ext.off[i], it->ext.len[i] > 0 ? (gsize)it->ext.len[i] : MAX_EXIF - (gsize)total,
		                     on_extent, b, which << 8 | i))
			return;
}

/* A HEIF's top-level 'meta' (payload after the full-box header). */
static void read_heif_meta(Bmff *b, const guint8 *p, gsize len)
{
	const guint8 *iloc = NULL, *idat = NULL;
	gsize iloc_len = 0, idat_len = 0;
	for (gsize at = 0; at + 8 <= len;) {
		guint32 size = pix_be32(p + at), type = pix_be32(p + at + 4);
		if (size < 8 || size > len - at) {
			pix_stream_problem(b->s, "corrupt HEIF: a box in 'meta' runs past its end");
			break;
		}
		const guint8 *body = p + at + 8;
		gsize body_len = size - 8;
		if (type == FOURCC('p', 'i', 't', 'm') && body_len >= 6)
			b->primary_id = body[0] == 0 ? pix_be16(body + 4) : body_len >= 8 ? pix_be32(body + 4) : 0;
		else if (type == FOURCC('i', 'l', 'o', 'c')) {
			iloc = body;
			iloc_len = body_len;
		} else if (type == FOURCC('i', 'd', 'a', 't')) {
			idat = body;
			idat_len = body_len;
		} else if (type == FOURCC('i', 'i', 'n', 'f') && body_len >= 6)
			read_iinf(b, body, body_len);
		else if (type == FOURCC('i', 'p', 'r', 'p'))
			read_iprp(b, body, body_len);
		at += size;
	}
	want_item(b, 0, iloc, iloc_len, idat, idat_len, b->exif_id, read_exif_item);
	want_item(b, 1, iloc, iloc_len, idat, idat_len, b->xmp_id, read_xmp_item);
}

/* --- JPEG XL --------------------------------------------------------- */

/* Reads `n` bits, least significant first, as the codestream packs them. */
static guint32 bits(const guint8 *p, gsize len, gsize *pos, guint n, gboolean *ok)
{
	guint32 v = 0;
	for (guint i = 0; i < n; i++, (*pos)++) {
		if (*pos / 8 >= len) {
			*ok = FALSE;
			return 0;
		}
		v |= (guint32)((p[*pos / 8] >> (*pos % 8)) & 1) << i;
	}
	return v;
}

/* One dimension of a SizeHeader: 8 times a 5-bit number, or a U32 with
 * 9, 13, 18 or 30 bits. */
static guint32 jxl_dim(const guint8 *p, gsize len, gsize *pos, gboolean is_small, gboolean *ok)
{
	static const guint widths[4] = { 9, 13, 18, 30 };
	if (is_small)
		return (bits(p, len, pos, 5, ok) + 1) * 8;
	return bits(p, len, pos, widths[bits(p, len, pos, 2, ok)], ok) + 1;
}

/* The image size from the start of a codestream (FF 0A, SizeHeader). */
static void read_jxl_codestream(Bmff *b, const guint8 *p, gsize len)
{
	static const guint32 ratios[8][2] = { { 0, 0 }, { 1, 1 }, { 12, 10 }, { 4, 3 }, { 3, 2 }, { 16, 9 }, { 5, 4 }, { 2, 1 } };
	gsize pos = 16;
	gboolean ok = TRUE;
	if (len < 3 || p[0] != 0xff || p[1] != 0x0a || b->ispe_w > 0)
		return;
	gboolean is_small = bits(p, len, &pos, 1, &ok);
	guint32 h = jxl_dim(p, len, &pos, is_small, &ok), w;
	guint ratio = bits(p, len, &pos, 3, &ok);
	if (ratio == 0)
		w = jxl_dim(p, len, &pos, is_small, &ok);
	else
		w = (guint32)((guint64)h * ratios[ratio][0] / ratios[ratio][1]);
	if (ok) {
		b->ispe_w = w;
		b->ispe_h = h;
	}
}

/* --- the walk ------------------------------------------------------------- */

/* What to do with a box: descend into it, keep it whole, or skip it. */
typedef enum { SKIP, DESCEND, KEEP } Action;

static Action action_for(const Bmff *b, gint parent, guint32 type, const guint8 *uuid)
{
	guint32 ptype = g_array_index(b->nodes, Node, parent).type;
	if (ptype == FOURCC('i', 'l', 's', 't'))
		return KEEP;    /* an item of Apple's keys, or iTunes' */
	switch (type) {
	case FOURCC('m', 'o', 'o', 'v'):
	case FOURCC('t', 'r', 'a', 'k'):
	case FOURCC('m', 'd', 'i', 'a'):
	case FOURCC('u', 'd', 't', 'a'):
		return b->mode == MODE_HEIF || b->mode == MODE_JXL ? SKIP : DESCEND;
	case FOURCC('m', 'e', 't', 'a'):
		/* HEIF's item 'meta' is kept whole; QuickTime's is walked */
		return parent == 0 && b->mode == MODE_HEIF ? KEEP : b->mode == MODE_VIDEO ? DESCEND : SKIP;
	case FOURCC('u', 'u', 'i', 'd'):
		if (uuid != NULL && memcmp(uuid, xmp_uuid, 16) == 0)
			return parent == 0 && (b->mode == MODE_CR3 || b->mode == MODE_VIDEO) ? KEEP : SKIP;
		return uuid != NULL && memcmp(uuid, canon_uuid, 16) == 0 ? DESCEND : SKIP;
	case FOURCC('X', 'M', 'P', '_'):
		/* QuickTime's XMP, in the movie's user data */
		return b->mode == MODE_VIDEO && ptype == FOURCC('u', 'd', 't', 'a') ? KEEP : SKIP;
	case FOURCC('i', 'l', 's', 't'):
		return b->mode == MODE_VIDEO ? DESCEND : SKIP;
	case FOURCC('m', 'v', 'h', 'd'):
	case FOURCC('t', 'k', 'h', 'd'):
	case FOURCC('k', 'e', 'y', 's'):
	case FOURCC(0xa9, 'x', 'y', 'z'):
	case FOURCC(0xa9, 'm', 'a', 'k'):
	case FOURCC(0xa9, 'm', 'o', 'd'):
		return b->mode == MODE_VIDEO ? KEEP : SKIP;
	case FOURCC('h', 'd', 'l', 'r'):
		return b->mode == MODE_VIDEO && ptype == FOURCC('m', 'd', 'i', 'a') ? KEEP : SKIP;
	case FOURCC('C', 'M', 'T', '1'):
	case FOURCC('C', 'M', 'T', '2'):
	case FOURCC('C', 'M', 'T', '4'):
		return b->mode == MODE_CR3 ? KEEP : SKIP;
	case FOURCC('E', 'x', 'i', 'f'):
	case FOURCC('x', 'm', 'l', ' '):
		return b->mode == MODE_JXL ? KEEP : SKIP;
	case FOURCC('j', 'x', 'l', 'c'):
	case FOURCC('j', 'x', 'l', 'p'):
		return b->mode == MODE_JXL ? KEEP : SKIP;
	default:
		return SKIP;
	}
}

/* The mode, from the major brand. */
static void read_ftyp(Bmff *b, const guint8 *p, gsize len)
{
	static const char *const heif[] = { "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1", "avif", "avis" };
	if (b->is_mode_known || len < 4)
		return;
	b->is_mode_known = TRUE;
	if (memcmp(p, "crx ", 4) == 0)
		b->mode = MODE_CR3;
	else if (memcmp(p, "jxl ", 4) == 0)
		b->mode = MODE_JXL;
	for (guint i = 0; i < G_N_ELEMENTS(heif); i++)
		if (memcmp(p, heif[i], 4) == 0)
			b->mode = MODE_HEIF;
}

static void on_leaf(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Bmff *b = ctx;
	gint node = (gint)(arg >> 40);
	guint32 type = (guint32)arg;
	gsize header = (gsize)((arg >> 32) & 0xff);
	(void)s;
	if (len < header)
		return;
	const guint8 *p = data + header;
	gsize n = len - header;
	if (g_array_index(b->nodes, Node, node).type == FOURCC('i', 'l', 's', 't')) {
		read_ilst_item(b, type, p, n);
		return;
	}
	switch (type) {
	case FOURCC('m', 'v', 'h', 'd'):
		read_mvhd(b, p, n);
		break;
	case FOURCC('t', 'k', 'h', 'd'):
		read_tkhd(b, node, p, n);
		break;
	case FOURCC('h', 'd', 'l', 'r'):
		read_hdlr(b, node, p, n);
		break;
	case FOURCC('k', 'e', 'y', 's'):
		read_keys(b, p, n);
		break;
	case FOURCC(0xa9, 'x', 'y', 'z'): {
		g_autofree char *t = udta_text(p, n);
		if (t != NULL)
			read_iso6709(b, t);
		break;
	}
	case FOURCC(0xa9, 'm', 'a', 'k'):
		pix_meta_set_string(&b->make, udta_text(p, n));
		break;
	case FOURCC(0xa9, 'm', 'o', 'd'):
		pix_meta_set_string(&b->model, udta_text(p, n));
		break;
	case FOURCC('m', 'e', 't', 'a'):
		b->meta_off = off;
		b->meta_end = off + len;
		if (n >= 4)
			read_heif_meta(b, p + 4, n - 4);
		break;
	case FOURCC('C', 'M', 'T', '1'):
		pix_meta_read_tiff(s, p, n, PIX_TIFF_ROLE_MAIN, b->m);
		break;
	case FOURCC('C', 'M', 'T', '2'):
		pix_meta_read_tiff(s, p, n, PIX_TIFF_ROLE_EXIF, b->m);
		break;
	case FOURCC('C', 'M', 'T', '4'):
		pix_meta_read_tiff(s, p, n, PIX_TIFF_ROLE_GPS, b->m);
		break;
	case FOURCC('E', 'x', 'i', 'f'):
		/* a 32-bit offset to the TIFF header, as in HEIF */
		read_exif_payload(b, p, n, "corrupt JPEG XL: bad 'Exif' box");
		break;
	case FOURCC('x', 'm', 'l', ' '):
	case FOURCC('X', 'M', 'P', '_'):
	case FOURCC('u', 'u', 'i', 'd'):        /* the XMP uuid alone is kept */
		pix_meta_read_xmp_in(b->s, p, n, b->m, NULL);
		break;
	case FOURCC('j', 'x', 'l', 'c'):
		read_jxl_codestream(b, p, n);
		break;
	case FOURCC('j', 'x', 'l', 'p'):
		if (n > 4)
			read_jxl_codestream(b, p + 4, n - 4);
		break;
	}
}

static void on_header(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Bmff *b = ctx;
	gint parent = (gint)arg;
	const Node *p = &g_array_index(b->nodes, Node, parent);
	guint64 parent_end = p->end;
	const char *what = b->mode == MODE_JXL ? "JPEG XL" : "ISO media file";

	if (len == 0)
		return;         /* the file ended where a box could start */
	if (len < 8) {
		pix_stream_problem(s, "corrupt %s: truncated box header at offset %" G_GUINT64_FORMAT, what, off);
		return;
	}
	guint64 size = pix_be32(data);
	guint32 type = pix_be32(data + 4);
	gsize header = 8;
	gboolean is_to_end = size == 0;
	char name[5];
	fourcc_text(type, name);
	if (size == 1) {
		if (len < 16) {
			pix_stream_problem(s, "corrupt %s: truncated box header at offset %" G_GUINT64_FORMAT, what, off);
			return;
		}
		size = pix_be64(data + 8);
		header = 16;
	} else if (size == 0) {
		/* to the end of the enclosing box, or of the file */
		size = parent_end == G_MAXUINT64 ? G_MAXUINT64 - off : parent_end - off;
	}
	const guint8 *uuid = NULL;
	if (type == FOURCC('u', 'u', 'i', 'd')) {
		if (len < header + 16) {
			pix_stream_problem(s, "corrupt %s: truncated box header at offset %" G_GUINT64_FORMAT, what, off);
			return;
		}
		uuid = data + header;
		header += 16;
	}
	if (size < header || size > G_MAXUINT64 - off || (parent_end != G_MAXUINT64 && off + size > parent_end)) {
		pix_stream_problem(s, "corrupt %s: box '%s' at offset %" G_GUINT64_FORMAT " has a bad size (%" G_GUINT64_FORMAT
		                   " bytes)", what, name, off, size);
		return;
	}
	guint64 end = off + size;
	if (parent == 0 && type == FOURCC('f', 't', 'y', 'p') && len >= header + 4)
		read_ftyp(b, data + header, len - header);
	b->has_moov |= parent == 0 && type == FOURCC('m', 'o', 'o', 'v');
	b->has_meta |= parent == 0 && type == FOURCC('m', 'e', 't', 'a');
	Action action = action_for(b, parent, type, uuid);
	if ((action != SKIP || parent == 0) && !is_to_end && end > b->far_end) {
		b->far_end = end;
		b->far_off = off;
		b->far_type = type;
	}
	/* QuickTime's 'meta' is a plain box; ISO's is a full box (a version
	 * and flags first): told apart by whether a box type follows */
	if (type == FOURCC('m', 'e', 't', 'a') && len >= header + 12 &&
	    !(pix_be32(data + header + 4) == FOURCC('h', 'd', 'l', 'r') || pix_be32(data + header + 4) == FOURCC('k', 'e', 'y', 's')))
		header += 4;
	/* a 'keys' box is a full box too, read with its version and flags */
	switch (action) {
	case DESCEND:
		enter(b, parent, type, off + header, end);
		break;
	case KEEP: {
		/* a JPEG XL codestream: its first bytes hold the size */
		gboolean is_codestream = type == FOURCC('j', 'x', 'l', 'c') || type == FOURCC('j', 'x', 'l', 'p');
		guint64 want = is_codestream ? MIN(size, header + 64) : size;
		/* a box larger than any metadata box (a cover picture, say) is not
		 * damage: it is left unread */
		if (want > (type == FOURCC('m', 'e', 't', 'a') ? MAX_META : MAX_LEAF))
			break;
		/* a HEIF 'meta' is read with its full-box header: on_leaf skips it */
		gsize skip = type == FOURCC('m', 'e', 't', 'a') ? header - 4 : header;
		guint64 leaf_arg = (guint64)parent << 40 | (guint64)skip << 32 | type;
		pix_stream_want(s, off, (gsize)want, on_leaf, b, leaf_arg);
		break;
	}
	case SKIP:
		break;
	}
	if (end != G_MAXUINT64 && end > off)
		want_header(b, end, parent);
}

/* --- the container ----------------------------------------------------- */

/* The first bytes: a bare JPEG XL codestream, or boxes. */
static void on_first(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Bmff *b = ctx;
	(void)arg, (void)off;
	if (len >= 2 && data[0] == 0xff && data[1] == 0x0a) {
		b->mode = MODE_JXL;
		read_jxl_codestream(b, data, len);
		return;
	}
	want_header(b, 0, 0);
	(void)s;
}

static void *bmff_start(PixStream *s)
{
	Bmff *b = g_new0(Bmff, 1);
	b->s = s;
	b->nodes = g_array_new(FALSE, FALSE, sizeof(Node));
	Node file = { .end = G_MAXUINT64, .parent = -1, .track_w = -1, .track_h = -1 };
	g_array_append_val(b->nodes, file);
	b->video_w = b->video_h = -1;
	b->ispe_w = b->ispe_h = -1;
	b->lat = b->lon = b->alt = NAN;
	b->duration_s = NAN;
	b->m = pix_meta_new();
	pix_stream_want(s, 0, 64, on_first, b, 0);
	return b;
}

/* The movie's date: mvhd's instant, in Apple's local offset when its
 * creationdate (ISO 8601) gives one; else that creationdate itself. */
static void video_date(Bmff *b, PixMeta *m)
{
	g_autofree char *apple = NULL, *tz = NULL;
	int offset_s = 0;
	if (b->apple_date != NULL && pix_meta_parse_date(b->apple_date, &apple, &tz) && tz != NULL)
		offset_s = (tz[0] == '-' ? -1 : 1) * (atoi(tz + 1) * 3600 + atoi(tz + 4) * 60);
	if (b->created_s > 0) {
		if ((m->date_taken = pix_meta_clock_date(b->created_s + offset_s)) == NULL)
			return;
		m->date_source = "QuickTime CreateDate";
	} else if (apple != NULL) {
		m->date_taken = g_steal_pointer(&apple);
		m->date_source = "QuickTime creationdate";
	} else {
		return;
	}
	m->date_tz = g_steal_pointer(&tz);
}

static void bmff_finish(void *state, PixStream *s, PixMeta *m)
{
	Bmff *b = state;
	if (b->exif_lost_at > 0 && b->exif_lost_at + 4 > pix_stream_pos(s))
		pix_stream_problem(s, "corrupt HEIF: its Exif item at offset %" G_GUINT64_FORMAT " lies outside the file",
		                   b->exif_lost_at);
	/* the boxes its metadata is in, unless the walk stopped early */
	const char *needed = b->mode == MODE_HEIF ? "meta" : b->mode == MODE_JXL ? NULL : "moov";
	if (needed != NULL && !(b->mode == MODE_HEIF ? b->has_meta : b->has_moov) && b->n_headers <= MAX_HEADERS &&
	    !pix_stream_has_failed(s))
		pix_stream_problem(s, "corrupt ISO media file: no '%s' box", needed);
	if (b->far_end > pix_stream_pos(s)) {
		char name[5];
		fourcc_text(b->far_type, name);
		pix_stream_problem(s, "truncated %s: box '%s' at offset %" G_GUINT64_FORMAT " runs past the end of the file (%"
		                   G_GUINT64_FORMAT " bytes)", b->mode == MODE_JXL ? "JPEG XL" : "ISO media file", name,
		                   b->far_off, pix_stream_pos(s));
	}
	if (b->mode == MODE_VIDEO) {
		if (m->date_taken == NULL)
			video_date(b, m);
		if (isnan(m->duration_s))
			m->duration_s = b->duration_s;
		if (m->width_px < 0 && b->video_w > 0) {
			m->width_px = b->video_w;
			m->height_px = b->video_h;
		}
		if (isnan(m->gps_lat) && !isnan(b->lat)) {
			m->gps_lat = b->lat;
			m->gps_lon = b->lon;
			m->gps_alt_m = b->alt;
		}
		pix_meta_set_string(&m->make, g_steal_pointer(&b->make));
		pix_meta_set_string(&m->model, g_steal_pointer(&b->model));
	}
	/* the image's own size, not what its EXIF claims */
	if (m->width_px < 0 && b->ispe_w > 0 && b->ispe_h > 0) {
		m->width_px = b->ispe_w;
		m->height_px = b->ispe_h;
	}
	pix_meta_fill(m, b->m);
}

static void bmff_free(void *state)
{
	Bmff *b = state;
	if (b == NULL)
		return;
	g_array_free(b->nodes, TRUE);
	g_free(b->make);
	g_free(b->model);
	g_free(b->apple_date);
	if (b->keys != NULL)
		g_ptr_array_free(b->keys, TRUE);
	pix_meta_free(b->m);
	for (guint i = 0; i < G_N_ELEMENTS(b->items); i++)
		for (guint k = 0; k < MAX_EXTENTS; k++)
			if (b->items[i].parts[k] != NULL)
				g_byte_array_unref(b->items[i].parts[k]);
	g_free(b);
}

const PixContainer pix_container_bmff = {
	.name = "ISO media",
	.keep_head = 0,
	.keep_tail = 0,
	.start = bmff_start,
	.finish = bmff_finish,
	.free = bmff_free,
};

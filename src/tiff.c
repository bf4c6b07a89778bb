/*
 * tiff.c: TIFF structure checks and our own reader of the fields PixMeta
 * holds (see tiff.h).
 *
 * Reads the buffer or the getter it is given, nothing else; writes the
 * PixMeta it is given.  Runs on the hash threads.
 *
 * Invariants:
 *  1. Every read of the buffer is preceded by a bounds check against
 *     `len`, done in 64-bit arithmetic (counts times sizes cannot wrap);
 *     the reader checks every offset against the TIFF's size before it
 *     asks its getter.
 *  2. The walk is finite: at most MAX_IFDS directories are visited (the
 *     rest go unchecked), an offset is never visited twice (a repeat is
 *     reported as a loop), SubIFDs nest at most MAX_SUB_DEPTH deep (deeper
 *     is reported) and every chain is followed for MAX_CHAIN directories.
 *     The reader likewise visits at most MAX_DIRS directories, each once,
 *     SubIFDs to a depth of MAX_DEPTH, and reads at most MAX_ENTRIES
 *     entries in all.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tiff.h"
#include "meta-value.h"

#include <math.h>
#include <string.h>

#define MAX_IFDS 32
#define MAX_CHAIN 8
#define MAX_SUB_DEPTH 8         /* SubIFDs within SubIFDs */
#define MAX_SUB_POINTERS 16     /* SubIFD pointers followed per directory */

#define TAG_EXIF_IFD 0x8769
#define TAG_GPS_IFD 0x8825
#define TAG_INTEROP_IFD 0xa005
#define TAG_SUBIFDS 0x014a

typedef struct {
	const guint8 *data;
	gsize len;
	guint64 total_len;
	gboolean is_big_endian;
	guint32 visited[MAX_IFDS];
	guint n_visited;
	guint sub_depth;        /* SubIFD levels being walked */
	char *problem;
} Walk;

static guint16 get16(const Walk *w, guint64 off)
{
	const guint8 *p = w->data + off;
	return w->is_big_endian ? (guint16)(p[0] << 8 | p[1]) : (guint16)(p[1] << 8 | p[0]);
}

static guint32 get32(const Walk *w, guint64 off)
{
	const guint8 *p = w->data + off;
	if (w->is_big_endian)
		return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
	return (guint32)p[3] << 24 | (guint32)p[2] << 16 | (guint32)p[1] << 8 | p[0];
}

/* Bytes per value of a TIFF field type, 0 for an unknown type. */
static guint type_size(guint16 type)
{
	static const guint8 sizes[] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4 };
	return type < G_N_ELEMENTS(sizes) ? sizes[type] : 0;
}

static void problem(Walk *w, char *text)
{
	if (w->problem == NULL)
		w->problem = text;
	else
		g_free(text);
}

static gboolean walk_ifd(Walk *w, guint32 off, const char *name, guint32 *next);

/* Follows a sub-IFD pointer entry (Exif, GPS, Interoperability). */
static void walk_pointer(Walk *w, const char *ifd_name, guint16 type, guint32 count, guint64 value_off,
                         const char *sub_name)
{
	if (count == 0)
		return;         /* an empty pointer: no such directory */
	/* LONG or IFD by the standard; SLONG is seen in the wild and harmless */
	if ((type != 4 && type != 9 && type != 13) || count != 1) {
		problem(w, g_strdup_printf("wrong format (type %u, count %u) for the %s pointer in %s",
		                           type, count, sub_name, ifd_name));
		return;
	}
	/* one 4-byte value: in the entry itself, which is within bounds */
	guint32 off = get32(w, value_off);
	if (off != 0)   /* a null pointer: no such directory */
		walk_ifd(w, off, sub_name, NULL);
}

/* Follows a SubIFDs entry (a TIFF or RAW image directory's reduced
 * images, or its raw image): each pointer's directory and its chain. */
static void walk_subifds(Walk *w, const char *ifd_name, guint16 type, guint32 count, guint64 value_off)
{
	if (count == 0 || (type != 4 && type != 13))
		return;         /* none, or not pointers: nothing to follow */
	if (w->sub_depth == MAX_SUB_DEPTH) {
		problem(w, g_strdup_printf("SubIFDs nested more than %d deep (in %s)", MAX_SUB_DEPTH, ifd_name));
		return;
	}
	w->sub_depth++;
	for (guint32 i = 0; i < MIN(count, MAX_SUB_POINTERS) && w->problem == NULL; i++) {
		guint64 at = value_off + 4 * (guint64)i;
		if (at + 4 > w->len)
			break;  /* beyond what is at hand: cannot tell */
		guint32 off = get32(w, at), next;
		for (guint k = 0; k < MAX_CHAIN && off != 0 && walk_ifd(w, off, "SubIFD", &next); k++)
			off = next;
	}
	w->sub_depth--;
}

/* Checks one IFD at `off`; sets *next to its next-IFD offset (`next` is
 * NULL for the Exif, GPS and Interoperability IFDs, which hold no
 * images).  Returns FALSE when it could not be read at all. */
static gboolean walk_ifd(Walk *w, guint32 off, const char *name, guint32 *next)
{
	if (next != NULL)
		*next = 0;
	if (w->problem != NULL)
		return FALSE;
	for (guint i = 0; i < w->n_visited; i++) {
		if (w->visited[i] == off) {
			problem(w, g_strdup_printf("the %s pointer leads back to an earlier directory (offset %u): a loop",
			                           name, off));
			return FALSE;
		}
	}
	if (w->n_visited == MAX_IFDS)
		return FALSE;   /* enough checked */
	w->visited[w->n_visited++] = off;
	if (off < 8 || (guint64)off + 2 > w->total_len) {
		problem(w, g_strdup_printf("bad %s directory at offset %u", name, off));
		return FALSE;
	}
	if ((guint64)off + 2 > w->len)
		return FALSE;   /* beyond what is at hand: cannot tell */
	guint16 n = get16(w, off);
	guint64 end = (guint64)off + 2 + 12 * (guint64)n;
	if (end > w->total_len) {
		problem(w, g_strdup_printf("bad %s directory at offset %u (%u entries)", name, off, n));
		return FALSE;
	}
	if (end > w->len)
		return FALSE;
	for (guint i = 0; i < n && w->problem == NULL; i++) {
		guint64 e = (guint64)off + 2 + 12 * (guint64)i;
		guint16 tag = get16(w, e), type = get16(w, e + 2);
		guint32 count = get32(w, e + 4);
		guint size = type_size(type);
		if (type == 0)
			continue;       /* zero padding at the end of a directory */
		if (size == 0) {
			problem(w, g_strdup_printf("bad format (%u) for %s entry %u (tag 0x%04x)", type, name, i, tag));
			break;
		}
		guint64 bytes = (guint64)count * size;
		guint64 value_off = e + 8;
		if (bytes > 4) {
			value_off = get32(w, e + 8);
			if (value_off + bytes > w->total_len) {
				problem(w, g_strdup_printf("bad offset or size for %s tag 0x%04x (%" G_GUINT64_FORMAT
				                           " bytes at offset %" G_GUINT64_FORMAT ")",
				                           name, tag, bytes, value_off));
				break;
			}
		}
		const char *sub = NULL;
		if (tag == TAG_SUBIFDS && next != NULL)
			walk_subifds(w, name, type, count, value_off);
		else if (tag == TAG_EXIF_IFD && next != NULL && w->sub_depth == 0)
			sub = "Exif IFD";
		else if (tag == TAG_GPS_IFD && next != NULL && w->sub_depth == 0)
			sub = "GPS IFD";
		else if (tag == TAG_INTEROP_IFD && g_str_equal(name, "Exif IFD"))
			sub = "Interoperability IFD";
		if (sub != NULL)
			walk_pointer(w, name, type, count, value_off, sub);
	}
	if (next != NULL && end + 4 <= w->len)
		*next = get32(w, end);
	return TRUE;
}

char *pix_tiff_check(const guint8 *data, gsize len, guint64 total_len)
{
	Walk w = { .data = data, .len = len, .total_len = MAX(total_len, len) };

	if (len < 8 || !((data[0] == 'I' && data[1] == 'I') || (data[0] == 'M' && data[1] == 'M')))
		return g_strdup("no TIFF header");
	w.is_big_endian = data[0] == 'M';
	switch (get16(&w, 2)) {
	case 42:        /* TIFF */
	case 0x55:      /* Panasonic RW2 */
	case 0x4f52:    /* Olympus ORF "RO" */
	case 0x5352:    /* Olympus ORF "RS" */
		break;
	case 43:        /* BigTIFF: 8-byte offsets; only its header is checked */
		if (get16(&w, 4) != 8 || get16(&w, 6) != 0)
			return g_strdup("bad BigTIFF header");
		return NULL;
	default:
		return g_strdup_printf("unknown TIFF version %u", get16(&w, 2));
	}

	guint32 off = get32(&w, 4);
	for (guint i = 0; i < MAX_CHAIN && off != 0 && w.problem == NULL; i++) {
		g_autofree char *name = g_strdup_printf("IFD%u", i);
		guint32 next;
		if (!walk_ifd(&w, off, name, &next))
			break;
		off = next;
	}
	return w.problem;
}

/* --- the field reader (pix_tiff_read) --- */

#define MAX_DIRS 64             /* directories one read visits */
#define MAX_DIR_ENTRIES 1024    /* entries read from one directory */
#define MAX_ENTRIES 8192        /* entries read over all directories */
#define MAX_DEPTH 4             /* SubIFDs within SubIFDs */
#define MAX_SUBIFDS 16          /* SubIFD pointers followed per directory */
#define MAX_TEXT 4096           /* bytes of a string value read */
#define MAX_PIECES 65536        /* strips or tiles of one image checked */
#define NO_VALUE G_MAXUINT64

enum {
	TAG_SUBFILE_TYPE = 0x00fe, TAG_OLD_SUBFILE_TYPE = 0x00ff,
	TAG_IMAGE_WIDTH = 0x0100, TAG_IMAGE_HEIGHT = 0x0101,
	TAG_COMPRESSION = 0x0103, TAG_PHOTOMETRIC = 0x0106, TAG_DNG_VERSION = 0xc612,
	TAG_MAKE = 0x010f, TAG_MODEL = 0x0110, TAG_ORIENTATION = 0x0112,
	TAG_DATE_TIME = 0x0132, TAG_SUB_IFDS = 0x014a,
	TAG_EXPOSURE_TIME = 0x829a, TAG_FNUMBER = 0x829d, TAG_ISO = 0x8827,
	TAG_DATE_ORIGINAL = 0x9003, TAG_DATE_DIGITIZED = 0x9004,
	TAG_OFFSET_TIME = 0x9010, TAG_OFFSET_ORIGINAL = 0x9011, TAG_OFFSET_DIGITIZED = 0x9012,
	TAG_FOCAL_LENGTH = 0x920a, TAG_MAKER_NOTE = 0x927c,
	TAG_SUBSEC = 0x9290, TAG_SUBSEC_ORIGINAL = 0x9291, TAG_SUBSEC_DIGITIZED = 0x9292,
	TAG_LENS_MODEL = 0xa434,
	TAG_IMAGE_DESCRIPTION = 0x010e, TAG_EXPOSURE_PROGRAM = 0x8822, TAG_APERTURE = 0x9202,
	TAG_METERING_MODE = 0x9207, TAG_FLASH = 0x9209,
	TAG_GPS_TIME = 7, TAG_GPS_DIRECTION_REF = 0x10, TAG_GPS_DIRECTION = 0x11, TAG_GPS_DATE = 0x1d,
	TAG_STRIP_OFFSETS = 0x0111, TAG_STRIP_BYTE_COUNTS = 0x0117,
	TAG_TILE_OFFSETS = 0x0144, TAG_TILE_BYTE_COUNTS = 0x0145,
	TAG_JPEG_OFFSET = 0x0201, TAG_JPEG_LENGTH = 0x0202,
	TAG_GPS_LAT_REF = 1, TAG_GPS_LAT = 2, TAG_GPS_LON_REF = 3, TAG_GPS_LON = 4,
	TAG_GPS_ALT_REF = 5, TAG_GPS_ALT = 6,
	TAG_XMP = 0x02bc, TAG_IPTC = 0x83bb, TAG_PHOTOSHOP = 0x8649,
	/* Panasonic RW2's IFD0 */
	TAG_RW2_TOP_BORDER = 0x04, TAG_RW2_LEFT_BORDER = 0x05,
	TAG_RW2_BOTTOM_BORDER = 0x06, TAG_RW2_RIGHT_BORDER = 0x07, TAG_RW2_ISO = 0x17,
	TAG_RW2_JPG_FROM_RAW = 0x2e,
	TAG_JPEG_TABLES = 0x015b, TAG_CR2_SLICE = 0xc640,
};

enum { T_ASCII = 2, T_RATIONAL = 5, T_SRATIONAL = 10, T_FLOAT = 11, T_DOUBLE = 12, T_UNDEFINED = 7 };

typedef struct {
	guint16 tag;
	guint16 type;
	guint64 count;
	guint64 value_off;      /* where the value lies, NO_VALUE when not within the TIFF */
	guint64 field_off;      /* where its value or offset field lies */
} Entry;

/* One directory's entries (as many as were at hand). */
typedef struct {
	Entry *entries;         /* (owned, NULL when none) */
	guint n;
	guint64 next;           /* the next directory's offset, 0 for none or unknown */
} Dir;

/* A pixel size candidate: exiftool's rule (see read_image_dir()). */
typedef struct {
	gint64 first;           /* the first value found, -1 */
	gint64 priority;        /* the priority directory's, -1 */
} Size;

typedef struct {
	PixTiffGetFn get;
	void *src;
	guint64 size;           /* bytes of the TIFF */
	gboolean is_big_endian;
	gboolean is_big_tiff;   /* 8-byte offsets and counts, 20-byte entries */
	guint16 version;        /* 42, 43, 0x55 (RW2), "RO"/"RS" (ORF) */
	guint64 visited[MAX_DIRS];
	guint n_visited;
	guint n_entries;        /* read so far, against MAX_ENTRIES */
	gboolean has_priority_dir;
	Size width, height;
	gboolean has_raw_data;  /* see PixTiffKind */
	PixTiffData data;       /* the image data ending furthest, see PixTiffKind */
	gboolean is_judging_data; /* a kind was asked for: walk the data arrays
	                           (else only ask for them, as rounds do) */
} Reader;

static guint64 rd_uint(const Reader *r, const guint8 *p, guint bytes)
{
	guint64 v = 0;
	for (guint i = 0; i < bytes; i++)
		v = r->is_big_endian ? v << 8 | p[i] : v | (guint64)p[i] << (8 * i);
	return v;
}

/* `bytes` bytes at `off` as an unsigned number; FALSE when not at hand. */
static gboolean rd_at(const Reader *r, guint64 off, guint bytes, guint64 *out)
{
	if (off > r->size || bytes > r->size - off)
		return FALSE;
	const guint8 *p = r->get(r->src, off, bytes);
	if (p == NULL)
		return FALSE;
	*out = rd_uint(r, p, bytes);
	return TRUE;
}

/* Bytes per value of a field type (BigTIFF's 8-byte kinds included). */
static guint rd_type_size(guint16 type)
{
	switch (type) {
	case 16: case 17: case 18:
		return 8;
	default:
		return type_size(type);
	}
}

static void dir_clear(Dir *d)
{
	g_free(d->entries);
	d->entries = NULL;
	d->n = 0;
}

/* Reads the directory at `off` into `d` (cleared first).  Returns FALSE,
 * leaving `d` empty, when it was visited before (a loop), its entries run
 * past the TIFF's end, or its entry count is not at hand; a directory
 * only partly at hand keeps the entries before the gap. */
static gboolean read_dir(Reader *r, guint64 off, Dir *d)
{
	guint entry_size = r->is_big_tiff ? 20 : 12, count_size = r->is_big_tiff ? 8 : 2;
	guint word = r->is_big_tiff ? 8 : 4;
	guint64 total, n, next;

	dir_clear(d);
	d->next = 0;
	if (off < 8 || r->n_visited == MAX_DIRS)
		return FALSE;
	for (guint i = 0; i < r->n_visited; i++) {
		if (r->visited[i] == off)
			return FALSE;
	}
	r->visited[r->n_visited++] = off;
	if (!rd_at(r, off, count_size, &total))
		return FALSE;
	/* a directory running past the TIFF's end is garbage as a whole (as
	 * exiftool has it): its count is where the damage is */
	if (total > (r->size - off - count_size) / entry_size)
		return FALSE;
	n = MIN(total, MIN(MAX_DIR_ENTRIES, MAX_ENTRIES - r->n_entries));
	guint64 first = off + count_size, next_at = first + total * entry_size;
	/* the entries (and the next pointer) in one piece when at hand, so a
	 * getter that fetches what it lacks is asked once */
	const guint8 *all = NULL;
	if (n == total && next_at + word <= r->size)
		all = r->get(r->src, first, (gsize)(n * entry_size + word));
	if (all == NULL && n > 0)
		all = r->get(r->src, first, (gsize)(n * entry_size));
	d->entries = g_new(Entry, MAX(n, 1));
	for (guint64 i = 0; i < n; i++) {
		guint64 e = first + i * entry_size;
		const guint8 *p = all != NULL ? all + i * entry_size : r->get(r->src, e, entry_size);
		if (p == NULL)
			break;
		Entry *en = &d->entries[d->n];
		en->tag = (guint16)rd_uint(r, p, 2);
		en->type = (guint16)rd_uint(r, p + 2, 2);
		en->count = rd_uint(r, p + 4, word);
		guint size = rd_type_size(en->type);
		en->value_off = NO_VALUE;
		en->field_off = e + 4 + word;
		if (size == 0 || en->count > G_MAXUINT32)
			;       /* an unknown type, or more values than any tag of ours has */
		else if (en->count * size <= word)
			en->value_off = e + 4 + word;
		else {
			guint64 v = rd_uint(r, p + 4 + word, word);
			if (v <= r->size && en->count * size <= r->size - v)
				en->value_off = v;
		}
		d->n++;
	}
	r->n_entries += d->n;
	if (rd_at(r, next_at, word, &next))
		d->next = next;
	return TRUE;
}

static const Entry *dir_find(const Dir *d, guint16 tag)
{
	for (guint i = 0; d != NULL && i < d->n; i++) {
		if (d->entries[i].tag == tag)
			return &d->entries[i];
	}
	return NULL;
}

/* The entry for `tag` in `d`, else in `fallback` (may be NULL). */
static const Entry *find2(const Dir *d, const Dir *fallback, guint16 tag)
{
	const Entry *e = dir_find(d, tag);
	return e != NULL ? e : dir_find(fallback, tag);
}

/* Value `i` of an integer entry. */
static gboolean entry_int(const Reader *r, const Entry *e, guint64 i, gint64 *out)
{
	guint64 v;
	if (e == NULL || e->value_off == NO_VALUE || i >= e->count)
		return FALSE;
	guint size = rd_type_size(e->type);
	if (!rd_at(r, e->value_off + i * size, size, &v))
		return FALSE;
	switch (e->type) {
	case 1: case 3: case 4: case T_UNDEFINED: case 13: case 16: case 18:
		*out = v > G_MAXINT64 ? G_MAXINT64 : (gint64)v;
		return TRUE;
	case 6:
		*out = (gint8)v;
		return TRUE;
	case 8:
		*out = (gint16)v;
		return TRUE;
	case 9:
		*out = (gint32)v;
		return TRUE;
	case 17:
		*out = (gint64)v;
		return TRUE;
	default:
		return FALSE;
	}
}

/* Value `i` of a rational, floating or integer entry as a double. */
static gboolean entry_real(const Reader *r, const Entry *e, guint64 i, double *out)
{
	guint64 num, den;
	gint64 n;
	if (e == NULL || e->value_off == NO_VALUE || i >= e->count)
		return FALSE;
	guint64 off = e->value_off + i * rd_type_size(e->type);
	switch (e->type) {
	case T_RATIONAL:
	case T_SRATIONAL:
		if (!rd_at(r, off, 4, &num) || !rd_at(r, off + 4, 4, &den) || den == 0)
			return FALSE;
		if (e->type == T_RATIONAL)
			*out = (double)num / (double)den;
		else
			*out = (double)(gint32)num / (double)(gint32)den;
		return TRUE;
	case T_FLOAT: {
		if (!rd_at(r, off, 4, &num))
			return FALSE;
		guint32 bits = (guint32)num;
		float f;
		memcpy(&f, &bits, 4);
		*out = f;
		return isfinite(*out);
	}
	case T_DOUBLE: {
		if (!rd_at(r, off, 8, &num))
			return FALSE;
		memcpy(out, &num, 8);
		return isfinite(*out);
	}
	default:
		if (!entry_int(r, e, i, &n))
			return FALSE;
		*out = (double)n;
		return TRUE;
	}
}

/* An ASCII (or UNDEFINED) entry as trimmed UTF-8, NULL (transfer full). */
static char *entry_text(const Reader *r, const Entry *e)
{
	if (e == NULL || e->value_off == NO_VALUE || e->count == 0 ||
	    (e->type != T_ASCII && e->type != T_UNDEFINED))
		return NULL;
	gsize len = (gsize)MIN(e->count, MAX_TEXT);
	return pix_meta_text(r->get(r->src, e->value_off, len), len);
}

/* Whether a field of `type` holds offsets: LONG, IFD, SLONG (seen in the
 * wild), and BigTIFF's LONG8 and IFD8. */
static gboolean is_offset_type(guint16 type)
{
	return type == 4 || type == 13 || type == 9 || type == 16 || type == 18;
}

/* A SubIFD, Exif or GPS pointer's value `i` as an offset, 0 for none. */
static guint64 entry_offset(const Reader *r, const Entry *e, guint64 i)
{
	gint64 v;
	if (e == NULL || !is_offset_type(e->type) || !entry_int(r, e, i, &v) || v <= 0)
		return 0;
	return (guint64)v;
}

/* The Exif or GPS pointer `e` of IFD0 as an offset, 0 for none.  One of
 * a type that is not an offset's (an ASCII string of 154 bytes, say) is
 * followed all the same through its value field, as libexif and exiftool
 * follow it (exiftool warns; the structure check reports it); one of an
 * offset's type whose value is 0 means none. */
static guint64 pointer_offset(const Reader *r, const Entry *e)
{
	guint64 v;
	if (e == NULL || is_offset_type(e->type) || r->is_big_tiff)
		return entry_offset(r, e, 0);
	return rd_at(r, e->field_off, 4, &v) ? v : 0;
}

/* The TIFF header: byte order, version, IFD0's offset (0 when none). */
static guint64 read_header(Reader *r)
{
	guint64 off;
	const guint8 *h = r->size >= 8 ? r->get(r->src, 0, 8) : NULL;
	if (h == NULL || !((h[0] == 'I' && h[1] == 'I') || (h[0] == 'M' && h[1] == 'M')))
		return 0;
	r->is_big_endian = h[0] == 'M';
	r->version = (guint16)rd_uint(r, h + 2, 2);
	switch (r->version) {
	case 42: case 0x55: case 0x4f52: case 0x5352:
		return rd_uint(r, h + 4, 4);
	case 43:
		r->is_big_tiff = TRUE;
		if (rd_uint(r, h + 4, 2) != 8 || !rd_at(r, 8, 8, &off))
			return 0;
		return off;
	default:
		return 0;
	}
}

/* A candidate for a pixel size: exiftool keeps the first
 * value found, unless its "priority directory" has one. */
static void note(Size *s, gint64 v, gboolean is_priority_dir)
{
	if (s->first < 0)
		s->first = v;
	if (is_priority_dir && s->priority < 0)
		s->priority = v;
}

static gint64 noted(const Size *s)
{
	return s->priority >= 0 ? s->priority : s->first;
}

/*
 * Where the pieces of an image directory's data end: offsets in `offsets`,
 * lengths in `lengths` (strips, tiles, or a JPEG preview's one piece);
 * the furthest end is noted in r->data.  Each array is asked of the getter
 * in one piece (so the rounds of meta-tiff.c fetch it), and walked only
 * when judging; arrays not at hand, of other types, or of more than
 * MAX_PIECES values are not judged.
 */
static void note_data(Reader *r, const Entry *offsets, const Entry *lengths, const char *what)
{
	if (offsets == NULL || lengths == NULL || offsets->value_off == NO_VALUE || lengths->value_off == NO_VALUE)
		return;
	guint64 n = MIN(offsets->count, lengths->count);
	guint so = rd_type_size(offsets->type), sl = rd_type_size(lengths->type);
	gboolean is_int = (offsets->type == 3 || offsets->type == 4 || offsets->type == 16) &&
	                  (lengths->type == 3 || lengths->type == 4 || lengths->type == 16);
	if (!is_int || n == 0 || n > MAX_PIECES)
		return;
	const guint8 *po = r->get(r->src, offsets->value_off, (gsize)(n * so));
	const guint8 *pl = r->get(r->src, lengths->value_off, (gsize)(n * sl));
	if (po == NULL || pl == NULL || !r->is_judging_data)
		return;
	for (guint64 i = 0; i < n; i++) {
		guint64 off = rd_uint(r, po + i * so, so), len = rd_uint(r, pl + i * sl, sl);
		guint64 end = len > G_MAXUINT64 - off ? G_MAXUINT64 : off + len;
		if (len > 0 && end > r->data.end) {
			r->data.end = end;
			r->data.off = off;
			r->data.what = what;
		}
	}
}

/*
 * One directory of an image (IFD0, IFD1.., SubIFDs, recursively) for the
 * pixel size of the main image, as exiftool reports ImageWidth and
 * ImageHeight: tags are taken in the order it meets them (a directory's
 * entries in order, a SubIFD when its pointer comes), the first value
 * found stands unless the priority directory has one; that is the first
 * directory met whose NewSubfileType is 0 (or old SubfileType 1), the
 * full-resolution image of a RAW file whose IFD0 is a preview.
 */
static void read_image_dir(Reader *r, const Dir *d, guint depth)
{
	gboolean is_priority = FALSE;
	gint64 v;

	note_data(r, dir_find(d, TAG_STRIP_OFFSETS), dir_find(d, TAG_STRIP_BYTE_COUNTS), "strip");
	note_data(r, dir_find(d, TAG_TILE_OFFSETS), dir_find(d, TAG_TILE_BYTE_COUNTS), "tile");
	note_data(r, dir_find(d, TAG_JPEG_OFFSET), dir_find(d, TAG_JPEG_LENGTH), "JPEG preview");

	for (guint i = 0; i < d->n; i++) {
		const Entry *e = &d->entries[i];
		switch (e->tag) {
		case TAG_SUBFILE_TYPE:
		case TAG_OLD_SUBFILE_TYPE:
			if (!r->has_priority_dir && entry_int(r, e, 0, &v) &&
			    v == (e->tag == TAG_SUBFILE_TYPE ? 0 : 1)) {
				r->has_priority_dir = TRUE;
				is_priority = TRUE;
			}
			break;
		case TAG_IMAGE_WIDTH:
		case TAG_IMAGE_HEIGHT:
			if (entry_int(r, e, 0, &v) && v > 0)
				note(e->tag == TAG_IMAGE_WIDTH ? &r->width : &r->height, v, is_priority);
			break;
		case TAG_PHOTOMETRIC:
			/* CFA (32803) and LinearRaw (34892): sensor data */
			if (entry_int(r, e, 0, &v) && (v == 32803 || v == 34892))
				r->has_raw_data = TRUE;
			break;
		case TAG_COMPRESSION:
			/* Nikon NEF (34713), Sony ARW (32767), Pentax PEF (65535),
			 * Samsung SRW (32769, 32770), Kodak DCR (65000) */
			if (entry_int(r, e, 0, &v) &&
			    (v == 34713 || v == 32767 || v == 65535 || v == 32769 || v == 32770 || v == 65000))
				r->has_raw_data = TRUE;
			break;
		case TAG_SUB_IFDS:
			for (guint64 k = 0; depth < MAX_DEPTH && k < MIN(e->count, MAX_SUBIFDS); k++) {
				Dir sub = { 0 };
				guint64 off = entry_offset(r, e, k);
				if (off != 0 && read_dir(r, off, &sub))
					read_image_dir(r, &sub, depth + 1);
				dir_clear(&sub);
			}
			break;
		default:
			break;
		}
	}
}

/* What Phase One's maker note gives. */
typedef struct {
	gint64 width_px;        /* -1 unknown */
	gint64 height_px;
	char *lens;             /* (owned, nullable) */
} PhaseOne;

/*
 * Phase One's maker note (IIQ files): its own directory of 16-byte
 * entries (tag, value size, byte count, value or offset from the note's
 * start, all 32-bit) with the image's pixel size (tags 0x010c, 0x010d),
 * which exiftool takes over IFD0's placeholder, and the lens (0x0412).
 */
static void read_phase_one(const Reader *outer, const Entry *note_entry, PhaseOne *out)
{
	Reader r = *outer;
	guint64 base = note_entry->value_off, len = note_entry->count, dir, n;

	if (note_entry->type != T_UNDEFINED || base == NO_VALUE || len < 12)
		return;
	const guint8 *h = r.get(r.src, base, 12);
	if (h == NULL || !(memcmp(h, "IIII", 4) == 0 || memcmp(h, "MMMMRaw", 7) == 0) ||
	    (h[0] == 'I' && memcmp(h + 5, "waR", 3) != 0))
		return;
	r.is_big_endian = h[0] == 'M';
	dir = rd_uint(&r, h + 8, 4);
	if (dir + 8 > len || !rd_at(&r, base + dir, 4, &n) || n < 2 || n > 300 || dir + 8 + 16 * n > len)
		return;
	for (guint64 i = 0; i < n; i++) {
		const guint8 *p = r.get(r.src, base + dir + 8 + 16 * i, 16);
		if (p == NULL)
			return;
		guint64 tag = rd_uint(&r, p, 4), size = rd_uint(&r, p + 8, 4), v = rd_uint(&r, p + 12, 4);
		if ((tag == 0x010c || tag == 0x010d) && size == 4 && v > 0 && v <= G_MAXINT32)
			*(tag == 0x010c ? &out->width_px : &out->height_px) = (gint64)v;
		if (tag == 0x0412 && out->lens == NULL && size > 0) {
			guint64 at = size <= 4 ? base + dir + 8 + 16 * i + 12 : base + v;
			size = MIN(size, MAX_TEXT);
			if (size <= 4 || (v <= len && size <= len - v))
				out->lens = pix_meta_text(r.get(r.src, at, (gsize)size), (gsize)size);
		}
	}
}

/* Make, model, lens, date, exposure, ISO, orientation from the main
 * directories (each may be empty): each tag from its standard directory,
 * else the other (IFD0 <-> Exif IFD). */
static void read_fields(const Reader *r, const Dir *ifd0, const Dir *exif, const Dir *ifd1, PixMeta *m)
{
	static const struct {
		guint16 date, subsec, offset;
		gboolean is_ifd0;       /* the date's standard place is IFD0 */
		const char *name;
	} sources[] = {
		{ TAG_DATE_ORIGINAL, TAG_SUBSEC_ORIGINAL, TAG_OFFSET_ORIGINAL, FALSE, "DateTimeOriginal" },
		{ TAG_DATE_DIGITIZED, TAG_SUBSEC_DIGITIZED, TAG_OFFSET_DIGITIZED, FALSE, "CreateDate" },
		{ TAG_DATE_TIME, TAG_SUBSEC, TAG_OFFSET_TIME, TRUE, "ModifyDate" },
	};
	double v;
	gint64 n;

	pix_meta_set_string(&m->make, m->make ? NULL : entry_text(r, find2(ifd0, exif, TAG_MAKE)));
	pix_meta_set_string(&m->model, m->model ? NULL : entry_text(r, find2(ifd0, exif, TAG_MODEL)));
	pix_meta_set_string(&m->lens, m->lens ? NULL : entry_text(r, find2(exif, ifd0, TAG_LENS_MODEL)));
	for (guint i = 0; i < G_N_ELEMENTS(sources); i++) {
		const Entry *e = sources[i].is_ifd0 ? find2(ifd0, exif, sources[i].date)
		                                    : find2(exif, ifd0, sources[i].date);
		g_autofree char *date = entry_text(r, e);
		if (date == NULL)
			continue;
		g_autofree char *subsec = entry_text(r, find2(exif, ifd0, sources[i].subsec));
		g_autofree char *offset = entry_text(r, find2(exif, ifd0, sources[i].offset));
		if (pix_meta_set_exif_date(m, date, subsec, offset, sources[i].name))
			break;
	}
	if (isnan(m->exposure_s) && entry_real(r, find2(exif, ifd0, TAG_EXPOSURE_TIME), 0, &v) && v > 0)
		m->exposure_s = v;
	if (isnan(m->fnumber) && entry_real(r, find2(exif, ifd0, TAG_FNUMBER), 0, &v) && v > 0)
		m->fnumber = v;
	if (isnan(m->focal_mm) && entry_real(r, find2(exif, ifd0, TAG_FOCAL_LENGTH), 0, &v) && v > 0)
		m->focal_mm = v;
	/* ISO: the first non-zero of its values (Nikon writes "0 200") */
	const Entry *iso = find2(exif, ifd0, TAG_ISO);
	for (guint64 i = 0; m->iso < 0 && iso != NULL && i < MIN(iso->count, 4); i++) {
		if (entry_int(r, iso, i, &n) && n > 0)
			m->iso = n;
	}
	if (entry_real(r, find2(exif, ifd0, TAG_APERTURE), 0, &v))
		pix_meta_set_aperture(m, v);
	if (entry_int(r, find2(exif, ifd0, TAG_EXPOSURE_PROGRAM), 0, &n))
		pix_meta_set_exposure_program(m, n);
	if (entry_int(r, find2(exif, ifd0, TAG_METERING_MODE), 0, &n))
		pix_meta_set_metering_mode(m, n);
	if (entry_int(r, find2(exif, ifd0, TAG_FLASH), 0, &n))
		pix_meta_set_flash(m, n);
	pix_meta_set_string(&m->description, m->description ? NULL : entry_text(r, find2(ifd0, exif, TAG_IMAGE_DESCRIPTION)));
	/* IFD1 (the thumbnail) as a last resort */
	if (m->orientation < 0 && (entry_int(r, find2(ifd0, exif, TAG_ORIENTATION), 0, &n) ||
	                           entry_int(r, dir_find(ifd1, TAG_ORIENTATION), 0, &n)) &&
	    n >= 1 && n <= 8)
		m->orientation = (int)n;
}

static gboolean read_coordinate(const Reader *r, const Dir *gps, guint16 tag, guint16 ref_tag, char negative_ref,
                                double limit, double *out)
{
	const Entry *e = dir_find(gps, tag);
	double dms[3];
	guint n = 0;
	while (n < 3 && entry_real(r, e, n, &dms[n]))
		n++;
	g_autofree char *ref = entry_text(r, dir_find(gps, ref_tag));
	return pix_meta_coordinate(dms, n, ref, negative_ref, limit, out);
}

static void read_gps(const Reader *r, const Dir *gps, PixMeta *m)
{
	double lat, lon, alt;
	gint64 alt_ref = 0;

	if (isnan(m->gps_lat) && isnan(m->gps_lon) &&
	    read_coordinate(r, gps, TAG_GPS_LAT, TAG_GPS_LAT_REF, 'S', 90.0, &lat) &&
	    read_coordinate(r, gps, TAG_GPS_LON, TAG_GPS_LON_REF, 'W', 180.0, &lon)) {
		m->gps_lat = lat;
		m->gps_lon = lon;
	}
	double hms[3], dir;
	guint n = 0;
	while (n < 3 && entry_real(r, dir_find(gps, TAG_GPS_TIME), n, &hms[n]))
		n++;
	g_autofree char *date_stamp = entry_text(r, dir_find(gps, TAG_GPS_DATE));
	pix_meta_set_gps_time(m, hms, n, date_stamp);
	if (entry_real(r, dir_find(gps, TAG_GPS_DIRECTION), 0, &dir)) {
		g_autofree char *ref = entry_text(r, dir_find(gps, TAG_GPS_DIRECTION_REF));
		pix_meta_set_direction(m, dir, ref);
	}
	if (isnan(m->gps_alt_m) && entry_real(r, dir_find(gps, TAG_GPS_ALT), 0, &alt)) {
		entry_int(r, dir_find(gps, TAG_GPS_ALT_REF), 0, &alt_ref);
		m->gps_alt_m = alt_ref == 1 ? -alt : alt;
	}
}

/* The pixel size of the main image of a TIFF whose IFD0 is `ifd0`: see
 * read_image_dir(); RW2's and Phase One's own tags take precedence. */
static void read_size(Reader *r, const Dir *ifd0, const PhaseOne *phase_one, PixMeta *m)
{
	gint64 width, height, a, b;
	Dir d = { 0 };

	read_image_dir(r, ifd0, 0);
	guint64 next = ifd0->next;
	for (guint i = 1; i < MAX_CHAIN && next != 0 && read_dir(r, next, &d); i++) {
		read_image_dir(r, &d, 0);
		next = d.next;
	}
	dir_clear(&d);
	width = phase_one->width_px > 0 ? phase_one->width_px : noted(&r->width);
	height = phase_one->height_px > 0 ? phase_one->height_px : noted(&r->height);
	/* RW2: the sensor's borders give the image's size (exiftool's
	 * Composite tags, which win over the placeholder IFD0 values) */
	if (r->version == 0x55) {
		if (entry_int(r, dir_find(ifd0, TAG_RW2_LEFT_BORDER), 0, &a) &&
		    entry_int(r, dir_find(ifd0, TAG_RW2_RIGHT_BORDER), 0, &b) && b > a)
			width = b - a;
		if (entry_int(r, dir_find(ifd0, TAG_RW2_TOP_BORDER), 0, &a) &&
		    entry_int(r, dir_find(ifd0, TAG_RW2_BOTTOM_BORDER), 0, &b) && b > a)
			height = b - a;
	}
	if (m->width_px < 0 && m->height_px < 0 && width > 0 && height > 0) {
		m->width_px = width;
		m->height_px = height;
	}
}

/* What RAW formats keep in their own tags rather than EXIF's. */
static void read_raw_fields(const Reader *r, const Dir *ifd0, PhaseOne *phase_one, PixMeta *m)
{
	gint64 n;
	/* RW2's IFD0 holds the ISO (tag 0x17) */
	if (m->iso < 0 && r->version == 0x55 && entry_int(r, dir_find(ifd0, TAG_RW2_ISO), 0, &n) && n > 0)
		m->iso = n;
	pix_meta_set_string(&m->lens, g_steal_pointer(&phase_one->lens));
}

/* A metadata block of IFD0 (XMP, IPTC, Photoshop resources): its bytes
 * (copied when `out` is given), asked of the getter either way. */
static void read_block(const Reader *r, const Entry *e, GBytes **out)
{
	guint size = e != NULL ? rd_type_size(e->type) : 0;
	if (e == NULL || e->value_off == NO_VALUE || size == 0 || e->count == 0 ||
	    e->count > PIX_TIFF_MAX_BLOCK / size)
		return;
	gsize len = (gsize)(e->count * size);
	const guint8 *p = r->get(r->src, e->value_off, len);
	if (p != NULL && out != NULL && *out == NULL)
		*out = g_bytes_new(p, len);
}

void pix_tiff_kind_clear(PixTiffKind *kind)
{
	g_clear_pointer(&kind->xmp, g_bytes_unref);
	g_clear_pointer(&kind->iptc, g_bytes_unref);
	g_clear_pointer(&kind->irb, g_bytes_unref);
}

void pix_tiff_read(PixTiffGetFn get, void *src, guint64 size, PixTiffRole ifd0_role, PixMeta *m, PixTiffKind *kind)
{
	Reader r = { .get = get, .src = src, .size = size, .width = { -1, -1 }, .height = { -1, -1 },
		     .is_judging_data = kind != NULL };
	Dir first = { 0 }, exif = { 0 }, gps = { 0 }, ifd1 = { 0 };
	PhaseOne phase_one = { -1, -1, NULL };

	guint64 off = read_header(&r);
	if (off == 0 || !read_dir(&r, off, &first))
		return;
	switch (ifd0_role) {
	case PIX_TIFF_ROLE_EXIF:
		read_fields(&r, NULL, &first, NULL, m);
		break;
	case PIX_TIFF_ROLE_GPS:
		read_gps(&r, &first, m);
		break;
	case PIX_TIFF_ROLE_MAIN:
	default:
		read_dir(&r, pointer_offset(&r, dir_find(&first, TAG_EXIF_IFD)), &exif);
		read_dir(&r, pointer_offset(&r, dir_find(&first, TAG_GPS_IFD)), &gps);
		if (first.next != 0)
			read_dir(&r, first.next, &ifd1);
		read_fields(&r, &first, &exif, &ifd1, m);
		read_gps(&r, &gps, m);
		const Entry *note_entry = dir_find(&exif, TAG_MAKER_NOTE);
		if (note_entry != NULL)
			read_phase_one(&r, note_entry, &phase_one);
		read_raw_fields(&r, &first, &phase_one, m);
		/* the size walk visits IFD1 (and any directory) again, not IFD0 */
		r.n_visited = 1;
		r.visited[0] = off;
		read_size(&r, &first, &phase_one, m);
		read_block(&r, dir_find(&first, TAG_XMP), kind != NULL ? &kind->xmp : NULL);
		read_block(&r, dir_find(&first, TAG_IPTC), kind != NULL ? &kind->iptc : NULL);
		read_block(&r, dir_find(&first, TAG_PHOTOSHOP), kind != NULL ? &kind->irb : NULL);
		if (kind != NULL) {
			kind->is_dng = dir_find(&first, TAG_DNG_VERSION) != NULL;
			kind->has_raw_data = r.has_raw_data || kind->is_dng || phase_one.width_px > 0;
			kind->data = r.data;
		}
		break;
	}
	dir_clear(&first);
	dir_clear(&exif);
	dir_clear(&gps);
	dir_clear(&ifd1);
	g_free(phase_one.lens);
}

typedef struct {
	const guint8 *data;
	gsize len;
} MemSrc;

static const guint8 *get_mem(void *src, guint64 off, gsize len)
{
	const MemSrc *mem = src;
	if (off > mem->len || len > mem->len - off)
		return NULL;
	return mem->data + off;
}

void pix_tiff_read_mem(const guint8 *data, gsize len, PixTiffRole ifd0, PixMeta *m)
{
	MemSrc mem = { data, len };
	pix_tiff_read(get_mem, &mem, len, ifd0, m, NULL);
}

/* --- embedded previews (pix_tiff_previews) --- */

typedef struct {
	PixPreview *out;
	guint max, n;
} Previews;

static void add_preview(Previews *p, guint64 off, guint64 len)
{
	if (len < 4 || off > G_MAXUINT64 - len || p->n == p->max)
		return;
	for (guint i = 0; i < p->n; i++)
		if (p->out[i].off == off)
			return;         /* one preview named twice (IFD0's and a SubIFD's) */
	p->out[p->n++] = (PixPreview){ .off = off, .len = len, .kind = PIX_PREVIEW_RAW };
}

/* One directory's JPEG preview: a JPEGInterchangeFormat pointer, or a
 * single strip of JPEG data (Compression 6 or 7) that is not the sensor's
 * (lossless JPEG of CFA or LinearRaw data, a CR2's sliced raw image); a
 * strip that needs the directory's JPEGTables is not a whole JPEG. */
static void dir_previews(Reader *r, const Dir *d, guint depth, Previews *p)
{
	gint64 off, len, v;
	if (entry_int(r, dir_find(d, TAG_JPEG_OFFSET), 0, &off) &&
	    entry_int(r, dir_find(d, TAG_JPEG_LENGTH), 0, &len) && off > 0 && len > 0)
		add_preview(p, (guint64)off, (guint64)len);
	const Entry *so = dir_find(d, TAG_STRIP_OFFSETS), *sc = dir_find(d, TAG_STRIP_BYTE_COUNTS);
	gboolean is_sensor = (entry_int(r, dir_find(d, TAG_PHOTOMETRIC), 0, &v) && (v == 32803 || v == 34892)) ||
	                     dir_find(d, TAG_CR2_SLICE) != NULL;
	if (entry_int(r, dir_find(d, TAG_COMPRESSION), 0, &v) && (v == 6 || v == 7) && !is_sensor &&
	    so != NULL && sc != NULL && so->count == 1 && sc->count == 1 && dir_find(d, TAG_JPEG_TABLES) == NULL &&
	    entry_int(r, so, 0, &off) && entry_int(r, sc, 0, &len) && off > 0 && len > 0)
		add_preview(p, (guint64)off, (guint64)len);
	/* RW2's JpgFromRaw: the whole JPEG as the tag's value */
	const Entry *rw2 = r->version == 0x55 ? dir_find(d, TAG_RW2_JPG_FROM_RAW) : NULL;
	if (rw2 != NULL && rw2->value_off != NO_VALUE && rw2->type == T_UNDEFINED)
		add_preview(p, rw2->value_off, rw2->count);
	const Entry *subs = dir_find(d, TAG_SUB_IFDS);
	for (guint64 k = 0; subs != NULL && depth < MAX_DEPTH && k < MIN(subs->count, MAX_SUBIFDS); k++) {
		Dir sub = { 0 };
		guint64 at = entry_offset(r, subs, k);
		if (at != 0 && read_dir(r, at, &sub))
			dir_previews(r, &sub, depth + 1, p);
		dir_clear(&sub);
	}
}

guint pix_tiff_previews(PixTiffGetFn get, void *src, guint64 size, PixPreview *out, guint max)
{
	Reader r = { .get = get, .src = src, .size = size, .width = { -1, -1 }, .height = { -1, -1 } };
	Previews p = { out, max, 0 };
	Dir d = { 0 };
	guint64 off = read_header(&r);
	for (guint i = 0; i < MAX_CHAIN && off != 0 && read_dir(&r, off, &d); i++) {
		dir_previews(&r, &d, 0, &p);
		off = d.next;
	}
	dir_clear(&d);
	return p.n;
}

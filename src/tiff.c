/*
 * tiff.c: TIFF structure checks (see tiff.h).
 *
 * Reads the buffer it is given, nothing else; runs on the hash threads.
 *
 * Invariants:
 *  1. Every read of the buffer is preceded by a bounds check against
 *     `len`, done in 64-bit arithmetic (counts times sizes cannot wrap).
 *  2. The walk is finite: at most MAX_IFDS directories are visited, and an
 *     offset is never visited twice (a repeat is reported as a loop).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tiff.h"

#define MAX_IFDS 32
#define MAX_CHAIN 8

#define TAG_EXIF_IFD 0x8769
#define TAG_GPS_IFD 0x8825
#define TAG_INTEROP_IFD 0xa005

typedef struct {
	const guint8 *data;
	gsize len;
	guint64 total_len;
	gboolean is_big_endian;
	guint32 visited[MAX_IFDS];
	guint n_visited;
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

/* Checks one IFD at `off`; sets *next to its next-IFD offset. Returns
 * FALSE when it could not be read at all. */
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
	if (w->n_visited == MAX_IFDS) {
		problem(w, g_strdup_printf("more than %d directories", MAX_IFDS));
		return FALSE;
	}
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
		if (tag == TAG_EXIF_IFD && next != NULL)
			sub = "Exif IFD";
		else if (tag == TAG_GPS_IFD && next != NULL)
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

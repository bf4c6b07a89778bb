/*
 * meta-xmpext.c: a JPEG's ExtendedXMP put together from its parts (see
 * meta-int.h).
 *
 * An XMP packet larger than a JPEG segment (64 KiB) is split by its
 * writer (Photoshop, Lightroom, exiftool) into the main packet, in the
 * usual APP1, and an extended packet cut into parts, each in an APP1 of
 * its own: "http://ns.adobe.com/xmp/extension/\0", the GUID (32 hex
 * digits: the MD5 of the extended packet, which the main packet names in
 * xmpNote:HasExtendedXMP), the extended packet's full length and this
 * part's offset in it (32-bit big-endian each), then the part.  Parts
 * may come in any order; only the GUID the main packet names counts, and
 * that is known only once the main packet is read, so the parts of the
 * first MAX_GUIDS GUIDs met are kept.
 *
 * Reads the segments meta-jpeg.c hands over; writes the packet at the
 * end.  Runs on a hash thread.
 *
 * Invariants (ext_check(), asserted after each part):
 *  1. At most MAX_GUIDS GUIDs, MAX_PARTS parts and MAX_EXT_BYTES bytes of
 *     parts are kept for each; a part lies within its declared full
 *     length, which is the same for every part of a GUID (a part that
 *     says otherwise is damage, not kept); a GUID whose length is over
 *     MAX_EXT_BYTES keeps no part, only its damage.
 *  2. A packet is handed out only whole: every byte of its full length
 *     covered by a part.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bytes.h"
#include "meta-int.h"

#include <string.h>

#define GUID_LEN 32
#define MAX_GUIDS 2
#define MAX_PARTS 1024
#define MAX_EXT_BYTES (8u << 20)

typedef struct {
	guint32 off;
	GBytes *bytes;          /* (owned) */
} Part;

typedef struct {
	char guid[GUID_LEN + 1];
	guint32 full_len;
	GArray *parts;          /* Part */
	gsize n_bytes;          /* bytes of parts kept */
	char *damage;           /* the first thing wrong with its parts (owned) */
} Packet;

struct PixXmpExt {
	Packet packets[MAX_GUIDS];
	guint n;
	guint n_ignored;        /* parts of further GUIDs, not kept */
};

static void part_clear(gpointer p)
{
	g_bytes_unref(((Part *)p)->bytes);
}

PixXmpExt *pix_xmp_ext_new(void)
{
	return g_new0(PixXmpExt, 1);
}

void pix_xmp_ext_free(PixXmpExt *x)
{
	if (x == NULL)
		return;
	for (guint i = 0; i < x->n; i++) {
		g_array_unref(x->packets[i].parts);
		g_free(x->packets[i].damage);
	}
	g_free(x);
}

static gboolean ext_check(const PixXmpExt *x)
{
	if (x->n > MAX_GUIDS)
		return FALSE;
	for (guint i = 0; i < x->n; i++) {
		const Packet *p = &x->packets[i];
		gsize total = 0;
		/* a packet declared too long keeps no part (it is damage) */
		if (p->parts->len > MAX_PARTS || (p->full_len > MAX_EXT_BYTES && (p->parts->len > 0 || p->damage == NULL)))
			return FALSE;
		for (guint k = 0; k < p->parts->len; k++) {
			const Part *part = &g_array_index(p->parts, Part, k);
			gsize len = g_bytes_get_size(part->bytes);
			if (part->off > p->full_len || len > p->full_len - part->off)
				return FALSE;
			total += len;
		}
		if (total != p->n_bytes || total > MAX_EXT_BYTES)
			return FALSE;
	}
	return TRUE;
}

static void damage(Packet *p, char *what)
{
	if (p->damage == NULL)
		p->damage = what;
	else
		g_free(what);
}

void pix_xmp_ext_add(PixXmpExt *x, const guint8 *data, gsize len)
{
	if (len < GUID_LEN + 8)
		return;         /* not even a header: nothing to name it by */
	char guid[GUID_LEN + 1];
	memcpy(guid, data, GUID_LEN);
	guid[GUID_LEN] = '\0';
	guint32 full_len = pix_be32(data + GUID_LEN), off = pix_be32(data + GUID_LEN + 4);
	const guint8 *part = data + GUID_LEN + 8;
	gsize part_len = len - GUID_LEN - 8;

	Packet *p = NULL;
	for (guint i = 0; i < x->n && p == NULL; i++)
		if (memcmp(x->packets[i].guid, guid, GUID_LEN) == 0)
			p = &x->packets[i];
	if (p == NULL) {
		if (x->n == MAX_GUIDS) {
			x->n_ignored++;
			return;
		}
		p = &x->packets[x->n++];
		memcpy(p->guid, guid, sizeof guid);
		p->full_len = full_len;
		p->parts = g_array_new(FALSE, FALSE, sizeof(Part));
		g_array_set_clear_func(p->parts, part_clear);
		if (full_len > MAX_EXT_BYTES)
			damage(p, g_strdup_printf("extended XMP of %u bytes: more than the %u MiB read", full_len,
			                          MAX_EXT_BYTES >> 20));
	}
	if (p->full_len > MAX_EXT_BYTES)
		return;
	if (full_len != p->full_len)
		damage(p, g_strdup_printf("extended XMP parts disagree on its length (%u, %u bytes)", p->full_len, full_len));
	else if (off > full_len || part_len > full_len - off)
		damage(p, g_strdup_printf("an extended XMP part at offset %u runs past its length (%u bytes)", off, full_len));
	else if (p->parts->len == MAX_PARTS || p->n_bytes + part_len > MAX_EXT_BYTES)
		damage(p, g_strdup_printf("extended XMP in more than %u parts or %u MiB", MAX_PARTS, MAX_EXT_BYTES >> 20));
	else if (part_len > 0) {
		Part k = { off, g_bytes_new(part, part_len) };
		g_array_append_val(p->parts, k);
		p->n_bytes += part_len;
	}
	g_assert(ext_check(x));
}

static gint by_offset(gconstpointer a, gconstpointer b)
{
	const Part *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

GBytes *pix_xmp_ext_take(PixXmpExt *x, const char *guid, char **problem)
{
	*problem = NULL;
	if (x == NULL || guid == NULL)
		return NULL;
	g_autofree char *want = g_strstrip(g_strdup(guid));
	if (strlen(want) != GUID_LEN || strspn(want, "0123456789abcdefABCDEF") != GUID_LEN) {
		*problem = g_strdup("the extended XMP its main packet names is not named by a GUID of 32 hex digits");
		return NULL;
	}
	Packet *p = NULL;
	for (guint i = 0; i < x->n && p == NULL; i++)
		if (g_ascii_strcasecmp(x->packets[i].guid, want) == 0)
			p = &x->packets[i];
	if (p == NULL) {
		*problem = g_strdup_printf("the extended XMP its main packet names (%s) is not in the file", want);
		return NULL;
	}
	if (p->damage != NULL) {
		*problem = g_strdup(p->damage);
		return NULL;
	}
	g_array_sort(p->parts, by_offset);
	guint8 *whole = g_malloc(p->full_len + 1);
	guint32 covered = 0;
	for (guint k = 0; k < p->parts->len; k++) {
		const Part *part = &g_array_index(p->parts, Part, k);
		gsize len;
		const guint8 *data = g_bytes_get_data(part->bytes, &len);
		if (part->off > covered)
			break;  /* a gap */
		memcpy(whole + part->off, data, len);
		covered = MAX(covered, part->off + (guint32)len);
	}
	if (covered < p->full_len || p->full_len == 0) {
		*problem = g_strdup_printf("extended XMP incomplete: its parts cover %u of its %u bytes", covered, p->full_len);
		g_free(whole);
		return NULL;
	}
	return g_bytes_new_take(whole, p->full_len);
}

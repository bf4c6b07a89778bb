/*
 * exif.c: EXIF blocks into PixMeta (see exif.h).
 *
 * Reads the block it is given; writes the PixMeta it is given.  Runs on the
 * hash threads.
 *
 * Invariants:
 *  1. The whole block is checked and read; nothing outside it is touched
 *     (tiff.c's bounds checks).
 *  2. A damaged block still gives the fields the reader reached: the
 *     damage is reported, not a reason to drop what is sound.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "exif.h"

#include <string.h>

gboolean pix_exif_read_tiff(const guint8 *tiff, gsize len, PixTiffRole role, PixMeta *m, char **problem)
{
	g_autofree char *damage = pix_tiff_check(tiff, len, len);
	pix_tiff_read_mem(tiff, len, role, m);
	*problem = damage != NULL ? g_strdup_printf("corrupt EXIF: %s", damage) : NULL;
	return damage == NULL;
}

gboolean pix_exif_read(const guint8 *data, gsize len, PixMeta *m, char **problem)
{
	static const guint8 header[6] = { 'E', 'x', 'i', 'f', 0, 0 };

	if (len < 6 + 8 || memcmp(data, header, 6) != 0 ||
	    !((data[6] == 'I' && data[7] == 'I') || (data[6] == 'M' && data[7] == 'M'))) {
		*problem = g_strdup("corrupt EXIF: no TIFF header");
		return FALSE;
	}
	return pix_exif_read_tiff(data + 6, len - 6, PIX_TIFF_ROLE_MAIN, m, problem);
}

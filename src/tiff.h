/*
 * tiff.h: our own reader of TIFF structure (the IFDs behind EXIF in JPEG,
 * TIFF and TIFF-based RAW files), independent of libexif.
 *
 * libexif accepts a great deal of damage silently (IFDs that overlap,
 * values pointing outside the block, sub-IFD pointers of the wrong type,
 * IFD loops); an indexer must say that a file is damaged, so this walks
 * the structure itself and reports the first problem it finds.
 *
 * Thread-safety: pure functions of their arguments.
 */
#ifndef PIX_TIFF_H
#define PIX_TIFF_H

#include <glib.h>

/*
 * Checks the TIFF structure at `data` (a TIFF header at data[0]): the IFD0
 * chain (IFD0, IFD1, ... up to 8 directories; further ones are not
 * checked), the Exif and GPS IFDs of IFD0 and the Interoperability IFD of
 * the Exif IFD (a pointer of count 0 or value 0 means none).  `len` bytes are at hand out of a
 * TIFF of `total_len` bytes (>= len; the whole file for a TIFF file):
 * structures that lie in [len, total_len) cannot be checked and pass.
 * Returns NULL when sound, else what is wrong (transfer full), e.g.
 * "bad IFD1 directory at offset 4660".
 */
char *pix_tiff_check(const guint8 *data, gsize len, guint64 total_len);

#endif

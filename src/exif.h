/*
 * exif.h: an EXIF block's fields into PixMeta, through our TIFF reader.
 *
 * One mechanism for every container that carries EXIF (a JPEG's APP1, a
 * PNG's eXIf, a WebP's EXIF chunk, HEIF's Exif item, RAF's and MRW's
 * embedded blocks, CR3's CMT boxes): the structure check (pix_tiff_check)
 * names the damage, our reader (pix_tiff_read_mem) takes the fields.
 * libexif did the second until issue 24: it parsed every block a second
 * time (and its maker notes), which was the largest single cost of a
 * small JPEG's metadata, for the fields our reader already read the same
 * way (samples and the exiftool oracle alike).
 *
 * Thread-safety: pure functions of their arguments, but for the PixMeta.
 */
#ifndef PIX_EXIF_H
#define PIX_EXIF_H

#include "item.h"
#include "tiff.h"

/*
 * Reads the TIFF structure of an EXIF block, `len` bytes at `tiff`, whose
 * IFD0 plays `role`, into `meta`, filling only fields that are unknown
 * there (NULL, NAN, -1), so an earlier source keeps precedence (a date
 * from a worse tag gives way: pix_meta_set_exif_date()).  GPS latitude and
 * longitude are one value: filled together, when both are unknown.
 * Returns FALSE and sets *problem (transfer full), "corrupt EXIF: ...",
 * when the structure is damaged; the fields that could be read are kept.
 */
gboolean pix_exif_read_tiff(const guint8 *tiff, gsize len, PixTiffRole role, PixMeta *meta, char **problem);

/*
 * The same for `len` bytes at `data` in the APP1 form ("Exif\0\0" followed
 * by a TIFF header, as in a JPEG's APP1 segment), read as role MAIN; no
 * such header is a problem too.
 */
gboolean pix_exif_read(const guint8 *data, gsize len, PixMeta *meta, char **problem);

#endif

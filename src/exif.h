/*
 * exif.h: the one place that talks to libexif.
 *
 * Decodes an EXIF block (the TIFF structure of a JPEG APP1 segment, or of a
 * TIFF-based file) into PixMeta fields, working around libexif's traps:
 * it is created without FOLLOW_SPECIFICATION and IGNORE_UNKNOWN_TAGS (which
 * invent tags the file lacks and drop tags in unexpected IFDs), and GPS
 * tags are looked up in the GPS IFD only (their numbers collide with the
 * Interoperability IFD's).
 *
 * Thread-safety: reentrant; nothing is shared between calls.
 */
#ifndef PIX_EXIF_H
#define PIX_EXIF_H

#include "item.h"

/*
 * Reads `len` bytes at `data` ("Exif\0\0" followed by a TIFF header, as in
 * a JPEG APP1 segment) into `meta`, filling only fields that are unknown
 * there (NULL, NAN, -1), so an earlier source keeps precedence.  GPS
 * latitude and longitude are one value: filled together, when both are
 * unknown.  Returns FALSE and sets *problem (transfer full) when the block is
 * damaged (libexif reported corrupt data, or no TIFF header); fields read
 * before the damage are kept.
 */
gboolean pix_exif_read(const guint8 *data, gsize len, PixMeta *meta, char **problem);

#endif

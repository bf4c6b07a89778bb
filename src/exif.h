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

/*
 * Helpers shared with tiff.c (our own TIFF reader), so both readers turn
 * the same raw values into the same fields.
 */

/* An ASCII (or UNDEFINED) value of `size` bytes, cut at its first NUL, as
 * trimmed UTF-8 (Latin-1 converted); NULL when empty (transfer full). */
char *pix_exif_text(const guint8 *data, gsize size);
/* Stores `value` (transfer full, may be NULL) in `*field` when that is
 * still NULL, else frees it. */
void pix_exif_set_string(char **field, char *value);
/*
 * Sets m->date_taken, date_tz and date_source from an EXIF date
 * "YYYY:MM:DD HH:MM:SS" (`date`), its sub-second digits and "+HH:MM"
 * offset (each may be NULL; invalid ones are ignored).  `source` is a
 * static tag name: "DateTimeOriginal", "CreateDate" or "ModifyDate".  A
 * date already known stays, unless it came from a worse one of these
 * three (a ModifyDate read by libexif gives way to the DateTimeOriginal
 * our reader finds beyond its reach, a CR3's CMT1 ModifyDate to CMT2's
 * DateTimeOriginal); dates from other sources (XMP, QuickTime) always
 * stay.  Returns TRUE when the date is settled at `source`'s rank or
 * better, FALSE when `date` is blank or garbage (so the caller tries its
 * next source).
 */
gboolean pix_exif_set_date(PixMeta *m, const char *date, const char *subsec, const char *offset,
                           const char *source);
/*
 * Degrees, minutes and seconds (the first `n` of them, n <= 3; missing
 * ones count 0) and a hemisphere reference ("S" or "W" negates when it
 * starts with `negative_ref`) as signed degrees in *out.  FALSE when n is
 * 0 or the result is not finite or beyond +-`limit`.
 */
gboolean pix_exif_coordinate(const double *dms, guint n, const char *ref, char negative_ref, double limit,
                             double *out);

#endif

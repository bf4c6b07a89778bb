/*
 * meta-value.h: values as files store them (text, numbers, dates, GPS
 * degrees) turned into PixMeta fields, one way for every reader: our TIFF
 * reader (tiff.c, EXIF blocks through exif.c), XMP (meta-xmp.c), QuickTime
 * (meta-bmff.c) and the RAW makers' blocks (meta-crw.c, meta-x3f.c).
 *
 * Thread-safety: pure functions, but for those that store into the
 * PixMeta they are given.
 */
#ifndef PIX_META_VALUE_H
#define PIX_META_VALUE_H

#include "item.h"

/* --- numbers --- */

/* The number in `len` decimal digits at `s`, or -1 when one is not a digit. */
int pix_meta_digits(const char *s, int len);
/*
 * A decimal number at *s ("12", "-3.25", "+.5"; no exponent, no "inf"),
 * signed when `is_signed`; *s is moved past it.  At most 30 digits on
 * each side of the point, so the value stays finite.
 */
gboolean pix_meta_parse_decimal(const char **s, gboolean is_signed, double *out);
/* "n/d" or a decimal, the whole of `s`, finite. */
gboolean pix_meta_parse_rational(const char *s, double *out);
/* An integer, the whole of `s`, within [min, max]. */
gboolean pix_meta_parse_int(const char *s, gint64 min, gint64 max, gint64 *out);
/*
 * Degrees, minutes and seconds (the first `n` of them, n <= 3; missing
 * ones count 0) and a hemisphere reference ("S" or "W" negates when it
 * starts with `negative_ref`) as signed degrees in *out.  FALSE when n is
 * 0 or the result is not finite or beyond +-`limit`.
 */
gboolean pix_meta_coordinate(const double *dms, guint n, const char *ref, char negative_ref, double limit,
                             double *out);

/* The EXIF codes, each into its field when still unknown and one of the
 * values EXIF defines: ExposureProgram 0..9, MeteringMode 0..6 or 255
 * (other), Flash a bit field up to 0x7f. */
void pix_meta_set_exposure_program(PixMeta *m, gint64 v);
void pix_meta_set_metering_mode(PixMeta *m, gint64 v);
void pix_meta_set_flash(PixMeta *m, gint64 v);
/* ApertureValue (APEX) into m->aperture, when still unknown and sane
 * (-2 < apex < 64: f/0.5 to beyond any lens). */
void pix_meta_set_aperture(PixMeta *m, double apex);
/* GPSImgDirection and its reference ("T", "M"; NULL or anything else: not
 * given) into m->gps_direction and gps_direction_ref, when still unknown
 * and `deg` is in [0, 360] (360 is north, stored as 0). */
void pix_meta_set_direction(PixMeta *m, double deg, const char *ref);

/* --- text --- */

/* An ASCII (or UNDEFINED) value of `size` bytes, cut at its first NUL, as
 * trimmed UTF-8 (Latin-1 converted); NULL when empty (transfer full). */
char *pix_meta_text(const guint8 *data, gsize size);
/* Stores `value` (transfer full, may be NULL) in `*field` when that is
 * still NULL, else frees it. */
void pix_meta_set_string(char **field, char *value);

/* --- dates --- */

/*
 * A date with a time: ISO 8601 as XMP and QuickTime write it
 * ("2004-08-27T13:52:55", with optional seconds, fraction and "Z" /
 * "+hh:mm" / "+hhmm" offset), or EXIF's "2004:08:27 13:52:55" as Exiv2
 * copies it into XMP.  A date alone ("2004-08-27") says nothing of the
 * time: refused, as is anything else that is not a real date of the
 * calendar (2005-02-30 is not; years from 1800).  On success, *date is
 * "YYYY-MM-DDTHH:MM:SS[.f...]" and *tz "+HH:MM" or NULL (both transfer
 * full; pass NULL to only check).
 */
gboolean pix_meta_parse_date(const char *s, char **date, char **tz);
/*
 * Unix seconds of a camera's clock as a date_taken (exiftool's
 * ConvertUnixTime: the clock's time, read as UTC); NULL for 0 (exiftool's
 * "0000:00:00 00:00:00") and what GDateTime cannot hold (transfer full).
 */
char *pix_meta_clock_date(gint64 secs);
/*
 * Sets m->date_taken, date_tz and date_source from an EXIF date
 * "YYYY:MM:DD HH:MM:SS" (`date`), its sub-second digits and "+HH:MM"
 * offset (each may be NULL; invalid ones are ignored).  `source` is a
 * static tag name: "DateTimeOriginal", "CreateDate" or "ModifyDate".  A
 * date already known stays, unless it came from a worse one of these
 * three (a ModifyDate of one EXIF block gives way to the DateTimeOriginal
 * of a later one, a CR3's CMT1 ModifyDate to CMT2's
 * DateTimeOriginal); dates from other sources (XMP, QuickTime) always
 * stay.  Returns TRUE when the date is settled at `source`'s rank or
 * better, FALSE when `date` is blank or garbage (so the caller tries its
 * next source).
 */
gboolean pix_meta_set_exif_date(PixMeta *m, const char *date, const char *subsec, const char *offset,
                                const char *source);
/*
 * The GPS fix's time from GPSTimeStamp (hours, minutes, seconds: the
 * first `n` of `hms`, n <= 3, UTC) and GPSDateStamp ("YYYY:MM:DD", may be
 * NULL) into m->gps_time when still unknown: "YYYY-MM-DDTHH:MM:SS[.fff]Z"
 * with a valid date stamp, else "HH:MM:SS[.fff]".  Nothing when the time
 * is not one of a day (n < 3 or out of range).
 */
void pix_meta_set_gps_time(PixMeta *m, const double *hms, guint n, const char *date_stamp);

#endif

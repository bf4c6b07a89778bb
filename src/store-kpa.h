/*
 * store-kpa.h: KPhotoAlbum's Exif search database (exif-info.db), as
 * KPhotoAlbum 5.9 creates and fills it, for export-kpa.c.  The SQL stays
 * in store-kpa.c; doc/kphotoalbum.md lists the columns and what goes in
 * each.
 *
 * Thread-safety: a PixKpaExifDb is used by one thread.
 */
#ifndef PIX_STORE_KPA_H
#define PIX_STORE_KPA_H

#include <glib.h>

typedef struct PixKpaExifDb PixKpaExifDb;

/* One file's row.  Unknown values are NULL (strings), NAN (reals) or -1
 * (integers); the writer turns them into what KPhotoAlbum writes for a
 * file without the tag.  Strings are borrowed. */
typedef struct {
	const char *path;       /* absolute, valid UTF-8: KPhotoAlbum's key */
	const char *make;
	const char *model;
	const char *lens;
	double exposure_s;
	double fnumber;
	double focal_mm;
	gint64 iso;
	gint64 orientation;     /* EXIF 1..8 */
	double gps_lat;         /* signed decimal degrees, north positive */
	double gps_lon;         /* east positive */
	double gps_alt_m;       /* negative below sea level */
	double aperture;        /* ApertureValue, APEX (as KPhotoAlbum stores it) */
	gint64 flash;           /* EXIF Flash bit field */
	gint64 metering_mode;
	gint64 exposure_program;
	double gps_direction;   /* GPSImgDirection, degrees */
	double gps_time_h;      /* GPSTimeStamp as KPhotoAlbum keeps it: decimal hours */
} PixKpaExifRow;

/*
 * Creates KPhotoAlbum's tables and version rows in `path`, an empty file
 * (the temporary file of a PixAtomicFile), and opens a transaction for the
 * rows.  NULL with `error` set (G_FILE_ERROR, naming `display_path`,
 * the file the user will see).  (transfer full)
 */
PixKpaExifDb *pix_store_kpa_new(const char *path, const char *display_path, GError **error);
/* Adds (or replaces) the row of row->path. */
gboolean pix_store_kpa_add(PixKpaExifDb *db, const PixKpaExifRow *row, GError **error);
/*
 * Copies the rows of the exif-info.db at `old_path` that were not added,
 * but those of the files in `drop` (absolute paths: images renamed or
 * gone), so the rows KPhotoAlbum made itself stay.  An old file that is
 * not KPhotoAlbum's schema version 3 is left out (TRUE, *n_kept 0, and
 * *why says why, transfer full); FALSE with `error` set on a write error.
 * *is_same: the rows are now exactly the old file's (it need not be
 * replaced).
 */
gboolean pix_store_kpa_keep(PixKpaExifDb *db, const char *old_path, GHashTable *drop, gint64 *n_kept,
                            gboolean *is_same, char **why, GError **error);
/* Commits the rows and closes the file, so it can be synced and renamed.
 * Frees `db` either way. */
gboolean pix_store_kpa_finish(PixKpaExifDb *db, GError **error);
/* Closes without committing.  Accepts NULL. */
void pix_store_kpa_free(PixKpaExifDb *db);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixKpaExifDb, pix_store_kpa_free)

#endif

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
/* Commits the rows and closes the file, so it can be synced and renamed.
 * Frees `db` either way. */
gboolean pix_store_kpa_finish(PixKpaExifDb *db, GError **error);
/* Closes without committing.  Accepts NULL. */
void pix_store_kpa_free(PixKpaExifDb *db);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixKpaExifDb, pix_store_kpa_free)

#endif

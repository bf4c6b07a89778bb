/*
 * export-kpa.h: `photoidx export --kphotoalbum DIR`: a KPhotoAlbum
 * database (index.xml and exif-info.db, the formats of KPhotoAlbum 5.9)
 * for the images and videos the catalog holds at or below DIR, so that
 * KPhotoAlbum opens the library without reading and hashing every file
 * again.  See doc/kphotoalbum.md.
 *
 * Thread-safety: main thread; reads through a PIX_STORE_READ store.
 */
#ifndef PIX_EXPORT_KPA_H
#define PIX_EXPORT_KPA_H

#include "query.h"

typedef struct {
	gint64 n_images;      /* media entries written to index.xml */
	gint64 n_exif;        /* rows written to exif-info.db */
	gint64 n_skipped;     /* files at or below DIR not exported (no MD5, ...) */
} PixKpaExport;

/*
 * Writes DIR/index.xml and DIR/exif-info.db for the present (not missing)
 * image, RAW and video files at or below `dir` (absolute, canonical) that
 * pass `filter` (its paths are replaced by `dir`; NULL: no other
 * condition).  Each file is written to a temporary name, synced and
 * renamed over the old one, so a crash leaves the old or the new file,
 * never half of one.  An existing index.xml (a KPhotoAlbum database that
 * may hold the user's tags) is replaced only when `is_force`, and then kept
 * as index.xml~ first.
 */
gboolean pix_export_kphotoalbum(PixStore *reader, const char *dir, const PixFilter *filter, gboolean is_force,
                                PixKpaExport *out, GError **error);

#endif

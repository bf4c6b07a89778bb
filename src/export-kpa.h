/*
 * export-kpa.h: `photoidx export --kphotoalbum DIR`: the catalog's images
 * and videos at or below DIR merged into KPhotoAlbum's database there
 * (index.xml and exif-info.db, the formats of KPhotoAlbum 5.x), so that
 * KPhotoAlbum opens the library without reading and hashing every file,
 * and keeps every tag the user gave.  See doc/kphotoalbum.md.
 *
 * Thread-safety: main thread; reads through a PIX_STORE_READ store.
 */
#ifndef PIX_EXPORT_KPA_H
#define PIX_EXPORT_KPA_H

#include "export-kpa-thumbs.h"
#include "query.h"

/* An export refused for what KPhotoAlbum is doing (not the catalog's
 * failure, not DIR's). */
#define PIX_KPA_ERROR (pix_kpa_error_quark())
GQuark pix_kpa_error_quark(void);
typedef enum {
	PIX_KPA_ERROR_RUNNING,  /* a KPhotoAlbum runs on DIR */
} PixKpaError;

typedef struct {
	gboolean is_force;      /* build index.xml from the catalog alone, the
	                           old one kept as a numbered backup */
	gint64 since;           /* apply only the change log after this seq; -1: all */
	gboolean is_since_last; /* since the last export into DIR (its state file) */
	/* the photographer's metadata (issue 28) */
	const char *keywords_category; /* the category keywords go into; NULL:
	                           "Keywords" (borrowed) */
	gboolean is_merge_keywords; /* add a file's keywords, people and rating
	                           to an image KPhotoAlbum lists with tags of
	                           its own (without: only to new images and
	                           those listed with no tag but the untagged) */
} PixKpaOptions;

typedef struct {
	gint64 n_images;        /* <image> elements in index.xml */
	gint64 n_added;         /* images added */
	gint64 n_moved;         /* images whose file= was rewritten */
	gint64 n_updated;       /* images whose file changed: md5sum and size updated */
	gint64 n_gone;          /* images kept whose file is not on disk */
	gint64 n_blocked;       /* files not added: on the blocklist */
	gint64 n_excluded;      /* files not added: KPhotoAlbum's settings skip them */
	gint64 n_exif;          /* rows written to exif-info.db from the catalog */
	gint64 n_exif_kept;     /* rows kept from the old exif-info.db */
	gint64 n_skipped;       /* files not exported (no MD5, a name XML cannot hold) */
	gboolean is_unchanged;  /* both files (and the thumbnails) were already what they would be */
	gint64 seq;             /* the change log's last seq this export reflects */
	char *backup;           /* the numbered backup of index.xml made, or NULL (owned) */
	gint64 n_tagged;        /* images given keywords, people or a rating
	                           from their files */
	gint64 n_groups;        /* member groups made or extended (hierarchies) */
	PixKpaThumbsDone thumbs; /* DIR/.thumbnails (its strings owned) */
} PixKpaExport;

/* Frees what `out` owns. */
void pix_kpa_export_clear(PixKpaExport *out);

/*
 * Refuses (PIX_KPA_ERROR_RUNNING, nothing written) while a KPhotoAlbum runs
 * on `dir`.  Merges the present (not missing) image, RAW and video files at or below
 * `dir` (absolute, canonical) that pass `filter` (its paths are replaced
 * by `dir`; NULL: no other condition) into DIR/index.xml and
 * DIR/exif-info.db, creating them when absent.  An existing index.xml is
 * read first and everything in it is kept: it must parse, in a version
 * KPhotoAlbum 5.x writes, else nothing is written (FALSE, G_FILE_ERROR
 * with the reason).  The result is read back and checked before it
 * replaces the old file, which is first kept as index.xml~NNNN~.  Each
 * file is written to a temporary name, synced and renamed, so a crash
 * leaves the old or the new file, never half of one.  Then brings
 * KPhotoAlbum's thumbnail cache up to date for every image of the index
 * whose content has a thumbnail in the catalog (export-kpa-thumbs.h), at
 * the size of the cache there, else the thumbSize of kphotoalbumrc.
 */
gboolean pix_export_kphotoalbum(PixStore *reader, const char *dir, const PixFilter *filter,
                                const PixKpaOptions *opts, PixKpaExport *out, GError **error);

#endif

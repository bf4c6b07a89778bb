/*
 * export-kpa-thumbs.h: KPhotoAlbum's thumbnail cache (DIR/.thumbnails,
 * the format of KPhotoAlbum 5.7 to 6.x: `thumbnailindex` version 5 and
 * `thumb-N` data files), read, merged and written from the catalog's
 * renditions, so that KPhotoAlbum shows a library without decoding an
 * image.  See doc/kphotoalbum.md, "Thumbnails".
 *
 * The format (KPhotoAlbum's ImageManager::ThumbnailCache, big-endian as
 * QDataStream writes it):
 *
 *   int32 version (5; 4 is read too: it has no size)
 *   int32 size (px: the long edge of every thumbnail; version 5 only)
 *   int32 current file, int32 current offset (where the next one goes)
 *   int32 count (not trusted: entries are read to the end of the file)
 *   entries: QString path relative to DIR (uint32 byte length, then UTF-16BE;
 *            0xFFFFFFFF a null string), int32 file, int32 offset, int32 size
 *
 * thumb-N holds JPEGs back to back, no header; a writer moves on to the
 * next file once its offset passes 32 MiB.  A later entry for a path
 * replaces an earlier one.
 *
 * Thread-safety: main thread; one PixKpaCache per directory at a time, and
 * never while KPhotoAlbum runs on it (kpa-running.h): it holds the index
 * in memory and writes it whole when it exits.
 */
#ifndef PIX_EXPORT_KPA_THUMBS_H
#define PIX_EXPORT_KPA_THUMBS_H

#include "store.h"

#define PIX_KPA_THUMB_FILE_BYTES (32 << 20)
#define PIX_KPA_THUMB_VERSION 5
#define PIX_KPA_THUMB_DEFAULT_SIZE 256

typedef struct PixKpaCache PixKpaCache;

/*
 * Reads the cache in `thumb_dir` (DIR/.thumbnails; absent or empty: a new
 * cache), at `size_px` unless its index (version 5) names its own size,
 * which wins as it does in KPhotoAlbum.  A data file goes on to the next
 * once its offset passes `file_bytes` (PIX_KPA_THUMB_FILE_BYTES; tests
 * give less).  What cannot be read is left out and said in `why`
 * (transfer full, NULL when all was read): an index of another version
 * (all of it), the entries after a damaged one, entries whose bytes are
 * not in their data file or are no JPEG.  NULL with `error` only when
 * `thumb_dir` or the index cannot be read at all (EACCES, EIO).
 */
PixKpaCache *pix_kpa_cache_open(const char *thumb_dir, int size_px, gint64 file_bytes, char **why,
                                GError **error);
void pix_kpa_cache_free(PixKpaCache *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixKpaCache, pix_kpa_cache_free)

/* The size of its thumbnails (px, the long edge). */
int pix_kpa_cache_size(const PixKpaCache *c);
/* Whether an index was there and read (fully or in part). */
gboolean pix_kpa_cache_existed(const PixKpaCache *c);
/* Entries it holds now, and entries of the old index left out unread. */
guint pix_kpa_cache_len(const PixKpaCache *c);
guint pix_kpa_cache_n_unreadable(const PixKpaCache *c);
gboolean pix_kpa_cache_has(const PixKpaCache *c, const char *rel);
/* Drops `rel`'s entry (its bytes stay in their data file, unreferenced,
 * as KPhotoAlbum leaves them).  TRUE when there was one. */
gboolean pix_kpa_cache_drop(PixKpaCache *c, const char *rel);
/* Moves `from`'s entry to `to` (a renamed image: the same picture, no byte
 * written).  TRUE when `from` had one. */
gboolean pix_kpa_cache_rename(PixKpaCache *c, const char *from, const char *to);
/*
 * Appends a JPEG for `rel` (UTF-8, relative to DIR), replacing its entry.
 * With `share_with` (may be NULL) naming an entry added in this session
 * whose bytes are these, no byte is written: both point at them.  FALSE
 * with `error` when the data file cannot be written.
 */
gboolean pix_kpa_cache_add(PixKpaCache *c, const char *rel, const guint8 *jpeg, gsize len, const char *share_with,
                           GError **error);
/* Whether anything changed since it was read (or it is new and has
 * entries, or parts of the old one were unreadable). */
gboolean pix_kpa_cache_is_dirty(const PixKpaCache *c);
/*
 * Writes what changed: the data file being appended to (its old bytes
 * first, then the new ones: the old index stays valid until the new one
 * replaces it), then the index, version 5, entries by path; each through
 * atomic.h.  Nothing when not dirty.  Creates `thumb_dir` if needed.
 */
gboolean pix_kpa_cache_commit(PixKpaCache *c, GError **error);

/* What an export asks of one image of index.xml. */
typedef struct {
	const char *rel;        /* file= (borrowed) */
	guint8 md5[16];         /* its md5sum= (the content: the catalog's thumbnails are
	                           looked up by it) */
	int angle;              /* the image's angle in index.xml, degrees clockwise */
	gint64 width, height;   /* its width= and height= (as shown, turned), -1 unknown */
	gboolean is_changed;    /* its md5sum changed in this export: an old thumbnail shows other content */
	const char *moved_from; /* its file= before this export moved it, or NULL */
} PixKpaThumbWant;

typedef struct {
	int size_px;            /* the thumbnails' size */
	gint64 n_entries;       /* entries of the index as written */
	gint64 n_written;       /* thumbnails written from the catalog */
	gint64 n_renamed;       /* entries following a moved image */
	gint64 n_dropped;       /* entries of changed images the catalog has none of */
	gint64 n_none;          /* images of `wants` left without one (no thumbnail
	                           in the catalog, or an angle not a quarter turn) */
	gint64 n_unreadable;    /* entries of the old index that could not be read */
	gboolean is_written;    /* the index was written */
	char *why;              /* what of the old cache could not be read, or NULL (owned) */
} PixKpaThumbsDone;

void pix_kpa_thumbs_done_clear(PixKpaThumbsDone *out);

/*
 * Brings DIR/.thumbnails up to date for `wants`: an image whose entry is
 * there and whose content is unchanged keeps it; a moved one takes its old
 * path's entry; any other gets the catalog's rendition (read through
 * `reader`), at the cache's size (`size_px` for a new one) and turned by
 * its angle, as KPhotoAlbum makes its own: decoded from the stored JPEG
 * only when the size or the angle asks for it.  A changed image the
 * catalog has no thumbnail of loses its old one (KPhotoAlbum makes it
 * anew).  Writes nothing when the cache is up to date, or when there is
 * none and the catalog has no thumbnail for any of `wants`.
 */
gboolean pix_kpa_thumbs_export(PixStore *reader, const char *dir, int size_px, const PixKpaThumbWant *wants,
                               guint n, PixKpaThumbsDone *out, GError **error);

#endif

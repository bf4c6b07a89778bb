/*
 * export-xdg.h: `photoidx export --xdg-thumbnails [DIR]`: the catalog's
 * thumbnails written into the freedesktop.org thumbnail cache (the
 * Thumbnail Managing Standard, 0.9), which GNOME's file chooser and Files,
 * KDE's Dolphin and Gwenview, and most image viewers read before they
 * make a thumbnail of their own.  See doc/design.md, "Thumbnails".
 *
 * DIR (default $XDG_CACHE_HOME/thumbnails, else ~/.cache/thumbnails)
 * gets normal/ (128 px), large/ (256 px) and x-large/ (512 px): one PNG per
 * file, named by the MD5 of the file's URI (file:// and the path's bytes,
 * percent-encoded as GLib's g_filename_to_uri() does), turned upright by
 * its EXIF orientation, with the tEXt keys Thumb::URI, Thumb::MTime,
 * Thumb::Size, Thumb::Mimetype, Thumb::Image::Width and ::Height, and
 * Software.  Files 0600, folders 0700.
 *
 * Thread-safety: main thread; reads through a PIX_STORE_READ store.
 */
#ifndef PIX_EXPORT_XDG_H
#define PIX_EXPORT_XDG_H

#include "query.h"

typedef struct {
	gint64 n_files;         /* files of the filter, on disk (state ok) with an MD5 */
	gint64 n_thumbnailed;   /* of them, with a thumbnail in the catalog */
	gint64 n_written;       /* PNG files written */
	gint64 n_kept;          /* PNG files there already for the same URI and mtime */
	gint64 n_failed;        /* files whose stored thumbnail could not be read (each warned) */
} PixXdgExport;

/* The cache's default folder (transfer full). */
char *pix_xdg_thumbnails_dir(void);

/*
 * Writes the thumbnails of the files that pass `filter` (its show and
 * is_offline are replaced: files whose row is state ok, on a volume
 * mounted now) and whose content has a thumbnail in the catalog into
 * `dir` (absolute; made with its folders when missing).  A PNG already
 * there for the same URI and mtime is left as it is, whoever made it.
 * Each file is written to a temporary name in its folder and renamed;
 * the file system is synced once at the end.  The image files are never
 * opened.  FALSE with `error` when the catalog cannot be read
 * (PIX_STORE_ERROR) or `dir` cannot be written (G_FILE_ERROR).
 */
gboolean pix_export_xdg(PixStore *reader, const char *dir, const PixFilter *filter, PixXdgExport *out,
                        GError **error);

#endif

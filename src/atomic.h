/*
 * atomic.h: output files that are either the old one or the new one,
 * never half of one (exports: CSV, JSON lines, KPhotoAlbum's index.xml
 * and exif-info.db).
 *
 * The content goes to a temporary file beside the target
 * (".NAME.XXXXXX", same directory, so the rename cannot cross file
 * systems); commit syncs it, renames it over the target and syncs the
 * directory, so after a crash the target is the old file or the whole new
 * one.  Abort (or free without commit) removes the temporary file.
 *
 * Thread-safety: a PixAtomicFile is used by one thread.
 */
#ifndef PIX_ATOMIC_H
#define PIX_ATOMIC_H

#include <glib.h>
#include <stdio.h>

typedef struct PixAtomicFile PixAtomicFile;

/* Creates the temporary file for `path` with `mode` (less the umask, as
 * open(2) does).
 * NULL with `error` set (G_FILE_ERROR, naming the directory). */
PixAtomicFile *pix_atomic_new(const char *path, int mode, GError **error);
/* A stdio stream on the temporary file (transfer none; do not fclose). */
FILE *pix_atomic_stream(PixAtomicFile *af);
/* The temporary file's path, for writers that open it themselves (SQLite)
 * (transfer none). */
const char *pix_atomic_temp_path(PixAtomicFile *af);
/* Flushes, syncs and renames the temporary file over the target, then
 * syncs the directory.  FALSE with `error` set (the temporary file is
 * removed; the target is as it was).  Frees `af` either way. */
gboolean pix_atomic_commit(PixAtomicFile *af, GError **error);
/* The same without syncing the file or its directory: for a cache, where
 * a crash costs a file made again and a sync per file costs more than
 * making it.  The target is still the old file or the whole new one while
 * the system runs; the caller syncs once at the end (syncfs()). */
gboolean pix_atomic_commit_unsynced(PixAtomicFile *af, GError **error);
/* Removes the temporary file and frees `af`.  Accepts NULL. */
void pix_atomic_abort(PixAtomicFile *af);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixAtomicFile, pix_atomic_abort)

#endif

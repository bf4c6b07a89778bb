/*
 * kpa-running.h: whether a KPhotoAlbum is running on a database.
 *
 * KPhotoAlbum holds its index.xml and its thumbnail index in memory while
 * it runs and writes them whole when it saves or exits, so a file written
 * under it is lost, or names thumbnails its next writes overwrite.  An
 * export into its directory must wait until it has exited.
 *
 * Thread-safety: any thread; reads /proc and the process' settings only.
 */
#ifndef PIX_KPA_RUNNING_H
#define PIX_KPA_RUNNING_H

#include <glib.h>
#include <sys/types.h>

/*
 * The pid of a KPhotoAlbum whose database is in `dir` (absolute,
 * canonical), 0 when there is none: a process named kphotoalbum whose
 * --db names `dir`/index.xml (a path relative to its working directory,
 * or a file:// URL), or which was started without --db and whose
 * kphotoalbumrc (from its environment: XDG_CONFIG_HOME, else HOME/.config)
 * names it as imageDBFile.  A KPhotoAlbum started without --db whose
 * environment cannot be read (another user's) counts as running on `dir`
 * when its settings cannot be told: *how says which it was (transfer
 * full, with a pid).
 */
pid_t pix_kpa_running(const char *dir, char **how);

#endif

/*
 * watch.h: the inotify side of `photoidx watch`.  Keeps a watch on every
 * directory of the watched trees (the kernel API directly), turns events
 * into directories to rescan, and says when they are due: a file once it
 * is closed after writing (or moved in) and its directory has been quiet
 * for the settle time, a new directory once its own watch is in place (so
 * nothing created in it is missed), everything after a queue overflow.
 * The rescans themselves go through the scan pipeline (cmd-watch.c).
 *
 * Thread: main thread only.
 */
#ifndef PIX_WATCH_H
#define PIX_WATCH_H

#include "walk.h"

typedef struct PixWatch PixWatch;

typedef struct {
	gint64 settle_us;         /* quiet time after the last event of a directory */
	gint64 max_delay_us;      /* a directory busy for this long is rescanned anyway */
	gint64 rescan_us;         /* period of the rescans of trees without a watch
	                             (the watch limit was reached) */
} PixWatchConfig;

/* What to rescan now (pix_watch_next). */
typedef struct {
	char **roots;             /* directories to walk (canonical, none inside another) */
	GHashTable *always_list;  /* paths of directories to list even when their
	                             times did not change (a file in them changed) */
	gboolean is_full;         /* after an overflow: a full rescan, nothing trusted */
} PixWatchBatch;

void pix_watch_batch_clear(PixWatchBatch *b);

/*
 * Starts watching `roots` (canonical directories) under `walk`'s excludes
 * and mount rule.  NULL with `error` set when inotify is unavailable.
 */
PixWatch *pix_watch_new(char **roots, const PixWalkConfig *walk, const PixWatchConfig *cfg, GError **error);
void pix_watch_free(PixWatch *w);

/*
 * Waits for events until some directories are due, or a stop is requested
 * (then returns FALSE).  Fills `batch` with them.
 */
gboolean pix_watch_next(PixWatch *w, PixWatchBatch *batch);

/* Full paths of the files still open for writing: plan leaves them for a
 * later rescan (borrowed; do not change it while a rescan runs). */
GHashTable *pix_watch_busy_files(PixWatch *w);

/* How many directories have a watch. */
guint pix_watch_count(PixWatch *w);

#endif

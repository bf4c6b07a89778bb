/*
 * plan.h: compares what the walker found with what the catalog holds,
 * one directory at a time, and decides for every entry: unchanged
 * (nothing to do), new or changed (read it), moved (record the new path
 * without reading), gone (mark missing at the end of the scan).
 *
 * Input: PixListing from the walker.  Outputs: PixItems to read (to the
 * readers, in the order sched gives: per directory, or on a rotating disk
 * per window of SCHED_WINDOW files across directories, so the disk head
 * sweeps in one direction) and PixItems that need no reading
 * (directory rows, moves, missing files, special files) straight to the
 * store.  Memory stays bounded by the largest directory plus what changed.
 *
 * Two decisions are the store's, which sees the content read and this
 * run's writes: a new file recognised by its MD5 as a moved one, and
 * whether a row plan found gone is still at that path (store.c,
 * "decisions the store settles").
 *
 * Thread: pix_plan_run() runs on one thread of its own, with its own
 * reader PixStore.
 */
#ifndef PIX_PLAN_H
#define PIX_PLAN_H

#include "queue.h"
#include "sched.h"
#include "store.h"

typedef struct {
	PixStore *catalog;      /* a reader (borrowed) */
	char **roots;           /* the walked roots (borrowed) */
	char **mount_roots;     /* the roots whose emptiness may mean an unmounted
	                           disk (nothing is marked missing under an empty
	                           one); NULL: all of `roots` (borrowed) */
	PixQueue *in;           /* PixListing */
	PixQueue *to_read;      /* PixItem to read; plan closes it once */
	PixQueue *to_store;     /* PixItem to write; plan closes its producer slot once */
	PixDeviceClass device_class; /* how to order reads (sched.h) */
	gboolean is_reread;      /* every file is read again, as if flagged for a
	                            recheck (`scan --reread`: metadata a newer
	                            photoidx reads that an older one did not) */
	gboolean is_thumbnails;  /* the files read get a thumbnail made
	                            (item->want_thumb, thumb.h) */
	const PixThumbIndex *thumbs_known; /* with is_thumbnails: the contents
	                            that have one, or NULL (borrowed; it must
	                            outlive every item plan makes) */
	GHashTable *busy_files;  /* full paths of files still being written
	                            (watch): left as the catalog has them, or
	                            NULL (borrowed, read-only while plan runs) */
} PixPlanConfig;

/*
 * Consumes `in` to its end.  When the walk ran to completion (no stop
 * request), also marks missing whatever vanished.  Returns FALSE with
 * `error` set when the catalog could not be read; then it has asked every
 * stage to stop and drained `in`.  Closes its outputs in both cases.
 */
gboolean pix_plan_run(const PixPlanConfig *cfg, GError **error);

#endif

/*
 * pipeline.h: builds the stages of a scan, runs them, and shuts them down
 * in order:
 *
 *   walk -> plan -> (sched) -> read -> hash (+ meta) -> store
 *                \______________________________________^  (no read needed)
 *
 * Only pipeline.c knows this order; each stage knows its input and output
 * queues and PixItem.
 *
 * Thread-safety: call from the main thread; the store stage runs on it.
 */
#ifndef PIX_PIPELINE_H
#define PIX_PIPELINE_H

#include "read.h"
#include "sched.h"
#include "store.h"
#include "walk.h"

typedef struct {
	char **roots;             /* canonical directory paths, none inside another */
	const char *db_path;      /* the catalog (a reader is opened on it for plan) */
	PixWalkConfig walk;
	PixReadConfig read;
	guint n_hashers;
	PixDeviceClass device_class; /* ordering of reads (sched.h) */
	guint batch_items;        /* commit after this many items ... */
	gint64 batch_us;          /* ... or this long, whichever comes first */
	gboolean is_progress;     /* show a status line on stderr */
	gboolean is_reread;       /* read every file, changed or not (plan.h) */
	gboolean is_thumbnails;   /* make a thumbnail of every image read, and
	                             read the images whose content has none
	                             in the catalog (scan --thumbnails) */
	gboolean is_quick;        /* the mlocate rule: directories whose mtime and
	                             ctime are as last listed are not listed */
	/* for watch: */
	GHashTable *always_list;  /* --quick: directory paths listed anyway
	                             (a file in them changed in place), or NULL */
	gint64 trusted_scan_id;   /* --quick: listings by this run count as
	                             finished (the watch session's own), or 0 */
	GHashTable *busy_files;   /* full paths of files still being written:
	                             plan leaves them for later, or NULL */
	char **mount_roots;       /* the roots an empty listing of which may be
	                             an unmounted disk (plan.h); NULL: `roots` */
} PixPipelineConfig;

/*
 * SIGINT and SIGTERM ask the stages to stop (pix_request_stop); a second
 * one ends the process at once (exit 130: what is committed is safe).
 */
void pix_pipeline_install_signals(void);
/* The signal that asked for a stop, or 0. */
/* Forgets the stop a failed run requested, so that the next run goes
 * on (watch, after connecting to its catalog again); never one a signal
 * asked for. */
void pix_pipeline_clear_stop(void);
int pix_pipeline_stop_signal(void);

/*
 * Runs one scan of cfg->roots into the catalog through `writer` (open,
 * with pix_store_begin_scan() done).  Returns FALSE with `error` set when
 * the catalog failed (fatal); per-file problems are counted, not errors.
 * *is_interrupted tells whether a signal cut the scan short.
 */
gboolean pix_pipeline_scan(const PixPipelineConfig *cfg, PixStore *writer, gboolean *is_interrupted,
                           GError **error);

/*
 * Runs one verify: reads again the catalog's files at or below `paths`
 * (canonical; NULL: all), oldest verification first, until `max_bytes` are
 * chosen (0: no limit) or cfg->read.deadline_us, and records what each
 * holds now (store.c).  cfg->roots and cfg->walk are not used.  Returns
 * and reports as pix_pipeline_scan().
 */
gboolean pix_pipeline_verify(const PixPipelineConfig *cfg, char **paths, gint64 max_bytes, PixStore *writer,
                             gboolean *is_interrupted, GError **error);

#endif

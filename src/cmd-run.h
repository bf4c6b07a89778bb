/*
 * cmd-run.h: what the commands that read files (scan, verify) share:
 * their common options (catalog, readers, memory, output), the paths they
 * are given, the device class that orders their reads, and the exit
 * status of a run.
 *
 * Main thread only.
 */
#ifndef PIX_CMD_RUN_H
#define PIX_CMD_RUN_H

#include "cmd.h"
#include "pipeline.h"

typedef struct {
	char *db;
	char *max_memory;
	char *read_size;
	char *limit_rate;
	int n_readers;
	int n_hashers;
	char *device_class;
	gboolean is_keep_cache;
	gboolean is_json;
	gboolean is_quiet;
	gboolean is_verbose;
	gboolean is_progress;
	gboolean is_no_progress;
	gboolean is_no_wait;
} PixRunOptions;

/* What the commands that walk (scan, watch) take: which entries to skip,
 * whether to cross mounts. */
typedef struct {
	char **excludes;
	gboolean is_no_default_excludes;
	gboolean is_cross_mounts;
} PixWalkOptions;

/* Adds -x/--exclude, --no-default-excludes and --cross-mounts. */
void pix_walk_options_add(GOptionContext *ctx, PixWalkOptions *o);
void pix_walk_options_clear(PixWalkOptions *o);
/* The exclude patterns: the defaults unless refused, then the config
 * file's, then the command line's (transfer full, NULL-terminated). */
char **pix_walk_options_excludes(const PixWalkOptions *o);

/* Adds --db, --max-memory, --read-size, --readers, --device-class,
 * --hashers, --limit-rate, --keep-cache, --json, -q, -v, --progress,
 * --no-progress and --no-wait to `ctx`, parsed into `o`. */
void pix_run_options_add(GOptionContext *ctx, PixRunOptions *o);
void pix_run_options_clear(PixRunOptions *o);

/*
 * Parses the command line of `cmd` with `ctx` (its entries store the
 * remaining arguments in *paths), requires a PATH when `is_path_required`,
 * and checks the run options into `cfg` (pix_run_configure).  Returns
 * PIX_EXIT_OK, or PIX_EXIT_USAGE after saying why.
 */
int pix_run_parse(const char *cmd, GOptionContext *ctx, int argc, char **argv, char ***paths,
                  gboolean is_path_required, const PixRunOptions *o, PixPipelineConfig *cfg);

/* Checks the options of command `cmd` and fills cfg->read, n_hashers,
 * device_class (forced, or PIX_DEVICE_UNKNOWN), batches and is_progress.
 * Returns PIX_EXIT_OK, or PIX_EXIT_USAGE after saying why. */
int pix_run_configure(const char *cmd, const PixRunOptions *o, PixPipelineConfig *cfg);
/* Sets cfg->is_thumbnails; with thumbnails and no --max-memory, the read
 * buffers' cap is 16 MiB (cmd-run.c): decoding is slower than
 * reading, so a larger pool only fills up and adds to the decoders'
 * memory. */
void pix_run_set_thumbnails(const PixRunOptions *o, PixPipelineConfig *cfg, gboolean is_thumbnails);

/*
 * The canonical paths (symlinks resolved) of `paths`, those below another
 * one dropped (its walk covers them).  `is_dirs_only` refuses files.
 * Problems are warned about as "cannot VERB 'path': why"; *n_bad counts
 * them.  (transfer full, NULL-terminated)
 */
char **pix_run_canonical_paths(char **paths, const char *verb, gboolean is_dirs_only, guint *n_bad);

/*
 * The device class that orders the reads: `forced`, or the paths'
 * (a rotating disk among them makes the whole run gentle with it).  Each
 * path's device and class go to `devices` as JSON objects.
 */
PixDeviceClass pix_run_device_class(char **paths, PixDeviceClass forced, GString *devices);

/*
 * Begins a run of `command` that walks `roots`: takes the catalog `db` as
 * its writer (waiting, unless is_no_wait), fills cfg's db_path, roots,
 * device class and readers (per the roots' devices, into `devices` as
 * JSON) and walk excludes (the patterns and the catalog's own files, kept
 * in *companions, which must outlive cfg), and records the run's start.
 * NULL with *status set (and the reason printed) when it cannot.
 */
PixStore *pix_run_begin(const char *command, const char *db, char **roots, char **excludes, gboolean is_no_wait,
                        PixPipelineConfig *cfg, GString *devices, char ***companions, int *status);

/* Ends a --json summary (`js` holds the opening brace and members so far):
 * appends seconds, interrupted and exit_status, closes it and prints it. */
void pix_run_print_json(GString *js, gboolean *is_first, double secs, gboolean is_interrupted, int status);

/* How a run came to its end. */
typedef enum {
	PIX_RUN_COMPLETE,     /* it did all it was asked */
	PIX_RUN_INTERRUPTED,  /* a signal cut it short */
	PIX_RUN_STOPPED,      /* a watch ended as asked (SIGTERM: a service stopped) */
} PixRunEnd;

/*
 * Ends a run begun with pix_store_begin_scan(): when the pipeline failed
 * (!is_ok), prints why (`run_error`, freed), records the run's state and exit
 * status in the catalog, and returns that status: PIX_EXIT_FATAL
 * ('failed') when the catalog failed (during the run or now), else
 * pix_cmd_signal_status() ('interrupted') after PIX_RUN_INTERRUPTED, else
 * PIX_EXIT_OK ('done') after PIX_RUN_STOPPED (what could not be indexed was
 * said as it happened), else PIX_EXIT_PARTIAL when any warning was
 * printed or `n_bad` > 0, else PIX_EXIT_OK ('done').
 */
int pix_run_end(PixStore *writer, gboolean is_ok, GError *run_error, PixRunEnd end, guint n_bad);

#endif

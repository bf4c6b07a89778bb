/*
 * cmd-watch.c: `photoidx watch PATH...`: one scan of the trees, then
 * inotify watches on them, and every change fed through the same pipeline
 * (walk, plan, read, store) as `scan`, in rescans of the directories that
 * changed (watch.c says which, and when).
 *
 * Reads the command line; opens the catalog as its writer for the whole
 * session (one `scans` row, command 'watch'); writes diagnostics and, at
 * the end, the summary.  Main thread.
 *
 * Invariants:
 *  1. The watches are in place before the first scan walks, so nothing
 *     created during it is missed.
 *  2. A rescan lists the directories that had events and walks below them
 *     as --quick does (unchanged directories are not listed), trusting the
 *     listings of this session's earlier rescans; after an overflow it
 *     trusts nothing.
 *  3. SIGINT/SIGTERM end the current rescan (what reached the store is
 *     committed) and the session, with exit status 130.
 *  4. A PostgreSQL catalog whose connection is lost (the server restarts,
 *     the network drops) does not end the session: watch connects again,
 *     for as long as it takes (saying so), and catches up with a full
 *     rescan of every root, which trusts nothing; the rescan the loss cut
 *     short lost at most its open batch, and the events that came
 *     meanwhile are still queued.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-run.h"
#include "config.h"
#include "log.h"
#include "watch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	PixRunOptions run;
	PixWalkOptions walk;
	double settle_s;
	double rescan_s;
	char **paths;
} WatchOptions;

static void options_clear(WatchOptions *o)
{
	pix_run_options_clear(&o->run);
	pix_walk_options_clear(&o->walk);
	g_strfreev(o->paths);
}

/* One pass of the pipeline over cfg->roots, in the session's run. */
static gboolean run_pass(PixPipelineConfig *cfg, PixStore *writer, gboolean *is_interrupted, GError **error)
{
	return pix_store_begin_pass(writer, error) && pix_pipeline_scan(cfg, writer, is_interrupted, error) &&
	       pix_store_end_pass(writer, error);
}

/* Invariant 4: after a pass that failed with `error` (set), connects
 * again and rescans every root while the failure is a lost connection;
 * TRUE once a pass succeeds (error cleared), FALSE with the error else. */
static gboolean recover(PixPipelineConfig *cfg, PixStore *writer, char **roots, gboolean *is_interrupted,
                        GError **error)
{
	while (g_error_matches(*error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOST) && pix_pipeline_stop_signal() == 0) {
		pix_notice("%s: connecting again", (*error)->message);
		g_clear_error(error);
		pix_pipeline_clear_stop();
		if (!pix_store_reconnect(writer, G_MAXUINT, error))
			return FALSE;
		cfg->roots = roots;
		cfg->is_quick = FALSE;
		cfg->always_list = NULL;
		pix_info("rescanning every root: what changed while the catalog was away");
		if (run_pass(cfg, writer, is_interrupted, error))
			return TRUE;
	}
	return FALSE;
}

int pix_cmd_watch(int argc, char **argv)
{
	WatchOptions o = { .settle_s = 0.5, .rescan_s = 300 };
	GOptionEntry entries[] = {
		{ "settle", 0, 0, G_OPTION_ARG_DOUBLE, &o.settle_s, "index a directory's files once it has been quiet this long (default 0.5)", "SECONDS" },
		{ "rescan-interval", 0, 0, G_OPTION_ARG_DOUBLE, &o.rescan_s, "rescan directories that could not be watched this often (default 300)", "SECONDS" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.paths, NULL, "PATH..." },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- index directories, then keep indexing what changes in them");
	g_autoptr(GError) error = NULL;
	PixPipelineConfig cfg = { 0 };
	int status;

	g_option_context_add_main_entries(ctx, entries, NULL);
	pix_walk_options_add(ctx, &o.walk);
	pix_run_options_add(ctx, &o.run);
	g_option_context_set_summary(ctx, "Scans each PATH as 'photoidx scan' does, then watches the trees with inotify\n"
	                                  "and indexes new, changed, moved and deleted files as they settle.");
	if ((status = pix_run_parse("watch", ctx, argc, argv, &o.paths, TRUE, &o.run, &cfg)) != PIX_EXIT_OK) {
		options_clear(&o);
		return status;
	}
	if (!(o.settle_s >= 0 && o.settle_s <= 3600 && o.rescan_s >= 1 && o.rescan_s <= 86400)) {
		options_clear(&o);
		return pix_cmd_usage_error("watch", "--settle must be 0..3600 and --rescan-interval 1..86400 seconds");
	}
	cfg.walk.is_cross_mounts = o.walk.is_cross_mounts;
	cfg.is_progress = FALSE;
	/* what it reads gets a thumbnail, as a scan with them would make */
	pix_run_set_thumbnails(&o.run, &cfg, pix_config_thumbnails());
	gboolean is_no_wait = o.run.is_no_wait, is_quiet = o.run.is_quiet;
	pix_log_init(o.run.is_quiet, o.run.is_verbose);
	PixWatchConfig wcfg = {
		.settle_us = (gint64)(o.settle_s * G_USEC_PER_SEC),
		.max_delay_us = MAX((gint64)(o.settle_s * G_USEC_PER_SEC) * 2, G_USEC_PER_SEC / 4),
		.rescan_us = (gint64)(o.rescan_s * G_USEC_PER_SEC),
	};

	guint n_bad_roots;
	g_auto(GStrv) roots = pix_run_canonical_paths(o.paths, "watch", TRUE, &n_bad_roots);
	g_autofree char *db = o.run.db != NULL ? g_strdup(o.run.db) : pix_cmd_default_db();
	g_auto(GStrv) excludes = pix_walk_options_excludes(&o.walk);
	options_clear(&o);
	if (roots[0] == NULL)
		return PIX_EXIT_PARTIAL;

	g_auto(GStrv) companions = NULL;
	g_autoptr(GString) devices = g_string_new(NULL);
	g_autoptr(PixStore) writer = pix_run_begin("watch", db, roots, excludes, is_no_wait, &cfg, devices, &companions,
	                                           &status);
	if (writer == NULL)
		return status;
	PixWatch *watch = pix_watch_new(roots, &cfg.walk, &wcfg, &error);
	if (watch == NULL)
		return pix_run_end(writer, FALSE, g_steal_pointer(&error), PIX_RUN_COMPLETE, n_bad_roots);
	pix_info("watching %u directories", pix_watch_count(watch));

	/* the first scan, then a rescan per batch of settled changes */
	cfg.trusted_scan_id = pix_store_run_id(writer);
	cfg.busy_files = pix_watch_busy_files(watch);
	g_auto(GStrv) watch_roots = g_strdupv(roots);
	cfg.mount_roots = watch_roots;
	gboolean is_interrupted = FALSE;
	gboolean is_ok = pix_pipeline_scan(&cfg, writer, &is_interrupted, &error) && pix_store_end_pass(writer, &error);
	if (!is_ok)
		is_ok = recover(&cfg, writer, watch_roots, &is_interrupted, &error);
	PixWatchBatch batch = { 0 };
	while (is_ok && !is_interrupted && pix_watch_next(watch, &batch)) {
		cfg.roots = batch.roots;
		cfg.is_quick = !batch.is_full;
		cfg.always_list = batch.always_list;
		g_autofree char *first = pix_quote(batch.roots[0]);
		pix_info("rescanning '%s'%s", first, batch.roots[1] != NULL ? " and more" : "");
		is_ok = run_pass(&cfg, writer, &is_interrupted, &error) ||
		        recover(&cfg, writer, watch_roots, &is_interrupted, &error);
		pix_watch_batch_clear(&batch);
	}
	pix_watch_batch_clear(&batch);
	pix_watch_free(watch);
	is_interrupted |= pix_pipeline_stop_signal() != 0;
	/* SIGTERM is how a service is stopped (systemctl stop): the session
	 * ends as asked, a run done and exit status 0; SIGINT (Ctrl-C) is an
	 * interruption, 130 */
	PixRunEnd end = pix_pipeline_stop_signal() == SIGTERM ? PIX_RUN_STOPPED
	                : is_interrupted ? PIX_RUN_INTERRUPTED : PIX_RUN_COMPLETE;
	status = pix_run_end(writer, is_ok, g_steal_pointer(&error), end, n_bad_roots);
	if (!is_quiet)
		printf("%s%" G_GINT64_FORMAT " new, %" G_GINT64_FORMAT " changed, %" G_GINT64_FORMAT " moved, %"
		       G_GINT64_FORMAT " missing, %" G_GINT64_FORMAT " errors\n",
		       is_interrupted ? "stopped: " : "", pix_count_get(PIX_N_NEW), pix_count_get(PIX_N_CHANGED),
		       pix_count_get(PIX_N_MOVED), pix_count_get(PIX_N_MISSING), pix_count_get(PIX_N_ERRORS));
	return status;
}

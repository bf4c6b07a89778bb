/*
 * cmd-scan.c: `photoidx scan PATH...`, the first import and every rescan.
 *
 * Reads the command line; opens the catalog as its writer; runs the
 * pipeline; writes the summary (stdout) and diagnostics (stderr).  Main
 * thread.
 *
 * Invariants:
 *  1. The exit status is PIX_EXIT_FATAL whenever the catalog failed, else
 *     PIX_EXIT_INTERRUPTED after a signal, else PIX_EXIT_PARTIAL when any
 *     file or root could not be indexed, else PIX_EXIT_OK.
 *  2. The scan row records the same exit status the process returns.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-run.h"
#include "phash-fill.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "path.h"
#include "md5-lanes.h"
#include "pipeline.h"
#include "volume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	PixRunOptions run;
	PixWalkOptions walk;
	gboolean is_quick;
	gboolean is_reread;
	gboolean is_thumbnails;
	gboolean is_no_thumbnails;
	char **paths;
} ScanOptions;

static void options_clear(ScanOptions *o)
{
	pix_run_options_clear(&o->run);
	pix_walk_options_clear(&o->walk);
	g_strfreev(o->paths);
}

/* "write_rates": [{"catalog_rows": 0, "items": N, "items_per_s": R, "wall_items_per_s": W}, ...] */
static void append_write_rates(GString *js, const GArray *rates)
{
	g_string_append_c(js, '[');
	for (guint i = 0; i < rates->len; i++) {
		const PixWriteRate *r = &g_array_index(rates, PixWriteRate, i);
		g_string_append_printf(js, "%s{\"catalog_rows\":%" G_GINT64_FORMAT ",\"items\":%" G_GINT64_FORMAT
		                       ",\"busy_seconds\":%.3f,\"items_per_s\":%.0f,\"wall_items_per_s\":%.0f}",
		                       i > 0 ? "," : "", r->catalog_rows, r->items, (double)r->busy_us / 1e6,
		                       r->busy_us > 0 ? (double)r->items * 1e6 / (double)r->busy_us : 0,
		                       r->wall_us > 0 ? (double)r->items * 1e6 / (double)r->wall_us : 0);
	}
	g_string_append_c(js, ']');
}

static void print_summary(gboolean is_json, gboolean is_quiet, char **roots, const char *db, double secs, int status,
                          gboolean is_interrupted, const PixPipelineConfig *cfg, const char *devices,
                          const GArray *rates)
{
	static const struct {
		const char *key;
		PixCounter counter;
	} fields[] = {
		{ "dirs", PIX_N_DIRS }, { "new", PIX_N_NEW }, { "changed", PIX_N_CHANGED },
		{ "moved", PIX_N_MOVED }, { "missing", PIX_N_MISSING }, { "unchanged", PIX_N_UNCHANGED },
		{ "errors", PIX_N_ERRORS }, { "skipped", PIX_N_SKIPPED }, { "bytes_read", PIX_BYTES_READ },
		{ "thumbnails_made", PIX_N_THUMBS }, { "thumbnails_failed", PIX_N_THUMB_NOTES },
		{ "thumbnails_known", PIX_N_THUMBS_KNOWN }, { "phashes_filled", PIX_N_PHASHES_FILLED },
	};
	gint64 bytes = pix_count_get(PIX_BYTES_READ);
	double rate = secs > 0 ? (double)bytes / secs / 1e6 : 0;

	if (is_json) {
		g_autoptr(GString) js = g_string_new("{");
		gboolean first = TRUE;
		pix_json_key(js, "catalog", &first);
		pix_json_string(js, db);
		pix_json_key(js, "roots", &first);
		g_string_append_c(js, '[');
		for (char **r = roots; *r != NULL; r++) {
			if (r != roots)
				g_string_append_c(js, ',');
			pix_json_string(js, *r);
		}
		g_string_append_c(js, ']');
		for (guint i = 0; i < G_N_ELEMENTS(fields); i++)
			pix_json_int(js, fields[i].key, pix_count_get(fields[i].counter), &first);
		pix_json_key(js, "device_class", &first);
		pix_json_string(js, pix_device_class_name(cfg->device_class));
		pix_json_key(js, "devices", &first);
		g_string_append_printf(js, "[%s]", devices);
		pix_json_key(js, "readers", &first);
		g_string_append_printf(js, "%u", cfg->read.n_readers);
		pix_json_key(js, "io", &first);
		pix_json_string(js, pix_sched_is_uring(cfg->device_class) && !cfg->read.is_blocking ? "io_uring" : "blocking");
		pix_json_key(js, "md5_lanes", &first);
		g_string_append_printf(js, "%u", pix_md5_lane_count());
		pix_json_key(js, "meta_seconds", &first);
		g_string_append_printf(js, "%.3f", (double)(pix_count_get(PIX_NS_META) - pix_count_get(PIX_NS_SCAN)) / 1e9);
		pix_json_key(js, "scan_seconds", &first);
		g_string_append_printf(js, "%.3f", (double)pix_count_get(PIX_NS_SCAN) / 1e9);
		pix_json_key(js, "mb_per_s", &first);
		g_string_append_printf(js, "%.1f", rate);
		pix_json_key(js, "write_rates", &first);
		append_write_rates(js, rates);
		pix_run_print_json(js, &first, secs, is_interrupted, status);
		return;
	}
	if (is_quiet)
		return;
	g_autofree char *b = pix_format_bytes(bytes);
	printf("%s%" G_GINT64_FORMAT " new, %" G_GINT64_FORMAT " changed, %" G_GINT64_FORMAT " moved, %"
	       G_GINT64_FORMAT " missing, %" G_GINT64_FORMAT " unchanged, %" G_GINT64_FORMAT " errors; "
	       "read %s%s in %.2f s (%.1f MB/s)\n",
	       is_interrupted ? "interrupted: " : "",
	       pix_count_get(PIX_N_NEW), pix_count_get(PIX_N_CHANGED), pix_count_get(PIX_N_MOVED),
	       pix_count_get(PIX_N_MISSING), pix_count_get(PIX_N_UNCHANGED), pix_count_get(PIX_N_ERRORS),
	       b, bytes == 0 ? " of file data" : "", secs, rate);
}

typedef struct {
	GPtrArray *paths;       /* char*, owned: the roots mounted now */
	guint n_offline;
} KnownRoots;

/* A root the catalog knows: where it is now, or named as offline. */
static gboolean add_known_root(gpointer data, const PixRootRow *r)
{
	KnownRoots *k = data;
	char *now = pix_volume_path_now(r->volume_kind, r->volume_ident, r->rel_path, r->path);
	if (now == NULL) {
		g_autofree char *q = pix_quote(r->path);
		const char *vol = r->volume_label != NULL ? r->volume_label : r->volume_ident;
		pix_notice("'%s' is on volume '%s', which is offline: not scanned (its files are kept, as offline)", q, vol);
		k->n_offline++;
		return TRUE;
	}
	g_ptr_array_add(k->paths, now);
	return TRUE;
}

/* A run with no root to walk: records where the volumes are now. */
static int record_offline_run(const char *db, gboolean is_no_wait)
{
	g_autoptr(GError) error = NULL;
	char *none[] = { NULL };
	g_autoptr(PixStore) writer = pix_store_open(db, PIX_STORE_WRITE, is_no_wait, &error);
	if (writer == NULL || !pix_store_begin_scan(writer, "scan", none, &error) ||
	    !pix_store_end_scan(writer, "done", PIX_EXIT_OK, &error)) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}

/*
 * The roots to scan when no PATH is given: the configuration file's
 * [scan] roots, else the roots the catalog knows whose volumes are mounted
 * now (each offline one named).  NULL-terminated (transfer full), or NULL
 * after saying why with *status set.
 */
static char **default_roots(const char *db, int *status)
{
	char **config_roots = pix_config_roots();
	if (config_roots != NULL)
		return g_strdupv(config_roots);
	g_autoptr(GError) error = NULL;
	g_autoptr(PixStore) reader = pix_store_open(db, PIX_STORE_READ, FALSE, &error);
	if (reader == NULL) {
		g_autofree char *q = pix_store_display(db);
		if (g_error_matches(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN) && !g_file_test(db, G_FILE_TEST_EXISTS))
			*status = pix_cmd_usage_error("scan", "no PATH given, and there is no catalog '%s' whose roots to scan", q);
		else {
			pix_error("%s", error->message);
			*status = PIX_EXIT_FATAL;
		}
		return NULL;
	}
	KnownRoots k = { .paths = g_ptr_array_new_with_free_func(g_free) };
	if (!pix_store_each_root(reader, add_known_root, &k, &error)) {
		pix_error("%s", error->message);
		g_ptr_array_unref(k.paths);
		*status = PIX_EXIT_FATAL;
		return NULL;
	}
	if (k.paths->len == 0 && k.n_offline == 0) {
		g_ptr_array_unref(k.paths);
		*status = pix_cmd_usage_error("scan", "no PATH given, and the catalog knows no roots");
		return NULL;
	}
	g_ptr_array_add(k.paths, NULL);
	return (char **)g_ptr_array_free(k.paths, FALSE);
}

int pix_cmd_scan(int argc, char **argv)
{
	ScanOptions o = { 0 };
	GOptionEntry entries[] = {
		{ "quick", 0, 0, G_OPTION_ARG_NONE, &o.is_quick, "do not list directories whose mtime and ctime are unchanged (misses files edited in place)", NULL },
		{ "reread", 0, 0, G_OPTION_ARG_NONE, &o.is_reread, "read every file again, changed or not (to fill in what an older photoidx did not read)", NULL },
		{ "thumbnails", 0, 0, G_OPTION_ARG_NONE, &o.is_thumbnails, "make a thumbnail of every image read, and read the images that have none (also [scan] thumbnails = true)", NULL },
		{ "no-thumbnails", 0, 0, G_OPTION_ARG_NONE, &o.is_no_thumbnails, "make none, whatever the config file says", NULL },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.paths, NULL, "[PATH...]" },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- index directories into the catalog");
	g_autoptr(GError) error = NULL;
	PixPipelineConfig cfg = { 0 };
	int status;

	g_option_context_add_main_entries(ctx, entries, NULL);
	pix_walk_options_add(ctx, &o.walk);
	pix_run_options_add(ctx, &o.run);
	g_option_context_set_summary(ctx, "Walks each PATH, reads every new or changed file once (MD5 and metadata)\n"
	                                  "and records it in the catalog; unchanged files are not opened.  Without a\n"
	                                  "PATH: the config file's roots, else the roots the catalog knows that are\n"
	                                  "mounted now (each offline one is named).");
	if ((status = pix_run_parse("scan", ctx, argc, argv, &o.paths, FALSE, &o.run, &cfg)) != PIX_EXIT_OK) {
		options_clear(&o);
		return status;
	}
	cfg.walk.is_cross_mounts = o.walk.is_cross_mounts;
	cfg.is_quick = o.is_quick;
	cfg.is_reread = o.is_reread;
	pix_run_set_thumbnails(&o.run, &cfg, (o.is_thumbnails || pix_config_thumbnails()) && !o.is_no_thumbnails);
	if (o.is_thumbnails && o.is_no_thumbnails) {
		options_clear(&o);
		return pix_cmd_usage_error("scan", "--thumbnails and --no-thumbnails: choose one");
	}
	if (o.is_quick && o.is_reread) {
		options_clear(&o);
		return pix_cmd_usage_error("scan", "--quick and --reread: --reread reads every file, --quick lists fewer");
	}
	gboolean is_json = o.run.is_json, is_quiet = o.run.is_quiet, is_no_wait = o.run.is_no_wait;
	pix_log_init(is_quiet, o.run.is_verbose);
	pix_set_meta_timing(is_json);   /* its meta_seconds */

	guint n_bad_roots;
	g_autofree char *db = o.run.db != NULL ? g_strdup(o.run.db) : pix_cmd_default_db();
	if (o.paths == NULL || o.paths[0] == NULL) {
		/* cron and systemd: the roots the catalog (or the config) knows */
		g_strfreev(o.paths);
		o.paths = default_roots(db, &status);
		if (o.paths == NULL) {
			options_clear(&o);
			return status;
		}
		if (o.paths[0] == NULL) {
			/* every root is offline: nothing to walk, but the catalog
			 * learns which volumes are gone (their files: offline) */
			options_clear(&o);
			return record_offline_run(db, is_no_wait);
		}
	}
	g_auto(GStrv) roots = pix_run_canonical_paths(o.paths, "scan", TRUE, &n_bad_roots);
	g_auto(GStrv) excludes = pix_walk_options_excludes(&o.walk);
	options_clear(&o);
	if (roots[0] == NULL)
		return PIX_EXIT_PARTIAL;

	g_auto(GStrv) companions = NULL;
	g_autoptr(GString) devices = g_string_new(NULL);
	g_autoptr(PixStore) writer = pix_run_begin("scan", db, roots, excludes, is_no_wait, &cfg, devices, &companions,
	                                           &status);
	if (writer == NULL)
		return status;
	gint64 start = g_get_monotonic_time();
	gboolean is_interrupted = FALSE;
	/* the files whose content has no thumbnail yet are read again; the
	 * thumbnails stored without a perceptual hash get one, from the
	 * stored rendition */
	gboolean is_ok = !cfg.is_thumbnails || (pix_store_want_thumbs(writer, roots, &error) &&
	                                        pix_phash_fill(writer, &error));
	is_ok = is_ok && pix_pipeline_scan(&cfg, writer, &is_interrupted, &error);
	double secs = (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
	status = pix_run_end(writer, is_ok, g_steal_pointer(&error), is_interrupted ? PIX_RUN_INTERRUPTED : PIX_RUN_COMPLETE,
	                     n_bad_roots);
	print_summary(is_json, is_quiet, roots, db, secs, status, is_interrupted, &cfg, devices->str,
	              pix_store_write_rates(writer));
	return status;
}

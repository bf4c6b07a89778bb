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
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "path.h"
#include "md5-lanes.h"
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_READ_SIZE (1024 * 1024)
#define DEFAULT_MAX_MEMORY (64 * 1024 * 1024)
#define BATCH_ITEMS 5000
#define BATCH_US G_USEC_PER_SEC

typedef struct {
	char *db;
	char **excludes;
	gboolean is_no_default_excludes;
	gboolean is_cross_mounts;
	char *max_memory;
	char *read_size;
	char *limit_rate;
	int n_readers;
	int n_hashers;
	gboolean is_keep_cache;
	gboolean is_json;
	gboolean is_quiet;
	gboolean is_verbose;
	gboolean is_progress;
	gboolean is_no_progress;
	gboolean is_no_wait;
	char *device_class;
	char **paths;
} ScanOptions;

static void options_clear(ScanOptions *o)
{
	g_free(o->db);
	g_strfreev(o->excludes);
	g_free(o->max_memory);
	g_free(o->read_size);
	g_free(o->limit_rate);
	g_free(o->device_class);
	g_strfreev(o->paths);
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The canonical directories to walk: symlinks resolved, nested and
 * repeated ones dropped (their parent's walk covers them).  Problems are
 * warned about; *n_bad counts them. */
static char **canonical_roots(char **paths, guint *n_bad)
{
	g_autoptr(GPtrArray) roots = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *out = g_ptr_array_new();

	*n_bad = 0;
	for (char **p = paths; *p != NULL; p++) {
		g_autofree char *q = pix_quote(*p);
		char *real = realpath(*p, NULL);
		struct stat st;
		if (real == NULL) {
			pix_warn("cannot scan '%s': %s", q, g_strerror(errno));
			(*n_bad)++;
			continue;
		}
		if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			pix_warn("cannot scan '%s': not a directory", q);
			(*n_bad)++;
			free(real);
			continue;
		}
		g_ptr_array_add(roots, g_strdup(real));
		free(real);
	}
	/* shortest first, so a root's ancestors are kept before it; "/p",
	 * "/p-old", "/p/2021" sort in that order, so each is compared with
	 * every root kept, not only the last */
	g_ptr_array_sort(roots, compare_strings);
	for (guint i = 0; i < roots->len; i++) {
		const char *r = g_ptr_array_index(roots, i);
		gboolean is_covered = FALSE;
		for (guint j = 0; j < out->len && !is_covered; j++)
			is_covered = pix_path_is_under(r, g_ptr_array_index(out, j));
		if (!is_covered)
			g_ptr_array_add(out, g_strdup(r));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

/*
 * The device class that orders this scan's reads: the one forced, or the
 * roots' (a rotating disk among them makes the whole scan gentle with it).
 * Each root's device and class go to `devices` as JSON objects.
 */
static PixDeviceClass roots_device_class(char **roots, PixDeviceClass forced, GString *devices)
{
	PixDeviceClass scan_class = PIX_DEVICE_UNKNOWN;

	for (char **r = roots; *r != NULL; r++) {
		struct stat st;
		g_autofree char *name = NULL;
		PixDeviceClass c = PIX_DEVICE_UNKNOWN;
		if (stat(*r, &st) == 0)
			c = pix_sched_device_class((guint64)st.st_dev, "/sys", &name);
		scan_class = MAX(scan_class, c);
		g_autofree char *q = pix_quote(*r);
		pix_info("'%s' is on %s, a%s %s device", q, name != NULL ? name : "no block device",
		         c == PIX_DEVICE_UNKNOWN ? "n" : "", pix_device_class_name(c));
		gboolean is_first = TRUE;
		g_string_append_printf(devices, "%s{", r == roots ? "" : ",");
		pix_json_key(devices, "root", &is_first);
		pix_json_string(devices, *r);
		pix_json_key(devices, "device", &is_first);
		pix_json_string(devices, name);
		pix_json_key(devices, "class", &is_first);
		pix_json_string(devices, pix_device_class_name(c));
		g_string_append_c(devices, '}');
	}
	return forced != PIX_DEVICE_UNKNOWN ? forced : scan_class;
}

/* The exclude patterns: the defaults unless refused, then the user's. */
static char **exclude_patterns(const ScanOptions *o)
{
	GPtrArray *out = g_ptr_array_new();
	if (!o->is_no_default_excludes)
		for (const char *const *d = pix_walk_default_excludes(); *d != NULL; d++)
			g_ptr_array_add(out, g_strdup(*d));
	for (char **e = o->excludes; e != NULL && *e != NULL; e++)
		g_ptr_array_add(out, g_strdup(*e));
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

static void print_summary(gboolean is_json, gboolean is_quiet, char **roots, const char *db, double secs, int status,
                          gboolean is_interrupted, const PixPipelineConfig *cfg, const char *devices)
{
	static const struct {
		const char *key;
		PixCounter counter;
	} fields[] = {
		{ "dirs", PIX_N_DIRS }, { "new", PIX_N_NEW }, { "changed", PIX_N_CHANGED },
		{ "moved", PIX_N_MOVED }, { "missing", PIX_N_MISSING }, { "unchanged", PIX_N_UNCHANGED },
		{ "errors", PIX_N_ERRORS }, { "skipped", PIX_N_SKIPPED }, { "bytes_read", PIX_BYTES_READ },
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
		for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
			pix_json_key(js, fields[i].key, &first);
			g_string_append_printf(js, "%" G_GINT64_FORMAT, pix_count_get(fields[i].counter));
		}
		pix_json_key(js, "device_class", &first);
		pix_json_string(js, pix_device_class_name(cfg->device_class));
		pix_json_key(js, "devices", &first);
		g_string_append_printf(js, "[%s]", devices);
		pix_json_key(js, "readers", &first);
		g_string_append_printf(js, "%u", cfg->read.n_readers);
		pix_json_key(js, "md5_lanes", &first);
		g_string_append_printf(js, "%u", pix_md5_lane_count());
		pix_json_key(js, "meta_seconds", &first);
		g_string_append_printf(js, "%.3f", (double)(pix_count_get(PIX_NS_META) - pix_count_get(PIX_NS_SCAN)) / 1e9);
		pix_json_key(js, "scan_seconds", &first);
		g_string_append_printf(js, "%.3f", (double)pix_count_get(PIX_NS_SCAN) / 1e9);
		pix_json_key(js, "seconds", &first);
		g_string_append_printf(js, "%.3f", secs);
		pix_json_key(js, "mb_per_s", &first);
		g_string_append_printf(js, "%.1f", rate);
		pix_json_key(js, "interrupted", &first);
		g_string_append(js, is_interrupted ? "true" : "false");
		pix_json_key(js, "exit_status", &first);
		g_string_append_printf(js, "%d", status);
		g_string_append(js, "}\n");
		fputs(js->str, stdout);
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

/* Parses sizes and counts into the pipeline's configuration. */
static int configure(const ScanOptions *o, PixPipelineConfig *cfg)
{
	gint64 max_memory = DEFAULT_MAX_MEMORY, read_size = DEFAULT_READ_SIZE, rate = 0;

	if (o->max_memory != NULL && !pix_cmd_parse_size(o->max_memory, &max_memory))
		return pix_cmd_usage_error("scan", "--max-memory: '%s' is not a size", o->max_memory);
	if (o->read_size != NULL && !pix_cmd_parse_size(o->read_size, &read_size))
		return pix_cmd_usage_error("scan", "--read-size: '%s' is not a size", o->read_size);
	if (o->limit_rate != NULL && !pix_cmd_parse_size(o->limit_rate, &rate))
		return pix_cmd_usage_error("scan", "--limit-rate: '%s' is not a size", o->limit_rate);
	if (read_size < 4096 || read_size > 256 * 1024 * 1024 || read_size % 4096 != 0)
		return pix_cmd_usage_error("scan", "--read-size must be a multiple of 4K between 4K and 256M");
	if (max_memory < 2 * read_size)
		return pix_cmd_usage_error("scan", "--max-memory must hold at least two reads (2 x --read-size)");
	if (o->n_readers < 0 || o->n_readers > 1024 || o->n_hashers < 0 || o->n_hashers > 256)
		return pix_cmd_usage_error("scan", "--readers must be 1..1024 and --hashers 1..256");

	cfg->read.read_bytes = (gsize)read_size;
	cfg->read.max_memory_bytes = (gsize)max_memory;
	cfg->read.limit_bytes_per_s = rate;
	cfg->read.is_keep_cache = o->is_keep_cache;
	cfg->read.n_readers = o->n_readers > 0 ? (guint)o->n_readers : 0;   /* 0: by device class */
	cfg->device_class = PIX_DEVICE_UNKNOWN;
	if (o->device_class != NULL && strcmp(o->device_class, "auto") != 0) {
		if (!pix_device_class_parse(o->device_class, &cfg->device_class) ||
		    cfg->device_class == PIX_DEVICE_UNKNOWN)
			return pix_cmd_usage_error("scan", "--device-class: '%s' is not auto, rotational, ssd or virtual",
			                           o->device_class);
	}
	cfg->n_hashers = o->n_hashers > 0 ? (guint)o->n_hashers : MAX(1, g_get_num_processors());
	cfg->batch_items = BATCH_ITEMS;
	cfg->batch_us = BATCH_US;
	cfg->walk.is_cross_mounts = o->is_cross_mounts;
	cfg->is_progress = !o->is_quiet && !o->is_json && !o->is_no_progress && (o->is_progress || isatty(STDERR_FILENO));
	return PIX_EXIT_OK;
}

int pix_cmd_scan(int argc, char **argv)
{
	ScanOptions o = { 0 };
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &o.db, "catalog file (default $XDG_DATA_HOME/photoidx/catalog.db)", "FILE" },
		{ "exclude", 'x', 0, G_OPTION_ARG_FILENAME_ARRAY, &o.excludes, "skip names (or paths, with a '/') matching GLOB; repeatable", "GLOB" },
		{ "no-default-excludes", 0, 0, G_OPTION_ARG_NONE, &o.is_no_default_excludes, "do not skip .thumbnails, @eaDir, .git and the like", NULL },
		{ "cross-mounts", 0, 0, G_OPTION_ARG_NONE, &o.is_cross_mounts, "descend into other file systems", NULL },
		{ "max-memory", 0, 0, G_OPTION_ARG_STRING, &o.max_memory, "cap on read buffers (default 64M)", "SIZE" },
		{ "read-size", 0, 0, G_OPTION_ARG_STRING, &o.read_size, "bytes per read (default 1M)", "SIZE" },
		{ "readers", 0, 0, G_OPTION_ARG_INT, &o.n_readers, "reads in flight (default: 2 on a rotating disk, else 16)", "N" },
		{ "device-class", 0, 0, G_OPTION_ARG_STRING, &o.device_class, "auto (from sysfs), rotational, ssd or virtual", "CLASS" },
		{ "hashers", 0, 0, G_OPTION_ARG_INT, &o.n_hashers, "hashing threads (default: one per core)", "N" },
		{ "limit-rate", 0, 0, G_OPTION_ARG_STRING, &o.limit_rate, "read at most SIZE bytes per second", "SIZE" },
		{ "keep-cache", 0, 0, G_OPTION_ARG_NONE, &o.is_keep_cache, "leave read files in the page cache", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &o.is_json, "print the summary as JSON on stdout", NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &o.is_quiet, "no summary, no status line (problems with files are still named)", NULL },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.is_verbose, "say more", NULL },
		{ "progress", 0, 0, G_OPTION_ARG_NONE, &o.is_progress, "show the status line even when stderr is not a terminal", NULL },
		{ "no-progress", 0, 0, G_OPTION_ARG_NONE, &o.is_no_progress, "never show the status line", NULL },
		{ "no-wait", 0, 0, G_OPTION_ARG_NONE, &o.is_no_wait, "fail at once if another photoidx is writing the catalog", NULL },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.paths, NULL, "PATH..." },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- index directories into the catalog");
	g_autoptr(GError) error = NULL;
	PixPipelineConfig cfg = { 0 };
	int status;

	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_summary(ctx, "Walks each PATH, reads every new or changed file once (MD5 and metadata)\n"
	                                  "and records it in the catalog; unchanged files are not opened.");
	if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
		status = pix_cmd_usage_error("scan", "%s", error->message);
		options_clear(&o);
		return status;
	}
	if (o.paths == NULL || o.paths[0] == NULL) {
		options_clear(&o);
		return pix_cmd_usage_error("scan", "no PATH to scan");
	}
	if ((status = configure(&o, &cfg)) != PIX_EXIT_OK) {
		options_clear(&o);
		return status;
	}
	pix_log_init(o.is_quiet, o.is_verbose);

	guint n_bad_roots;
	g_auto(GStrv) roots = canonical_roots(o.paths, &n_bad_roots);
	g_autofree char *db = o.db != NULL ? g_strdup(o.db) : pix_cmd_default_db();
	g_auto(GStrv) excludes = exclude_patterns(&o);
	options_clear(&o);
	if (roots[0] == NULL)
		return PIX_EXIT_PARTIAL;

	pix_pipeline_install_signals();
	g_autoptr(PixStore) writer = pix_store_open(db, PIX_STORE_WRITE, o.is_no_wait, &error);
	if (writer == NULL) {
		pix_error("%s", error->message);
		return pix_pipeline_stop_signal() != 0 ? PIX_EXIT_INTERRUPTED : PIX_EXIT_FATAL;
	}
	g_autofree char *db_real = realpath(db, NULL);
	g_auto(GStrv) companions = pix_store_companion_paths(db_real != NULL ? db_real : db);
	g_autoptr(GString) devices = g_string_new(NULL);
	cfg.device_class = roots_device_class(roots, cfg.device_class, devices);
	if (cfg.read.n_readers == 0)
		cfg.read.n_readers = pix_sched_readers(cfg.device_class);
	pix_info("reading as for a %s device: %u readers, %u MD5 lanes", pix_device_class_name(cfg.device_class),
	         cfg.read.n_readers, pix_md5_lane_count());
	cfg.roots = roots;
	cfg.db_path = db;
	cfg.walk.excludes = excludes;
	cfg.walk.exclude_paths = companions;

	if (!pix_store_begin_scan(writer, "scan", roots, &error)) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	gint64 start = g_get_monotonic_time();
	gboolean is_interrupted = FALSE;
	gboolean is_ok = pix_pipeline_scan(&cfg, writer, &is_interrupted, &error);
	double secs = (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;

	const char *state = "done";
	if (!is_ok) {
		pix_error("%s", error->message);
		g_clear_error(&error);
		state = "failed";
		status = PIX_EXIT_FATAL;
	} else if (is_interrupted) {
		state = "interrupted";
		status = PIX_EXIT_INTERRUPTED;
	} else if (pix_log_warnings() > 0 || n_bad_roots > 0) {
		status = PIX_EXIT_PARTIAL;
	} else {
		status = PIX_EXIT_OK;
	}
	if (!pix_store_end_scan(writer, state, status, &error)) {
		/* a full disk may refuse even this; the work itself is committed */
		pix_error("%s", error->message);
		status = PIX_EXIT_FATAL;
	}
	print_summary(o.is_json, o.is_quiet, roots, db, secs, status, is_interrupted, &cfg, devices->str);
	return status;
}

/*
 * cmd-run.c: options, paths, device class and exit status shared by the
 * commands that read files (see cmd-run.h).
 *
 * Reads the paths' stat and sysfs (through sched); writes diagnostics.
 * Main thread.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-run.h"
#include "config.h"
#include "json.h"
#include "log.h"
#include "md5-lanes.h"
#include "path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_READ_SIZE (1024 * 1024)
#define DEFAULT_MAX_MEMORY (64 * 1024 * 1024)
/* with thumbnails: 24 MP JPEGs no slower than at 64M, 168 small JPEGs
 * and PNGs at 82-92 MB of peak RSS where 64M took 130-145 MB (16M:
 * 68-78 MB, 32M: 94-101 MB); 50 RAW files of 18 MB 0.95x the time of
 * 16M, whose 8 MiB a hasher left its MD5 lanes 2 to 4 files wide */
#define THUMBS_MAX_MEMORY (24 * 1024 * 1024)
/* with thumbnails: reads of 512 KiB, so that the pool holds a few of each
 * of the 16 large files being read at once (sched.c): in reads of 1 MiB a
 * hasher's share held 1 or 2 of each, and files waiting for their next
 * read dropped out of the MD5 lanes (16 readers: 0.97x the processor time
 * of 8 where 512 KiB gave 0.94x, 50 RAW files of 18 MB) */
#define THUMBS_READ_SIZE (512 * 1024)
#define BATCH_ITEMS 5000
#define BATCH_US G_USEC_PER_SEC

void pix_run_options_add(GOptionContext *ctx, PixRunOptions *o)
{
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &o->db, PIX_DB_HELP, "FILE" },
		{ "max-memory", 0, 0, G_OPTION_ARG_STRING, &o->max_memory, "cap on read buffers (default 64M)", "SIZE" },
		{ "read-size", 0, 0, G_OPTION_ARG_STRING, &o->read_size, "bytes per read (default 1M)", "SIZE" },
		{ "readers", 0, 0, G_OPTION_ARG_INT, &o->n_readers, "reader threads (default: 2 on a rotating disk, 4 through io_uring (8 with thumbnails), else 16)", "N" },
		{ "device-class", 0, 0, G_OPTION_ARG_STRING, &o->device_class, "auto (from statfs and sysfs), rotational, ssd, virtual or network", "CLASS" },
		{ "hashers", 0, 0, G_OPTION_ARG_INT, &o->n_hashers, "hashing threads (default: one per core)", "N" },
		{ "limit-rate", 0, 0, G_OPTION_ARG_STRING, &o->limit_rate, "read at most SIZE bytes per second", "SIZE" },
		{ "keep-cache", 0, 0, G_OPTION_ARG_NONE, &o->is_keep_cache, "leave read files in the page cache", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &o->is_json, "print the summary as JSON on stdout", NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->is_quiet, "no summary, no status line (problems with files are still named)", NULL },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->is_verbose, "say more", NULL },
		{ "progress", 0, 0, G_OPTION_ARG_NONE, &o->is_progress, "show the status line even when stderr is not a terminal", NULL },
		{ "no-progress", 0, 0, G_OPTION_ARG_NONE, &o->is_no_progress, "never show the status line", NULL },
		{ "no-wait", 0, 0, G_OPTION_ARG_NONE, &o->is_no_wait, "fail at once if another photoidx is writing the catalog", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_option_context_add_main_entries(ctx, entries, NULL);
}

void pix_walk_options_add(GOptionContext *ctx, PixWalkOptions *o)
{
	GOptionEntry entries[] = {
		{ "exclude", 'x', 0, G_OPTION_ARG_FILENAME_ARRAY, &o->excludes, "skip names (or paths, with a '/') matching GLOB; repeatable", "GLOB" },
		{ "no-default-excludes", 0, 0, G_OPTION_ARG_NONE, &o->is_no_default_excludes, "do not skip .thumbnails, @eaDir, .git and the like", NULL },
		{ "cross-mounts", 0, 0, G_OPTION_ARG_NONE, &o->is_cross_mounts, "descend into other file systems", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_option_context_add_main_entries(ctx, entries, NULL);
}

void pix_walk_options_clear(PixWalkOptions *o)
{
	g_strfreev(o->excludes);
	o->excludes = NULL;
}

char **pix_walk_options_excludes(const PixWalkOptions *o)
{
	GPtrArray *out = g_ptr_array_new();
	if (!o->is_no_default_excludes)
		for (const char *const *d = pix_walk_default_excludes(); *d != NULL; d++)
			g_ptr_array_add(out, g_strdup(*d));
	for (char **c = pix_config_excludes(); c != NULL && *c != NULL; c++)
		g_ptr_array_add(out, g_strdup(*c));
	for (char **e = o->excludes; e != NULL && *e != NULL; e++)
		g_ptr_array_add(out, g_strdup(*e));
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

void pix_run_options_clear(PixRunOptions *o)
{
	g_free(o->db);
	g_free(o->max_memory);
	g_free(o->read_size);
	g_free(o->limit_rate);
	g_free(o->device_class);
}

char **pix_run_canonical_paths(char **paths, const char *verb, gboolean is_dirs_only, guint *n_bad)
{
	g_autoptr(GPtrArray) roots = g_ptr_array_new_with_free_func(g_free);

	*n_bad = 0;
	for (char **p = paths; *p != NULL; p++) {
		g_autofree char *q = pix_quote(*p);
		char *real = realpath(*p, NULL);
		struct stat st;
		if (real == NULL) {
			pix_warn("cannot %s '%s': %s", verb, q, g_strerror(errno));
			(*n_bad)++;
			continue;
		}
		if (is_dirs_only && (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))) {
			pix_warn("cannot %s '%s': not a directory", verb, q);
			(*n_bad)++;
			free(real);
			continue;
		}
		g_ptr_array_add(roots, g_strdup(real));
		free(real);
	}
	return pix_path_outermost(roots);
}

PixDeviceClass pix_run_device_class(char **roots, PixDeviceClass forced, GString *devices)
{
	PixDeviceClass scan_class = PIX_DEVICE_UNKNOWN;

	for (char **r = roots; *r != NULL; r++) {
		g_autofree char *name = NULL;
		PixDeviceClass c = pix_sched_path_class(*r, "/sys", &name);
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

void pix_run_set_thumbnails(const PixRunOptions *o, PixPipelineConfig *cfg, gboolean is_thumbnails)
{
	cfg->is_thumbnails = is_thumbnails;
	if (is_thumbnails && o->read_size == NULL)
		cfg->read.read_bytes = THUMBS_READ_SIZE;
	if (is_thumbnails && o->max_memory == NULL)
		cfg->read.max_memory_bytes = MAX((gsize)THUMBS_MAX_MEMORY, 2 * cfg->read.read_bytes);
}

/* Parses sizes and counts into the pipeline's configuration. */
int pix_run_configure(const char *cmd, const PixRunOptions *o, PixPipelineConfig *cfg)
{
	gint64 max_memory = DEFAULT_MAX_MEMORY, read_size = DEFAULT_READ_SIZE, rate = 0;

	if (o->max_memory != NULL && !pix_cmd_parse_size(o->max_memory, &max_memory))
		return pix_cmd_usage_error(cmd, "--max-memory: '%s' is not a size", o->max_memory);
	if (o->read_size != NULL && !pix_cmd_parse_size(o->read_size, &read_size))
		return pix_cmd_usage_error(cmd, "--read-size: '%s' is not a size", o->read_size);
	if (o->limit_rate != NULL && !pix_cmd_parse_size(o->limit_rate, &rate))
		return pix_cmd_usage_error(cmd, "--limit-rate: '%s' is not a size", o->limit_rate);
	if (read_size < 4096 || read_size > 256 * 1024 * 1024 || read_size % 4096 != 0)
		return pix_cmd_usage_error(cmd, "--read-size must be a multiple of 4K between 4K and 256M");
	if (max_memory < 2 * read_size)
		return pix_cmd_usage_error(cmd, "--max-memory must hold at least two reads (2 x --read-size)");
	if (o->n_readers < 0 || o->n_readers > 1024 || o->n_hashers < 0 || o->n_hashers > 256)
		return pix_cmd_usage_error(cmd, "--readers must be 1..1024 and --hashers 1..256");

	cfg->read.read_bytes = (gsize)read_size;
	cfg->read.max_memory_bytes = (gsize)max_memory;
	cfg->read.limit_bytes_per_s = rate;
	cfg->read.is_keep_cache = o->is_keep_cache;
	cfg->read.n_readers = o->n_readers > 0 ? (guint)o->n_readers : 0;   /* 0: by device class */
	cfg->device_class = PIX_DEVICE_UNKNOWN;
	if (o->device_class != NULL && strcmp(o->device_class, "auto") != 0) {
		if (!pix_device_class_parse(o->device_class, &cfg->device_class) ||
		    cfg->device_class == PIX_DEVICE_UNKNOWN)
			return pix_cmd_usage_error(cmd, "--device-class: '%s' is not auto, rotational, ssd, virtual or network",
			                           o->device_class);
	}
	cfg->n_hashers = o->n_hashers > 0 ? (guint)o->n_hashers : MAX(1, g_get_num_processors());
	cfg->batch_items = BATCH_ITEMS;
	cfg->batch_us = BATCH_US;
	cfg->is_progress = !o->is_quiet && !o->is_json && !o->is_no_progress && (o->is_progress || isatty(STDERR_FILENO));
	return PIX_EXIT_OK;
}


int pix_run_end(PixStore *writer, gboolean is_ok, GError *run_error, PixRunEnd end, guint n_bad)
{
	g_autoptr(GError) error = NULL;
	const char *state = "done";
	int status = pix_log_warnings() > 0 || n_bad > 0 ? PIX_EXIT_PARTIAL : PIX_EXIT_OK;

	if (!is_ok) {
		pix_error("%s", run_error != NULL ? run_error->message : "the run failed");
		g_clear_error(&run_error);
		state = "failed";
		status = PIX_EXIT_FATAL;
	} else if (end == PIX_RUN_INTERRUPTED) {
		state = "interrupted";
		status = pix_cmd_signal_status(pix_pipeline_stop_signal());
	} else if (end == PIX_RUN_STOPPED) {
		status = PIX_EXIT_OK;
	}
	if (!pix_store_end_scan(writer, state, status, &error)) {
		/* a full disk may refuse even this; the work itself is committed */
		pix_error("%s", error->message);
		status = PIX_EXIT_FATAL;
	}
	return status;
}

void pix_run_print_json(GString *js, gboolean *is_first, double secs, gboolean is_interrupted, int status)
{
	pix_json_key(js, "seconds", is_first);
	g_string_append_printf(js, "%.3f", secs);
	pix_json_key(js, "interrupted", is_first);
	g_string_append(js, is_interrupted ? "true" : "false");
	pix_json_int(js, "exit_status", status, is_first);
	g_string_append(js, "}\n");
	fputs(js->str, stdout);
}

PixStore *pix_run_begin(const char *command, const char *db, char **roots, char **excludes, gboolean is_no_wait,
                        PixPipelineConfig *cfg, GString *devices, char ***companions, int *status)
{
	g_autoptr(GError) error = NULL;

	pix_pipeline_install_signals();
	g_autoptr(PixStore) writer = pix_store_open(db, PIX_STORE_WRITE, is_no_wait, &error);
	if (writer == NULL) {
		pix_error("%s", error->message);
		*status = pix_pipeline_stop_signal() != 0 ? pix_cmd_signal_status(pix_pipeline_stop_signal()) : PIX_EXIT_FATAL;
		return NULL;
	}
	g_autofree char *db_real = realpath(db, NULL);
	*companions = pix_store_companion_paths(db_real != NULL ? db_real : db);
	cfg->device_class = pix_run_device_class(roots, cfg->device_class, devices);
	if (cfg->read.n_readers == 0)
		cfg->read.n_readers = pix_sched_readers(cfg->device_class, cfg->is_thumbnails);
	pix_info("reading as for a %s device: %u readers, %u MD5 lanes, %u read buffers of %" G_GSIZE_FORMAT " KiB",
	         pix_device_class_name(cfg->device_class), cfg->read.n_readers, pix_md5_lane_count(),
	         pix_read_buffer_count(&cfg->read), cfg->read.read_bytes / 1024);
	cfg->roots = roots;
	cfg->db_path = db;
	cfg->walk.excludes = excludes;
	cfg->walk.exclude_paths = *companions;
	/* a network file system is walked by 16 threads (walk.h); PIX_WALK_THREADS=N forces N (tests, measurements) */
	const char *walk_threads = g_getenv("PIX_WALK_THREADS");
	cfg->walk.n_threads = walk_threads != NULL ? (guint)g_ascii_strtoull(walk_threads, NULL, 10)
	                      : cfg->device_class == PIX_DEVICE_NETWORK ? 16 : 1;
	if (!pix_store_begin_scan(writer, command, roots, &error)) {
		pix_error("%s", error->message);
		*status = PIX_EXIT_FATAL;
		return NULL;
	}
	*status = PIX_EXIT_OK;
	return g_steal_pointer(&writer);
}

int pix_run_parse(const char *cmd, GOptionContext *ctx, int argc, char **argv, char ***paths,
                  gboolean is_path_required, const PixRunOptions *o, PixPipelineConfig *cfg)
{
	g_autoptr(GError) error = NULL;
	if (!g_option_context_parse(ctx, &argc, &argv, &error))
		return pix_cmd_usage_error(cmd, "%s", error->message);
	if (pix_cmd_check_config() != PIX_EXIT_OK)
		return PIX_EXIT_USAGE;
	if (is_path_required && (*paths == NULL || (*paths)[0] == NULL))
		return pix_cmd_usage_error(cmd, "no PATH to %s", cmd);
	return pix_run_configure(cmd, o, cfg);
}

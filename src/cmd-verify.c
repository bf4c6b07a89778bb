/*
 * cmd-verify.c: `photoidx verify [PATH...]`, which reads indexed files
 * again and compares them with the MD5 the catalog holds: the check for bit
 * rot, and for edits that kept size and mtime, that a rescan cannot make.
 *
 * Reads the command line; opens the catalog as its writer; runs the
 * pipeline's verify; writes the summary (stdout) and the files whose
 * content changed (stderr).  Main thread.
 *
 * Invariants:
 *  1. The exit status is PIX_EXIT_PARTIAL when any file's content changed
 *     behind its size and mtime, or could not be read; files changed since
 *     the last scan are only noted (the scan's business).
 *  2. The run is recorded in `scans` with command 'verify'.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-run.h"
#include "db.h"
#include "json.h"
#include "log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	PixRunOptions run;
	double budget_s;
	char *max_bytes;
	char **paths;
} VerifyOptions;

static void options_clear(VerifyOptions *o)
{
	pix_run_options_clear(&o->run);
	g_free(o->max_bytes);
	g_strfreev(o->paths);
}

/* The device class for the reads: the paths', or the catalog's roots'. */
static PixDeviceClass device_class(char **paths, const char *db, PixDeviceClass forced, GString *devices)
{
	if (paths != NULL)
		return pix_run_device_class(paths, forced, devices);
	g_autoptr(GError) error = NULL;
	g_autoptr(PixStore) reader = pix_store_open(db, PIX_STORE_READ, FALSE, &error);
	g_auto(GStrv) roots = reader != NULL ? pix_store_roots(reader, &error) : NULL;
	if (roots == NULL)
		return forced;
	return pix_run_device_class(roots, forced, devices);
}

static void print_summary(gboolean is_json, gboolean is_quiet, const char *db, double secs, int status,
                          gboolean is_interrupted, const PixVerifyCoverage *cov)
{
	gint64 bytes = pix_count_get(PIX_BYTES_READ);
	gint64 n_ok = pix_count_get(PIX_N_VERIFIED), n_bad = pix_count_get(PIX_N_MISMATCH);
	gint64 n_unreadable = pix_count_get(PIX_N_ERRORS), n_stale = pix_count_get(PIX_N_STALE);

	if (is_json) {
		g_autoptr(GString) js = g_string_new("{");
		gboolean first = TRUE;
		pix_json_key(js, "catalog", &first);
		pix_json_string(js, db);
		pix_json_int(js, "verified", n_ok + n_bad + n_unreadable, &first);
		pix_json_int(js, "ok", n_ok, &first);
		pix_json_int(js, "mismatch", n_bad, &first);
		pix_json_int(js, "unreadable", n_unreadable, &first);
		pix_json_int(js, "changed_since_scan", n_stale, &first);
		pix_json_int(js, "bytes_read", bytes, &first);
		pix_json_int(js, "catalog_files", cov->n_files, &first);
		pix_json_int(js, "never_verified", cov->n_never, &first);
		pix_json_int(js, "never_verified_bytes", cov->bytes_never, &first);
		pix_json_int(js, "oldest_verified_at", cov->oldest_verified_at, &first);
		pix_run_print_json(js, &first, secs, is_interrupted, status);
		return;
	}
	if (is_quiet)
		return;
	g_autofree char *b = pix_format_bytes(bytes);
	g_autofree char *nb = pix_format_bytes(cov->bytes_never);
	printf("%sverified %" G_GINT64_FORMAT " files (%s) in %.2f s: %" G_GINT64_FORMAT " ok, %" G_GINT64_FORMAT
	       " changed behind size and mtime, %" G_GINT64_FORMAT " unreadable, %" G_GINT64_FORMAT
	       " changed since the last scan\n",
	       is_interrupted ? "interrupted: " : "", n_ok + n_bad + n_unreadable, b, secs, n_ok, n_bad, n_unreadable,
	       n_stale);
	printf("%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " files (%s) never verified", cov->n_never, cov->n_files, nb);
	if (cov->oldest_verified_at > 0) {
		g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(cov->oldest_verified_at);
		g_autofree char *when = t != NULL ? g_date_time_format(t, "%Y-%m-%d %H:%M") : g_strdup("?");
		printf("; oldest verification %s", when);
	}
	printf("\n");
}

int pix_cmd_verify(int argc, char **argv)
{
	VerifyOptions o = { .budget_s = -1 };
	GOptionEntry entries[] = {
		{ "budget", 0, 0, G_OPTION_ARG_DOUBLE, &o.budget_s, "stop after SECONDS (files oldest-verified first)", "SECONDS" },
		{ "max-bytes", 0, 0, G_OPTION_ARG_STRING, &o.max_bytes, "stop after choosing SIZE bytes of files", "SIZE" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.paths, NULL, "[PATH...]" },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- check indexed files against their stored MD5");
	g_autoptr(GError) error = NULL;
	PixPipelineConfig cfg = { 0 };
	gint64 max_bytes = 0;
	int status;

	g_option_context_add_main_entries(ctx, entries, NULL);
	pix_run_options_add(ctx, &o.run);
	g_option_context_set_summary(ctx, "Reads the catalog's files (those under each PATH, or all) again, the ones\n"
	                                  "verified longest ago first, and reports every file whose content no\n"
	                                  "longer has its stored MD5 while its size and mtime are unchanged.");
	if ((status = pix_run_parse("verify", ctx, argc, argv, &o.paths, FALSE, &o.run, &cfg)) != PIX_EXIT_OK) {
		options_clear(&o);
		return status;
	}
	if (o.max_bytes != NULL && (!pix_cmd_parse_size(o.max_bytes, &max_bytes) || max_bytes == 0)) {
		status = pix_cmd_usage_error("verify", "--max-bytes: '%s' is not a size above 0", o.max_bytes);
		options_clear(&o);
		return status;
	}
	if (o.budget_s != -1 && !(o.budget_s > 0 && o.budget_s < 1e9)) {
		options_clear(&o);
		return pix_cmd_usage_error("verify", "--budget must be a number of seconds above 0");
	}
	gboolean is_json = o.run.is_json, is_quiet = o.run.is_quiet, is_no_wait = o.run.is_no_wait;
	pix_log_init(is_quiet, o.run.is_verbose);

	guint n_bad_paths = 0;
	g_auto(GStrv) paths = NULL;
	if (o.paths != NULL && o.paths[0] != NULL) {
		paths = pix_run_canonical_paths(o.paths, "verify", FALSE, &n_bad_paths);
		if (paths[0] == NULL) {
			options_clear(&o);
			return PIX_EXIT_PARTIAL;
		}
	}
	g_autofree char *db = o.run.db != NULL ? g_strdup(o.run.db) : pix_cmd_default_db();
	double budget_s = o.budget_s;
	options_clear(&o);

	if (!pix_db_is_pg_uri(db) && !g_file_test(db, G_FILE_TEST_EXISTS)) {
		/* nothing to verify, and no empty catalog to leave behind */
		g_autofree char *q = pix_store_display(db);
		pix_error("there is no catalog '%s' to verify yet: 'photoidx scan PATH' makes it", q);
		return PIX_EXIT_FATAL;
	}
	pix_pipeline_install_signals();
	g_autoptr(PixStore) writer = pix_store_open(db, PIX_STORE_WRITE, is_no_wait, &error);
	if (writer == NULL) {
		pix_error("%s", error->message);
		return pix_pipeline_stop_signal() != 0 ? pix_cmd_signal_status(pix_pipeline_stop_signal()) : PIX_EXIT_FATAL;
	}
	g_autoptr(GString) devices = g_string_new(NULL);
	cfg.device_class = device_class(paths, db, cfg.device_class, devices);
	if (cfg.read.n_readers == 0)
		cfg.read.n_readers = pix_sched_readers(cfg.device_class, FALSE);
	cfg.db_path = db;

	char *all[] = { PIX_VERIFY_ALL, NULL };
	if (!pix_store_begin_scan(writer, "verify", paths != NULL ? paths : all, &error)) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	/* the budget counts from here: not the time spent waiting for a scan
	 * (for the catalog's lock on SQLite, its volumes' on PostgreSQL) */
	gint64 start = g_get_monotonic_time();
	if (budget_s > 0)
		cfg.read.deadline_us = start + (gint64)(budget_s * G_USEC_PER_SEC);
	gboolean is_interrupted = FALSE;
	gboolean is_ok = pix_pipeline_verify(&cfg, paths, max_bytes, writer, &is_interrupted, &error);
	double secs = (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
	status = pix_run_end(writer, is_ok, g_steal_pointer(&error), is_interrupted ? PIX_RUN_INTERRUPTED : PIX_RUN_COMPLETE,
	                     n_bad_paths);
	PixVerifyCoverage cov = { 0 };
	if (!pix_store_verify_coverage(writer, &cov, &error)) {
		pix_error("%s", error->message);
		status = PIX_EXIT_FATAL;
	}
	print_summary(is_json, is_quiet, db, secs, status, is_interrupted, &cov);
	return status;
}

/*
 * cmd-export.c: `photoidx export`: the catalog as CSV or JSON lines (every
 * column of file_info, one record per file), to stdout or to a file
 * replaced atomically; or, with --kphotoalbum DIR, a KPhotoAlbum database
 * and thumbnail cache for the library at DIR (export-kpa.c); or, with
 * --xdg-thumbnails [DIR], the freedesktop.org thumbnail cache
 * (export-xdg.c).
 *
 * Reads the catalog (a reader, one snapshot); writes stdout or the output
 * files.  Main thread.
 *
 * Invariants:
 *  1. An output file is the old one or the complete new one (atomic.h),
 *     never a partial export.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "atomic.h"
#include "cmd-query.h"
#include "export-kpa.h"
#include "export-xdg.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int export_kphotoalbum(PixStore *reader, const PixQueryOptions *o, const char *dir_arg,
                              const PixKpaOptions *opts, gboolean is_quiet)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *q = pix_quote(dir_arg);
	char *real = realpath(dir_arg, NULL);
	struct stat st;
	PixKpaExport done = { 0 };
	int status;

	if (real == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		pix_error("cannot export to '%s': %s", q, real == NULL ? g_strerror(errno) : "not a directory");
		free(real);
		return PIX_EXIT_OUTPUT;
	}
	g_autofree char *dir = g_strdup(real);
	free(real);
	if (!pix_export_kphotoalbum(reader, dir, &o->filter, opts, &done, &error)) {
		pix_error("%s", error->message);
		pix_kpa_export_clear(&done);
		/* the catalog's failures are 2, and a KPhotoAlbum running on DIR;
		 * the rest is about DIR */
		return error->domain == PIX_STORE_ERROR || error->domain == PIX_KPA_ERROR ? PIX_EXIT_FATAL
		                                                                           : PIX_EXIT_OUTPUT;
	}
	if (!is_quiet && done.thumbs.why != NULL) {
		g_autofree char *tq = pix_quote(dir);
		pix_notice("not all of '%s/.thumbnails/thumbnailindex' could be read (%s): what could is merged, the "
		           "rest left to KPhotoAlbum", tq, done.thumbs.why);
	}
	g_autofree char *thumbs = NULL;
	if (done.thumbs.is_written)
		thumbs = g_strdup_printf("; .thumbnails (%d px): %" G_GINT64_FORMAT " thumbnails, %" G_GINT64_FORMAT
		                         " written, %" G_GINT64_FORMAT " following a moved image, %" G_GINT64_FORMAT
		                         " dropped (changed), %" G_GINT64_FORMAT " left to KPhotoAlbum",
		                         done.thumbs.size_px, done.thumbs.n_entries, done.thumbs.n_written,
		                         done.thumbs.n_renamed, done.thumbs.n_dropped, done.thumbs.n_none);
	if (!is_quiet && done.is_unchanged)
		fprintf(stderr, "photoidx: '%s/index.xml' (%" G_GINT64_FORMAT " images and videos) and exif-info.db were "
		        "up to date\n", q, done.n_images);
	else if (!is_quiet)
		fprintf(stderr, "photoidx: merged into '%s/index.xml': %" G_GINT64_FORMAT " images and videos, %" G_GINT64_FORMAT
		        " added, %" G_GINT64_FORMAT " moved, %" G_GINT64_FORMAT " changed, %" G_GINT64_FORMAT
		        " kept whose file is gone; %" G_GINT64_FORMAT " not added (blocklist), %" G_GINT64_FORMAT
		        " not added (KPhotoAlbum's settings); exif-info.db: %" G_GINT64_FORMAT " rows written, %" G_GINT64_FORMAT
		        " kept%s%s%s%s\n", q, done.n_images, done.n_added, done.n_moved, done.n_updated, done.n_gone,
		        done.n_blocked, done.n_excluded, done.n_exif, done.n_exif_kept,
		        done.backup != NULL ? "; the old index is kept as " : "", done.backup != NULL ? done.backup : "",
		        thumbs != NULL ? thumbs : "", done.n_skipped > 0 ? "; some files were left out, see above" : "");
	if (!is_quiet && (done.n_tagged > 0 || done.n_groups > 0))
		fprintf(stderr, "photoidx: keywords, people and ratings from the files given to %" G_GINT64_FORMAT
		        " images; %" G_GINT64_FORMAT " members added to groups ('%s')\n", done.n_tagged, done.n_groups,
		        opts->keywords_category != NULL ? opts->keywords_category : "Keywords");
	status = done.n_skipped > 0 ? PIX_EXIT_PARTIAL : PIX_EXIT_OK;
	pix_kpa_export_clear(&done);
	return status;
}

static int export_xdg(PixStore *reader, const PixQueryOptions *o, const char *dir_arg, gboolean is_quiet)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = dir_arg != NULL ? g_canonicalize_filename(dir_arg, NULL) : pix_xdg_thumbnails_dir();
	PixXdgExport done;

	if (!pix_export_xdg(reader, dir, &o->filter, &done, &error)) {
		pix_error("%s", error->message);
		return error->domain == PIX_STORE_ERROR ? PIX_EXIT_FATAL : PIX_EXIT_OUTPUT;
	}
	if (!is_quiet) {
		g_autofree char *q = pix_quote(dir);
		fprintf(stderr, "photoidx: '%s': %" G_GINT64_FORMAT " files, %" G_GINT64_FORMAT " with a thumbnail in the "
		        "catalog; %" G_GINT64_FORMAT " PNG files written, %" G_GINT64_FORMAT " up to date%s\n", q,
		        done.n_files, done.n_thumbnailed, done.n_written, done.n_kept,
		        done.n_failed > 0 ? "; some files were left out, see above" : "");
	}
	return done.n_failed > 0 ? PIX_EXIT_PARTIAL : PIX_EXIT_OK;
}

static int export_records(PixStore *reader, const PixQueryOptions *o, PixOutFormat format, const char *output)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(PixAtomicFile) af = NULL;
	FILE *out = stdout;
	PixRecordWriter w;

	if (output != NULL && strcmp(output, "-") != 0) {
		/* the catalog's contents: readable by its owner only, like the catalog */
		af = pix_atomic_new(output, 0600, &error);
		if (af == NULL) {
			pix_error("%s", error->message);
			return PIX_EXIT_OUTPUT;
		}
		out = pix_atomic_stream(af);
	}
	pix_record_writer_init(&w, format, out, o->filter.has_near);
	gboolean is_ok = pix_store_each_record(reader, &o->filter, PIX_SORT_NONE, 0, pix_record_writer_put, &w, &error);
	gint64 n_unlisted = w.n_unlisted;
	gboolean is_written = pix_record_writer_finish(&w);
	if (!is_ok) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	if (!is_written) {
		g_autofree char *q = pix_quote(output != NULL ? output : "standard output");
		pix_error("cannot write '%s': %s", q, g_strerror(w.err));
		return PIX_EXIT_OUTPUT;
	}
	if (af != NULL && !pix_atomic_commit(g_steal_pointer(&af), &error)) {
		pix_error("%s", error->message);
		return PIX_EXIT_OUTPUT;
	}
	if (n_unlisted > 0)
		pix_notice("%" G_GINT64_FORMAT " files left out: never read (no MD5)%s", n_unlisted,
		           format == PIX_OUT_HASHDEEP ? ", or a newline in the path (hashdeep cannot list it)" : "");
	return PIX_EXIT_OK;
}

typedef struct {
	char *format_opt, *output, *kpa_dir, *since;
	gboolean is_xdg;        /* --xdg-thumbnails, into xdg_dir (NULL: the default) */
	char *xdg_dir;
	gboolean is_force, is_quiet;
	char *keywords_category;
	gboolean is_merge_keywords;
	PixOutFormat format;
	const PixQueryOptions *query; /* the filter options, parsed before the check */
} ExportOptions;

static int check_options(const char *cmd, gpointer data)
{
	ExportOptions *e = data;

	if ((e->format_opt != NULL) + (e->kpa_dir != NULL) + e->is_xdg != 1)
		return pix_cmd_usage_error(cmd, "give one of --format, --kphotoalbum and --xdg-thumbnails");
	static const struct {
		const char *name;
		PixOutFormat format;
	} formats[] = { { "csv", PIX_OUT_CSV }, { "jsonl", PIX_OUT_JSONL }, { "md5sum", PIX_OUT_MD5SUM },
		        { "hashdeep", PIX_OUT_HASHDEEP } };
	gboolean is_known = e->format_opt == NULL;
	for (gsize i = 0; i < G_N_ELEMENTS(formats) && !is_known; i++)
		if (strcmp(e->format_opt, formats[i].name) == 0) {
			e->format = formats[i].format;
			is_known = TRUE;
		}
	if (!is_known)
		return pix_cmd_usage_error(cmd, "--format: expected csv, jsonl, md5sum or hashdeep");
	if (e->kpa_dir != NULL && (e->output != NULL || e->query->paths != NULL))
		return pix_cmd_usage_error(cmd, "--kphotoalbum writes into DIR, for the files below it: no --output or PATH");
	if (e->is_xdg && e->output != NULL)
		return pix_cmd_usage_error(cmd, "--xdg-thumbnails writes into DIR: no --output");
	if (e->is_xdg && (e->query->is_missing || e->query->is_errors || e->query->is_all || e->query->is_offline))
		return pix_cmd_usage_error(cmd, "--xdg-thumbnails writes the files on disk: no --missing, --errors, --all "
		                                "or --offline");
	if ((e->is_force || e->since != NULL) && e->kpa_dir == NULL)
		return pix_cmd_usage_error(cmd, "--force and --since go with --kphotoalbum");
	if ((e->keywords_category != NULL || e->is_merge_keywords) && e->kpa_dir == NULL)
		return pix_cmd_usage_error(cmd, "--keywords-category and --merge-keywords go with --kphotoalbum");
	if (e->keywords_category != NULL &&
	    (!g_utf8_validate(e->keywords_category, -1, NULL) || g_strstrip(e->keywords_category)[0] == '\0' ||
	     strcmp(e->keywords_category, "Folder") == 0 || strcmp(e->keywords_category, "Media Type") == 0))
		return pix_cmd_usage_error(cmd, "--keywords-category: a category's name, not empty, Folder or Media Type "
		                                "(KPhotoAlbum makes those itself and does not save them)");
	if (e->is_force && e->since != NULL)
		return pix_cmd_usage_error(cmd, "--force rebuilds index.xml from the whole catalog: no --since");
	if (e->since != NULL && strcmp(e->since, "last") != 0) {
		char *end;
		gint64 n = g_ascii_strtoll(e->since, &end, 10);
		if (end == e->since || *end != '\0' || n < 0)
			return pix_cmd_usage_error(cmd, "--since: expected a change log seq (0 or more) or 'last'");
	}
	return PIX_EXIT_OK;
}

/* The options being parsed, for on_xdg() (GLib gives the main group's
 * callbacks no data of their own). */
static ExportOptions *parsing;

/* --xdg-thumbnails [DIR]: its DIR is optional (GLib takes the next
 * argument unless it begins with '-'). */
static gboolean on_xdg(const char *name, const char *value, gpointer data, GError **error)
{
	ExportOptions *e = parsing;
	(void)name, (void)data;
	if (e->is_xdg) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--xdg-thumbnails is given twice");
		return FALSE;
	}
	e->is_xdg = TRUE;
	e->xdg_dir = g_strdup(value);
	return TRUE;
}

int pix_cmd_export(int argc, char **argv)
{
	PixQueryOptions o = { 0 };
	ExportOptions e = { .query = &o };
	GOptionEntry entries[] = {
		{ "format", 'f', 0, G_OPTION_ARG_STRING, &e.format_opt, "csv or jsonl: one record per file, every column of file_info; md5sum or hashdeep: the MD5 of each file on disk, for md5sum -c or hashdeep -a -k", "FORMAT" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &e.output, "write FILE (replaced at once when complete) instead of standard output", "FILE" },
		{ "kphotoalbum", 0, 0, G_OPTION_ARG_FILENAME, &e.kpa_dir, "write DIR/index.xml and DIR/exif-info.db for KPhotoAlbum: the images and videos at or below DIR", "DIR" },
		{ "xdg-thumbnails", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_xdg, "write the catalog's thumbnails of the files on disk into the freedesktop.org thumbnail cache at DIR (default $XDG_CACHE_HOME/thumbnails), for file managers and viewers", "[DIR]" },
		{ "force", 0, 0, G_OPTION_ARG_NONE, &e.is_force, "with --kphotoalbum: build index.xml from the catalog alone, dropping its tags (the old one kept as index.xml~NNNN~)", NULL },
		{ "since", 0, 0, G_OPTION_ARG_STRING, &e.since, "with --kphotoalbum: merge only the files the change log touched after SEQ, or since the last export into DIR ('last')", "SEQ|last" },
		{ "keywords-category", 0, 0, G_OPTION_ARG_STRING, &e.keywords_category, "with --kphotoalbum: the category the files' keywords go into (default Keywords)", "NAME" },
		{ "merge-keywords", 0, 0, G_OPTION_ARG_NONE, &e.is_merge_keywords, "with --kphotoalbum: add the files' keywords, people and rating to images KPhotoAlbum lists with tags of their own too", NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &e.is_quiet, "no summary on standard error", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = pix_query_context(&o, "[PATH...] - export the catalog", entries,
		"Writes every file the catalog holds at or below each PATH (default:\n"
		"all, missing files included) that passes the filters as CSV or JSON\n"
		"lines; the MD5s of the files on disk as md5sum or hashdeep lists them;\n"
		"with --kphotoalbum DIR, a KPhotoAlbum database and thumbnail cache for DIR;\n"
		"or, with --xdg-thumbnails, their thumbnails for file managers and viewers.");
	int status;
	parsing = &e;
	g_autoptr(PixStore) reader = pix_query_start("export", ctx, argc, argv, &o, check_options, &e, e.is_quiet, &status);
	parsing = NULL;

	if (reader != NULL) {
		/* the whole catalog unless asked otherwise; the files to check
		 * against their MD5 are those on disk */
		gboolean is_hashes = e.format == PIX_OUT_MD5SUM || e.format == PIX_OUT_HASHDEEP;
		if (!o.is_missing && !o.is_errors && e.kpa_dir == NULL && !is_hashes)
			o.filter.show = PIX_SHOW_ALL;
		if (e.kpa_dir != NULL)
		{
			PixKpaOptions opts = { .is_force = e.is_force, .since = -1, .keywords_category = e.keywords_category,
			                       .is_merge_keywords = e.is_merge_keywords };
			if (e.since != NULL && strcmp(e.since, "last") == 0)
				opts.is_since_last = TRUE;
			else if (e.since != NULL)
				opts.since = g_ascii_strtoll(e.since, NULL, 10);
			status = export_kphotoalbum(reader, &o, e.kpa_dir, &opts, e.is_quiet);
		}
		else if (e.is_xdg)
			status = export_xdg(reader, &o, e.xdg_dir, e.is_quiet);
		else
			status = export_records(reader, &o, e.format, e.output);
		pix_query_options_clear(&o);
	}
	g_free(e.format_opt);
	g_free(e.output);
	g_free(e.kpa_dir);
	g_free(e.xdg_dir);
	g_free(e.since);
	g_free(e.keywords_category);
	return status;
}

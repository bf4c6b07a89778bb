/*
 * cmd-ls.c: `photoidx ls [FILTERS] [PATH...]`: the files of the catalog
 * that pass a filter, by date taken (or path, or size), as lines for
 * people, NUL-terminated paths for xargs -0, or JSON / CSV with every
 * column of file_info.
 *
 * Reads the catalog (a reader: never waits for, nor blocks, a scan);
 * writes to stdout.  Main thread.
 *
 * Invariants:
 *  1. A line of text output holds one file: names are shown with
 *     pix_quote(), so a newline or escape sequence in a name cannot forge
 *     a line or drive the terminal; -0 gives the exact bytes.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-query.h"
#include "log.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	gboolean is_long;
	gboolean is_null;
	gboolean has_distance;
	GString *buf;
	gint64 n;
} TextOut;

/* "YYYY-MM-DD HH:MM:SS" of a date_taken, or dashes. */
static void append_date(GString *out, const char *date)
{
	if (date == NULL) {
		g_string_append(out, "-------------------");
		return;
	}
	gsize n = MIN(strlen(date), 19);
	gsize at = out->len;
	g_string_append_len(out, date, (gssize)n);
	if (n > 10 && out->str[at + 10] == 'T')
		out->str[at + 10] = ' ';
	for (; n < 19; n++)
		g_string_append_c(out, ' ');
}

static gboolean print_text(gpointer data, const PixRecord *r)
{
	TextOut *t = data;
	GString *out = t->buf;
	const char *path = pix_record_text(r, PIX_COL_PATH);
	const char *state = pix_record_text(r, PIX_COL_STATE);

	g_string_truncate(out, 0);
	t->n++;
	if (t->is_null) {
		g_string_append_len(out, path, (gssize)r->v[PIX_COL_PATH].len + 1);
		return fwrite(out->str, 1, out->len, stdout) == out->len;
	}
	append_date(out, pix_record_text(r, PIX_COL_DATE_TAKEN));
	if (t->is_long) {
		g_autofree char *size = pix_format_bytes(pix_record_int(r, PIX_COL_SIZE, 0));
		g_autofree char *camera = pix_query_camera_name(pix_record_text(r, PIX_COL_MAKE), pix_record_text(r, PIX_COL_MODEL));
		g_autofree char *dims = NULL;
		gint64 w = pix_record_int(r, PIX_COL_WIDTH, 0), h = pix_record_int(r, PIX_COL_HEIGHT, 0);
		if (w > 0 && h > 0)
			dims = g_strdup_printf("%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, w, h);
		/* cut and padded by characters, not bytes */
		g_autofree char *cam = pix_fit_text(camera != NULL ? camera : "-", 24, 24);
		g_string_append_printf(out, "  %-7s %9s  %-11s  %s", pix_record_text(r, PIX_COL_MEDIA),
		                       size, dims != NULL ? dims : "-", cam);
	}
	g_autofree char *q = pix_quote(path);
	g_string_append_printf(out, "  %s", q);
	if (t->has_distance && !isnan(r->distance_m))
		g_string_append_printf(out, "  (%.2f km)", r->distance_m / 1000.0);
	if (g_strcmp0(state, "missing") == 0) {
		g_autoptr(GDateTime) since = g_date_time_new_from_unix_local(pix_record_int(r, PIX_COL_MISSING_SINCE, 0));
		g_autofree char *s = since != NULL ? g_date_time_format(since, "%F") : g_strdup("?");
		g_string_append_printf(out, "  [missing since %s]", s);
	} else if (g_strcmp0(state, "error") == 0) {
		const char *err = pix_record_text(r, PIX_COL_ERROR);
		g_autofree char *qe = pix_quote(err != NULL ? err : "unknown");
		g_string_append_printf(out, "  [error: %s]", qe);
	}
	g_string_append_c(out, '\n');
	return fwrite(out->str, 1, out->len, stdout) == out->len;
}

typedef struct {
	gboolean is_json, is_jsonl, is_csv, is_long, is_null;
	char *sort_opt;
	gint64 limit;
	PixSort sort;
} LsOptions;

static int check_options(const char *cmd, gpointer data)
{
	static const char *const sort_names[] = { [PIX_SORT_DATE] = "date", [PIX_SORT_PATH] = "path",
	                                          [PIX_SORT_SIZE] = "size", [PIX_SORT_NONE] = "none" };
	LsOptions *l = data;

	if (l->is_json + l->is_jsonl + l->is_csv + l->is_null > 1)
		return pix_cmd_usage_error(cmd, "--json, --jsonl, --csv and -0 exclude each other");
	if (l->limit < 0)
		return pix_cmd_usage_error(cmd, "--limit must be 0 or more");
	l->sort = PIX_SORT_DATE;
	if (l->sort_opt == NULL)
		return PIX_EXIT_OK;
	for (gsize i = 0; i < G_N_ELEMENTS(sort_names); i++)
		if (strcmp(l->sort_opt, sort_names[i]) == 0) {
			l->sort = (PixSort)i;
			return PIX_EXIT_OK;
		}
	return pix_cmd_usage_error(cmd, "--sort: expected date, path, size or none");
}

int pix_cmd_ls(int argc, char **argv)
{
	PixQueryOptions o = { 0 };
	LsOptions l = { 0 };
	GOptionEntry entries[] = {
		{ "sort", 's', 0, G_OPTION_ARG_STRING, &l.sort_opt, "order: date (taken; the default), path, size (largest first), none (fastest)", "KEY" },
		{ "limit", 'n', 0, G_OPTION_ARG_INT64, &l.limit, "at most N files", "N" },
		{ "long", 'l', 0, G_OPTION_ARG_NONE, &l.is_long, "also media type, size, pixel size and camera", NULL },
		{ "null", '0', 0, G_OPTION_ARG_NONE, &l.is_null, "only the paths, each ended by a NUL byte, exactly (for xargs -0)", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &l.is_json, "a JSON array of objects with every column of file_info", NULL },
		{ "jsonl", 0, 0, G_OPTION_ARG_NONE, &l.is_jsonl, "one JSON object per line", NULL },
		{ "csv", 0, 0, G_OPTION_ARG_NONE, &l.is_csv, "CSV with a header line, every column of file_info", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = pix_query_context(&o, "[PATH...] - list the files of the catalog", entries,
		"Lists the files the catalog holds at or below each PATH (default: all)\n"
		"that pass every filter given, oldest picture first.  Missing files\n"
		"are left out unless --missing or --all asks for them.");
	g_autoptr(GError) error = NULL;
	gboolean is_ok, is_written;
	int status;
	g_autoptr(PixStore) reader = pix_query_start("ls", ctx, argc, argv, &o, check_options, &l, FALSE, &status);

	g_free(l.sort_opt);
	if (reader == NULL)
		return status;
	if (l.is_json || l.is_jsonl || l.is_csv) {
		PixRecordWriter w;
		pix_record_writer_init(&w, l.is_csv ? PIX_OUT_CSV : l.is_json ? PIX_OUT_JSON : PIX_OUT_JSONL, stdout,
		                       o.filter.has_near);
		is_ok = pix_store_each_record(reader, &o.filter, l.sort, l.limit, pix_record_writer_put, &w, &error);
		is_written = pix_record_writer_finish(&w);
	} else {
		TextOut t = { .is_long = l.is_long, .is_null = l.is_null, .has_distance = o.filter.has_near,
		              .buf = g_string_new(NULL) };
		is_ok = pix_store_each_record(reader, &o.filter, l.sort, l.limit, print_text, &t, &error);
		g_string_free(t.buf, TRUE);
		is_written = fflush(stdout) == 0 && !ferror(stdout);
	}
	pix_query_options_clear(&o);
	if (!is_ok) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	if (!is_written) {
		pix_error("cannot write the list: %s", g_strerror(errno));
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}

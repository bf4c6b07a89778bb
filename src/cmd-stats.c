/*
 * cmd-stats.c: `photoidx stats [FILTERS] [PATH...] [--json]`: how many
 * files and bytes the catalog holds, by media type, by camera and by month
 * taken, with the months drawn as a histogram sized to the terminal.
 *
 * Reads the catalog (a reader, one snapshot); writes to stdout.  Main
 * thread.
 *
 * Invariants:
 *  1. Every month from the first to the last with files has a line, or
 *     stands in a line that counts a run of three or more empty months,
 *     so gaps in a library show.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-query.h"
#include "json.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Empty months in a row shown as one line from this many on. */
#define GAP_LINE_MONTHS 3

static int terminal_columns(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (env != NULL && atoi(env) > 0)
		return atoi(env);
	return 80;
}

/* A bar of `n / max` of `width` cells, in eighths of a cell when the
 * terminal takes UTF-8, else in '#'. */
static void append_bar(GString *out, gint64 n, gint64 max, int width, gboolean is_utf8)
{
	static const char *const eighths[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
	if (max <= 0 || n <= 0)
		return;
	gint64 units = (n * width * 8 + max - 1) / max;
	if (!is_utf8) {
		for (gint64 i = 0; i < (units + 7) / 8; i++)
			g_string_append_c(out, '#');
		return;
	}
	for (gint64 i = 0; i < units / 8; i++)
		g_string_append(out, "█");
	g_string_append(out, eighths[units % 8]);
}

/* YYYY-MM as a month number, or -1. */
static int month_number(const char *key)
{
	if (key == NULL || strlen(key) != 7 || key[4] != '-')
		return -1;
	int y = atoi(key), m = atoi(key + 5);
	return m >= 1 && m <= 12 ? y * 12 + (m - 1) : -1;
}

/* Labels longer than this are cut, with an ellipsis. */
#define LABEL_MAX 36

static void print_tally_line(GString *out, const char *label, const PixTally *t, int label_width)
{
	g_autofree char *bytes = pix_format_bytes(t->bytes);
	g_autofree char *fit = pix_fit_text(label, LABEL_MAX, label_width);

	g_string_append_printf(out, "  %s %8" G_GINT64_FORMAT "  %10s\n", fit, t->n, bytes);
}

static char *camera_label(const char *key)
{
	if (key == NULL)
		return g_strdup("(no camera recorded)");
	g_auto(GStrv) parts = g_strsplit(key, "\t", 2);
	return pix_query_camera_name(*parts[0] != '\0' ? parts[0] : NULL,
	                             parts[1] != NULL && *parts[1] != '\0' ? parts[1] : NULL);
}

static void print_months(GString *out, GArray *months)
{
	gint64 max = 0;
	int columns = terminal_columns();
	gboolean is_utf8 = g_get_charset(NULL);
	int prev = -1;

	for (guint i = 0; i < months->len; i++) {
		PixTally *t = &g_array_index(months, PixTally, i);
		if (t->key != NULL)
			max = MAX(max, t->n);
	}
	/* "  2023-06 12345  1.2 GB  " then the bar */
	int width = MAX(10, columns - 31);
	for (guint i = 0; i < months->len; i++) {
		PixTally *t = &g_array_index(months, PixTally, i);
		int m = month_number(t->key);
		if (t->key == NULL) {
			print_tally_line(out, "no date", t, 7);
			continue;
		}
		if (prev >= 0 && m > prev + 1) {
			int gap = m - prev - 1;
			if (gap >= GAP_LINE_MONTHS) {
				g_string_append_printf(out, "  ... %d months without files\n", gap);
			} else {
				for (int k = prev + 1; k < m; k++)
					g_string_append_printf(out, "  %04d-%02d %8d\n", k / 12, k % 12 + 1, 0);
			}
		}
		g_autofree char *bytes = pix_format_bytes(t->bytes);
		g_autofree char *q = pix_quote(t->key);
		g_string_append_printf(out, "  %-7s %8" G_GINT64_FORMAT "  %10s  ", q, t->n, bytes);
		append_bar(out, t->n, max, width, is_utf8);
		g_string_append_c(out, '\n');
		if (m >= 0)
			prev = m;
	}
}

static void print_text(GString *out, const PixStats *st)
{
	g_autofree char *bytes = pix_format_bytes(st->bytes);
	g_string_append_printf(out, "%" G_GINT64_FORMAT " files, %s\n\nby media type\n", st->n, bytes);
	for (guint i = 0; i < st->by_media->len; i++) {
		PixTally *t = &g_array_index(st->by_media, PixTally, i);
		print_tally_line(out, t->key != NULL ? t->key : "(unknown)", t, 8);
	}
	g_string_append(out, "\nby camera\n");
	int label_width = 8;
	for (guint i = 0; i < st->by_camera->len; i++) {
		g_autofree char *label = camera_label(g_array_index(st->by_camera, PixTally, i).key);
		label_width = MAX(label_width, MIN(LABEL_MAX, (int)g_utf8_strlen(label, -1)));
	}
	for (guint i = 0; i < st->by_camera->len; i++) {
		PixTally *t = &g_array_index(st->by_camera, PixTally, i);
		g_autofree char *label = camera_label(t->key);
		print_tally_line(out, label, t, label_width);
	}
	g_string_append(out, "\nby month taken\n");
	print_months(out, st->by_month);
}

static void json_tallies(GString *js, const char *name, GArray *a, const char *key_name, gboolean *is_first)
{
	pix_json_key(js, name, is_first);
	g_string_append_c(js, '[');
	for (guint i = 0; i < a->len; i++) {
		PixTally *t = &g_array_index(a, PixTally, i);
		gboolean is_first_t = TRUE;
		g_string_append(js, i > 0 ? ",\n{" : "\n{");
		if (strcmp(key_name, "camera") == 0) {
			g_auto(GStrv) parts = t->key != NULL ? g_strsplit(t->key, "\t", 2) : NULL;
			pix_json_key(js, "make", &is_first_t);
			pix_json_string(js, parts != NULL && *parts[0] != '\0' ? parts[0] : NULL);
			pix_json_key(js, "model", &is_first_t);
			pix_json_string(js, parts != NULL && parts[1] != NULL && *parts[1] != '\0' ? parts[1] : NULL);
		} else {
			pix_json_key(js, key_name, &is_first_t);
			pix_json_string(js, t->key);
		}
		pix_json_int(js, "files", t->n, &is_first_t);
		pix_json_int(js, "bytes", t->bytes, &is_first_t);
		g_string_append_c(js, '}');
	}
	g_string_append(js, "]");
}

int pix_cmd_stats(int argc, char **argv)
{
	PixQueryOptions o = { 0 };
	gboolean is_json = FALSE;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "a JSON object with the totals and the three tallies", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = pix_query_context(&o, "[PATH...] - count files by type, camera and month", entries,
		"Counts the files at or below each PATH (default: all) that pass the\n"
		"filters, and their bytes, by media type, by camera and by month taken,\n"
		"with a histogram of the months.");
	g_autoptr(GError) error = NULL;
	int status;
	g_autoptr(PixStore) reader = pix_query_start("stats", ctx, argc, argv, &o, NULL, NULL, FALSE, &status);

	if (reader == NULL)
		return status;
	PixStats st = { 0 };
	gboolean is_ok = pix_store_stats(reader, &o.filter, &st, &error);
	pix_query_options_clear(&o);
	if (!is_ok) {
		pix_error("%s", error->message);
		pix_stats_clear(&st);
		return PIX_EXIT_FATAL;
	}
	g_autoptr(GString) out = g_string_new(NULL);
	if (is_json) {
		gboolean is_first = TRUE;
		g_string_append_c(out, '{');
		pix_json_int(out, "files", st.n, &is_first);
		pix_json_int(out, "bytes", st.bytes, &is_first);
		json_tallies(out, "by_media", st.by_media, "media", &is_first);
		json_tallies(out, "by_camera", st.by_camera, "camera", &is_first);
		json_tallies(out, "by_month", st.by_month, "month", &is_first);
		g_string_append(out, "}\n");
	} else {
		print_text(out, &st);
	}
	pix_stats_clear(&st);
	if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
		pix_error("cannot write the statistics: %s", g_strerror(errno));
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}

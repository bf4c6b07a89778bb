/*
 * cmd-stats.c: `photoidx stats [FILTERS] [PATH...] [--json] [--by KEY]
 * [--bars files|bytes]`: how many files and bytes the catalog holds, by
 * media type, by camera, by lens, by year and by month taken, by rating,
 * keyword (every level of a hierarchy) and person, with bars
 * sized to the terminal: by default media, camera and the months (the
 * years, for a library that spans more than ten).
 *
 * Reads the catalog (a reader, one snapshot); writes to stdout.  Main
 * thread.
 *
 * Invariants:
 *  1. Every month (year) from the first to the last with files has a
 *     line, or stands in a line that counts a run of three or more empty
 *     ones, so gaps in a library show.
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

/* The sections of the text output, and of --by. */
typedef enum {
	SEC_MEDIA,
	SEC_CAMERA,
	SEC_LENS,
	SEC_YEAR,
	SEC_MONTH,
	SEC_RATING,
	SEC_KEYWORD,
	SEC_PERSON,
	N_SECTIONS
} Section;

static const char *const section_names[N_SECTIONS] = { "media", "camera", "lens", "year", "month", "rating",
	                                               "keyword", "person" };

/* How the text is drawn. */
typedef struct {
	gboolean is_bytes;    /* bars by bytes, else by files */
	gboolean has_bars;    /* every section gets bars (--by), not only the time lines */
	int columns;          /* terminal width */
	gboolean is_utf8;
} Draw;

/* Span before a library's time line is a year overview by default. */
#define YEARS_OVERVIEW_MONTHS 120

/* YYYY-MM as a month number, YYYY as a year, or -1. */
static int time_number(const char *key, Section sec)
{
	if (key == NULL)
		return -1;
	if (sec == SEC_YEAR)
		return strlen(key) == 4 ? atoi(key) : -1;
	if (strlen(key) != 7 || key[4] != '-')
		return -1;
	int y = atoi(key), m = atoi(key + 5);
	return m >= 1 && m <= 12 ? y * 12 + (m - 1) : -1;
}

/* Labels longer than this are cut, with an ellipsis. */
#define LABEL_MAX 36

static gint64 measure(const Draw *dr, const PixTally *t)
{
	return dr->is_bytes ? t->bytes : t->n;
}

/* "  LABEL  FILES  BYTES  [BAR]": a bar of `max` when max > 0. */
static void print_tally_line(GString *out, const Draw *dr, const char *label, const PixTally *t, int label_width,
                             gint64 max)
{
	g_autofree char *bytes = pix_format_bytes(t->bytes);
	g_autofree char *fit = pix_fit_text(label, LABEL_MAX, label_width);

	g_string_append_printf(out, "  %s %8" G_GINT64_FORMAT "  %10s", fit, t->n, bytes);
	if (max > 0) {
		g_string_append(out, "  ");
		append_bar(out, measure(dr, t), max, MAX(10, dr->columns - 24 - label_width), dr->is_utf8);
	}
	g_string_append_c(out, '\n');
}

static char *camera_label(const char *key)
{
	if (key == NULL)
		return g_strdup("(no camera recorded)");
	g_auto(GStrv) parts = g_strsplit(key, "\t", 2);
	return pix_query_camera_name(*parts[0] != '\0' ? parts[0] : NULL,
	                             parts[1] != NULL && *parts[1] != '\0' ? parts[1] : NULL);
}

/* A tally's label in the text output (transfer full). */
static char *tally_label(Section sec, const char *key)
{
	if (sec == SEC_CAMERA)
		return camera_label(key);
	if (sec == SEC_RATING && key != NULL) {
		int stars = atoi(key);
		if (stars < 0)
			return g_strdup("rejected");
		if (stars == 0)
			return g_strdup("0 (unrated)");
		return g_strdup_printf("%d %s", stars, stars == 1 ? "star" : "stars");
	}
	if (key != NULL)
		return g_strdup(key);
	return g_strdup(sec == SEC_LENS ? "(no lens recorded)" : sec == SEC_RATING ? "(no rating)" : "(unknown)");
}

/* The months or years, every one from the first to the last with files
 * (runs of GAP_LINE_MONTHS or more empty ones in one line), with bars. */
static void print_timeline(GString *out, const Draw *dr, GArray *tallies, Section sec)
{
	const char *unit = sec == SEC_YEAR ? "years" : "months";
	gint64 max = 0;
	int prev = -1;

	for (guint i = 0; i < tallies->len; i++) {
		PixTally *t = &g_array_index(tallies, PixTally, i);
		if (t->key != NULL)
			max = MAX(max, measure(dr, t));
	}
	for (guint i = 0; i < tallies->len; i++) {
		PixTally *t = &g_array_index(tallies, PixTally, i);
		int m = time_number(t->key, sec);
		if (t->key == NULL) {
			print_tally_line(out, dr, "no date", t, 7, 0);
			continue;
		}
		if (prev >= 0 && m > prev + 1) {
			int gap = m - prev - 1;
			if (gap >= GAP_LINE_MONTHS) {
				g_string_append_printf(out, "  ... %d %s without files\n", gap, unit);
			} else {
				for (int k = prev + 1; k < m; k++) {
					if (sec == SEC_YEAR)
						g_string_append_printf(out, "  %-7d %8d\n", k, 0);
					else
						g_string_append_printf(out, "  %04d-%02d %8d\n", k / 12, k % 12 + 1, 0);
				}
			}
		}
		print_tally_line(out, dr, t->key, t, 7, max);
		if (m >= 0)
			prev = m;
	}
}

/* The tallies of a section, with their labels. */
static void print_section(GString *out, const Draw *dr, const PixStats *st, Section sec)
{
	static const char *const titles[N_SECTIONS] = { "by media type", "by camera", "by lens", "by year taken",
		                                        "by month taken", "by rating", "by keyword", "by person" };
	GArray *a = sec == SEC_MEDIA ? st->by_media : sec == SEC_CAMERA ? st->by_camera : sec == SEC_LENS ? st->by_lens
	            : sec == SEC_YEAR ? st->by_year : sec == SEC_RATING ? st->by_rating : sec == SEC_KEYWORD ? st->by_keyword
	            : sec == SEC_PERSON ? st->by_person : st->by_month;

	g_string_append_printf(out, "\n%s%s\n", titles[sec], dr->has_bars ? (dr->is_bytes ? " (bars: bytes)" : " (bars: files)") : "");
	if (sec == SEC_YEAR || sec == SEC_MONTH) {
		print_timeline(out, dr, a, sec);
		return;
	}
	int label_width = 8;
	gint64 max = 0;
	for (guint i = 0; i < a->len; i++) {
		PixTally *t = &g_array_index(a, PixTally, i);
		g_autofree char *label = tally_label(sec, t->key);
		label_width = MAX(label_width, MIN(LABEL_MAX, (int)g_utf8_strlen(label, -1)));
		max = MAX(max, measure(dr, t));
	}
	for (guint i = 0; i < a->len; i++) {
		PixTally *t = &g_array_index(a, PixTally, i);
		g_autofree char *label = tally_label(sec, t->key);
		print_tally_line(out, dr, label, t, label_width, dr->has_bars ? max : 0);
	}
	if (a->len == 0 && (sec == SEC_KEYWORD || sec == SEC_PERSON))
		g_string_append_printf(out, "  (no %s recorded)\n", sec == SEC_KEYWORD ? "keyword" : "person");
}

/* The default time line: the months, or for a library that spans more
 * than ten years, the years. */
static Section default_timeline(const PixStats *st)
{
	int first = -1, last = -1;
	for (guint i = 0; i < st->by_month->len; i++) {
		int m = time_number(g_array_index(st->by_month, PixTally, i).key, SEC_MONTH);
		if (m >= 0) {
			first = first < 0 ? m : MIN(first, m);
			last = MAX(last, m);
		}
	}
	return first >= 0 && last - first >= YEARS_OVERVIEW_MONTHS ? SEC_YEAR : SEC_MONTH;
}

static void print_text(GString *out, const Draw *dr, const PixStats *st, const gboolean *by)
{
	g_autofree char *bytes = pix_format_bytes(st->bytes);
	g_string_append_printf(out, "%" G_GINT64_FORMAT " files, %s\n", st->n, bytes);
	gboolean has_by = FALSE;
	for (int s = 0; s < N_SECTIONS; s++)
		has_by |= by[s];
	if (!has_by) {
		print_section(out, dr, st, SEC_MEDIA);
		print_section(out, dr, st, SEC_CAMERA);
		print_section(out, dr, st, default_timeline(st));
		return;
	}
	for (int s = 0; s < N_SECTIONS; s++)
		if (by[s])
			print_section(out, dr, st, (Section)s);
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
		} else if (strcmp(key_name, "rating") == 0) {
			pix_json_int_or_null(js, "rating", t->key != NULL ? g_ascii_strtoll(t->key, NULL, 10) : 0, t->key != NULL,
			                     &is_first_t);
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
	char **by_opt = NULL;
	char *bars = NULL;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "a JSON object with the totals and the tallies", NULL },
		{ "by", 0, 0, G_OPTION_ARG_STRING_ARRAY, &by_opt, "only these tallies, each with bars: media, camera, lens, year, month, rating, keyword, person (repeatable, or a comma list)", "KEY" },
		{ "bars", 0, 0, G_OPTION_ARG_STRING, &bars, "what the bars measure: files (the default) or bytes", "files|bytes" },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = pix_query_context(&o, "[PATH...] - count files by type, camera and month", entries,
		"Counts the files at or below each PATH (default: all) that pass the\n"
		"filters, and their bytes, by media type, by camera and by month taken\n"
		"(by year for a library that spans more than ten years), with bars;\n"
		"--by chooses the tallies (media, camera, lens, year, month, rating,\n"
		"keyword, person).");
	g_autoptr(GError) error = NULL;
	int status;
	g_autoptr(PixStore) reader = pix_query_start("stats", ctx, argc, argv, &o, NULL, NULL, FALSE, &status);

	g_auto(GStrv) by_list = by_opt;
	g_autofree char *bars_opt = bars;
	if (reader == NULL)
		return status;
	gboolean by[N_SECTIONS] = { FALSE };
	for (char **b = by_list; b != NULL && *b != NULL; b++) {
		g_auto(GStrv) keys = g_strsplit(*b, ",", -1);
		for (char **k = keys; *k != NULL; k++) {
			int found = -1;
			for (int sec = 0; sec < N_SECTIONS; sec++)
				if (strcmp(*k, section_names[sec]) == 0)
					found = sec;
			if (found < 0) {
				pix_query_options_clear(&o);
				return pix_cmd_usage_error("stats", "--by: expected media, camera, lens, year, month, rating, keyword or person");
			}
			by[found] = TRUE;
		}
	}
	if (bars_opt != NULL && strcmp(bars_opt, "files") != 0 && strcmp(bars_opt, "bytes") != 0) {
		pix_query_options_clear(&o);
		return pix_cmd_usage_error("stats", "--bars: expected files or bytes");
	}
	Draw dr = { .is_bytes = bars_opt != NULL && strcmp(bars_opt, "bytes") == 0, .has_bars = by_list != NULL,
	            .columns = terminal_columns(), .is_utf8 = g_get_charset(NULL) };
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
		json_tallies(out, "by_year", st.by_year, "year", &is_first);
		json_tallies(out, "by_lens", st.by_lens, "lens", &is_first);
		json_tallies(out, "by_rating", st.by_rating, "rating", &is_first);
		json_tallies(out, "by_keyword", st.by_keyword, "keyword", &is_first);
		json_tallies(out, "by_person", st.by_person, "person", &is_first);
		g_string_append(out, "}\n");
	} else {
		print_text(out, &dr, &st, by);
	}
	pix_stats_clear(&st);
	if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
		pix_error("cannot write the statistics: %s", g_strerror(errno));
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}

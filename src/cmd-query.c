/*
 * cmd-query.c: the filter options of ls, dups, stats and export, the
 * paths they take, and the writers of records (CSV, JSON, JSON lines).
 *
 * Reads argv; writes records to the caller's stream.  Main thread.
 *
 * Invariants:
 *  1. Every output is valid in its format (UTF-8 CSV, JSON) whatever bytes
 *     a file name holds; the exact bytes of a name that is not UTF-8 are
 *     in a *_b64 field beside its display form.
 *  2. Reals are written with '.' whatever the locale.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-query.h"
#include "json.h"
#include "log.h"
#include "meta-value.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GOptionContext *pix_query_context(PixQueryOptions *o, const char *what, const GOptionEntry *own,
                                  const char *summary)
{
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &o->db, PIX_DB_HELP, "FILE" },
		{ "from", 0, 0, G_OPTION_ARG_STRING, &o->from, "taken on or after DATE (YYYY[-MM[-DD[ HH:MM[:SS]]]])", "DATE" },
		{ "to", 0, 0, G_OPTION_ARG_STRING, &o->to, "taken on or before DATE (the whole of it: --to 2023 is to the end of 2023)", "DATE" },
		{ "date", 0, 0, G_OPTION_ARG_STRING, &o->date, "taken during DATE (a year, month, day, ...)", "DATE" },
		{ "no-date", 0, 0, G_OPTION_ARG_NONE, &o->is_no_date, "only files without a date taken", NULL },
		{ "make", 0, 0, G_OPTION_ARG_STRING, &o->make, "camera make contains TEXT (any case)", "TEXT" },
		{ "model", 0, 0, G_OPTION_ARG_STRING, &o->model, "camera model contains TEXT (any case)", "TEXT" },
		{ "type", 't', 0, G_OPTION_ARG_STRING_ARRAY, &o->types,
		  "media type: image, raw, video, sidecar, other, or photo (image and raw); repeat or separate with commas", "TYPE" },
		{ "near", 0, 0, G_OPTION_ARG_STRING, &o->near, "taken within --radius of this point (decimal degrees)", "LAT,LON" },
		{ "radius", 0, 0, G_OPTION_ARG_STRING, &o->radius, "radius of --near: metres, or with a unit (500m, 2km, 3mi; default 1km)", "DIST" },
		{ "missing", 0, 0, G_OPTION_ARG_NONE, &o->is_missing, "only files gone from disk (still in the catalog)", NULL },
		{ "errors", 0, 0, G_OPTION_ARG_NONE, &o->is_errors, "only files that could not be read or parsed", NULL },
		{ "all", 0, 0, G_OPTION_ARG_NONE, &o->is_all, "missing and offline files too", NULL },
		{ "offline", 0, 0, G_OPTION_ARG_NONE, &o->is_offline, "files of volumes not mounted too (left out by default)", NULL },
		{ "keyword", 0, 0, G_OPTION_ARG_STRING, &o->keyword,
		  "with this keyword (any case; a hierarchy's path, Places/Denmark, takes all below it)", "WORD" },
		{ "rating", 0, 0, G_OPTION_ARG_STRING, &o->rating, "rated at least N stars (-1 rejected .. 5)", "N" },
		{ "person", 0, 0, G_OPTION_ARG_STRING, &o->person, "with this person in it (any case)", "NAME" },
		{ "text", 0, 0, G_OPTION_ARG_STRING, &o->text, "WORD in the title, the caption or a keyword (any case)", "WORD" },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	GOptionContext *ctx = g_option_context_new(what);
	if (own != NULL)
		g_option_context_add_main_entries(ctx, own, NULL);
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_summary(ctx, summary);
	return ctx;
}

void pix_query_options_clear(PixQueryOptions *o)
{
	g_free(o->db);
	g_free(o->from);
	g_free(o->to);
	g_free(o->date);
	g_free(o->make);
	g_free(o->model);
	g_strfreev(o->types);
	g_free(o->near);
	g_free(o->radius);
	g_strfreev(o->paths);
	g_free(o->date_to);
	g_free(o->keyword);
	g_free(o->rating);
	g_free(o->person);
	g_free(o->text);
	memset(o, 0, sizeof(*o));
}

/* Whether `text` is a date as date_taken starts: YYYY, YYYY-MM,
 * YYYY-MM-DD, then T or a space, HH, :MM, :SS.  A space becomes 'T'. */
static gboolean is_date_prefix(char *text)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	gsize n = strlen(text);

	if (n < 4 || n > sizeof(shape) - 1 || (n != 4 && n != 7 && n != 10 && n != 13 && n != 16 && n != 19))
		return FALSE;
	for (gsize i = 0; i < n; i++) {
		if (shape[i] == 'T' && text[i] == ' ')
			text[i] = 'T';
		if (shape[i] == 'd' ? !g_ascii_isdigit(text[i]) : text[i] != shape[i])
			return FALSE;
	}
	/* the shape is right: now a real date and time (no month 13, no
	 * 30 February, no 25 o'clock), the parts not given being their first */
	int year = atoi(text), month = n >= 7 ? atoi(text + 5) : 1, day = n >= 10 ? atoi(text + 8) : 1;
	int hour = n >= 13 ? atoi(text + 11) : 0, minute = n >= 16 ? atoi(text + 14) : 0;
	int second = n >= 19 ? atoi(text + 17) : 0;
	return year >= 1 && month >= 1 && month <= 12 && day >= 1 &&
	       g_date_valid_dmy((GDateDay)day, (GDateMonth)month, (GDateYear)year) && hour <= 23 && minute <= 59 &&
	       second <= 59;
}

/* "500", "500m", "2km", "2.5 km", "3mi" into metres. */
static gboolean parse_distance(const char *text, double *out)
{
	char *end = NULL;
	double v = g_ascii_strtod(text, &end);

	if (end == text || !isfinite(v) || v < 0)
		return FALSE;
	while (*end == ' ')
		end++;
	if (*end == '\0' || g_ascii_strcasecmp(end, "m") == 0)
		*out = v;
	else if (g_ascii_strcasecmp(end, "km") == 0)
		*out = v * 1000.0;
	else if (g_ascii_strcasecmp(end, "mi") == 0)
		*out = v * 1609.344;
	else
		return FALSE;
	return TRUE;
}

static gboolean parse_point(const char *text, double *lat, double *lon)
{
	char *end = NULL;

	*lat = g_ascii_strtod(text, &end);
	if (end == text || (*end != ',' && *end != ' '))
		return FALSE;
	const char *p = end + 1;
	while (*p == ' ')
		p++;
	*lon = g_ascii_strtod(p, &end);
	return end != p && *end == '\0' && fabs(*lat) <= 90.0 && fabs(*lon) <= 180.0;
}

static gboolean parse_types(char **types, guint *mask)
{
	*mask = 0;
	for (char **t = types; t != NULL && *t != NULL; t++) {
		g_auto(GStrv) parts = g_strsplit(*t, ",", -1);
		for (char **p = parts; *p != NULL; p++) {
			int kind = pix_media_from_name(g_strstrip(*p));
			if (g_ascii_strcasecmp(*p, "photo") == 0)
				*mask |= 1u << PIX_MEDIA_IMAGE | 1u << PIX_MEDIA_RAW;
			else if (kind >= 0)
				*mask |= 1u << kind;
			else
				return FALSE;
		}
	}
	return TRUE;
}

/* The absolute path of `path` with symbolic links resolved as far as it
 * exists (a missing file's path is still a path to ask about). */
static char *query_path(const char *path)
{
	g_autofree char *abs = g_canonicalize_filename(path, NULL);
	g_autofree char *rest = NULL;
	char *head = g_strdup(abs);

	for (;;) {
		char *real = realpath(head, NULL);
		if (real != NULL) {
			char *full = rest != NULL ? g_build_filename(real, rest, NULL) : g_strdup(real);
			free(real);
			g_free(head);
			return full;
		}
		if (strcmp(head, "/") == 0) {
			g_free(head);
			return g_steal_pointer(&abs);
		}
		char *base = g_path_get_basename(head);
		char *up = g_path_get_dirname(head);
		char *r = rest != NULL ? g_build_filename(base, rest, NULL) : g_strdup(base);
		g_free(rest);
		rest = r;
		g_free(base);
		g_free(head);
		head = up;
	}
}

static int parse(const char *cmd, GOptionContext *ctx, int argc, char **argv, PixQueryOptions *o)
{
	g_autoptr(GError) error = NULL;
	PixFilter *f = &o->filter;

	if (!g_option_context_parse(ctx, &argc, &argv, &error))
		return pix_cmd_usage_error(cmd, "%s", error->message);
	if (pix_cmd_check_config() != PIX_EXIT_OK)
		return PIX_EXIT_USAGE;
	memset(f, 0, sizeof(*f));
	if (o->date != NULL && (o->from != NULL || o->to != NULL))
		return pix_cmd_usage_error(cmd, "--date cannot go with --from or --to");
	if (o->date != NULL)
		o->from = g_strdup(o->date), o->to = g_strdup(o->date);
	if (o->from != NULL && !is_date_prefix(o->from))
		return pix_cmd_usage_error(cmd, "'%s' is not a date (YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS])", o->from);
	if (o->to != NULL && !is_date_prefix(o->to))
		return pix_cmd_usage_error(cmd, "'%s' is not a date (YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS])", o->to);
	if (o->is_no_date && (o->from != NULL || o->to != NULL))
		return pix_cmd_usage_error(cmd, "--no-date cannot go with a date range");
	f->date_from = o->from;
	/* every date_taken that begins with --to is before it with a '~'
	 * appended ('~' sorts after the digits, 'T', ':' and '.') */
	if (o->to != NULL)
		f->date_to = o->date_to = g_strconcat(o->to, "~", NULL);
	f->is_no_date = o->is_no_date;
	f->make = o->make;
	f->model = o->model;
	if (!parse_types(o->types, &f->media_mask))
		return pix_cmd_usage_error(cmd, "--type: expected image, raw, video, sidecar, other or photo");
	if (o->radius != NULL && o->near == NULL)
		return pix_cmd_usage_error(cmd, "--radius needs --near");
	if (o->near != NULL) {
		f->has_near = TRUE;
		f->radius_m = 1000.0;
		if (!parse_point(o->near, &f->near_lat, &f->near_lon))
			return pix_cmd_usage_error(cmd, "--near: '%s' is not LAT,LON in decimal degrees", o->near);
		if (o->radius != NULL && !parse_distance(o->radius, &f->radius_m))
			return pix_cmd_usage_error(cmd, "--radius: '%s' is not a distance (500, 500m, 2km, 3mi)", o->radius);
	}
	if (o->is_missing + o->is_errors + o->is_all > 1)
		return pix_cmd_usage_error(cmd, "--missing, --errors and --all exclude each other");
	f->is_offline = o->is_offline;
	if (o->keyword != NULL && g_strstrip(o->keyword)[0] == '\0')
		return pix_cmd_usage_error(cmd, "--keyword: an empty keyword");
	if (o->person != NULL && g_strstrip(o->person)[0] == '\0')
		return pix_cmd_usage_error(cmd, "--person: an empty name");
	if (o->text != NULL && g_strstrip(o->text)[0] == '\0')
		return pix_cmd_usage_error(cmd, "--text: an empty word");
	const char *const words[] = { o->keyword, o->person, o->text };
	for (guint i = 0; i < G_N_ELEMENTS(words); i++)
		if (words[i] != NULL && !g_utf8_validate(words[i], -1, NULL))
			return pix_cmd_usage_error(cmd, "--keyword, --person and --text take UTF-8 text");
	f->keyword = o->keyword;
	f->person = o->person;
	f->text = o->text;
	if (o->rating != NULL) {
		f->has_rating = TRUE;
		if (!pix_meta_parse_int(g_strstrip(o->rating), -1, 5, &f->min_rating))
			return pix_cmd_usage_error(cmd, "--rating: '%s' is not a rating from -1 (rejected) to 5", o->rating);
	}
	f->show = o->is_missing ? PIX_SHOW_MISSING : o->is_errors ? PIX_SHOW_ERRORS
	          : o->is_all ? PIX_SHOW_ALL : PIX_SHOW_PRESENT;
	if (argc > 1) {
		o->paths = g_new0(char *, argc);
		for (int i = 1; i < argc; i++)
			o->paths[i - 1] = query_path(argv[i]);
		f->paths = o->paths;
	}
	return PIX_EXIT_OK;
}

PixStore *pix_query_start(const char *cmd, GOptionContext *ctx, int argc, char **argv, PixQueryOptions *o,
                          PixQueryCheckFn check, gpointer check_data, gboolean is_quiet, int *status)
{
	*status = parse(cmd, ctx, argc, argv, o);
	if (*status == PIX_EXIT_OK && check != NULL)
		*status = check(cmd, check_data);
	if (*status != PIX_EXIT_OK) {
		pix_query_options_clear(o);
		return NULL;
	}
	pix_log_init(is_quiet, FALSE);
	signal(SIGPIPE, SIG_DFL);
	PixStore *reader = pix_cmd_open_reader(o->db, status);
	if (reader == NULL)
		pix_query_options_clear(o);
	return reader;
}

/* --- records out --- */

void pix_query_json_value(GString *js, const char *key, const PixValue *v, gboolean *is_first)
{
	pix_json_key(js, key, is_first);
	switch (v->type) {
	case PIX_VAL_NULL:
		g_string_append(js, "null");
		break;
	case PIX_VAL_INT:
		g_string_append_printf(js, "%" G_GINT64_FORMAT, v->i);
		break;
	case PIX_VAL_REAL:
		if (isfinite(v->d))
			pix_json_real(js, v->d);
		else
			g_string_append(js, "null");
		break;
	case PIX_VAL_TEXT:
		pix_json_string(js, v->s);
		break;
	case PIX_VAL_BYTES: {
		g_autofree char *k = g_strconcat(key, "_b64", NULL);
		g_autofree char *b64 = g_base64_encode((const guchar *)v->s, v->len);
		pix_json_string(js, v->s);
		pix_json_key(js, k, is_first);
		pix_json_string(js, b64);
		break;
	}
	}
}

/* A column of lines (keywords, people) as a JSON array of strings; []
 * for NULL. */
static void json_lines(GString *js, const char *key, const PixValue *v, gboolean *is_first)
{
	pix_json_key(js, key, is_first);
	g_string_append_c(js, '[');
	if (v->type == PIX_VAL_TEXT) {
		g_auto(GStrv) lines = g_strsplit(v->s, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++) {
			if (i > 0)
				g_string_append_c(js, ',');
			pix_json_string(js, lines[i]);
		}
	}
	g_string_append_c(js, ']');
}

/* A CSV field: quoted when it holds a comma, quote, CR or LF. */
static void csv_text(GString *out, const char *text)
{
	g_autofree char *shown = g_utf8_validate(text, -1, NULL) ? NULL : pix_quote(text);
	const char *s = shown != NULL ? shown : text;

	if (strpbrk(s, ",\"\r\n") == NULL) {
		g_string_append(out, s);
		return;
	}
	g_string_append_c(out, '"');
	for (const char *p = s; *p != '\0'; p++) {
		if (*p == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

static void csv_value(GString *out, const PixValue *v)
{
	switch (v->type) {
	case PIX_VAL_NULL:
		break;
	case PIX_VAL_INT:
		g_string_append_printf(out, "%" G_GINT64_FORMAT, v->i);
		break;
	case PIX_VAL_REAL:
		if (isfinite(v->d))
			pix_json_real(out, v->d);
		break;
	case PIX_VAL_TEXT:
	case PIX_VAL_BYTES:
		csv_text(out, v->s);
		break;
	}
}

void pix_record_writer_init(PixRecordWriter *w, PixOutFormat format, FILE *out, gboolean has_distance)
{
	memset(w, 0, sizeof(*w));
	w->format = format;
	w->out = out;
	w->has_distance = has_distance;
	w->buf = g_string_sized_new(1024);
	if (format == PIX_OUT_CSV) {
		for (int c = 0; c < PIX_N_COLS; c++)
			g_string_append_printf(w->buf, "%s%s", c == 0 ? "" : ",", pix_column_names[c]);
		/* the exact bytes of a path that is not UTF-8 */
		g_string_append_printf(w->buf, ",path_b64%s\r\n", has_distance ? ",distance_m" : "");
	}
	if (format == PIX_OUT_HASHDEEP)
		g_string_append(w->buf, "%%%% HASHDEEP-1.0\n%%%% size,md5,filename\n## written by photoidx export from its catalog\n##\n");
}

/* A file as md5sum or hashdeep lists it; FALSE when it cannot be (no MD5,
 * or for hashdeep a newline in its path). */
static gboolean put_hash_line(PixRecordWriter *w, const PixRecord *r)
{
	const PixValue *p = &r->v[PIX_COL_PATH];
	const char *md5 = pix_record_text(r, PIX_COL_MD5);
	if (md5 == NULL || p->s == NULL)
		return FALSE;
	if (w->format == PIX_OUT_HASHDEEP) {
		if (memchr(p->s, '\n', p->len) != NULL)
			return FALSE;
		g_string_append_printf(w->buf, "%" G_GINT64_FORMAT ",%s,", pix_record_int(r, PIX_COL_SIZE, 0), md5);
		g_string_append_len(w->buf, p->s, (gssize)p->len);
		g_string_append_c(w->buf, '\n');
		return TRUE;
	}
	/* GNU md5sum: a name with a backslash or newline gets a leading
	 * backslash, and those two escaped */
	gboolean is_escaped = memchr(p->s, '\\', p->len) != NULL || memchr(p->s, '\n', p->len) != NULL;
	g_string_append_printf(w->buf, "%s%s  ", is_escaped ? "\\" : "", md5);
	for (gsize i = 0; i < p->len; i++) {
		if (is_escaped && p->s[i] == '\\')
			g_string_append(w->buf, "\\\\");
		else if (is_escaped && p->s[i] == '\n')
			g_string_append(w->buf, "\\n");
		else
			g_string_append_c(w->buf, p->s[i]);
	}
	g_string_append_c(w->buf, '\n');
	return TRUE;
}

static void writer_flush(PixRecordWriter *w)
{
	if (!w->is_failed && w->buf->len > 0 && fwrite(w->buf->str, 1, w->buf->len, w->out) != w->buf->len) {
		w->is_failed = TRUE;
		w->err = errno;
	}
	g_string_truncate(w->buf, 0);
}

gboolean pix_record_writer_put(gpointer writer, const PixRecord *r)
{
	PixRecordWriter *w = writer;
	GString *out = w->buf;
	PixValue dist = { .type = isnan(r->distance_m) ? PIX_VAL_NULL : PIX_VAL_REAL, .d = r->distance_m };

	if (w->format == PIX_OUT_MD5SUM || w->format == PIX_OUT_HASHDEEP) {
		if (!put_hash_line(w, r))
			w->n_unlisted++;
	} else if (w->format == PIX_OUT_CSV) {
		for (int c = 0; c < PIX_N_COLS; c++) {
			if (c > 0)
				g_string_append_c(out, ',');
			csv_value(out, &r->v[c]);
		}
		g_string_append_c(out, ',');
		if (r->v[PIX_COL_PATH].type == PIX_VAL_BYTES) {
			g_autofree char *b64 = g_base64_encode((const guchar *)r->v[PIX_COL_PATH].s, r->v[PIX_COL_PATH].len);
			g_string_append(out, b64);
		}
		if (w->has_distance) {
			g_string_append_c(out, ',');
			csv_value(out, &dist);
		}
		g_string_append(out, "\r\n");
	} else {
		gboolean is_first = TRUE;
		if (w->format == PIX_OUT_JSON)
			g_string_append(out, w->n == 0 ? "[\n" : ",\n");
		g_string_append_c(out, '{');
		for (int c = 0; c < PIX_N_COLS; c++) {
			if (pix_column_is_list((PixColumn)c))
				json_lines(out, pix_column_names[c], &r->v[c], &is_first);
			else
				pix_query_json_value(out, pix_column_names[c], &r->v[c], &is_first);
		}
		if (w->has_distance)
			pix_query_json_value(out, "distance_m", &dist, &is_first);
		g_string_append(out, w->format == PIX_OUT_JSONL ? "}\n" : "}");
	}
	w->n++;
	if (out->len >= 65536)
		writer_flush(w);
	return !w->is_failed;
}

gboolean pix_record_writer_finish(PixRecordWriter *w)
{
	if (w->format == PIX_OUT_JSON)
		g_string_append(w->buf, w->n == 0 ? "[]\n" : "\n]\n");
	writer_flush(w);
	if (!w->is_failed && fflush(w->out) != 0) {
		w->is_failed = TRUE;
		w->err = errno;
	}
	g_string_free(w->buf, TRUE);
	w->buf = NULL;
	return !w->is_failed;
}

char *pix_query_camera_name(const char *make, const char *model)
{
	if (model == NULL || make == NULL)
		return g_strdup(model != NULL ? model : make);
	g_auto(GStrv) words = g_strsplit_set(make, " ,.", -1);
	for (char **w = words; *w != NULL; w++)
		if (**w != '\0' && g_ascii_strncasecmp(model, *w, strlen(*w)) == 0)
			return g_strdup(model);
	return g_strdup_printf("%s %s", make, model);
}

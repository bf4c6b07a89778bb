/*
 * cmd-changes.c: `photoidx changes [--since N] [--json]`, the change log
 * for front ends: every addition, change, move, disappearance and return
 * after sequence number N, so a front end keeps its own view in step
 * without reading the whole catalog.
 *
 * Reads the catalog (a reader: never waits for, nor blocks, a scan);
 * writes the entries to stdout.  Main thread.
 *
 * Invariants:
 *  1. Entries come in seq order, only committed ones; `last_seq` (JSON) or
 *     the last line's seq is what to pass as --since next time.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd.h"
#include "cmd-query.h"
#include "json.h"
#include "log.h"
#include "store.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	gboolean is_json;
	gint64 n;
	gint64 last_seq;
	GString *buf;
} Printer;

static const char *state_name(PixFileState s)
{
	return s == PIX_STATE_MISSING ? "missing" : s == PIX_STATE_ERROR ? "error" : s == PIX_STATE_OFFLINE ? "offline" : "ok";
}

static void append_md5(GString *js, const char *key, gboolean has, const guint8 *md5, gboolean *first)
{
	pix_json_key(js, key, first);
	if (!has) {
		g_string_append(js, "null");
		return;
	}
	g_string_append_c(js, '"');
	for (int i = 0; i < 16; i++)
		g_string_append_printf(js, "%02x", md5[i]);
	g_string_append_c(js, '"');
}

static void append_size(GString *js, const char *key, gint64 v, gboolean *first)
{
	pix_json_int_or_null(js, key, v, v >= 0, first);
}

/* "key": path, and when the bytes are not UTF-8 (the string is then in
 * pix_quote()'s display form, which two names can share) "key_b64": the
 * exact bytes in base64, as every record of the read commands has it. */
static void append_path(GString *js, const char *key, const char *path, gboolean *first)
{
	PixValue v = { .type = PIX_VAL_NULL };
	if (path != NULL) {
		v.s = path;
		v.len = strlen(path);
		v.type = g_utf8_validate(path, (gssize)v.len, NULL) ? PIX_VAL_TEXT : PIX_VAL_BYTES;
	}
	pix_query_json_value(js, key, &v, first);
}

/* "key": the lines of `text` as an array of strings ([] for NULL). */
static void append_lines(GString *js, const char *key, const char *text, gboolean *first)
{
	pix_json_key(js, key, first);
	g_auto(GStrv) lines = text != NULL ? g_strsplit(text, "\n", -1) : NULL;
	g_string_append_c(js, '[');
	for (guint i = 0; lines != NULL && lines[i] != NULL; i++) {
		if (i > 0)
			g_string_append_c(js, ',');
		pix_json_string(js, lines[i]);
	}
	g_string_append_c(js, ']');
}

static gboolean print_change(gpointer data, const PixChange *c)
{
	Printer *p = data;
	GString *out = p->buf;

	g_string_truncate(out, 0);
	if (p->is_json) {
		gboolean first = TRUE;
		g_string_append(out, p->n > 0 ? ",\n{" : "\n{");
		pix_json_int(out, "seq", c->seq, &first);
		pix_json_int(out, "scan_id", c->scan_id, &first);
		pix_json_int(out, "at", c->at, &first);
		pix_json_key(out, "kind", &first);
		pix_json_string(out, c->kind);
		/* a volume's entry names no file */
		pix_json_int_or_null(out, "file_id", c->file_id, c->file_id > 0, &first);
		append_path(out, "path", c->path, &first);
		pix_json_str(out, "state", c->has_file ? state_name(c->state) : NULL, &first);
		pix_json_str(out, "volume", c->volume, &first);
		append_path(out, "old_path", c->old_path, &first);
		append_path(out, "new_path", c->new_path, &first);
		append_md5(out, "old_md5", c->has_old_md5, c->old_md5, &first);
		append_md5(out, "new_md5", c->has_new_md5, c->new_md5, &first);
		append_size(out, "old_size", c->old_size, &first);
		append_size(out, "new_size", c->new_size, &first);
		/* a keyword or rating change: present only then */
		if (c->has_keywords_change) {
			append_lines(out, "old_keywords", c->old_keywords, &first);
			append_lines(out, "new_keywords", c->new_keywords, &first);
		}
		if (c->has_rating_change) {
			pix_json_int_or_null(out, "old_rating", c->old_rating, c->has_old_rating, &first);
			pix_json_int_or_null(out, "new_rating", c->new_rating, c->has_new_rating, &first);
		}
		g_string_append_c(out, '}');
	} else if (c->old_path != NULL && c->new_path != NULL) {
		g_autofree char *qo = pix_quote(c->old_path), *qn = pix_quote(c->new_path);
		g_string_printf(out, "%" G_GINT64_FORMAT "\t%s\t%s\t%s\n", c->seq, c->kind, qn, qo);
	} else {
		/* a file's path now, or what the entry names: a forgotten
		 * file's, a volume's mount point */
		const char *path = c->path != NULL ? c->path : c->new_path != NULL ? c->new_path : c->old_path;
		g_autofree char *q = pix_quote(path != NULL ? path : "");
		g_string_printf(out, "%" G_GINT64_FORMAT "\t%s\t%s\n", c->seq, c->kind, q);
	}
	p->n++;
	p->last_seq = c->seq;
	return fwrite(out->str, 1, out->len, stdout) == out->len;
}

int pix_cmd_changes(int argc, char **argv)
{
	char *db_opt = NULL;
	gint64 since = 0, limit = 0;
	gboolean is_json = FALSE;
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt, PIX_DB_HELP, "FILE" },
		{ "since", 0, 0, G_OPTION_ARG_INT64, &since, "only changes after sequence number N (default 0: all)", "N" },
		{ "limit", 0, 0, G_OPTION_ARG_INT64, &limit, "at most N changes (then ask again with --since)", "N" },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "print a JSON object with last_seq and the changes", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- list the change log");
	g_autoptr(GError) error = NULL;

	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_summary(ctx, "Lists, in order, every file added, changed, moved, found missing or\n"
	                                  "restored after change N: one line per change, tab-separated\n"
	                                  "(seq, kind, path, and for a move the old path), or JSON.");
	int status = pix_cmd_parse("changes", ctx, argc, argv);
	g_autofree char *db = db_opt != NULL ? db_opt : pix_cmd_default_db();
	if (status != PIX_EXIT_OK)
		return status;
	if (since < 0 || limit < 0)
		return pix_cmd_usage_error("changes", "--since and --limit must be 0 or more");
	pix_log_init(FALSE, FALSE);
	signal(SIGPIPE, SIG_DFL);

	g_autoptr(PixStore) reader = pix_cmd_open_reader(db, &status);
	if (reader == NULL)
		return status;
	Printer p = { .is_json = is_json, .last_seq = since, .buf = g_string_new(NULL) };
	if (is_json)
		printf("{\"since\":%" G_GINT64_FORMAT ",\"changes\":[", since);
	gboolean is_ok = pix_store_each_change(reader, since, limit, print_change, &p, &error);
	g_string_free(p.buf, TRUE);
	if (!is_ok) {
		if (is_json)
			printf("]}\n");
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	if (is_json)
		printf("%s],\"count\":%" G_GINT64_FORMAT ",\"last_seq\":%" G_GINT64_FORMAT "}\n", p.n > 0 ? "\n" : "",
		       p.n, p.last_seq);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pix_error("cannot write the changes: %s", g_strerror(errno));
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}

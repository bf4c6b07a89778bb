/*
 * cmd-status.c: `photoidx status [--json]`: the catalog's path, its roots
 * (mounted now or offline) and volumes, its last runs, and the files the
 * next scan reads again without a change on disk.
 *
 * Reads the catalog (a reader) and the mount table as it is now; writes
 * stdout.  Main thread.
 *
 * Invariants:
 *  1. A root is "offline" when its volume is not mounted now (the mount
 *     table's word, as `photoidx scan` without a PATH decides).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "store.h"
#include "volume.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* Runs listed. */
#define STATUS_RUNS 5

typedef struct {
	gboolean is_json;
	gint64 n;
	GString *out;
} Status;

/* "key": a time, or null for never (0) */
static void json_time(GString *js, const char *key, gint64 v, gboolean *first)
{
	pix_json_int_or_null(js, key, v, v > 0, first);
}

static gboolean put_root(gpointer data, const PixRootRow *r)
{
	Status *st = data;
	g_autofree char *now = pix_volume_path_now(r->volume_kind, r->volume_ident, r->rel_path, r->path);
	if (st->is_json) {
		gboolean first = TRUE;
		g_string_append(st->out, st->n++ > 0 ? ",{" : "{");
		pix_json_str(st->out, "path", now != NULL ? now : r->path, &first);
		pix_json_str(st->out, "volume", r->volume_ident, &first);
		pix_json_str(st->out, "volume_label", r->volume_label, &first);
		pix_json_bool(st->out, "online", now != NULL, &first);
		json_time(st->out, "last_scan_at", r->last_scan_at, &first);
		g_string_append_c(st->out, '}');
		return TRUE;
	}
	g_autofree char *q = pix_quote(now != NULL ? now : r->path);
	g_autofree char *when = pix_cmd_time_text(r->last_scan_at);
	const char *vol = r->volume_label != NULL ? r->volume_label : r->volume_ident;
	g_string_append_printf(st->out, "  %s%s  (volume %s%s; last scan %s)\n", q, now == NULL ? "  offline" : "",
	                       vol != NULL ? vol : "not placed yet", "", when);
	return TRUE;
}

static gboolean put_volume(gpointer data, const PixVolumeRow *v)
{
	Status *st = data;
	const PixVolume *now = pix_volume_mounted(v->kind, v->ident);
	if (st->is_json) {
		gboolean first = TRUE;
		g_string_append(st->out, st->n++ > 0 ? ",{" : "{");
		pix_json_str(st->out, "ident", v->ident, &first);
		pix_json_str(st->out, "label", v->label, &first);
		pix_json_str(st->out, "mount_point", now != NULL ? now->mount_point : v->mount_point, &first);
		pix_json_bool(st->out, "online", now != NULL, &first);
		pix_json_int(st->out, "files", v->n_files, &first);
		pix_json_int(st->out, "bytes", v->bytes, &first);
		json_time(st->out, "last_scan_at", v->last_scan_at, &first);
		g_string_append_c(st->out, '}');
		return TRUE;
	}
	g_autofree char *bytes = pix_format_bytes(v->bytes);
	g_autofree char *where = pix_quote(now != NULL ? now->mount_point : v->mount_point);
	g_autofree char *when = pix_cmd_time_text(v->last_scan_at);
	g_string_append_printf(st->out, "  %s (%s)  %s%s  %" G_GINT64_FORMAT " files, %s; last scan %s\n",
	                       v->label != NULL ? v->label : "-", v->ident, now != NULL ? "" : "offline, last at ", where,
	                       v->n_files, bytes, when);
	return TRUE;
}

static gboolean put_run(gpointer data, const PixRunRow *r)
{
	Status *st = data;
	if (st->is_json) {
		gboolean first = TRUE;
		g_string_append(st->out, st->n++ > 0 ? ",{" : "{");
		pix_json_int(st->out, "id", r->id, &first);
		pix_json_str(st->out, "command", r->command, &first);
		pix_json_str(st->out, "state", r->state, &first);
		json_time(st->out, "started_at", r->started_at, &first);
		json_time(st->out, "finished_at", r->finished_at, &first);
		pix_json_int(st->out, "new", r->n_new, &first);
		pix_json_int(st->out, "changed", r->n_changed, &first);
		pix_json_int(st->out, "missing", r->n_missing, &first);
		pix_json_int(st->out, "errors", r->n_errors, &first);
		pix_json_int(st->out, "bytes_read", r->bytes_read, &first);
		if (r->exit_status >= 0)
			pix_json_int(st->out, "exit_status", r->exit_status, &first);
		g_string_append_c(st->out, '}');
		return TRUE;
	}
	g_autofree char *when = pix_cmd_time_text(r->started_at);
	g_autofree char *bytes = pix_format_bytes(r->bytes_read);
	g_autofree char *roots = g_strdelimit(g_strdup(r->roots != NULL && *r->roots != '\0' ? r->roots
	                                                : "(no root mounted)"), "\n", ' ');
	g_string_append_printf(st->out, "  %s  %-7s %-11s %" G_GINT64_FORMAT " new, %" G_GINT64_FORMAT " changed, %"
	                       G_GINT64_FORMAT " missing, %" G_GINT64_FORMAT " errors; read %s  %s\n",
	                       when, r->command, r->state, r->n_new, r->n_changed, r->n_missing, r->n_errors, bytes, roots);
	return TRUE;
}

int pix_cmd_status(int argc, char **argv)
{
	char *db_opt = NULL;
	gboolean is_json = FALSE;
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt, PIX_DB_HELP, "FILE" },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "print one JSON object", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- show the state of the catalog");
	g_autoptr(GError) error = NULL;
	int status = PIX_EXIT_OK;

	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_summary(ctx, "Shows the catalog's path, its roots (mounted now or offline) and volumes,\n"
	                                  "the last runs, and how many files the next scan reads again.");
	status = pix_cmd_parse("status", ctx, argc, argv);
	g_autofree char *db = db_opt != NULL ? db_opt : pix_cmd_default_db();
	if (status != PIX_EXIT_OK)
		return status;
	pix_log_init(FALSE, FALSE);
	signal(SIGPIPE, SIG_DFL);
	g_autoptr(PixStore) reader = pix_cmd_open_reader(db, &status);
	if (reader == NULL)
		return status;

	Status st = { .is_json = is_json, .out = g_string_new(NULL) };
	gint64 n_recheck = 0, n_unread = 0;
	gboolean is_first = TRUE, is_ok;
	g_autofree char *qdb = pix_store_display(db);
	if (is_json) {
		g_string_append_c(st.out, '{');
		/* (a PostgreSQL URI without its password) */
		g_autofree char *shown = pix_store_shown(db);
		pix_json_str(st.out, "catalog", shown, &is_first);
		pix_json_key(st.out, "roots", &is_first);
		g_string_append_c(st.out, '[');
	} else {
		g_string_append_printf(st.out, "catalog: %s\nroots:\n", qdb);
	}
	is_ok = pix_store_each_root(reader, put_root, &st, &error);
	st.n = 0;
	if (is_json) {
		g_string_append(st.out, "]");
		pix_json_key(st.out, "volumes", &is_first);
		g_string_append_c(st.out, '[');
	} else {
		g_string_append(st.out, "volumes:\n");
	}
	is_ok = is_ok && pix_store_each_volume(reader, put_volume, &st, &error);
	st.n = 0;
	if (is_json) {
		g_string_append(st.out, "]");
		pix_json_key(st.out, "runs", &is_first);
		g_string_append_c(st.out, '[');
	} else {
		g_string_append(st.out, "last runs:\n");
	}
	PixThumbsSize thumbs = { 0 };
	is_ok = is_ok && pix_store_each_run(reader, STATUS_RUNS, put_run, &st, &error) &&
	        pix_store_pending(reader, &n_recheck, &n_unread, &error) &&
	        pix_store_thumbs_size(reader, &thumbs, &error);
	if (is_json) {
		g_string_append(st.out, "]");
		pix_json_int(st.out, "recheck", n_recheck, &is_first);
		pix_json_int(st.out, "unread", n_unread, &is_first);
		pix_json_key(st.out, "thumbnails", &is_first);
		gboolean first = TRUE;
		g_string_append_c(st.out, '{');
		pix_json_int(st.out, "contents", thumbs.n_contents, &first);
		pix_json_int(st.out, "with_thumbnail", thumbs.n_thumbs, &first);
		pix_json_int(st.out, "bytes", thumbs.bytes, &first);
		g_string_append(st.out, "}}\n");
	} else {
		g_autofree char *b = pix_format_bytes(thumbs.bytes);
		g_string_append_printf(st.out, "awaiting the next scan: %" G_GINT64_FORMAT " files to read again (recheck),"
		                       " %" G_GINT64_FORMAT " never read\n", n_recheck, n_unread);
		g_string_append_printf(st.out, "thumbnails: %" G_GINT64_FORMAT " contents, %s; %" G_GINT64_FORMAT
		                       " contents with none (thumbs.note says why)\n",
		                       thumbs.n_thumbs, b, thumbs.n_contents - thumbs.n_thumbs);
	}
	if (!is_ok) {
		g_string_free(st.out, TRUE);
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	gboolean is_written = fwrite(st.out->str, 1, st.out->len, stdout) == st.out->len && fflush(stdout) == 0;
	g_string_free(st.out, TRUE);
	return is_written ? PIX_EXIT_OK : PIX_EXIT_FATAL;
}

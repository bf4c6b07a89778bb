/*
 * cmd-volumes.c: `photoidx volumes [--json]`, the disks, cards and shares
 * the catalog knows: label, identity, type, where each is mounted now or
 * "offline", its files and bytes, its last scan.  Also what the commands
 * about volumes share (opening a reader, times for people).
 *
 * Reads the catalog (a reader) and the mount table as it is now; writes
 * stdout.  Main thread.
 *
 * Invariants:
 *  1. "online" is the mount table's word now, not the catalog's from the
 *     last run: a card unplugged since says offline at once.  (On
 *     PostgreSQL, a volume another host saw mounted last says "on HOST".)
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

PixStore *pix_cmd_open_reader(const char *db, int *status)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = db != NULL ? g_strdup(db) : pix_cmd_default_db();
	PixStore *s = pix_store_open(path, PIX_STORE_READ, FALSE, &error);
	if (s == NULL) {
		pix_error("%s", error->message);
		*status = PIX_EXIT_FATAL;
	}
	return s;
}

char *pix_cmd_time_text(gint64 at_s)
{
	if (at_s <= 0)
		return g_strdup("never");
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(at_s);
	return t != NULL ? g_date_time_format(t, "%Y-%m-%d %H:%M") : g_strdup("?");
}

typedef struct {
	gboolean is_json;
	gint64 n;
	GString *out;
} Lister;

static gboolean print_volume(gpointer data, const PixVolumeRow *v)
{
	Lister *l = data;
	const PixVolume *now = pix_volume_mounted(v->kind, v->ident);
	GString *out = l->out;

	g_string_truncate(out, 0);
	if (l->is_json) {
		gboolean first = TRUE;
		g_string_append(out, l->n > 0 ? ",\n{" : "\n{");
		pix_json_int(out, "id", v->id, &first);
		pix_json_str(out, "kind", v->kind, &first);
		pix_json_str(out, "ident", v->ident, &first);
		pix_json_str(out, "uuid", v->uuid, &first);
		pix_json_str(out, "label", v->label, &first);
		pix_json_str(out, "fstype", v->fstype, &first);
		pix_json_str(out, "source", v->source, &first);
		/* where it is now, else where it was last seen */
		pix_json_str(out, "mount_point", now != NULL ? now->mount_point : v->mount_point, &first);
		pix_json_bool(out, "online", now != NULL, &first);
		/* PostgreSQL: mounted on another host, which saw it last */
		if (v->host != NULL) {
			pix_json_str(out, "host", v->host, &first);
			pix_json_bool(out, "on_another_host", now == NULL && v->is_online, &first);
		}
		pix_json_int(out, "files", v->n_files, &first);
		pix_json_int(out, "bytes", v->bytes, &first);
		pix_json_int(out, "missing", v->n_missing, &first);
		pix_json_int(out, "first_seen_at", v->first_seen_at, &first);
		pix_json_int(out, "last_seen_at", v->last_seen_at, &first);
		pix_json_int_or_null(out, "last_scan_at", v->last_scan_at, v->last_scan_at > 0, &first);
		g_string_append_c(out, '}');
	} else {
		g_autofree char *bytes = pix_format_bytes(v->bytes);
		g_autofree char *when = pix_cmd_time_text(v->last_scan_at);
		g_autofree char *where = pix_quote(now != NULL ? now->mount_point : v->mount_point);
		g_autofree char *host = v->host != NULL ? pix_quote(v->host) : NULL;
		g_autofree char *where_text = now != NULL ? g_strdup(where)
		                              : host != NULL && v->is_online ? g_strdup_printf("on %s at %s", host, where)
		                              : g_strdup_printf("offline (last at %s)", where);
		g_string_printf(out, "%-12s %-38s %-8s %-40s %8" G_GINT64_FORMAT " files %10s  last scan %s\n",
		                v->label != NULL ? v->label : "-", v->ident, v->fstype != NULL ? v->fstype : "-",
		                where_text, v->n_files, bytes, when);
	}
	l->n++;
	return fwrite(out->str, 1, out->len, stdout) == out->len;
}

int pix_cmd_volumes(int argc, char **argv)
{
	char *db_opt = NULL;
	gboolean is_json = FALSE;
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt, PIX_DB_HELP, "FILE" },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "print a JSON array of volumes", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- list the volumes of the catalog");
	g_autoptr(GError) error = NULL;
	int status = PIX_EXIT_OK;

	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_summary(ctx, "Lists each disk, card or share the catalog has files on: its label, its\n"
	                                  "identity (file system UUID, else label, else mount source), its type, where\n"
	                                  "it is mounted now or \"offline\", its files, their bytes and its last scan.");
	status = pix_cmd_parse("volumes", ctx, argc, argv);
	g_autofree char *db = db_opt;
	if (status != PIX_EXIT_OK)
		return status;
	pix_log_init(FALSE, FALSE);
	signal(SIGPIPE, SIG_DFL);
	g_autoptr(PixStore) reader = pix_cmd_open_reader(db, &status);
	if (reader == NULL)
		return status;
	Lister l = { .is_json = is_json, .out = g_string_new(NULL) };
	if (is_json)
		fputc('[', stdout);
	gboolean is_ok = pix_store_each_volume(reader, print_volume, &l, &error);
	if (is_json)
		fputs(l.n > 0 ? "\n]\n" : "]\n", stdout);
	g_string_free(l.out, TRUE);
	if (!is_ok) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	return fflush(stdout) == 0 ? PIX_EXIT_OK : PIX_EXIT_FATAL;
}

/*
 * cmd-forget.c: `photoidx forget --missing | --volume VOLUME [--dry-run]`:
 * removes from the catalog what the user asks to drop and nothing else:
 * the files found gone (state missing), or every file of a volume (a
 * disk given away, a card reformatted).  Says how many.
 *
 * Reads the command line and the catalog; writes it (the writer lock);
 * prints the count on stdout.  Main thread.
 *
 * Invariants:
 *  1. Nothing is removed without one of the two options: there is no
 *     default.
 *  2. A volume is named exactly (its id, identity, UUID or label); a label
 *     two volumes share is refused, naming both.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd.h"
#include "log.h"
#include "store.h"
#include "volume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *name;
	gint64 id;
	char *label;       /* (owned) */
	char *mounted_at;  /* where the mount table shows it now, or NULL (owned) */
	gint64 n_matches;
	GString *matches;
} Lookup;

static gboolean match_volume(gpointer data, const PixVolumeRow *v)
{
	Lookup *l = data;
	g_autofree char *id_text = g_strdup_printf("%" G_GINT64_FORMAT, v->id);
	if (strcmp(l->name, id_text) != 0 && strcmp(l->name, v->ident) != 0 &&
	    (v->uuid == NULL || g_ascii_strcasecmp(l->name, v->uuid) != 0) &&
	    (v->label == NULL || strcmp(l->name, v->label) != 0))
		return TRUE;
	l->n_matches++;
	l->id = v->id;
	const PixVolume *now = pix_volume_mounted(v->kind, v->ident);
	g_free(l->mounted_at);
	l->mounted_at = now != NULL ? g_strdup(now->mount_point) : NULL;
	g_free(l->label);
	l->label = v->label != NULL ? g_strdup_printf("%s (%s)", v->label, v->ident) : g_strdup(v->ident);
	g_string_append_printf(l->matches, "%s'%s'", l->matches->len > 0 ? ", " : "", v->ident);
	return TRUE;
}

int pix_cmd_forget(int argc, char **argv)
{
	char *db_opt = NULL, *volume = NULL;
	gboolean is_missing = FALSE, is_dry_run = FALSE, is_no_wait = FALSE, is_force = FALSE;
	GOptionEntry entries[] = {
		{ "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt, PIX_DB_HELP, "FILE" },
		{ "missing", 0, 0, G_OPTION_ARG_NONE, &is_missing, "remove the files found gone (state missing)", NULL },
		{ "volume", 0, 0, G_OPTION_ARG_STRING, &volume, "remove every file of VOLUME (its UUID, label, identity or id, as 'photoidx volumes' shows)", "VOLUME" },
		{ "dry-run", 'n', 0, G_OPTION_ARG_NONE, &is_dry_run, "say how many files would be removed, remove nothing", NULL },
		{ "force", 0, 0, G_OPTION_ARG_NONE, &is_force, "forget a volume that is mounted now (its next scan indexes it anew)", NULL },
		{ "no-wait", 0, 0, G_OPTION_ARG_NONE, &is_no_wait, "if another photoidx is writing the catalog, fail at once", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- remove files from the catalog");
	g_autoptr(GError) error = NULL;
	int status = PIX_EXIT_OK;

	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_summary(ctx, "Removes from the catalog the files found gone (--missing), or all the files\n"
	                                  "of a volume (--volume), with their metadata; the change log records each as\n"
	                                  "'forgotten'.  Nothing is ever removed otherwise: a scan marks a vanished file\n"
	                                  "missing and the files of an unplugged disk offline, and keeps them.");
	status = pix_cmd_parse("forget", ctx, argc, argv);
	if (status == PIX_EXIT_OK && is_missing == (volume != NULL))
		status = pix_cmd_usage_error("forget", "give one of --missing and --volume VOLUME");
	if (status != PIX_EXIT_OK) {
		g_free(db_opt);
		g_free(volume);
		return status;
	}
	pix_log_init(FALSE, FALSE);
	g_autofree char *db = db_opt != NULL ? db_opt : pix_cmd_default_db();
	g_autofree char *vol_name = volume;
	g_autoptr(PixStore) writer = pix_store_open(db, PIX_STORE_WRITE, is_no_wait, &error);
	if (writer == NULL) {
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	Lookup l = { .name = vol_name, .matches = g_string_new(NULL) };
	if (vol_name != NULL && !pix_store_each_volume(writer, match_volume, &l, &error)) {
		pix_error("%s", error->message);
		status = PIX_EXIT_FATAL;
	} else if (vol_name != NULL && l.n_matches == 0) {
		g_autofree char *q = pix_quote(vol_name);
		pix_error("no volume '%s' in the catalog (see 'photoidx volumes')", q);
		status = PIX_EXIT_USAGE;
	} else if (vol_name != NULL && l.n_matches > 1) {
		g_autofree char *q = pix_quote(vol_name);
		pix_error("'%s' names %" G_GINT64_FORMAT " volumes (%s): give its identity", q, l.n_matches,
		          l.matches->str);
		status = PIX_EXIT_USAGE;
	}
	g_string_free(l.matches, TRUE);
	if (status == PIX_EXIT_OK && vol_name != NULL && l.mounted_at != NULL && !is_force && !is_dry_run) {
		g_autofree char *q = pix_quote(l.mounted_at);
		pix_error("volume %s is mounted at '%s': its next scan would index it anew; unmount it first, or give --force",
		          l.label, q);
		status = PIX_EXIT_USAGE;
	}
	g_free(l.mounted_at);
	gint64 n = 0;
	if (status == PIX_EXIT_OK && !pix_store_forget(writer, vol_name != NULL ? l.id : 0, is_dry_run, &n, &error)) {
		pix_error("%s", error->message);
		status = PIX_EXIT_FATAL;
	}
	if (status == PIX_EXIT_OK) {
		const char *verb = is_dry_run ? "would forget" : "forgot";
		const char *files = n == 1 ? "file" : "files";
		if (vol_name != NULL)
			printf("%s %" G_GINT64_FORMAT " %s of volume %s\n", verb, n, files, l.label);
		else
			printf("%s %" G_GINT64_FORMAT " missing %s\n", verb, n, files);
	}
	g_free(l.label);
	return status;
}

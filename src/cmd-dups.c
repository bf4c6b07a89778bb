/*
 * cmd-dups.c: `photoidx dups [FILTERS] [PATH...] [--json]`: groups of
 * files with the same content (MD5 and size), the group that frees the
 * most first, and what keeping one copy of each would free.  Nothing is
 * deleted.
 *
 * Reads the catalog (a reader); writes to stdout.  Main thread.
 *
 * Invariants:
 *  1. Hard links to one file are not copies: they count once in what
 *     removing would free, and are marked as such.
 *  2. Only files present on disk, not empty, with an MD5 take part.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cmd-query.h"
#include "json.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>

typedef struct {
	gboolean is_json;
	gint64 n_groups, n_files, bytes_freed;
	GString *buf;
	gboolean is_failed;
} DupsOut;

/* The index of an earlier file of the group with the same device and
 * inode as file i (a hard link), or -1. */
static int link_of(const PixDupGroup *g, guint i)
{
	const PixRecord *r = g->files[i];
	for (guint k = 0; k < i; k++)
		if (pix_record_int(g->files[k], PIX_COL_DEV, -1) == pix_record_int(r, PIX_COL_DEV, -2) &&
		    pix_record_int(g->files[k], PIX_COL_INO, -1) == pix_record_int(r, PIX_COL_INO, -2))
			return (int)k;
	return -1;
}

static gboolean print_group(gpointer data, const PixDupGroup *g)
{
	DupsOut *d = data;
	GString *out = d->buf;
	gint64 freed = g->size * (gint64)(g->n_distinct - 1);

	g_string_truncate(out, 0);
	if (d->is_json) {
		gboolean is_first = TRUE;
		g_string_append(out, d->n_groups > 0 ? ",\n{" : "\n{");
		pix_json_key(out, "md5", &is_first);
		pix_json_string(out, g->md5);
		pix_json_int(out, "size", g->size, &is_first);
		pix_json_int(out, "copies", g->n_files, &is_first);
		pix_json_int(out, "distinct", g->n_distinct, &is_first);
		pix_json_int(out, "bytes_freed", freed, &is_first);
		pix_json_key(out, "files", &is_first);
		g_string_append_c(out, '[');
		for (guint i = 0; i < g->n_files; i++) {
			const PixRecord *r = g->files[i];
			gboolean is_first_f = TRUE;
			int link = link_of(g, i);
			g_string_append(out, i > 0 ? ",{" : "{");
			pix_query_json_value(out, "id", &r->v[PIX_COL_ID], &is_first_f);
			pix_query_json_value(out, "path", &r->v[PIX_COL_PATH], &is_first_f);
			pix_query_json_value(out, "mtime_ns", &r->v[PIX_COL_MTIME_NS], &is_first_f);
			pix_query_json_value(out, "state", &r->v[PIX_COL_STATE], &is_first_f);
			pix_json_key(out, "hard_link_of", &is_first_f);
			if (link >= 0)
				g_string_append_printf(out, "%" G_GINT64_FORMAT, pix_record_int(g->files[link], PIX_COL_ID, 0));
			else
				g_string_append(out, "null");
			g_string_append_c(out, '}');
		}
		g_string_append(out, "]}");
	} else {
		g_autofree char *size = pix_format_bytes(g->size);
		g_autofree char *free_s = pix_format_bytes(freed);
		g_string_append_printf(out, "%s%s  %u copies of %s, %s to free\n", d->n_groups > 0 ? "\n" : "", g->md5,
		                       g->n_files, size, free_s);
		for (guint i = 0; i < g->n_files; i++) {
			int link = link_of(g, i);
			g_autofree char *q = pix_quote(pix_record_text(g->files[i], PIX_COL_PATH));
			g_string_append_printf(out, "  %s", q);
			if (link >= 0) {
				g_autofree char *ql = pix_quote(pix_record_text(g->files[link], PIX_COL_PATH));
				g_string_append_printf(out, "  [hard link of %s: the same file]", ql);
			}
			g_string_append_c(out, '\n');
		}
	}
	d->n_groups++;
	d->n_files += g->n_files;
	d->bytes_freed += freed;
	if (fwrite(out->str, 1, out->len, stdout) != out->len)
		d->is_failed = TRUE;
	return !d->is_failed;
}

int pix_cmd_dups(int argc, char **argv)
{
	PixQueryOptions o = { 0 };
	gboolean is_json = FALSE;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &is_json, "a JSON object with the groups and totals", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL }
	};
	g_autoptr(GOptionContext) ctx = pix_query_context(&o, "[PATH...] - list files with the same content", entries,
		"Lists the groups of files at or below each PATH (default: all) that\n"
		"have the same content (MD5), and the bytes that keeping one copy of\n"
		"each would free.  Deletes nothing.  Hard links to one file are shown\n"
		"but free nothing; empty files are left out.");
	g_autoptr(GError) error = NULL;
	int status;
	g_autoptr(PixStore) reader = pix_query_start("dups", ctx, argc, argv, &o, NULL, NULL, FALSE, &status);

	if (reader == NULL)
		return status;
	DupsOut d = { .is_json = is_json, .buf = g_string_new(NULL) };
	if (is_json)
		printf("{\"groups\":[");
	gboolean is_ok = pix_store_each_dup(reader, &o.filter, print_group, &d, &error);
	pix_query_options_clear(&o);
	g_string_free(d.buf, TRUE);
	if (!is_ok) {
		if (is_json)
			printf("]}\n");
		pix_error("%s", error->message);
		return PIX_EXIT_FATAL;
	}
	if (is_json) {
		printf("%s],\"n_groups\":%" G_GINT64_FORMAT ",\"n_files\":%" G_GINT64_FORMAT
		       ",\"bytes_freed\":%" G_GINT64_FORMAT "}\n", d.n_groups > 0 ? "\n" : "", d.n_groups, d.n_files,
		       d.bytes_freed);
	} else {
		g_autofree char *freed = pix_format_bytes(d.bytes_freed);
		printf("%s%" G_GINT64_FORMAT " group%s of duplicates, %" G_GINT64_FORMAT " files: keeping one copy of each "
		       "would free %s\n", d.n_groups > 0 ? "\n" : "", d.n_groups, d.n_groups == 1 ? "" : "s", d.n_files,
		       freed);
	}
	if (d.is_failed || fflush(stdout) != 0 || ferror(stdout)) {
		pix_error("cannot write the list: %s", g_strerror(errno));
		return PIX_EXIT_FATAL;
	}
	return PIX_EXIT_OK;
}

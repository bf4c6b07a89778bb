/*
 * store-sidecars.c: XMP sidecars linked to their images at each commit
 * (files.sidecar_id), and what a sidecar lends an image that lacks it
 * (meta.lent): the files the open batch wrote are marked dirty, and
 * pix_store_relink() links them again.
 *
 * Writes through the writer PixStore, on its thread, inside its batch.
 *
 * Invariants:
 *  1. PixStore.dirty names every file the open batch wrote since the last
 *     pix_store_relink(), and is emptied only by it or with the batch
 *     (pix_store_batch_gone()).
 *  2. A keyword or rating change a new link brings is logged once: here
 *     for a link that changed, in store-write.c for a sidecar read again
 *     (whose link, then, does not change what counts).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"

#include <string.h>

/* A file the batch wrote, by its path (its row id may be new). */
typedef struct {
	gint64 dir_id;
	const char *name;       /* bytes, in PixStore.dirty_names */
} Dirty;

void pix_store_mark_dirty(PixStore *s, const PixItem *item)
{
	if (s->dirty == NULL) {
		s->dirty = g_array_new(FALSE, FALSE, sizeof(Dirty));
		s->dirty_names = g_string_chunk_new(64 * 1024);
	}
	Dirty d = { item->dir->id, g_string_chunk_insert(s->dirty_names, item->name) };
	g_array_append_val(s->dirty, d);
}


/* Runs statement `id` with `v` bound to ?1. */
static gboolean run_with(PixStore *s, StatementId id, gint64 v, GError **error)
{
	PixStmt *st = pix_store_stmt(s, id, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, v);
	return pix_store_step_done(s, st, "cannot link a sidecar", error);
}

/* Links image `id` to its sidecar, and lends what it lacks.  With
 * `is_retag_checked` (a sidecar of it was written, and the image is not
 * new in this run), a keyword or rating change the new link brings (a
 * sidecar made, deleted or renamed) is logged as a 'changed' entry of the
 * image (an edited sidecar's is, when it is written: store-write.c). */
static gboolean relink_image(PixStore *s, gint64 id, gboolean is_retag_checked, GError **error)
{
	static const StatementId steps[] = {
		ST_SIDECAR_LINK, ST_SIDECAR_UNLEND, ST_SIDECAR_META_ROW, ST_SIDECAR_LEND,
	};
	g_auto(PixTagsSeen) before = { NULL, -2, FALSE }, after = { NULL, -2, FALSE };
	guint8 md5[16];
	gboolean has_md5;
	gint64 size;
	if (is_retag_checked && !pix_store_image_tags(s, id, &before, md5, &has_md5, &size, error))
		return FALSE;
	for (guint k = 0; k < G_N_ELEMENTS(steps); k++)
		if (!run_with(s, steps[k], id, error))
			return FALSE;
	if (!is_retag_checked)
		return TRUE;
	return pix_store_image_tags(s, id, &after, md5, &has_md5, &size, error) &&
	       pix_store_put_retagged(s, id, has_md5 ? md5 : NULL, size, &before, &after, error);
}

/*
 * Links XMP sidecars to their images (files.sidecar_id) and lends an image
 * the sidecar's date and position when it has none of its own (meta.lent
 * says what was lent, so it is taken back when the sidecar goes, changes
 * or the image gets its own), for the files the batch wrote: an image is
 * linked again; a sidecar links again the files linked to it and those its
 * name fits.  Run before each commit.  Files in directories with no
 * sidecar and no linked file cost one look-up per PIX_STORE_SET
 * directories.
 */
typedef struct {
	GArray *ids;            /* gint64, in set order */
	GHashTable *with;       /* the directory ids that have sidecars */
} SidecarDirs;

static void bind_sidecar_dir(PixStmt *st, int i, guint k, gpointer data)
{
	pix_db_bind_int64(st, i, g_array_index(((SidecarDirs *)data)->ids, gint64, k));
}

static void take_sidecar_dir(PixStmt *st, gpointer data)
{
	g_hash_table_add(((SidecarDirs *)data)->with, GSIZE_TO_POINTER((gsize)pix_db_column_int64(st, 0)));
}

gboolean pix_store_relink(PixStore *s, GError **error)
{
	if (s->dirty == NULL || s->dirty->len == 0)
		return TRUE;
	/* image id -> whether a sidecar of it was written (GINT_TO_POINTER) */
	g_autoptr(GHashTable) images = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	/* which of the batch's directories have sidecars, asked at once */
	g_autoptr(GHashTable) asked = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_autoptr(GHashTable) with = g_hash_table_new(g_direct_hash, g_direct_equal);
	SidecarDirs dirs = { g_array_new(FALSE, FALSE, sizeof(gint64)), with };
	for (guint i = 0; i < s->dirty->len; i++) {
		const Dirty *d = &g_array_index(s->dirty, Dirty, i);
		if (g_hash_table_add(asked, GSIZE_TO_POINTER((gsize)d->dir_id)))
			g_array_append_val(dirs.ids, d->dir_id);
	}
	gboolean ok = pix_store_run_set(s, ST_SIDECAR_DIRS, 1, 0, dirs.ids->len, bind_sidecar_dir, take_sidecar_dir,
	                                &dirs, "cannot look for sidecars", error);
	g_array_free(dirs.ids, TRUE);
	if (!ok)
		return FALSE;
	for (guint i = 0; i < s->dirty->len; i++) {
		const Dirty *d = &g_array_index(s->dirty, Dirty, i);
		if (!g_hash_table_contains(with, GSIZE_TO_POINTER((gsize)d->dir_id)))
			continue;
		PixStmt *at = pix_store_stmt(s, ST_FILE_AT, error);
		if (at == NULL)
			return FALSE;
		pix_db_bind_int64(at, 1, d->dir_id);
		pix_store_bind_path(at, 2, d->name);
		if (pix_db_step(at) != PIX_DB_ROW) {
			pix_db_reset(at);
			continue;       /* gone (a move that lost to a copy) */
		}
		gint64 id = pix_db_column_int64(at, 0);
		gboolean is_sidecar = g_strcmp0((const char *)pix_db_column_text(at, 1), "sidecar") == 0;
		pix_db_reset(at);
		if (!is_sidecar) {
			if (!g_hash_table_contains(images, &id))
				g_hash_table_insert(images, g_memdup2(&id, sizeof id), GINT_TO_POINTER(FALSE));
			continue;
		}
		/* IMG_1.CR2.xmp: the files it may belong to start with IMG_1.CR2 */
		gsize len = strlen(d->name);
		if (len <= 4 || g_ascii_strcasecmp(d->name + len - 4, ".xmp") != 0)
			continue;
		g_autofree char *stem = g_strndup(d->name, len - 4);
		PixStmt *st = pix_store_stmt(s, ST_SIDECAR_IMAGES, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, id);
		pix_db_bind_int64(st, 2, d->dir_id);
		g_autofree char *after = g_strconcat(stem, ".", NULL), *past = g_strconcat(stem, "/", NULL);
		pix_store_bind_path(st, 4, stem);
		pix_store_bind_path(st, 5, after);
		pix_store_bind_path(st, 6, past);
		int rc;
		while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
			gint64 image = pix_db_column_int64(st, 0);
			g_hash_table_insert(images, g_memdup2(&image, sizeof image), GINT_TO_POINTER(TRUE));
		}
		if (rc != PIX_DB_DONE)
			return pix_store_step_done(s, st, "cannot look for a sidecar's images", error);
		pix_db_reset(st);
	}
	/* each once, even when it and its sidecar were both written */
	GHashTableIter iter;
	gpointer key, via_sidecar;
	g_hash_table_iter_init(&iter, images);
	while (g_hash_table_iter_next(&iter, &key, &via_sidecar)) {
		/* an image new in this run came with its sidecar: nothing
		 * changed for it */
		gint64 id = *(gint64 *)key;
		if (!relink_image(s, id, GPOINTER_TO_INT(via_sidecar) && id <= s->rows_before_run, error))
			return FALSE;
	}
	pix_store_dirty_reset(s);
	return TRUE;
}

/*
 * store-thumbs.c: the thumbnails table (schema/0007-thumbnails.sql), by
 * content: the writer puts an item's thumbnail beside its file row, drops
 * a content's thumbnail with its last file, and, for a scan with
 * thumbnails, flags the files whose content has none to be read again.
 *
 * Runs on the store thread (the writer), and on the main thread for the
 * flags before a scan, for status, and for the exports that read the
 * renditions (pix_store_each_thumb()).
 *
 * Invariants (those of the table, kept here):
 *  1. A thumbnail row is written only with the file row of an item that
 *     has an MD5, in the same batch.
 *  2. A note never replaces a thumbnail (ST_THUMB_PUT's upsert).
 *  3. A content's row goes when no file row has its MD5 and size: checked
 *     when a file's content changes (put) and after a forget.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store.h"
#include "store-int.h"

#include <string.h>

static void bind_rendition(PixStmt *st, int first, const PixThumb *t, PixThumbSize size)
{
	if (t->note != NULL)
		return;     /* NULL, all three */
	pix_db_bind_int64(st, first, t->width_px[size]);
	pix_db_bind_int64(st, first + 1, t->height_px[size]);
	gsize len = 0;
	const void *data = g_bytes_get_data(t->jpeg[size], &len);
	pix_db_bind_blob(st, first + 2, data, (int)len, PIX_DB_STATIC);
}

gboolean pix_store_put_thumb(PixStore *s, const PixItem *item, GError **error)
{
	const PixThumb *t = item->thumb;
	g_assert(t != NULL && item->has_md5);
	PixStmt *st = pix_store_stmt(s, ST_THUMB_PUT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_blob(st, 1, item->md5, 16, PIX_DB_STATIC);
	pix_db_bind_int64(st, 2, item->st.size_bytes);
	pix_db_bind_int64(st, 3, PIX_THUMB_VERSION);
	pix_store_bind_text_or_null(st, 4, t->source);
	pix_store_bind_text_or_null(st, 5, t->note);
	bind_rendition(st, 6, t, PIX_THUMB_LARGE);
	bind_rendition(st, 9, t, PIX_THUMB_XLARGE);
	pix_db_bind_int64(st, 12, s->now_s);
	pix_store_bind_phash(st, 13, &t->phash);
	return pix_store_step_done(s, st, "cannot write a thumbnail", error);
}

gboolean pix_store_drop_thumb(PixStore *s, const guint8 md5[16], gint64 size_bytes, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_THUMB_DROP, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_blob(st, 1, md5, 16, PIX_DB_STATIC);
	pix_db_bind_int64(st, 2, size_bytes);
	return pix_store_step_done(s, st, "cannot drop a thumbnail", error);
}

gboolean pix_store_drop_unused_thumbs(PixStore *s, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_THUMBS_DROP_UNUSED, error);
	return st != NULL && pix_store_step_done(s, st, "cannot drop unused thumbnails", error);
}

gboolean pix_store_want_thumbs(PixStore *s, char **roots, GError **error)
{
	if (!pix_store_begin_batch(s, error))
		return FALSE;
	for (char **r = roots; *r != NULL; r++) {
		PixStmt *st = pix_store_stmt(s, ST_THUMBS_WANTED, error);
		if (st == NULL)
			goto failed;
		gsize len = strlen(*r);
		pix_store_bind_path_as(st, 1, *r, len, FALSE);
		pix_store_bind_path_as(st, 2, *r, len, TRUE);
		pix_store_bind_below(st, 3, *r);
		pix_db_bind_int64(st, 7, PIX_THUMB_VERSION);
		if (!pix_store_step_done(s, st, "cannot flag the files that want a thumbnail", error))
			goto failed;
	}
	return pix_store_commit(s, error);
failed:
	pix_store_rollback_batch(s);
	return FALSE;
}

gboolean pix_store_thumbs_size(PixStore *s, PixThumbsSize *out, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_THUMBS_SIZE, error);
	if (st == NULL)
		return FALSE;
	int rc = pix_db_step(st);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot read the thumbnails' size");
		return FALSE;
	}
	out->n_contents = pix_db_column_int64(st, 0);
	out->n_thumbs = pix_db_column_int64(st, 1);
	out->bytes = pix_db_column_int64(st, 2);
	pix_db_reset(st);
	return TRUE;
}

PixThumbIndex *pix_store_thumb_index(PixStore *s, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_THUMBS_ALL, error);
	if (st == NULL)
		return NULL;
	g_autoptr(PixThumbIndex) x = pix_thumb_index_new();
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		guint8 md5[16];
		if (pix_store_column_md5(st, 1, md5))
			pix_thumb_index_add(x, pix_db_column_int64(st, 0), md5);
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the thumbnails table");
		return NULL;
	}
	pix_thumb_index_seal(x);
	return g_steal_pointer(&x);
}

/* The contents asked for per statement: a server's answer to one is held
 * whole (db-pg.c), at most this many contents' renditions. */
#define THUMBS_PER_STATEMENT 64

typedef struct {
	const guint8 (*md5s)[16];
	PixThumbRowFn fn;
	gpointer data;
} EachThumb;

static void bind_md5(PixStmt *st, int i, guint k, gpointer data)
{
	EachThumb *e = data;
	pix_db_bind_blob(st, i, e->md5s[k], 16, PIX_DB_STATIC);
}

static void on_thumb_row(PixStmt *st, gpointer data)
{
	EachThumb *e = data;
	PixThumbRow row = { 0 };
	if (!pix_store_column_md5(st, 0, row.md5))
		return;
	row.size_bytes = pix_db_column_int64(st, 1);
	for (int i = 0; i < PIX_THUMB_N_SIZES; i++) {
		int col = 2 + 3 * i;
		gint64 w = pix_db_column_int64(st, col), h = pix_db_column_int64(st, col + 1);
		/* a row the maker wrote has both; anything else is not a thumbnail */
		if (w <= 0 || h <= 0 || w > G_MAXINT32 || h > G_MAXINT32)
			return;
		row.width_px[i] = (guint)w;
		row.height_px[i] = (guint)h;
		row.jpeg[i] = pix_db_column_blob(st, col + 2);
		row.jpeg_bytes[i] = row.jpeg[i] != NULL ? (gsize)pix_db_column_bytes(st, col + 2) : 0;
		if (row.jpeg_bytes[i] == 0)
			row.jpeg[i] = NULL;
	}
	e->fn(e->data, &row);
}

gboolean pix_store_each_thumb(PixStore *s, const guint8 (*md5s)[16], guint n, guint sizes, PixThumbRowFn fn,
                              gpointer data, GError **error)
{
	g_assert(sizes != 0 && sizes < (1u << PIX_THUMB_N_SIZES));
	for (guint from = 0; from < n; from += THUMBS_PER_STATEMENT) {
		EachThumb e = { .md5s = md5s + from, .fn = fn, .data = data };
		guint k = MIN(n - from, THUMBS_PER_STATEMENT);
		if (!pix_store_run_set(s, ST_THUMBS_BY_MD5S, 2, sizes, k, bind_md5, on_thumb_row, &e,
		                       "cannot read the thumbnails", error))
			return FALSE;
	}
	return TRUE;
}

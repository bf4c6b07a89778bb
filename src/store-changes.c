/*
 * store-changes.c: the change log's rows (schema: changes): an entry bound
 * to its statement, and written into the open batch the way the catalog's
 * backend numbers them (at once on SQLite; kept and numbered at the
 * commit on PostgreSQL, store-pg.c).
 *
 * Writes through the writer PixStore, on its thread.
 *
 * Invariants:
 *  1. An entry is written in the same transaction as the change to its
 *     row (the caller's batch: pix_store_put_change_row() asserts one is
 *     open).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"

void pix_store_change_row_clear(gpointer p)
{
	PixChangeRow *c = p;
	g_free(c->old_path);
	g_free(c->new_path);
	g_free(c->old_keywords);
	g_free(c->new_keywords);
}

void pix_store_change_row_keep(PixChangeRow *kept, const PixChangeRow *c)
{
	*kept = *c;
	kept->old_path = g_strdup(c->old_path);
	kept->new_path = g_strdup(c->new_path);
	kept->old_keywords = g_strdup(c->old_keywords);
	kept->new_keywords = g_strdup(c->new_keywords);
}

void pix_store_bind_change(PixStore *s, PixStmt *st, const PixChangeRow *c)
{
	if (s->scan_id > 0)
		pix_db_bind_int64(st, 1, s->scan_id);
	if (c->file_id != 0)
		pix_db_bind_int64(st, 2, c->file_id);
	pix_db_bind_int64(st, 3, s->now_s);
	pix_db_bind_text(st, 4, c->kind, -1, PIX_DB_STATIC);
	if (c->old_path != NULL)
		pix_store_bind_path(st, 5, c->old_path);
	if (c->new_path != NULL)
		pix_store_bind_path(st, 6, c->new_path);
	if (c->has_old_md5)
		pix_db_bind_blob(st, 7, c->old_md5, 16, PIX_DB_STATIC);
	if (c->has_new_md5)
		pix_db_bind_blob(st, 8, c->new_md5, 16, PIX_DB_STATIC);
	if (c->has_old_size)
		pix_db_bind_int64(st, 9, c->old_size);
	if (c->has_new_size)
		pix_db_bind_int64(st, 10, c->new_size);
	if (c->volume_id != 0)
		pix_db_bind_int64(st, 11, c->volume_id);
	/* ?12 is PostgreSQL's seq (ST_CHANGE_INSERT_SEQ) */
	if (c->has_keywords_change) {
		pix_store_bind_text_or_null(st, 13, c->old_keywords);
		pix_store_bind_text_or_null(st, 14, c->new_keywords);
	}
	if (c->has_rating_change) {
		if (c->old_rating != -2)
			pix_db_bind_int64(st, 15, c->old_rating);
		if (c->new_rating != -2)
			pix_db_bind_int64(st, 16, c->new_rating);
	}
}

gboolean pix_store_put_change_row(PixStore *s, const PixChangeRow *c, GError **error)
{
	g_assert(s->in_batch);
	return s->be->put_change(s, c, error);
}

/* The SQLite way (pix_store_sqlite_backend): written at once, numbered
 * by its insert. */
gboolean pix_store_insert_change_row(PixStore *s, const PixChangeRow *c, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_CHANGE_INSERT, error);
	if (st == NULL)
		return FALSE;
	pix_store_bind_change(s, st, c);
	return pix_store_step_done(s, st, "cannot write the change log", error);
}

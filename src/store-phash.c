/*
 * store-phash.c: the perceptual hashes of the thumbnails table
 * (schema/0008-similar.sql), beside each content's renditions: bound into
 * a thumbnail's row by the writer (pix_store_bind_phash(), for
 * store-thumbs.c), and filled in for the rows that have none, from their
 * stored renditions (pix_store_fill_phashes(), before a scan with
 * thumbnails).
 *
 * Runs on the store thread (the binding) and on the main thread (the
 * fill, on the writer before the pipeline starts; the hashing itself is
 * the caller's, on its threads).
 *
 * Invariants:
 *  1. Every row this file writes gets phash_version = PIX_PHASH_VERSION,
 *     with a hash or without one (a note, a rendition that does not
 *     decode), so the fill visits a row once per version and ends.
 *  2. A chunk's hashes are written in one batch; the catalog holds whole
 *     chunks (a failure rolls the chunk back, its rows stay wanted).
 * Both hold by construction (one binder writes every row's version; the
 * batch is pix_store_begin_batch()'s, checked by pix_store_check()); a
 * fill that did not end would show in t3007, which counts the rows left
 * without a version.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store.h"
#include "store-int.h"

#include <string.h>

void pix_store_bind_phash(PixStmt *st, int first, const PixPhash *h)
{
	if (h->is_set) {
		pix_db_bind_int64(st, first, (gint64)h->value);
		pix_db_bind_int64(st, first + 1, h->is_weak ? 1 : 0);
	} else {
		pix_db_bind_null(st, first);
		pix_db_bind_null(st, first + 1);
	}
	pix_db_bind_int64(st, first + 2, PIX_PHASH_VERSION);     /* invariant 1 */
}

static void job_clear(gpointer p)
{
	PixPhashJob *j = p;
	g_clear_pointer(&j->jpeg, g_bytes_unref);
}

/* The next chunk of wanted rows into `jobs`. */
static gboolean wanted(PixStore *s, GArray *jobs, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_PHASH_WANTED, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, PIX_PHASH_VERSION);
	g_array_set_size(jobs, 0);
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		PixPhashJob j = { .size_bytes = pix_db_column_int64(st, 1) };
		if (!pix_store_column_md5(st, 0, j.md5))
			continue;       /* no such row is written (invariant of thumbs) */
		if (pix_db_column_type(st, 2) == PIX_DB_NULL && pix_db_column_type(st, 3) != PIX_DB_NULL)
			j.jpeg = g_bytes_new(pix_db_column_blob(st, 3), (gsize)pix_db_column_bytes(st, 3));
		g_array_append_val(jobs, j);
	}
	pix_db_reset(st);
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the thumbnails without a perceptual hash");
		return FALSE;
	}
	return TRUE;
}

gboolean pix_store_fill_phashes(PixStore *s, PixPhashFn fn, gpointer data, gint64 *n_filled, GError **error)
{
	g_autoptr(GArray) jobs = g_array_sized_new(FALSE, TRUE, sizeof(PixPhashJob), PIX_PHASH_CHUNK);
	g_array_set_clear_func(jobs, job_clear);
	*n_filled = 0;
	for (;;) {
		if (!pix_store_begin_batch(s, error))
			return FALSE;
		if (!wanted(s, jobs, error))
			goto failed;
		if (jobs->len == 0)
			return pix_store_commit(s, error);
		fn((PixPhashJob *)(void *)jobs->data, jobs->len, data);
		for (guint i = 0; i < jobs->len; i++) {
			const PixPhashJob *j = &g_array_index(jobs, PixPhashJob, i);
			PixStmt *st = pix_store_stmt(s, ST_PHASH_SET, error);
			if (st == NULL)
				goto failed;
			pix_db_bind_blob(st, 1, j->md5, 16, PIX_DB_STATIC);
			pix_db_bind_int64(st, 2, j->size_bytes);
			pix_store_bind_phash(st, 3, &j->phash);
			if (!pix_store_step_done(s, st, "cannot write a perceptual hash", error))
				goto failed;
			if (j->phash.is_set)
				(*n_filled)++;
		}
		if (!pix_store_commit(s, error))
			return FALSE;       /* invariant 2: the commit's failure rolled it back */
	}
failed:
	pix_store_rollback_batch(s);
	return FALSE;
}

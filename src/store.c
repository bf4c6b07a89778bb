/*
 * store.c: opening and closing the catalog (see store.h): the path or URI
 * chooses the backend (store-sqlite.c, store-pg.c, through the
 * PixStoreBackend table of store-int.h), which opens, checks and migrates
 * it; then every statement of the table is prepared, so that a dialect
 * mistake fails here.  The top of the store: no store file calls it.
 *
 * A writer PixStore runs on the store thread (and on the main thread
 * before and after the pipeline); a reader PixStore runs on plan's thread.
 *
 * The store's files, each calling only those on the lines below its own
 * (tests/cli/t0003-store-layers.sh reads this list and checks it against
 * the symbols each object file takes from another):
 *
 *   store.c                       opening and closing, the backend chosen
 *   store-write.c, store-forget.c the items of a run in batches (files,
 *                                 directories, moves, metadata); forget
 *   store-thumbs.c                thumbnails by content
 *   store-phash.c                 their perceptual hashes
 *   store-runs.c                  runs, their locks, their transactions
 *   store-sidecars.c              sidecars linked to their images at commit
 *   store-tags.c                  keywords and people; their changes logged
 *   store-query.c                 the read commands (ls, dups, stats...)
 *   store-read.c                  plan's, walk's and verify's questions
 *   store-volumes.c               volumes: where each is now, their rows
 *   store-sqlite.c, store-pg.c    the two backends (PixStoreBackend)
 *   store-changes.c               the change log's rows
 *   store-sql.c                   the statement table, the helpers of all
 *
 * The backends are called through s->be, never by name, but for the
 * choice of one in pix_store_open().  (store-kpa.c writes KPhotoAlbum's
 * exif-info.db, not the catalog, and is not part of this.)
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store.h"
#include "store-int.h"
#include "log.h"

#include <string.h>
#include <unistd.h>

char *pix_store_shown(const char *path)
{
	if (!pix_db_is_pg_uri(path))
		return g_strdup(path);
	g_autoptr(GUri) u = g_uri_parse(path, G_URI_FLAGS_HAS_PASSWORD | G_URI_FLAGS_ENCODED, NULL);
	return u != NULL ? g_uri_to_string_partial(u, G_URI_HIDE_PASSWORD) : g_strdup(path);
}

char *pix_store_display(const char *path)
{
	g_autofree char *shown = pix_store_shown(path);
	return pix_quote(shown);
}

PixStore *pix_store_open(const char *path, PixStoreMode mode, gboolean is_no_wait, GError **error)
{
	g_autoptr(PixStore) s = g_new0(PixStore, 1);
	gint64 version = 0;
	s->be = pix_db_is_pg_uri(path) ? &pix_store_pg_backend : &pix_store_sqlite_backend;
	s->path = g_strdup(path);
	s->display = pix_store_display(path);
	s->mode = mode;
	s->is_no_wait = is_no_wait;
	s->lock_fd = -1;
	s->volume_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	s->unknown_devs = g_hash_table_new(g_direct_hash, g_direct_equal);
	s->dir_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!s->be->open(s, &version, error))
		return NULL;
	int current = *s->be->schema_count;
	const char *q = s->display;
	if (version == 0) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s' is empty (its first scan has not set it up): 'photoidx scan PATH' makes it", q);
		return NULL;
	} else if (version < current) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s' has schema version %" G_GINT64_FORMAT
		            "; run 'photoidx scan' once to upgrade it", q, version);
		return NULL;
	}
	/* a statement of the table that this catalog's engine refuses (a
	 * dialect mistake, a column a migration lacks) fails here, not at the
	 * first rescan that reaches it */
	guint n_statements;
	if (!pix_store_prepare_all(s, &n_statements, error))
		return NULL;
	g_assert(pix_store_check(s));
	return g_steal_pointer(&s);
}

void pix_store_free(PixStore *s)
{
	if (s == NULL)
		return;
	if (s->in_batch)
		pix_db_exec(s->db, "ROLLBACK");
	for (int i = 0; i < N_STATEMENTS; i++)
		pix_db_finalize(s->stmts[i]);
	pix_db_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	g_strfreev(s->roots);
	if (s->rates != NULL)
		g_array_free(s->rates, TRUE);
	pix_store_dirty_free(s);
	g_clear_pointer(&s->volume_ids, g_hash_table_destroy);
	g_clear_pointer(&s->unknown_devs, g_hash_table_destroy);
	g_clear_pointer(&s->dir_ids, g_hash_table_destroy);
	if (s->pg_changes != NULL)
		g_array_free(s->pg_changes, TRUE);
	g_clear_pointer(&s->pg_locked, g_hash_table_destroy);
	g_free(s->path);
	g_free(s->display);
	g_free(s);
}


gboolean pix_store_reconnect(PixStore *s, guint attempts, GError **error)
{
	if (s->be->reconnect == NULL) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FAILED,
		            "catalog '%s': a %s catalog has no connection to make again", s->display, s->be->name);
		return FALSE;
	}
	return s->be->reconnect(s, attempts, error);
}

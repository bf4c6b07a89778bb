/*
 * store-forget.c: `photoidx forget`: the rows of a volume, or the files
 * missing, removed from the catalog in one transaction, each file's last
 * word written to the change log first.
 *
 * Writes through the writer PixStore, on the main thread, outside a run.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"

gboolean pix_store_forget(PixStore *s, gint64 volume_id, gboolean is_dry_run, gint64 *n_files, GError **error)
{
	static const char *const what = "cannot forget files";
	g_assert(pix_store_check(s) && s->mode == PIX_STORE_WRITE && !s->in_batch);
	*n_files = 0;
	if (!pix_store_begin_batch(s, error))
		return FALSE;
	/* the rows to forget, by id; then each step refers to them */
	if (!pix_store_exec(s, "CREATE TEMP TABLE IF NOT EXISTS forget_ids (id INTEGER PRIMARY KEY); DELETE FROM forget_ids",
	              what, error) ||
	    !pix_store_run_ints(s, volume_id == 0
	                 ? "INSERT INTO forget_ids SELECT id FROM files WHERE state = 'missing' AND ?1 = 0"
	                 : "INSERT INTO forget_ids SELECT f.id FROM files f JOIN dirs d ON d.id = f.dir_id"
	                   " WHERE d.volume_id = ?1",
	              what, error, 1, volume_id))
		goto fail;
	*n_files = pix_db_changes(s->db);
	/* each one's last word in the change log, then the rows */
	/* (where file_info.path is text, its bytes are path_bytes) */
#define FORGOTTEN(path) "INSERT INTO changes (file_id, at, kind, old_path, old_md5, old_size)" \
	" SELECT i.id, ?1, 'forgotten', i." path ", f.md5, f.size FROM forget_ids x" \
	" JOIN file_info i ON i.id = x.id JOIN files f ON f.id = x.id ORDER BY x.id"
	gboolean is_logged = pix_store_run_ints(s, s->be->has_bytes_columns ? FORGOTTEN("path_bytes") : FORGOTTEN("path"), what, error,
	                              1, pix_store_now());
#undef FORGOTTEN
	if (!is_logged ||
	    !pix_store_exec(s, "UPDATE files SET sidecar_id = NULL WHERE sidecar_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM meta WHERE file_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM keywords WHERE file_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM people WHERE file_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM files WHERE id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM forget_ids", what, error))
		goto fail;
	if (volume_id != 0) {
		if (!pix_store_run_ints(s, "UPDATE dirs SET parent_id = NULL WHERE volume_id IS DISTINCT FROM ?1 AND parent_id IN"
		              " (SELECT id FROM dirs WHERE volume_id = ?1)", what, error, 1, volume_id) ||
		    !pix_store_run_ints(s, "DELETE FROM dirs WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !pix_store_run_ints(s, "DELETE FROM roots WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !pix_store_run_ints(s, "UPDATE changes SET volume_id = NULL WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !pix_store_run_ints(s, "DELETE FROM volumes WHERE id = ?1", what, error, 1, volume_id))
			goto fail;
	} else {
		/* missing directories left with nothing in them, from the leaves up */
		do {
			if (!pix_store_exec(s, "DELETE FROM dirs WHERE state = 'missing'"
			              " AND NOT EXISTS (SELECT 1 FROM files WHERE dir_id = dirs.id)"
			              " AND NOT EXISTS (SELECT 1 FROM dirs c WHERE c.parent_id = dirs.id)", what, error))
				goto fail;
		} while (pix_db_changes(s->db) > 0);
	}
	/* the thumbnails of contents no file has any more */
	if (!pix_store_drop_unused_thumbs(s, error))
		goto fail;
	if (is_dry_run) {
		pix_store_rollback_batch(s);
		return TRUE;
	}
	return pix_store_commit(s, error);
fail:
	pix_store_rollback_batch(s);
	return FALSE;
}

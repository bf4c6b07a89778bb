/*
 * store-read.c: the questions plan, walk and verify ask the catalog (see
 * store.h): directory and file rows, inodes, --quick's known directories,
 * the files to verify, the change log and the roots.  Runs on a reader
 * PixStore (or the writer, between batches); writes nothing.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"
#include "log.h"
#include "path.h"
#include "volume.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pix_file_row_free(PixFileRow *row)
{
	if (row == NULL)
		return;
	g_free(row->name);
	g_free(row->dir_path);
	g_free(row);
}

void pix_dir_row_free(PixDirRow *row)
{
	if (row == NULL)
		return;
	g_free(row->path);
	g_free(row);
}

static PixFileRow *file_row_from(PixStmt *st)
{
	PixFileRow *row = g_new0(PixFileRow, 1);
	row->id = pix_db_column_int64(st, 0);
	row->name = pix_store_column_bytes(st, 1);
	row->st.dev = (guint64)pix_db_column_int64(st, 2);
	row->st.ino = (guint64)pix_db_column_int64(st, 3);
	row->st.mode = (guint32)pix_db_column_int64(st, 4);
	row->st.size_bytes = pix_db_column_int64(st, 5);
	row->st.mtime_ns = pix_db_column_int64(st, 6);
	row->st.ctime_ns = pix_db_column_int64(st, 7);
	row->state = pix_store_state_from(pix_db_column_text(st, 8));
	if (pix_db_column_bytes(st, 9) == 16) {
		row->has_md5 = TRUE;
		memcpy(row->md5, pix_db_column_blob(st, 9), 16);
	}
	row->is_recheck = pix_db_column_int(st, 10) != 0;
	return row;
}

GPtrArray *pix_store_collect_file_rows(PixStore *s, PixStmt *st, gboolean has_dir_path, GError **error)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free);
	int rc;
	while ((rc = pix_db_step(st)) == SQLITE_ROW) {
		PixFileRow *row = file_row_from(st);
		if (has_dir_path) {
			row->dir_path = pix_store_column_bytes(st, 11);
			row->dir_fsid = (guint64)pix_db_column_int64(st, 12);
		}
		g_ptr_array_add(rows, row);
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return NULL;
	}
	return g_steal_pointer(&rows);
}

gboolean pix_store_find_dir(PixStore *s, const PixDir *dir, PixDirRow **row, GError **error)
{
	gint64 vol_id;
	g_autofree char *rel = NULL;
	*row = NULL;
	if (!pix_store_dir_key(s, dir, FALSE, &vol_id, &rel, error))
		return FALSE;
	if (vol_id == 0)
		return TRUE;    /* a volume the catalog does not know yet */
	PixStmt *st = pix_store_stmt(s, ST_FIND_DIR, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, vol_id);
	pix_store_bind_path(st, 2, rel);
	int rc = pix_db_step(st);
	if (rc == SQLITE_ROW) {
		*row = g_new0(PixDirRow, 1);
		(*row)->id = pix_db_column_int64(st, 0);
		(*row)->path = pix_store_column_bytes(st, 1);
		(*row)->state = pix_store_state_from(pix_db_column_text(st, 2));
		rc = pix_db_step(st);
	}
	if (rc != SQLITE_DONE) {
		g_clear_pointer(row, pix_dir_row_free);
		pix_store_sqlite_error(error, s, rc, "cannot read a directory row");
		return FALSE;
	}
	return TRUE;
}

GPtrArray *pix_store_dir_files(PixStore *s, gint64 dir_id, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_DIR_FILES, error);
	if (st == NULL)
		return NULL;
	pix_db_bind_int64(st, 1, dir_id);
	return pix_store_collect_file_rows(s, st, FALSE, error);
}

GPtrArray *pix_store_files_by_inode(PixStore *s, guint64 dev, guint64 ino, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILES_BY_INODE, error);
	if (st == NULL)
		return NULL;
	pix_db_bind_int64(st, 1, (gint64)dev);
	pix_db_bind_int64(st, 2, (gint64)ino);
	return pix_store_collect_file_rows(s, st, TRUE, error);
}

GPtrArray *pix_store_dirs_under(PixStore *s, const char *root, GError **error)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pix_dir_row_free);
	PixStmt *st = pix_store_stmt(s, ST_DIRS_UNDER, error);
	gsize len = strlen(root);
	int rc;

	if (st == NULL)
		return NULL;
	pix_store_bind_path_as(st, 1, root, len, FALSE);
	pix_store_bind_path_as(st, 2, root, len, TRUE);
	pix_store_bind_below(st, 3, root);
	while ((rc = pix_db_step(st)) == SQLITE_ROW) {
		PixDirRow *row = g_new0(PixDirRow, 1);
		row->id = pix_db_column_int64(st, 0);
		row->path = pix_store_column_bytes(st, 1);
		row->state = pix_store_state_from(pix_db_column_text(st, 2));
		g_ptr_array_add(rows, row);
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read directory rows");
		return NULL;
	}
	return g_steal_pointer(&rows);
}

gboolean pix_store_has_dev(PixStore *s, guint64 dev, gboolean *has, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_HAS_DEV, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, (gint64)dev);
	int rc = pix_db_step(st);
	*has = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	pix_db_reset(st);
	return TRUE;
}

gboolean pix_store_dir_is_known(PixStore *s, const PixDir *dir, gint64 trusted_scan_id, gboolean *is_known,
                                GPtrArray **subdir_names, gint64 *n_files, GError **error)
{
	gint64 id = 0, n_to_read = 0, vol_id;
	g_autofree char *rel = NULL;
	int rc;

	*is_known = FALSE;
	*subdir_names = NULL;
	*n_files = 0;
	if (!pix_store_dir_key(s, dir, FALSE, &vol_id, &rel, error))
		return FALSE;
	if (vol_id == 0)
		return TRUE;    /* a volume the catalog does not know yet */
	PixStmt *st = pix_store_stmt(s, ST_DIR_STAT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, vol_id);
	pix_store_bind_path(st, 3, rel);
	pix_db_bind_int64(st, 2, trusted_scan_id);
	rc = pix_db_step(st);
	if (rc == SQLITE_ROW) {
		gint64 listed_ns = pix_db_column_int64(st, 5) * G_GINT64_CONSTANT(1000000000);
		/* an mtime within two seconds of the listing run's start is not
		 * trusted: an entry added in the same clock tick as the listing
		 * (FAT: in the same two seconds) leaves it unchanged */
		if ((guint64)pix_db_column_int64(st, 1) == dir->st.dev &&
		    (guint64)pix_db_column_int64(st, 2) == dir->st.ino &&
		    pix_db_column_type(st, 3) != SQLITE_NULL &&
		    pix_db_column_int64(st, 3) == dir->st.mtime_ns &&
		    pix_db_column_int64(st, 4) == dir->st.ctime_ns &&
		    dir->st.mtime_ns < listed_ns - G_GINT64_CONSTANT(2000000000))
			id = pix_db_column_int64(st, 0);
		rc = pix_db_step(st);
	}
	pix_db_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read a directory row");
		return FALSE;
	}
	if (id == 0)
		return TRUE;

	st = pix_store_stmt(s, ST_DIR_FILE_COUNTS, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, id);
	if ((rc = pix_db_step(st)) == SQLITE_ROW) {
		*n_files = pix_db_column_int64(st, 0);
		n_to_read = pix_db_column_int64(st, 1);
	}
	pix_db_reset(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	if (n_to_read > 0)
		return TRUE;

	st = pix_store_stmt(s, ST_SUBDIRS, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, id);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	while ((rc = pix_db_step(st)) == SQLITE_ROW) {
		g_autofree char *path = pix_store_column_bytes(st, 0);
		const char *slash = strrchr(path, '/');
		g_ptr_array_add(names, g_strdup(slash != NULL ? slash + 1 : path));
	}
	pix_db_reset(st);
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read directory rows");
		return FALSE;
	}
	*is_known = TRUE;
	*subdir_names = g_steal_pointer(&names);
	return TRUE;
}

void pix_store_sql_under(GString *sql, const char *dir_col, const char *name_col, guint n_paths, int first)
{
	for (guint i = 0; i < n_paths; i++) {
		int p = first + 7 * (int)i;
		g_string_append_printf(sql, "%s (%s = ?%d OR (%s > ?%d AND %s < ?%d) OR (%s > ?%d AND %s < ?%d)"
		                       " OR (%s = ?%d AND %s = ?%d))",
		                       i == 0 ? " AND (" : " OR", dir_col, p, dir_col, p + 1, dir_col, p + 2, dir_col,
		                       p + 3, dir_col, p + 4, dir_col, p + 5, name_col, p + 6);
	}
	if (n_paths > 0)
		g_string_append(sql, ")");
}

void pix_store_bind_under(PixStmt *st, int first, char **paths)
{
	for (guint i = 0; paths != NULL && paths[i] != NULL; i++) {
		int p = first + 7 * (int)i;
		g_autofree char *dir = g_path_get_dirname(paths[i]);
		g_autofree char *name = g_path_get_basename(paths[i]);

		pix_store_bind_path(st, p, paths[i]);
		pix_store_bind_below(st, p + 1, paths[i]);
		pix_store_bind_path(st, p + 5, dir);
		pix_store_bind_path(st, p + 6, name);
	}
}

/* Rows per page of pix_store_each_to_verify(). */
#define VERIFY_PAGE 4096

gboolean pix_store_each_to_verify(PixStore *s, char **paths, gint64 before_s, PixStoreRowFn fn, gpointer data,
                                  GError **error)
{
	/* in pages, by key (files_by_verify), each read in a transaction of
	 * its own: one kept open for the whole run would keep the writer's
	 * WAL from being checkpointed */
	g_autoptr(GString) sql = g_string_new(
		"SELECT f.id, f.name, f.dev, f.ino, f.mode, f.size, f.mtime_ns, f.ctime_ns, f.state, f.md5,"
		" f.recheck, d.path, coalesce(f.verified_at, f.hashed_at, 0), f.verified_at IS NOT NULL"
		" FROM files f JOIN dirs d ON d.id = f.dir_id"
		" WHERE f.state <> 'missing' AND f.md5 IS NOT NULL" ONLINE_DIR
		" AND (coalesce(f.verified_at, f.hashed_at, 0), f.verified_at IS NOT NULL, f.id) > (?1, ?2, ?3)"
		/* not what this run verified already, nor a file whose MD5 may not
		 * be final (mtime too recent when read: the next scan reads it) */
		" AND (f.verified_at IS NULL OR f.verified_at < ?4) AND f.recheck = 0"
		" AND (f.mode & 61440) = 32768");
	guint n_paths = paths != NULL ? g_strv_length(paths) : 0;
	g_autoptr(PixStmt) st = NULL;
	gint64 key = -1, is_verified = 0, id = 0;
	int rc;

	pix_store_sql_under(sql, "d.path", "f.name", n_paths, 5);
	g_string_append_printf(sql, " ORDER BY coalesce(f.verified_at, f.hashed_at, 0), f.verified_at IS NOT NULL, f.id"
	                       " LIMIT %d", VERIFY_PAGE);
	rc = pix_store_prepare(s, sql->str, &st);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
		return FALSE;
	}
	pix_store_bind_under(st, 5, paths);
	pix_db_bind_int64(st, 4, before_s);
	for (;;) {
		g_autoptr(GPtrArray) page = g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free);
		pix_db_reset(st);
		pix_db_bind_int64(st, 1, key);
		pix_db_bind_int64(st, 2, is_verified);
		pix_db_bind_int64(st, 3, id);
		while ((rc = pix_db_step(st)) == SQLITE_ROW) {
			PixFileRow *row = file_row_from(st);
			row->dir_path = pix_store_column_bytes(st, 11);
			key = pix_db_column_int64(st, 12);
			is_verified = pix_db_column_int64(st, 13);
			id = row->id;
			g_ptr_array_add(page, row);
		}
		pix_db_reset(st);      /* ends the read transaction */
		if (rc != SQLITE_DONE) {
			pix_store_sqlite_error(error, s, rc, "cannot read file rows");
			return FALSE;
		}
		for (guint i = 0; i < page->len; i++) {
			PixFileRow *row = g_ptr_array_index(page, i);
			page->pdata[i] = NULL;      /* fn takes it */
			if (!fn(data, row))
				return TRUE;
		}
		if (page->len < VERIFY_PAGE)
			return TRUE;
	}
}

gboolean pix_store_verify_coverage(PixStore *s, PixVerifyCoverage *out, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s,
		"SELECT count(*), coalesce(sum(CASE WHEN verified_at IS NULL THEN 1 ELSE 0 END), 0),"
		" coalesce(sum(CASE WHEN verified_at IS NULL THEN size ELSE 0 END), 0), coalesce(min(verified_at), 0)"
		" FROM files WHERE state <> 'missing' AND md5 IS NOT NULL AND (mode & 61440) = 32768", &st);
	if (rc == SQLITE_OK)
		rc = pix_db_step(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	out->n_files = pix_db_column_int64(st, 0);
	out->n_never = pix_db_column_int64(st, 1);
	out->bytes_never = pix_db_column_int64(st, 2);
	out->oldest_verified_at = pix_db_column_int64(st, 3);
	return TRUE;
}

gboolean pix_store_column_md5(PixStmt *st, int i, guint8 *out)
{
	if (pix_db_column_bytes(st, i) != 16)
		return FALSE;
	memcpy(out, pix_db_column_blob(st, i), 16);
	return TRUE;
}

gboolean pix_store_each_change(PixStore *s, gint64 since, gint64 limit, PixStoreChangeFn fn, gpointer data,
                               GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s,
		"SELECT c.seq, c.scan_id, c.file_id, c.at, c.kind, d.path, f.name, c.old_path, c.new_path,"
		" c.old_md5, c.new_md5, c.old_size, c.new_size,"
		" CASE WHEN fv.is_online = 0 AND f.state <> 'missing' THEN 'offline' ELSE f.state END,"
		" coalesce(v.ident, fv.ident), f.id IS NOT NULL"
		" FROM changes c LEFT JOIN files f ON f.id = c.file_id LEFT JOIN dirs d ON d.id = f.dir_id"
		" LEFT JOIN volumes fv ON fv.id = d.volume_id LEFT JOIN volumes v ON v.id = c.volume_id"
		" WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?2", &st);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
		return FALSE;
	}
	pix_db_bind_int64(st, 1, since);
	pix_db_bind_int64(st, 2, limit > 0 ? limit : G_MAXINT64);
	while ((rc = pix_db_step(st)) == SQLITE_ROW) {
		g_autofree char *dir = pix_store_column_bytes(st, 5);
		g_autofree char *name = pix_store_column_bytes(st, 6);
		g_autofree char *kind = pix_store_column_bytes(st, 4);
		g_autofree char *volume = pix_db_column_type(st, 14) != SQLITE_NULL ? pix_store_column_bytes(st, 14) : NULL;
		gboolean has_file = pix_db_column_int(st, 15) != 0;
		PixChange c = {
			.seq = pix_db_column_int64(st, 0),
			.scan_id = pix_db_column_int64(st, 1),
			.file_id = pix_db_column_int64(st, 2),
			.at = pix_db_column_int64(st, 3),
			.kind = kind,
			.path = has_file ? pix_path_join(dir, name) : NULL,
			.volume = volume,
			.old_path = pix_db_column_type(st, 7) != SQLITE_NULL ? pix_store_column_bytes(st, 7) : NULL,
			.new_path = pix_db_column_type(st, 8) != SQLITE_NULL ? pix_store_column_bytes(st, 8) : NULL,
			.old_size = pix_db_column_type(st, 11) != SQLITE_NULL ? pix_db_column_int64(st, 11) : -1,
			.new_size = pix_db_column_type(st, 12) != SQLITE_NULL ? pix_db_column_int64(st, 12) : -1,
			.state = has_file ? pix_store_state_from(pix_db_column_text(st, 13)) : PIX_STATE_MISSING,
			.has_file = has_file,
		};
		c.has_old_md5 = pix_store_column_md5(st, 9, c.old_md5);
		c.has_new_md5 = pix_store_column_md5(st, 10, c.new_md5);
		gboolean is_more = fn(data, &c);
		g_free(c.path);
		g_free(c.old_path);
		g_free(c.new_path);
		if (!is_more)
			return TRUE;
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read the change log");
		return FALSE;
	}
	return TRUE;
}

char **pix_store_roots(PixStore *s, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	int rc = pix_store_prepare(s, "SELECT path FROM roots ORDER BY path", &st);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
		return NULL;
	}
	while ((rc = pix_db_step(st)) == SQLITE_ROW)
		g_ptr_array_add(out, pix_store_column_bytes(st, 0));
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read the roots");
		return NULL;
	}
	g_ptr_array_add(out, NULL);
	g_ptr_array_set_free_func(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}


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

PixFileRow *pix_store_file_row_from(PixStmt *st, gboolean has_dir_path)
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
	row->has_md5 = pix_store_column_md5(st, 9, row->md5);
	row->is_recheck = pix_db_column_int(st, 10) != 0;
	if (has_dir_path) {
		row->dir_path = pix_store_column_bytes(st, 11);
		row->dir_fsid = (guint64)pix_db_column_int64(st, 12);
	}
	return row;
}

GPtrArray *pix_store_collect_file_rows(PixStore *s, PixStmt *st, gboolean has_dir_path, GError **error)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free);
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW)
		g_ptr_array_add(rows, pix_store_file_row_from(st, has_dir_path));
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read file rows");
		return NULL;
	}
	return g_steal_pointer(&rows);
}

/*
 * --- the rows of many directories or inodes at once ---
 *
 * Plan asks for the directories of the listings waiting for it together,
 * and for the inodes of their new files together: one round trip per
 * PIX_STORE_SET of them (pix_store_run_set()), which over a network is
 * what a rescan waits for, not the rows themselves.
 */

static PixDirRow *dir_row_from(PixStmt *st)
{
	PixDirRow *row = g_new0(PixDirRow, 1);
	row->id = pix_db_column_int64(st, 0);
	row->path = pix_store_column_bytes(st, 1);
	row->state = pix_store_state_from(pix_db_column_text(st, 2));
	return row;
}

/* The directories of one volume, looked up by rel_path. */
typedef struct {
	PixDirQuery *dirs;
	GPtrArray *rels;        /* rel_path of each (borrowed), in set order */
	GHashTable *by_rel;     /* rel_path -> 1 + index into dirs */
} DirSet;

static void bind_rel(PixStmt *st, int i, guint k, gpointer data)
{
	DirSet *d = data;
	pix_store_bind_path(st, i, g_ptr_array_index(d->rels, k));
}

static void take_dir(PixStmt *st, gpointer data)
{
	DirSet *d = data;
	g_autofree char *rel = pix_store_column_bytes(st, 3);
	guint k = GPOINTER_TO_UINT(g_hash_table_lookup(d->by_rel, rel));
	if (k > 0 && d->dirs[k - 1].row == NULL)
		d->dirs[k - 1].row = dir_row_from(st);
}

/* The file rows of directories `ids` (n), into files[k] for ids[k]. */
typedef struct {
	const gint64 *ids;
	GPtrArray **files;
	GHashTable *by_id;      /* dir id -> 1 + k */
} FileSet;

static void bind_dir_id(PixStmt *st, int i, guint k, gpointer data)
{
	pix_db_bind_int64(st, i, ((FileSet *)data)->ids[k]);
}

static void take_file(PixStmt *st, gpointer data)
{
	FileSet *f = data;
	guint k = GPOINTER_TO_UINT(g_hash_table_lookup(f->by_id, GSIZE_TO_POINTER((gsize)pix_db_column_int64(st, 11))));
	if (k > 0)
		g_ptr_array_add(f->files[k - 1], pix_store_file_row_from(st, FALSE));
}

/* ids: distinct */
static gboolean dirs_files(PixStore *s, const gint64 *ids, GPtrArray **files, guint n, GError **error)
{
	g_autoptr(GHashTable) by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (guint k = 0; k < n; k++) {
		files[k] = g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free);
		gboolean is_new = g_hash_table_insert(by_id, GSIZE_TO_POINTER((gsize)ids[k]), GUINT_TO_POINTER(k + 1));
		g_assert(is_new);
	}
	FileSet f = { ids, files, by_id };
	return pix_store_run_set(s, ST_DIRS_FILES, 1, 0, n, bind_dir_id, take_file, &f, "cannot read file rows", error);
}

static GPtrArray *copy_file_rows(const GPtrArray *rows)
{
	GPtrArray *out = g_ptr_array_new_full(rows->len, (GDestroyNotify)pix_file_row_free);
	for (guint r = 0; r < rows->len; r++) {
		const PixFileRow *fr = g_ptr_array_index(rows, r);
		PixFileRow *copy = g_memdup2(fr, sizeof *fr);
		copy->name = g_strdup(fr->name);
		copy->dir_path = g_strdup(fr->dir_path);
		g_ptr_array_add(out, copy);
	}
	return out;
}

gboolean pix_store_find_dirs(PixStore *s, PixDirQuery *dirs, guint n, GError **error)
{
	g_autofree gint64 *vol = g_new0(gint64, MAX(n, 1));
	g_autoptr(GPtrArray) rels = g_ptr_array_new_full(n, g_free);
	gboolean ok = TRUE;

	for (guint k = 0; k < n; k++) {
		dirs[k].row = NULL;
		dirs[k].files = NULL;
	}
	for (guint k = 0; k < n; k++) {
		char *rel = NULL;
		if (!pix_store_dir_key(s, dirs[k].dir, FALSE, &vol[k], &rel, error))
			return FALSE;
		g_ptr_array_add(rels, rel);
	}
	/* each volume's directories, by rel_path (0: a volume the catalog
	 * does not know yet, nothing of which has a row) */
	for (guint k = 0; k < n && ok; k++) {
		if (vol[k] <= 0)
			continue;
		gint64 v = vol[k];
		DirSet d = { dirs, g_ptr_array_new(), g_hash_table_new(g_str_hash, g_str_equal) };
		for (guint j = k; j < n; j++) {
			if (vol[j] != v)
				continue;
			vol[j] = -v;    /* asked for */
			if (!g_hash_table_contains(d.by_rel, rels->pdata[j])) {
				g_hash_table_insert(d.by_rel, rels->pdata[j], GUINT_TO_POINTER(j + 1));
				g_ptr_array_add(d.rels, rels->pdata[j]);
			}
		}
		ok = pix_store_run_set(s, ST_FIND_DIRS, 2, v, d.rels->len, bind_rel, take_dir, &d,
		                       "cannot read a directory row", error);
		/* the same directory twice: both get its row */
		for (guint j = k; j < n && ok; j++) {
			guint first = GPOINTER_TO_UINT(g_hash_table_lookup(d.by_rel, rels->pdata[j]));
			if (vol[j] == -v && first != j + 1 && dirs[first - 1].row != NULL) {
				const PixDirRow *r = dirs[first - 1].row;
				dirs[j].row = g_memdup2(r, sizeof *r);
				dirs[j].row->path = g_strdup(r->path);
			}
		}
		g_ptr_array_free(d.rels, TRUE);
		g_hash_table_destroy(d.by_rel);
	}

	/* then the files of those found, each directory once */
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GHashTable) first = g_hash_table_new(g_direct_hash, g_direct_equal);   /* id -> 1 + k */
	for (guint k = 0; k < n && ok; k++) {
		if (dirs[k].row == NULL || !dirs[k].want_files ||
		    g_hash_table_contains(first, GSIZE_TO_POINTER((gsize)dirs[k].row->id)))
			continue;
		g_hash_table_insert(first, GSIZE_TO_POINTER((gsize)dirs[k].row->id), GUINT_TO_POINTER(k + 1));
		g_array_append_val(ids, dirs[k].row->id);
	}
	g_autofree GPtrArray **files = g_new0(GPtrArray *, MAX(ids->len, 1));
	ok = ok && dirs_files(s, (const gint64 *)(void *)ids->data, files, ids->len, error);
	for (guint i = 0; i < ids->len; i++) {
		guint k = GPOINTER_TO_UINT(g_hash_table_lookup(first, GSIZE_TO_POINTER((gsize)g_array_index(ids, gint64, i))));
		if (ok)
			dirs[k - 1].files = files[i];
		else if (files[i] != NULL)
			g_ptr_array_unref(files[i]);
	}
	/* a directory asked for twice: the second gets a copy */
	for (guint k = 0; k < n && ok; k++) {
		if (dirs[k].row == NULL || !dirs[k].want_files || dirs[k].files != NULL)
			continue;
		guint j = GPOINTER_TO_UINT(g_hash_table_lookup(first, GSIZE_TO_POINTER((gsize)dirs[k].row->id)));
		dirs[k].files = copy_file_rows(dirs[j - 1].files);
	}
	if (!ok)
		pix_dir_queries_clear(dirs, n);
	return ok;
}

void pix_dir_queries_clear(PixDirQuery *dirs, guint n)
{
	for (guint k = 0; k < n; k++) {
		g_clear_pointer(&dirs[k].row, pix_dir_row_free);
		g_clear_pointer(&dirs[k].files, g_ptr_array_unref);
	}
}

gboolean pix_store_find_dir(PixStore *s, const PixDir *dir, PixDirRow **row, GError **error)
{
	PixDirQuery q = { .dir = dir };
	*row = NULL;
	if (!pix_store_find_dirs(s, &q, 1, error))
		return FALSE;
	*row = q.row;
	return TRUE;
}

GPtrArray *pix_store_dir_files(PixStore *s, gint64 dir_id, GError **error)
{
	GPtrArray *files = NULL;
	if (!dirs_files(s, &dir_id, &files, 1, error)) {
		g_ptr_array_unref(files);
		return NULL;
	}
	return files;
}

static guint inode_hash(gconstpointer p)
{
	const PixInode *i = p;
	return (guint)(i->ino ^ (i->ino >> 32) ^ (i->dev * 0x9e3779b1u));
}

static gboolean inode_equal(gconstpointer a, gconstpointer b)
{
	const PixInode *x = a, *y = b;
	return x->dev == y->dev && x->ino == y->ino;
}

/* The inodes of one device. */
typedef struct {
	GArray *inos;           /* guint64, in set order */
	GHashTable *table;      /* as pix_store_files_by_inodes() returns */
	guint64 dev;
} InodeSet;

static void bind_ino(PixStmt *st, int i, guint k, gpointer data)
{
	pix_db_bind_int64(st, i, (gint64)g_array_index(((InodeSet *)data)->inos, guint64, k));
}

static void take_inode_row(PixStmt *st, gpointer data)
{
	InodeSet *set = data;
	PixInode key = { set->dev, (guint64)pix_db_column_int64(st, 3) };
	GPtrArray *rows = g_hash_table_lookup(set->table, &key);
	if (rows == NULL)
		return;
	g_ptr_array_add(rows, pix_store_file_row_from(st, TRUE));
}

GHashTable *pix_store_files_by_inodes(PixStore *s, const PixInode *inodes, guint n, GError **error)
{
	g_autoptr(GHashTable) table = g_hash_table_new_full(inode_hash, inode_equal, g_free,
	                                                    (GDestroyNotify)g_ptr_array_unref);
	g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(PixInode));
	for (guint k = 0; k < n; k++) {
		if (g_hash_table_contains(table, &inodes[k]))
			continue;
		g_hash_table_insert(table, g_memdup2(&inodes[k], sizeof inodes[k]),
		                    g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free));
		g_array_append_val(keys, inodes[k]);
	}
	g_autofree gboolean *is_done = g_new0(gboolean, MAX(keys->len, 1));
	for (guint k = 0; k < keys->len; k++) {
		if (is_done[k])
			continue;
		InodeSet set = { g_array_new(FALSE, FALSE, sizeof(guint64)), table,
		                 g_array_index(keys, PixInode, k).dev };
		for (guint j = k; j < keys->len; j++) {
			const PixInode *i = &g_array_index(keys, PixInode, j);
			if (i->dev == set.dev) {
				g_array_append_val(set.inos, i->ino);
				is_done[j] = TRUE;
			}
		}
		gboolean ok = pix_store_run_set(s, ST_FILES_BY_INODES, 2, (gint64)set.dev, set.inos->len, bind_ino,
		                                take_inode_row, &set, "cannot read file rows", error);
		g_array_free(set.inos, TRUE);
		if (!ok)
			return NULL;
	}
	return g_steal_pointer(&table);
}

GPtrArray *pix_store_files_by_inode(PixStore *s, guint64 dev, guint64 ino, GError **error)
{
	PixInode key = { dev, ino };
	g_autoptr(GHashTable) table = pix_store_files_by_inodes(s, &key, 1, error);
	if (table == NULL)
		return NULL;
	return g_ptr_array_ref(g_hash_table_lookup(table, &key));
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
	while ((rc = pix_db_step(st)) == PIX_DB_ROW)
		g_ptr_array_add(rows, dir_row_from(st));
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read directory rows");
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
	*has = rc == PIX_DB_ROW;
	if (rc != PIX_DB_ROW && rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read file rows");
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
	if (rc == PIX_DB_ROW) {
		gint64 listed_ns = pix_db_column_int64(st, 5) * G_GINT64_CONSTANT(1000000000);
		/* an mtime within two seconds of the listing run's start is not
		 * trusted: an entry added in the same clock tick as the listing
		 * (FAT: in the same two seconds) leaves it unchanged */
		if ((guint64)pix_db_column_int64(st, 1) == dir->st.dev &&
		    (guint64)pix_db_column_int64(st, 2) == dir->st.ino &&
		    pix_db_column_type(st, 3) != PIX_DB_NULL &&
		    pix_db_column_int64(st, 3) == dir->st.mtime_ns &&
		    pix_db_column_int64(st, 4) == dir->st.ctime_ns &&
		    dir->st.mtime_ns < listed_ns - G_GINT64_CONSTANT(2000000000))
			id = pix_db_column_int64(st, 0);
		rc = pix_db_step(st);
	}
	pix_db_reset(st);
	if (rc != PIX_DB_DONE && rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot read a directory row");
		return FALSE;
	}
	if (id == 0)
		return TRUE;

	st = pix_store_stmt(s, ST_DIR_FILE_COUNTS, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, id);
	if ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		*n_files = pix_db_column_int64(st, 0);
		n_to_read = pix_db_column_int64(st, 1);
	}
	pix_db_reset(st);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	if (n_to_read > 0)
		return TRUE;

	st = pix_store_stmt(s, ST_SUBDIRS, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, id);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		g_autofree char *path = pix_store_column_bytes(st, 0);
		const char *slash = strrchr(path, '/');
		g_ptr_array_add(names, g_strdup(slash != NULL ? slash + 1 : path));
	}
	pix_db_reset(st);
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read directory rows");
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
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot prepare a statement");
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
		while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
			PixFileRow *row = pix_store_file_row_from(st, FALSE);
			row->dir_path = pix_store_column_bytes(st, 11);
			key = pix_db_column_int64(st, 12);
			is_verified = pix_db_column_int64(st, 13);
			id = row->id;
			g_ptr_array_add(page, row);
		}
		pix_db_reset(st);      /* ends the read transaction */
		if (rc != PIX_DB_DONE) {
			pix_store_db_error(error, s, rc, "cannot read file rows");
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
	if (rc == PIX_DB_OK)
		rc = pix_db_step(st);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot read file rows");
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
		" coalesce(v.ident, fv.ident), f.id IS NOT NULL,"
		" c.old_keywords, c.new_keywords, c.old_rating, c.new_rating"
		" FROM changes c LEFT JOIN files f ON f.id = c.file_id LEFT JOIN dirs d ON d.id = f.dir_id"
		" LEFT JOIN volumes fv ON fv.id = d.volume_id LEFT JOIN volumes v ON v.id = c.volume_id"
		" WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?2", &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot prepare a statement");
		return FALSE;
	}
	pix_db_bind_int64(st, 1, since);
	pix_db_bind_int64(st, 2, limit > 0 ? limit : G_MAXINT64);
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		g_autofree char *dir = pix_store_column_bytes(st, 5);
		g_autofree char *name = pix_store_column_bytes(st, 6);
		g_autofree char *kind = pix_store_column_bytes(st, 4);
		g_autofree char *volume = pix_db_column_type(st, 14) != PIX_DB_NULL ? pix_store_column_bytes(st, 14) : NULL;
		gboolean has_file = pix_db_column_int(st, 15) != 0;
		PixChange c = {
			.seq = pix_db_column_int64(st, 0),
			.scan_id = pix_db_column_int64(st, 1),
			.file_id = pix_db_column_int64(st, 2),
			.at = pix_db_column_int64(st, 3),
			.kind = kind,
			.path = has_file ? pix_path_join(dir, name) : NULL,
			.volume = volume,
			.old_path = pix_db_column_type(st, 7) != PIX_DB_NULL ? pix_store_column_bytes(st, 7) : NULL,
			.new_path = pix_db_column_type(st, 8) != PIX_DB_NULL ? pix_store_column_bytes(st, 8) : NULL,
			.old_size = pix_db_column_type(st, 11) != PIX_DB_NULL ? pix_db_column_int64(st, 11) : -1,
			.new_size = pix_db_column_type(st, 12) != PIX_DB_NULL ? pix_db_column_int64(st, 12) : -1,
			.state = has_file ? pix_store_state_from(pix_db_column_text(st, 13)) : PIX_STATE_MISSING,
			.has_file = has_file,
		};
		c.has_old_md5 = pix_store_column_md5(st, 9, c.old_md5);
		c.has_new_md5 = pix_store_column_md5(st, 10, c.new_md5);
		/* both NULL: unchanged (schema 0009) */
		for (int k = 0; k < 2; k++) {
			char **text = k == 0 ? &c.old_keywords : &c.new_keywords;
			gboolean *has = k == 0 ? &c.has_old_rating : &c.has_new_rating;
			gint64 *rating = k == 0 ? &c.old_rating : &c.new_rating;
			if (pix_db_column_type(st, 16 + k) != PIX_DB_NULL)
				*text = g_strdup((const char *)pix_db_column_text(st, 16 + k));
			if ((*has = pix_db_column_type(st, 18 + k) != PIX_DB_NULL))
				*rating = pix_db_column_int64(st, 18 + k);
		}
		c.has_keywords_change = c.old_keywords != NULL || c.new_keywords != NULL;
		c.has_rating_change = c.has_old_rating || c.has_new_rating;
		gboolean is_more = fn(data, &c);
		g_free(c.old_keywords);
		g_free(c.new_keywords);
		g_free(c.path);
		g_free(c.old_path);
		g_free(c.new_path);
		if (!is_more)
			return TRUE;
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the change log");
		return FALSE;
	}
	return TRUE;
}

char **pix_store_roots(PixStore *s, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	int rc = pix_store_prepare(s, "SELECT path FROM roots ORDER BY path", &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot prepare a statement");
		return NULL;
	}
	while ((rc = pix_db_step(st)) == PIX_DB_ROW)
		g_ptr_array_add(out, pix_store_column_bytes(st, 0));
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the roots");
		return NULL;
	}
	g_ptr_array_add(out, NULL);
	g_ptr_array_set_free_func(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}


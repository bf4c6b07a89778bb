/*
 * store-write.c: the catalog's writer (see store.h): runs begun and ended,
 * items put in batches, volumes looked for in the mount table, moves
 * paired, sidecars linked, files forgotten.  Runs on the store thread (and
 * on the main thread before and after the pipeline), on a writer PixStore
 * that store.c opened; the invariants are store.c's.
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
#include <sys/statfs.h>
#include <unistd.h>

/* Times a transaction the server rolled back for a deadlock is run again
 * (batch_retry(), pix_store_begin_scan()), and the attempts to connect
 * again for a batch. */
#define BATCH_RETRIES 5
#define RECONNECT_ATTEMPTS 8

static gboolean begin_batch(PixStore *s, GError **error)
{
	if (s->in_batch)
		return TRUE;
	PixStmt *st = pix_store_stmt(s, ST_BEGIN, error);
	if (st == NULL || !pix_store_step_done(s, st, "cannot begin a transaction", error))
		return FALSE;
	s->in_batch = TRUE;
	s->now_s = pix_store_now();
	g_assert(pix_store_check(s));
	return TRUE;
}

static void rollback_batch(PixStore *s)
{
	if (s->pg_changes != NULL)
		g_array_set_size(s->pg_changes, 0);
	if (!s->in_batch)
		return;
	pix_db_exec(s->db, "ROLLBACK");
	pix_store_batch_gone(s);
	/* ROLLBACK ends the transaction even when it reports an error */
	g_assert(pix_store_check(s));
}

/* A file the batch wrote, by its path (its row id may be new). */
typedef struct {
	gint64 dir_id;
	char *name;             /* bytes (owned) */
} Dirty;

static void dirty_clear(gpointer p)
{
	g_free(((Dirty *)p)->name);
}

static void mark_dirty(PixStore *s, const PixItem *item)
{
	if (s->dirty == NULL) {
		s->dirty = g_array_new(FALSE, FALSE, sizeof(Dirty));
		g_array_set_clear_func(s->dirty, dirty_clear);
	}
	Dirty d = { item->dir->id, g_strdup(item->name) };
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

/* Links image `id` to its sidecar, and lends what it lacks. */
static gboolean relink_image(PixStore *s, gint64 id, GError **error)
{
	static const StatementId steps[] = {
		ST_SIDECAR_LINK, ST_SIDECAR_UNLEND, ST_SIDECAR_META_ROW, ST_SIDECAR_LEND,
	};
	for (guint k = 0; k < G_N_ELEMENTS(steps); k++)
		if (!run_with(s, steps[k], id, error))
			return FALSE;
	return TRUE;
}

/* A single-value query: its integer, or -1 without a row. */
static gboolean query_int(PixStore *s, PixStmt *st, gint64 *out, const char *what, GError **error)
{
	int rc = pix_db_step(st);
	*out = rc == PIX_DB_ROW ? pix_db_column_int64(st, 0) : -1;
	if (rc != PIX_DB_ROW && rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, what);
		pix_db_reset(st);
		return FALSE;
	}
	pix_db_reset(st);
	return TRUE;
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

static gboolean relink(PixStore *s, GError **error)
{
	if (s->dirty == NULL || s->dirty->len == 0)
		return TRUE;
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
			g_hash_table_add(images, g_memdup2(&id, sizeof id));
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
			g_hash_table_add(images, g_memdup2(&image, sizeof image));
		}
		if (rc != PIX_DB_DONE)
			return pix_store_step_done(s, st, "cannot look for a sidecar's images", error);
		pix_db_reset(st);
	}
	/* each once, even when it and its sidecar were both written */
	GHashTableIter iter;
	gpointer key;
	g_hash_table_iter_init(&iter, images);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		if (!relink_image(s, *(gint64 *)key, error))
			return FALSE;
	g_array_set_size(s->dirty, 0);
	return TRUE;
}

/* Counts for the summary what the batch does; published at COMMIT, so
 * the counts never include a batch that was rolled back. */
static void count(PixStore *s, PixCounter c, gint64 n)
{
	s->counts[c] += n;
}

gboolean pix_store_commit(PixStore *s, GError **error)
{
	g_assert(pix_store_check(s));
	if (!s->in_batch)
		return TRUE;
	if (!relink(s, error)) {
		rollback_batch(s);
		return FALSE;
	}
	if (pix_db_is_pg(s->db) && !pix_store_pg_before_commit(s, error)) {
		rollback_batch(s);
		return FALSE;
	}
	PixStmt *st = pix_store_stmt(s, ST_COMMIT, error);
	if (st == NULL || !pix_store_step_done(s, st, "cannot commit", error)) {
		rollback_batch(s);
		return FALSE;
	}
	s->in_batch = FALSE;
	g_assert(pix_store_check(s));
	for (int c = 0; c < PIX_N_COUNTERS; c++) {
		if (s->counts[c] != 0)
			pix_count_add((PixCounter)c, s->counts[c]);
		s->counts[c] = 0;
	}
	return TRUE;
}

/* --- volumes --- */

/* The volume holding directory `path` on device `dev`, and the path
 * relative to its root (transfer full).  A device the mount table lacks
 * makes it read again, once per device; one still unknown (or 0) is a
 * volume of its own, mounted at "/". */
static const PixVolume *volume_of(PixStore *s, const char *path, guint64 dev, char **rel_path)
{
	const PixMounts *m = pix_mounts_get(NULL);
	const PixVolume *v = m != NULL ? pix_mounts_volume_of(m, path, dev, rel_path) : NULL;
	if (v == NULL && !g_hash_table_contains(s->unknown_devs, GSIZE_TO_POINTER((gsize)dev))) {
		g_hash_table_add(s->unknown_devs, GSIZE_TO_POINTER((gsize)dev));
		m = pix_mounts_refresh(NULL);
		v = m != NULL ? pix_mounts_volume_of(m, path, dev, rel_path) : NULL;
	}
	if (v == NULL) {
		v = pix_volume_fallback(dev);
		*rel_path = g_strdup(path + strspn(path, "/"));
	}
	return v;
}

/* The device of a directory: its own when it was stat'ed, else the
 * nearest stat'ed parent's, else lstat's, else 0. */
static guint64 dir_dev(const PixDir *d)
{
	for (const PixDir *p = d; p != NULL; p = p->parent)
		if (p->st.ino != 0)
			return p->st.dev;
	struct stat st;
	return pix_path_lstat(d->path, &st) == 0 ? (guint64)st.st_dev : 0;
}

static char *volume_key(const PixVolume *v)
{
	return g_strdup_printf("%s\t%s", pix_volume_kind_name(v->kind), v->ident);
}

/* volumes.id of `v`: *id 0 when the catalog has none and !is_create, else
 * inserted (in the open batch) as seen now. */
static gboolean volume_id(PixStore *s, const PixVolume *v, gboolean is_create, gint64 *id, GError **error)
{
	g_autofree char *key = volume_key(v);
	gpointer found;
	if (g_hash_table_lookup_extended(s->volume_ids, key, NULL, &found)) {
		*id = GPOINTER_TO_SIZE(found);
		return TRUE;
	}
	PixStmt *st = pix_store_stmt(s, ST_VOLUME_FIND, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_text(st, 1, pix_volume_kind_name(v->kind), -1, PIX_DB_STATIC);
	pix_db_bind_text(st, 2, v->ident, -1, PIX_DB_STATIC);
	int rc = pix_db_step(st);
	*id = rc == PIX_DB_ROW ? pix_db_column_int64(st, 0) : 0;
	pix_db_reset(st);
	if (rc != PIX_DB_ROW && rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	if (*id == 0 && is_create) {
		g_assert(s->in_batch);
		PixStmt *ins = pix_store_stmt(s, ST_VOLUME_INSERT, error);
		if (ins == NULL)
			return FALSE;
		pix_db_bind_text(ins, 1, pix_volume_kind_name(v->kind), -1, PIX_DB_STATIC);
		pix_db_bind_text(ins, 2, v->ident, -1, PIX_DB_STATIC);
		pix_store_bind_text_or_null(ins, 3, v->uuid);
		pix_store_bind_text_or_null(ins, 4, v->label);
		pix_store_bind_text_or_null(ins, 5, v->fstype);
		pix_store_bind_text_or_null(ins, 6, v->source);
		pix_store_bind_path(ins, 7, v->mount_point);
		pix_store_bind_path(ins, 8, v->mount_root);
		pix_db_bind_int64(ins, 9, (gint64)v->dev);
		pix_db_bind_int64(ins, 10, pix_store_now());
		int irc = pix_db_step(ins);
		*id = irc == PIX_DB_ROW ? pix_db_column_int64(ins, 0) : 0;
		pix_db_reset(ins);
		/* PostgreSQL: another host recorded it meanwhile (ON CONFLICT DO
		 * NOTHING returned no row): its row is the one */
		if (irc == PIX_DB_DONE && pix_db_is_pg(s->db))
			return volume_id(s, v, FALSE, id, error);
		if (irc != PIX_DB_ROW) {
			pix_store_db_error(error, s, irc, "cannot record a volume");
			return FALSE;
		}
	}
	if (*id != 0)
		g_hash_table_insert(s->volume_ids, g_steal_pointer(&key), GSIZE_TO_POINTER((gsize)*id));
	return TRUE;
}

/* The catalog key of a directory: its volume's id (0 when the catalog
 * has no such volume and !is_create) and its path relative to the
 * volume's root (transfer full). */
gboolean pix_store_dir_key(PixStore *s, const PixDir *d, gboolean is_create, gint64 *vol_id, char **rel_path,
                        GError **error)
{
	const PixVolume *v = volume_of(s, d->path, dir_dev(d), rel_path);
	if (!volume_id(s, v, is_create, vol_id, error)) {
		g_clear_pointer(rel_path, g_free);
		return FALSE;
	}
	return TRUE;
}

/* Runs `sql` with integer parameters ?1.. = args (n of them). */
static gboolean run_ints(PixStore *s, const char *sql, const char *what, GError **error, int n, ...)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s, sql, &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	va_list ap;
	va_start(ap, n);
	for (int i = 1; i <= n; i++)
		pix_db_bind_int64(st, i, va_arg(ap, gint64));
	va_end(ap);
	return pix_store_step_done(s, st, what, error);
}

/* A change-log row with what every entry has bound: its run, time, kind
 * and paths (transfer none; the caller binds the rest and steps it). */
static void change_row_clear(gpointer p)
{
	PixChangeRow *c = p;
	g_free(c->old_path);
	g_free(c->new_path);
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
}

/* Writes a change-log entry into the open batch: at once on SQLite; on
 * PostgreSQL at the commit, where it is numbered (store-pg.c). */
static gboolean put_change_row(PixStore *s, const PixChangeRow *c, GError **error)
{
	if (pix_db_is_pg(s->db)) {
		if (s->pg_changes == NULL) {
			s->pg_changes = g_array_new(FALSE, FALSE, sizeof(PixChangeRow));
			g_array_set_clear_func(s->pg_changes, change_row_clear);
		}
		PixChangeRow kept = *c;
		kept.old_path = g_strdup(c->old_path);
		kept.new_path = g_strdup(c->new_path);
		g_array_append_val(s->pg_changes, kept);
		return TRUE;
	}
	PixStmt *st = pix_store_stmt(s, ST_CHANGE_INSERT, error);
	if (st == NULL)
		return FALSE;
	pix_store_bind_change(s, st, c);
	return pix_store_step_done(s, st, "cannot write the change log", error);
}

static gboolean put_volume_change(PixStore *s, gint64 vol_id, const char *kind, const char *old_path,
                                  const char *new_path, GError **error)
{
	PixChangeRow c = { .volume_id = vol_id, .kind = kind, .old_path = (char *)old_path,
	                   .new_path = (char *)new_path };
	return put_change_row(s, &c, error);
}

/* The rows of `table` (dirs or roots) on volume `vol_id`: their `path`
 * written anew from rel_path where `v` shows it now. */
static gboolean rewrite_paths(PixStore *s, const char *table, gint64 vol_id, const PixVolume *v, GError **error)
{
	g_autofree char *sel = g_strdup_printf("SELECT id, rel_path FROM %s WHERE volume_id = ?1", table);
	g_autofree char *upd = g_strdup_printf("UPDATE %s SET path = ?2 WHERE id = ?1", table);
	g_autoptr(PixStmt) st = NULL, up = NULL;
	int rc = pix_store_prepare(s, sel, &st);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, upd, &up);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot move a volume");
		return FALSE;
	}
	pix_db_bind_int64(st, 1, vol_id);
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		g_autofree char *rel = pix_store_column_bytes(st, 1);
		g_autofree char *path = pix_volume_path(v, rel);
		if (path == NULL)
			continue;       /* not visible through this mount */
		pix_db_reset(up);
		pix_db_bind_int64(up, 1, pix_db_column_int64(st, 0));
		pix_store_bind_path(up, 2, path);
		if (!pix_store_step_done(s, up, "cannot move a volume", error))
			return FALSE;
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot move a volume");
		return FALSE;
	}
	return TRUE;
}

/*
 * Directories and roots of a catalog from before volumes (volume_id
 * NULL), placed on the volume mounted where they are now, without reading
 * a file: for each device they were listed on, the shortest such
 * directory still there with its inode tells which mount holds them all.
 * The volume keeps their old device number, so that refresh_volumes()
 * then moves the files to the device it has now.  Rows on a device not
 * found (a disk unplugged) wait for a later run.
 */
static gboolean place_by_path(PixStore *s, const char *table, GError **error);

static gboolean place_legacy(PixStore *s, GError **error)
{
	g_autoptr(PixStmt) devs = NULL, upd = NULL, rupd = NULL;
	int rc = pix_store_prepare(s,
		"SELECT dev, path, ino, min(length(path)) FROM dirs WHERE volume_id IS NULL AND dev IS NOT NULL"
		" GROUP BY dev", &devs);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, "SELECT id, path FROM dirs WHERE volume_id IS NULL AND (dev = ?1 OR dev IS NULL)", &upd);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, "UPDATE OR IGNORE dirs SET volume_id = ?2, rel_path = ?3 WHERE id = ?1", &rupd);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot place directories on volumes");
		return FALSE;
	}
	while ((rc = pix_db_step(devs)) == PIX_DB_ROW) {
		guint64 old_dev = (guint64)pix_db_column_int64(devs, 0);
		g_autofree char *sample = pix_store_column_bytes(devs, 1);
		guint64 ino = (guint64)pix_db_column_int64(devs, 2);
		struct stat st;
		if (pix_path_lstat(sample, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_ino != ino)
			continue;
		g_autofree char *rel_unused = NULL;
		const PixVolume *v = volume_of(s, sample, st.st_dev, &rel_unused);
		gint64 vol_id;
		if (!volume_id(s, v, TRUE, &vol_id, error))
			return FALSE;
		/* the device the rows have: refresh_volumes() moves them */
		if (!run_ints(s, "UPDATE volumes SET dev = ?2 WHERE id = ?1 AND dev <> ?2", "cannot place directories", error,
		              2, vol_id, (gint64)old_dev))
			return FALSE;
		pix_db_reset(upd);
		pix_db_bind_int64(upd, 1, (gint64)old_dev);
		while ((rc = pix_db_step(upd)) == PIX_DB_ROW) {
			g_autofree char *path = pix_store_column_bytes(upd, 1);
			g_autofree char *rel = pix_volume_rel_of(v, path);
			if (rel == NULL)
				continue;       /* not below that mount: left for a later run */
			pix_db_reset(rupd);
			pix_db_bind_int64(rupd, 1, pix_db_column_int64(upd, 0));
			pix_db_bind_int64(rupd, 2, vol_id);
			pix_store_bind_path(rupd, 3, rel);
			if (!pix_store_step_done(s, rupd, "cannot place directories", error))
				return FALSE;
		}
		if (rc != PIX_DB_DONE)
			break;
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot place directories on volumes");
		return FALSE;
	}
	/* rows that never had a device (never listed), and roots: on the
	 * volume that holds their path now, if it is there */
	return place_by_path(s, "dirs", error) && place_by_path(s, "roots", error);
}

/* The unplaced rows of `table` (dirs without a device, or roots) whose
 * path is a directory now: on the volume that holds it. */
static gboolean place_by_path(PixStore *s, const char *table, GError **error)
{
	g_autofree char *sel = g_strdup_printf("SELECT id, path FROM %s WHERE volume_id IS NULL%s", table,
	                                       strcmp(table, "dirs") == 0 ? " AND dev IS NULL" : "");
	g_autofree char *upd = g_strdup_printf("UPDATE OR IGNORE %s SET volume_id = ?2, rel_path = ?3 WHERE id = ?1",
	                                       table);
	g_autoptr(PixStmt) root = NULL, rset = NULL;
	int rc = pix_store_prepare(s, sel, &root);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot place directories and roots on volumes");
		return FALSE;
	}
	rc = pix_store_prepare(s, upd, &rset);
	while (rc == PIX_DB_OK && (rc = pix_db_step(root)) == PIX_DB_ROW) {
		g_autofree char *path = pix_store_column_bytes(root, 1);
		struct stat st;
		if (pix_path_lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = PIX_DB_OK;
			continue;
		}
		g_autofree char *rel = NULL;
		const PixVolume *v = volume_of(s, path, st.st_dev, &rel);
		gint64 vol_id;
		if (!volume_id(s, v, TRUE, &vol_id, error))
			return FALSE;
		pix_db_reset(rset);
		pix_db_bind_int64(rset, 1, pix_db_column_int64(root, 0));
		pix_db_bind_int64(rset, 2, vol_id);
		pix_store_bind_path(rset, 3, rel);
		if (!pix_store_step_done(s, rset, "cannot place directories and roots on volumes", error))
			return FALSE;
		rc = PIX_DB_OK;
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot place directories and roots on volumes");
		return FALSE;
	}
	return TRUE;
}

/*
 * Looks for every volume of the catalog in the mount table, read anew:
 * one mounted is online, its rows' paths rewritten when it is mounted
 * elsewhere and their device numbers when it has another; one not mounted
 * is offline.  Each change of a volume is one entry in the change log.
 * In the open batch.
 */
static gboolean refresh_volumes(PixStore *s, GError **error)
{
	g_autoptr(GError) mount_error = NULL;
	const PixMounts *m = pix_mounts_refresh(&mount_error);
	if (m == NULL) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FAILED, "cannot read the mount table: %s",
		            mount_error->message);
		return FALSE;
	}
	g_hash_table_remove_all(s->unknown_devs);
	/* a PostgreSQL catalog never had rows from before volumes */
	gboolean is_pg = pix_db_is_pg(s->db);
	if (!is_pg && !place_legacy(s, error))
		return FALSE;
	/* PostgreSQL: several hosts share the catalog, and a volume not in
	 * this host's mount table is offline only if this host saw it last
	 * (another host may have it mounted); one this host sees is its now */
#define VOLUMES_SEEN "SELECT id, kind, ident, mount_point, mount_root, dev, is_online, "
#define VOLUME_FOUND "UPDATE volumes SET mount_point = ?2, mount_root = ?3, dev = ?4, is_online = 1," \
	" last_seen_at = ?5, label = ?6, fstype = ?7, source = ?8"
	g_autoptr(PixStmt) st = NULL, set = NULL;
	int rc = pix_store_prepare(s, is_pg
		? VOLUMES_SEEN "host IS NOT DISTINCT FROM " PG_THIS_HOST " FROM volumes ORDER BY id"
		: VOLUMES_SEEN "1 FROM volumes ORDER BY id", &st);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, is_pg ? VOLUME_FOUND ", host = " PG_THIS_HOST " WHERE id = ?1"
		                                : VOLUME_FOUND " WHERE id = ?1", &set);
#undef VOLUMES_SEEN
#undef VOLUME_FOUND
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		gint64 id = pix_db_column_int64(st, 0);
		int kind = pix_volume_kind_from_name((const char *)pix_db_column_text(st, 1));
		const char *ident = (const char *)pix_db_column_text(st, 2);
		g_autofree char *old_mount = pix_store_column_bytes(st, 3);
		g_autofree char *old_root = pix_store_column_bytes(st, 4);
		guint64 old_dev = (guint64)pix_db_column_int64(st, 5);
		gboolean was_online = pix_db_column_int(st, 6) != 0;
		gboolean is_mine = pix_db_column_int(st, 7) != 0;
		const PixVolume *v = kind >= 0 && ident != NULL ? pix_mounts_find(m, kind, ident) : NULL;

		if (v == NULL && !is_mine)
			continue;
		if (v == NULL) {
			if (was_online && (!run_ints(s, "UPDATE volumes SET is_online = 0 WHERE id = ?1",
			                             "cannot record a volume", error, 1, id) ||
			                   !put_volume_change(s, id, "offline", old_mount, NULL, error)))
				return FALSE;
			continue;
		}
		gboolean is_moved = strcmp(old_mount, v->mount_point) != 0 || strcmp(old_root, v->mount_root) != 0;
		gboolean is_new_dev = old_dev != v->dev;
		if (is_moved && (!rewrite_paths(s, "dirs", id, v, error) || !rewrite_paths(s, "roots", id, v, error)))
			return FALSE;
		if (is_new_dev) {
			struct statfs sf;
			gint64 fsid = statfs(v->mount_point, &sf) == 0 ? (gint64)pix_fsid_from(&sf) : 0;
			if (!run_ints(s, "UPDATE files SET dev = ?2 WHERE dev = ?3 AND dir_id IN"
			              " (SELECT id FROM dirs WHERE volume_id = ?1)", "cannot move a volume", error,
			              3, id, (gint64)v->dev, (gint64)old_dev) ||
			    /* CAST: PostgreSQL takes ?3 for an integer from "<> 0" */
			    !run_ints(s, "UPDATE dirs SET dev = ?2, fsid = CASE WHEN CAST(?3 AS BIGINT) <> 0"
			              " THEN CAST(?3 AS BIGINT) ELSE fsid END WHERE volume_id = ?1 AND dev = ?4", "cannot move a volume", error,
			              4, id, (gint64)v->dev, fsid, (gint64)old_dev))
				return FALSE;
		}
		const char *kind_name = is_moved || is_new_dev ? "remounted" : !was_online ? "online" : NULL;
		if (kind_name != NULL &&
		    !put_volume_change(s, id, kind_name, strcmp(kind_name, "online") == 0 ? NULL : old_mount,
		                       v->mount_point, error))
			return FALSE;
		pix_db_reset(set);
		pix_db_bind_int64(set, 1, id);
		pix_store_bind_path(set, 2, v->mount_point);
		pix_store_bind_path(set, 3, v->mount_root);
		pix_db_bind_int64(set, 4, (gint64)v->dev);
		pix_db_bind_int64(set, 5, s->now_s);
		pix_store_bind_text_or_null(set, 6, v->label);
		pix_store_bind_text_or_null(set, 7, v->fstype);
		pix_store_bind_text_or_null(set, 8, v->source);
		if (!pix_store_step_done(s, set, "cannot record a volume", error))
			return FALSE;
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	return TRUE;
}

/* A root on the mount point of an offline volume is an empty directory
 * now: says so, once, so that nobody takes the files for lost, and adds it
 * to `shadowed` (not recorded as a root of the volume it is on now). */
static gboolean note_offline_roots(PixStore *s, char **roots, GHashTable *shadowed, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s,
		"SELECT v.mount_point, coalesce(v.label, v.ident),"
		" (SELECT count(*) FROM files f JOIN dirs d ON d.id = f.dir_id WHERE d.volume_id = v.id AND f.state <> 'missing')"
		" FROM volumes v WHERE v.is_online = 0", &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		g_autofree char *mount = pix_store_column_bytes(st, 0);
		for (char **r = roots; *r != NULL; r++)
			if (pix_path_is_under(*r, mount) || pix_path_is_under(mount, *r)) {
				g_autofree char *q = pix_quote(mount);
				if (pix_path_is_under(*r, mount))
					g_hash_table_add(shadowed, *r);
				pix_notice("volume '%s', last mounted at '%s', is offline: its %" G_GINT64_FORMAT
				           " files are kept, as offline", (const char *)pix_db_column_text(st, 1), q,
				           (gint64)pix_db_column_int64(st, 2));
				break;
			}
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	return TRUE;
}

/* PostgreSQL: takes the lock of each volume of `roots` the catalog
 * already knows. */
static gboolean lock_known_volumes(PixStore *s, char **roots, GError **error)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	for (char **r = roots; *r != NULL; r++) {
		struct stat rst;
		g_autofree char *rel = NULL;
		gint64 id;
		if (pix_path_lstat(*r, &rst) != 0)
			continue;
		if (!volume_id(s, volume_of(s, *r, rst.st_dev, &rel), FALSE, &id, error))
			return FALSE;
		if (id != 0)
			g_array_append_val(ids, id);
	}
	return pix_store_pg_lock_volumes(s, ids, error);
}

/* PostgreSQL: a verify of every file holds the lock of every volume
 * mounted on this host (what it may read), as on SQLite it holds the
 * catalog's. */
static gboolean lock_online_volumes(PixStore *s, GError **error)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s, "SELECT id FROM volumes WHERE id IN " ONLINE_VOLUMES " ORDER BY id", &st);
	if (rc == PIX_DB_OK) {
		while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
			gint64 id = pix_db_column_int64(st, 0);
			g_array_append_val(ids, id);
		}
	}
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot read its volumes");
		return FALSE;
	}
	return pix_store_pg_lock_volumes(s, ids, error);
}

static gboolean begin_scan(PixStore *s, const char *command, char **roots, GError **error)
{
	g_autoptr(GString) display = g_string_new(NULL);
	gint64 now = pix_store_now();

	g_assert(pix_store_check(s));
	for (char **r = roots; *r != NULL; r++) {
		g_autofree char *q = pix_quote(*r);
		g_string_append_printf(display, "%s%s", display->len ? "\n" : "", q);
	}
	/* PostgreSQL: the locks of the roots' volumes the catalog knows,
	 * before anything is written (those of volumes new to it: once they
	 * are recorded, below) */
	gboolean is_verify_all = strcmp(command, "verify") == 0 && roots[0] != NULL &&
	                         strcmp(roots[0], PIX_VERIFY_ALL) == 0;
	if (pix_db_is_pg(s->db) && !(is_verify_all ? lock_online_volumes(s, error) : lock_known_volumes(s, roots, error)))
		return FALSE;
	if (!begin_batch(s, error))
		return FALSE;

	/* every auto-cleaned statement is declared before the first goto */
	g_autoptr(PixStmt) killed = NULL, scan = NULL, root = NULL, rows = NULL;
	g_autoptr(GHashTable) shadowed = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GArray) vol_ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	s->is_verify = strcmp(command, "verify") == 0;
	gboolean is_pg = pix_db_is_pg(s->db);
	/* SQLite: the lock file says no other writer runs.  PostgreSQL: a run
	 * whose lock no session holds has lost its writer (store-pg.c) */
	int rc = pix_store_prepare(s, is_pg
		? "UPDATE scans SET state = 'killed' WHERE state = 'running' AND NOT EXISTS (SELECT 1 FROM pg_locks l"
		  " WHERE l.locktype = 'advisory' AND l.classid = " G_STRINGIFY(PIX_PG_LOCK_RUN)
		  " AND l.objid::bigint = scans.id AND l.objsubid = 2 AND l.granted)"
		: "UPDATE scans SET state = 'killed' WHERE state = 'running'", &killed);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, is_pg
			? "INSERT INTO scans (command, roots, started_at, state, host, pid)"
			  " VALUES (?1, ?2, ?3, 'running', " PG_THIS_HOST ", ?4) RETURNING id"
			: "INSERT INTO scans (command, roots, started_at, state) VALUES (?1, ?2, ?3, 'running') RETURNING id",
			&scan);
	if (rc == PIX_DB_OK)
#define ROOT_UPSERT(key) "INSERT INTO roots (path, first_scan_at, volume_id, rel_path) VALUES (?1, ?2, ?3, ?4)" \
	" ON CONFLICT (volume_id, " key ") DO UPDATE SET path = ?1"
		rc = pix_store_prepare(s, is_pg ? ROOT_UPSERT(PG_KEY("rel_path")) : ROOT_UPSERT("rel_path"), &root);
#undef ROOT_UPSERT
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot record the scan");
		rollback_batch(s);
		return FALSE;
	}
	if (!pix_store_step_done(s, killed, "cannot record the scan", error))
		goto fail;
	pix_db_bind_text(scan, 1, command, -1, PIX_DB_STATIC);
	pix_db_bind_text(scan, 2, display->str, -1, PIX_DB_STATIC);
	pix_db_bind_int64(scan, 3, now);
	if (is_pg)
		pix_db_bind_int64(scan, 4, getpid());
	if (!query_int(s, scan, &s->scan_id, "cannot record the scan", error) ||
	    (is_pg && !pix_store_pg_lock_run(s, error)))
		goto fail;
	rc = pix_store_prepare(s, "SELECT coalesce(max(id), 0) FROM files", &rows);
	if (rc == PIX_DB_OK)
		rc = pix_db_step(rows);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot record the scan");
		goto fail;
	}
	s->catalog_rows = s->rows_before_run = pix_db_column_int64(rows, 0);
	pix_db_reset(rows);        /* a statement in progress would lock the schema */
	if (!s->is_verify && s->rows_before_run == 0 && !is_pg &&
	    !pix_store_exec(s, "DROP INDEX IF EXISTS files_by_md5", "cannot record the scan", error))
		goto fail;
	if (s->rates != NULL)
		g_array_set_size(s->rates, 0);
	g_strfreev(s->roots);
	s->roots = NULL;
	/* where each volume is now, before anything is looked up by path */
	if (!refresh_volumes(s, error))
		goto fail;
	if (s->is_verify)
		return pix_store_commit(s, error);      /* it reads, it walks no root */
	s->roots = g_strdupv(roots);
	if (!note_offline_roots(s, roots, shadowed, error))
		goto fail;
	for (char **r = roots; *r != NULL; r++) {
		struct stat rst;
		if (g_hash_table_contains(shadowed, *r) || pix_path_lstat(*r, &rst) != 0)
			continue;       /* the walk says why */
		g_autofree char *rel = NULL;
		gint64 vol_id;
		if (!volume_id(s, volume_of(s, *r, rst.st_dev, &rel), TRUE, &vol_id, error))
			goto fail;
		g_array_append_val(vol_ids, vol_id);
		pix_db_reset(root);
		pix_store_bind_path(root, 1, *r);
		pix_db_bind_int64(root, 2, now);
		pix_db_bind_int64(root, 3, vol_id);
		pix_store_bind_path(root, 4, rel);
		if (!pix_store_step_done(s, root, "cannot record the scan", error))
			goto fail;
	}
	/* PostgreSQL: the new volumes' locks, after the commit (a writer that
	 * waits for one holds no row another needs); a run refused one ends
	 * 'failed' (exit status 2) */
	if (!pix_store_commit(s, error))
		return FALSE;
	if (is_pg && !pix_store_pg_lock_volumes(s, vol_ids, error)) {
		pix_store_end_scan(s, "failed", 2, NULL);
		return FALSE;
	}
	return TRUE;
fail:
	rollback_batch(s);
	return FALSE;
}

/* Two hosts that begin runs at once update the same volumes' rows: a
 * deadlock between them rolls one back, which begins again. */
gboolean pix_store_begin_scan(PixStore *s, const char *command, char **roots, GError **error)
{
	for (guint n = 1;; n++) {
		if (begin_scan(s, command, roots, error))
			return TRUE;
		if (n >= BATCH_RETRIES || !g_error_matches(*error, PIX_STORE_ERROR, PIX_STORE_ERROR_RETRY))
			return FALSE;
		pix_notice("%s: beginning the run again (%u of %u)", (*error)->message, n, BATCH_RETRIES);
		g_clear_error(error);
		s->scan_id = 0;
		g_usleep((gulong)g_random_int_range(10, 50) * 1000 * n);
	}
}

/* The end of the run in its scans row (and, when 'done', the roots). */
static gboolean record_end(PixStore *s, const char *state, int exit_status, GError **error)
{
	if (!begin_batch(s, error))
		return FALSE;
	g_autoptr(PixStmt) st = NULL, roots = NULL;
	int rc = pix_store_prepare(s,
		"UPDATE scans SET finished_at = ?2, state = ?3, n_dirs = ?4, n_new = ?5, n_changed = ?6,"
		" n_moved = ?7, n_missing = ?8, n_unchanged = ?9, n_errors = ?10, bytes_read = ?11,"
		" exit_status = ?12 WHERE id = ?1", &st);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, "UPDATE roots SET last_scan_at = ?1 WHERE path = ?2"
		                       " AND (volume_id IS NULL OR volume_id IN " ONLINE_VOLUMES ") RETURNING volume_id", &roots);
	g_autoptr(PixStmt) vols = NULL;
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, "UPDATE volumes SET last_scan_at = ?1 WHERE id = ?2", &vols);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot record the end of the scan");
		rollback_batch(s);
		return FALSE;
	}
	static const PixCounter order[] = { PIX_N_DIRS, PIX_N_NEW, PIX_N_CHANGED, PIX_N_MOVED,
	                                    PIX_N_MISSING, PIX_N_UNCHANGED, PIX_N_ERRORS, PIX_BYTES_READ };
	/* a verify: n_unchanged counts the files that kept their MD5,
	 * n_changed those whose content changed behind size and mtime */
	static const PixCounter verify_order[] = { PIX_N_DIRS, PIX_N_NEW, PIX_N_MISMATCH, PIX_N_MOVED,
	                                           PIX_N_MISSING, PIX_N_VERIFIED, PIX_N_ERRORS, PIX_BYTES_READ };
	pix_db_bind_int64(st, 1, s->scan_id);
	pix_db_bind_int64(st, 2, pix_store_now());
	pix_db_bind_text(st, 3, state, -1, PIX_DB_STATIC);
	for (guint i = 0; i < G_N_ELEMENTS(order); i++)
		pix_db_bind_int64(st, 4 + (int)i, pix_count_get(s->is_verify ? verify_order[i] : order[i]));
	pix_db_bind_int(st, 12, exit_status);
	if (!pix_store_step_done(s, st, "cannot record the end of the scan", error)) {
		rollback_batch(s);
		return FALSE;
	}
	for (char **r = s->roots; strcmp(state, "done") == 0 && r != NULL && *r != NULL; r++) {
		pix_db_reset(roots);
		pix_db_bind_int64(roots, 1, pix_store_now());
		pix_store_bind_path(roots, 2, *r);
		while ((rc = pix_db_step(roots)) == PIX_DB_ROW) {
			pix_db_reset(vols);
			pix_db_bind_int64(vols, 1, pix_store_now());
			pix_db_bind_int64(vols, 2, pix_db_column_int64(roots, 0));
			if (!pix_store_step_done(s, vols, "cannot record the end of the scan", error)) {
				rollback_batch(s);
				return FALSE;
			}
		}
		if (rc != PIX_DB_DONE) {
			pix_store_db_error(error, s, rc, "cannot record the end of the scan");
			rollback_batch(s);
			return FALSE;
		}
	}
	return pix_store_commit(s, error);
}

/* record_end(), and on a full disk again in the room reserved for it. */
static gboolean record_end_in_room(PixStore *s, const char *state, int exit_status, GError **error)
{
	GError *local = NULL;
	if (record_end(s, state, exit_status, &local))
		return TRUE;
	if (!g_error_matches(local, PIX_STORE_ERROR, PIX_STORE_ERROR_FULL) || !pix_store_release_room(s)) {
		g_propagate_error(error, local);
		return FALSE;
	}
	g_error_free(local);
	return record_end(s, state, exit_status, error);
}

/*
 * The end is recorded before the MD5 index is built: on a full disk its
 * few pages fit in the reserved room, the index may not, and a run must
 * not stay 'running'.
 */
gboolean pix_store_end_scan(PixStore *s, const char *state, int exit_status, GError **error)
{
	g_autoptr(GError) local = NULL;

	g_assert(pix_store_check(s) && s->scan_id > 0);
	if (!record_end_in_room(s, state, exit_status, error))
		return FALSE;
	if (pix_store_ensure_md5_index(s, &local))
		return TRUE;
	if (strcmp(state, "done") != 0) {
		/* the run already failed or stopped: the next writer builds it */
		pix_info("%s", local->message);
		return TRUE;
	}
	/* what the caller makes of this failure: exit status 2 */
	record_end_in_room(s, "failed", 2, NULL);
	g_propagate_error(error, g_steal_pointer(&local));
	return FALSE;
}

static gboolean put_change(PixStore *s, gint64 file_id, const char *kind, const PixItem *item,
                           const char *old_path, const char *new_path, GError **error)
{
	PixChangeRow c = {
		.file_id = file_id, .kind = kind, .old_path = (char *)old_path, .new_path = (char *)new_path,
		.has_old_md5 = item->has_old_md5,
		.has_new_md5 = item->has_md5 && strcmp(kind, "moved") != 0 && strcmp(kind, "missing") != 0,
		.has_old_size = strcmp(kind, "added") != 0, .old_size = item->old_st.size_bytes,
		.has_new_size = strcmp(kind, "missing") != 0, .new_size = item->st.size_bytes,
	};
	memcpy(c.old_md5, item->old_md5, 16);
	memcpy(c.new_md5, item->md5, 16);
	return put_change_row(s, &c, error);
}

/* The metadata row of file_id: replaced, or (is_new: a row just added)
 * inserted. */
static gboolean put_meta(PixStore *s, gint64 file_id, const PixMeta *m, gboolean is_new, GError **error)
{
	PixStmt *st;
	if (m == NULL && is_new)
		return TRUE;
	if (m == NULL) {
		st = pix_store_stmt(s, ST_META_DELETE, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, file_id);
		return pix_store_step_done(s, st, "cannot write metadata", error);
	}
	st = pix_store_stmt(s, is_new ? ST_META_INSERT : ST_META_REPLACE, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, file_id);
	pix_store_bind_text_or_null(st, 2, m->date_taken);
	pix_store_bind_text_or_null(st, 3, m->date_tz);
	pix_store_bind_text_or_null(st, 4, m->date_source);
	pix_store_bind_text_or_null(st, 5, m->make);
	pix_store_bind_text_or_null(st, 6, m->model);
	pix_store_bind_text_or_null(st, 7, m->lens);
	pix_store_bind_double_or_null(st, 8, m->exposure_s);
	pix_store_bind_double_or_null(st, 9, m->fnumber);
	pix_store_bind_int_or_null(st, 10, m->iso);
	pix_store_bind_double_or_null(st, 11, m->focal_mm);
	pix_store_bind_int_or_null(st, 12, m->orientation);
	pix_store_bind_int_or_null(st, 13, m->width_px);
	pix_store_bind_int_or_null(st, 14, m->height_px);
	pix_store_bind_double_or_null(st, 15, m->gps_lat);
	pix_store_bind_double_or_null(st, 16, m->gps_lon);
	pix_store_bind_double_or_null(st, 17, m->gps_alt_m);
	pix_store_bind_double_or_null(st, 18, m->duration_s);
	if (m->has_osdb_hash) {
		char hex[17];
		g_snprintf(hex, sizeof hex, "%016" G_GINT64_MODIFIER "x", m->osdb_hash);
		pix_db_bind_text(st, 19, hex, -1, PIX_DB_TRANSIENT);
	}
	pix_store_bind_double_or_null(st, 20, m->aperture);
	pix_store_bind_int_or_null(st, 21, m->exposure_program);
	pix_store_bind_int_or_null(st, 22, m->metering_mode);
	pix_store_bind_int_or_null(st, 23, m->flash);
	pix_store_bind_text_or_null(st, 24, m->gps_time);
	pix_store_bind_double_or_null(st, 25, m->gps_direction);
	pix_store_bind_text_or_null(st, 26, m->gps_direction_ref);
	pix_store_bind_text_or_null(st, 27, m->description);
	return pix_store_step_done(s, st, "cannot write metadata", error);
}

static PixFileState item_state(const PixItem *item)
{
	return item->error != NULL ? PIX_STATE_ERROR : PIX_STATE_OK;
}

static void bind_stat(PixStmt *st, int first, const PixStat *ps)
{
	pix_db_bind_int64(st, first, (gint64)ps->dev);
	pix_db_bind_int64(st, first + 1, (gint64)ps->ino);
	pix_db_bind_int64(st, first + 2, ps->mode);
	pix_db_bind_int64(st, first + 3, ps->size_bytes);
	pix_db_bind_int64(st, first + 4, ps->mtime_ns);
	pix_db_bind_int64(st, first + 5, ps->ctime_ns);
}

static gboolean put_dir(PixStore *s, PixItem *item, GError **error)
{
	PixDir *d = item->dir;
	PixStmt *st;

	if (item->action == PIX_ACT_DIR_MISSING) {
		g_assert(d->id > 0);
		st = pix_store_stmt(s, ST_DIR_MISSING, error);
		if (st == NULL)
			return FALSE;
		pix_db_bind_int64(st, 1, d->id);
		return pix_store_step_done(s, st, "cannot write a directory", error);
	}
	gint64 vol_id;
	g_autofree char *rel = NULL;
	if (!pix_store_dir_key(s, d, TRUE, &vol_id, &rel, error))
		return FALSE;
	/* a directory plan found has its id: the row is written without
	 * waiting for it (on PostgreSQL, in the pipeline) */
	gboolean is_known = d->id > 0;
	st = pix_store_stmt(s, is_known ? ST_DIR_UPSERT_KNOWN : ST_DIR_UPSERT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 13, vol_id);
	pix_store_bind_path(st, 14, rel);
	if (d->parent != NULL && d->parent->id > 0)
		pix_db_bind_int64(st, 1, d->parent->id);
	pix_store_bind_path(st, 2, d->path);
	if (d->st.ino != 0) {
		pix_db_bind_int64(st, 3, (gint64)d->st.dev);
		pix_db_bind_int64(st, 4, (gint64)d->st.ino);
		pix_db_bind_int64(st, 5, d->st.mtime_ns);
		pix_db_bind_int64(st, 6, d->st.ctime_ns);
	}
	pix_db_bind_text(st, 7, d->error != NULL ? "error" : "ok", -1, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, 8, d->error);
	pix_db_bind_int64(st, 9, s->now_s);
	if (d->fsid != 0)
		pix_db_bind_int64(st, 10, (gint64)d->fsid);
	/* listed by this run (NULL when the listing failed, or outside a run) */
	if (d->error == NULL && s->scan_id > 0)
		pix_db_bind_int64(st, 11, s->scan_id);
	pix_db_bind_int(st, 12, d->is_unlisted);
	if (is_known)
		pix_db_bind_int64(st, 15, d->id);
	if (is_known)
		return pix_store_step_done(s, st, "cannot write a directory", error);
	int rc = pix_db_step(st);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot write a directory");
		return FALSE;
	}
	d->id = pix_db_column_int64(st, 0);
	return pix_store_step_done(s, st, "cannot write a directory", error);
}

/* Binds the content columns shared by insert and update, from `first`:
 * md5, mime, media, state, error, recheck. */
static void bind_content(PixStmt *st, int first, const PixItem *item)
{
	if (item->has_md5)
		pix_db_bind_blob(st, first, item->md5, 16, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, first + 1, item->mime);
	pix_db_bind_text(st, first + 2, pix_media_name(item->media), -1, PIX_DB_STATIC);
	pix_db_bind_text(st, first + 3, pix_store_state_name(item_state(item)), -1, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, first + 4, item->error);
	pix_db_bind_int(st, first + 5, item->is_racy ? 1 : 0);
}

/* Inserts a new file row for `item`; *id is its row id. */
static gboolean insert_file(PixStore *s, PixItem *item, gint64 *id, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_INSERT, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0);
	pix_db_bind_int64(st, 1, item->dir->id);
	pix_store_bind_path(st, 2, item->name);
	bind_stat(st, 3, &item->st);
	bind_content(st, 9, item);
	pix_db_bind_int64(st, 15, s->now_s);
	if (item->has_md5)
		pix_db_bind_int64(st, 16, s->now_s);
	/* the id named, not asked back: the insert's row is kept and written
	 * with others later (db.h; RETURNING would also cost SQLite a
	 * temporary table per insert, a third of the insert) */
	gint64 new_id = pix_db_reserve_id(s->db, "files");
	if (new_id == 0) {
		pix_store_db_error(error, s, pix_db_errcode(s->db), "cannot add a file");
		return FALSE;
	}
	pix_db_bind_int64(st, 17, new_id);
	if (!pix_store_step_done(s, st, "cannot add a file", error))
		return FALSE;
	*id = new_id;
	count(s, PIX_N_NEW, 1);
	return TRUE;
}


/*
 * --- decisions the store settles ---
 *
 * Plan decides from what the catalog held when the scan began; two
 * decisions need what only the writer knows, the content read and the
 * rows this run has written, and are settled here:
 *  - a new file whose MD5 and size are a file's whose path is gone, from a
 *    disk still mounted, is that file moved across file systems: it takes
 *    the row over (find_moved(), pick_moved(), take_over());
 *  - a file plan found gone is marked missing only while its row is still
 *    at that path (ST_FILE_MISSING);
 * and such new files, and the end-of-walk missing items, wait until the
 * input ends (Batch, MAX_DEFERRED): a rename plan found claims its row
 * first, and a file that turned up elsewhere is recorded as moved, not
 * also as missing.  A batch's new files are written after its other items
 * (settle_looking()): the change log lists them after those.
 */

/*
 * The rows a new file may be, moved (see the decisions above): same MD5,
 * from before this run, looked up for many new files at once (one round
 * trip per PIX_STORE_SET contents): a table from the MD5 (16 bytes, owned)
 * to its rows (PixFileRow*, with dir_path, dir_fsid and is_elsewhere).
 * Empty files all share one MD5: content says nothing about them.  Only
 * rows from before this run can have moved here (a first import into an
 * empty catalog asks nothing).
 */
static gboolean is_move_candidate(const PixStore *s, const PixItem *item)
{
	return item->action == PIX_ACT_ADD && !item->is_vanished && item->has_md5 && item->st.size_bytes > 0 &&
	       s->rows_before_run > 0;
}

static guint md5_hash(gconstpointer p)
{
	guint h;
	memcpy(&h, p, sizeof h);
	return h;
}

static gboolean md5_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, 16) == 0;
}

typedef struct {
	GPtrArray *md5s;        /* const guint8 * (borrowed), in set order */
	GHashTable *by_md5;
} Md5Set;

static void bind_md5(PixStmt *st, int i, guint k, gpointer data)
{
	pix_db_bind_blob(st, i, g_ptr_array_index(((Md5Set *)data)->md5s, k), 16, PIX_DB_STATIC);
}

static void take_md5_row(PixStmt *st, gpointer data)
{
	Md5Set *set = data;
	PixFileRow *row = pix_store_file_row_from(st, TRUE);
	GPtrArray *rows = row->has_md5 ? g_hash_table_lookup(set->by_md5, row->md5) : NULL;
	if (rows == NULL) {
		pix_file_row_free(row);
		return;
	}
	row->is_elsewhere = pix_db_column_int(st, 13) != 0;
	g_ptr_array_add(rows, row);
}

/* The candidates of items[0..n) (transfer full; NULL when none could
 * have one). */
static gboolean find_moved(PixStore *s, PixItem *const *items, guint n, GHashTable **candidates, GError **error)
{
	Md5Set set = { g_ptr_array_new(), NULL };
	*candidates = NULL;
	for (guint k = 0; k < n; k++) {
		if (!is_move_candidate(s, items[k]))
			continue;
		if (set.by_md5 == NULL)
			set.by_md5 = g_hash_table_new_full(md5_hash, md5_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
		if (g_hash_table_contains(set.by_md5, items[k]->md5))
			continue;
		g_hash_table_insert(set.by_md5, g_memdup2(items[k]->md5, 16),
		                    g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free));
		g_ptr_array_add(set.md5s, items[k]->md5);
	}
	gboolean ok = set.md5s->len == 0 ||
	              pix_store_run_set(s, ST_FILES_BY_MD5S, 2, s->rows_before_run, set.md5s->len, bind_md5,
	                                take_md5_row, &set, "cannot look for a moved file", error);
	g_ptr_array_free(set.md5s, TRUE);
	if (!ok) {
		g_clear_pointer(&set.by_md5, g_hash_table_destroy);
		return FALSE;
	}
	*candidates = set.by_md5;
	return TRUE;
}

/* The order rows of one content are tried in: the same name first, then
 * rows already missing, then the oldest. */
static int compare_candidates(gconstpointer a, gconstpointer b, gpointer name)
{
	const PixFileRow *x = *(PixFileRow *const *)a, *y = *(PixFileRow *const *)b;
	int by_name = (strcmp(y->name, name) == 0) - (strcmp(x->name, name) == 0);
	if (by_name != 0)
		return by_name;
	int by_state = (y->state == PIX_STATE_MISSING) - (x->state == PIX_STATE_MISSING);
	if (by_state != 0)
		return by_state;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * The row of a file that was moved to where `item` (new, read) is, among
 * `candidates` (find_moved()): same MD5 and size, and its own path gone
 * from a disk that is still there (a move across file systems, or a copy
 * and a delete).  A copy whose original is still in place is a file of
 * its own.  Returns the row (owned by `candidates`) or NULL.
 */
static PixFileRow *pick_moved(const PixStore *s, const PixItem *item, GHashTable *candidates)
{
	GPtrArray *all = candidates != NULL && is_move_candidate(s, item) ? g_hash_table_lookup(candidates, item->md5)
	                                                                   : NULL;
	if (all == NULL)
		return NULL;
	g_autoptr(GPtrArray) rows = g_ptr_array_new();
	for (guint i = 0; i < all->len; i++) {
		PixFileRow *row = g_ptr_array_index(all, i);
		if (row->st.size_bytes == item->st.size_bytes)
			g_ptr_array_add(rows, row);
	}
	g_ptr_array_sort_with_data(rows, compare_candidates, item->name);
	/* a new hard link of a file still at its path is that file's second
	 * name, not a file that moved here */
	for (guint i = 0; i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		if (row->st.dev == item->st.dev && row->st.ino == item->st.ino && row->state != PIX_STATE_MISSING &&
		    !pix_path_is_gone(row->dir_path, row->name))
			return NULL;
	}
	for (guint i = 0; i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		g_autofree char *old_path = pix_path_join(row->dir_path, row->name);
		/* PostgreSQL: a file its own host found gone, on a volume not
		 * mounted here (its path and device are that host's) */
		gboolean is_elsewhere = pix_db_is_pg(s->db) && row->state == PIX_STATE_MISSING && row->is_elsewhere;
		if (!is_elsewhere &&
		    (!pix_path_is_gone(row->dir_path, row->name) || !pix_path_ancestor_on(old_path, row->st.dev, row->dir_fsid)))
			continue;
		return row;
	}
	return NULL;
}

/* The file of `item` is the one of `row`, moved: the row takes its path,
 * stat and content. */
static gboolean take_over(PixStore *s, PixItem *item, PixFileRow *row, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_TAKE_OVER, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, row->id);
	pix_db_bind_int64(st, 2, item->dir->id);
	pix_store_bind_path(st, 3, item->name);
	bind_stat(st, 4, &item->st);
	bind_content(st, 10, item);
	pix_db_bind_int64(st, 16, s->now_s);
	if (!pix_store_step_done(s, st, "cannot move a file", error))
		return FALSE;
	item->row_id = row->id;
	item->old_st = row->st;
	item->has_old_md5 = row->has_md5;
	memcpy(item->old_md5, row->md5, 16);
	g_autofree char *old_path = pix_path_join(row->dir_path, row->name);
	g_autofree char *new_path = pix_item_path(item);
	g_autofree char *q_old = pix_quote(old_path), *q_new = pix_quote(new_path);
	pix_info("'%s' is '%s', moved (same content)", q_new, q_old);
	count(s, PIX_N_MOVED, 1);
	/* the candidate now says what the row does, for the next new file
	 * of this content */
	g_free(row->dir_path);
	g_free(row->name);
	row->dir_path = g_strdup(item->dir->path);
	row->dir_fsid = item->dir->fsid;
	row->name = g_strdup(item->name);
	row->st = item->st;
	row->state = item_state(item);
	row->is_elsewhere = FALSE;
	return put_meta(s, row->id, item->meta, FALSE, error) &&
	       put_change(s, row->id, "moved", item, old_path, new_path, error);
}

/* A new file: the row of the file it is, moved (among `candidates`, see
 * find_moved(), when `is_looked`; else looked for now), or a row of its
 * own. */
static gboolean put_add(PixStore *s, PixItem *item, GHashTable *candidates, gboolean is_looked, GError **error)
{
	g_autoptr(GHashTable) own = NULL;
	gint64 id;

	if (!is_looked) {
		if (!find_moved(s, &item, 1, &own, error))
			return FALSE;
		candidates = own;
	}
	PixFileRow *moved = pick_moved(s, item, candidates);
	if (moved != NULL)
		return take_over(s, item, moved, error);
	if (!insert_file(s, item, &id, error))
		return FALSE;
	return put_meta(s, id, item->meta, TRUE, error) && put_change(s, id, "added", item, NULL, NULL, error);
}

static gboolean put_content(PixStore *s, PixItem *item, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_UPDATE_CONTENT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, item->row_id);
	bind_stat(st, 2, &item->st);
	bind_content(st, 8, item);
	pix_db_bind_int64(st, 14, s->now_s);
	if (item->has_md5)
		pix_db_bind_int64(st, 15, s->now_s);
	pix_db_bind_int64(st, 16, item->dir->id);
	pix_store_bind_path(st, 17, item->name);
	if (!pix_store_step_done(s, st, "cannot update a file", error))
		return FALSE;
	if (pix_db_changes(s->db) == 0)
		return TRUE;    /* the row is no longer at the path that was read */
	if (!put_meta(s, item->row_id, item->meta, FALSE, error))
		return FALSE;
	gboolean is_same = item->has_md5 && item->has_old_md5 && memcmp(item->md5, item->old_md5, 16) == 0;
	/* a move already said the file is back: its re-read adds nothing */
	gboolean is_back = !item->was_missing || item->action == PIX_ACT_MOVE;
	if (is_same && is_back && item->st.size_bytes == item->old_st.size_bytes &&
	    item->st.mtime_ns == item->old_st.mtime_ns && item->error == NULL) {
		/* a recheck (recent mtime, earlier) found nothing new */
		if (item->action == PIX_ACT_CHANGE)
			count(s, PIX_N_UNCHANGED, 1);
		return TRUE;
	}
	if (item->action == PIX_ACT_CHANGE)
		count(s, PIX_N_CHANGED, 1);
	return put_change(s, item->row_id, item->was_missing && is_same ? "restored" : "changed", item,
	                  NULL, NULL, error);
}

static gboolean put_missing(PixStore *s, PixItem *item, GError **error);

static gboolean put_move(PixStore *s, PixItem *item, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_MOVE, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0 && item->row_id > 0);
	pix_db_bind_int64(st, 1, item->row_id);
	pix_db_bind_int64(st, 2, item->dir->id);
	pix_store_bind_path(st, 3, item->name);
	pix_db_bind_int64(st, 4, (gint64)item->old_st.dev);
	pix_db_bind_int64(st, 5, (gint64)item->old_st.ino);
	if (!pix_store_step_done(s, st, "cannot move a file", error))
		return FALSE;
	if (pix_db_changes(s->db) == 0) {
		/* a copy of it, found by its MD5, took the row over meanwhile:
		 * this file is new, its content known, its metadata read next
		 * scan (recheck) */
		gint64 id;
		if (item->is_vanished)
			return TRUE;
		if (!item->is_read) {
			item->has_md5 = item->has_old_md5;
			memcpy(item->md5, item->old_md5, 16);
			item->is_racy = TRUE;
		}
		return insert_file(s, item, &id, error) && put_meta(s, id, item->meta, TRUE, error) &&
		       put_change(s, id, "added", item, NULL, NULL, error);
	}
	g_autofree char *new_path = pix_item_path(item);
	if (!put_change(s, item->row_id, "moved", item, item->old_path, new_path, error))
		return FALSE;
	count(s, PIX_N_MOVED, 1);
	if (item->is_vanished)
		return put_missing(s, item, error);    /* gone again before it was read */
	if (item->is_read)
		return put_content(s, item, error);
	st = pix_store_stmt(s, ST_FILE_UPDATE_STAT, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, item->row_id);
	bind_stat(st, 2, &item->st);
	return pix_store_step_done(s, st, "cannot move a file", error);
}

static gboolean put_missing(PixStore *s, PixItem *item, GError **error)
{
	PixStmt *st = pix_store_stmt(s, ST_FILE_MISSING, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0);
	pix_db_bind_int64(st, 1, item->row_id);
	pix_db_bind_int64(st, 2, s->now_s);
	pix_db_bind_int64(st, 3, item->dir->id);
	pix_store_bind_path(st, 4, item->name);
	if (!pix_store_step_done(s, st, "cannot mark a file missing", error))
		return FALSE;
	if (pix_db_changes(s->db) == 0)
		return TRUE;
	count(s, PIX_N_MISSING, 1);
	return put_change(s, item->row_id, "missing", item, NULL, NULL, error);
}

static char *md5_hex(const guint8 *md5)
{
	char *hex = g_malloc(33);
	for (int i = 0; i < 16; i++)
		g_snprintf(hex + 2 * i, 3, "%02x", md5[i]);
	return hex;
}

/* A file verify read: its MD5 against the stored one. */
static gboolean put_verify(PixStore *s, PixItem *item, GError **error)
{
	g_autofree char *path = pix_item_path(item);
	g_autofree char *q = pix_quote(path);
	const char *state;

	if (item->is_vanished)
		return TRUE;    /* the reader said so; the next scan marks it missing */
	if (item->is_unstable || (item->error == NULL &&
	    (item->st.dev != item->old_st.dev || item->st.ino != item->old_st.ino ||
	     item->st.size_bytes != item->old_st.size_bytes || item->st.mtime_ns != item->old_st.mtime_ns))) {
		pix_notice("'%s' changed since the last scan: not verified (a scan reads it again)", q);
		count(s, PIX_N_STALE, 1);
		return TRUE;
	}
	if (item->error != NULL) {
		state = "unreadable";
		count(s, PIX_N_ERRORS, 1);
	} else if (memcmp(item->md5, item->old_md5, 16) == 0) {
		state = "ok";
		count(s, PIX_N_VERIFIED, 1);
	} else {
		g_autofree char *was = md5_hex(item->old_md5), *now = md5_hex(item->md5);
		state = "mismatch";
		count(s, PIX_N_MISMATCH, 1);
		pix_warn("'%s': content changed but size and mtime did not (MD5 was %s, is %s): %s", q, was, now,
		         item->st.ctime_ns == item->old_st.ctime_ns
		         ? "ctime unchanged too, so not by a write through the file system: bit rot?"
		         : "ctime changed: edited with its times put back?");
	}
	PixStmt *st = pix_store_stmt(s, ST_FILE_VERIFY, error);
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, item->row_id);
	pix_db_bind_int64(st, 2, s->now_s);
	pix_db_bind_text(st, 3, state, -1, PIX_DB_STATIC);
	if (strcmp(state, "mismatch") == 0)
		pix_db_bind_blob(st, 4, item->md5, 16, PIX_DB_STATIC);
	pix_store_bind_text_or_null(st, 5, item->error);
	pix_db_bind_int64(st, 6, (gint64)item->old_st.dev);
	pix_db_bind_int64(st, 7, (gint64)item->old_st.ino);
	pix_db_bind_int64(st, 8, item->old_st.size_bytes);
	pix_db_bind_int64(st, 9, item->old_st.mtime_ns);
	return pix_store_step_done(s, st, "cannot record a verification", error);
}

/* pix_store_put(); `is_looked`: an ADD item's moved rows were looked for
 * already, and are among `candidates` (see put_add()). */
static gboolean store_put(PixStore *s, PixItem *item, GHashTable *candidates, gboolean is_looked, GError **error)
{
	gboolean ok;

	g_assert(pix_store_check(s) && s->mode == PIX_STORE_WRITE);
	if (!begin_batch(s, error))
		return FALSE;
	/* what the file's sidecar links may now be (see relink()) */
	if (item->action != PIX_ACT_DIR && item->action != PIX_ACT_DIR_MISSING && item->action != PIX_ACT_VERIFY)
		mark_dirty(s, item);
	switch (item->action) {
	case PIX_ACT_DIR:
	case PIX_ACT_DIR_MISSING:
		ok = put_dir(s, item, error);
		break;
	case PIX_ACT_ADD:
		/* a new file gone before it was read: there is nothing to record */
		ok = item->is_vanished || put_add(s, item, candidates, is_looked, error);
		break;
	case PIX_ACT_CHANGE:
		/* a known file gone before it was read keeps what was known */
		ok = item->is_vanished ? put_missing(s, item, error) : put_content(s, item, error);
		break;
	case PIX_ACT_MOVE:
		ok = put_move(s, item, error);
		break;
	case PIX_ACT_MISSING:
		ok = put_missing(s, item, error);
		break;
	case PIX_ACT_VERIFY:
		ok = put_verify(s, item, error);
		break;
	default:
		g_assert_not_reached();
	}
	if (!ok) {
		rollback_batch(s);
		return FALSE;
	}
	if (item->error != NULL && item->action != PIX_ACT_MISSING && item->action != PIX_ACT_DIR &&
	    item->action != PIX_ACT_DIR_MISSING && item->action != PIX_ACT_VERIFY)
		count(s, PIX_N_ERRORS, 1);
	return TRUE;
}

gboolean pix_store_put(PixStore *s, PixItem *item, GError **error)
{
	return store_put(s, item, NULL, FALSE, error);
}

/* Adds a committed batch to the write-rate bucket of the catalog's size. */
static void account_batch(PixStore *s, gint64 n_items, gint64 n_new_rows, gint64 busy_us, gint64 wall_us)
{
	if (s->rates == NULL)
		s->rates = g_array_new(FALSE, TRUE, sizeof(PixWriteRate));
	s->catalog_rows += n_new_rows;
	gint64 bucket = MAX(s->catalog_rows - 1, 0) / PIX_STORE_RATE_ROWS;
	guint i = s->rates->len;
	if (i == 0 || g_array_index(s->rates, PixWriteRate, i - 1).catalog_rows != bucket * PIX_STORE_RATE_ROWS) {
		PixWriteRate r = { .catalog_rows = bucket * PIX_STORE_RATE_ROWS };
		g_array_append_val(s->rates, r);
		i++;
	}
	PixWriteRate *r = &g_array_index(s->rates, PixWriteRate, i - 1);
	r->items += n_items;
	r->busy_us += busy_us;
	r->wall_us += wall_us;
}

const GArray *pix_store_write_rates(PixStore *s)
{
	if (s->rates == NULL)
		s->rates = g_array_new(FALSE, TRUE, sizeof(PixWriteRate));
	return s->rates;
}

/*
 * Items held back until the input ends, when plan has stored every move it
 * found by inode: a new file whose content matches a row whose path is
 * gone (it may take that row over, see pick_moved(), but only once no
 * rename claims the row), and the end-of-walk missing files and
 * directories (so that a file that turned up elsewhere is recorded as
 * moved, not also as missing).  They are written in that order, each kind
 * in arrival order (a directory after its files).  Bounded: at this many,
 * they are written at once, in the same order.
 */
#define MAX_DEFERRED 20000

/*
 * The batch being filled by pix_store_consume().  A new file that may be
 * a moved one (is_move_candidate()) waits in `looking` until the batch is
 * about to commit: the rows of all their contents are then asked for at
 * once (find_moved()), before any of them is written, so that reads do
 * not break up the batch's stream of inserts (on PostgreSQL each read
 * ends a COPY and waits a round trip).  Those with a candidate are
 * deferred, the others written.
 *
 * Every item written into the open batch is kept (`written`) until it
 * commits: on PostgreSQL, a batch the server rolled back (a deadlock
 * with another host, a serialization failure) or lost with its
 * connection is written again from them (batch_retry()).
 */
typedef struct {
	guint batch_items;
	gint64 batch_us;
	guint n_items;          /* written in the open batch */
	gint64 start_us;        /* when its first item came */
	gint64 busy_us;         /* time spent writing it so far */
	gint64 last_commit_us;
	GPtrArray *looking;     /* PixItem (owned), in arrival order */
	GPtrArray *adds;        /* deferred: PixItem (owned) */
	GPtrArray *missing;     /* deferred: PixItem (owned) */
	GPtrArray *written;     /* PixItem (owned), written into the open
	                           batch, in order */
} Batch;


/* Drops the NULLs of `a` (items taken out of it), keeping the order. */
static void compact(GPtrArray *a)
{
	guint k = 0;
	for (guint i = 0; i < a->len; i++)
		if (a->pdata[i] != NULL)
			a->pdata[k++] = a->pdata[i];
	a->len = k;
}

static guint batch_len(const Batch *b)
{
	return b->n_items + b->looking->len;
}

/* Writes `item` (transfer full) into the open batch (`candidates`,
 * `is_looked`: see store_put()). */
static gboolean batch_write(PixStore *s, Batch *b, PixItem *item, GHashTable *candidates, gboolean is_looked,
                            GError **error)
{
	gint64 t0 = g_get_monotonic_time();
	if (batch_len(b) == 0)
		b->start_us = t0;
	g_ptr_array_add(b->written, item);
	if (!store_put(s, item, candidates, is_looked, error))
		return FALSE;
	b->n_items++;
	b->busy_us += g_get_monotonic_time() - t0;
	return TRUE;
}

/* Settles the new files of `looking`: each is deferred or written. */
static gboolean settle_looking(PixStore *s, Batch *b, GError **error)
{
	g_autoptr(GHashTable) candidates = NULL;
	compact(b->looking);    /* a failed batch_write() left its item out */
	if (b->looking->len == 0)
		return TRUE;
	gint64 t0 = g_get_monotonic_time();
	gboolean ok = find_moved(s, (PixItem *const *)b->looking->pdata, b->looking->len, &candidates, error);
	b->busy_us += g_get_monotonic_time() - t0;
	for (guint i = 0; i < b->looking->len && ok; i++) {
		PixItem *item = g_ptr_array_index(b->looking, i);
		if (pick_moved(s, item, candidates) != NULL) {
			g_ptr_array_add(b->adds, item);
			b->looking->pdata[i] = NULL;
			continue;
		}
		b->looking->pdata[i] = NULL;
		ok = batch_write(s, b, item, NULL, TRUE, error);
	}
	if (!ok)
		return FALSE;   /* what is left, settled with the next commit */
	g_ptr_array_set_size(b->looking, 0);
	return TRUE;
}

/* Accounts for the batch just committed (begun at t0, when the catalog
 * had n_new new rows) and empties it. */
static void batch_committed(PixStore *s, Batch *b, gint64 n_new, gint64 t0)
{
	gint64 now = g_get_monotonic_time();
	account_batch(s, b->n_items, n_new, b->busy_us + (now - t0), now - b->last_commit_us);
	b->last_commit_us = now;
	b->busy_us = 0;
	b->n_items = 0;
	g_ptr_array_set_size(b->written, 0);
}

/*
 * After a write or the commit of the open batch failed with `error`:
 * where the server rolled the batch back for a deadlock or a
 * serialization failure (PIX_STORE_ERROR_RETRY), or the connection is
 * gone (PIX_STORE_ERROR_LOST; connected again first), writes the batch
 * again from its items and commits it, at most BATCH_RETRIES times,
 * saying so.  The catalog is then as it was when the batch began, and
 * plan's decisions hold as they did: a new file's moved row is looked for
 * again.  TRUE: committed, error cleared.
 */
static gboolean batch_retry(PixStore *s, Batch *b, GError **error)
{
	for (guint n = 1; n <= BATCH_RETRIES; n++) {
		gboolean is_lost = g_error_matches(*error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOST);
		if ((!is_lost && !g_error_matches(*error, PIX_STORE_ERROR, PIX_STORE_ERROR_RETRY)) ||
		    pix_stop_requested())
			return FALSE;
		pix_notice("%s: writing its batch of %u items again (%u of %u)", (*error)->message, b->written->len, n,
		         BATCH_RETRIES);
		g_clear_error(error);
		rollback_batch(s);
		if (is_lost && !pix_store_reconnect(s, RECONNECT_ATTEMPTS, error))
			return FALSE;
		/* the other side of a deadlock goes first */
		g_usleep((gulong)g_random_int_range(10, 50) * 1000 * n);
		gint64 t0 = g_get_monotonic_time();
		gint64 n_new = s->counts[PIX_N_NEW];
		b->n_items = 0;
		b->busy_us = 0;
		gboolean ok = TRUE;
		for (guint i = 0; i < b->written->len && ok; i++, b->n_items++)
			ok = store_put(s, g_ptr_array_index(b->written, i), NULL, FALSE, error);
		if (ok && pix_store_commit(s, error)) {
			batch_committed(s, b, n_new, t0);
			return TRUE;
		}
	}
	return FALSE;
}

/* Commits the batch when it is full or old enough (or `is_final`). */
static gboolean batch_maybe_commit(PixStore *s, Batch *b, gboolean is_final, GError **error)
{
	if (batch_len(b) == 0 ||
	    (!is_final && batch_len(b) < b->batch_items && g_get_monotonic_time() - b->start_us < b->batch_us))
		return TRUE;
	if (!settle_looking(s, b, error))
		return FALSE;
	if (b->n_items == 0)
		return TRUE;    /* all of it deferred */
	gint64 t0 = g_get_monotonic_time();
	gint64 n_new = s->counts[PIX_N_NEW];
	if (!pix_store_commit(s, error))
		return FALSE;
	batch_committed(s, b, n_new, t0);
	return TRUE;
}

/* Takes `item` (transfer full) into the batch. */
static gboolean batch_put(PixStore *s, Batch *b, PixItem *item, GError **error)
{
	if (is_move_candidate(s, item)) {
		if (batch_len(b) == 0)
			b->start_us = g_get_monotonic_time();
		g_ptr_array_add(b->looking, item);
	} else if (item->action == PIX_ACT_MISSING || item->action == PIX_ACT_DIR_MISSING) {
		g_ptr_array_add(b->missing, item);
	} else {
		/* no row can be the file of a new one here: looked for, none */
		if (!batch_write(s, b, item, NULL, TRUE, error))
			return FALSE;
	}
	return batch_maybe_commit(s, b, FALSE, error);
}

/* Writes the deferred items (see MAX_DEFERRED), the new files' moved rows
 * looked for together. */
static gboolean put_deferred(PixStore *s, Batch *b, GError **error)
{
	g_autoptr(GHashTable) candidates = NULL;
	if (!settle_looking(s, b, error) ||
	    !find_moved(s, (PixItem *const *)b->adds->pdata, b->adds->len, &candidates, error))
		return FALSE;
	GPtrArray *lists[] = { b->adds, b->missing };
	for (guint l = 0; l < G_N_ELEMENTS(lists); l++) {
		for (guint i = 0; i < lists[l]->len; i++) {
			PixItem *item = g_ptr_array_index(lists[l], i);
			if (item == NULL)
				continue;       /* written before a batch_retry() */
			lists[l]->pdata[i] = NULL;
			if (!batch_write(s, b, item, candidates, TRUE, error) || !batch_maybe_commit(s, b, FALSE, error))
				return FALSE;
		}
		g_ptr_array_set_size(lists[l], 0);
	}
	return TRUE;
}

/* Items taken from the store queue at once. */
#define CONSUME_BATCH 256

gboolean pix_store_consume(PixStore *s, PixQueue *in, guint batch_items, gint64 batch_us, GError **error)
{
	gboolean is_failed = FALSE;
	Batch b = { .batch_items = batch_items, .batch_us = batch_us, .last_commit_us = g_get_monotonic_time(),
	            .looking = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	            .adds = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	            .missing = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	            .written = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free) };

	for (;;) {
		gboolean is_timeout = FALSE;
		gint64 wait_us = -1;
		gpointer items[CONSUME_BATCH];
		if (batch_len(&b) > 0)
			wait_us = MAX(0, b.start_us + batch_us - g_get_monotonic_time());
		/* what the hashers handed over since the last look, at once */
		guint n = pix_queue_pop_many(in, items, CONSUME_BATCH, wait_us, &is_timeout);

		if (n == 0 && !is_timeout)
			break;
		for (guint i = 0; i < MAX(n, 1); i++) {
			PixItem *item = n > 0 ? items[i] : NULL;
			if (is_failed) {
				pix_item_free(item);
				continue;
			}
			gboolean is_ok = item == NULL ? batch_maybe_commit(s, &b, FALSE, error)
			                              : batch_put(s, &b, item, error);
			if (is_ok && b.adds->len + b.missing->len >= MAX_DEFERRED)
				is_ok = put_deferred(s, &b, error);
			if (!is_ok)
				is_ok = batch_retry(s, &b, error);
			if (!is_ok) {
				/* a look-up that failed leaves the batch open: what it
				 * holds is not committed with the run's end */
				rollback_batch(s);
				is_failed = TRUE;
				pix_request_stop();
			}
		}
	}
	while (!is_failed && !(put_deferred(s, &b, error) && batch_maybe_commit(s, &b, TRUE, error)))
		is_failed = !batch_retry(s, &b, error);
	if (is_failed)
		rollback_batch(s);
	g_ptr_array_free(b.written, TRUE);
	g_ptr_array_free(b.looking, TRUE);
	g_ptr_array_free(b.adds, TRUE);
	g_ptr_array_free(b.missing, TRUE);
	return !is_failed;
}

gint64 pix_store_run_id(PixStore *s)
{
	return s->scan_id;
}

gboolean pix_store_end_pass(PixStore *s, GError **error)
{
	g_assert(pix_store_check(s) && !s->in_batch);
	if (!pix_store_ensure_md5_index(s, error))
		return FALSE;
	s->rows_before_run = s->catalog_rows;
	return TRUE;
}

gboolean pix_store_begin_pass(PixStore *s, GError **error)
{
	g_assert(pix_store_check(s) && !s->in_batch);
	if (!begin_batch(s, error))
		return FALSE;
	if (!refresh_volumes(s, error)) {
		rollback_batch(s);
		return FALSE;
	}
	return pix_store_commit(s, error);
}

gboolean pix_store_forget(PixStore *s, gint64 volume_id, gboolean is_dry_run, gint64 *n_files, GError **error)
{
	static const char *const what = "cannot forget files";
	g_assert(pix_store_check(s) && s->mode == PIX_STORE_WRITE && !s->in_batch);
	*n_files = 0;
	if (!begin_batch(s, error))
		return FALSE;
	/* the rows to forget, by id; then each step refers to them */
	if (!pix_store_exec(s, "CREATE TEMP TABLE IF NOT EXISTS forget_ids (id INTEGER PRIMARY KEY); DELETE FROM forget_ids",
	              what, error) ||
	    !run_ints(s, volume_id == 0
	                 ? "INSERT INTO forget_ids SELECT id FROM files WHERE state = 'missing' AND ?1 = 0"
	                 : "INSERT INTO forget_ids SELECT f.id FROM files f JOIN dirs d ON d.id = f.dir_id"
	                   " WHERE d.volume_id = ?1",
	              what, error, 1, volume_id))
		goto fail;
	*n_files = pix_db_changes(s->db);
	/* each one's last word in the change log, then the rows */
	/* (PostgreSQL's file_info.path is text: the bytes are path_bytes) */
#define FORGOTTEN(path) "INSERT INTO changes (file_id, at, kind, old_path, old_md5, old_size)" \
	" SELECT i.id, ?1, 'forgotten', i." path ", f.md5, f.size FROM forget_ids x" \
	" JOIN file_info i ON i.id = x.id JOIN files f ON f.id = x.id ORDER BY x.id"
	gboolean is_logged = run_ints(s, pix_db_is_pg(s->db) ? FORGOTTEN("path_bytes") : FORGOTTEN("path"), what, error,
	                              1, pix_store_now());
#undef FORGOTTEN
	if (!is_logged ||
	    !pix_store_exec(s, "UPDATE files SET sidecar_id = NULL WHERE sidecar_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM meta WHERE file_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM files WHERE id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM forget_ids", what, error))
		goto fail;
	if (volume_id != 0) {
		if (!run_ints(s, "UPDATE dirs SET parent_id = NULL WHERE volume_id IS DISTINCT FROM ?1 AND parent_id IN"
		              " (SELECT id FROM dirs WHERE volume_id = ?1)", what, error, 1, volume_id) ||
		    !run_ints(s, "DELETE FROM dirs WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !run_ints(s, "DELETE FROM roots WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !run_ints(s, "UPDATE changes SET volume_id = NULL WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !run_ints(s, "DELETE FROM volumes WHERE id = ?1", what, error, 1, volume_id))
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
	if (is_dry_run) {
		rollback_batch(s);
		return TRUE;
	}
	return pix_store_commit(s, error);
fail:
	rollback_batch(s);
	return FALSE;
}


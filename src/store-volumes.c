/*
 * store-volumes.c: volumes (disks, cards, shares) in the catalog.  For the
 * writer: where each is now (the mount table against the volumes' rows,
 * paths rewritten when one is mounted elsewhere, devices when it is
 * plugged in again), a directory's volume and its path relative to it,
 * the volumes' locks of a run.  For `photoidx volumes`, `status` and
 * `scan` without a PATH: what the catalog knows of volumes, roots and
 * runs (see store.h).
 *
 * The writer's part runs on the writer PixStore's thread, inside its
 * batch; the listings read through any PixStore, one call at a time.
 *
 * Invariants:
 *  1. PixStore.volume_ids holds only ids committed or written by the open
 *     batch (pix_store_batch_gone() empties it with the batch).
 *  2. Each listing is one statement: one snapshot.
 *  3. A volume's files and bytes count its files not missing (offline
 *     ones included: they are on the disk that is not plugged in).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"
#include "path.h"
#include "volume.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/* --- where the volumes are (the writer) --- */

/* The volume holding directory `path` on device `dev`, and the path
 * relative to its root (transfer full).  A device the mount table lacks
 * makes it read again, once per device; one still unknown (or 0) is a
 * volume of its own, mounted at "/". */
const PixVolume *pix_store_volume_of(PixStore *s, const char *path, guint64 dev, char **rel_path)
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
gboolean pix_store_volume_id(PixStore *s, const PixVolume *v, gboolean is_create, gint64 *id, GError **error)
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
		if (irc == PIX_DB_DONE && s->be->is_shared)
			return pix_store_volume_id(s, v, FALSE, id, error);
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
	const PixVolume *v = pix_store_volume_of(s, d->path, dir_dev(d), rel_path);
	if (!pix_store_volume_id(s, v, is_create, vol_id, error)) {
		g_clear_pointer(rel_path, g_free);
		return FALSE;
	}
	return TRUE;
}

gboolean pix_store_put_volume_change(PixStore *s, gint64 vol_id, const char *kind, const char *old_path,
                                  const char *new_path, GError **error)
{
	PixChangeRow c = { .volume_id = vol_id, .kind = kind, .old_path = (char *)old_path,
	                   .new_path = (char *)new_path };
	return pix_store_put_change_row(s, &c, error);
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
 * The volume keeps their old device number, so that pix_store_refresh_volumes()
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
		const PixVolume *v = pix_store_volume_of(s, sample, st.st_dev, &rel_unused);
		gint64 vol_id;
		if (!pix_store_volume_id(s, v, TRUE, &vol_id, error))
			return FALSE;
		/* the device the rows have: pix_store_refresh_volumes() moves them */
		if (!pix_store_run_ints(s, "UPDATE volumes SET dev = ?2 WHERE id = ?1 AND dev <> ?2", "cannot place directories", error,
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
		const PixVolume *v = pix_store_volume_of(s, path, st.st_dev, &rel);
		gint64 vol_id;
		if (!pix_store_volume_id(s, v, TRUE, &vol_id, error))
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
gboolean pix_store_refresh_volumes(PixStore *s, GError **error)
{
	g_autoptr(GError) mount_error = NULL;
	const PixMounts *m = pix_mounts_refresh(&mount_error);
	if (m == NULL) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FAILED, "cannot read the mount table: %s",
		            mount_error->message);
		return FALSE;
	}
	g_hash_table_remove_all(s->unknown_devs);
	/* rows from before volumes (SQLite's alone) placed on theirs */
	if (s->be->has_legacy_rows && !place_legacy(s, error))
		return FALSE;
	/* where hosts share the catalog, a volume not in this host's mount
	 * table is offline only if this host saw it last (another host may
	 * have it mounted); one this host sees is its now */
	g_autoptr(PixStmt) st = NULL, set = NULL;
	int rc = pix_store_prepare(s, s->be->sql_volumes_seen, &st);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, s->be->sql_volume_found, &set);
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
			if (was_online && (!pix_store_run_ints(s, "UPDATE volumes SET is_online = 0 WHERE id = ?1",
			                             "cannot record a volume", error, 1, id) ||
			                   !pix_store_put_volume_change(s, id, "offline", old_mount, NULL, error)))
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
			if (!pix_store_run_ints(s, "UPDATE files SET dev = ?2 WHERE dev = ?3 AND dir_id IN"
			              " (SELECT id FROM dirs WHERE volume_id = ?1)", "cannot move a volume", error,
			              3, id, (gint64)v->dev, (gint64)old_dev) ||
			    /* CAST: PostgreSQL takes ?3 for an integer from "<> 0" */
			    !pix_store_run_ints(s, "UPDATE dirs SET dev = ?2, fsid = CASE WHEN CAST(?3 AS BIGINT) <> 0"
			              " THEN CAST(?3 AS BIGINT) ELSE fsid END WHERE volume_id = ?1 AND dev = ?4", "cannot move a volume", error,
			              4, id, (gint64)v->dev, fsid, (gint64)old_dev))
				return FALSE;
		}
		const char *kind_name = is_moved || is_new_dev ? "remounted" : !was_online ? "online" : NULL;
		if (kind_name != NULL &&
		    !pix_store_put_volume_change(s, id, kind_name, strcmp(kind_name, "online") == 0 ? NULL : old_mount,
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
gboolean pix_store_note_offline_roots(PixStore *s, char **roots, GHashTable *shadowed, GError **error)
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
gboolean pix_store_lock_known_volumes(PixStore *s, char **roots, GError **error)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	for (char **r = roots; *r != NULL; r++) {
		struct stat rst;
		g_autofree char *rel = NULL;
		gint64 id;
		if (pix_path_lstat(*r, &rst) != 0)
			continue;
		if (!pix_store_volume_id(s, pix_store_volume_of(s, *r, rst.st_dev, &rel), FALSE, &id, error))
			return FALSE;
		if (id != 0)
			g_array_append_val(ids, id);
	}
	return s->be->lock_volumes(s, ids, error);
}

/* PostgreSQL: a verify of every file holds the lock of every volume
 * mounted on this host (what it may read), as on SQLite it holds the
 * catalog's. */
gboolean pix_store_lock_online_volumes(PixStore *s, GError **error)
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
	return s->be->lock_volumes(s, ids, error);
}

/* --- what the catalog knows (the listings) --- */


static PixStmt *prepare(PixStore *s, const char *sql, GError **error)
{
	PixStmt *st = NULL;
	int rc = pix_store_prepare(s, sql, &st);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot prepare a statement");
		return NULL;
	}
	return st;
}

static const char *text(PixStmt *st, int i)
{
	return (const char *)pix_db_column_text(st, i);
}

/* Steps to the end; FALSE with `error` set when it failed. */
static gboolean finish(PixStore *s, int rc, const char *what, GError **error)
{
	if (rc != PIX_DB_DONE && rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	return TRUE;
}

/* the volumes, with their files counted */
#define VOLUMES_COLUMNS \
	"SELECT v.id, v.kind, v.ident, v.uuid, v.label, v.fstype, v.source, v.mount_point, v.is_online," \
	" coalesce(c.n, 0), coalesce(c.bytes, 0), coalesce(c.n_missing, 0)," \
	" v.first_seen_at, v.last_seen_at, coalesce(v.last_scan_at, 0),"
#define VOLUMES_FROM \
	" FROM volumes v LEFT JOIN (SELECT d.volume_id AS vid, sum(CASE WHEN f.state <> 'missing' THEN 1 ELSE 0 END) AS n," \
	"  sum(CASE WHEN f.state <> 'missing' THEN f.size ELSE 0 END) AS bytes," \
	"  sum(CASE WHEN f.state = 'missing' THEN 1 ELSE 0 END) AS n_missing" \
	"  FROM files f JOIN dirs d ON d.id = f.dir_id GROUP BY d.volume_id) c ON c.vid = v.id" \
	" ORDER BY v.id"

gboolean pix_store_each_volume(PixStore *s, PixStoreVolumeFn fn, gpointer data, GError **error)
{
	/* the last column, the other host that saw it mounted: PostgreSQL's only */
	g_autofree char *sql = g_strconcat(VOLUMES_COLUMNS " ", s->be->sql_volume_other_host, VOLUMES_FROM, NULL);
	g_autoptr(PixStmt) st = prepare(s, sql, error);
	int rc;
	if (st == NULL)
		return FALSE;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		const void *mp = pix_db_column_blob(st, 7);
		g_autofree char *mount = g_strndup(mp != NULL ? mp : "", (gsize)pix_db_column_bytes(st, 7));
		PixVolumeRow v = {
			.id = pix_db_column_int64(st, 0),
			.kind = text(st, 1),
			.ident = text(st, 2),
			.uuid = text(st, 3),
			.label = text(st, 4),
			.fstype = text(st, 5),
			.source = text(st, 6),
			.mount_point = mount,
			.is_online = pix_db_column_int(st, 8) != 0,
			.host = text(st, 15),
			.n_files = pix_db_column_int64(st, 9),
			.bytes = pix_db_column_int64(st, 10),
			.n_missing = pix_db_column_int64(st, 11),
			.first_seen_at = pix_db_column_int64(st, 12),
			.last_seen_at = pix_db_column_int64(st, 13),
			.last_scan_at = pix_db_column_int64(st, 14),
		};
		if (!fn(data, &v))
			return TRUE;
	}
	return finish(s, rc, "cannot read the volumes", error);
}

gboolean pix_store_each_root(PixStore *s, PixStoreRootFn fn, gpointer data, GError **error)
{
	g_autoptr(PixStmt) st = prepare(s,
		"SELECT r.path, r.rel_path, v.kind, v.ident, v.label, coalesce(v.is_online, 1),"
		" r.first_scan_at, coalesce(r.last_scan_at, 0)"
		" FROM roots r LEFT JOIN volumes v ON v.id = r.volume_id ORDER BY r.path", error);
	int rc;
	if (st == NULL)
		return FALSE;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		const void *p = pix_db_column_blob(st, 0), *rp = pix_db_column_blob(st, 1);
		g_autofree char *path = g_strndup(p != NULL ? p : "", (gsize)pix_db_column_bytes(st, 0));
		g_autofree char *rel = pix_db_column_type(st, 1) != PIX_DB_NULL
		                       ? g_strndup(rp != NULL ? rp : "", (gsize)pix_db_column_bytes(st, 1)) : NULL;
		PixRootRow r = {
			.path = path,
			.rel_path = rel,
			.volume_kind = text(st, 2),
			.volume_ident = text(st, 3),
			.volume_label = text(st, 4),
			.is_online = pix_db_column_int(st, 5) != 0,
			.first_scan_at = pix_db_column_int64(st, 6),
			.last_scan_at = pix_db_column_int64(st, 7),
		};
		if (!fn(data, &r))
			return TRUE;
	}
	return finish(s, rc, "cannot read the roots", error);
}

gboolean pix_store_each_run(PixStore *s, gint64 limit, PixStoreRunFn fn, gpointer data, GError **error)
{
	g_autoptr(PixStmt) st = prepare(s,
		"SELECT id, command, roots, state, started_at, coalesce(finished_at, 0), coalesce(n_new, 0),"
		" coalesce(n_changed, 0), coalesce(n_moved, 0), coalesce(n_missing, 0), coalesce(n_unchanged, 0),"
		" coalesce(n_errors, 0), coalesce(bytes_read, 0), coalesce(exit_status, -1)"
		" FROM scans ORDER BY id DESC LIMIT ?1", error);
	int rc;
	if (st == NULL)
		return FALSE;
	pix_db_bind_int64(st, 1, limit);
	while ((rc = pix_db_step(st)) == PIX_DB_ROW) {
		PixRunRow r = {
			.id = pix_db_column_int64(st, 0),
			.command = text(st, 1),
			.roots = text(st, 2),
			.state = text(st, 3),
			.started_at = pix_db_column_int64(st, 4),
			.finished_at = pix_db_column_int64(st, 5),
			.n_new = pix_db_column_int64(st, 6),
			.n_changed = pix_db_column_int64(st, 7),
			.n_moved = pix_db_column_int64(st, 8),
			.n_missing = pix_db_column_int64(st, 9),
			.n_unchanged = pix_db_column_int64(st, 10),
			.n_errors = pix_db_column_int64(st, 11),
			.bytes_read = pix_db_column_int64(st, 12),
			.exit_status = pix_db_column_int(st, 13),
		};
		if (!fn(data, &r))
			return TRUE;
	}
	return finish(s, rc, "cannot read the runs", error);
}

gboolean pix_store_pending(PixStore *s, gint64 *n_recheck, gint64 *n_unread, GError **error)
{
	g_autoptr(PixStmt) st = prepare(s,
		"SELECT coalesce(sum(CASE WHEN f.recheck <> 0 THEN 1 ELSE 0 END), 0),"
		" coalesce(sum(CASE WHEN f.recheck = 0 AND f.md5 IS NULL AND (f.mode & 61440) = 32768 THEN 1 ELSE 0 END), 0)"
		" FROM files f JOIN dirs d ON d.id = f.dir_id LEFT JOIN volumes v ON v.id = d.volume_id"
		" WHERE f.state <> 'missing' AND coalesce(v.is_online, 1) <> 0", error);
	if (st == NULL)
		return FALSE;
	int rc = pix_db_step(st);
	*n_recheck = rc == PIX_DB_ROW ? pix_db_column_int64(st, 0) : 0;
	*n_unread = rc == PIX_DB_ROW ? pix_db_column_int64(st, 1) : 0;
	return finish(s, rc, "cannot read the files", error);
}

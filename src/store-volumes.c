/*
 * store-volumes.c: what the catalog knows of volumes, roots and runs, for
 * `photoidx volumes`, `status` and `scan` without a PATH (see store.h).
 *
 * Reads the catalog through a PixStore (reader or writer); writes nothing.
 * The calling thread, one at a time per PixStore.
 *
 * Invariants:
 *  1. Each call is one statement: one snapshot.
 *  2. A volume's files and bytes count its files not missing (offline
 *     ones included: they are on the disk that is not plugged in).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"

#include <string.h>


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
	g_autoptr(PixStmt) st = prepare(s, pix_db_is_pg(pix_store_db(s))
		? VOLUMES_COLUMNS " CASE WHEN v.host IS DISTINCT FROM " PG_THIS_HOST " THEN v.host END" VOLUMES_FROM
		: VOLUMES_COLUMNS " NULL" VOLUMES_FROM, error);
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

/*
 * store-runs.c: runs (schema: scans) and the transactions they write in:
 * a run begun (its row, the runs whose writer is gone marked 'killed',
 * its roots and their volumes recorded, its locks taken) and ended (in
 * the reserved room if the disk is full), and each batch's BEGIN and
 * COMMIT, with the sidecars linked and the backend's work before it.
 *
 * Writes through the writer PixStore, on the store thread (and the main
 * thread before and after the pipeline).
 *
 * Invariants:
 *  1. A run begun by pix_store_begin_scan() and ended by
 *     pix_store_end_scan() is never left 'running', full disk or not: its
 *     end is recorded first, in the reserved room if need be.
 *  2. Counts of a batch are published to log.h only when it commits.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"
#include "log.h"
#include "path.h"
#include "volume.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gboolean pix_store_begin_batch(PixStore *s, GError **error)
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

void pix_store_rollback_batch(PixStore *s)
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

gboolean pix_store_commit(PixStore *s, GError **error)
{
	g_assert(pix_store_check(s));
	if (!s->in_batch)
		return TRUE;
	if (!pix_store_relink(s, error)) {
		pix_store_rollback_batch(s);
		return FALSE;
	}
	if (s->be->before_commit != NULL && !s->be->before_commit(s, error)) {
		pix_store_rollback_batch(s);
		return FALSE;
	}
	PixStmt *st = pix_store_stmt(s, ST_COMMIT, error);
	if (st == NULL || !pix_store_step_done(s, st, "cannot commit", error)) {
		pix_store_rollback_batch(s);
		return FALSE;
	}
	s->in_batch = FALSE;
	s->batch_dir_id = 0;
	g_assert(pix_store_check(s));
	for (int c = 0; c < PIX_N_COUNTERS; c++) {
		if (s->counts[c] != 0)
			pix_count_add((PixCounter)c, s->counts[c]);
		s->counts[c] = 0;
	}
	return TRUE;
}

/* The backend's work at the end of a first import (its indexes), and at
 * the end of every pass and run (a first import killed before the end
 * left it to the next writer). */
static gboolean end_first_import(PixStore *s, GError **error)
{
	return s->be->end_first_import == NULL || s->be->end_first_import(s, error);
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
	/* the volumes' locks (where the backend has them) of the roots'
	 * volumes the catalog knows, before anything is written (those of
	 * volumes new to it: once they are recorded, below) */
	gboolean is_verify_all = strcmp(command, "verify") == 0 && roots[0] != NULL &&
	                         strcmp(roots[0], PIX_VERIFY_ALL) == 0;
	if (s->be->lock_volumes != NULL &&
	    !(is_verify_all ? pix_store_lock_online_volumes(s, error) : pix_store_lock_known_volumes(s, roots, error)))
		return FALSE;
	if (!pix_store_begin_batch(s, error))
		return FALSE;

	/* every auto-cleaned statement is declared before the first goto */
	g_autoptr(PixStmt) killed = NULL, scan = NULL, root = NULL, rows = NULL;
	g_autoptr(GHashTable) shadowed = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GArray) vol_ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	s->is_verify = strcmp(command, "verify") == 0;
	const PixStoreBackend *be = s->be;
	int rc = pix_store_prepare(s, be->sql_kill_lost_runs, &killed);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, be->sql_insert_run, &scan);
	if (rc == PIX_DB_OK)
		rc = pix_store_prepare(s, be->sql_root_upsert, &root);
	if (rc != PIX_DB_OK) {
		pix_store_db_error(error, s, rc, "cannot record the scan");
		pix_store_rollback_batch(s);
		return FALSE;
	}
	if (!pix_store_step_done(s, killed, "cannot record the scan", error))
		goto fail;
	pix_db_bind_text(scan, 1, command, -1, PIX_DB_STATIC);
	pix_db_bind_text(scan, 2, display->str, -1, PIX_DB_STATIC);
	pix_db_bind_int64(scan, 3, now);
	if (be->is_shared)
		pix_db_bind_int64(scan, 4, getpid());
	if (!pix_store_query_int(s, scan, &s->scan_id, "cannot record the scan", error) ||
	    (be->lock_run != NULL && !be->lock_run(s, error)))
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
	if (!s->is_verify && s->rows_before_run == 0 && be->begin_first_import != NULL &&
	    !be->begin_first_import(s, error))
		goto fail;
	if (s->rates != NULL)
		g_array_set_size(s->rates, 0);
	g_strfreev(s->roots);
	s->roots = NULL;
	/* where each volume is now, before anything is looked up by path */
	if (!pix_store_refresh_volumes(s, error))
		goto fail;
	if (s->is_verify)
		return pix_store_commit(s, error);      /* it reads, it walks no root */
	s->roots = g_strdupv(roots);
	if (!pix_store_note_offline_roots(s, roots, shadowed, error))
		goto fail;
	for (char **r = roots; *r != NULL; r++) {
		struct stat rst;
		if (g_hash_table_contains(shadowed, *r) || pix_path_lstat(*r, &rst) != 0)
			continue;       /* the walk says why */
		g_autofree char *rel = NULL;
		gint64 vol_id;
		if (!pix_store_volume_id(s, pix_store_volume_of(s, *r, rst.st_dev, &rel), TRUE, &vol_id, error))
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
	/* the new volumes' locks, after the commit (a writer that
	 * waits for one holds no row another needs); a run refused one ends
	 * 'failed' (exit status 2) */
	if (!pix_store_commit(s, error))
		return FALSE;
	if (be->lock_volumes != NULL && !be->lock_volumes(s, vol_ids, error)) {
		pix_store_end_scan(s, "failed", 2, NULL);
		return FALSE;
	}
	return TRUE;
fail:
	pix_store_rollback_batch(s);
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
	if (!pix_store_begin_batch(s, error))
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
		pix_store_rollback_batch(s);
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
		pix_store_rollback_batch(s);
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
				pix_store_rollback_batch(s);
				return FALSE;
			}
		}
		if (rc != PIX_DB_DONE) {
			pix_store_db_error(error, s, rc, "cannot record the end of the scan");
			pix_store_rollback_batch(s);
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
	if (!g_error_matches(local, PIX_STORE_ERROR, PIX_STORE_ERROR_FULL) || s->be->release_room == NULL ||
	    !s->be->release_room(s)) {
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
	if (end_first_import(s, &local))
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

gint64 pix_store_run_id(PixStore *s)
{
	return s->scan_id;
}

gboolean pix_store_end_pass(PixStore *s, GError **error)
{
	g_assert(pix_store_check(s) && !s->in_batch);
	if (!end_first_import(s, error))
		return FALSE;
	s->rows_before_run = s->catalog_rows;
	return TRUE;
}

gboolean pix_store_begin_pass(PixStore *s, GError **error)
{
	g_assert(pix_store_check(s) && !s->in_batch);
	if (!pix_store_begin_batch(s, error))
		return FALSE;
	if (!pix_store_refresh_volumes(s, error)) {
		pix_store_rollback_batch(s);
		return FALSE;
	}
	return pix_store_commit(s, error);
}

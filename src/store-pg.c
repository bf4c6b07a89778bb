/*
 * store-pg.c: what the store does on a PostgreSQL catalog that it does
 * not do on SQLite (see store.h, db.h and schema/pg/): connecting, the
 * identity check and the migrations, the advisory locks of several
 * writers, and the change log's sequence numbers given at commit.
 *
 * Several hosts write one catalog.  Locks (advisory, two int4 keys):
 *   (PIX_PG_LOCK_MIGRATE, 0)  transaction: one writer migrates at a time;
 *   (PIX_PG_LOCK_SEQ, 0)      transaction: taken at commit, to number the
 *                             change log entries of the batch;
 *   (PIX_PG_LOCK_VOLUME, id)  session: one scanner or watcher per volume;
 *   (PIX_PG_LOCK_RUN, id)     session: held by run scans.id while it
 *                             runs: a 'running' run whose lock no one
 *                             holds was killed (its host died, or lost
 *                             the connection).
 * Session locks go with the connection: a host that dies, or is cut off
 * until the server notices, frees them.
 *
 * Invariants:
 *  1. changes.seq is given only in before_commit(), under
 *     the SEQ lock held to the commit: the batch's entries (kept in
 *     PixStore.pg_changes until then) are written numbered from the
 *     highest number committed, and entries a statement wrote for many
 *     rows (forget) are numbered after them; seq values become visible in
 *     ascending order, with no gap (a batch rolled back gave none that
 *     anyone saw).
 *  2. A scanner writes the rows of a volume only while it holds that
 *     volume's lock (taken in pix_store_begin_scan(), before the walk).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store-int.h"
#include "path.h"

#include <string.h>

extern const char *const pix_schema_pg_sql[];
extern const int pix_schema_pg_count;

/* One value of one row; FALSE with `error` set when it failed. */
static gboolean query_one(PixStore *s, const char *sql, const char *what, gboolean *has_row, gint64 *out,
                          GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_store_prepare(s, sql, &st);
	if (rc == PIX_DB_OK)
		rc = pix_db_step(st);
	if (rc != PIX_DB_ROW && rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, what);
		return FALSE;
	}
	*has_row = rc == PIX_DB_ROW;
	*out = *has_row ? pix_db_column_int64(st, 0) : 0;
	return TRUE;
}

/* The schema version of the catalog, 0 for an empty database; refuses
 * one that is not a photoidx catalog, or is newer. */
static gboolean check_identity(PixStore *s, gint64 *version, GError **error)
{
	const char *what = "cannot read its schema";
	gboolean has_row;
	gint64 is_ours, n_tables;
	/* one statement, one snapshot: another writer's first migration may
	 * commit between two */
	if (!query_one(s, "SELECT CASE WHEN to_regclass('photoidx_catalog') IS NOT NULL THEN -1 ELSE"
	               " (SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()) END",
	               what, &has_row, &n_tables, error))
		return FALSE;
	is_ours = n_tables < 0;
	*version = 0;
	if (!is_ours) {
		if (n_tables == 0)
			return TRUE;
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FOREIGN,
		            "'%s' is not a photoidx catalog (its database holds other tables)", s->display);
		return FALSE;
	}
	if (!query_one(s, "SELECT schema_version FROM photoidx_catalog WHERE application = 'photoidx'", what,
	               &has_row, version, error))
		return FALSE;
	if (!has_row) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FOREIGN,
		            "'%s' is not a photoidx catalog (photoidx_catalog names another application)", s->display);
		return FALSE;
	}
	if (*version > pix_schema_pg_count) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_NEWER,
		            "catalog '%s' has schema version %" G_GINT64_FORMAT
		            ", newer than this photoidx understands (%d); upgrade photoidx",
		            s->display, *version, pix_schema_pg_count);
		return FALSE;
	}
	return TRUE;
}

/* Each migration in its own transaction, with the version bump, under the
 * MIGRATE lock: two hosts that start at once do not both apply it. */
static gboolean migrate(PixStore *s, gint64 *version, GError **error)
{
	while (*version < pix_schema_pg_count) {
		int v = (int)*version + 1;
		g_autofree char *what = g_strdup_printf("cannot apply schema migration %d", v);
		g_autofree char *lock = g_strdup_printf("BEGIN; SELECT pg_advisory_xact_lock(%d, 0)", PIX_PG_LOCK_MIGRATE);
		if (!pix_store_exec(s, lock, what, error))
			return FALSE;
		gint64 now_version;
		if (!check_identity(s, &now_version, error)) {
			pix_db_exec(s->db, "ROLLBACK");
			return FALSE;
		}
		if (now_version >= v) {         /* another writer did it meanwhile */
			*version = now_version;
			if (!pix_store_exec(s, "COMMIT", what, error))
				return FALSE;
			continue;
		}
		g_autofree char *bump = v == 1
			? g_strdup("INSERT INTO photoidx_catalog (application, schema_version) VALUES ('photoidx', 1)")
			: g_strdup_printf("UPDATE photoidx_catalog SET schema_version = %d WHERE application = 'photoidx'", v);
		if (!pix_store_exec(s, pix_schema_pg_sql[v - 1], what, error) ||
		    (v == PIX_PG_TEXT_KEYS_VERSION && !pix_store_fill_text_keys(s, error)) ||
		    !pix_store_exec(s, bump, what, error) || !pix_store_exec(s, "COMMIT", what, error)) {
			pix_db_exec(s->db, "ROLLBACK");
			return FALSE;
		}
		*version = v;
	}
	return TRUE;
}

static gboolean open_pg(PixStore *s, gint64 *version, GError **error)
{
	g_autofree char *message = NULL;
	/* this host (PHOTOIDX_HOST, else the host name), for PG_THIS_HOST */
	const char *name = g_getenv("PHOTOIDX_HOST") != NULL && *g_getenv("PHOTOIDX_HOST") ? g_getenv("PHOTOIDX_HOST")
	                                                                                  : g_get_host_name();
	const char *const settings[] = { "photoidx.host", name, NULL };
	s->db = pix_db_open_pg(s->path, settings, &message);
	if (s->db == NULL) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN, "cannot connect to catalog '%s': %s",
		            s->display, message);
		return FALSE;
	}
	/* names are stored as bytes, but every other text (and pix_text())
	 * is UTF-8 */
	const char *encoding = pix_db_server_setting(s->db, "server_encoding");
	if (encoding == NULL || g_ascii_strcasecmp(encoding, "UTF8") != 0) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s': its database's encoding is %s, not UTF8 (createdb -E UTF8 makes one)",
		            s->display, encoding != NULL ? encoding : "not reported");
		return FALSE;
	}
	if (!check_identity(s, version, error))
		return FALSE;
	if (s->mode == PIX_STORE_WRITE && !migrate(s, version, error))
		return FALSE;
	return TRUE;
}

static gboolean lock_run(PixStore *s, GError **error);
static gboolean lock_volumes(PixStore *s, const GArray *volume_ids, GError **error);

/* Forgets the connection and what it held (see reconnect()). */
static void drop_connection(PixStore *s)
{
	for (int i = 0; i < N_STATEMENTS; i++)
		pix_db_finalize(g_steal_pointer(&s->stmts[i]));
	g_clear_pointer(&s->db, pix_db_close);
	pix_store_batch_gone(s);
}

static gboolean connect_again(PixStore *s, GHashTable *locked, GError **error)
{
	gint64 version;
	if (!open_pg(s, &version, error))
		return FALSE;
	if (s->scan_id > 0 && !lock_run(s, error))
		return FALSE;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, locked);
	while (g_hash_table_iter_next(&it, &key, NULL))
		g_array_append_val(ids, *(gint64 *)key);
	return lock_volumes(s, ids, error);
}

static gboolean reconnect(PixStore *s, guint attempts, GError **error)
{
	/* the locks this session held, to take again */
	g_autoptr(GHashTable) locked = s->pg_locked != NULL ? g_steal_pointer(&s->pg_locked)
	                               : g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	gint64 wait_ms = 500;
	for (guint n = 1;; n++) {
		g_autoptr(GError) e = NULL;
		drop_connection(s);
		if (connect_again(s, locked, &e)) {
			pix_notice("catalog '%s': connected again", s->display);
			return TRUE;
		}
		if (n >= attempts || pix_stop_requested()) {
			g_propagate_error(error, g_steal_pointer(&e));
			return FALSE;
		}
		g_autofree char *of = attempts == G_MAXUINT ? g_strdup_printf("try %u", n)
		                      : g_strdup_printf("%u of %u", n, attempts);
		pix_notice("%s; trying again in %.1f s (%s)", e->message, wait_ms / 1000.0, of);
		for (gint64 t = 0; t < wait_ms && !pix_stop_requested(); t += 100)
			g_usleep(100 * 1000);
		wait_ms = MIN(wait_ms * 2, 30000);
	}
}

/* Steps `id` to its end: its first column's last value in *out; with
 * out NULL, its rows unread (not waited for, pix_db_run()). */
static gboolean run_stmt(PixStore *s, StatementId id, gint64 *out, GError **error)
{
	PixStmt *st = pix_store_stmt(s, id, error);
	if (st == NULL)
		return FALSE;
	int rc = out == NULL ? pix_db_run(st) : PIX_DB_DONE;
	while (out != NULL && (rc = pix_db_step(st)) == PIX_DB_ROW)
		*out = pix_db_column_int64(st, 0);
	if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot number the change log");
		return FALSE;
	}
	return TRUE;
}

static gboolean before_commit(PixStore *s, GError **error)
{
	/* the lock first, then the highest number: that statement's snapshot
	 * sees every batch numbered before (invariant 1) */
	gint64 seq = 0;
	if (!run_stmt(s, ST_SEQ_LOCK, NULL, error) || !run_stmt(s, ST_SEQ_MAX, &seq, error))
		return FALSE;
	/* the batch's entries, numbered in their order (sent by COPY with the
	 * COMMIT); then any a statement wrote for many rows at once */
	for (guint i = 0; s->pg_changes != NULL && i < s->pg_changes->len; i++) {
		PixStmt *st = pix_store_stmt(s, ST_CHANGE_INSERT_SEQ, error);
		if (st == NULL)
			return FALSE;
		pix_store_bind_change(s, st, &g_array_index(s->pg_changes, PixChangeRow, i));
		pix_db_bind_int64(st, 12, ++seq);
		if (!pix_store_step_done(s, st, "cannot write the change log", error))
			return FALSE;
	}
	if (s->pg_changes != NULL)
		g_array_set_size(s->pg_changes, 0);
	return run_stmt(s, ST_SEQ_ASSIGN, NULL, error) && run_stmt(s, ST_SEQ_NOTIFY, NULL, error);
}

/* The run that holds session lock (key, id), as "(pid N) on host 'H'"
 * (its scans row: the session that holds a run's lock holds the volume
 * locks of that run), or NULL when none is found. */
static char *lock_holder(PixStore *s, int key, gint64 id)
{
	g_autofree char *sql = g_strdup_printf(
		"SELECT s.pid, s.host FROM pg_locks v JOIN pg_locks r ON r.pid = v.pid AND r.locktype = 'advisory'"
		" AND r.classid = %d AND r.objsubid = 2 AND r.granted JOIN scans s ON s.id = r.objid::bigint"
		" WHERE v.locktype = 'advisory' AND v.classid = %d AND v.objid = %d AND v.objsubid = 2 AND v.granted"
		" ORDER BY s.id DESC LIMIT 1", PIX_PG_LOCK_RUN, key, (int)id);
	g_autoptr(PixStmt) st = NULL;
	if (pix_store_prepare(s, sql, &st) != PIX_DB_OK || pix_db_step(st) != PIX_DB_ROW ||
	    pix_db_column_type(st, 0) == PIX_DB_NULL)
		return NULL;
	const char *host = (const char *)pix_db_column_text(st, 1);
	return g_strdup_printf("(pid %" G_GINT64_FORMAT ") on host '%s'", pix_db_column_int64(st, 0),
	                       host != NULL ? host : "unknown");
}

/* Takes session lock (key, id) of `what` ("volume 3"): at once, else
 * (unless is_no_wait) after saying who holds it, as SQLite's lock file
 * does. */
static gboolean take_lock(PixStore *s, int key, gint64 id, const char *what, GError **error)
{
	g_autofree char *try_sql = g_strdup_printf("SELECT pg_try_advisory_lock(%d, %d)", key, (int)id);
	gboolean has_row;
	gint64 is_taken;
	if (!query_one(s, try_sql, "cannot take a lock", &has_row, &is_taken, error))
		return FALSE;
	if (is_taken)
		return TRUE;
	g_autofree char *holder = lock_holder(s, key, id);
	const char *who = holder != NULL ? holder : "(pid unknown)";
	if (s->is_no_wait) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOCKED,
		            "catalog '%s' is in use by another photoidx %s, writing %s (it holds its lock)", s->display,
		            who, what);
		return FALSE;
	}
	pix_notice("waiting for another photoidx %s to finish with %s of catalog '%s'", who, what, s->display);
	g_autofree char *wait_sql = g_strdup_printf("SELECT pg_advisory_lock(%d, %d)", key, (int)id);
	return query_one(s, wait_sql, "cannot take a lock", &has_row, &is_taken, error);
}

static gboolean lock_run(PixStore *s, GError **error)
{
	return take_lock(s, PIX_PG_LOCK_RUN, s->scan_id, "its run", error);
}

static gboolean lock_volumes(PixStore *s, const GArray *volume_ids, GError **error)
{
	if (s->pg_locked == NULL)
		s->pg_locked = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	for (guint i = 0; i < volume_ids->len; i++) {
		gint64 id = g_array_index(volume_ids, gint64, i);
		if (g_hash_table_contains(s->pg_locked, &id))
			continue;       /* held already (locked before the run began) */
		g_autofree char *what = g_strdup_printf("volume %" G_GINT64_FORMAT, id);
		if (!take_lock(s, PIX_PG_LOCK_VOLUME, id, what, error))
			return FALSE;
		g_hash_table_add(s->pg_locked, g_memdup2(&id, sizeof id));
	}
	return TRUE;
}

/* Kept to be numbered at the commit (invariant 1). */
static gboolean put_change(PixStore *s, const PixChangeRow *c, GError **error)
{
	(void)error;
	if (s->pg_changes == NULL) {
		s->pg_changes = g_array_new(FALSE, FALSE, sizeof(PixChangeRow));
		g_array_set_clear_func(s->pg_changes, pix_store_change_row_clear);
	}
	PixChangeRow kept;
	pix_store_change_row_keep(&kept, c);
	g_array_append_val(s->pg_changes, kept);
	return TRUE;
}

/* Several hosts, each with its own volumes mounted; a run's and a
 * volume's writer hold advisory locks (the top of this file); a lost
 * connection is made again. */
const PixStoreBackend pix_store_pg_backend = {
	.name = "PostgreSQL",
	.schema_count = &pix_schema_pg_count,
	.open = open_pg,
	.reconnect = reconnect,
	.lock_run = lock_run,
	.lock_volumes = lock_volumes,
	/* a run whose lock no session holds has lost its writer */
	.sql_kill_lost_runs = "UPDATE scans SET state = 'killed' WHERE state = 'running' AND NOT EXISTS"
	                      " (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.classid = "
	                      G_STRINGIFY(PIX_PG_LOCK_RUN)
	                      " AND l.objid::bigint = scans.id AND l.objsubid = 2 AND l.granted)",
	.sql_insert_run = "INSERT INTO scans (command, roots, started_at, state, host, pid)"
	                  " VALUES (?1, ?2, ?3, 'running', " PG_THIS_HOST ", ?4) RETURNING id",
	.sql_root_upsert = ROOT_UPSERT(PG_KEY("rel_path")),
	/* the MD5 index stays: PostgreSQL's first import keeps it */
	.put_change = put_change,
	.before_commit = before_commit,
	.is_shared = TRUE,
	/* a volume not in this host's mount table is offline only if this
	 * host saw it last; one this host sees is its now */
	.sql_volumes_seen = VOLUMES_SEEN("host IS NOT DISTINCT FROM " PG_THIS_HOST),
	.sql_volume_found = VOLUME_FOUND(", host = " PG_THIS_HOST),
	.sql_volume_other_host = "CASE WHEN v.host IS DISTINCT FROM " PG_THIS_HOST " THEN v.host END",
	.statements = pix_store_statements_pg,
	/* a path, a device and an inode are this host's */
	.online_volumes = "(SELECT id FROM volumes WHERE is_online <> 0 AND host IS NOT DISTINCT FROM " PG_THIS_HOST ")",
	.like = "ILIKE",
	.has_bytes_columns = TRUE,
};

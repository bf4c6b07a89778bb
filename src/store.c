/*
 * store.c: the SQLite catalog (see store.h and the schema/ migrations).
 *
 * Reads and writes the catalog file, its WAL, and a lock file beside it
 * (which also holds the room a writer reserves, see reserve_room()).  A
 * new catalog and its lock file are created 0600 whatever the umask.
 * A writer PixStore runs on the store thread (and on the main thread
 * before and after the pipeline); a reader PixStore runs on plan's thread.
 *
 * Every SQLite call's result goes through check() (or sets a GError in
 * pix_store_sqlite_error()); every value reaches SQL as a bound parameter, never in
 * the SQL text.
 *
 * Invariants:
 *  1. Only a writer holding the lock file's flock writes; it holds the lock
 *     from pix_store_open() to pix_store_free().
 *  2. in_batch is TRUE exactly when a BEGIN IMMEDIATE is open on the writer
 *     (sqlite3_get_autocommit() is 0), and a reader never opens a
 *     transaction; a failed statement inside it rolls the whole batch back,
 *     so the catalog only ever holds whole batches.  (A migration's own
 *     transaction, invariant 4, opens and closes inside pix_store_open().
 *     SQLite itself ends a transaction on some errors, SQLITE_FULL or
 *     SQLITE_IOERR, so the two may differ from a failed statement to the
 *     rollback_batch() that follows it, never beyond.)
 *  3. A file row's change-log entries are written in the same transaction
 *     as the change to the row.
 *  4. user_version is the number of migrations applied, each applied in its
 *     own transaction together with the version bump.
 *  5. A run begun by pix_store_begin_scan() and ended by
 *     pix_store_end_scan() is never left 'running', full disk or not: its
 *     end is recorded first, in the reserved room if need be.
 *
 * store_check() asserts 1 (as far as the lock fd) and 2 where a batch
 * begins or ends and where the writer's entry points start.  Not checked
 * there: 3 to 5, which hold by the order of statements within a
 * transaction (reading the change log or the scans table back would cost
 * a query per item).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store.h"
#include "store-int.h"
#include "log.h"
#include "path.h"
#include "volume.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* 'PIXC': marks a SQLite file as a photoidx catalog. */
#define PIX_APPLICATION_ID 0x50495843

/* From the generated build/schema.c: the migrations in order. */
extern const char *const pix_schema_sql[];
extern const int pix_schema_count;

G_DEFINE_QUARK(pix-store-error-quark, pix_store_error)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3_stmt, sqlite3_finalize)

typedef enum {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_DIR_UPSERT,
	ST_DIR_MISSING,
	ST_FILE_INSERT,
	ST_FILE_UPDATE_CONTENT,
	ST_FILE_UPDATE_STAT,
	ST_FILE_MOVE,
	ST_FILE_MISSING,
	ST_FILE_TAKE_OVER,
	ST_FILE_VERIFY,
	ST_FILES_BY_MD5,
	ST_META_REPLACE,
	ST_META_DELETE,
	ST_CHANGE_INSERT,
	ST_FIND_DIR,
	ST_DIR_FILES,
	ST_FILES_BY_INODE,
	ST_DIRS_UNDER,
	ST_HAS_DEV,
	ST_DIR_STAT,
	ST_DIR_FILE_COUNTS,
	ST_SUBDIRS,
	ST_FILE_AT,
	ST_SIDECAR_ANY,
	ST_SIDECAR_IMAGES,
	ST_SIDECAR_LINK,
	ST_SIDECAR_UNLEND,
	ST_SIDECAR_META_ROW,
	ST_SIDECAR_LEND,
	ST_VOLUME_FIND,
	ST_VOLUME_INSERT,
	N_STATEMENTS
} StatementId;

/* Directory rows of volumes mounted now (or not yet placed on one): an
 * offline volume's rows are neither found nor marked missing. */
#define ONLINE_DIR " AND (d.volume_id IS NULL OR d.volume_id IN (SELECT id FROM volumes WHERE is_online))"

/* A name built from files.name, of its type: SQL's || makes TEXT, and a
 * name that is not UTF-8 is stored as a BLOB, which no TEXT equals. */
#define SAME_TYPE(expr) "CASE WHEN typeof(files.name) = 'blob' THEN CAST(" expr " AS BLOB) ELSE " expr " END"

static const char *const statement_sql[N_STATEMENTS] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_FILE_AT] = "SELECT id, media FROM files WHERE dir_id = ?1 AND name = ?2",
	/* sidecars (see relink()): whether a directory has one, or a file
	 * linked to one */
	[ST_SIDECAR_ANY] =
		"SELECT EXISTS (SELECT 1 FROM files WHERE dir_id = ?1 AND media = 'sidecar' AND state <> 'missing')"
		" OR EXISTS (SELECT 1 FROM files WHERE dir_id = ?1 AND sidecar_id IS NOT NULL)",
	/* the files sidecar ?1 ("?4.xmp") is, or may be, the sidecar of: those
	 * linked to it, the one named ?4 (IMG_1.CR2.xmp), those named ?4 plus
	 * an extension (IMG_1.xmp: between ?5 = "?4." and ?6 = "?4/"); names
	 * bound as the table stores them (BLOB when not UTF-8) */
	[ST_SIDECAR_IMAGES] =
		"SELECT id FROM files WHERE sidecar_id = ?1"
		" UNION SELECT id FROM files WHERE dir_id = ?2 AND media IN ('image', 'raw', 'video')"
		" AND (name = ?4 OR (name > ?5 AND name < ?6))",
	/* IMG_1.CR2.xmp (darktable, digiKam) or IMG_1.xmp (Lightroom), .xmp
	 * or .XMP; the longer name wins; each name looked up in the index */
	[ST_SIDECAR_LINK] =
		"UPDATE files SET sidecar_id = (SELECT x.id FROM files x"
		"  WHERE x.dir_id = files.dir_id AND x.media = 'sidecar' AND x.state <> 'missing'"
		"  AND x.name IN (" SAME_TYPE("files.name || '.xmp'") ", " SAME_TYPE("files.name || '.XMP'") ","
		"   CASE WHEN instr(substr(files.name, 2), '.') > 0"
		"   THEN " SAME_TYPE("rtrim(files.name, replace(files.name, '.', '')) || 'xmp'") " END,"
		"   CASE WHEN instr(substr(files.name, 2), '.') > 0"
		"   THEN " SAME_TYPE("rtrim(files.name, replace(files.name, '.', '')) || 'XMP'") " END)"
		"  ORDER BY length(x.name) DESC, x.id LIMIT 1)"
		" WHERE id = ?1 AND media IN ('image', 'raw', 'video')",
	/* what was lent is taken back ... */
	[ST_SIDECAR_UNLEND] =
		"UPDATE meta SET date_taken = CASE WHEN lent & 1 THEN NULL ELSE date_taken END,"
		" date_tz = CASE WHEN lent & 1 THEN NULL ELSE date_tz END,"
		" date_source = CASE WHEN lent & 1 THEN NULL ELSE date_source END,"
		" gps_lat = CASE WHEN lent & 2 THEN NULL ELSE gps_lat END,"
		" gps_lon = CASE WHEN lent & 2 THEN NULL ELSE gps_lon END,"
		" gps_alt_m = CASE WHEN lent & 2 THEN NULL ELSE gps_alt_m END, lent = 0"
		" WHERE file_id = ?1 AND lent <> 0",
	[ST_SIDECAR_META_ROW] =
		"INSERT OR IGNORE INTO meta (file_id) SELECT id FROM files WHERE id = ?1 AND sidecar_id IS NOT NULL",
	/* ... and lent again from the sidecar now linked, where the file has
	 * no date (bit 1) or no position (bit 2) of its own */
	[ST_SIDECAR_LEND] =
		"UPDATE meta SET"
		" lent = (meta.date_taken IS NULL AND x.date_taken IS NOT NULL)"
		"  | ((meta.gps_lat IS NULL AND meta.gps_lon IS NULL AND x.gps_lat IS NOT NULL AND x.gps_lon IS NOT NULL) << 1),"
		" date_taken = coalesce(meta.date_taken, x.date_taken),"
		" date_tz = CASE WHEN meta.date_taken IS NULL THEN x.date_tz ELSE meta.date_tz END,"
		" date_source = CASE WHEN meta.date_taken IS NULL AND x.date_taken IS NOT NULL"
		"  THEN 'sidecar ' || coalesce(x.date_source, '') ELSE meta.date_source END,"
		" gps_lat = CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL THEN x.gps_lat ELSE meta.gps_lat END,"
		" gps_lon = CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL THEN x.gps_lon ELSE meta.gps_lon END,"
		" gps_alt_m = CASE WHEN meta.gps_lat IS NULL AND meta.gps_lon IS NULL AND x.gps_lat IS NOT NULL"
		"  THEN x.gps_alt_m ELSE meta.gps_alt_m END"
		" FROM files f JOIN meta x ON x.file_id = f.sidecar_id"
		" WHERE f.id = ?1 AND meta.file_id = ?1",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_DIR_UPSERT] =
		"INSERT INTO dirs (parent_id, path, dev, ino, mtime_ns, ctime_ns, state, error, scanned_at, fsid,"
		" listed_scan_id, volume_id, rel_path) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13, ?14)"
		/* what a listing that failed does not know, the row keeps; a
		 * directory --quick did not list keeps the run that did */
		" ON CONFLICT (volume_id, rel_path) DO UPDATE SET parent_id = coalesce(?1, parent_id), path = ?2,"
		" dev = coalesce(?3, dev), ino = coalesce(?4, ino), mtime_ns = coalesce(?5, mtime_ns),"
		" ctime_ns = coalesce(?6, ctime_ns), state = ?7, error = ?8, scanned_at = ?9,"
		" fsid = coalesce(?10, fsid), listed_scan_id = CASE WHEN ?12 THEN listed_scan_id ELSE ?11 END"
		" RETURNING id",
	[ST_DIR_MISSING] = "UPDATE dirs SET state = 'missing' WHERE id = ?1",
	[ST_FILE_INSERT] =
		"INSERT INTO files (dir_id, name, dev, ino, mode, size, mtime_ns, ctime_ns, md5,"
		" mime, media, state, error, recheck, first_seen_at, changed_at, hashed_at)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, ?16)",
	[ST_FILE_UPDATE_CONTENT] =
		"UPDATE files SET dev = ?2, ino = ?3, mode = ?4, size = ?5, mtime_ns = ?6, ctime_ns = ?7,"
		" md5 = ?8, mime = ?9, media = ?10, state = ?11, error = ?12, recheck = ?13,"
		" changed_at = ?14, hashed_at = ?15, missing_since = NULL,"
		/* a verification that found the content it still has stays true */
		" verified_at = CASE WHEN md5 IS ?8 AND verify_state = 'ok' THEN verified_at END,"
		" verify_state = CASE WHEN md5 IS ?8 AND verify_state = 'ok' THEN verify_state END,"
		" verify_md5 = NULL, verify_error = NULL"
		" WHERE id = ?1 AND dir_id = ?16 AND name = ?17",
	[ST_FILE_UPDATE_STAT] =
		"UPDATE files SET dev = ?2, ino = ?3, mode = ?4, size = ?5, mtime_ns = ?6, ctime_ns = ?7,"
		" state = CASE WHEN state <> 'missing' THEN state WHEN error IS NULL THEN 'ok' ELSE 'error' END,"
		" missing_since = NULL"
		" WHERE id = ?1",
	/* only while the row still has the inode plan found it by: a file
	 * recognised by its MD5 may have taken the row over meanwhile */
	[ST_FILE_MOVE] = "UPDATE files SET dir_id = ?2, name = ?3 WHERE id = ?1 AND dev = ?4 AND ino = ?5",
	/* only while the row is still at the path found gone */
	[ST_FILE_MISSING] =
		"UPDATE files SET state = 'missing', missing_since = ?2"
		" WHERE id = ?1 AND dir_id = ?3 AND name = ?4 AND state <> 'missing'",
	/* a file found at a new path by its MD5: the row moves there */
	[ST_FILE_TAKE_OVER] =
		"UPDATE files SET dir_id = ?2, name = ?3, dev = ?4, ino = ?5, mode = ?6, size = ?7,"
		" mtime_ns = ?8, ctime_ns = ?9, md5 = ?10, mime = ?11, media = ?12, state = ?13,"
		" error = ?14, recheck = ?15, hashed_at = ?16, missing_since = NULL,"
		" verified_at = NULL, verify_state = NULL, verify_md5 = NULL, verify_error = NULL"
		" WHERE id = ?1",
	/* only while the row describes the file that was read */
	[ST_FILE_VERIFY] =
		"UPDATE files SET verified_at = ?2, verify_state = ?3, verify_md5 = ?4, verify_error = ?5"
		" WHERE id = ?1 AND dev = ?6 AND ino = ?7 AND size = ?8 AND mtime_ns = ?9",
	[ST_FILES_BY_MD5] =
		"SELECT f.id, f.name, f.dev, f.ino, f.mode, f.size, f.mtime_ns, f.ctime_ns, f.state,"
		" f.md5, f.recheck, d.path, d.fsid FROM files f JOIN dirs d ON d.id = f.dir_id"
		" WHERE f.md5 = ?1 AND f.size = ?2 AND f.id <= ?4"
		" ORDER BY f.name = ?3 DESC, f.state = 'missing' DESC, f.id",
	[ST_META_REPLACE] =
		"INSERT OR REPLACE INTO meta (file_id, date_taken, date_tz, date_source, make, model, lens,"
		" exposure_s, fnumber, iso, focal_mm, orientation, width, height, gps_lat, gps_lon,"
		" gps_alt_m, duration_s, osdb_hash, aperture, exposure_program, metering_mode, flash, gps_time,"
		" gps_direction, gps_direction_ref, description)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		" ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
	[ST_META_DELETE] = "DELETE FROM meta WHERE file_id = ?1",
	[ST_CHANGE_INSERT] =
		"INSERT INTO changes (scan_id, file_id, at, kind, old_path, new_path, old_md5, new_md5,"
		" old_size, new_size, volume_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_FIND_DIR] = "SELECT id, path, state FROM dirs WHERE volume_id = ?1 AND rel_path = ?2",
	[ST_DIR_FILES] =
		"SELECT id, name, dev, ino, mode, size, mtime_ns, ctime_ns, state, md5, recheck"
		" FROM files WHERE dir_id = ?1",
	[ST_FILES_BY_INODE] =
		"SELECT f.id, f.name, f.dev, f.ino, f.mode, f.size, f.mtime_ns, f.ctime_ns, f.state,"
		" f.md5, f.recheck, d.path, d.fsid FROM files f JOIN dirs d ON d.id = f.dir_id"
		" WHERE f.dev = ?1 AND f.ino = ?2" ONLINE_DIR,
	[ST_DIRS_UNDER] =
		"SELECT d.id, d.path, d.state FROM dirs d WHERE d.state <> 'missing' AND"
		" (d.path = ?1 OR d.path = ?2 OR (d.path > ?3 AND d.path < ?4) OR (d.path > ?5 AND d.path < ?6))"
		ONLINE_DIR,
	[ST_HAS_DEV] = "SELECT 1 FROM files f JOIN dirs d ON d.id = f.dir_id WHERE f.dev = ?1" ONLINE_DIR " LIMIT 1",
	/* as listed by a run that finished */
	[ST_DIR_STAT] =
		"SELECT d.id, d.dev, d.ino, d.mtime_ns, d.ctime_ns, s.started_at FROM dirs d"
		" JOIN scans s ON s.id = d.listed_scan_id"
		" WHERE d.volume_id = ?1 AND d.rel_path = ?3 AND d.state = 'ok' AND (s.state = 'done' OR s.id = ?2)",
	/* files present, and of those the ones a scan must read again:
	 * flagged for a recheck, or regular files never read */
	[ST_DIR_FILE_COUNTS] =
		"SELECT count(*), coalesce(sum(recheck <> 0 OR (md5 IS NULL AND (mode & 61440) = 32768)), 0)"
		" FROM files WHERE dir_id = ?1 AND state <> 'missing'",
	[ST_SUBDIRS] = "SELECT path FROM dirs WHERE parent_id = ?1 AND state <> 'missing'",
	[ST_VOLUME_FIND] = "SELECT id FROM volumes WHERE kind = ?1 AND ident = ?2",
	[ST_VOLUME_INSERT] =
		"INSERT INTO volumes (kind, ident, uuid, label, fstype, source, mount_point, mount_root, dev,"
		" is_online, first_seen_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10)",
};

struct PixStore {
	sqlite3 *db;
	char *path;
	PixStoreMode mode;
	int lock_fd;            /* -1 for readers */
	gboolean has_room;      /* RESERVE_BYTES are allocated past the lock
	                           file's end (see reserve_room()) */
	sqlite3_stmt *stmts[N_STATEMENTS];
	gboolean in_batch;
	gint64 scan_id;         /* the run begun by pix_store_begin_scan, or 0 */
	char **roots;           /* its roots (owned); NULL for a verify */
	gboolean is_verify;     /* the run is a `photoidx verify` */
	gint64 catalog_rows;    /* file rows in the catalog (highest id), as committed */
	gint64 rows_before_run; /* the highest file row id when the run began */
	GArray *rates;          /* PixWriteRate, by catalog_rows bucket */
	gint64 now_s;           /* timestamp of the current batch */
	gint64 counts[PIX_N_COUNTERS]; /* counted in the open batch, published
	                           to log.h's counters when it commits */
	GArray *dirty;          /* Dirty: the paths of the files the open
	                           batch wrote, for relink() at commit */
	GHashTable *volume_ids; /* "kind\tident" (owned) -> volumes.id, as
	                           committed or written by the open batch */
	GHashTable *unknown_devs; /* st_dev the mount table lacked once: read
	                           again for each only once */
};

static gboolean store_check(PixStore *s)
{
	return s != NULL && s->db != NULL && (s->mode == PIX_STORE_WRITE) == (s->lock_fd >= 0) &&
	       (!s->in_batch || s->mode == PIX_STORE_WRITE) && s->in_batch == !sqlite3_get_autocommit(s->db);
}

int pix_store_schema_version(void)
{
	return pix_schema_count;
}

static gint64 now_seconds(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

static gboolean is_full_errno(int err)
{
	return err == ENOSPC || err == EDQUOT;
}

/* An errno as the catalog's messages say it: a full disk as in
 * pix_store_sqlite_error(). */
static const char *errno_text(int err)
{
	return is_full_errno(err) ? "the disk is full" : g_strerror(err);
}

void pix_store_sqlite_error(GError **error, PixStore *s, int rc, const char *what)
{
	int code;
	switch (rc & 0xff) {
	case SQLITE_FULL:
		code = PIX_STORE_ERROR_FULL;
		break;
	case SQLITE_IOERR:
		code = is_full_errno(sqlite3_system_errno(s->db)) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_FAILED;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		code = PIX_STORE_ERROR_CORRUPT;
		break;
	case SQLITE_CANTOPEN:
		code = PIX_STORE_ERROR_OPEN;
		break;
	default:
		code = PIX_STORE_ERROR_FAILED;
	}
	g_autofree char *q = pix_quote(s->path);
	const char *msg = code == PIX_STORE_ERROR_FULL ? "the disk is full" : sqlite3_errmsg(s->db);
	/* what to do about it, in one sentence */
	const char *hint = code == PIX_STORE_ERROR_CORRUPT
	                   ? "; the catalog is damaged: restore it from a backup, or move it aside and scan again"
	                     " ('sqlite3 CATALOG .recover' saves what it can)" : "";
	g_set_error(error, PIX_STORE_ERROR, code, "catalog '%s': %s: %s%s", q, what, msg, hint);
}

/* Runs SQL text without parameters (schema, pragmas). */
static gboolean exec_sql(PixStore *s, const char *sql, const char *what, GError **error)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, what);
		return FALSE;
	}
	return TRUE;
}

static gboolean pragma_int(PixStore *s, const char *pragma, gint64 *out, GError **error)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autofree char *sql = g_strdup_printf("PRAGMA %s", pragma);
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read its header");
		return FALSE;
	}
	*out = sqlite3_column_int64(st, 0);
	return TRUE;
}

/* The prepared statement `id`, reset and with cleared bindings. */
static sqlite3_stmt *stmt(PixStore *s, StatementId id, GError **error)
{
	if (s->stmts[id] == NULL) {
		int rc = sqlite3_prepare_v3(s->db, statement_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
		                            &s->stmts[id], NULL);
		if (rc != SQLITE_OK) {
			pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
			return NULL;
		}
	}
	sqlite3_reset(s->stmts[id]);
	sqlite3_clear_bindings(s->stmts[id]);
	return s->stmts[id];
}

/* Binds path bytes: TEXT when valid UTF-8, BLOB otherwise (schema rule). */
static void bind_path(sqlite3_stmt *st, int i, const char *bytes)
{
	gsize len = strlen(bytes);
	if (g_utf8_validate(bytes, (gssize)len, NULL))
		sqlite3_bind_text(st, i, bytes, (int)len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_blob(st, i, bytes, (int)len, SQLITE_TRANSIENT);
}

/* Binds a path as both types, for range queries over mixed columns. */
static void bind_path_as(sqlite3_stmt *st, int i, const char *bytes, gsize len, gboolean is_blob)
{
	if (is_blob)
		sqlite3_bind_blob(st, i, bytes, (int)len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_text(st, i, bytes, (int)len, SQLITE_TRANSIENT);
}

/* Binds the four bounds of "a path below `path`" from parameter `first`:
 * after "path/" and before "path0" ('0' follows '/'), as text (?first,
 * ?first+1) and as blob (?first+2, ?first+3), for columns of both types. */
static void bind_below(sqlite3_stmt *st, int first, const char *path)
{
	g_autofree char *lo = g_strconcat(path, strcmp(path, "/") == 0 ? "" : "/", NULL);
	g_autofree char *hi = g_strdup(lo);
	gsize len = strlen(lo);

	hi[len - 1] = '/' + 1;
	bind_path_as(st, first, lo, len, FALSE);
	bind_path_as(st, first + 1, hi, len, FALSE);
	bind_path_as(st, first + 2, lo, len, TRUE);
	bind_path_as(st, first + 3, hi, len, TRUE);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *text)
{
	if (text != NULL)
		sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_double_or_null(sqlite3_stmt *st, int i, double v)
{
	if (!isnan(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_int_or_null(sqlite3_stmt *st, int i, gint64 v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static char *column_bytes(sqlite3_stmt *st, int i)
{
	const void *p = sqlite3_column_blob(st, i);
	int n = sqlite3_column_bytes(st, i);
	return g_strndup(p != NULL ? p : "", (gsize)n);
}

/* Steps a statement that returns no rows (or whose rows are ignored). */
static gboolean step_done(PixStore *s, sqlite3_stmt *st, const char *what, GError **error)
{
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, what);
		return FALSE;
	}
	return TRUE;
}

static const char *state_name(PixFileState state)
{
	switch (state) {
	case PIX_STATE_OK:
		return "ok";
	case PIX_STATE_ERROR:
		return "error";
	case PIX_STATE_MISSING:
		return "missing";
	case PIX_STATE_OFFLINE:
		return "offline";
	}
	g_assert_not_reached();
}

static PixFileState state_from(const unsigned char *text)
{
	if (text != NULL && strcmp((const char *)text, "error") == 0)
		return PIX_STATE_ERROR;
	if (text != NULL && strcmp((const char *)text, "missing") == 0)
		return PIX_STATE_MISSING;
	if (text != NULL && strcmp((const char *)text, "offline") == 0)
		return PIX_STATE_OFFLINE;
	return PIX_STATE_OK;
}

/* --- opening --- */

char **pix_store_companion_paths(const char *path)
{
	char **out = g_new0(char *, 6);
	out[0] = g_strdup(path);
	out[1] = g_strconcat(path, "-wal", NULL);
	out[2] = g_strconcat(path, "-shm", NULL);
	out[3] = g_strconcat(path, "-journal", NULL);
	out[4] = g_strconcat(path, ".lock", NULL);
	return out;
}

/*
 * Creates `path` (read-write) with mode 0600 whatever the umask: the
 * catalog is a private record of someone's files, and SQLite gives the
 * -wal, -shm and -journal it creates the mode of the catalog file.  The
 * descriptor, or -1 with errno set (EEXIST: it exists, and keeps its
 * mode).
 */
static int create_private(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0 && fchmod(fd, 0600) != 0) {
		int err = errno;
		close(fd);
		unlink(path);
		errno = err;
		return -1;
	}
	return fd;
}

/* A new catalog file, created before SQLite opens it (which would
 * follow the umask); an existing one is left as it is. */
static gboolean create_catalog(const char *path, GError **error)
{
	int fd = create_private(path);
	if (fd < 0 && errno != EEXIST) {
		int err = errno;
		g_autofree char *q = pix_quote(path);
		g_set_error(error, PIX_STORE_ERROR, is_full_errno(err) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_OPEN,
		            "cannot create catalog '%s': %s", q, errno_text(err));
		return FALSE;
	}
	if (fd >= 0)
		close(fd);
	return TRUE;
}

/* Takes the writer lock, waiting (with a message) unless is_no_wait. */
static gboolean take_lock(PixStore *s, gboolean is_no_wait, GError **error)
{
	g_autofree char *lock_path = g_strconcat(s->path, ".lock", NULL);
	g_autofree char *q = pix_quote(s->path);

	s->lock_fd = create_private(lock_path);
	if (s->lock_fd < 0 && errno == EEXIST)
		s->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lock_fd < 0) {
		int err = errno;
		g_set_error(error, PIX_STORE_ERROR, is_full_errno(err) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_OPEN,
		            "cannot create lock file for catalog '%s': %s", q, errno_text(err));
		return FALSE;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		char holder[32] = "";
		ssize_t n = pread(s->lock_fd, holder, sizeof holder - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		/* a pid: digits only, whatever else the lock file holds */
		holder[strspn(holder, "0123456789")] = '\0';
		if (errno != EWOULDBLOCK && errno != EAGAIN) {
			int err = errno;
			g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
			            "cannot lock catalog '%s': %s", q, g_strerror(err));
			return FALSE;
		}
		if (is_no_wait) {
			g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOCKED,
			            "catalog '%s' is in use by another photoidx (pid %s)", q,
			            holder[0] ? holder : "unknown");
			return FALSE;
		}
		pix_notice("waiting for another photoidx (pid %s) to finish with catalog '%s'",
		         holder[0] ? holder : "unknown", q);
		while (flock(s->lock_fd, LOCK_EX) != 0) {
			if (errno != EINTR || pix_stop_requested()) {
				int err = errno;
				g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOCKED,
				            "cannot lock catalog '%s': %s", q, g_strerror(err));
				return FALSE;
			}
		}
	}
	g_autofree char *pid = g_strdup_printf("%ld\n", (long)getpid());
	if (ftruncate(s->lock_fd, 0) != 0 || pwrite(s->lock_fd, pid, strlen(pid), 0) < 0)
		pix_info("cannot record pid in lock file of '%s'", q);
	return TRUE;
}

/*
 * The room a run needs to record its end (a few pages of write-ahead log,
 * perhaps another page of the -shm index of it), kept allocated past the
 * end of the lock file (whose size stays that of the pid).  When the disk fills, the batch that
 * finds it full is rolled back and the run recorded as failed; but a batch
 * that fit exactly, or an MD5 index that did not, leaves no room for that
 * record, and the run would stay 'running'.  So the writer takes this room
 * at opening (a disk too full for it is refused then, before anything is
 * written), and gives it back to record the end of a run on a full disk;
 * the next writer takes it again.
 */
#define RESERVE_BYTES (256 * 1024)

static gboolean reserve_room(PixStore *s, GError **error)
{
	if (fallocate(s->lock_fd, FALLOC_FL_KEEP_SIZE, 0, RESERVE_BYTES) == 0) {
		s->has_room = TRUE;
		return TRUE;
	}
	int err = errno;
	if (!is_full_errno(err))
		return TRUE;    /* no fallocate here: the end record takes its chance */
	g_autofree char *q = pix_quote(s->path);
	g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FULL, "cannot reserve room for catalog '%s': %s", q,
	            errno_text(err));
	return FALSE;
}

/* Gives the reserved room back (truncating the lock file to its size
 * frees what is allocated past its end); FALSE if there was none. */
static gboolean release_room(PixStore *s)
{
	struct stat st;
	if (!s->has_room || fstat(s->lock_fd, &st) != 0 || ftruncate(s->lock_fd, st.st_size) != 0)
		return FALSE;
	s->has_room = FALSE;
	return TRUE;
}

/* Refuses files that are not photoidx catalogs, or newer ones. */
static gboolean check_identity(PixStore *s, gint64 *version, GError **error)
{
	gint64 app_id, n_objects = 0;
	g_autofree char *q = pix_quote(s->path);

	if (!pragma_int(s, "application_id", &app_id, error) || !pragma_int(s, "user_version", version, error))
		return FALSE;
	if (*version == 0 && app_id == 0) {
		g_autoptr(sqlite3_stmt) st = NULL;
		int rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL);
		if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			n_objects = sqlite3_column_int64(st, 0);
		else {
			pix_store_sqlite_error(error, s, rc == SQLITE_OK ? sqlite3_errcode(s->db) : rc, "cannot read its schema");
			return FALSE;
		}
	}
	if (app_id != PIX_APPLICATION_ID && (app_id != 0 || n_objects > 0 || *version != 0)) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FOREIGN,
		            "'%s' is not a photoidx catalog (it is another SQLite database)", q);
		return FALSE;
	}
	if (*version > pix_schema_count) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_NEWER,
		            "catalog '%s' has schema version %" G_GINT64_FORMAT
		            ", newer than this photoidx understands (%d); upgrade photoidx",
		            q, *version, pix_schema_count);
		return FALSE;
	}
	return TRUE;
}

static gboolean migrate(PixStore *s, gint64 version, GError **error)
{
	if (version >= pix_schema_count)
		return TRUE;
	/* a migration that makes a table anew drops the old one, which
	 * foreign keys would refuse; they are checked again after */
	if (!exec_sql(s, "PRAGMA foreign_keys = OFF", "cannot migrate it", error))
		return FALSE;
	for (int v = (int)version + 1; v <= pix_schema_count; v++) {
		g_autofree char *bump = g_strdup_printf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
		                                        PIX_APPLICATION_ID, v);
		g_autofree char *what = g_strdup_printf("cannot apply schema migration %d", v);
		if (!exec_sql(s, "BEGIN IMMEDIATE", what, error))
			return FALSE;
		if (!exec_sql(s, pix_schema_sql[v - 1], what, error) || !exec_sql(s, bump, what, error) ||
		    !exec_sql(s, "COMMIT", what, error)) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return FALSE;
		}
	}
	return exec_sql(s, "PRAGMA foreign_keys = ON", "cannot migrate it", error);
}

/*
 * The index of files by MD5 takes inserts at random places: on a large
 * first import its pages are rewritten by every batch, more of them the
 * larger it grows.  A first import into an empty catalog therefore runs
 * without it (nothing can be found by MD5 in an empty catalog) and builds
 * it at the end, in one sorted pass: writes stay as fast at 500,000 files
 * as at the first.  A run killed before the end leaves it to the next
 * writer, which builds it on opening.
 */
static gboolean ensure_md5_index(PixStore *s, GError **error)
{
	return exec_sql(s, "CREATE INDEX IF NOT EXISTS files_by_md5 ON files (md5)", "cannot index it by MD5", error);
}

/* WAL: readers (front ends, plan) never block the writer, and never see a
 * half-written batch. */
static gboolean set_wal(PixStore *s, GError **error)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot switch it to WAL mode");
		return FALSE;
	}
	const char *mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || g_ascii_strcasecmp(mode, "wal") != 0) {
		g_autofree char *q = pix_quote(s->path);
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s': cannot use WAL mode on this file system", q);
		return FALSE;
	}
	return TRUE;
}

/*
 * Process-wide SQLite settings, once, before its first connection: no
 * memory statistics (kept under a global mutex on every allocation, which
 * the writer makes several of per row, and which nothing here reads).
 */
static void configure_sqlite(void)
{
	static gsize is_done = 0;
	if (g_once_init_enter(&is_done)) {
		if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK)
			pix_info("SQLite was initialised already: its memory statistics stay on");
		g_once_init_leave(&is_done, 1);
	}
}

static gboolean ensure_parent_dir(const char *path, GError **error)
{
	g_autofree char *dir = g_path_get_dirname(path);
	if (g_mkdir_with_parents(dir, 0700) != 0) {
		int err = errno;
		g_autofree char *q = pix_quote(dir), *qc = pix_quote(path);
		g_set_error(error, PIX_STORE_ERROR, is_full_errno(err) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_OPEN,
		            "cannot create directory '%s' for catalog '%s': %s", q, qc, errno_text(err));
		return FALSE;
	}
	return TRUE;
}

PixStore *pix_store_open(const char *path, PixStoreMode mode, gboolean is_no_wait, GError **error)
{
	g_autoptr(PixStore) s = g_new0(PixStore, 1);
	g_autofree char *q = pix_quote(path);
	gint64 version;
	int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;

	s->path = g_strdup(path);
	s->mode = mode;
	s->lock_fd = -1;
	/* before anything is made beside it (the lock file) */
	if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN, "'%s' is a directory, not a catalog file", q);
		return NULL;
	}
	if (mode == PIX_STORE_READ && !g_file_test(path, G_FILE_TEST_EXISTS)) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "there is no catalog '%s' yet: 'photoidx scan PATH' makes it", q);
		return NULL;
	}
	s->volume_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	s->unknown_devs = g_hash_table_new(g_direct_hash, g_direct_equal);

	if (mode == PIX_STORE_WRITE) {
		if (!ensure_parent_dir(path, error) || !take_lock(s, is_no_wait, error) || !reserve_room(s, error) ||
		    !create_catalog(path, error))
			return NULL;
		flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	} else {
		flags |= SQLITE_OPEN_READONLY;
	}
	configure_sqlite();
	int rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		if (s->db == NULL) {
			g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN, "cannot open catalog '%s'", q);
			return NULL;
		}
		pix_store_sqlite_error(error, s, rc, "cannot open it");
		return NULL;
	}
	sqlite3_busy_timeout(s->db, 60000);
	if (!check_identity(s, &version, error))
		return NULL;
	if (mode == PIX_STORE_WRITE) {
		if (!set_wal(s, error))
			return NULL;
		/* 16 MiB of page cache: the MD5 and inode indexes take inserts at
		 * random places, and a 2 MiB cache misses on nearly every one.
		 * The schema's CHECKs (state IN (...), kind IN (...)) are not
		 * evaluated for this connection: SQLite builds a temporary
		 * b-tree for each IN list of each row it checks, which cost a
		 * fifth of the writer's time on an import, and every value this
		 * writer puts there is one of the constants the CHECK lists
		 * (state_name(), the change kinds).  They still guard any other
		 * writer (the sqlite3 shell), and the migrations, which run before. */
		if (!exec_sql(s, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -16384;",
		              "cannot set it up", error) ||
		    !migrate(s, version, error) || !ensure_md5_index(s, error) ||
		    !exec_sql(s, "PRAGMA ignore_check_constraints = ON", "cannot set it up", error))
			return NULL;
	} else if (version == 0) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s' is empty (its first scan has not set it up): 'photoidx scan PATH' makes it", q);
		return NULL;
	} else if (version < pix_schema_count) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s' has schema version %" G_GINT64_FORMAT
		            "; run 'photoidx scan' once to upgrade it", q, version);
		return NULL;
	}
	g_assert(store_check(s));
	return g_steal_pointer(&s);
}

void pix_store_free(PixStore *s)
{
	if (s == NULL)
		return;
	if (s->in_batch)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < N_STATEMENTS; i++)
		sqlite3_finalize(s->stmts[i]);
	if (s->db != NULL)
		sqlite3_close_v2(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	g_strfreev(s->roots);
	if (s->rates != NULL)
		g_array_free(s->rates, TRUE);
	if (s->dirty != NULL)
		g_array_free(s->dirty, TRUE);
	g_clear_pointer(&s->volume_ids, g_hash_table_destroy);
	g_clear_pointer(&s->unknown_devs, g_hash_table_destroy);
	g_free(s->path);
	g_free(s);
}

/* --- writer --- */

static gboolean begin_batch(PixStore *s, GError **error)
{
	if (s->in_batch)
		return TRUE;
	sqlite3_stmt *st = stmt(s, ST_BEGIN, error);
	if (st == NULL || !step_done(s, st, "cannot begin a transaction", error))
		return FALSE;
	s->in_batch = TRUE;
	s->now_s = now_seconds();
	g_assert(store_check(s));
	return TRUE;
}

static void rollback_batch(PixStore *s)
{
	if (!s->in_batch)
		return;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_batch = FALSE;
	memset(s->counts, 0, sizeof s->counts);
	if (s->dirty != NULL)
		g_array_set_size(s->dirty, 0);
	/* volumes the batch inserted are gone with it */
	g_hash_table_remove_all(s->volume_ids);
	/* ROLLBACK ends the transaction even when it reports an error */
	g_assert(store_check(s));
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
	sqlite3_stmt *st = stmt(s, id, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, v);
	return step_done(s, st, "cannot link a sidecar", error);
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
static gboolean query_int(PixStore *s, sqlite3_stmt *st, gint64 *out, GError **error)
{
	int rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return step_done(s, st, "cannot look for sidecars", error);
	sqlite3_reset(st);
	return TRUE;
}

/*
 * Links XMP sidecars to their images (files.sidecar_id) and lends an image
 * the sidecar's date and position when it has none of its own (meta.lent
 * says what was lent, so it is taken back when the sidecar goes, changes
 * or the image gets its own), for the files the batch wrote: an image is
 * linked again; a sidecar links again the files linked to it and those its
 * name fits.  Run before each commit.  A file in a directory with no
 * sidecar and no linked file costs one lookup (cached per directory).
 */
static gboolean relink(PixStore *s, GError **error)
{
	if (s->dirty == NULL || s->dirty->len == 0)
		return TRUE;
	g_autoptr(GHashTable) has_any = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_autoptr(GHashTable) images = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	for (guint i = 0; i < s->dirty->len; i++) {
		const Dirty *d = &g_array_index(s->dirty, Dirty, i);
		gint64 any;
		gpointer cached = g_hash_table_lookup(has_any, &d->dir_id);
		if (cached != NULL) {
			any = GPOINTER_TO_INT(cached) - 1;
		} else {
			sqlite3_stmt *st = stmt(s, ST_SIDECAR_ANY, error);
			if (st == NULL)
				return FALSE;
			sqlite3_bind_int64(st, 1, d->dir_id);
			if (!query_int(s, st, &any, error))
				return FALSE;
			g_hash_table_insert(has_any, g_memdup2(&d->dir_id, sizeof d->dir_id), GINT_TO_POINTER((int)any + 1));
		}
		if (any <= 0)
			continue;
		sqlite3_stmt *at = stmt(s, ST_FILE_AT, error);
		if (at == NULL)
			return FALSE;
		sqlite3_bind_int64(at, 1, d->dir_id);
		bind_path(at, 2, d->name);
		if (sqlite3_step(at) != SQLITE_ROW) {
			sqlite3_reset(at);
			continue;       /* gone (a move that lost to a copy) */
		}
		gint64 id = sqlite3_column_int64(at, 0);
		gboolean is_sidecar = g_strcmp0((const char *)sqlite3_column_text(at, 1), "sidecar") == 0;
		sqlite3_reset(at);
		if (!is_sidecar) {
			g_hash_table_add(images, g_memdup2(&id, sizeof id));
			continue;
		}
		/* IMG_1.CR2.xmp: the files it may belong to start with IMG_1.CR2 */
		gsize len = strlen(d->name);
		if (len <= 4 || g_ascii_strcasecmp(d->name + len - 4, ".xmp") != 0)
			continue;
		g_autofree char *stem = g_strndup(d->name, len - 4);
		sqlite3_stmt *st = stmt(s, ST_SIDECAR_IMAGES, error);
		if (st == NULL)
			return FALSE;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, d->dir_id);
		g_autofree char *after = g_strconcat(stem, ".", NULL), *past = g_strconcat(stem, "/", NULL);
		bind_path(st, 4, stem);
		bind_path(st, 5, after);
		bind_path(st, 6, past);
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			gint64 image = sqlite3_column_int64(st, 0);
			g_hash_table_add(images, g_memdup2(&image, sizeof image));
		}
		if (rc != SQLITE_DONE)
			return step_done(s, st, "cannot look for a sidecar's images", error);
		sqlite3_reset(st);
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
	g_assert(store_check(s));
	if (!s->in_batch)
		return TRUE;
	if (!relink(s, error)) {
		rollback_batch(s);
		return FALSE;
	}
	sqlite3_stmt *st = stmt(s, ST_COMMIT, error);
	if (st == NULL || !step_done(s, st, "cannot commit", error)) {
		rollback_batch(s);
		return FALSE;
	}
	s->in_batch = FALSE;
	g_assert(store_check(s));
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
	sqlite3_stmt *st = stmt(s, ST_VOLUME_FIND, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_text(st, 1, pix_volume_kind_name(v->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, v->ident, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	*id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	if (*id == 0 && is_create) {
		g_assert(s->in_batch);
		sqlite3_stmt *ins = stmt(s, ST_VOLUME_INSERT, error);
		if (ins == NULL)
			return FALSE;
		sqlite3_bind_text(ins, 1, pix_volume_kind_name(v->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, v->ident, -1, SQLITE_STATIC);
		bind_text_or_null(ins, 3, v->uuid);
		bind_text_or_null(ins, 4, v->label);
		bind_text_or_null(ins, 5, v->fstype);
		bind_text_or_null(ins, 6, v->source);
		bind_path(ins, 7, v->mount_point);
		bind_path(ins, 8, v->mount_root);
		sqlite3_bind_int64(ins, 9, (gint64)v->dev);
		sqlite3_bind_int64(ins, 10, now_seconds());
		if (!step_done(s, ins, "cannot record a volume", error))
			return FALSE;
		*id = sqlite3_last_insert_rowid(s->db);
	}
	if (*id != 0)
		g_hash_table_insert(s->volume_ids, g_steal_pointer(&key), GSIZE_TO_POINTER((gsize)*id));
	return TRUE;
}

/* The catalog key of a directory: its volume's id (0 when the catalog
 * has no such volume and !is_create) and its path relative to the
 * volume's root (transfer full). */
static gboolean dir_key(PixStore *s, const PixDir *d, gboolean is_create, gint64 *vol_id, char **rel_path,
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
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, what);
		return FALSE;
	}
	va_list ap;
	va_start(ap, n);
	for (int i = 1; i <= n; i++)
		sqlite3_bind_int64(st, i, va_arg(ap, gint64));
	va_end(ap);
	return step_done(s, st, what, error);
}

/* A change-log row with what every entry has bound: its run, time, kind
 * and paths (transfer none; the caller binds the rest and steps it). */
static sqlite3_stmt *change_row(PixStore *s, const char *kind, const char *old_path, const char *new_path,
                                GError **error)
{
	sqlite3_stmt *st = stmt(s, ST_CHANGE_INSERT, error);
	if (st == NULL)
		return NULL;
	if (s->scan_id > 0)
		sqlite3_bind_int64(st, 1, s->scan_id);
	sqlite3_bind_int64(st, 3, s->now_s);
	sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
	if (old_path != NULL)
		bind_path(st, 5, old_path);
	if (new_path != NULL)
		bind_path(st, 6, new_path);
	return st;
}

/* A volume's entry in the change log. */
static gboolean put_volume_change(PixStore *s, gint64 vol_id, const char *kind, const char *old_path,
                                  const char *new_path, GError **error)
{
	sqlite3_stmt *st = change_row(s, kind, old_path, new_path, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 11, vol_id);
	return step_done(s, st, "cannot write the change log", error);
}

/* The rows of `table` (dirs or roots) on volume `vol_id`: their `path`
 * written anew from rel_path where `v` shows it now. */
static gboolean rewrite_paths(PixStore *s, const char *table, gint64 vol_id, const PixVolume *v, GError **error)
{
	g_autofree char *sel = g_strdup_printf("SELECT id, rel_path FROM %s WHERE volume_id = ?1", table);
	g_autofree char *upd = g_strdup_printf("UPDATE %s SET path = ?2 WHERE id = ?1", table);
	g_autoptr(sqlite3_stmt) st = NULL, up = NULL;
	int rc = sqlite3_prepare_v2(s->db, sel, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, upd, -1, &up, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot move a volume");
		return FALSE;
	}
	sqlite3_bind_int64(st, 1, vol_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g_autofree char *rel = column_bytes(st, 1);
		g_autofree char *path = pix_volume_path(v, rel);
		if (path == NULL)
			continue;       /* not visible through this mount */
		sqlite3_reset(up);
		sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
		bind_path(up, 2, path);
		if (!step_done(s, up, "cannot move a volume", error))
			return FALSE;
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot move a volume");
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
	g_autoptr(sqlite3_stmt) devs = NULL, upd = NULL, rupd = NULL;
	int rc = sqlite3_prepare_v2(s->db,
		"SELECT dev, path, ino, min(length(path)) FROM dirs WHERE volume_id IS NULL AND dev IS NOT NULL"
		" GROUP BY dev", -1, &devs, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "SELECT id, path FROM dirs WHERE volume_id IS NULL AND (dev = ?1 OR dev IS NULL)",
		                        -1, &upd, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "UPDATE OR IGNORE dirs SET volume_id = ?2, rel_path = ?3 WHERE id = ?1", -1,
		                        &rupd, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot place directories on volumes");
		return FALSE;
	}
	while ((rc = sqlite3_step(devs)) == SQLITE_ROW) {
		guint64 old_dev = (guint64)sqlite3_column_int64(devs, 0);
		g_autofree char *sample = column_bytes(devs, 1);
		guint64 ino = (guint64)sqlite3_column_int64(devs, 2);
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
		sqlite3_reset(upd);
		sqlite3_bind_int64(upd, 1, (gint64)old_dev);
		while ((rc = sqlite3_step(upd)) == SQLITE_ROW) {
			g_autofree char *path = column_bytes(upd, 1);
			g_autofree char *rel = pix_volume_rel_of(v, path);
			if (rel == NULL)
				continue;       /* not below that mount: left for a later run */
			sqlite3_reset(rupd);
			sqlite3_bind_int64(rupd, 1, sqlite3_column_int64(upd, 0));
			sqlite3_bind_int64(rupd, 2, vol_id);
			bind_path(rupd, 3, rel);
			if (!step_done(s, rupd, "cannot place directories", error))
				return FALSE;
		}
		if (rc != SQLITE_DONE)
			break;
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot place directories on volumes");
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
	g_autoptr(sqlite3_stmt) root = NULL, rset = NULL;
	int rc = sqlite3_prepare_v2(s->db, sel, -1, &root, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot place directories and roots on volumes");
		return FALSE;
	}
	rc = sqlite3_prepare_v2(s->db, upd, -1, &rset, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(root)) == SQLITE_ROW) {
		g_autofree char *path = column_bytes(root, 1);
		struct stat st;
		if (pix_path_lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = SQLITE_OK;
			continue;
		}
		g_autofree char *rel = NULL;
		const PixVolume *v = volume_of(s, path, st.st_dev, &rel);
		gint64 vol_id;
		if (!volume_id(s, v, TRUE, &vol_id, error))
			return FALSE;
		sqlite3_reset(rset);
		sqlite3_bind_int64(rset, 1, sqlite3_column_int64(root, 0));
		sqlite3_bind_int64(rset, 2, vol_id);
		bind_path(rset, 3, rel);
		if (!step_done(s, rset, "cannot place directories and roots on volumes", error))
			return FALSE;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot place directories and roots on volumes");
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
	if (!place_legacy(s, error))
		return FALSE;
	g_autoptr(sqlite3_stmt) st = NULL, set = NULL;
	int rc = sqlite3_prepare_v2(s->db,
		"SELECT id, kind, ident, mount_point, mount_root, dev, is_online FROM volumes ORDER BY id", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db,
			"UPDATE volumes SET mount_point = ?2, mount_root = ?3, dev = ?4, is_online = 1, last_seen_at = ?5,"
			" label = ?6, fstype = ?7, source = ?8 WHERE id = ?1", -1, &set, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		gint64 id = sqlite3_column_int64(st, 0);
		int kind = pix_volume_kind_from_name((const char *)sqlite3_column_text(st, 1));
		const char *ident = (const char *)sqlite3_column_text(st, 2);
		g_autofree char *old_mount = column_bytes(st, 3);
		g_autofree char *old_root = column_bytes(st, 4);
		guint64 old_dev = (guint64)sqlite3_column_int64(st, 5);
		gboolean was_online = sqlite3_column_int(st, 6) != 0;
		const PixVolume *v = kind >= 0 && ident != NULL ? pix_mounts_find(m, kind, ident) : NULL;

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
			    !run_ints(s, "UPDATE dirs SET dev = ?2, fsid = CASE WHEN ?3 <> 0 THEN ?3 ELSE fsid END"
			              " WHERE volume_id = ?1 AND dev = ?4", "cannot move a volume", error,
			              4, id, (gint64)v->dev, fsid, (gint64)old_dev))
				return FALSE;
		}
		const char *kind_name = is_moved || is_new_dev ? "remounted" : !was_online ? "online" : NULL;
		if (kind_name != NULL &&
		    !put_volume_change(s, id, kind_name, strcmp(kind_name, "online") == 0 ? NULL : old_mount,
		                       v->mount_point, error))
			return FALSE;
		sqlite3_reset(set);
		sqlite3_bind_int64(set, 1, id);
		bind_path(set, 2, v->mount_point);
		bind_path(set, 3, v->mount_root);
		sqlite3_bind_int64(set, 4, (gint64)v->dev);
		sqlite3_bind_int64(set, 5, s->now_s);
		bind_text_or_null(set, 6, v->label);
		bind_text_or_null(set, 7, v->fstype);
		bind_text_or_null(set, 8, v->source);
		if (!step_done(s, set, "cannot record a volume", error))
			return FALSE;
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	return TRUE;
}

/* A root on the mount point of an offline volume is an empty directory
 * now: says so, once, so that nobody takes the files for lost, and adds it
 * to `shadowed` (not recorded as a root of the volume it is on now). */
static gboolean note_offline_roots(PixStore *s, char **roots, GHashTable *shadowed, GError **error)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc = sqlite3_prepare_v2(s->db,
		"SELECT v.mount_point, coalesce(v.label, v.ident),"
		" (SELECT count(*) FROM files f JOIN dirs d ON d.id = f.dir_id WHERE d.volume_id = v.id AND f.state <> 'missing')"
		" FROM volumes v WHERE NOT v.is_online", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g_autofree char *mount = column_bytes(st, 0);
		for (char **r = roots; *r != NULL; r++)
			if (pix_path_is_under(*r, mount) || pix_path_is_under(mount, *r)) {
				g_autofree char *q = pix_quote(mount);
				if (pix_path_is_under(*r, mount))
					g_hash_table_add(shadowed, *r);
				pix_notice("volume '%s', last mounted at '%s', is offline: its %" G_GINT64_FORMAT
				           " files are kept, as offline", (const char *)sqlite3_column_text(st, 1), q,
				           (gint64)sqlite3_column_int64(st, 2));
				break;
			}
	}
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read the volumes");
		return FALSE;
	}
	return TRUE;
}

gboolean pix_store_begin_scan(PixStore *s, const char *command, char **roots, GError **error)
{
	g_autoptr(GString) display = g_string_new(NULL);
	gint64 now = now_seconds();

	g_assert(store_check(s));
	for (char **r = roots; *r != NULL; r++) {
		g_autofree char *q = pix_quote(*r);
		g_string_append_printf(display, "%s%s", display->len ? "\n" : "", q);
	}
	if (!begin_batch(s, error))
		return FALSE;

	/* every auto-cleaned statement is declared before the first goto */
	g_autoptr(sqlite3_stmt) killed = NULL, scan = NULL, root = NULL, rows = NULL;
	g_autoptr(GHashTable) shadowed = g_hash_table_new(g_str_hash, g_str_equal);
	s->is_verify = strcmp(command, "verify") == 0;
	int rc = sqlite3_prepare_v2(s->db, "UPDATE scans SET state = 'killed' WHERE state = 'running'", -1, &killed, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "INSERT INTO scans (command, roots, started_at, state)"
		                        " VALUES (?1, ?2, ?3, 'running')", -1, &scan, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "INSERT INTO roots (path, first_scan_at, volume_id, rel_path)"
		                        " VALUES (?1, ?2, ?3, ?4)"
		                        " ON CONFLICT (volume_id, rel_path) DO UPDATE SET path = ?1", -1, &root, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot record the scan");
		rollback_batch(s);
		return FALSE;
	}
	if (!step_done(s, killed, "cannot record the scan", error))
		goto fail;
	sqlite3_bind_text(scan, 1, command, -1, SQLITE_STATIC);
	sqlite3_bind_text(scan, 2, display->str, -1, SQLITE_STATIC);
	sqlite3_bind_int64(scan, 3, now);
	if (!step_done(s, scan, "cannot record the scan", error))
		goto fail;
	s->scan_id = sqlite3_last_insert_rowid(s->db);
	rc = sqlite3_prepare_v2(s->db, "SELECT coalesce(max(id), 0) FROM files", -1, &rows, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(rows);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot record the scan");
		goto fail;
	}
	s->catalog_rows = s->rows_before_run = sqlite3_column_int64(rows, 0);
	sqlite3_reset(rows);        /* a statement in progress would lock the schema */
	if (!s->is_verify && s->rows_before_run == 0 &&
	    !exec_sql(s, "DROP INDEX IF EXISTS files_by_md5", "cannot record the scan", error))
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
		sqlite3_reset(root);
		bind_path(root, 1, *r);
		sqlite3_bind_int64(root, 2, now);
		sqlite3_bind_int64(root, 3, vol_id);
		bind_path(root, 4, rel);
		if (!step_done(s, root, "cannot record the scan", error))
			goto fail;
	}
	return pix_store_commit(s, error);
fail:
	rollback_batch(s);
	return FALSE;
}

/* The end of the run in its scans row (and, when 'done', the roots). */
static gboolean record_end(PixStore *s, const char *state, int exit_status, GError **error)
{
	if (!begin_batch(s, error))
		return FALSE;
	g_autoptr(sqlite3_stmt) st = NULL, roots = NULL;
	int rc = sqlite3_prepare_v2(s->db,
		"UPDATE scans SET finished_at = ?2, state = ?3, n_dirs = ?4, n_new = ?5, n_changed = ?6,"
		" n_moved = ?7, n_missing = ?8, n_unchanged = ?9, n_errors = ?10, bytes_read = ?11,"
		" exit_status = ?12 WHERE id = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "UPDATE roots SET last_scan_at = ?1 WHERE path = ?2 RETURNING volume_id",
		                        -1, &roots, NULL);
	g_autoptr(sqlite3_stmt) vols = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "UPDATE volumes SET last_scan_at = ?1 WHERE id = ?2", -1, &vols, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot record the end of the scan");
		rollback_batch(s);
		return FALSE;
	}
	static const PixCounter order[] = { PIX_N_DIRS, PIX_N_NEW, PIX_N_CHANGED, PIX_N_MOVED,
	                                    PIX_N_MISSING, PIX_N_UNCHANGED, PIX_N_ERRORS, PIX_BYTES_READ };
	/* a verify: n_unchanged counts the files that kept their MD5,
	 * n_changed those whose content changed behind size and mtime */
	static const PixCounter verify_order[] = { PIX_N_DIRS, PIX_N_NEW, PIX_N_MISMATCH, PIX_N_MOVED,
	                                           PIX_N_MISSING, PIX_N_VERIFIED, PIX_N_ERRORS, PIX_BYTES_READ };
	sqlite3_bind_int64(st, 1, s->scan_id);
	sqlite3_bind_int64(st, 2, now_seconds());
	sqlite3_bind_text(st, 3, state, -1, SQLITE_STATIC);
	for (guint i = 0; i < G_N_ELEMENTS(order); i++)
		sqlite3_bind_int64(st, 4 + (int)i, pix_count_get(s->is_verify ? verify_order[i] : order[i]));
	sqlite3_bind_int(st, 12, exit_status);
	if (!step_done(s, st, "cannot record the end of the scan", error)) {
		rollback_batch(s);
		return FALSE;
	}
	for (char **r = s->roots; strcmp(state, "done") == 0 && r != NULL && *r != NULL; r++) {
		sqlite3_reset(roots);
		sqlite3_bind_int64(roots, 1, now_seconds());
		bind_path(roots, 2, *r);
		while ((rc = sqlite3_step(roots)) == SQLITE_ROW) {
			sqlite3_reset(vols);
			sqlite3_bind_int64(vols, 1, now_seconds());
			sqlite3_bind_int64(vols, 2, sqlite3_column_int64(roots, 0));
			if (!step_done(s, vols, "cannot record the end of the scan", error)) {
				rollback_batch(s);
				return FALSE;
			}
		}
		if (rc != SQLITE_DONE) {
			pix_store_sqlite_error(error, s, rc, "cannot record the end of the scan");
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
	if (!g_error_matches(local, PIX_STORE_ERROR, PIX_STORE_ERROR_FULL) || !release_room(s)) {
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

	g_assert(store_check(s) && s->scan_id > 0);
	if (!record_end_in_room(s, state, exit_status, error))
		return FALSE;
	if (ensure_md5_index(s, &local))
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
	sqlite3_stmt *st = change_row(s, kind, old_path, new_path, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 2, file_id);
	if (item->has_old_md5)
		sqlite3_bind_blob(st, 7, item->old_md5, 16, SQLITE_STATIC);
	if (item->has_md5 && strcmp(kind, "moved") != 0 && strcmp(kind, "missing") != 0)
		sqlite3_bind_blob(st, 8, item->md5, 16, SQLITE_STATIC);
	if (strcmp(kind, "added") != 0)
		sqlite3_bind_int64(st, 9, item->old_st.size_bytes);
	if (strcmp(kind, "missing") != 0)
		sqlite3_bind_int64(st, 10, item->st.size_bytes);
	return step_done(s, st, "cannot write the change log", error);
}

static gboolean put_meta(PixStore *s, gint64 file_id, const PixMeta *m, GError **error)
{
	sqlite3_stmt *st;
	if (m == NULL) {
		st = stmt(s, ST_META_DELETE, error);
		if (st == NULL)
			return FALSE;
		sqlite3_bind_int64(st, 1, file_id);
		return step_done(s, st, "cannot write metadata", error);
	}
	st = stmt(s, ST_META_REPLACE, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, file_id);
	bind_text_or_null(st, 2, m->date_taken);
	bind_text_or_null(st, 3, m->date_tz);
	bind_text_or_null(st, 4, m->date_source);
	bind_text_or_null(st, 5, m->make);
	bind_text_or_null(st, 6, m->model);
	bind_text_or_null(st, 7, m->lens);
	bind_double_or_null(st, 8, m->exposure_s);
	bind_double_or_null(st, 9, m->fnumber);
	bind_int_or_null(st, 10, m->iso);
	bind_double_or_null(st, 11, m->focal_mm);
	bind_int_or_null(st, 12, m->orientation);
	bind_int_or_null(st, 13, m->width_px);
	bind_int_or_null(st, 14, m->height_px);
	bind_double_or_null(st, 15, m->gps_lat);
	bind_double_or_null(st, 16, m->gps_lon);
	bind_double_or_null(st, 17, m->gps_alt_m);
	bind_double_or_null(st, 18, m->duration_s);
	if (m->has_osdb_hash) {
		char hex[17];
		g_snprintf(hex, sizeof hex, "%016" G_GINT64_MODIFIER "x", m->osdb_hash);
		sqlite3_bind_text(st, 19, hex, -1, SQLITE_TRANSIENT);
	}
	bind_double_or_null(st, 20, m->aperture);
	bind_int_or_null(st, 21, m->exposure_program);
	bind_int_or_null(st, 22, m->metering_mode);
	bind_int_or_null(st, 23, m->flash);
	bind_text_or_null(st, 24, m->gps_time);
	bind_double_or_null(st, 25, m->gps_direction);
	bind_text_or_null(st, 26, m->gps_direction_ref);
	bind_text_or_null(st, 27, m->description);
	return step_done(s, st, "cannot write metadata", error);
}

static PixFileState item_state(const PixItem *item)
{
	return item->error != NULL ? PIX_STATE_ERROR : PIX_STATE_OK;
}

static void bind_stat(sqlite3_stmt *st, int first, const PixStat *ps)
{
	sqlite3_bind_int64(st, first, (gint64)ps->dev);
	sqlite3_bind_int64(st, first + 1, (gint64)ps->ino);
	sqlite3_bind_int64(st, first + 2, ps->mode);
	sqlite3_bind_int64(st, first + 3, ps->size_bytes);
	sqlite3_bind_int64(st, first + 4, ps->mtime_ns);
	sqlite3_bind_int64(st, first + 5, ps->ctime_ns);
}

static gboolean put_dir(PixStore *s, PixItem *item, GError **error)
{
	PixDir *d = item->dir;
	sqlite3_stmt *st;

	if (item->action == PIX_ACT_DIR_MISSING) {
		g_assert(d->id > 0);
		st = stmt(s, ST_DIR_MISSING, error);
		if (st == NULL)
			return FALSE;
		sqlite3_bind_int64(st, 1, d->id);
		return step_done(s, st, "cannot write a directory", error);
	}
	gint64 vol_id;
	g_autofree char *rel = NULL;
	if (!dir_key(s, d, TRUE, &vol_id, &rel, error))
		return FALSE;
	st = stmt(s, ST_DIR_UPSERT, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 13, vol_id);
	bind_path(st, 14, rel);
	if (d->parent != NULL && d->parent->id > 0)
		sqlite3_bind_int64(st, 1, d->parent->id);
	bind_path(st, 2, d->path);
	if (d->st.ino != 0) {
		sqlite3_bind_int64(st, 3, (gint64)d->st.dev);
		sqlite3_bind_int64(st, 4, (gint64)d->st.ino);
		sqlite3_bind_int64(st, 5, d->st.mtime_ns);
		sqlite3_bind_int64(st, 6, d->st.ctime_ns);
	}
	sqlite3_bind_text(st, 7, d->error != NULL ? "error" : "ok", -1, SQLITE_STATIC);
	bind_text_or_null(st, 8, d->error);
	sqlite3_bind_int64(st, 9, s->now_s);
	if (d->fsid != 0)
		sqlite3_bind_int64(st, 10, (gint64)d->fsid);
	/* listed by this run (NULL when the listing failed, or outside a run) */
	if (d->error == NULL && s->scan_id > 0)
		sqlite3_bind_int64(st, 11, s->scan_id);
	sqlite3_bind_int(st, 12, d->is_unlisted);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot write a directory");
		return FALSE;
	}
	d->id = sqlite3_column_int64(st, 0);
	return step_done(s, st, "cannot write a directory", error);
}

/* Binds the content columns shared by insert and update, from `first`:
 * md5, mime, media, state, error, recheck. */
static void bind_content(sqlite3_stmt *st, int first, const PixItem *item)
{
	if (item->has_md5)
		sqlite3_bind_blob(st, first, item->md5, 16, SQLITE_STATIC);
	bind_text_or_null(st, first + 1, item->mime);
	sqlite3_bind_text(st, first + 2, pix_media_name(item->media), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, first + 3, state_name(item_state(item)), -1, SQLITE_STATIC);
	bind_text_or_null(st, first + 4, item->error);
	sqlite3_bind_int(st, first + 5, item->is_racy ? 1 : 0);
}

/* Inserts a new file row for `item`; *id is its row id. */
static gboolean insert_file(PixStore *s, PixItem *item, gint64 *id, GError **error)
{
	sqlite3_stmt *st = stmt(s, ST_FILE_INSERT, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0);
	sqlite3_bind_int64(st, 1, item->dir->id);
	bind_path(st, 2, item->name);
	bind_stat(st, 3, &item->st);
	bind_content(st, 9, item);
	sqlite3_bind_int64(st, 15, s->now_s);
	if (item->has_md5)
		sqlite3_bind_int64(st, 16, s->now_s);
	/* the row id from the connection, not RETURNING: SQLite collects
	 * RETURNING rows in a temporary table opened and closed per insert,
	 * which cost a third of this insert */
	if (!step_done(s, st, "cannot add a file", error))
		return FALSE;
	*id = sqlite3_last_insert_rowid(s->db);
	count(s, PIX_N_NEW, 1);
	return TRUE;
}

static GPtrArray *collect_file_rows(PixStore *s, sqlite3_stmt *st, gboolean has_dir_path, GError **error);

/*
 * --- decisions the store settles ---
 *
 * Plan decides from what the catalog held when the scan began; two
 * decisions need what only the writer knows, the content read and the
 * rows this run has written, and are settled here:
 *  - a new file whose MD5 and size are a file's whose path is gone, from a
 *    disk still mounted, is that file moved across file systems: it takes
 *    the row over (find_moved_by_md5(), take_over());
 *  - a file plan found gone is marked missing only while its row is still
 *    at that path (ST_FILE_MISSING);
 * and such new files, and the end-of-walk missing items, wait until the
 * input ends (Deferred, is_to_defer()): a rename plan found claims its row
 * first, and a file that turned up elsewhere is recorded as moved, not
 * also as missing.
 */

/*
 * The row of a file that was moved to where `item` (new, read) is, found
 * by content: same MD5 and size, and its own path gone from a disk that is
 * still there (a move across file systems, or a copy and a delete).  A
 * copy whose original is still in place is a file of its own.  Returns the
 * row (transfer full) or NULL.
 */
static PixFileRow *find_moved_by_md5(PixStore *s, const PixItem *item, GError **error)
{
	/* empty files all share one MD5: content says nothing about them.
	 * Only rows from before this run can have moved here (a first import
	 * into an empty catalog asks nothing). */
	if (!item->has_md5 || item->st.size_bytes == 0 || s->rows_before_run == 0)
		return NULL;
	sqlite3_stmt *st = stmt(s, ST_FILES_BY_MD5, error);
	if (st == NULL)
		return NULL;
	sqlite3_bind_blob(st, 1, item->md5, 16, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, item->st.size_bytes);
	bind_path(st, 3, item->name);
	sqlite3_bind_int64(st, 4, s->rows_before_run);
	g_autoptr(GPtrArray) rows = collect_file_rows(s, st, TRUE, error);
	sqlite3_reset(st);
	/* a new hard link of a file still at its path is that file's second
	 * name, not a file that moved here */
	for (guint i = 0; rows != NULL && i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		if (row->st.dev == item->st.dev && row->st.ino == item->st.ino && row->state != PIX_STATE_MISSING &&
		    !pix_path_is_gone(row->dir_path, row->name))
			return NULL;
	}
	for (guint i = 0; rows != NULL && i < rows->len; i++) {
		PixFileRow *row = g_ptr_array_index(rows, i);
		g_autofree char *old_path = pix_path_join(row->dir_path, row->name);
		if (!pix_path_is_gone(row->dir_path, row->name) || !pix_path_ancestor_on(old_path, row->st.dev, row->dir_fsid))
			continue;
		return g_ptr_array_steal_index(rows, i);
	}
	return NULL;
}

/* The file of `item` is the one of `row`, moved: the row takes its path,
 * stat and content. */
static gboolean take_over(PixStore *s, PixItem *item, const PixFileRow *row, GError **error)
{
	sqlite3_stmt *st = stmt(s, ST_FILE_TAKE_OVER, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, row->id);
	sqlite3_bind_int64(st, 2, item->dir->id);
	bind_path(st, 3, item->name);
	bind_stat(st, 4, &item->st);
	bind_content(st, 10, item);
	sqlite3_bind_int64(st, 16, s->now_s);
	if (!step_done(s, st, "cannot move a file", error))
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
	return put_meta(s, row->id, item->meta, error) &&
	       put_change(s, row->id, "moved", item, old_path, new_path, error);
}

/* A new file: the row of the file it is, moved (unless `is_unmatched`: the
 * caller looked and found none), or a row of its own. */
static gboolean put_add(PixStore *s, PixItem *item, gboolean is_unmatched, GError **error)
{
	GError *local = NULL;
	g_autoptr(PixFileRow) moved = is_unmatched ? NULL : find_moved_by_md5(s, item, &local);
	gint64 id;

	if (local != NULL) {
		g_propagate_error(error, local);
		return FALSE;
	}
	if (moved != NULL)
		return take_over(s, item, moved, error);
	if (!insert_file(s, item, &id, error))
		return FALSE;
	return put_meta(s, id, item->meta, error) && put_change(s, id, "added", item, NULL, NULL, error);
}

static gboolean put_content(PixStore *s, PixItem *item, GError **error)
{
	sqlite3_stmt *st = stmt(s, ST_FILE_UPDATE_CONTENT, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, item->row_id);
	bind_stat(st, 2, &item->st);
	bind_content(st, 8, item);
	sqlite3_bind_int64(st, 14, s->now_s);
	if (item->has_md5)
		sqlite3_bind_int64(st, 15, s->now_s);
	sqlite3_bind_int64(st, 16, item->dir->id);
	bind_path(st, 17, item->name);
	if (!step_done(s, st, "cannot update a file", error))
		return FALSE;
	if (sqlite3_changes(s->db) == 0)
		return TRUE;    /* the row is no longer at the path that was read */
	if (!put_meta(s, item->row_id, item->meta, error))
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
	sqlite3_stmt *st = stmt(s, ST_FILE_MOVE, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0 && item->row_id > 0);
	sqlite3_bind_int64(st, 1, item->row_id);
	sqlite3_bind_int64(st, 2, item->dir->id);
	bind_path(st, 3, item->name);
	sqlite3_bind_int64(st, 4, (gint64)item->old_st.dev);
	sqlite3_bind_int64(st, 5, (gint64)item->old_st.ino);
	if (!step_done(s, st, "cannot move a file", error))
		return FALSE;
	if (sqlite3_changes(s->db) == 0) {
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
		return insert_file(s, item, &id, error) && put_meta(s, id, item->meta, error) &&
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
	st = stmt(s, ST_FILE_UPDATE_STAT, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, item->row_id);
	bind_stat(st, 2, &item->st);
	return step_done(s, st, "cannot move a file", error);
}

static gboolean put_missing(PixStore *s, PixItem *item, GError **error)
{
	sqlite3_stmt *st = stmt(s, ST_FILE_MISSING, error);
	if (st == NULL)
		return FALSE;
	g_assert(item->dir->id > 0);
	sqlite3_bind_int64(st, 1, item->row_id);
	sqlite3_bind_int64(st, 2, s->now_s);
	sqlite3_bind_int64(st, 3, item->dir->id);
	bind_path(st, 4, item->name);
	if (!step_done(s, st, "cannot mark a file missing", error))
		return FALSE;
	if (sqlite3_changes(s->db) == 0)
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
	sqlite3_stmt *st = stmt(s, ST_FILE_VERIFY, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, item->row_id);
	sqlite3_bind_int64(st, 2, s->now_s);
	sqlite3_bind_text(st, 3, state, -1, SQLITE_STATIC);
	if (strcmp(state, "mismatch") == 0)
		sqlite3_bind_blob(st, 4, item->md5, 16, SQLITE_STATIC);
	bind_text_or_null(st, 5, item->error);
	sqlite3_bind_int64(st, 6, (gint64)item->old_st.dev);
	sqlite3_bind_int64(st, 7, (gint64)item->old_st.ino);
	sqlite3_bind_int64(st, 8, item->old_st.size_bytes);
	sqlite3_bind_int64(st, 9, item->old_st.mtime_ns);
	return step_done(s, st, "cannot record a verification", error);
}

/* pix_store_put(); `is_unmatched`: an ADD item was looked for among the
 * moved rows already, and matched none (see pix_store_consume). */
static gboolean store_put(PixStore *s, PixItem *item, gboolean is_unmatched, GError **error)
{
	gboolean ok;

	g_assert(store_check(s) && s->mode == PIX_STORE_WRITE);
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
		ok = item->is_vanished || put_add(s, item, is_unmatched, error);
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
	return store_put(s, item, FALSE, error);
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

/* The batch being filled by pix_store_consume(). */
typedef struct {
	guint batch_items;
	gint64 batch_us;
	guint n_items;
	gint64 start_us;        /* when its first item came */
	gint64 busy_us;         /* time spent writing it so far */
	gint64 last_commit_us;
} Batch;

/* Commits the batch when it is full or old enough (or `is_final`). */
static gboolean batch_maybe_commit(PixStore *s, Batch *b, gboolean is_final, GError **error)
{
	gint64 t0 = g_get_monotonic_time();
	if (b->n_items == 0 ||
	    (!is_final && b->n_items < b->batch_items && t0 - b->start_us < b->batch_us))
		return TRUE;
	gint64 n_new = s->counts[PIX_N_NEW];
	if (!pix_store_commit(s, error))
		return FALSE;
	gint64 now = g_get_monotonic_time();
	account_batch(s, b->n_items, n_new, b->busy_us + (now - t0), now - b->last_commit_us);
	b->last_commit_us = now;
	b->busy_us = 0;
	b->n_items = 0;
	return TRUE;
}

static gboolean batch_put(PixStore *s, Batch *b, PixItem *item, gboolean is_unmatched, GError **error)
{
	gint64 t0 = g_get_monotonic_time();
	if (b->n_items == 0)
		b->start_us = t0;
	if (!store_put(s, item, is_unmatched, error))
		return FALSE;
	b->n_items++;
	b->busy_us += g_get_monotonic_time() - t0;
	return batch_maybe_commit(s, b, FALSE, error);
}

/*
 * Items held back until the input ends, when plan has stored every move it
 * found by inode: a new file whose content matches a row whose path is
 * gone (it may take that row over, see find_moved_by_md5, but only once no
 * rename claims the row), and the end-of-walk missing files and
 * directories (so that a file that turned up elsewhere is recorded as
 * moved, not also as missing).  They are written in that order, each kind
 * in arrival order (a directory after its files).  Bounded: at this many,
 * they are written at once, in the same order.
 */
#define MAX_DEFERRED 20000

typedef struct {
	GPtrArray *adds;          /* PixItem (owned) */
	GPtrArray *missing;       /* PixItem (owned) */
} Deferred;

/* Whether `item` waits for the end of the input (see Deferred); FALSE
 * with `error` set when the catalog could not be read. */
static gboolean is_to_defer(PixStore *s, const PixItem *item, gboolean *is_deferred, GError **error)
{
	GError *local = NULL;
	*is_deferred = item->action == PIX_ACT_MISSING || item->action == PIX_ACT_DIR_MISSING;
	if (item->action != PIX_ACT_ADD || item->is_vanished)
		return TRUE;
	g_autoptr(PixFileRow) row = find_moved_by_md5(s, item, &local);
	if (local != NULL) {
		g_propagate_error(error, local);
		return FALSE;
	}
	*is_deferred = row != NULL;
	return TRUE;
}

static gboolean put_deferred(PixStore *s, Batch *b, Deferred *d, GError **error)
{
	GPtrArray *lists[] = { d->adds, d->missing };
	for (guint l = 0; l < G_N_ELEMENTS(lists); l++) {
		for (guint i = 0; i < lists[l]->len; i++)
			if (!batch_put(s, b, g_ptr_array_index(lists[l], i), FALSE, error))
				return FALSE;
		g_ptr_array_set_size(lists[l], 0);
	}
	return TRUE;
}

/* Items taken from the store queue at once. */
#define CONSUME_BATCH 256

gboolean pix_store_consume(PixStore *s, PixQueue *in, guint batch_items, gint64 batch_us, GError **error)
{
	gboolean is_failed = FALSE;
	Batch b = { .batch_items = batch_items, .batch_us = batch_us, .last_commit_us = g_get_monotonic_time() };
	Deferred d = { .adds = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	               .missing = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free) };

	for (;;) {
		gboolean is_timeout = FALSE;
		gint64 wait_us = -1;
		gpointer items[CONSUME_BATCH];
		if (b.n_items > 0)
			wait_us = MAX(0, b.start_us + batch_us - g_get_monotonic_time());
		/* what the hashers handed over since the last look, at once */
		guint n = pix_queue_pop_many(in, items, CONSUME_BATCH, wait_us, &is_timeout);

		if (n == 0 && !is_timeout)
			break;
		for (guint i = 0; i < MAX(n, 1); i++) {
			g_autoptr(PixItem) item = n > 0 ? items[i] : NULL;
			if (is_failed)
				continue;
			gboolean is_ok, is_deferred = FALSE;
			if (item == NULL) {
				is_ok = batch_maybe_commit(s, &b, FALSE, error);
			} else if (!(is_ok = is_to_defer(s, item, &is_deferred, error))) {
				/* the catalog failed */
			} else if (is_deferred) {
				GPtrArray *to = item->action == PIX_ACT_ADD ? d.adds : d.missing;
				g_ptr_array_add(to, g_steal_pointer(&item));
				is_ok = d.adds->len + d.missing->len < MAX_DEFERRED || put_deferred(s, &b, &d, error);
			} else {
				/* an ADD not deferred was looked for: no need to again */
				is_ok = batch_put(s, &b, item, item->action == PIX_ACT_ADD, error);
			}
			if (!is_ok) {
				/* a look-up that failed (is_to_defer) leaves the batch open:
				 * what it holds is not committed with the run's end */
				rollback_batch(s);
				is_failed = TRUE;
				pix_request_stop();
			}
		}
	}
	if (!is_failed)
		is_failed = !put_deferred(s, &b, &d, error) || !batch_maybe_commit(s, &b, TRUE, error);
	g_ptr_array_free(d.adds, TRUE);
	g_ptr_array_free(d.missing, TRUE);
	return !is_failed;
}

/* --- reader --- */

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

static PixFileRow *file_row_from(sqlite3_stmt *st)
{
	PixFileRow *row = g_new0(PixFileRow, 1);
	row->id = sqlite3_column_int64(st, 0);
	row->name = column_bytes(st, 1);
	row->st.dev = (guint64)sqlite3_column_int64(st, 2);
	row->st.ino = (guint64)sqlite3_column_int64(st, 3);
	row->st.mode = (guint32)sqlite3_column_int64(st, 4);
	row->st.size_bytes = sqlite3_column_int64(st, 5);
	row->st.mtime_ns = sqlite3_column_int64(st, 6);
	row->st.ctime_ns = sqlite3_column_int64(st, 7);
	row->state = state_from(sqlite3_column_text(st, 8));
	if (sqlite3_column_bytes(st, 9) == 16) {
		row->has_md5 = TRUE;
		memcpy(row->md5, sqlite3_column_blob(st, 9), 16);
	}
	row->is_recheck = sqlite3_column_int(st, 10) != 0;
	return row;
}

static GPtrArray *collect_file_rows(PixStore *s, sqlite3_stmt *st, gboolean has_dir_path, GError **error)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		PixFileRow *row = file_row_from(st);
		if (has_dir_path) {
			row->dir_path = column_bytes(st, 11);
			row->dir_fsid = (guint64)sqlite3_column_int64(st, 12);
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
	if (!dir_key(s, dir, FALSE, &vol_id, &rel, error))
		return FALSE;
	if (vol_id == 0)
		return TRUE;    /* a volume the catalog does not know yet */
	sqlite3_stmt *st = stmt(s, ST_FIND_DIR, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, vol_id);
	bind_path(st, 2, rel);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*row = g_new0(PixDirRow, 1);
		(*row)->id = sqlite3_column_int64(st, 0);
		(*row)->path = column_bytes(st, 1);
		(*row)->state = state_from(sqlite3_column_text(st, 2));
		rc = sqlite3_step(st);
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
	sqlite3_stmt *st = stmt(s, ST_DIR_FILES, error);
	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, dir_id);
	return collect_file_rows(s, st, FALSE, error);
}

GPtrArray *pix_store_files_by_inode(PixStore *s, guint64 dev, guint64 ino, GError **error)
{
	sqlite3_stmt *st = stmt(s, ST_FILES_BY_INODE, error);
	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, (gint64)dev);
	sqlite3_bind_int64(st, 2, (gint64)ino);
	return collect_file_rows(s, st, TRUE, error);
}

GPtrArray *pix_store_dirs_under(PixStore *s, const char *root, GError **error)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)pix_dir_row_free);
	sqlite3_stmt *st = stmt(s, ST_DIRS_UNDER, error);
	gsize len = strlen(root);
	int rc;

	if (st == NULL)
		return NULL;
	bind_path_as(st, 1, root, len, FALSE);
	bind_path_as(st, 2, root, len, TRUE);
	bind_below(st, 3, root);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		PixDirRow *row = g_new0(PixDirRow, 1);
		row->id = sqlite3_column_int64(st, 0);
		row->path = column_bytes(st, 1);
		row->state = state_from(sqlite3_column_text(st, 2));
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
	sqlite3_stmt *st = stmt(s, ST_HAS_DEV, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, (gint64)dev);
	int rc = sqlite3_step(st);
	*has = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	sqlite3_reset(st);
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
	if (!dir_key(s, dir, FALSE, &vol_id, &rel, error))
		return FALSE;
	if (vol_id == 0)
		return TRUE;    /* a volume the catalog does not know yet */
	sqlite3_stmt *st = stmt(s, ST_DIR_STAT, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, vol_id);
	bind_path(st, 3, rel);
	sqlite3_bind_int64(st, 2, trusted_scan_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		gint64 listed_ns = sqlite3_column_int64(st, 5) * G_GINT64_CONSTANT(1000000000);
		/* an mtime within two seconds of the listing run's start is not
		 * trusted: an entry added in the same clock tick as the listing
		 * (FAT: in the same two seconds) leaves it unchanged */
		if ((guint64)sqlite3_column_int64(st, 1) == dir->st.dev &&
		    (guint64)sqlite3_column_int64(st, 2) == dir->st.ino &&
		    sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    sqlite3_column_int64(st, 3) == dir->st.mtime_ns &&
		    sqlite3_column_int64(st, 4) == dir->st.ctime_ns &&
		    dir->st.mtime_ns < listed_ns - G_GINT64_CONSTANT(2000000000))
			id = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read a directory row");
		return FALSE;
	}
	if (id == 0)
		return TRUE;

	st = stmt(s, ST_DIR_FILE_COUNTS, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*n_files = sqlite3_column_int64(st, 0);
		n_to_read = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	if (n_to_read > 0)
		return TRUE;

	st = stmt(s, ST_SUBDIRS, error);
	if (st == NULL)
		return FALSE;
	sqlite3_bind_int64(st, 1, id);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g_autofree char *path = column_bytes(st, 0);
		const char *slash = strrchr(path, '/');
		g_ptr_array_add(names, g_strdup(slash != NULL ? slash + 1 : path));
	}
	sqlite3_reset(st);
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

void pix_store_bind_under(sqlite3_stmt *st, int first, char **paths)
{
	for (guint i = 0; paths != NULL && paths[i] != NULL; i++) {
		int p = first + 7 * (int)i;
		g_autofree char *dir = g_path_get_dirname(paths[i]);
		g_autofree char *name = g_path_get_basename(paths[i]);

		bind_path(st, p, paths[i]);
		bind_below(st, p + 1, paths[i]);
		bind_path(st, p + 5, dir);
		bind_path(st, p + 6, name);
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
	g_autoptr(sqlite3_stmt) st = NULL;
	gint64 key = -1, is_verified = 0, id = 0;
	int rc;

	pix_store_sql_under(sql, "d.path", "f.name", n_paths, 5);
	g_string_append_printf(sql, " ORDER BY coalesce(f.verified_at, f.hashed_at, 0), f.verified_at IS NOT NULL, f.id"
	                       " LIMIT %d", VERIFY_PAGE);
	rc = sqlite3_prepare_v2(s->db, sql->str, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
		return FALSE;
	}
	pix_store_bind_under(st, 5, paths);
	sqlite3_bind_int64(st, 4, before_s);
	for (;;) {
		g_autoptr(GPtrArray) page = g_ptr_array_new_with_free_func((GDestroyNotify)pix_file_row_free);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, key);
		sqlite3_bind_int64(st, 2, is_verified);
		sqlite3_bind_int64(st, 3, id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			PixFileRow *row = file_row_from(st);
			row->dir_path = column_bytes(st, 11);
			key = sqlite3_column_int64(st, 12);
			is_verified = sqlite3_column_int64(st, 13);
			id = row->id;
			g_ptr_array_add(page, row);
		}
		sqlite3_reset(st);      /* ends the read transaction */
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
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc = sqlite3_prepare_v2(s->db,
		"SELECT count(*), coalesce(sum(verified_at IS NULL), 0),"
		" coalesce(sum(CASE WHEN verified_at IS NULL THEN size ELSE 0 END), 0), coalesce(min(verified_at), 0)"
		" FROM files WHERE state <> 'missing' AND md5 IS NOT NULL AND (mode & 61440) = 32768", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		pix_store_sqlite_error(error, s, rc, "cannot read file rows");
		return FALSE;
	}
	out->n_files = sqlite3_column_int64(st, 0);
	out->n_never = sqlite3_column_int64(st, 1);
	out->bytes_never = sqlite3_column_int64(st, 2);
	out->oldest_verified_at = sqlite3_column_int64(st, 3);
	return TRUE;
}

static gboolean column_md5(sqlite3_stmt *st, int i, guint8 *out)
{
	if (sqlite3_column_bytes(st, i) != 16)
		return FALSE;
	memcpy(out, sqlite3_column_blob(st, i), 16);
	return TRUE;
}

gboolean pix_store_each_change(PixStore *s, gint64 since, gint64 limit, PixStoreChangeFn fn, gpointer data,
                               GError **error)
{
	g_autoptr(sqlite3_stmt) st = NULL;
	int rc = sqlite3_prepare_v2(s->db,
		"SELECT c.seq, c.scan_id, c.file_id, c.at, c.kind, d.path, f.name, c.old_path, c.new_path,"
		" c.old_md5, c.new_md5, c.old_size, c.new_size,"
		" CASE WHEN fv.is_online = 0 AND f.state <> 'missing' THEN 'offline' ELSE f.state END,"
		" coalesce(v.ident, fv.ident), f.id IS NOT NULL"
		" FROM changes c LEFT JOIN files f ON f.id = c.file_id LEFT JOIN dirs d ON d.id = f.dir_id"
		" LEFT JOIN volumes fv ON fv.id = d.volume_id LEFT JOIN volumes v ON v.id = c.volume_id"
		" WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?2", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
		return FALSE;
	}
	sqlite3_bind_int64(st, 1, since);
	sqlite3_bind_int64(st, 2, limit > 0 ? limit : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g_autofree char *dir = column_bytes(st, 5);
		g_autofree char *name = column_bytes(st, 6);
		g_autofree char *kind = column_bytes(st, 4);
		g_autofree char *volume = sqlite3_column_type(st, 14) != SQLITE_NULL ? column_bytes(st, 14) : NULL;
		gboolean has_file = sqlite3_column_int(st, 15) != 0;
		PixChange c = {
			.seq = sqlite3_column_int64(st, 0),
			.scan_id = sqlite3_column_int64(st, 1),
			.file_id = sqlite3_column_int64(st, 2),
			.at = sqlite3_column_int64(st, 3),
			.kind = kind,
			.path = has_file ? pix_path_join(dir, name) : NULL,
			.volume = volume,
			.old_path = sqlite3_column_type(st, 7) != SQLITE_NULL ? column_bytes(st, 7) : NULL,
			.new_path = sqlite3_column_type(st, 8) != SQLITE_NULL ? column_bytes(st, 8) : NULL,
			.old_size = sqlite3_column_type(st, 11) != SQLITE_NULL ? sqlite3_column_int64(st, 11) : -1,
			.new_size = sqlite3_column_type(st, 12) != SQLITE_NULL ? sqlite3_column_int64(st, 12) : -1,
			.state = has_file ? state_from(sqlite3_column_text(st, 13)) : PIX_STATE_MISSING,
			.has_file = has_file,
		};
		c.has_old_md5 = column_md5(st, 9, c.old_md5);
		c.has_new_md5 = column_md5(st, 10, c.new_md5);
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
	g_autoptr(sqlite3_stmt) st = NULL;
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	int rc = sqlite3_prepare_v2(s->db, "SELECT path FROM roots ORDER BY path", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		pix_store_sqlite_error(error, s, rc, "cannot prepare a statement");
		return NULL;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		g_ptr_array_add(out, column_bytes(st, 0));
	if (rc != SQLITE_DONE) {
		pix_store_sqlite_error(error, s, rc, "cannot read the roots");
		return NULL;
	}
	g_ptr_array_add(out, NULL);
	g_ptr_array_set_free_func(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

gint64 pix_store_run_id(PixStore *s)
{
	return s->scan_id;
}

gboolean pix_store_end_pass(PixStore *s, GError **error)
{
	g_assert(store_check(s) && !s->in_batch);
	if (!ensure_md5_index(s, error))
		return FALSE;
	s->rows_before_run = s->catalog_rows;
	return TRUE;
}

gboolean pix_store_begin_pass(PixStore *s, GError **error)
{
	g_assert(store_check(s) && !s->in_batch);
	if (!begin_batch(s, error))
		return FALSE;
	if (!refresh_volumes(s, error)) {
		rollback_batch(s);
		return FALSE;
	}
	return pix_store_commit(s, error);
}

sqlite3 *pix_store_sqlite(PixStore *s)
{
	return s->db;
}

gboolean pix_store_forget(PixStore *s, gint64 volume_id, gboolean is_dry_run, gint64 *n_files, GError **error)
{
	static const char *const what = "cannot forget files";
	g_assert(store_check(s) && s->mode == PIX_STORE_WRITE && !s->in_batch);
	*n_files = 0;
	if (!begin_batch(s, error))
		return FALSE;
	/* the rows to forget, by id; then each step refers to them */
	if (!exec_sql(s, "CREATE TEMP TABLE IF NOT EXISTS forget_ids (id INTEGER PRIMARY KEY); DELETE FROM forget_ids",
	              what, error) ||
	    !run_ints(s, volume_id == 0
	                 ? "INSERT INTO forget_ids SELECT id FROM files WHERE state = 'missing' AND ?1 = 0"
	                 : "INSERT INTO forget_ids SELECT f.id FROM files f JOIN dirs d ON d.id = f.dir_id"
	                   " WHERE d.volume_id = ?1",
	              what, error, 1, volume_id))
		goto fail;
	*n_files = sqlite3_changes(s->db);
	/* each one's last word in the change log, then the rows */
	if (!run_ints(s, "INSERT INTO changes (file_id, at, kind, old_path, old_md5, old_size)"
	              " SELECT i.id, ?1, 'forgotten', i.path, f.md5, f.size FROM forget_ids x"
	              " JOIN file_info i ON i.id = x.id JOIN files f ON f.id = x.id ORDER BY x.id",
	              what, error, 1, now_seconds()) ||
	    !exec_sql(s, "UPDATE files SET sidecar_id = NULL WHERE sidecar_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM meta WHERE file_id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM files WHERE id IN (SELECT id FROM forget_ids);"
	              " DELETE FROM forget_ids", what, error))
		goto fail;
	if (volume_id != 0) {
		if (!run_ints(s, "UPDATE dirs SET parent_id = NULL WHERE volume_id IS NOT ?1 AND parent_id IN"
		              " (SELECT id FROM dirs WHERE volume_id = ?1)", what, error, 1, volume_id) ||
		    !run_ints(s, "DELETE FROM dirs WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !run_ints(s, "DELETE FROM roots WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !run_ints(s, "UPDATE changes SET volume_id = NULL WHERE volume_id = ?1", what, error, 1, volume_id) ||
		    !run_ints(s, "DELETE FROM volumes WHERE id = ?1", what, error, 1, volume_id))
			goto fail;
	} else {
		/* missing directories left with nothing in them, from the leaves up */
		do {
			if (!exec_sql(s, "DELETE FROM dirs WHERE state = 'missing'"
			              " AND NOT EXISTS (SELECT 1 FROM files WHERE dir_id = dirs.id)"
			              " AND NOT EXISTS (SELECT 1 FROM dirs c WHERE c.parent_id = dirs.id)", what, error))
				goto fail;
		} while (sqlite3_changes(s->db) > 0);
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

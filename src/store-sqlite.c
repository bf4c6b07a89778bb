/*
 * store-sqlite.c: the SQLite backend of the store (PixStoreBackend, see
 * store-int.h): the catalog file and what only it has: the lock file
 * beside it (which also holds the room a writer reserves, see
 * reserve_room()), the identity check, the migrations, WAL, and the MD5
 * index dropped during a first import.
 *
 * Reads and writes the catalog file, its WAL, and the lock file.  A new
 * catalog and its lock file are created 0600 whatever the umask.  Runs on
 * the thread of the PixStore it opens.
 *
 * Invariants:
 *  1. Only a writer holding the lock file's flock writes; it holds the lock
 *     from pix_store_open() to pix_store_free() (pix_store_check() checks
 *     the descriptor).
 *  2. user_version is the number of migrations applied, each applied in its
 *     own transaction together with the version bump.
 *  3. A run begun by pix_store_begin_scan() and ended by
 *     pix_store_end_scan() is never left 'running', full disk or not: its
 *     end is recorded first, in the reserved room if need be.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "store.h"
#include "store-int.h"
#include "log.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* 'PIXC': marks a SQLite file as a photoidx catalog. */
#define PIX_APPLICATION_ID 0x50495843

/* From the generated build/schema.c: the migrations in order. */
extern const char *const pix_schema_sql[];
extern const int pix_schema_count;
/* what the migrations make, in one go (build/schema-fresh.c, schema/fresh.c) */
extern const char pix_schema_fresh_sql[];
extern const int pix_schema_fresh_version;


char **pix_store_companion_paths(const char *path)
{
	char **out = g_new0(char *, 6);
	if (pix_db_is_pg_uri(path))
		return out;     /* nothing beside it on this host */
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
		g_set_error(error, PIX_STORE_ERROR, pix_store_is_full_errno(err) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_OPEN,
		            "cannot create catalog '%s': %s", q, pix_store_errno_text(err));
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
	const char *q = s->display;

	s->lock_fd = create_private(lock_path);
	if (s->lock_fd < 0 && errno == EEXIST)
		s->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lock_fd < 0) {
		int err = errno;
		g_set_error(error, PIX_STORE_ERROR, pix_store_is_full_errno(err) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_OPEN,
		            "cannot create lock file for catalog '%s': %s", q, pix_store_errno_text(err));
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
	if (!pix_store_is_full_errno(err))
		return TRUE;    /* no fallocate here: the end record takes its chance */
	const char *q = s->display;
	g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_FULL, "cannot reserve room for catalog '%s': %s", q,
	            pix_store_errno_text(err));
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

/* The number of tables, indexes, views and triggers in the catalog. */
static gboolean count_objects(PixStore *s, gint64 *n, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_db_prepare(s->db, "SELECT count(*) FROM sqlite_schema", &st);
	if (rc == PIX_DB_OK && pix_db_step(st) == PIX_DB_ROW) {
		*n = pix_db_column_int64(st, 0);
		return TRUE;
	}
	pix_store_db_error(error, s, rc == PIX_DB_OK ? pix_db_errcode(s->db) : rc, "cannot read its schema");
	return FALSE;
}

/* Refuses files that are not photoidx catalogs, or newer ones. */
static gboolean check_identity(PixStore *s, gint64 *version, GError **error)
{
	gint64 app_id, n_objects = 0;
	const char *q = s->display;

	if (!pix_store_pragma_int(s, "application_id", &app_id, error) || !pix_store_pragma_int(s, "user_version", version, error))
		return FALSE;
	if (*version == 0 && app_id == 0 && !count_objects(s, &n_objects, error))
		return FALSE;
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

/*
 * A new catalog (version 0, nothing in it) gets the schema the migrations
 * make in one transaction of the statements they leave: each ALTER TABLE
 * of a migration makes SQLite parse the whole schema again, and the 43 of
 * them took 24 ms of processor time, 4% of an import of 40,000 small
 * files.  FALSE with `error` set when it failed; `*is_made` says whether
 * it applied (else the migrations run).
 */
static gboolean make_fresh(PixStore *s, gint64 version, gboolean *is_made, GError **error)
{
	*is_made = FALSE;
	if (version != 0 || pix_schema_fresh_version != pix_schema_count)
		return TRUE;
	if (!pix_store_exec(s, "BEGIN IMMEDIATE", "cannot make its schema", error))
		return FALSE;
	gint64 n_objects = 0;
	if (!count_objects(s, &n_objects, error)) {
		pix_db_exec(s->db, "ROLLBACK");
		return FALSE;
	}
	if (n_objects != 0)
		return pix_store_exec(s, "ROLLBACK", "cannot make its schema", error);
	g_autofree char *bump = g_strdup_printf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
	                                        PIX_APPLICATION_ID, pix_schema_count);
	if (!pix_store_exec(s, pix_schema_fresh_sql, "cannot make its schema", error) ||
	    !pix_store_exec(s, bump, "cannot make its schema", error) ||
	    !pix_store_exec(s, "COMMIT", "cannot make its schema", error)) {
		pix_db_exec(s->db, "ROLLBACK");
		return FALSE;
	}
	*is_made = TRUE;
	return TRUE;
}

static gboolean migrate(PixStore *s, gint64 version, GError **error)
{
	if (version >= pix_schema_count)
		return TRUE;
	gboolean is_made = FALSE;
	if (!make_fresh(s, version, &is_made, error))
		return FALSE;
	if (is_made)
		return TRUE;
	/* a migration that makes a table anew drops the old one, which
	 * foreign keys would refuse; they are checked again after */
	if (!pix_store_exec(s, "PRAGMA foreign_keys = OFF", "cannot migrate it", error))
		return FALSE;
	for (int v = (int)version + 1; v <= pix_schema_count; v++) {
		g_autofree char *bump = g_strdup_printf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
		                                        PIX_APPLICATION_ID, v);
		g_autofree char *what = g_strdup_printf("cannot apply schema migration %d", v);
		if (!pix_store_exec(s, "BEGIN IMMEDIATE", what, error))
			return FALSE;
		if (!pix_store_exec(s, pix_schema_sql[v - 1], what, error) ||
		    (v == PIX_SQLITE_TEXT_KEYS_VERSION && !pix_store_fill_text_keys(s, error)) ||
		    !pix_store_exec(s, bump, what, error) || !pix_store_exec(s, "COMMIT", what, error)) {
			pix_db_exec(s->db, "ROLLBACK");
			return FALSE;
		}
	}
	/* what the migrations made should still hold together: said, not
	 * refused (a catalog that cannot be opened helps no one) */
	g_autoptr(PixStmt) check = NULL;
	int rc = pix_db_prepare(s->db, "PRAGMA foreign_key_check", &check);
	if (rc == PIX_DB_OK)
		rc = pix_db_step(check);
	if (rc == PIX_DB_ROW)
		pix_warn("catalog '%s': after its upgrade, table %s refers to a row of %s that is not there",
		         s->display, (const char *)pix_db_column_text(check, 0), (const char *)pix_db_column_text(check, 2));
	else if (rc != PIX_DB_DONE) {
		pix_store_db_error(error, s, rc, "cannot migrate it");
		return FALSE;
	}
	return TRUE;
}

/* The writer's page cache, in KiB; and each sorting thread's buffer while
 * the MD5 index of a first import is built (see end_first_import()). */
#define CACHE_KIB 16384
#define SORT_CACHE_KIB 4096

/*
 * The index of files by MD5 takes inserts at random places: on a large
 * first import its pages are rewritten by every batch, more of them the
 * larger it grows.  A first import into an empty catalog therefore runs
 * without it (nothing can be found by MD5 in an empty catalog) and builds
 * it at the end, in one sorted pass: writes stay as fast at 500,000 files
 * as at the first.  A run killed before the end leaves it to the next
 * writer, which builds it on opening.
 */
static gboolean end_first_import(PixStore *s, GError **error)
{
	/* the sort on both cores: the pipeline has ended, this is all that
	 * runs (1.73 s against 1.43 s for a million rows, measured with the
	 * sqlite3 shell; no helper thread is started for an index that
	 * exists).  Each sorting thread takes a buffer of the cache's size,
	 * so the cache is cut to 4 MiB for it.  Measured with the sqlite3
	 * shell on a catalog of a million files: one thread, 16 MiB: 0.98 s,
	 * 37 MB; two threads, 16 MiB: 0.91 s, 60 MB (the peak RSS of a
	 * million-file import went from 64 MB to 100 MB at its end); two
	 * threads, 4 MiB: 0.82-0.88 s, 21 MB (the import's peak: 72 MB). */
	return pix_store_exec(s,
	                      "PRAGMA threads = 2; PRAGMA cache_size = -" G_STRINGIFY(SORT_CACHE_KIB) ";"
	                      "CREATE INDEX IF NOT EXISTS files_by_md5 ON files (md5);"
	                      "PRAGMA threads = 0; PRAGMA cache_size = -" G_STRINGIFY(CACHE_KIB),
	                      "cannot index it by MD5", error);
}

/* WAL: readers (front ends, plan) never block the writer, and never see a
 * half-written batch. */
static gboolean set_wal(PixStore *s, GError **error)
{
	g_autoptr(PixStmt) st = NULL;
	int rc = pix_db_prepare(s->db, "PRAGMA journal_mode = WAL", &st);
	if (rc == PIX_DB_OK)
		rc = pix_db_step(st);
	if (rc != PIX_DB_ROW) {
		pix_store_db_error(error, s, rc, "cannot switch it to WAL mode");
		return FALSE;
	}
	const char *mode = (const char *)pix_db_column_text(st, 0);
	if (mode == NULL || g_ascii_strcasecmp(mode, "wal") != 0) {
		const char *q = s->display;
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "catalog '%s': cannot use WAL mode on this file system", q);
		return FALSE;
	}
	return TRUE;
}

/*
 * Process-wide SQLite settings, once, before its first connection: no
 * memory statistics (kept under a global mutex on every allocation, which
 * the writer makes several of per row, and which nothing here reads); and
 * statement journals kept in memory up to 1 MiB.  A statement that writes
 * several rows (the kept inserts, db.h) journals the pages it changes, 16
 * rows over the tables' ten indexes about 80 KiB, which SQLite spilled to
 * a file in /var/tmp past its default 64 KiB: 38,000 of the 55,000 pwrite
 * calls of a 50,000-file import.  (Not temp_store = MEMORY, which would
 * also keep the sorter of a CREATE INDEX in memory: 55 MB more at the end
 * of a million-file import.)
 */
static void configure_sqlite(void)
{
	static gsize is_done = 0;
	if (g_once_init_enter(&is_done)) {
		if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK ||
		    sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, 1024 * 1024) != SQLITE_OK)
			pix_info("SQLite was initialised already: its memory statistics stay on, its statement journals spill at 64 KiB");
		g_once_init_leave(&is_done, 1);
	}
}

static gboolean ensure_parent_dir(const char *path, GError **error)
{
	g_autofree char *dir = g_path_get_dirname(path);
	if (g_mkdir_with_parents(dir, 0700) != 0) {
		int err = errno;
		g_autofree char *q = pix_quote(dir), *qc = pix_quote(path);
		g_set_error(error, PIX_STORE_ERROR, pix_store_is_full_errno(err) ? PIX_STORE_ERROR_FULL : PIX_STORE_ERROR_OPEN,
		            "cannot create directory '%s' for catalog '%s': %s", q, qc, pix_store_errno_text(err));
		return FALSE;
	}
	return TRUE;
}

/* A SQLite catalog: the file at s->path. */
static gboolean open_sqlite(PixStore *s, gint64 *version, GError **error)
{
	gboolean is_no_wait = s->is_no_wait;
	const char *path = s->path, *q = s->display;
	int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;

	/* before anything is made beside it (the lock file) */
	if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN, "'%s' is a directory, not a catalog file", q);
		return FALSE;
	}
	if (s->mode == PIX_STORE_READ && !g_file_test(path, G_FILE_TEST_EXISTS)) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN,
		            "there is no catalog '%s' yet: 'photoidx scan PATH' makes it", q);
		return FALSE;
	}
	if (s->mode == PIX_STORE_WRITE) {
		if (!ensure_parent_dir(path, error) || !take_lock(s, is_no_wait, error) || !reserve_room(s, error) ||
		    !create_catalog(path, error))
			return FALSE;
		flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	} else {
		flags |= SQLITE_OPEN_READONLY;
	}
	configure_sqlite();
	sqlite3 *lite = NULL;
	int rc = sqlite3_open_v2(path, &lite, flags, NULL);
	if (lite == NULL) {
		g_set_error(error, PIX_STORE_ERROR, PIX_STORE_ERROR_OPEN, "cannot open catalog '%s'", q);
		return FALSE;
	}
	s->db = pix_db_wrap_sqlite(lite);
	if (rc != SQLITE_OK) {
		pix_store_db_error(error, s, rc, "cannot open it");
		return FALSE;
	}
	sqlite3_busy_timeout(lite, 60000);
	if (!check_identity(s, version, error))
		return FALSE;
	if (s->mode == PIX_STORE_WRITE) {
		if (!set_wal(s, error))
			return FALSE;
		/* 16 MiB of page cache: the MD5 and inode indexes take inserts at
		 * random places, and a 2 MiB cache misses on nearly every one.
		 * The schema's CHECKs (state IN (...), kind IN (...)) are not
		 * evaluated for this connection: SQLite builds a temporary
		 * b-tree for each IN list of each row it checks, which cost a
		 * fifth of the writer's time on an import, and every value this
		 * writer puts there is one of the constants the CHECK lists
		 * (pix_store_state_name(), the change kinds).  They still guard any other
		 * writer (the sqlite3 shell), and the migrations, which run before.
		 * Foreign keys are not enforced for it either, for the same
		 * reason: each row it writes names the directory, file or run it
		 * has just written or read (a look-up by key per reference, four
		 * per new file, 7% of the writer's instructions on an import);
		 * the tests check every catalog they make with
		 * foreign_key_check, and migrate() checks after a migration.
		 * (Statement journals: see configure_sqlite().) */
		if (!pix_store_exec(s, "PRAGMA synchronous = FULL; PRAGMA cache_size = -" G_STRINGIFY(CACHE_KIB) ";", "cannot set it up", error) ||
		    !migrate(s, *version, error) || !end_first_import(s, error) ||
		    !pix_store_exec(s, "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF",
		                    "cannot set it up", error))
			return FALSE;
		*version = pix_schema_count;
	}
	return TRUE;
}

/* See end_first_import(). */
static gboolean begin_first_import(PixStore *s, GError **error)
{
	return pix_store_exec(s, "DROP INDEX IF EXISTS files_by_md5", "cannot record the scan", error);
}

/* One writer at a time, by the lock file; killed runs are all those left
 * 'running' (the lock says no other writer runs); change-log entries
 * written at once. */
const PixStoreBackend pix_store_sqlite_backend = {
	.name = "SQLite",
	.schema_count = &pix_schema_count,
	.open = open_sqlite,
	.has_lock_file = TRUE,
	.sql_kill_lost_runs = "UPDATE scans SET state = 'killed' WHERE state = 'running'",
	.sql_insert_run = "INSERT INTO scans (command, roots, started_at, state) VALUES (?1, ?2, ?3, 'running')"
	                  " RETURNING id",
	.sql_root_upsert = ROOT_UPSERT("rel_path"),
	.release_room = release_room,
	.begin_first_import = begin_first_import,
	.end_first_import = end_first_import,
	.put_change = pix_store_insert_change_row,
	.has_legacy_rows = TRUE,
	.sql_volumes_seen = VOLUMES_SEEN("1"),
	.sql_volume_found = VOLUME_FOUND(""),
	.sql_volume_other_host = "NULL",
	.like = "LIKE",
	.corrupt_hint = "; the catalog is damaged: restore it from a backup, or move it aside and scan again"
	                " ('sqlite3 CATALOG .recover' saves what it can)",
};

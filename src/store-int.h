/*
 * store-int.h: what the store*.c files share and nothing else sees: the
 * SQLite handle of a PixStore and the helpers every query needs.
 *
 * Thread-safety: as PixStore.
 */
#ifndef PIX_STORE_INT_H
#define PIX_STORE_INT_H

#include "store.h"
#include "log.h"

#include <sqlite3.h>

/* The connection (transfer none). */
sqlite3 *pix_store_sqlite(PixStore *s);

/* Sets `error` from SQLite's state after a call that failed with `rc`:
 * "catalog 'PATH': WHAT: MESSAGE", with the PixStoreError code that fits
 * (FULL, CORRUPT, OPEN, FAILED). */
void pix_store_sqlite_error(GError **error, PixStore *s, int rc, const char *what);

/* Appends " AND (...)" to `sql`: the file (directory column `dir_col`,
 * name column `name_col`) is one of `n_paths` paths or below one, with 7
 * parameters per path from ?first on; nothing when n_paths is 0.  Bind
 * them with pix_store_bind_under(). */
void pix_store_sql_under(GString *sql, const char *dir_col, const char *name_col, guint n_paths, int first);
/* Binds the parameters of pix_store_sql_under() for `paths` (absolute,
 * NULL-terminated; NULL: none). */
void pix_store_bind_under(sqlite3_stmt *st, int first, char **paths);

/* Directory rows of volumes mounted now (or not yet placed on one): an
 * offline volume's rows are neither found nor marked missing. */
#define ONLINE_DIR " AND (d.volume_id IS NULL OR d.volume_id IN (SELECT id FROM volumes WHERE is_online))"

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

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sqlite3_stmt, sqlite3_finalize)

/* store.c: the shared helpers of the store*.c files */
sqlite3_stmt *pix_store_stmt(PixStore *s, StatementId id, GError **error);
gint64 pix_store_now(void);
gboolean pix_store_check(PixStore *s);
gboolean pix_store_is_full_errno(int err);
const char *pix_store_errno_text(int err);
gboolean pix_store_exec(PixStore *s, const char *sql, const char *what, GError **error);
gboolean pix_store_pragma_int(PixStore *s, const char *pragma, gint64 *out, GError **error);
void pix_store_bind_path(sqlite3_stmt *st, int i, const char *bytes);
void pix_store_bind_path_as(sqlite3_stmt *st, int i, const char *bytes, gsize len, gboolean is_blob);
void pix_store_bind_below(sqlite3_stmt *st, int first, const char *path);
void pix_store_bind_text_or_null(sqlite3_stmt *st, int i, const char *text);
void pix_store_bind_double_or_null(sqlite3_stmt *st, int i, double v);
void pix_store_bind_int_or_null(sqlite3_stmt *st, int i, gint64 v);
char *pix_store_column_bytes(sqlite3_stmt *st, int i);
gboolean pix_store_step_done(PixStore *s, sqlite3_stmt *st, const char *what, GError **error);
const char *pix_store_state_name(PixFileState state);
PixFileState pix_store_state_from(const unsigned char *text);
gboolean pix_store_release_room(PixStore *s);
gboolean pix_store_ensure_md5_index(PixStore *s, GError **error);
gboolean pix_store_query_int(PixStore *s, sqlite3_stmt *st, gint64 *out, GError **error);
GPtrArray *pix_store_collect_file_rows(PixStore *s, sqlite3_stmt *st, gboolean has_dir_path, GError **error);
gboolean pix_store_column_md5(sqlite3_stmt *st, int i, guint8 *out);
/* store-write.c: the volume (found, or made when `is_create`) and the
 * path relative to it of directory `d`; *vol_id 0 when none is known. */
gboolean pix_store_dir_key(PixStore *s, const PixDir *d, gboolean is_create, gint64 *vol_id, char **rel_path,
                           GError **error);

#endif

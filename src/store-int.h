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

#include "db.h"

/* The connection (transfer none). */
PixDb *pix_store_db(PixStore *s);

/* Sets `error` from the connection's state after a call that failed with `rc`:
 * "catalog 'PATH': WHAT: MESSAGE", with the PixStoreError code that fits
 * (FULL, CORRUPT, OPEN, FAILED). */
void pix_store_db_error(GError **error, PixStore *s, int rc, const char *what);

/* Appends " AND (...)" to `sql`: the file (directory column `dir_col`,
 * name column `name_col`) is one of `n_paths` paths or below one, with 7
 * parameters per path from ?first on; nothing when n_paths is 0.  Bind
 * them with pix_store_bind_under(). */
void pix_store_sql_under(GString *sql, const char *dir_col, const char *name_col, guint n_paths, int first);
/* Binds the parameters of pix_store_sql_under() for `paths` (absolute,
 * NULL-terminated; NULL: none). */
void pix_store_bind_under(PixStmt *st, int first, char **paths);

/* Directory rows of volumes mounted now (or not yet placed on one): an
 * offline volume's rows are neither found nor marked missing. */
#define ONLINE_VOLUMES "(SELECT id FROM volumes WHERE is_online <> 0)"
/* PostgreSQL: this host's name (PixStore.host), as the connection's
 * photoidx.host holds it from its start (store-pg.c) */
#define PG_THIS_HOST "current_setting('photoidx.host')"
#define ONLINE_DIR " AND (d.volume_id IS NULL OR d.volume_id IN " ONLINE_VOLUMES ")"
/* PostgreSQL (schema/pg/0002): the identities of dirs, roots and volumes
 * are unique on the SHA-256 of the path or ident, which the upserts name
 * (ON CONFLICT (volume_id, PG_KEY("rel_path"))) and the lookups compare
 * before the path itself; dirs_by_path is on a path's first PG_PREFIX
 * bytes.  Both because a btree entry holds at most 2704 bytes. */
#define PG_KEY(col) "sha256(" col ")"
#define PG_PREFIX 1024
#define PG_PRE(col) "substring(" col " FROM 1 FOR " G_STRINGIFY(PG_PREFIX) ")"

/*
 * Values a set look-up binds at once (ST_FIND_DIRS, ST_DIRS_FILES,
 * ST_FILES_BY_INODES, ST_FILES_BY_MD5S, ST_SIDECAR_DIRS: `x IN (?, ?, ...)`, the values not
 * bound are NULL, which nothing equals): the rows for that many
 * directories, inodes or contents cost one round trip to the server, not
 * one each.
 */
#define PIX_STORE_SET 256

typedef enum {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_DIR_UPSERT,
	ST_DIR_UPSERT_KNOWN,
	ST_DIR_MISSING,
	ST_FILE_INSERT,
	ST_FILE_UPDATE_CONTENT,
	ST_FILE_UPDATE_STAT,
	ST_FILE_MOVE,
	ST_FILE_MISSING,
	ST_FILE_TAKE_OVER,
	ST_FILE_VERIFY,
	ST_FILES_BY_MD5S,
	ST_META_REPLACE,
	ST_META_INSERT,
	ST_META_DELETE,
	ST_CHANGE_INSERT,
	ST_FIND_DIRS,
	ST_DIRS_FILES,
	ST_FILES_BY_INODES,
	ST_DIRS_UNDER,
	ST_HAS_DEV,
	ST_DIR_STAT,
	ST_DIR_FILE_COUNTS,
	ST_SUBDIRS,
	ST_FILE_AT,
	ST_SIDECAR_DIRS,
	ST_SIDECAR_IMAGES,
	ST_SIDECAR_LINK,
	ST_SIDECAR_UNLEND,
	ST_SIDECAR_META_ROW,
	ST_SIDECAR_LEND,
	ST_VOLUME_FIND,
	ST_VOLUME_INSERT,
	ST_SEQ_LOCK,            /* PostgreSQL only: the change log's order (store-pg.c) */
	ST_SEQ_MAX,
	ST_CHANGE_INSERT_SEQ,
	ST_SEQ_ASSIGN,
	ST_SEQ_NOTIFY,
	N_STATEMENTS
} StatementId;

struct PixStore {
	PixDb *db;
	char *path;
	char *display;          /* the catalog as messages name it (quoted; a
	                           PostgreSQL URI without its password) */
	PixStoreMode mode;
	gboolean is_no_wait;    /* a lock held by another writer fails at once */
	int lock_fd;            /* -1 for readers */
	gboolean has_room;      /* RESERVE_BYTES are allocated past the lock
	                           file's end (see reserve_room()) */
	PixStmt *stmts[N_STATEMENTS];
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
	GArray *pg_changes;     /* PostgreSQL: PixChangeRow, the open batch's
	                           change-log entries, written at its commit */
	GHashTable *pg_locked;  /* PostgreSQL: the volume ids whose lock this
	                           session holds */
};

/* A change-log entry to write (store-write.c). Strings borrowed, but for
 * those held in PixStore.pg_changes, which are owned. */
typedef struct {
	gint64 file_id, volume_id;  /* 0: NULL */
	const char *kind;           /* static */
	char *old_path, *new_path;  /* NULL: none */
	gboolean has_old_md5, has_new_md5, has_old_size, has_new_size;
	guint8 old_md5[16], new_md5[16];
	gint64 old_size, new_size;
} PixChangeRow;


/* store.c: the shared helpers of the store*.c files */
/* Prepares `sql` on s->db.  On PostgreSQL, where hosts share the catalog,
 * ONLINE_VOLUMES means the volumes mounted on this host (photoidx.host,
 * set when it connects): a path, a device and an inode are this host's. */
int pix_store_prepare(PixStore *s, const char *sql, PixStmt **out);
PixStmt *pix_store_stmt(PixStore *s, StatementId id, GError **error);
/* Prepares every statement of the table that s's backend runs (*n of
 * them): a dialect mistake fails here, not at the first run that reaches
 * the statement (tests/unit/test-store.c, on both backends). */
gboolean pix_store_prepare_all(PixStore *s, guint *n, GError **error);
gint64 pix_store_now(void);
gboolean pix_store_check(PixStore *s);
/* Forgets what the store kept of its open batch (the batch itself rolled
 * back, or gone with its connection): counts, dirty paths, change-log
 * entries, the volume ids it wrote. */
void pix_store_batch_gone(PixStore *s);
gboolean pix_store_is_full_errno(int err);
const char *pix_store_errno_text(int err);
gboolean pix_store_exec(PixStore *s, const char *sql, const char *what, GError **error);
gboolean pix_store_pragma_int(PixStore *s, const char *pragma, gint64 *out, GError **error);
void pix_store_bind_path(PixStmt *st, int i, const char *bytes);
void pix_store_bind_path_as(PixStmt *st, int i, const char *bytes, gsize len, gboolean is_blob);
void pix_store_bind_below(PixStmt *st, int first, const char *path);
void pix_store_bind_text_or_null(PixStmt *st, int i, const char *text);
void pix_store_bind_double_or_null(PixStmt *st, int i, double v);
void pix_store_bind_int_or_null(PixStmt *st, int i, gint64 v);
char *pix_store_column_bytes(PixStmt *st, int i);
gboolean pix_store_step_done(PixStore *s, PixStmt *st, const char *what, GError **error);
const char *pix_store_state_name(PixFileState state);
PixFileState pix_store_state_from(const unsigned char *text);
gboolean pix_store_release_room(PixStore *s);
gboolean pix_store_ensure_md5_index(PixStore *s, GError **error);
GPtrArray *pix_store_collect_file_rows(PixStore *s, PixStmt *st, gboolean has_dir_path, GError **error);
/* The file row at `st`'s current row: columns id, name, dev, ino, mode,
 * size, mtime_ns, ctime_ns, state, md5, recheck, then with has_dir_path
 * the directory's path and fsid (transfer full). */
PixFileRow *pix_store_file_row_from(PixStmt *st, gboolean has_dir_path);
gboolean pix_store_column_md5(PixStmt *st, int i, guint8 *out);
/*
 * Runs set statement `id` (see PIX_STORE_SET) for `n` values, PIX_STORE_SET
 * of them at a time: ?1 is `fixed` when `first` is 2 (the set's values
 * start at ?first); bind(st, i, k, data) binds value k to parameter i, and
 * row(st, data) takes each row.  One round trip per PIX_STORE_SET values.
 */
typedef void (*PixSetBind)(PixStmt *st, int i, guint k, gpointer data);
typedef void (*PixSetRow)(PixStmt *st, gpointer data);
gboolean pix_store_run_set(PixStore *s, StatementId id, int first, gint64 fixed, guint n, PixSetBind bind,
                           PixSetRow row, gpointer data, const char *what, GError **error);
/* store-write.c: the volume (found, or made when `is_create`) and the
 * path relative to it of directory `d`; *vol_id 0 when none is known. */
gboolean pix_store_dir_key(PixStore *s, const PixDir *d, gboolean is_create, gint64 *vol_id, char **rel_path,
                           GError **error);

/* --- store-pg.c: PostgreSQL only --- */

/* the first key of photoidx's advisory locks (store-pg.c) */
#define PIX_PG_LOCK_MIGRATE 20553
#define PIX_PG_LOCK_SEQ 20554
#define PIX_PG_LOCK_VOLUME 20555
#define PIX_PG_LOCK_RUN 20556

/* Connects s->db to s->path, checks and (writer) migrates the schema;
 * *version: the schema version now. */
gboolean pix_store_open_pg(PixStore *s, gint64 *version, GError **error);
/* In the open batch, just before COMMIT: numbers its change log entries
 * and wakes the LISTENers of photoidx_changes. */
gboolean pix_store_pg_before_commit(PixStore *s, GError **error);
/* Binds a change-log entry to ST_CHANGE_INSERT or ST_CHANGE_INSERT_SEQ
 * (store-write.c). */
void pix_store_bind_change(PixStore *s, PixStmt *st, const PixChangeRow *c);
/* Session locks: the run begun (s->scan_id), and each volume of
 * `volume_ids` (gint64) this session does not hold yet, waiting for
 * another writer's unless is_no_wait. */
gboolean pix_store_pg_lock_run(PixStore *s, GError **error);
gboolean pix_store_pg_lock_volumes(PixStore *s, const GArray *volume_ids, GError **error);

#endif

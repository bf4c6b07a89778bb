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
#include "volume.h"

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

/* The migrations (SQLite's user_version, PostgreSQL's schema_version)
 * that add meta.title_key and caption_key: after each, in its
 * transaction, pix_store_fill_text_keys() fills them for the rows there. */
#define PIX_SQLITE_TEXT_KEYS_VERSION 10
#define PIX_PG_TEXT_KEYS_VERSION 6
/* Fills meta.title_key and caption_key from meta.title and caption, by
 * pix_tags_key(), a chunk of rows at a time (no file is read). */
gboolean pix_store_fill_text_keys(PixStore *s, GError **error);

/* Rows of thumbs a fill of perceptual hashes reads, hashes and writes at
 * once (ST_PHASH_WANTED): one batch, renditions of about 10-20 KB each. */
#define PIX_PHASH_CHUNK 256
/* Binds a content's hash, its weakness and PIX_PHASH_VERSION as
 * parameters first .. first + 2 (NULL, NULL, version: no hash). */
void pix_store_bind_phash(PixStmt *st, int first, const PixPhash *h);

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
	ST_FILES_BY_MD5S,
	ST_META_REPLACE,
	ST_META_INSERT,
	ST_META_DELETE,
	ST_KEYWORD_INSERT,
	ST_KEYWORDS_DELETE,
	ST_PERSON_INSERT,
	ST_PEOPLE_DELETE,
	ST_IMAGE_TAGS,
	ST_SIDECAR_TAGGED,
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
	ST_THUMB_PUT,
	ST_THUMB_DROP,
	ST_THUMBS_DROP_UNUSED,
	ST_THUMBS_WANTED,
	ST_THUMBS_SIZE,
	ST_THUMBS_ALL,
	ST_THUMBS_BY_MD5S,
	ST_PHASH_WANTED,
	ST_PHASH_SET,
	ST_SEQ_LOCK,            /* PostgreSQL only: the change log's order (store-pg.c) */
	ST_SEQ_MAX,
	ST_CHANGE_INSERT_SEQ,
	ST_SEQ_ASSIGN,
	ST_SEQ_NOTIFY,
	N_STATEMENTS
} StatementId;

/* A change-log entry to write (store-changes.c). Strings borrowed, but for
 * those held in PixStore.pg_changes, which are owned. */
typedef struct {
	gint64 file_id, volume_id;  /* 0: NULL */
	const char *kind;           /* static */
	char *old_path, *new_path;  /* NULL: none */
	gboolean has_old_md5, has_new_md5, has_old_size, has_new_size;
	guint8 old_md5[16], new_md5[16];
	gint64 old_size, new_size;
	/* a keyword or rating change (schema 0009): is_retagged when either
	 * differs; then keywords NULL for none, rating -2 for none */
	gboolean is_retagged;
	gboolean has_keywords_change, has_rating_change;
	char *old_keywords, *new_keywords;
	gint64 old_rating, new_rating;
} PixChangeRow;

/*
 * A catalog backend: the places where SQLite and PostgreSQL really
 * differ, and only those.  The store has one writer logic above it, which
 * calls these and never asks which backend it runs on (models: SQLite's
 * sqlite3_io_methods, git's ref_storage_be).  store-sqlite.c and
 * store-pg.c each define one; the SQL they differ in besides is in the
 * statement table (statement_pg[], store-sql.c).  A NULL operation is one
 * the backend has nothing to do for.
 */
typedef struct {
	const char *name;               /* "SQLite", "PostgreSQL" */
	const int *schema_count;        /* its migrations (the schema version
	                                   a current catalog has) */
	/* Opens the file or connects to s->path, takes what the backend
	 * locks at open, checks the catalog's identity and (a writer)
	 * migrates it; *version: its schema version now. */
	gboolean (*open)(PixStore *s, gint64 *version, GError **error);
	/* A new connection for one that was lost, with the run's and the
	 * volumes' locks taken again, `attempts` tries with a growing pause
	 * between them; NULL: a connection is never lost. */
	gboolean (*reconnect)(PixStore *s, guint attempts, GError **error);

	/* --- runs (store-runs.c) --- */
	/* the writer's lock is a lock file taken at open (PixStore.lock_fd) */
	gboolean has_lock_file;
	/* The lock of the run s->scan_id, once its row is written; and of
	 * each volume of `volume_ids` (gint64) not held yet, waiting for
	 * another writer unless s->is_no_wait.  NULL: the lock file is both. */
	gboolean (*lock_run)(PixStore *s, GError **error);
	gboolean (*lock_volumes)(PixStore *s, const GArray *volume_ids, GError **error);
	/* marks 'killed' the runs left 'running' whose writer is gone */
	const char *sql_kill_lost_runs;
	/* a new run's row, RETURNING id: ?1 command, ?2 roots, ?3
	 * started_at, and on a shared catalog ?4 the pid */
	const char *sql_insert_run;
	/* a root's row (ROOT_UPSERT) */
	const char *sql_root_upsert;
	/* A full disk: frees the room reserved for recording a run's end
	 * (FALSE: there is none).  NULL: no room is reserved. */
	gboolean (*release_room)(PixStore *s);
	/* A first import into an empty catalog is about to begin, and has
	 * ended (or a writer opens after one was killed): SQLite drops the
	 * MD5 index and builds it at the end in one sorted pass.  NULL:
	 * nothing to do. */
	gboolean (*begin_first_import)(PixStore *s, GError **error);
	gboolean (*end_first_import)(PixStore *s, GError **error);

	/* --- the change log (store-changes.c) --- */
	/* Writes entry `c` into the open batch (SQLite, at once) or keeps it
	 * to be numbered at the commit (PostgreSQL). */
	gboolean (*put_change)(PixStore *s, const PixChangeRow *c, GError **error);
	/* In the open batch, just before its COMMIT; NULL: nothing. */
	gboolean (*before_commit)(PixStore *s, GError **error);

	/* --- volumes and hosts (store-volumes.c) --- */
	/* several hosts share the catalog: a volume may be recorded by
	 * another meanwhile, and a missing row may be on another host's
	 * volume */
	gboolean is_shared;
	/* rows from before volumes (SQLite catalogs older than schema 5)
	 * may wait to be placed on theirs */
	gboolean has_legacy_rows;
	/* the volumes' rows, and whether this host is the one that saw each
	 * last (id, kind, ident, mount_point, mount_root, dev, is_online, mine) */
	const char *sql_volumes_seen;
	/* a volume seen now, ?1 its id, ?2.. mount_point, mount_root, dev,
	 * last_seen_at, label, fstype, source */
	const char *sql_volume_found;
	/* the last column of the volumes' listing: the other host that saw
	 * each mounted last (NULL where there is none) */
	const char *sql_volume_other_host;

	/* --- the SQL besides (store-sql.c, store-query.c) --- */
	/* its texts of the statement table where they differ from the
	 * common one (NULL: none; an entry NULL: the common text) */
	const char *const *statements;
	/* what ONLINE_VOLUMES means on this backend's connection (NULL: as
	 * written) */
	const char *online_volumes;
	/* the case-insensitive LIKE */
	const char *like;
	/* file_info's and photos' paths, names and volume names are text
	 * (a display form where not UTF-8) and their exact bytes are in
	 * the *_bytes columns (path_bytes...) */
	gboolean has_bytes_columns;
	/* said after an error that the catalog is damaged: what to do */
	const char *corrupt_hint;
} PixStoreBackend;

/* The SQL texts the backends fill in with their own key or column. */
#define ROOT_UPSERT(key) "INSERT INTO roots (path, first_scan_at, volume_id, rel_path) VALUES (?1, ?2, ?3, ?4)" \
	" ON CONFLICT (volume_id, " key ") DO UPDATE SET path = ?1"
#define VOLUMES_SEEN(mine) "SELECT id, kind, ident, mount_point, mount_root, dev, is_online, " mine \
	" FROM volumes ORDER BY id"
#define VOLUME_FOUND(more) "UPDATE volumes SET mount_point = ?2, mount_root = ?3, dev = ?4, is_online = 1," \
	" last_seen_at = ?5, label = ?6, fstype = ?7, source = ?8" more " WHERE id = ?1"

extern const PixStoreBackend pix_store_sqlite_backend;
extern const PixStoreBackend pix_store_pg_backend;

struct PixStore {
	const PixStoreBackend *be;  /* its backend */
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
	GStringChunk *dirty_names; /* their names: one arena for the batch,
	                           not an allocation a file */
	GHashTable *volume_ids; /* "kind\tident" (owned) -> volumes.id, as
	                           committed or written by the open batch */
	GHashTable *unknown_devs; /* st_dev the mount table lacked once: read
	                           again for each only once */
	GHashTable *dir_ids;    /* "volume_id\trel_path" (owned) -> the id this
	                           session gave a new directory (put_dir()) */
	gint64 batch_dir_id;    /* the first of them the open batch gave, or 0 */
	GArray *pg_changes;     /* PostgreSQL: PixChangeRow, the open batch's
	                           change-log entries, written at its commit */
	GHashTable *pg_locked;  /* PostgreSQL: the volume ids whose lock this
	                           session holds */
};

/* Times a transaction the server rolled back for a deadlock is run again
 * (a batch, store-write.c; a run's beginning, store-runs.c). */
#define BATCH_RETRIES 5

/* store-thumbs.c: an item's thumbnail (item->thumb, with an MD5) into
 * the open batch; a content's thumbnail dropped when no file has it (one
 * content, or all of them) */
gboolean pix_store_put_thumb(PixStore *s, const PixItem *item, GError **error);
gboolean pix_store_drop_thumb(PixStore *s, const guint8 md5[16], gint64 size_bytes, GError **error);
gboolean pix_store_drop_unused_thumbs(PixStore *s, GError **error);

/* store-sql.c: the shared helpers of the store*.c files */
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
/* Forgets the files marked dirty (the batch is gone, or relinked). */
void pix_store_dirty_reset(PixStore *s);
/* Frees what marking them took (when the store closes). */
void pix_store_dirty_free(PixStore *s);
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
/* A single-value query: its integer in *out, or -1 without a row. */
gboolean pix_store_query_int(PixStore *s, PixStmt *st, gint64 *out, const char *what, GError **error);
/* Runs `sql` once with `n` integer parameters (gint64, ?1...). */
gboolean pix_store_run_ints(PixStore *s, const char *sql, const char *what, GError **error, int n, ...);

/* --- store-runs.c: runs and their transactions --- */

/* BEGIN of a batch (nothing when one is open): s->now_s is its time. */
gboolean pix_store_begin_batch(PixStore *s, GError **error);
/* ROLLBACK of the open batch, and what the store kept of it. */
void pix_store_rollback_batch(PixStore *s);

/* --- store-sidecars.c --- */

/* The file of `item` was written by the open batch: linked again at its
 * commit. */
void pix_store_mark_dirty(PixStore *s, const PixItem *item);
/* Links the files the open batch wrote to their sidecars (at commit). */
gboolean pix_store_relink(PixStore *s, GError **error);

/* --- store-changes.c --- */

/* Writes entry `c` into the open batch, as the backend numbers them. */
gboolean pix_store_put_change_row(PixStore *s, const PixChangeRow *c, GError **error);
/* SQLite's way of it: inserted now (ST_CHANGE_INSERT). */
gboolean pix_store_insert_change_row(PixStore *s, const PixChangeRow *c, GError **error);
/* Binds entry `c` to ST_CHANGE_INSERT or ST_CHANGE_INSERT_SEQ. */
void pix_store_bind_change(PixStore *s, PixStmt *st, const PixChangeRow *c);
/* Frees the strings of a kept entry (a GArray clear function). */
void pix_store_change_row_clear(gpointer p);
/* `c` as an entry to keep: its strings copied into `kept`. */
void pix_store_change_row_keep(PixChangeRow *kept, const PixChangeRow *c);

/* --- store-tags.c: the photographer's metadata (schema 0009) --- */

/* A file's keywords (meta.keywords) and rating, as the change log
 * compares them. */
typedef struct {
	char *keywords;         /* (owned) NULL: none */
	gint64 rating;          /* -2: none */
	gboolean has_people;    /* it has people rows */
} PixTagsSeen;
void pix_tags_seen_clear(PixTagsSeen *t);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PixTagsSeen, pix_tags_seen_clear)
/* What `m` gives (NULL: nothing). */
void pix_tags_seen_of(const PixMeta *m, PixTagsSeen *out);
/* The keyword and people rows of file `file_id` from m->tags: the old
 * ones deleted first unless `is_new` or `old` (what the row had, may be
 * NULL: unknown) says there are none. */
gboolean pix_store_put_tags(PixStore *s, gint64 file_id, const PixMeta *m, gboolean is_new, const PixTagsSeen *old,
                            GError **error);
/* Sets `c`'s tag columns when the keywords or rating differ between `old`
 * and `new` (strings borrowed). */
void pix_store_change_tags(PixChangeRow *c, const PixTagsSeen *old, const PixTagsSeen *new);
/* Image `id`'s keywords and rating as they count (its sidecar's where it
 * gives them), its MD5 and size. */
gboolean pix_store_image_tags(PixStore *s, gint64 id, PixTagsSeen *out, guint8 md5[16], gboolean *has_md5,
                              gint64 *size, GError **error);
/* A 'changed' entry for image `id` whose keywords or rating went from
 * `old` to `new` (its content the same: `md5`, `size`); nothing when they
 * are the same. */
gboolean pix_store_put_retagged(PixStore *s, gint64 id, const guint8 *md5, gint64 size, const PixTagsSeen *old,
                                const PixTagsSeen *new, GError **error);
/* Sidecar `sidecar_id`'s own values went from `old` to `new` (it was read
 * again): the images linked to it whose keywords or rating changed with
 * them get a 'changed' entry. */
gboolean pix_store_sidecar_retagged(PixStore *s, gint64 sidecar_id, const PixTagsSeen *old, const PixTagsSeen *new,
                                    GError **error);

/* --- store-volumes.c: where the volumes are --- */

/* The volume holding directory `path` on device `dev`, and the path
 * relative to its root (transfer full). */
const PixVolume *pix_store_volume_of(PixStore *s, const char *path, guint64 dev, char **rel_path);
/* volumes.id of `v`: *id 0 when the catalog has none and !is_create, else
 * inserted (in the open batch) as seen now. */
gboolean pix_store_volume_id(PixStore *s, const PixVolume *v, gboolean is_create, gint64 *id, GError **error);
/* The volume (found, or made when `is_create`) and the path relative to
 * it of directory `d`; *vol_id 0 when none is known. */
gboolean pix_store_dir_key(PixStore *s, const PixDir *d, gboolean is_create, gint64 *vol_id, char **rel_path,
                           GError **error);
/* Each volume's row against the mount table now (in the open batch). */
gboolean pix_store_refresh_volumes(PixStore *s, GError **error);
/* Says which of `roots` lie on an offline volume's mount point, adding
 * them to `shadowed`. */
gboolean pix_store_note_offline_roots(PixStore *s, char **roots, GHashTable *shadowed, GError **error);
/* The backend's locks (lock_volumes) of the volumes of `roots` the
 * catalog knows, or of every volume mounted here. */
gboolean pix_store_lock_known_volumes(PixStore *s, char **roots, GError **error);
gboolean pix_store_lock_online_volumes(PixStore *s, GError **error);
/* A volume's entry in the change log (online, offline, remounted). */
gboolean pix_store_put_volume_change(PixStore *s, gint64 vol_id, const char *kind, const char *old_path,
                                     const char *new_path, GError **error);

/* --- store-pg.c: PostgreSQL only --- */

/* the first key of photoidx's advisory locks (store-pg.c) */
#define PIX_PG_LOCK_MIGRATE 20553
#define PIX_PG_LOCK_SEQ 20554
#define PIX_PG_LOCK_VOLUME 20555
#define PIX_PG_LOCK_RUN 20556

/* the statement table's PostgreSQL texts (store-sql.c) */
extern const char *const pix_store_statements_pg[N_STATEMENTS];

#endif

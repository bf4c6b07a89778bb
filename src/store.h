/*
 * store.h: the catalog.  The one interface between the pipeline and the
 * database behind it: a SQLite file, or a PostgreSQL database that
 * several hosts write (a postgresql:// URI; store-pg.c, db-pg.c);
 * nothing outside store*.c and db*.c knows SQL.
 *
 * A PixStore is either a writer (SQLite: one per catalog at a time,
 * guarded by a lock file next to the catalog; PostgreSQL: one per volume
 * at a time, guarded by an advisory lock) or a reader.  The writer applies schema
 * migrations, records scans, and takes PixItems in large transactions;
 * readers answer plan's questions about what the catalog holds, and never
 * see a half-written batch (WAL snapshots).
 *
 * Thread-safety: a PixStore is used by one thread at a time.  The pipeline
 * opens one writer for the store thread and one reader for plan.
 *
 * Errors are environment failures (PIX_STORE_ERROR): the catalog cannot be
 * opened, is locked, is newer than this program, is not a catalog, is full
 * or corrupt.  The caller prints one line and exits 2.
 */
#ifndef PIX_STORE_H
#define PIX_STORE_H

#include "item.h"
#include "queue.h"

#define PIX_STORE_ERROR (pix_store_error_quark())
GQuark pix_store_error_quark(void);

typedef enum {
	PIX_STORE_ERROR_OPEN,      /* cannot create or open the file */
	PIX_STORE_ERROR_LOCKED,    /* another writer holds it (--no-wait) */
	PIX_STORE_ERROR_NEWER,     /* schema newer than this binary */
	PIX_STORE_ERROR_FOREIGN,   /* not a photoidx catalog */
	PIX_STORE_ERROR_FULL,      /* disk or database full */
	PIX_STORE_ERROR_CORRUPT,   /* PIX_DB_CORRUPT / PIX_DB_NOTADB */
	PIX_STORE_ERROR_FAILED,    /* any other SQLite failure */
	PIX_STORE_ERROR_RETRY,     /* PostgreSQL: a deadlock or serialization
	                              failure rolled the transaction back;
	                              the same work again may succeed */
	PIX_STORE_ERROR_LOST,      /* PostgreSQL: the connection is gone
	                              (pix_store_reconnect()) */
} PixStoreError;

typedef enum {
	PIX_STORE_READ,
	PIX_STORE_WRITE,
} PixStoreMode;

typedef struct PixStore PixStore;

typedef enum {
	PIX_STATE_OK,
	PIX_STATE_ERROR,
	PIX_STATE_MISSING,
	PIX_STATE_OFFLINE,      /* read only: on a volume not mounted (file_info) */
} PixFileState;

/* A file row as plan sees it. */
typedef struct {
	gint64 id;
	char *name;             /* bytes (owned) */
	char *dir_path;         /* bytes (owned); set by the look-ups by inode
	                           (and the store's by MD5) only */
	guint64 dir_fsid;       /* with dir_path: its file system's statfs f_fsid, 0 if unknown */
	PixStat st;
	PixFileState state;
	gboolean has_md5;
	guint8 md5[16];
	gboolean is_recheck;
	gboolean is_elsewhere;  /* (the store's own look-ups) on a volume not
	                           mounted on this host */
} PixFileRow;

void pix_file_row_free(PixFileRow *row);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixFileRow, pix_file_row_free)

/* A directory row. */
typedef struct {
	gint64 id;
	char *path;             /* bytes (owned) */
	PixFileState state;
} PixDirRow;

void pix_dir_row_free(PixDirRow *row);

/* The schema version this binary writes (the highest migration). */
int pix_store_schema_version(void);

/*
 * Opens the catalog at `path`.  PIX_STORE_WRITE creates the file (and its
 * directory) when needed, takes the writer lock (waiting, with a message,
 * unless `is_no_wait`), reserves room on the disk for recording the end
 * of a run (PIX_STORE_ERROR_FULL when there is none), and migrates the
 * schema to the current version.  A file it creates (catalog, lock; SQLite
 * gives -wal and -shm the catalog's mode) is 0600 whatever the umask; an
 * existing catalog keeps its mode.
 * PIX_STORE_READ needs an existing catalog of the current schema: an older
 * one fails with PIX_STORE_ERROR_OPEN (a writer upgrades it).  (transfer full)
 */
PixStore *pix_store_open(const char *path, PixStoreMode mode, gboolean is_no_wait, GError **error);
/* The catalog `path` as output shows it: a PostgreSQL URI without its
 * password, a file's path as it is (transfer full); and as messages name
 * it, made safe with pix_quote() too. */
char *pix_store_shown(const char *path);
char *pix_store_display(const char *path);
/* Closes it; an open batch is rolled back (never half-committed).  Accepts NULL. */
void pix_store_free(PixStore *s);
/* PostgreSQL: a new connection in place of one that is gone
 * (PIX_STORE_ERROR_LOST), with what the session held: the open batch is
 * lost (rolled back by the server), the run's and the volumes' locks are
 * taken again.  Tries `attempts` times, waiting 0.5 s, 1 s, 2 s ... (at
 * most 30 s) between tries and saying so; FALSE with the last error, or
 * at once when a stop is requested. */
gboolean pix_store_reconnect(PixStore *s, guint attempts, GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixStore, pix_store_free)

/* The paths that live beside the catalog (-wal, -shm, -journal, lock),
 * which a walk must not index (NULL-terminated, transfer full). */
char **pix_store_companion_paths(const char *path);

/* --- writer --- */

/*
 * Records the start of a run of `command` over `roots` (absolute paths);
 * marks runs left 'running' by a killed process as 'killed'; looks for
 * every volume of the catalog in the mount table (one mounted elsewhere or
 * with another device number gets its rows' paths and devices rewritten,
 * one not mounted becomes offline, each with one change-log entry), and
 * places the rows of a catalog from before volumes; then registers the
 * roots on their volumes (not one that is the empty mount point of an
 * offline volume, which it names).  Committed at once.
 */
/* The roots a `verify` of every file records (its begin_scan's roots). */
#define PIX_VERIFY_ALL "(all files)"
gboolean pix_store_begin_scan(PixStore *s, const char *command, char **roots, GError **error);
/*
 * Writes one item (borrowed) into the open batch, starting one if needed:
 * the file or directory row, its metadata, its change-log entries.  Counts
 * it (log.h counters).  On failure the batch is rolled back.
 */
gboolean pix_store_put(PixStore *s, PixItem *item, GError **error);
/*
 * For a run made of several passes (watch): what is committed so far
 * counts as from before the next pass (a file moved later may be found by
 * its MD5 among those rows), and the MD5 index a first import went without
 * is built now.
 */
gboolean pix_store_end_pass(PixStore *s, GError **error);
/*
 * For the passes after the first of a run (watch): looks for every volume
 * in the mount table again, as pix_store_begin_scan() does (a disk
 * plugged in or out since: its rows moved, or offline, before plan looks
 * anything up).  Committed at once.
 */
gboolean pix_store_begin_pass(PixStore *s, GError **error);

/*
 * For a scan with thumbnails (thumb.h): flags for reading again the files
 * at or below `roots` (canonical paths) that are images, RAW files or
 * videos whose content (MD5 and size) has no thumbnail, nor a note of this
 * maker's version saying why none can be made.  Committed at once.
 */
gboolean pix_store_want_thumbs(PixStore *s, char **roots, GError **error);

/* What the thumbnails table holds (status). */
typedef struct {
	gint64 n_contents;      /* rows: contents a scan with thumbnails read */
	gint64 n_thumbs;        /* of them, with a thumbnail (the rest: a note) */
	gint64 bytes;           /* the renditions' JPEG bytes */
} PixThumbsSize;
gboolean pix_store_thumbs_size(PixStore *s, PixThumbsSize *out, GError **error);
/* Every content the thumbnails table has a row of, notes too (transfer
 * full, sealed), or NULL with `error` set. */
PixThumbIndex *pix_store_thumb_index(PixStore *s, GError **error);

/* A content's renditions, as the thumbnails table keeps them (strings and
 * bytes borrowed for the callback). */
typedef struct {
	guint8 md5[16];
	gint64 size_bytes;
	guint width_px[PIX_THUMB_N_SIZES];       /* of each rendition */
	guint height_px[PIX_THUMB_N_SIZES];
	const guint8 *jpeg[PIX_THUMB_N_SIZES];   /* NULL when not asked for */
	gsize jpeg_bytes[PIX_THUMB_N_SIZES];
} PixThumbRow;
typedef void (*PixThumbRowFn)(gpointer data, const PixThumbRow *row);
/*
 * Calls fn for each content among md5s[0..n) (16 bytes each) that has a
 * thumbnail (not a note): one row per MD5 and size, so the caller matches
 * the size it wants.  `sizes` (bits 1 << PixThumbSize) says which
 * renditions' JPEGs to read; the others come as NULL, their sizes still
 * given.  One statement per 64 contents: what a server sends for one is
 * at most 64 contents' renditions.
 */
gboolean pix_store_each_thumb(PixStore *s, const guint8 (*md5s)[16], guint n, guint sizes, PixThumbRowFn fn,
                              gpointer data, GError **error);

/*
 * The perceptual hashes of thumbnails stored before hashes were
 * (store-phash.c): one content's stored PIX_THUMB_LARGE rendition, for a
 * PixPhashFn to hash.
 */
typedef struct {
	guint8 md5[16];
	gint64 size_bytes;
	GBytes *jpeg;           /* (owned by the store) the rendition; NULL when
	                           the row has a note: no hash */
	PixPhash phash;         /* the function's answer: unset (no hash) as given */
} PixPhashJob;
/* Hashes jobs[0 .. n - 1] (on any threads; returns when all are done). */
typedef void (*PixPhashFn)(PixPhashJob *jobs, guint n, gpointer data);
/*
 * Fills in the hash of every row of thumbs that has none of
 * PIX_PHASH_VERSION, chunk by chunk, each chunk hashed by `fn` and
 * committed in its own batch; *n_filled: the hashes written.  Reads no
 * file.  For a writer.
 */
gboolean pix_store_fill_phashes(PixStore *s, PixPhashFn fn, gpointer data, gint64 *n_filled, GError **error);

/* The id (scans.id) of the run begun by pix_store_begin_scan(), or 0. */
gint64 pix_store_run_id(PixStore *s);
/* Commits the open batch, if any. */
gboolean pix_store_commit(PixStore *s, GError **error);
/*
 * The store stage: pops items from `in` until its end, writing them in
 * batches of `batch_items` items or `batch_us` microseconds, whichever
 * comes first, and frees them.  On a store failure it sets `error`, asks
 * every stage to stop (pix_request_stop) and keeps draining `in` so no
 * producer blocks.  Returns FALSE on failure.
 */
gboolean pix_store_consume(PixStore *s, PixQueue *in, guint batch_items, gint64 batch_us, GError **error);
/* Catalog write speed by catalog size: for each PIX_STORE_RATE_ROWS file
 * rows of catalog, what the store stage committed while the catalog was
 * that big. */
#define PIX_STORE_RATE_ROWS 100000
typedef struct {
	gint64 catalog_rows;    /* the bucket: catalog_rows .. + PIX_STORE_RATE_ROWS */
	gint64 items;           /* items committed (file and directory rows) */
	gint64 busy_us;         /* time the store stage spent writing and committing them */
	gint64 wall_us;         /* time from the first to the last commit in the bucket */
} PixWriteRate;
/* The buckets of this run so far, by catalog_rows (borrowed, PixWriteRate). */
const GArray *pix_store_write_rates(PixStore *s);

/*
 * Records the end of the run begun by pix_store_begin_scan(): its state
 * ('done', 'interrupted', 'failed'), exit status and the log.h counters;
 * when 'done', the roots' last_scan_at.  Committed at once, then the MD5
 * index a first import went without is built.  If that fails (a full
 * disk), a 'done' run is recorded as 'failed' with exit status 2 and the
 * error set; after any other state the next writer builds it, and this
 * succeeds.
 */
gboolean pix_store_end_scan(PixStore *s, const char *state, int exit_status, GError **error);

/* --- reader --- */

/* The directory row of `dir` (its volume, found from its path and device,
 * and its path relative to the volume's root): TRUE and *row filled
 * (transfer full) when there is one; TRUE and *row NULL when there is
 * none. */
gboolean pix_store_find_dir(PixStore *s, const PixDir *dir, PixDirRow **row, GError **error);
/* The file rows of directory `dir_id` (PixFileRow*, transfer full). */
GPtrArray *pix_store_dir_files(PixStore *s, gint64 dir_id, GError **error);
/* The file rows with this device and inode, with dir_path set. */
GPtrArray *pix_store_files_by_inode(PixStore *s, guint64 dev, guint64 ino, GError **error);

/*
 * The same questions for many at once, one round trip per PIX_STORE_SET
 * (store-int.h) directories or inodes: plan asks them for the listings
 * waiting for it, so that a rescan over a network waits per window of
 * directories, not per directory.
 */
typedef struct {
	const PixDir *dir;      /* (borrowed) */
	gboolean want_files;    /* its file rows too */
	PixDirRow *row;         /* out: its row (transfer full), or NULL: none */
	GPtrArray *files;       /* out: with a row and want_files, its file
	                           rows (PixFileRow*, transfer full), else NULL */
} PixDirQuery;
/* Fills row and files of each of dirs[0..n) (FALSE: all left NULL). */
gboolean pix_store_find_dirs(PixStore *s, PixDirQuery *dirs, guint n, GError **error);
/* Frees what pix_store_find_dirs() gave. */
void pix_dir_queries_clear(PixDirQuery *dirs, guint n);

typedef struct {
	guint64 dev, ino;
} PixInode;
/* The file rows (dir_path set) of each of inodes[0..n), as a table from
 * PixInode* to GPtrArray of PixFileRow*, every inode asked for in it
 * (transfer full); NULL on failure. */
GHashTable *pix_store_files_by_inodes(PixStore *s, const PixInode *inodes, guint n, GError **error);
/* The directory rows (not 'missing') at `root` and below it, of volumes
 * mounted now (PixDirRow*). */
GPtrArray *pix_store_dirs_under(PixStore *s, const char *root, GError **error);
/*
 * --quick: whether directory `dir` (path and stat) is as it was when last
 * listed, by a run that finished (or by run `trusted_scan_id`, a watch
 * session whose rescans each finish before the next): same device, inode,
 * mtime and ctime, an mtime older than that listing by two seconds, and no file in it that a scan must read (a
 * recheck, or one never read).  Then *is_known is TRUE, *subdir_names holds
 * the names of its subdirectories the catalog knows (char*, transfer full)
 * and *n_files the number of its files present.
 */
gboolean pix_store_dir_is_known(PixStore *s, const PixDir *dir, gint64 trusted_scan_id, gboolean *is_known,
                                GPtrArray **subdir_names, gint64 *n_files, GError **error);
/*
 * verify: calls fn for every file row with an MD5, not missing, not
 * flagged for a recheck, that is a regular file at or below one of `paths`
 * (absolute, canonical; NULL: all) and was not verified at or after
 * `before_s` (the run's start), oldest verification first (a file never
 * verified counts as verified when it was hashed; never verified before
 * verified at the same second).  fn takes the row (with dir_path);
 * returning FALSE stops.  Reads in pages, so fn may block for long without
 * holding a read transaction open.
 */
typedef gboolean (*PixStoreRowFn)(gpointer data, PixFileRow *row);
gboolean pix_store_each_to_verify(PixStore *s, char **paths, gint64 before_s, PixStoreRowFn fn, gpointer data,
                                  GError **error);

/* What verify has covered: files with an MD5 (not missing), how many and
 * how many bytes were never verified, and the oldest verification (0 if
 * none). */
typedef struct {
	gint64 n_files;
	gint64 n_never;
	gint64 bytes_never;
	gint64 oldest_verified_at;
} PixVerifyCoverage;
gboolean pix_store_verify_coverage(PixStore *s, PixVerifyCoverage *out, GError **error);

/* One entry of the change log, with the file's current path and state. */
typedef struct {
	gint64 seq;
	gint64 scan_id;           /* 0 if none */
	gint64 file_id;
	gint64 at;
	const char *kind;         /* 'added', 'changed', 'moved', 'missing', 'restored',
	                             'forgotten'; a volume's: 'remounted', 'offline', 'online' */
	gboolean has_file;        /* file_id names a row still in the catalog */
	char *path;               /* the file's path now (bytes), NULL without has_file */
	const char *volume;       /* the volume's ident (of the entry, or of the file), or NULL */
	char *old_path;           /* 'moved': bytes, else NULL */
	char *new_path;
	gboolean has_old_md5, has_new_md5;
	guint8 old_md5[16], new_md5[16];
	gint64 old_size, new_size; /* -1 when NULL */
	PixFileState state;       /* the file's state now */
	/* 'changed': its keywords (one per line, NULL: none) or rating
	 * before and after, when they changed (has_*_change) */
	gboolean has_keywords_change, has_rating_change;
	char *old_keywords, *new_keywords;
	gboolean has_old_rating, has_new_rating;
	gint64 old_rating, new_rating;
} PixChange;
typedef gboolean (*PixStoreChangeFn)(gpointer data, const PixChange *change);
/* Calls fn for each change with seq > since, in seq order, at most `limit`
 * (0: all); returning FALSE stops. */
gboolean pix_store_each_change(PixStore *s, gint64 since, gint64 limit, PixStoreChangeFn fn, gpointer data,
                               GError **error);

/* The roots scans have walked (NULL-terminated, transfer full). */
char **pix_store_roots(PixStore *s, GError **error);

/* --- volumes (store-volumes.c; pix_store_forget in store.c) --- */

/* A volume as the catalog knows it. Strings borrowed for the callback. */
typedef struct {
	gint64 id;
	const char *kind;         /* 'uuid', 'label', 'source', 'mount' */
	const char *ident;        /* its identity (see volume.h) */
	const char *uuid, *label, *fstype, *source; /* NULL when unknown */
	const char *mount_point;  /* where it was last seen (bytes) */
	gboolean is_online;       /* mounted at the last run's look */
	const char *host;         /* PostgreSQL: the other host that saw it so, NULL
	                             when it was this one (and on SQLite) */
	gint64 n_files;           /* files not missing */
	gint64 bytes;             /* their size */
	gint64 n_missing;
	gint64 first_seen_at, last_seen_at, last_scan_at; /* 0 when never */
} PixVolumeRow;
typedef gboolean (*PixStoreVolumeFn)(gpointer data, const PixVolumeRow *v);
/* Calls fn for each volume, by id; returning FALSE stops. */
gboolean pix_store_each_volume(PixStore *s, PixStoreVolumeFn fn, gpointer data, GError **error);

/* A root as the catalog knows it. Strings borrowed for the callback. */
typedef struct {
	const char *path;         /* where it was last seen (bytes) */
	const char *rel_path;     /* relative to its volume's root; NULL if not placed */
	const char *volume_kind;  /* NULL when not placed on a volume */
	const char *volume_ident;
	const char *volume_label;
	gboolean is_online;       /* its volume was mounted at the last look */
	gint64 first_scan_at, last_scan_at; /* 0 when never */
} PixRootRow;
typedef gboolean (*PixStoreRootFn)(gpointer data, const PixRootRow *r);
/* Calls fn for each root, by path; returning FALSE stops. */
gboolean pix_store_each_root(PixStore *s, PixStoreRootFn fn, gpointer data, GError **error);

/* A run (scans row). Strings borrowed for the callback. */
typedef struct {
	gint64 id;
	const char *command, *roots, *state;
	gint64 started_at, finished_at;  /* finished_at 0 while running */
	gint64 n_new, n_changed, n_moved, n_missing, n_unchanged, n_errors, bytes_read;
	int exit_status;                 /* -1 when none */
} PixRunRow;
typedef gboolean (*PixStoreRunFn)(gpointer data, const PixRunRow *r);
/* Calls fn for the last `limit` runs, newest first. */
gboolean pix_store_each_run(PixStore *s, gint64 limit, PixStoreRunFn fn, gpointer data, GError **error);

/* What the next scan reads again without a change on disk: files flagged
 * for a recheck (mtime too recent when read, or a format photoidx learnt
 * since), and regular files never read (their read failed); not missing,
 * not offline. */
gboolean pix_store_pending(PixStore *s, gint64 *n_recheck, gint64 *n_unread, GError **error);

/*
 * Writer: removes file rows from the catalog, with their metadata; each
 * gets a 'forgotten' entry in the change log (its old path, MD5, size).
 * `volume_id` 0: the missing files (and the missing directories left
 * empty); else every file, directory and root of that volume, and the
 * volume itself.  With `is_dry_run`, counts and rolls back.  *n_files:
 * how many.  One transaction.
 */
gboolean pix_store_forget(PixStore *s, gint64 volume_id, gboolean is_dry_run, gint64 *n_files, GError **error);

/* Whether any file row has device `dev`. */
gboolean pix_store_has_dev(PixStore *s, guint64 dev, gboolean *has, GError **error);

#endif

/*
 * walk.h: the directory walker, first stage of the pipeline.
 *
 * The walker lists each directory with getdents64 into a large buffer,
 * sorts the entries by inode number and stats them in that order relative
 * to the directory's file descriptor (inode order keeps the inode-table
 * reads sequential).  It descends depth first, parents before children,
 * and hands one PixListing per directory to its output queue.  It never
 * follows symbolic links, does not cross into other mounts unless asked,
 * skips excluded names and never enters a directory twice in one chain
 * (bind-mount loops).
 *
 * Over a network file system each getdents64 and fstatat is a round trip,
 * so a walk of one call at a time waits on every one: there a pool of
 * threads lists and stats directories ahead of the walk (n_threads), and
 * the listings, their order and content, the warnings and the counters are
 * those of the one-thread walk.
 *
 * Thread: pix_walk_run() runs on one thread of its own, and with
 * n_threads > 1 on a pool of threads it starts and ends.
 */
#ifndef PIX_WALK_H
#define PIX_WALK_H

#include "item.h"
#include "queue.h"

/* One directory entry, as walked. */
typedef struct {
	char *name;         /* bytes (owned) */
	guint64 ino;        /* from getdents64 */
	unsigned char d_type; /* from getdents64 (DT_UNKNOWN on some file systems) */
	PixStat st;         /* valid when stat_errno == 0 */
	int stat_errno;     /* errno of fstatat, or 0 */
} PixEntry;

/* One directory, as walked: what plan compares with the catalog. */
typedef struct {
	PixDir *dir;        /* path and stat of the directory (ref) */
	GArray *entries;    /* PixEntry, in inode order, without subdirectories
	                       (those come as listings of their own; in a
	                       directory whose entries cannot be stat'ed, those
	                       getdents64 calls directories are taken as such) */
	gboolean is_complete; /* FALSE: listing failed (dir->error says why);
	                       entries must not be taken as the whole directory */
	guint n_skipped;    /* entries left out: excluded, symlinks, other mounts */
	guint n_subdirs;    /* subdirectories the walker will enter */
	gboolean is_unlisted; /* --quick: not listed, the catalog's record of
	                       it is current (entries empty, is_complete FALSE) */
	gint64 n_known_files; /* is_unlisted: the files the catalog has in it */
} PixListing;

/*
 * --quick (the mlocate rule): asks whether directory `dir` (dir->st
 * filled) is as the catalog last listed it.  Returns TRUE with the names
 * of its known subdirectories (transfer full, char*) and the number of its
 * known files when it need not be listed again.
 */
typedef gboolean (*PixWalkIsKnownFn)(gpointer data, const PixDir *dir, GPtrArray **subdir_names,
                                      gint64 *n_files);

typedef struct {
	char **excludes;          /* glob patterns (fnmatch, no flags): a pattern
	                             without '/' matches entry names, one with '/'
	                             whole paths, where '*' also matches '/'; the
	                             complete list, defaults included by the caller
	                             (NULL-terminated, borrowed) */
	char **exclude_paths;     /* exact paths never listed: the catalog and
	                             its companions (NULL-terminated, borrowed) */
	gboolean is_cross_mounts; /* descend into other file systems */
	PixWalkIsKnownFn is_known; /* --quick, or NULL: list every directory */
	gpointer is_known_data;
	guint n_threads;          /* threads that open, list and stat directories
	                             ahead of the walk, for a network file
	                             system (at most 256 are used); 0 or 1: the
	                             walk's own thread does it all, one call at
	                             a time */
} PixWalkConfig;

/* The default exclude patterns (static, NULL-terminated). */
const char *const *pix_walk_default_excludes(void);

/*
 * Walks `roots` (absolute, canonical directory paths, none inside another)
 * and pushes a PixListing per directory to `out` (transfer full), then
 * closes `out` once.  Stops early, between directories, when
 * pix_stop_requested().  Problems with one directory are reported with
 * pix_warn() and passed on as an incomplete listing.
 *
 * With cfg->n_threads > 1, that many threads of its own make the system
 * calls, up to 64 directories ahead of the listings pushed (one fd each);
 * they have ended when it returns.  cfg->is_known is then still called on
 * the calling thread only, one call at a time, for the same directories,
 * though not in the order of their listings: a directory is asked about
 * once it is open, which may be before the listings of the directories
 * walked before it are pushed.
 */
void pix_walk_run(const PixWalkConfig *cfg, char **roots, PixQueue *out);

/* Whether `name` (in directory `dir_path`) is excluded by `cfg`. */
gboolean pix_walk_is_excluded(const PixWalkConfig *cfg, const char *dir_path, const char *name);

void pix_listing_free(PixListing *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixListing, pix_listing_free)

#endif

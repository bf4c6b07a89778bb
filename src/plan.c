/*
 * plan.c: walked entries against catalog rows (see plan.h).
 *
 * Reads PixListings from the walker and the catalog through a reader
 * PixStore; lstat()s paths that seem gone; writes PixItems to the read and
 * store queues.  Runs on plan's thread only.
 *
 * The catalog seen through the reader does not include this scan's
 * uncommitted writes, so plan keeps what it decided in memory: `claimed`,
 * the rows it moved to a new path (a later directory must not mark them
 * missing again), and `vanished`, the rows whose path disappeared (marked
 * missing at the end unless a later directory claims them as moved).
 *
 * Invariants:
 *  1. A row is marked missing only after lstat() of its path said ENOENT
 *     (or found something that is not a file there), only when the walk
 *     finished, and never under a directory that could not be listed.
 *  2. A row is decided once per scan: moved to one new path, or re-read at
 *     its own (both in `claimed`), never both.
 *  3. A file is sent to the readers only when its row is absent, differs
 *     in device, inode, size, mtime or ctime, has no MD5, or is flagged for
 *     a recheck (or the run is a --reread); an unchanged file is never
 *     opened.
 *  4. The PIX_ACT_DIR item of a directory is pushed to the store before any
 *     item of its files is pushed anywhere (the store assigns new
 *     directories their id before their files need it).
 *  5. Between listings, files planned for reading wait in `to_read` only on
 *     a rotational disk, and fewer than SCHED_WINDOW of them (memory stays
 *     bounded by the largest directory plus one window).
 *
 * item_check() asserts 1 to 4 for each item plan hands on or defers, and
 * plan_check() 5 after each listing.  Not checked there: the lstat() half
 * of 1 (lstat()ing again would cost a system call per missing file, and
 * could see a file that reappeared since), and the "never under a
 * directory that could not be listed" of 1 for the rows of directories
 * the walk did not reach (finish() finds those through the catalog and
 * lstat(); plan is not told which directories a walk could not enter).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "plan.h"
#include "log.h"
#include "path.h"
#include "walk.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	const PixPlanConfig *cfg;
	GHashTable *claimed;        /* row ids (as pointers) decided this scan:
	                               moved, or re-read at their path */
	GHashTable *visited;        /* dir row ids listed this scan */
	GHashTable *dev_has_rows;   /* dev -> GINT_TO_POINTER(1 + has rows) */
	GHashTable *unsafe_roots;   /* root paths not to mark anything missing under */
	GPtrArray *vanished;        /* PixItem (PIX_ACT_MISSING), deferred */
	GPtrArray *to_read;         /* PixItem planned for reading, not yet ordered */
	const PixListing *listing;  /* the listing being planned, once its
	                               PIX_ACT_DIR item is pushed; NULL between
	                               listings (borrowed) */
	gboolean is_walk_done;      /* the walk ran to its end (no stop request, no
	                               error): finish() may mark rows missing */
	GError *error;
} Plan;

/* Files gathered before ordering them for a rotating disk. */
#define SCHED_WINDOW 4096

/* Orders the gathered files for the device and hands them to the readers. */
static void flush_reads(Plan *p)
{
	pix_sched_push(p->to_read, p->cfg->device_class, p->cfg->to_read);
}

static const char *file_type_name(guint32 mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/* Fills the "before" fields of an item from the row it replaces. */
static void set_old(PixItem *item, const PixFileRow *row)
{
	item->row_id = row->id;
	item->old_st = row->st;
	item->has_old_md5 = row->has_md5;
	memcpy(item->old_md5, row->md5, 16);
	item->was_missing = row->state == PIX_STATE_MISSING;
	item->was_error = row->state == PIX_STATE_ERROR;
}

static gboolean is_claimed(Plan *p, gint64 id)
{
	return g_hash_table_contains(p->claimed, GSIZE_TO_POINTER((gsize)id));
}

/* Decides row `id` for this scan (invariant 2: it was not decided yet). */
static void claim(Plan *p, gint64 id)
{
	gboolean is_new = g_hash_table_add(p->claimed, GSIZE_TO_POINTER((gsize)id));
	g_assert(is_new);
}

static gboolean item_check(Plan *p, const PixItem *item, gboolean is_recheck);

/* Whether the catalog has any file on `dev` (cached): without any, no new
 * file can be a moved one and the inode look-ups are skipped. */
static gboolean dev_has_rows(Plan *p, guint64 dev)
{
	gpointer v = g_hash_table_lookup(p->dev_has_rows, GSIZE_TO_POINTER((gsize)dev));
	if (p->error != NULL)
		return FALSE;
	if (v == NULL) {
		gboolean has = TRUE;
		if (!pix_store_has_dev(p->cfg->catalog, dev, &has, &p->error))
			return FALSE;
		v = GINT_TO_POINTER(1 + has);
		g_hash_table_insert(p->dev_has_rows, GSIZE_TO_POINTER((gsize)dev), v);
	}
	return GPOINTER_TO_INT(v) == 2;
}

/*
 * A new path whose inode the catalog knows at another path that is gone
 * now: the file was renamed (`inodes`: the rows of the inodes of the
 * window's new entries, see fetch_window()).  Returns the move (transfer full), or NULL for
 * a new file.  When the old path still holds a file (a hard link, or a new
 * file put in its place), the entry is not taken as a move: the old path's
 * own directory handles its row, whichever is walked first.
 */
static PixItem *find_move(Plan *p, PixDir *dir, const PixEntry *e, GHashTable *listed, GHashTable *inodes)
{
	/* an inode number made up at mount time names no file of before */
	if (dir->is_ino_unstable)
		return NULL;
	/* the rows of its inode, asked for with the window's (fetch_window()) */
	PixInode key = { e->st.dev, e->st.ino };
	const GPtrArray *rows = inodes != NULL ? g_hash_table_lookup(inodes, &key) : NULL;
	if (rows == NULL)
		return NULL;
	for (guint i = 0; i < rows->len; i++) {
		const PixFileRow *row = g_ptr_array_index(rows, i);
		/* a deleted file's inode is soon reused by a new file: only the
		 * same size and mtime make the same inode the same file */
		if (row->st.size_bytes != e->st.size_bytes || row->st.mtime_ns != e->st.mtime_ns)
			continue;
		if (is_claimed(p, row->id))
			continue;
		g_autofree char *old_path = pix_path_join(row->dir_path, row->name);
		/* on a case-insensitive file system (a camera's FAT card), the
		 * old name of a case-only rename still opens the file, but the
		 * directory no longer lists it */
		gboolean is_alias = strcmp(row->dir_path, dir->path) == 0 && !g_hash_table_contains(listed, row->name);
		if (!is_alias && !pix_path_is_gone(row->dir_path, row->name))
			continue;
		if (!pix_path_ancestor_on(old_path, row->st.dev, row->dir_fsid))
			continue;

		PixItem *item = pix_item_new(PIX_ACT_MOVE, dir, e->name);
		set_old(item, row);
		item->st = e->st;
		item->old_path = g_steal_pointer(&old_path);
		/* the content is known unless the row never had a good read */
		item->is_read = !(row->has_md5 && S_ISREG(row->st.mode) && !row->is_recheck) || p->cfg->is_reread;
		claim(p, row->id);
		g_assert(item_check(p, item, row->is_recheck || p->cfg->is_reread));
		return item;
	}
	return NULL;
}

/* Whether the row's file is the one listed, unchanged: same device,
 * inode, size, mtime and ctime; where inode numbers are made up at mount
 * time, the same name (the caller's match), size and times. */
static gboolean is_same_file(const PixDir *dir, const PixStat *row, const PixStat *now)
{
	if (!dir->is_ino_unstable)
		return pix_stat_same(row, now);
	return row->size_bytes == now->size_bytes && row->mtime_ns == now->mtime_ns && row->ctime_ns == now->ctime_ns;
}

static PixItem *missing_item(PixDir *dir, const PixFileRow *row)
{
	PixItem *item = pix_item_new(PIX_ACT_MISSING, dir, row->name);
	set_old(item, row);
	item->st = row->st;
	return item;
}

/*
 * Invariants 1 to 4 for `item`, which plan is about to hand on (or, a
 * PIX_ACT_MISSING, to defer): an item of a file comes from the complete
 * listing of its directory, after that directory's PIX_ACT_DIR item (4),
 * or from finish() once the walk has ended (1); a row re-read or moved
 * has been claimed, a row marked missing has not (2); a file is read only
 * when it is new, its row is missing or differs from it, has no MD5 or is
 * flagged for a recheck (`is_recheck`: the row's flag, or a --reread run) (3).
 */
static gboolean item_check(Plan *p, const PixItem *item, gboolean is_recheck)
{
	const PixListing *l = p->listing;

	if (item->dir == NULL || (item->name == NULL) != (item->action == PIX_ACT_DIR_MISSING))
		return FALSE;
	if (l != NULL ? item->dir != l->dir || !l->is_complete || l->is_unlisted : !p->is_walk_done)
		return FALSE;
	switch (item->action) {
	case PIX_ACT_ADD:
		return item->row_id == 0 && (!item->is_read || S_ISREG(item->st.mode));
	case PIX_ACT_CHANGE:
		if (item->row_id <= 0 || l == NULL)
			return FALSE;
		if (!item->is_read)
			return item->error != NULL;     /* not a file now: recorded, not read */
		return is_claimed(p, item->row_id) && S_ISREG(item->st.mode) &&
		       (item->was_missing || !is_same_file(item->dir, &item->old_st, &item->st) ||
		        !S_ISREG(item->old_st.mode) || !item->has_old_md5 || is_recheck);
	case PIX_ACT_MOVE:
		return item->row_id > 0 && l != NULL && is_claimed(p, item->row_id) && item->old_path != NULL &&
		       item->is_read == (!item->has_old_md5 || !S_ISREG(item->old_st.mode) || is_recheck);
	case PIX_ACT_MISSING:
		return item->row_id > 0 && !is_claimed(p, item->row_id) && !item->is_read;
	case PIX_ACT_DIR_MISSING:
		return l == NULL && item->dir->id > 0;
	default:
		return FALSE;   /* plan_listing() pushes the PIX_ACT_DIR items */
	}
}

/* Invariant 5, after a listing. */
static gboolean plan_check(const Plan *p)
{
	return p->cfg->device_class == PIX_DEVICE_ROTATIONAL ? p->to_read->len < SCHED_WINDOW : p->to_read->len == 0;
}

/* An entry that is not read: a special file, or one that cannot be stat'ed. */
static void plan_unreadable(Plan *p, PixDir *dir, const PixEntry *e, PixFileRow *row)
{
	g_autofree char *path = pix_path_join(dir->path, e->name);
	g_autofree char *q = pix_quote(path);

	if (e->stat_errno != 0) {
		pix_warn("cannot stat '%s': %s (skipping)", q, g_strerror(e->stat_errno));
		if (row != NULL)
			return;         /* unreadable is not gone, nor changed */
		PixItem *item = pix_item_new(PIX_ACT_ADD, dir, e->name);
		pix_item_set_error(item, "cannot stat: %s", g_strerror(e->stat_errno));
		g_assert(item_check(p, item, FALSE));
		pix_queue_push(p->cfg->to_store, item);
		return;
	}
	if (row != NULL && row->state == PIX_STATE_ERROR && pix_stat_same(&row->st, &e->st) && row->st.mode == e->st.mode) {
		pix_count_add(PIX_N_UNCHANGED, 1);
		return;
	}
	pix_warn("not reading '%s': it is %s (skipping)", q, file_type_name(e->st.mode));
	PixItem *item = pix_item_new(row != NULL ? PIX_ACT_CHANGE : PIX_ACT_ADD, dir, e->name);
	if (row != NULL)
		set_old(item, row);
	item->st = e->st;
	pix_item_set_error(item, "not read: it is %s", file_type_name(e->st.mode));
	g_assert(item_check(p, item, FALSE));
	pix_queue_push(p->cfg->to_store, item);
}

/* Whether an empty `dir` may be an unmounted disk: a root the user gave
 * (not a directory a watch rescans because files in it were deleted). */
static gboolean is_guarded_root(const Plan *p, const PixDir *dir)
{
	if (dir->parent != NULL)
		return FALSE;
	if (p->cfg->mount_roots == NULL)
		return TRUE;
	for (char **r = p->cfg->mount_roots; *r != NULL; r++)
		if (strcmp(*r, dir->path) == 0)
			return TRUE;
	return FALSE;
}

/* Pushes the PIX_ACT_DIR item of the directory of `l`, which makes it the
 * listing whose files' items may follow (invariant 4). */
static void push_dir(Plan *p, const PixListing *l)
{
	g_assert(p->listing == NULL);
	pix_queue_push(p->cfg->to_store, pix_item_new(PIX_ACT_DIR, l->dir, NULL));
	p->listing = l;
}

/*
 * Listings planned together, at most PLAN_WINDOW (and PLAN_WINDOW_ENTRIES
 * entries), as many as wait when plan looks: the rows of their directories, of their files and of their
 * new entries' inodes are asked for at once (one round trip per
 * PIX_STORE_SET of each to a PostgreSQL server), then each listing is
 * planned in turn as if asked alone.  The reader sees what the writer
 * committed, as a look-up per listing would (see the top): nothing the
 * window asks for can be a row this scan writes before it is planned, as
 * each directory is listed once and plan keeps its own decisions.
 */
#define PLAN_WINDOW 64
/* ... and of at most this many entries (but one listing), so that the rows
 * asked for at once stay bounded: about 200 bytes each */
#define PLAN_WINDOW_ENTRIES 20000

typedef struct {
	PixDirQuery dirs[PLAN_WINDOW];
	GHashTable *by_name[PLAN_WINDOW];   /* name -> PixFileRow of dirs[k].files */
	GHashTable *inodes;                 /* see find_move(), or NULL */
} Window;

static gboolean fetch_window(Plan *p, PixListing **ls, guint n, Window *w)
{
	g_assert(n <= PLAN_WINDOW);
	for (guint k = 0; k < n; k++)
		w->dirs[k] = (PixDirQuery){ .dir = ls[k]->dir, .want_files = ls[k]->is_complete && !ls[k]->is_unlisted };
	if (!pix_store_find_dirs(p->cfg->catalog, w->dirs, n, &p->error))
		return FALSE;
	g_autoptr(GArray) inodes = g_array_new(FALSE, FALSE, sizeof(PixInode));
	for (guint k = 0; k < n; k++) {
		w->by_name[k] = g_hash_table_new(g_str_hash, g_str_equal);
		GPtrArray *rows = w->dirs[k].files;
		for (guint i = 0; rows != NULL && i < rows->len; i++) {
			PixFileRow *row = g_ptr_array_index(rows, i);
			g_hash_table_insert(w->by_name[k], row->name, row);
		}
		/* a new regular file may be a renamed one, found by its inode
		 * (an inode number made up at mount time names no file of before;
		 * without rows on the device, no new file can be a moved one) */
		if (!w->dirs[k].want_files || ls[k]->dir->is_ino_unstable)
			continue;
		for (guint i = 0; i < ls[k]->entries->len; i++) {
			const PixEntry *e = &g_array_index(ls[k]->entries, PixEntry, i);
			if (e->stat_errno != 0 || !S_ISREG(e->st.mode) || g_hash_table_contains(w->by_name[k], e->name))
				continue;
			if (!dev_has_rows(p, e->st.dev)) {
				if (p->error != NULL)
					return FALSE;
				continue;
			}
			PixInode key = { e->st.dev, e->st.ino };
			g_array_append_val(inodes, key);
		}
	}
	if (inodes->len > 0) {
		w->inodes = pix_store_files_by_inodes(p->cfg->catalog, (const PixInode *)(void *)inodes->data,
		                                      inodes->len, &p->error);
		if (w->inodes == NULL)
			return FALSE;
	}
	return TRUE;
}

static void window_clear(Window *w, guint n)
{
	pix_dir_queries_clear(w->dirs, n);
	for (guint k = 0; k < n; k++)
		g_clear_pointer(&w->by_name[k], g_hash_table_destroy);
	g_clear_pointer(&w->inodes, g_hash_table_destroy);
}

/* fetch_window(), again after connecting again where the catalog's
 * connection was lost (PostgreSQL: the server restarted): a read is safe
 * to repeat.  A few times at most. */
static gboolean fetch_window_again(Plan *p, PixListing **ls, guint n, Window *w)
{
	for (guint tries = 1;; tries++) {
		if (fetch_window(p, ls, n, w))
			return TRUE;
		if (tries >= 3 || !g_error_matches(p->error, PIX_STORE_ERROR, PIX_STORE_ERROR_LOST) || pix_stop_requested())
			return FALSE;
		pix_notice("%s: connecting again", p->error->message);
		g_clear_error(&p->error);
		window_clear(w, n);
		*w = (Window){ 0 };
		if (!pix_store_reconnect(p->cfg->catalog, 8, &p->error))
			return FALSE;
	}
}

/* Plans listing `l`, whose rows are dirs[k] of window `w`. */
static void plan_listing(Plan *p, PixListing *l, Window *w, guint k)
{
	PixDir *dir = l->dir;
	GHashTable *by_name = w->by_name[k];
	g_autoptr(GPtrArray) reads = g_ptr_array_new();
	const PixDirRow *drow = w->dirs[k].row;

	/* the row id as plan knows it: after the push below, the store thread
	 * owns dir->id (it sets it for a new directory) */
	gint64 dir_id = 0;
	if (drow != NULL) {
		dir_id = dir->id = drow->id;
		g_hash_table_add(p->visited, GSIZE_TO_POINTER((gsize)drow->id));
	}
	push_dir(p, l);
	if (l->is_unlisted) {
		/* --quick: as the catalog has it */
		pix_count_add(PIX_N_UNCHANGED, l->n_known_files);
		return;
	}
	if (!l->is_complete)
		return;         /* unreadable is not gone: leave its rows alone */

	guint n_present = 0;
	for (guint i = 0; w->dirs[k].files != NULL && i < w->dirs[k].files->len; i++)
		n_present += ((PixFileRow *)g_ptr_array_index(w->dirs[k].files, i))->state != PIX_STATE_MISSING;
	g_autoptr(GHashTable) listed = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < l->entries->len; i++)
		g_hash_table_add(listed, g_array_index(l->entries, PixEntry, i).name);
	if (is_guarded_root(p, dir) && l->entries->len == 0 && l->n_subdirs == 0 && dir_id > 0) {
		g_autoptr(GPtrArray) below = pix_store_dirs_under(p->cfg->catalog, dir->path, &p->error);
		if (n_present > 0 || (below != NULL && below->len > 1)) {
			g_autofree char *q = pix_quote(dir->path);
			pix_warn("'%s' is empty but the catalog has files under it: not marking them missing"
			         " (is a disk unmounted?)", q);
			g_hash_table_add(p->unsafe_roots, g_strdup(dir->path));
			return;
		}
	}

	for (guint i = 0; i < l->entries->len && p->error == NULL; i++) {
		const PixEntry *e = &g_array_index(l->entries, PixEntry, i);
		PixFileRow *row = g_hash_table_lookup(by_name, e->name);
		if (row != NULL) {
			g_hash_table_remove(by_name, e->name);
			if (is_claimed(p, row->id)) {
				/* its file moved away, and a new one appeared since:
				 * the next scan adds it, after the move is stored */
				g_autofree char *q = pix_quote(e->name);
				pix_info("'%s' reappeared during the scan; indexing it next time", q);
				continue;
			}
		}

		if (e->stat_errno != 0 || !S_ISREG(e->st.mode)) {
			plan_unreadable(p, dir, e, row);
			continue;
		}
		if (p->cfg->busy_files != NULL && g_hash_table_size(p->cfg->busy_files) > 0) {
			g_autofree char *path = pix_path_join(dir->path, e->name);
			if (g_hash_table_contains(p->cfg->busy_files, path))
				continue;   /* still being written: read once it is closed */
		}
		if (row != NULL) {
			if (row->state != PIX_STATE_MISSING && is_same_file(dir, &row->st, &e->st) &&
			    S_ISREG(row->st.mode) && row->has_md5 && !row->is_recheck && !p->cfg->is_reread) {
				pix_count_add(PIX_N_UNCHANGED, 1);
				continue;
			}
			PixItem *item = pix_item_new(PIX_ACT_CHANGE, dir, e->name);
			set_old(item, row);
			item->st = e->st;
			item->is_read = TRUE;
			/* decided: no later directory may take it as moved */
			claim(p, row->id);
			g_assert(item_check(p, item, row->is_recheck || p->cfg->is_reread));
			g_ptr_array_add(reads, item);
			continue;
		}
		PixItem *item = find_move(p, dir, e, listed, w->inodes);
		if (item == NULL) {
			item = pix_item_new(PIX_ACT_ADD, dir, e->name);
			item->st = e->st;
			item->is_read = TRUE;
			g_assert(item_check(p, item, FALSE));
		}
		if (item->is_read)
			g_ptr_array_add(reads, item);
		else
			pix_queue_push(p->cfg->to_store, item);
	}

	/* rows the listing lacks: gone, unless a later directory claims them */
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, by_name);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		PixFileRow *row = value;
		if (row->state == PIX_STATE_MISSING || is_claimed(p, row->id))
			continue;
		if (pix_path_is_gone(dir->path, row->name)) {
			PixItem *item = missing_item(dir, row);
			g_assert(item_check(p, item, FALSE));
			g_ptr_array_add(p->vanished, item);
		}
	}

	for (guint i = 0; i < reads->len; i++) {
		PixItem *item = g_ptr_array_index(reads, i);
		item->want_thumb = p->cfg->is_thumbnails;
		const PixThumbIndex *known = p->cfg->thumbs_known;
		if (item->want_thumb && known != NULL && pix_thumb_index_has_size(known, item->st.size_bytes))
			item->thumbs_known = known;
		g_ptr_array_add(p->to_read, item);
	}
	if (p->cfg->device_class != PIX_DEVICE_ROTATIONAL || p->to_read->len >= SCHED_WINDOW)
		flush_reads(p);
}

static gboolean is_unsafe(Plan *p, const char *path)
{
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, p->unsafe_roots);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (pix_path_is_under(path, key))
			return TRUE;
	return FALSE;
}

/* After a complete walk: rows of directories the walk did not meet, whose
 * path is gone, and rows deferred as vanished, become missing. */
static void finish(Plan *p)
{
	for (guint i = 0; i < p->vanished->len; i++) {
		PixItem *item = g_ptr_array_index(p->vanished, i);
		/* claimed by a move, or back since (saved by delete-and-create) */
		if (is_claimed(p, item->row_id) || !pix_path_is_gone(item->dir->path, item->name))
			continue;
		g_ptr_array_index(p->vanished, i) = NULL;
		g_assert(item_check(p, item, FALSE));
		pix_queue_push(p->cfg->to_store, item);
	}
	for (char **root = p->cfg->roots; *root != NULL && p->error == NULL; root++) {
		if (is_unsafe(p, *root))
			continue;
		g_autoptr(GPtrArray) dirs = pix_store_dirs_under(p->cfg->catalog, *root, &p->error);
		for (guint i = 0; dirs != NULL && i < dirs->len && p->error == NULL; i++) {
			PixDirRow *drow = g_ptr_array_index(dirs, i);
			struct stat st;
			if (g_hash_table_contains(p->visited, GSIZE_TO_POINTER((gsize)drow->id)))
				continue;
			if (pix_path_lstat(drow->path, &st) == 0 ? S_ISDIR(st.st_mode) : errno != ENOENT)
				continue;       /* still there (excluded, another mount, unreadable) */
			g_autoptr(PixDir) dir = pix_dir_new(drow->path);
			dir->id = drow->id;
			g_autoptr(GPtrArray) rows = pix_store_dir_files(p->cfg->catalog, drow->id, &p->error);
			for (guint j = 0; rows != NULL && j < rows->len; j++) {
				PixFileRow *row = g_ptr_array_index(rows, j);
				if (row->state != PIX_STATE_MISSING && !is_claimed(p, row->id)) {
					PixItem *item = missing_item(dir, row);
					g_assert(item_check(p, item, FALSE));
					pix_queue_push(p->cfg->to_store, item);
				}
			}
			PixItem *item = pix_item_new(PIX_ACT_DIR_MISSING, dir, NULL);
			g_assert(item_check(p, item, FALSE));
			pix_queue_push(p->cfg->to_store, item);
		}
	}
}

gboolean pix_plan_run(const PixPlanConfig *cfg, GError **error)
{
	Plan p = {
		.cfg = cfg,
		.claimed = g_hash_table_new(g_direct_hash, g_direct_equal),
		.visited = g_hash_table_new(g_direct_hash, g_direct_equal),
		.dev_has_rows = g_hash_table_new(g_direct_hash, g_direct_equal),
		.unsafe_roots = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.vanished = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
		.to_read = g_ptr_array_new_with_free_func((GDestroyNotify)pix_item_free),
	};
	PixListing *ls[PLAN_WINDOW];
	guint n;
	while ((n = pix_queue_pop_many(cfg->in, (gpointer *)ls, PLAN_WINDOW, -1, NULL)) > 0) {
		for (guint from = 0, to; from < n; from = to) {
			guint n_entries = ls[from]->entries->len;
			for (to = from + 1; to < n && n_entries + ls[to]->entries->len <= PLAN_WINDOW_ENTRIES; to++)
				n_entries += ls[to]->entries->len;
			Window w = { 0 };
			if (p.error == NULL && !pix_stop_requested() && fetch_window_again(&p, ls + from, to - from, &w)) {
				for (guint k = 0; k < to - from && p.error == NULL && !pix_stop_requested(); k++) {
					plan_listing(&p, ls[from + k], &w, k);
					p.listing = NULL;
					g_assert(plan_check(&p));
				}
			}
			if (p.error != NULL)
				pix_request_stop();
			window_clear(&w, to - from);
		}
		for (guint k = 0; k < n; k++)
			pix_listing_free(ls[k]);
	}
	if (p.error == NULL && !pix_stop_requested()) {
		p.is_walk_done = TRUE;
		flush_reads(&p);
		finish(&p);
	}

	pix_queue_close(cfg->to_read);
	pix_queue_close(cfg->to_store);
	g_hash_table_destroy(p.claimed);
	g_hash_table_destroy(p.visited);
	g_hash_table_destroy(p.dev_has_rows);
	g_hash_table_destroy(p.unsafe_roots);
	g_ptr_array_free(p.vanished, TRUE);
	g_ptr_array_free(p.to_read, TRUE);   /* what a stop left unread */
	if (p.error != NULL) {
		pix_request_stop();
		g_propagate_error(error, p.error);
		return FALSE;
	}
	return TRUE;
}

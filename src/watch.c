/*
 * watch.c: inotify watches over the watched trees, and the directories
 * their events make due for a rescan (see watch.h).
 *
 * Reads the inotify file descriptor and lists directories (to watch new
 * ones); writes nothing but diagnostics.  Main thread.
 *
 * Invariants:
 *  1. A new directory gets its watch before it is listed (here to find its
 *     subdirectories, then by the rescan), so a file created in it at any
 *     time raises an event or is found by the listing.
 *  2. A file seen being written (IN_CREATE, IN_MODIFY) is busy until
 *     IN_CLOSE_WRITE (or it is moved or deleted): plan leaves busy files
 *     alone, so a file is read once it is complete.  A file busy without
 *     news for BUSY_EXPIRY (a hard link gets IN_CREATE and no close; an
 *     overflow loses the close) is read all the same.
 *  3. On IN_Q_OVERFLOW events were lost: every tree is watched again (new
 *     directories may lack a watch) and rescanned in full.
 *  4. A directory that cannot be watched (the watch limit) is named once
 *     and its subtree rescanned every rescan_us instead.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "watch.h"
#include "log.h"
#include "path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* A busy file without an event for this long is taken as written. */
#define BUSY_EXPIRY_US (10 * G_USEC_PER_SEC)

#define WATCH_MASK (IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | \
                    IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

/* A directory waiting for its rescan. */
typedef struct {
	gint64 first_us;            /* its first event since the last rescan */
	gint64 due_us;              /* its last event + settle */
	gboolean is_tree;           /* rescan its whole subtree (it is new) */
	gboolean is_full;           /* list all of it (a subtree without watches) */
} Dirty;

struct PixWatch {
	int fd;
	PixWatchConfig cfg;
	const PixWalkConfig *walk;
	char **roots;               /* (owned) */
	GHashTable *wd_path;        /* wd -> path (owned) */
	GHashTable *path_wd;        /* path (borrowed from wd_path) -> wd */
	GHashTable *dirty;          /* path (owned) -> Dirty (owned) */
	GHashTable *busy;           /* full path (owned) of a file being written ->
	                               time of its last event (gint64, owned) */
	GHashTable *unwatched;      /* paths (owned) of subtrees without a watch */
	gboolean is_overflow;
	gboolean is_limit_told;
	gint64 next_unwatched_us;
};

void pix_watch_batch_clear(PixWatchBatch *b)
{
	g_strfreev(b->roots);
	if (b->always_list != NULL)
		g_hash_table_unref(b->always_list);
	memset(b, 0, sizeof *b);
}

static void mark_dirty(PixWatch *w, const char *dir, gboolean is_tree)
{
	gint64 now = g_get_monotonic_time();
	Dirty *d = g_hash_table_lookup(w->dirty, dir);
	if (d == NULL) {
		d = g_new0(Dirty, 1);
		d->first_us = now;
		g_hash_table_insert(w->dirty, g_strdup(dir), d);
	}
	d->due_us = now + w->cfg.settle_us;
	d->is_tree |= is_tree;
}

static void forget_wd(PixWatch *w, int wd)
{
	const char *path = g_hash_table_lookup(w->wd_path, GINT_TO_POINTER(wd));
	if (path == NULL)
		return;
	g_hash_table_remove(w->path_wd, path);
	g_hash_table_remove(w->wd_path, GINT_TO_POINTER(wd));
}

/* Adds a watch on `path`; FALSE when it cannot (reported). */
static gboolean add_watch(PixWatch *w, const char *path)
{
	int wd = inotify_add_watch(w->fd, path, WATCH_MASK);
	if (wd < 0) {
		int err = errno;
		g_autofree char *q = pix_quote(path);
		if (err == ENOSPC) {
			if (!w->is_limit_told)
				pix_notice("the inotify watch limit is reached at '%s': directories without a watch are "
				           "rescanned every %d s; raise it with 'sysctl fs.inotify.max_user_watches=N'",
				           q, (int)(w->cfg.rescan_us / G_USEC_PER_SEC));
			w->is_limit_told = TRUE;
			g_hash_table_add(w->unwatched, g_strdup(path));
		} else if (err != ENOENT && err != ENOTDIR) {
			pix_warn("cannot watch '%s': %s", q, g_strerror(err));
		}
		return FALSE;
	}
	const char *old = g_hash_table_lookup(w->wd_path, GINT_TO_POINTER(wd));
	if (old != NULL)
		g_hash_table_remove(w->path_wd, old);
	char *owned = g_strdup(path);
	g_hash_table_insert(w->wd_path, GINT_TO_POINTER(wd), owned);
	g_hash_table_insert(w->path_wd, owned, GINT_TO_POINTER(wd));
	g_hash_table_remove(w->unwatched, path);
	return TRUE;
}

/* Watches `top` and every directory below it that a scan would enter:
 * each gets its watch before it is listed (invariant 1). */
static void watch_tree(PixWatch *w, const char *top)
{
	g_autoptr(GPtrArray) todo = g_ptr_array_new_with_free_func(g_free);
	struct stat st;

	if (pix_path_lstat(top, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	guint64 top_dev = (guint64)st.st_dev;
	g_ptr_array_add(todo, g_strdup(top));
	while (todo->len > 0) {
		g_autofree char *dir = g_ptr_array_steal_index_fast(todo, todo->len - 1);
		if (!add_watch(w, dir))
			continue;
		int fd = pix_path_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		if (d == NULL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
				continue;
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
				continue;
			if ((guint64)st.st_dev != top_dev && !w->walk->is_cross_mounts)
				continue;
			if (pix_walk_is_excluded(w->walk, dir, e->d_name))
				continue;
			g_ptr_array_add(todo, pix_path_join(dir, e->d_name));
		}
		closedir(d);
	}
}

/* Drops the watches of `top` and below (moved out of the trees). */
static void unwatch_tree(PixWatch *w, const char *top)
{
	GHashTableIter it;
	gpointer key, value;
	g_autoptr(GArray) wds = g_array_new(FALSE, FALSE, sizeof(int));
	g_hash_table_iter_init(&it, w->wd_path);
	while (g_hash_table_iter_next(&it, &key, &value))
		if (pix_path_is_under(value, top)) {
			int wd = GPOINTER_TO_INT(key);
			g_array_append_val(wds, wd);
		}
	for (guint i = 0; i < wds->len; i++) {
		int wd = g_array_index(wds, int, i);
		inotify_rm_watch(w->fd, wd);
		forget_wd(w, wd);
	}
}

/* A directory renamed within the trees: its watches stay, their paths
 * change. */
static void rename_tree(PixWatch *w, const char *from, const char *to)
{
	GHashTableIter it;
	gpointer key, value;
	gsize from_len = strlen(from);
	g_autoptr(GPtrArray) moved = g_ptr_array_new();   /* wd keys */
	g_hash_table_iter_init(&it, w->wd_path);
	while (g_hash_table_iter_next(&it, &key, &value))
		if (pix_path_is_under(value, from))
			g_ptr_array_add(moved, key);
	for (guint i = 0; i < moved->len; i++) {
		int wd = GPOINTER_TO_INT(g_ptr_array_index(moved, i));
		const char *old = g_hash_table_lookup(w->wd_path, GINT_TO_POINTER(wd));
		char *now = g_strconcat(to, old + from_len, NULL);
		g_hash_table_remove(w->path_wd, old);
		g_hash_table_insert(w->wd_path, GINT_TO_POINTER(wd), now);
		g_hash_table_insert(w->path_wd, now, GINT_TO_POINTER(wd));
	}
}

static gboolean is_root(PixWatch *w, const char *path)
{
	for (char **r = w->roots; *r != NULL; r++)
		if (strcmp(*r, path) == 0)
			return TRUE;
	return FALSE;
}

/* One event (see the invariants); `moved_from` pairs directory renames by
 * cookie within one read. */
static void on_event(PixWatch *w, const struct inotify_event *ev, GHashTable *moved_from)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		if (!w->is_overflow)
			pix_notice("the inotify queue overflowed: rescanning everything");
		w->is_overflow = TRUE;
		return;
	}
	const char *dir = g_hash_table_lookup(w->wd_path, GINT_TO_POINTER(ev->wd));
	if (dir == NULL)
		return;
	if (ev->mask & IN_IGNORED) {
		forget_wd(w, ev->wd);
		return;
	}
	if (ev->mask & IN_UNMOUNT) {
		/* a disk unplugged under a root: the root's pass finds its
		 * volume offline (its files kept as offline, none missing) */
		if (is_root(w, dir)) {
			g_autofree char *q = pix_quote(dir);
			pix_notice("'%s' was unmounted: its files are kept, as offline; no longer watching it", q);
			mark_dirty(w, dir, FALSE);
		}
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		if (is_root(w, dir)) {
			g_autofree char *q = pix_quote(dir);
			pix_warn("'%s' is gone (deleted, moved or unmounted): no longer watching it", q);
		}
		return;
	}
	if (ev->len == 0)
		return;
	g_autofree char *path = pix_path_join(dir, ev->name);
	if (ev->mask & IN_ISDIR) {
		if (pix_walk_is_excluded(w->walk, dir, ev->name))
			return;
		mark_dirty(w, dir, FALSE);
		if (ev->mask & IN_MOVED_FROM) {
			g_hash_table_insert(moved_from, GUINT_TO_POINTER(ev->cookie), g_strdup(path));
		} else if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
			const char *from = (ev->mask & IN_MOVED_TO) && ev->cookie != 0
			                   ? g_hash_table_lookup(moved_from, GUINT_TO_POINTER(ev->cookie)) : NULL;
			if (from != NULL) {
				g_autofree char *from_dir = g_path_get_dirname(from);
				rename_tree(w, from, path);
				mark_dirty(w, from_dir, FALSE);
				g_hash_table_remove(moved_from, GUINT_TO_POINTER(ev->cookie));
			} else {
				watch_tree(w, path);
			}
			mark_dirty(w, path, TRUE);
		}
		return;
	}
	if (ev->mask & (IN_CREATE | IN_MODIFY)) {
		gint64 *t = g_hash_table_lookup(w->busy, path);
		if (t == NULL) {
			t = g_new(gint64, 1);
			g_hash_table_insert(w->busy, g_strdup(path), t);
		}
		*t = g_get_monotonic_time();
	} else if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE))
		g_hash_table_remove(w->busy, path);
	mark_dirty(w, dir, FALSE);
}

/* Reads what the kernel has queued; FALSE on a read error. */
static gboolean read_events(PixWatch *w)
{
	/* aligned as struct inotify_event requires */
	static char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	g_autoptr(GHashTable) moved_from = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof buf);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			pix_error("cannot read inotify events: %s", g_strerror(errno));
			return FALSE;
		}
		if (n == 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			on_event(w, ev, moved_from);
			p += sizeof(struct inotify_event) + ev->len;
		}
	}
	/* directories moved out of the trees: no watch for them any more;
	 * their old parent is due, and its rescan finds their files gone */
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, moved_from);
	while (g_hash_table_iter_next(&it, NULL, &value))
		unwatch_tree(w, value);
	return TRUE;
}

PixWatch *pix_watch_new(char **roots, const PixWalkConfig *walk, const PixWatchConfig *cfg, GError **error)
{
	PixWatch *w = g_new0(PixWatch, 1);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		int err = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "cannot use inotify: %s", g_strerror(err));
		g_free(w);
		return NULL;
	}
	w->cfg = *cfg;
	w->walk = walk;
	w->roots = g_strdupv(roots);
	w->wd_path = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	w->path_wd = g_hash_table_new(g_str_hash, g_str_equal);
	w->dirty = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	w->busy = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	w->unwatched = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (char **r = roots; *r != NULL; r++)
		watch_tree(w, *r);
	w->next_unwatched_us = g_get_monotonic_time() + cfg->rescan_us;
	return w;
}

void pix_watch_free(PixWatch *w)
{
	if (w == NULL)
		return;
	close(w->fd);
	g_strfreev(w->roots);
	g_hash_table_destroy(w->path_wd);
	g_hash_table_destroy(w->wd_path);
	g_hash_table_destroy(w->dirty);
	g_hash_table_destroy(w->busy);
	g_hash_table_destroy(w->unwatched);
	g_free(w);
}

GHashTable *pix_watch_busy_files(PixWatch *w)
{
	return w->busy;
}

guint pix_watch_count(PixWatch *w)
{
	return g_hash_table_size(w->wd_path);
}

/* The batch of the directories due at `now` (and removes them from dirty). */
static void take_due(PixWatch *w, gint64 now, PixWatchBatch *batch)
{
	g_autoptr(GPtrArray) due = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	gpointer key, value;

	batch->always_list = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_hash_table_iter_init(&it, w->dirty);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		Dirty *d = value;
		if (now < d->due_us && now - d->first_us < w->cfg.max_delay_us)
			continue;
		struct stat st;
		if (pix_path_lstat(key, &st) != 0 && errno == ENOENT) {
			/* deleted or moved away since: its parent's rescan (its
			 * own event made it due) finds what it held gone */
			g_hash_table_iter_remove(&it);
			continue;
		}
		g_ptr_array_add(due, g_strdup(key));
		g_hash_table_add(batch->always_list, g_strdup(key));
		batch->is_full |= d->is_full;
		g_hash_table_iter_remove(&it);
	}
	/* the walk enters every subdirectory (unchanged ones unlisted, as
	 * --quick does), so a directory below another due one is covered */
	batch->roots = pix_path_outermost(due);
}

/* Busy files without news for BUSY_EXPIRY_US are read after all. */
static void expire_busy(PixWatch *w, gint64 now)
{
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, w->busy);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		if (now - *(gint64 *)value < BUSY_EXPIRY_US)
			continue;
		g_autofree char *dir = g_path_get_dirname(key);
		mark_dirty(w, dir, FALSE);
		g_hash_table_iter_remove(&it);
	}
}

/* When the next directory falls due (monotonic µs), or -1. */
static gint64 next_due(PixWatch *w)
{
	gint64 next = g_hash_table_size(w->unwatched) > 0 ? w->next_unwatched_us : -1;
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, w->busy);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		gint64 t = *(gint64 *)value + BUSY_EXPIRY_US;
		if (next < 0 || t < next)
			next = t;
	}
	g_hash_table_iter_init(&it, w->dirty);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		Dirty *d = value;
		gint64 t = MIN(d->due_us, d->first_us + w->cfg.max_delay_us);
		if (next < 0 || t < next)
			next = t;
	}
	return next;
}

gboolean pix_watch_next(PixWatch *w, PixWatchBatch *batch)
{
	memset(batch, 0, sizeof *batch);
	while (!pix_stop_requested()) {
		gint64 now = g_get_monotonic_time();
		if (w->is_overflow) {
			/* the closes of busy files may be among the events lost */
			w->is_overflow = FALSE;
			g_hash_table_remove_all(w->busy);
			g_hash_table_remove_all(w->dirty);
			for (char **r = w->roots; *r != NULL; r++)
				watch_tree(w, *r);
			batch->roots = g_strdupv(w->roots);
			batch->is_full = TRUE;
			return TRUE;
		}
		if (g_hash_table_size(w->unwatched) > 0 && now >= w->next_unwatched_us) {
			/* try again (the limit may have been raised), and rescan */
			g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
			GHashTableIter it;
			gpointer key;
			g_hash_table_iter_init(&it, w->unwatched);
			while (g_hash_table_iter_next(&it, &key, NULL))
				g_ptr_array_add(paths, g_strdup(key));
			g_hash_table_remove_all(w->unwatched);
			for (guint i = 0; i < paths->len; i++) {
				const char *p = g_ptr_array_index(paths, i);
				watch_tree(w, p);
				mark_dirty(w, p, TRUE);
				Dirty *d = g_hash_table_lookup(w->dirty, p);
				d->due_us = now;
				d->is_full = TRUE;  /* no events from it: list all of it */
			}
			w->next_unwatched_us = now + w->cfg.rescan_us;
		}
		expire_busy(w, now);
		gint64 next = next_due(w);
		if (next >= 0 && next <= now) {
			take_due(w, now, batch);
			if (batch->roots[0] != NULL)
				return TRUE;
			pix_watch_batch_clear(batch);
			continue;
		}
		struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
		int timeout_ms = next < 0 ? -1 : (int)MIN((next - now + 999) / 1000, G_MAXINT);
		int rc = poll(&pfd, 1, timeout_ms);
		if (rc < 0 && errno != EINTR) {
			pix_error("cannot wait for inotify events: %s", g_strerror(errno));
			return FALSE;
		}
		if (rc > 0 && !read_events(w))
			return FALSE;
	}
	return FALSE;
}

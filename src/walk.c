/*
 * walk.c: the directory walker (see walk.h).
 *
 * Reads directories (getdents64 into a 256 KiB buffer) and inodes (fstatat
 * relative to the directory fd, in inode order); writes PixListings to its
 * output queue.
 *
 * Threads.  pix_walk_run() runs on the walker thread.  With n_threads <= 1
 * that thread does everything, as it always did.  With more, a pool of
 * n_threads threads makes the system calls for it (open, fstat, fstatfs,
 * getdents64, fstatat) and applies the excludes, directories ahead of the
 * walk, because on a network file system each call is a round trip and
 * only many in flight hide them (issue 17).  Everything that needs the
 * walk's state stays on the walker thread: the --quick question to the
 * catalog, the decisions about each entry (symbolic link, other mount,
 * bind-mount loop, subdirectory), every listing pushed, every warning and
 * counter, and pix_stop_requested().  The pool's threads touch only an
 * Ahead handed to them, and the walker reads it only once its tasks have
 * all ended (Pool.lock orders the two).
 *
 * The walk is depth first with an explicit stack of frames, one per open
 * directory, so a deep tree costs one file descriptor per level and no C
 * recursion; a name is opened relative to its parent's fd, so paths longer
 * than PATH_MAX work.
 *
 * The parallel walk keeps the same stack and enters directories in the
 * same order; what changes is who lists them and when.  Once a directory is
 * listed and its entries decided (its Ahead is ready), its subdirectories
 * are known, and the next ones in walk order (depth first from the
 * frames' next subdirectories through the ready Aheads below them) are
 * handed to the pool, at most AHEAD_DIRS directories started and not yet
 * entered, holding at most about AHEAD_ENTRIES entries.  When the walk
 * reaches a directory it waits for its Ahead (starting it first if it was
 * not), and entering it is what the one-thread walk does after listing.
 *
 * Invariants:
 *  1. Every directory the walker enters yields exactly one listing, pushed
 *     before the listings of its subdirectories (plan relies on a parent's
 *     directory row being written before its children's).
 *  2. The frames on the stack are the chain of ancestors of the directory
 *     being listed, the chain of PixDir.parent: a subdirectory whose (dev,
 *     ino) equals one of them is a loop and is not entered.  An Ahead's
 *     PixDir.parent chain is that of the frames it will be entered on, so
 *     deciding its entries ahead of the walk meets the same ancestors.
 *  3. An entry that is excluded, a symbolic link, a directory on another
 *     mount, or a subdirectory is never in a listing's entries.  An entry
 *     that cannot be stat'ed is known by its getdents64 type alone: a
 *     directory goes with the subdirectories, anything else (a symbolic
 *     link included) is an entry carrying its stat_errno.
 *  4. A listing's entries, and the subdirectories a listed directory
 *     enters, are in ascending getdents64 inode order (hard links share a
 *     number); the subdirectories --quick takes from the catalog have none.
 *  5. (parallel) Each Ahead is owned by the DirName it was started for
 *     until the walk reaches it, then by the walker until it is entered;
 *     its fd stays open while any Ahead below it exists (a frame is popped,
 *     and an Ahead freed, only once its subdirectories' Aheads are gone),
 *     so a pool thread opening a name relative to a parent's fd finds it
 *     open.  At most AHEAD_DIRS + 1 Aheads exist, each with at most one fd.
 *
 * listing_check() and stack_check() assert 1 to 4 where a listing is pushed
 * and where a frame is entered, ahead_check() 5 where an Ahead is started.
 * Not checked there: that an entry is not excluded (matching every entry
 * against every pattern again would double the cost glob_match() exists to
 * save; the decision is made in one place, pix_walk_is_excluded()), and the
 * loop half of 2 (a frame's (dev, ino) is compared with its ancestors' from
 * the fstatat() made while listing the parent; the directory opened after
 * it may differ after a rename, and --quick's subdirectories come
 * unstat'ed from the catalog).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "walk.h"
#include "log.h"
#include "path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GETDENTS_BUF_BYTES (256 * 1024)

/* The parallel walk's bounds: directories started ahead of the walk and
 * not yet entered (each holds one fd: this bounds the walk's fds to this
 * plus the depth), and the entries and subdirectories the ready ones hold
 * (about 100 bytes each with the name).  The pool starts no more while
 * either is reached. */
#define AHEAD_DIRS 64
#define AHEAD_ENTRIES (256 * 1024)
/* fstatat() calls per pool task: one directory's are spread over the
 * threads in chunks of at least MIN (a hand-off costs a few of them) and
 * at most MAX (a chunk runs to its end when the walk is stopped) */
#define STAT_CHUNK_MIN 8
#define STAT_CHUNK_MAX 256
/* more threads than this could only wait on one another */
#define MAX_THREADS 256

/* The kernel's struct linux_dirent64, as getdents64(2) fills the buffer. */
struct linux_dirent64 {
	guint64 d_ino;
	gint64 d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

typedef struct Ahead Ahead;

typedef struct {
	char *name;         /* (owned; NULL once the walk has taken it) */
	guint64 ino;
	Ahead *ahead;       /* the parallel walk's work on this directory, once
	                       started, or NULL (owned, invariant 5) */
} DirName;

typedef struct {
	int fd;
	PixDir *dir;        /* (ref) */
	GArray *subdirs;    /* DirName, in inode order */
	guint next;         /* index of the next subdir to enter */
} Frame;

static const char *const default_excludes[] = {
	".thumbnails", ".thumbs", "@eaDir", ".@__thumb", ".git", ".svn",
	".Trash-*", ".Trashes", "lost+found", ".DS_Store", "._*", "Thumbs.db",
	"*.photoidx-tmp",
	/* KPhotoAlbum's own files beside its images (doc/kphotoalbum.md):
	 * its Exif database, backups and autosave of index.xml, video
	 * thumbnails, tag icons, and photoidx's record of its last export
	 * there; index.xml itself where exif-info.db is (is_kpa_file()) */
	"exif-info.db", "index.xml~*", ".#index.xml*", ".videoThumbnails", "CategoryImages", ".photoidx-kpa", NULL
};

/* KPhotoAlbum's files that are known by their directory: index.xml (and
 * its temporary and the annotation dialog's layout) beside an
 * exif-info.db, which KPhotoAlbum and photoidx's export make there. */
static gboolean is_kpa_file(const char *dir_path, const char *name)
{
	if (strcmp(name, "index.xml") != 0 && strcmp(name, "index.xml.tmp") != 0 && strcmp(name, "layout.dat") != 0)
		return FALSE;
	g_autofree char *db = pix_path_join(dir_path, "exif-info.db");
	return access(db, F_OK) == 0;
}

/*
 * Invariants 1 and 2 at the top of the stack, where the stack changes: the
 * top frame is an open directory whose parent is the frame below it (a
 * root, without parent, at the bottom), and that frame was listed before
 * the top was entered (its subdirs are set; `next` has passed the one
 * entered).  Each frame was checked when it was the top and only `next`
 * changes below the top, so the whole chain holds at O(1) per check.
 */
static gboolean stack_check(const GArray *stack)
{
	if (stack->len == 0)
		return TRUE;
	const Frame *top = &g_array_index(stack, Frame, stack->len - 1);
	if (top->fd < 0 || top->dir == NULL || (top->subdirs != NULL && top->next > top->subdirs->len))
		return FALSE;
	if (stack->len == 1)
		return top->dir->parent == NULL;
	const Frame *below = &g_array_index(stack, Frame, stack->len - 2);
	return top->dir->parent == below->dir && below->subdirs != NULL && below->next > 0 &&
	       below->next <= below->subdirs->len;
}

/*
 * Invariants 3 and 4 for listing `l`, about to be pushed, of the directory
 * of `frame` (NULL: one that could not be opened).  O(entries), once per
 * directory: less than the sort and the stat calls that made it.
 */
static gboolean listing_check(const PixListing *l, const Frame *frame)
{
	if (l->dir == NULL || l->entries == NULL)
		return FALSE;
	/* complete, unlisted (--quick), or failed with the reason */
	if (l->is_complete == (l->is_unlisted || l->dir->error != NULL))
		return FALSE;
	if ((l->is_unlisted || !l->is_complete) && l->entries->len > 0)
		return FALSE;
	for (guint i = 0; i < l->entries->len; i++) {
		const PixEntry *e = &g_array_index(l->entries, PixEntry, i);
		if (e->name == NULL || (i > 0 && g_array_index(l->entries, PixEntry, i - 1).ino > e->ino))
			return FALSE;
		if (e->stat_errno == 0 ? S_ISDIR(e->st.mode) || S_ISLNK(e->st.mode)
		                       : e->stat_errno == ENOENT || e->d_type == DT_DIR)
			return FALSE;
	}
	if (frame == NULL)
		return l->n_subdirs == 0;
	if (frame->subdirs == NULL || frame->next != 0 || l->n_subdirs != frame->subdirs->len)
		return FALSE;
	for (guint i = 1; i < frame->subdirs->len; i++)
		if (g_array_index(frame->subdirs, DirName, i - 1).ino > g_array_index(frame->subdirs, DirName, i).ino)
			return FALSE;
	return TRUE;
}

const char *const *pix_walk_default_excludes(void)
{
	return default_excludes;
}

void pix_listing_free(PixListing *l)
{
	if (l == NULL)
		return;
	pix_dir_unref(l->dir);
	if (l->entries != NULL) {
		for (guint i = 0; i < l->entries->len; i++)
			g_free(g_array_index(l->entries, PixEntry, i).name);
		g_array_free(l->entries, TRUE);
	}
	g_free(l);
}

/*
 * fnmatch(pattern, text, 0), without fnmatch for the patterns most
 * excludes are: a plain name, "prefix*" and "*suffix".  fnmatch converts
 * to wide characters in a UTF-8 locale, which for the default patterns
 * cost more than stat'ing each entry.
 */
static gboolean glob_match(const char *pattern, const char *text)
{
	const char *special = strpbrk(pattern, "*?[\\");
	if (special == NULL)
		return strcmp(pattern, text) == 0;
	gsize plen = strlen(pattern);
	if (special == pattern + plen - 1 && *special == '*')
		return strncmp(pattern, text, plen - 1) == 0;
	if (special == pattern && pattern[0] == '*' && strpbrk(pattern + 1, "*?[\\") == NULL) {
		gsize tlen = strlen(text), slen = plen - 1;
		return tlen >= slen && memcmp(text + tlen - slen, pattern + 1, slen) == 0;
	}
	return fnmatch(pattern, text, 0) == 0;
}

/* Whether `path` is dir_path + "/" + name, without building the latter. */
static gboolean is_path_of(const char *path, const char *dir_path, const char *name)
{
	gsize dlen = strcmp(dir_path, "/") == 0 ? 0 : strlen(dir_path);
	return strncmp(path, dir_path, dlen) == 0 && path[dlen] == '/' && strcmp(path + dlen + 1, name) == 0;
}

gboolean pix_walk_is_excluded(const PixWalkConfig *cfg, const char *dir_path, const char *name)
{
	g_autofree char *path = NULL;

	for (char **p = cfg->exclude_paths; p != NULL && *p != NULL; p++)
		if (is_path_of(*p, dir_path, name))
			return TRUE;
	if (cfg->excludes == NULL)
		return FALSE;
	for (char **p = cfg->excludes; *p != NULL; p++) {
		if (strchr(*p, '/') == NULL) {
			if (glob_match(*p, name))
				return TRUE;
			/* excluding KPhotoAlbum's database excludes its index */
			if (strcmp(*p, "exif-info.db") == 0 && is_kpa_file(dir_path, name))
				return TRUE;
		} else {
			if (path == NULL)
				path = pix_path_join(dir_path, name);
			if (glob_match(*p, path))
				return TRUE;
		}
	}
	return FALSE;
}

static int compare_entry_ino(gconstpointer a, gconstpointer b)
{
	guint64 x = ((const PixEntry *)a)->ino, y = ((const PixEntry *)b)->ino;
	return x < y ? -1 : x > y;
}

static int compare_dirname_ino(gconstpointer a, gconstpointer b)
{
	guint64 x = ((const DirName *)a)->ino, y = ((const DirName *)b)->ino;
	return x < y ? -1 : x > y;
}

/*
 * Reads every name of the directory `fd` into `out` (PixEntry with name and
 * ino).  Returns 0 or an errno.
 */
static int read_names(int fd, guint8 *buf, GArray *out)
{
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, GETDENTS_BUF_BYTES);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] == '.' && (d->d_name[1] == '\0' ||
			    (d->d_name[1] == '.' && d->d_name[2] == '\0')))
				continue;
			PixEntry e = { .name = g_strdup(d->d_name), .ino = d->d_ino, .d_type = d->d_type };
			g_array_append_val(out, e);
		}
	}
}

/* Whether `st` is `dir` or one of its ancestors (invariant 2: for the
 * directory being listed, the chain of the frames on the stack). */
static gboolean is_ancestor(const PixDir *dir, const PixStat *st)
{
	for (const PixDir *d = dir; d != NULL; d = d->parent)
		if (d->st.dev == st->dev && d->st.ino == st->ino)
			return TRUE;
	return FALSE;
}

/* Whether `dir`, just opened, is on another file system than its parent
 * and the walk does not cross into those. */
static gboolean is_other_mount(const PixWalkConfig *cfg, const PixDir *dir)
{
	return dir->parent != NULL && dir->st.dev != dir->parent->st.dev && !cfg->is_cross_mounts;
}

/*
 * Lists the directory `fd` (path `dir_path`) into `out` (PixEntry with
 * name, ino and d_type): in inode order, each name once, the excluded ones
 * left out and counted in *n_excluded.  Returns 0, or the errno of
 * getdents64 (then `out` is left empty).  Any thread.
 */
static int read_entries(const PixWalkConfig *cfg, int fd, const char *dir_path, guint8 *buf, GArray *out,
                        guint *n_excluded)
{
	g_autoptr(GArray) names = g_array_new(FALSE, FALSE, sizeof(PixEntry));
	g_autoptr(GArray) unique = g_array_new(FALSE, FALSE, sizeof(PixEntry));

	int err = read_names(fd, buf, names);
	if (err != 0) {
		for (guint i = 0; i < names->len; i++)
			g_free(g_array_index(names, PixEntry, i).name);
		return err;
	}
	g_array_sort(names, compare_entry_ino);
	/* POSIX lets a directory read during a rename return a name twice
	 * (btrfs and XFS do): a name counts once.  No name is freed while the
	 * table holds it (it compares a new name with those of the same hash). */
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < names->len; i++) {
		PixEntry e = g_array_index(names, PixEntry, i);
		if (g_hash_table_add(seen, e.name))
			g_array_append_val(unique, e);
		else
			g_free(e.name);
	}
	g_hash_table_destroy(seen);
	for (guint i = 0; i < unique->len; i++) {
		PixEntry e = g_array_index(unique, PixEntry, i);
		if (pix_walk_is_excluded(cfg, dir_path, e.name)) {
			(*n_excluded)++;
			g_free(e.name);
		} else {
			g_array_append_val(out, e);
		}
	}
	return 0;
}

/* fstatat() of `n` entries relative to directory `fd`: each gets its st,
 * or its stat_errno.  Any thread. */
static void stat_entries(int fd, PixEntry *entries, guint n)
{
	for (guint i = 0; i < n; i++) {
		struct stat st;
		if (fstatat(fd, entries[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			pix_stat_from(&entries[i].st, &st);
		else
			entries[i].stat_errno = errno;
	}
}

/*
 * Decides the stat'ed entries `stated` (PixEntry, in inode order) of
 * directory `dir` (invariant 3): files go to l->entries, subdirectories to
 * enter to `subdirs` (DirName, sorted), the rest is counted in
 * l->n_skipped, and the paths of bind-mount loops go to `loops` (warned of
 * when the listing is pushed).  The names move or are freed; `stated` is
 * left empty.  The walker thread.
 */
static void decide_entries(const PixWalkConfig *cfg, const PixDir *dir, GArray *stated, PixListing *l, GArray *subdirs,
                           GPtrArray *loops)
{
	for (guint i = 0; i < stated->len; i++) {
		PixEntry e = g_array_index(stated, PixEntry, i);
		DirName dn = { .name = e.name, .ino = e.ino };

		if (e.stat_errno == ENOENT) {
			/* gone since getdents: plan sees it as absent */
			g_free(e.name);
		} else if (e.stat_errno != 0) {
			/* a directory we cannot stat (a parent without search
			 * permission): entering it will say why it fails */
			if (e.d_type == DT_DIR)
				g_array_append_val(subdirs, dn);
			else
				g_array_append_val(l->entries, e);
		} else if (S_ISLNK(e.st.mode)) {
			l->n_skipped++;
			g_free(e.name);
		} else if (!S_ISDIR(e.st.mode)) {
			g_array_append_val(l->entries, e);
		} else if (e.st.dev != dir->st.dev && !cfg->is_cross_mounts) {
			l->n_skipped++;
			g_free(e.name);
		} else if (is_ancestor(dir, &e.st)) {
			g_ptr_array_add(loops, pix_path_join(dir->path, e.name));
			l->n_skipped++;
			g_free(e.name);
		} else {
			g_array_append_val(subdirs, dn);
		}
	}
	g_array_set_size(stated, 0);
	g_array_sort(subdirs, compare_dirname_ino);
}

static PixListing *listing_new(PixDir *dir)
{
	PixListing *l = g_new0(PixListing, 1);
	l->dir = pix_dir_ref(dir);
	l->entries = g_array_new(FALSE, FALSE, sizeof(PixEntry));
	return l;
}

/*
 * Pushes `l` (transfer full), the listing of the top frame `frame` (its
 * subdirs decided), after the warnings that go with it: the directory could
 * not be listed (list_err, an errno), or the bind-mount loops it does not
 * enter (`loops`, paths, or NULL).
 */
static void push_listing(PixListing *l, Frame *frame, int list_err, const GPtrArray *loops, PixQueue *out)
{
	if (list_err != 0) {
		g_autofree char *q = pix_quote(frame->dir->path);
		pix_warn("cannot list directory '%s': %s (skipping)", q, g_strerror(list_err));
		frame->dir->error = g_strdup_printf("cannot list directory: %s", g_strerror(list_err));
	} else if (!l->is_unlisted) {
		for (guint i = 0; loops != NULL && i < loops->len; i++) {
			g_autofree char *q = pix_quote(g_ptr_array_index(loops, i));
			pix_warn("not entering '%s': it is one of its own parent directories (bind mount loop)", q);
		}
		l->is_complete = TRUE;
		pix_count_add(PIX_N_SKIPPED, l->n_skipped);
	}
	l->n_subdirs = frame->subdirs->len;
	pix_count_add(PIX_N_DIRS, 1);
	g_assert(listing_check(l, frame));
	pix_queue_push(out, l);
}

/*
 * --quick: when the catalog says directory `dir` (st filled) is as it last
 * listed it, returns its unlisted listing (transfer full) and sets
 * *subdirs (DirName, transfer full) to the subdirectories the catalog
 * knows (those the excludes still allow).  Returns NULL when it must be
 * listed.  The walker thread (cfg->is_known is not thread-safe).
 */
static PixListing *known_listing(const PixWalkConfig *cfg, PixDir *dir, GArray **subdirs)
{
	GPtrArray *names = NULL;
	gint64 n_files = 0;

	if (cfg->is_known == NULL || !cfg->is_known(cfg->is_known_data, dir, &names, &n_files))
		return NULL;
	PixListing *l = listing_new(dir);
	l->is_unlisted = TRUE;
	l->n_known_files = n_files;
	dir->is_unlisted = TRUE;
	*subdirs = g_array_new(FALSE, FALSE, sizeof(DirName));
	for (guint i = 0; i < names->len; i++) {
		char *name = g_ptr_array_index(names, i);
		if (pix_walk_is_excluded(cfg, dir->path, name)) {
			g_free(name);
			continue;
		}
		DirName dn = { .name = name, .ino = 0 };
		g_array_append_val(*subdirs, dn);
	}
	g_ptr_array_set_free_func(names, NULL);   /* the names moved to subdirs or were freed */
	g_ptr_array_free(names, TRUE);
	return l;
}

/* Pushes the listing of a directory that could not be opened. */
static void push_failed(PixDir *dir, int err, PixQueue *out)
{
	PixListing *l = g_new0(PixListing, 1);
	g_autofree char *q = pix_quote(dir->path);

	pix_warn("cannot open directory '%s': %s (skipping)", q, g_strerror(err));
	dir->error = g_strdup_printf("cannot open directory: %s", g_strerror(err));
	l->dir = dir;
	l->entries = g_array_new(FALSE, FALSE, sizeof(PixEntry));
	pix_count_add(PIX_N_DIRS, 1);
	g_assert(listing_check(l, NULL));
	pix_queue_push(out, l);
}

/*
 * Opens `name` under `parent_fd` (a root's absolute path when parent_fd is
 * AT_FDCWD) as the directory `dir` and fills dir->st, and the identity of
 * its file system where one begins: at a root and across a mount point.
 * Returns the fd, or -1 with *err set, and *is_vanished when a
 * subdirectory is gone since its parent was listed.  Any thread.
 */
static int open_dir(int parent_fd, const char *name, PixDir *dir, int *err, gboolean *is_vanished)
{
	struct stat st;
	struct statfs sf;
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*is_vanished = FALSE;
	if (fd < 0) {
		*err = errno;
		*is_vanished = *err == ENOENT && dir->parent != NULL;
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		return -1;
	}
	pix_stat_from(&dir->st, &st);
	if (dir->parent != NULL && dir->parent->st.dev == dir->st.dev) {
		dir->fsid = dir->parent->fsid;
		dir->is_ino_unstable = dir->parent->is_ino_unstable;
	} else if (fstatfs(fd, &sf) == 0) {
		dir->fsid = pix_fsid_from(&sf);
		dir->is_ino_unstable = pix_fs_ino_unstable(&sf);
	}
	return fd;
}

static void ahead_free(Ahead *a);

/* Frees subdirs[from..] with their Aheads, and the array.  Accepts NULL. */
static void subdirs_free(GArray *subdirs, guint from)
{
	if (subdirs == NULL)
		return;
	for (guint i = from; i < subdirs->len; i++) {
		DirName *dn = &g_array_index(subdirs, DirName, i);
		g_free(dn->name);
		ahead_free(dn->ahead);
	}
	g_array_free(subdirs, TRUE);
}

/* The Aheads below a frame go before its fd (invariant 5). */
static void frame_clear(Frame *f)
{
	subdirs_free(f->subdirs, f->next);
	if (f->fd >= 0)
		close(f->fd);
	pix_dir_unref(f->dir);
}

/* --- the one-thread walk ----------------------------------------------- */

/*
 * Lists the directory of `frame` (fd open, dir->st filled): fills its
 * subdirectory list and pushes its listing to `out`.
 */
static void list_dir(const PixWalkConfig *cfg, Frame *frame, guint8 *buf, PixQueue *out)
{
	PixListing *l = listing_new(frame->dir);
	g_autoptr(GArray) stated = g_array_new(FALSE, FALSE, sizeof(PixEntry));
	g_autoptr(GPtrArray) loops = g_ptr_array_new_with_free_func(g_free);

	frame->subdirs = g_array_new(FALSE, FALSE, sizeof(DirName));
	int err = read_entries(cfg, frame->fd, frame->dir->path, buf, stated, &l->n_skipped);
	if (err == 0) {
		stat_entries(frame->fd, (PixEntry *)(void *)stated->data, stated->len);
		decide_entries(cfg, frame->dir, stated, l, frame->subdirs, loops);
	}
	push_listing(l, frame, err, loops, out);
}

/* Opens `name` under `parent_fd` (or the absolute `path` when parent_fd is
 * AT_FDCWD) as a directory and pushes a frame for it; returns FALSE and
 * reports when it cannot. */
static gboolean enter_dir(GArray *stack, int parent_fd, const char *name, PixDir *dir, PixQueue *out)
{
	int err = 0;
	gboolean is_vanished = FALSE;
	int fd = open_dir(parent_fd, name, dir, &err, &is_vanished);

	if (fd < 0) {
		/* vanished since its parent was listed: plan's end-of-scan pass
		 * finds it gone */
		if (is_vanished)
			pix_dir_unref(dir);
		else
			push_failed(dir, err, out);
		return FALSE;
	}
	Frame f = { .fd = fd, .dir = dir };
	g_array_append_val(stack, f);
	g_assert(stack_check(stack));
	return TRUE;
}

/* The directory just entered (the top frame): skipped (--quick), or
 * listed.  A subdirectory the catalog named (--quick) that is another
 * mount now is left, as a listing would have left it. */
static void visit_dir(const PixWalkConfig *cfg, GArray *stack, guint8 *buf, PixQueue *out)
{
	Frame *top = &g_array_index(stack, Frame, stack->len - 1);

	g_assert(top->subdirs == NULL);   /* invariant 1: listed once */

	if (is_other_mount(cfg, top->dir)) {
		frame_clear(top);
		g_array_set_size(stack, stack->len - 1);
		return;
	}
	PixListing *l = known_listing(cfg, top->dir, &top->subdirs);
	if (l != NULL)
		push_listing(l, top, 0, NULL, out);
	else
		list_dir(cfg, top, buf, out);
	g_assert(stack_check(stack));
}

static void walk_serial(const PixWalkConfig *cfg, char **roots, PixQueue *out)
{
	g_autofree guint8 *buf = g_malloc(GETDENTS_BUF_BYTES);
	GArray *stack = g_array_new(FALSE, FALSE, sizeof(Frame));

	for (char **root = roots; *root != NULL && !pix_stop_requested(); root++) {
		if (enter_dir(stack, AT_FDCWD, *root, pix_dir_new(*root), out))
			visit_dir(cfg, stack, buf, out);

		while (stack->len > 0 && !pix_stop_requested()) {
			Frame *top = &g_array_index(stack, Frame, stack->len - 1);
			if (top->next >= top->subdirs->len) {
				frame_clear(top);
				g_array_set_size(stack, stack->len - 1);
				continue;
			}
			DirName dn = g_array_index(top->subdirs, DirName, top->next++);
			g_autofree char *name = dn.name;
			PixDir *dir = pix_dir_new(NULL);
			dir->path = pix_path_join(top->dir->path, name);
			dir->parent = pix_dir_ref(top->dir);
			/* enter_dir may grow the stack: `top` is stale after it */
			if (enter_dir(stack, top->fd, name, dir, out))
				visit_dir(cfg, stack, buf, out);
		}
		while (stack->len > 0) {
			frame_clear(&g_array_index(stack, Frame, stack->len - 1));
			g_array_set_size(stack, stack->len - 1);
		}
	}
	g_array_free(stack, TRUE);
	pix_queue_close(out);
}

/* --- the parallel walk ------------------------------------------------- */

/*
 * One directory, opened, listed and stat'ed by the pool ahead of the walk,
 * then made ready (its entries decided) and entered by the walker.
 */
struct Ahead {
	/* set by the walker before its first task; the pool only reads them */
	int parent_fd;          /* the parent's fd (a frame's or an Ahead's,
	                           open while this exists), AT_FDCWD for a root */
	char *name;             /* under parent_fd; a root's path (owned) */
	PixDir *dir;            /* path and parent set; its open fills st, fsid
	                           and is_ino_unstable (ref) */
	gboolean is_list;       /* list it once open; FALSE: --quick, the
	                           walker asks the catalog first */

	/* the pool's, read by the walker once n_tasks is 0 */
	int fd;                 /* the directory, or -1 (owned) */
	int open_errno;         /* fd -1: why */
	gboolean is_vanished;   /* fd -1: a subdirectory gone since its parent
	                           was listed (not reported) */
	gboolean is_other_mount; /* another file system, not crossed: not listed */
	gboolean is_listed;
	int list_errno;         /* is_listed: getdents64's errno, or 0 */
	GArray *entries;        /* is_listed: PixEntry, inode order, each name
	                           once, no excluded one, each stat'ed (owned) */
	guint n_excluded;

	/* under Pool.lock */
	guint n_tasks;          /* its tasks queued or running */
	GList *open_link;       /* its open task while queued, or NULL */

	/* the walker's */
	gboolean is_ready;      /* its entries are decided: it can be entered */
	PixListing *listing;    /* ready and opened: to push on entering (owned) */
	GArray *subdirs;        /* with `listing`: DirName, in inode order (owned) */
	GPtrArray *loops;       /* bind-mount loops to warn of on entering (owned) */
	gsize n_held;           /* entries and subdirs, counted in Walk.n_held */
};

typedef enum {
	TASK_OPEN,              /* open_dir(), then list unless --quick */
	TASK_LIST,              /* --quick found it changed: list it */
	TASK_STAT,              /* fstatat() of entries [begin, end) */
} TaskKind;

typedef struct {
	TaskKind kind;
	Ahead *ahead;
	guint begin, end;
} Task;

/* The threads that make the system calls of a parallel walk. */
typedef struct {
	const PixWalkConfig *cfg;
	guint n_threads;
	GThread **threads;
	GMutex lock;
	GCond work_cond;        /* a task was queued, or the pool is closing */
	GCond done_cond;        /* an Ahead's tasks have all ended */
	GQueue tasks;           /* Task* (owned), the next to run first */
	GQueue done;            /* Ahead* whose tasks have all ended, for the
	                           walker (borrowed: DirNames own them) */
	gboolean is_closing;    /* the threads end when no task is left */
	gboolean is_cancelled;  /* tasks end without their system calls */
} Pool;

typedef struct {
	const PixWalkConfig *cfg;
	PixQueue *out;
	GArray *stack;          /* Frame, as in the one-thread walk */
	Pool pool;
	guint n_ahead;          /* Aheads started and not yet entered */
	gsize n_held;           /* entries and subdirs of those ready */
} Walk;

/* Invariant 5 for Ahead `a`, just started. */
static gboolean ahead_check(const Walk *w, const Ahead *a)
{
	if (w->n_ahead > AHEAD_DIRS + 1 || a->fd != -1 || a->is_ready)
		return FALSE;
	if (a->parent_fd == AT_FDCWD)
		return a->dir->parent == NULL;
	return a->parent_fd >= 0 && a->dir->parent != NULL;
}

/* Queues a task for `a` (Pool.lock held): first when it is for a directory
 * the walk waits for or one already begun, so what is begun ends first. */
static void queue_task(Pool *p, TaskKind kind, Ahead *a, guint begin, guint end, gboolean is_first)
{
	Task *t = g_new(Task, 1);

	*t = (Task){ .kind = kind, .ahead = a, .begin = begin, .end = end };
	a->n_tasks++;
	if (is_first)
		g_queue_push_head(&p->tasks, t);
	else
		g_queue_push_tail(&p->tasks, t);
	if (kind == TASK_OPEN)
		a->open_link = is_first ? p->tasks.head : p->tasks.tail;
	g_cond_signal(&p->work_cond);
}

/* Spreads the fstatat() calls of a's `n` entries over the threads (Pool.lock
 * held), first in the queue. */
static void queue_stats(Pool *p, Ahead *a, guint n)
{
	guint per = CLAMP((n + p->n_threads - 1) / p->n_threads, STAT_CHUNK_MIN, STAT_CHUNK_MAX);

	for (guint i = (n + per - 1) / per; i-- > 0;)
		queue_task(p, TASK_STAT, a, i * per, MIN(n, (i + 1) * per), TRUE);
}

/* Runs task `t` (without Pool.lock).  Returns how many entries its listing
 * leaves to stat. */
static guint run_task(const Pool *p, const Task *t, guint8 *buf)
{
	Ahead *a = t->ahead;

	if (t->kind == TASK_STAT) {
		stat_entries(a->fd, &g_array_index(a->entries, PixEntry, t->begin), t->end - t->begin);
		return 0;
	}
	if (t->kind == TASK_OPEN) {
		a->fd = open_dir(a->parent_fd, a->name, a->dir, &a->open_errno, &a->is_vanished);
		if (a->fd < 0)
			return 0;
		a->is_other_mount = is_other_mount(p->cfg, a->dir);
		if (a->is_other_mount || !a->is_list)
			return 0;
	}
	a->entries = g_array_new(FALSE, FALSE, sizeof(PixEntry));
	a->list_errno = read_entries(p->cfg, a->fd, a->dir->path, buf, a->entries, &a->n_excluded);
	a->is_listed = TRUE;
	return a->entries->len;
}

static gpointer pool_thread(gpointer data)
{
	Pool *p = data;
	g_autofree guint8 *buf = g_malloc(GETDENTS_BUF_BYTES);

	g_mutex_lock(&p->lock);
	for (;;) {
		Task *t = g_queue_pop_head(&p->tasks);
		if (t == NULL) {
			if (p->is_closing)
				break;
			g_cond_wait(&p->work_cond, &p->lock);
			continue;
		}
		Ahead *a = t->ahead;
		gboolean is_cancelled = p->is_cancelled;
		guint n_to_stat = 0;
		if (t->kind == TASK_OPEN)
			a->open_link = NULL;
		g_mutex_unlock(&p->lock);
		if (!is_cancelled)
			n_to_stat = run_task(p, t, buf);
		g_mutex_lock(&p->lock);
		if (n_to_stat > 0)
			queue_stats(p, a, n_to_stat);
		if (--a->n_tasks == 0) {
			g_queue_push_tail(&p->done, a);
			g_cond_signal(&p->done_cond);
		}
		g_free(t);
	}
	g_mutex_unlock(&p->lock);
	return NULL;
}

static void pool_start(Pool *p, const PixWalkConfig *cfg)
{
	*p = (Pool){ .cfg = cfg, .n_threads = MIN(cfg->n_threads, MAX_THREADS) };
	g_mutex_init(&p->lock);
	g_cond_init(&p->work_cond);
	g_cond_init(&p->done_cond);
	g_queue_init(&p->tasks);
	g_queue_init(&p->done);
	p->threads = g_new(GThread *, p->n_threads);
	for (guint i = 0; i < p->n_threads; i++)
		p->threads[i] = g_thread_new("pix-walk-pool", pool_thread, p);
}

/* Ends the threads; tasks still queued (after a stop) end without their
 * system calls.  Then no Ahead is in use but by the walker. */
static void pool_stop(Pool *p)
{
	g_mutex_lock(&p->lock);
	p->is_closing = TRUE;
	p->is_cancelled = TRUE;
	g_cond_broadcast(&p->work_cond);
	g_mutex_unlock(&p->lock);
	for (guint i = 0; i < p->n_threads; i++)
		g_thread_join(p->threads[i]);
	g_free(p->threads);
	g_assert(g_queue_is_empty(&p->tasks));
	g_queue_clear(&p->done);
	g_cond_clear(&p->done_cond);
	g_cond_clear(&p->work_cond);
	g_mutex_clear(&p->lock);
}

/* Frees `a` and the Aheads below it; the pool must be done with them
 * (n_tasks 0).  Accepts NULL. */
static void ahead_free(Ahead *a)
{
	if (a == NULL)
		return;
	g_assert(a->n_tasks == 0);
	subdirs_free(a->subdirs, 0);
	if (a->fd >= 0)
		close(a->fd);
	if (a->entries != NULL) {
		for (guint i = 0; i < a->entries->len; i++)
			g_free(g_array_index(a->entries, PixEntry, i).name);
		g_array_free(a->entries, TRUE);
	}
	pix_listing_free(a->listing);
	if (a->loops != NULL)
		g_ptr_array_free(a->loops, TRUE);
	pix_dir_unref(a->dir);
	g_free(a->name);
	g_free(a);
}

/*
 * Starts subdirectory `name` of `parent` (open as parent_fd; NULL and
 * AT_FDCWD for a root, whose path `name` is) on the pool, first in its
 * queue when the walk waits for it.  Returns it (transfer full).
 */
static Ahead *ahead_start(Walk *w, int parent_fd, PixDir *parent, const char *name, gboolean is_first)
{
	Ahead *a = g_new0(Ahead, 1);

	a->parent_fd = parent_fd;
	a->name = g_strdup(name);
	if (parent == NULL) {
		a->dir = pix_dir_new(name);
	} else {
		a->dir = pix_dir_new(NULL);
		a->dir->path = pix_path_join(parent->path, name);
		a->dir->parent = pix_dir_ref(parent);
	}
	a->fd = -1;
	a->is_list = w->cfg->is_known == NULL;
	w->n_ahead++;
	g_assert(ahead_check(w, a));
	g_mutex_lock(&w->pool.lock);
	queue_task(&w->pool, TASK_OPEN, a, 0, 0, is_first);
	g_mutex_unlock(&w->pool.lock);
	return a;
}

/* The walk waits for `a`, started earlier: its open goes first if still
 * queued. */
static void ahead_hurry(Walk *w, Ahead *a)
{
	g_mutex_lock(&w->pool.lock);
	if (a->open_link != NULL) {
		g_queue_unlink(&w->pool.tasks, a->open_link);
		g_queue_push_head_link(&w->pool.tasks, a->open_link);
	}
	g_mutex_unlock(&w->pool.lock);
}

/*
 * `a`'s tasks have ended: --quick asks the catalog once it is open (and
 * has it listed when it must be), then its entries are decided as
 * list_dir() decides them, against its own chain of ancestors.
 */
static void ahead_ready(Walk *w, Ahead *a)
{
	if (a->fd >= 0 && !a->is_other_mount) {
		if (!a->is_listed) {
			a->listing = known_listing(w->cfg, a->dir, &a->subdirs);
			if (a->listing == NULL) {
				g_mutex_lock(&w->pool.lock);
				queue_task(&w->pool, TASK_LIST, a, 0, 0, TRUE);
				g_mutex_unlock(&w->pool.lock);
				return;
			}
		} else {
			a->listing = listing_new(a->dir);
			a->subdirs = g_array_new(FALSE, FALSE, sizeof(DirName));
			a->loops = g_ptr_array_new_with_free_func(g_free);
			a->listing->n_skipped = a->n_excluded;
			decide_entries(w->cfg, a->dir, a->entries, a->listing, a->subdirs, a->loops);
			g_array_free(g_steal_pointer(&a->entries), TRUE);   /* its names moved */
		}
		a->n_held = a->listing->entries->len + a->subdirs->len;
		w->n_held += a->n_held;
	}
	a->is_ready = TRUE;
}

/*
 * The first subdirectory in walk order not started yet: from subdirs[from]
 * on (those of the directory `dir`, open as `fd`), depth first through the
 * ready Aheads below (a recursion as deep as a chain of Aheads, at most
 * AHEAD_DIRS + 1).  *parent_fd and *parent get the directory it is in.
 */
static DirName *first_unstarted(GArray *subdirs, guint from, int fd, PixDir *dir, int *parent_fd, PixDir **parent)
{
	for (guint i = from; i < subdirs->len; i++) {
		DirName *dn = &g_array_index(subdirs, DirName, i);
		if (dn->ahead == NULL) {
			*parent_fd = fd;
			*parent = dir;
			return dn;
		}
		if (dn->ahead->subdirs != NULL) {
			DirName *below = first_unstarted(dn->ahead->subdirs, 0, dn->ahead->fd, dn->ahead->dir, parent_fd,
			                                 parent);
			if (below != NULL)
				return below;
		}
	}
	return NULL;
}

/* Starts the next directories in walk order, up to the bounds. */
static void top_up(Walk *w)
{
	while (w->n_ahead < AHEAD_DIRS && w->n_held < AHEAD_ENTRIES) {
		DirName *dn = NULL;
		int parent_fd = -1;
		PixDir *parent = NULL;
		for (guint i = w->stack->len; dn == NULL && i-- > 0;) {
			Frame *f = &g_array_index(w->stack, Frame, i);
			dn = first_unstarted(f->subdirs, f->next, f->fd, f->dir, &parent_fd, &parent);
		}
		if (dn == NULL)
			return;
		dn->ahead = ahead_start(w, parent_fd, parent, dn->name, FALSE);
	}
}

/* Waits until `a` is ready, making ready the Aheads that end meanwhile and
 * starting more. */
static void wait_ready(Walk *w, Ahead *a)
{
	while (!a->is_ready) {
		GQueue done;
		g_mutex_lock(&w->pool.lock);
		while (g_queue_is_empty(&w->pool.done))
			g_cond_wait(&w->pool.done_cond, &w->pool.lock);
		done = w->pool.done;
		g_queue_init(&w->pool.done);
		g_mutex_unlock(&w->pool.lock);
		for (GList *l = done.head; l != NULL; l = l->next)
			ahead_ready(w, l->data);
		g_queue_clear(&done);
		top_up(w);
	}
}

/* Enters the ready `a` (transfer full): what the one-thread walk does from
 * opening a directory to pushing its listing. */
static void enter_ahead(Walk *w, Ahead *a)
{
	g_assert(a->is_ready);
	w->n_ahead--;
	w->n_held -= a->n_held;
	if (a->fd < 0) {
		if (!a->is_vanished)
			push_failed(g_steal_pointer(&a->dir), a->open_errno, w->out);
	} else if (!a->is_other_mount) {
		Frame f = { .fd = a->fd, .dir = g_steal_pointer(&a->dir), .subdirs = g_steal_pointer(&a->subdirs) };
		a->fd = -1;
		g_array_append_val(w->stack, f);
		g_assert(stack_check(w->stack));
		Frame *top = &g_array_index(w->stack, Frame, w->stack->len - 1);
		push_listing(g_steal_pointer(&a->listing), top, a->list_errno, a->loops, w->out);
		g_assert(stack_check(w->stack));
	}
	ahead_free(a);
}

static void walk_parallel(const PixWalkConfig *cfg, char **roots, PixQueue *out)
{
	Walk w = { .cfg = cfg, .out = out, .stack = g_array_new(FALSE, FALSE, sizeof(Frame)) };

	pool_start(&w.pool, cfg);
	for (char **root = roots; *root != NULL && !pix_stop_requested(); root++) {
		Ahead *a = ahead_start(&w, AT_FDCWD, NULL, *root, TRUE);
		wait_ready(&w, a);
		enter_ahead(&w, a);
		top_up(&w);

		while (w.stack->len > 0 && !pix_stop_requested()) {
			Frame *top = &g_array_index(w.stack, Frame, w.stack->len - 1);
			if (top->next >= top->subdirs->len) {
				frame_clear(top);
				g_array_set_size(w.stack, w.stack->len - 1);
				continue;
			}
			DirName *dn = &g_array_index(top->subdirs, DirName, top->next++);
			if (dn->ahead == NULL)
				a = ahead_start(&w, top->fd, top->dir, dn->name, TRUE);
			else
				ahead_hurry(&w, a = dn->ahead);
			g_clear_pointer(&dn->name, g_free);
			dn->ahead = NULL;
			/* entering grows the stack: `top` and `dn` are stale after it */
			wait_ready(&w, a);
			enter_ahead(&w, a);
			top_up(&w);
		}
	}
	/* stopped (or done): the pool lets go of the Aheads before the frames'
	 * fds close */
	pool_stop(&w.pool);
	g_assert(w.n_ahead == 0 || pix_stop_requested());
	while (w.stack->len > 0) {
		frame_clear(&g_array_index(w.stack, Frame, w.stack->len - 1));
		g_array_set_size(w.stack, w.stack->len - 1);
	}
	g_array_free(w.stack, TRUE);
	pix_queue_close(out);
}

void pix_walk_run(const PixWalkConfig *cfg, char **roots, PixQueue *out)
{
	if (cfg->n_threads > 1)
		walk_parallel(cfg, roots, out);
	else
		walk_serial(cfg, roots, out);
}

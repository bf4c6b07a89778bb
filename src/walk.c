/*
 * walk.c: the directory walker (see walk.h).
 *
 * Reads directories (getdents64 into a 256 KiB buffer) and inodes (fstatat
 * relative to the directory fd, in inode order); writes PixListings to its
 * output queue.  Runs on the walker thread only.
 *
 * The walk is depth first with an explicit stack of frames, one per open
 * directory, so a deep tree costs one file descriptor per level and no C
 * recursion; a name is opened relative to its parent's fd, so paths longer
 * than PATH_MAX work.
 *
 * Invariants:
 *  1. Every directory the walker enters yields exactly one listing, pushed
 *     before the listings of its subdirectories (plan relies on a parent's
 *     directory row being written before its children's).
 *  2. The frames on the stack are the chain of ancestors of the directory
 *     being listed, the chain of PixDir.parent: a subdirectory whose (dev,
 *     ino) equals one of them is a loop and is not entered.
 *  3. An entry that is excluded, a symbolic link, a directory on another
 *     mount, or a subdirectory is never in a listing's entries.  An entry
 *     that cannot be stat'ed is known by its getdents64 type alone: a
 *     directory goes with the subdirectories, anything else (a symbolic
 *     link included) is an entry carrying its stat_errno.
 *  4. A listing's entries, and the subdirectories a listed directory
 *     enters, are in ascending getdents64 inode order (hard links share a
 *     number); the subdirectories --quick takes from the catalog have none.
 *
 * listing_check() and stack_check() assert these where a listing is pushed
 * and where a frame is entered.  Not checked there: that an entry is not
 * excluded (matching every entry against every pattern again would double
 * the cost glob_match() exists to save; the decision is made in one place,
 * pix_walk_is_excluded()), and the loop half of 2 (a frame's (dev, ino) is
 * compared with its ancestors' from the fstatat() made while listing the
 * parent; the directory opened after it may differ after a rename, and
 * --quick's subdirectories come unstat'ed from the catalog).
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

/* The kernel's struct linux_dirent64, as getdents64(2) fills the buffer. */
struct linux_dirent64 {
	guint64 d_ino;
	gint64 d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

typedef struct {
	char *name;
	guint64 ino;
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
 * getdents64 (then `out` is left empty).
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
 * or its stat_errno. */
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
 * left empty.
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
 * listed.
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
 * subdirectory is gone since its parent was listed.
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

static void frame_clear(Frame *f)
{
	if (f->fd >= 0)
		close(f->fd);
	pix_dir_unref(f->dir);
	if (f->subdirs != NULL) {
		for (guint i = f->next; i < f->subdirs->len; i++)
			g_free(g_array_index(f->subdirs, DirName, i).name);
		g_array_free(f->subdirs, TRUE);
	}
}

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

void pix_walk_run(const PixWalkConfig *cfg, char **roots, PixQueue *out)
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

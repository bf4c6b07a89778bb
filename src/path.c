/*
 * path.c: opening and stat'ing absolute paths safely (see path.h).
 *
 * Reads the file system's directory entries; writes nothing.  Any thread.
 *
 * Invariants:
 *  1. No symbolic link is followed in any component: openat2's
 *     RESOLVE_NO_SYMLINKS where the kernel has it (5.6+), else a walk of
 *     the components with O_NOFOLLOW.
 *  2. A path longer than PATH_MAX is opened relative to an fd of one of its
 *     directories, opened the same way, so length is never a limit.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

char *pix_path_join(const char *dir, const char *name)
{
	if (dir[0] == '/' && dir[1] == '\0')
		return g_strconcat("/", name, NULL);
	return g_strconcat(dir, "/", name, NULL);
}

gboolean pix_path_is_under(const char *path, const char *root)
{
	gsize n = strlen(root);
	if (strcmp(root, "/") == 0)
		return path[0] == '/';
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static gint has_openat2 = -1;   /* -1 unknown, 0 no (ENOSYS), 1 yes */

/* One step: `rel` (shorter than PATH_MAX) under `dirfd`, no symlinks. */
static int open_beneath(int dirfd, const char *rel, int flags)
{
	if (g_atomic_int_get(&has_openat2) != 0) {
		struct open_how how = { .flags = (guint64)(flags | O_NOFOLLOW), .resolve = RESOLVE_NO_SYMLINKS };
		int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
		if (fd >= 0 || errno != ENOSYS) {
			g_atomic_int_set(&has_openat2, 1);
			return fd;
		}
		g_atomic_int_set(&has_openat2, 0);
	}
	/* an old kernel: component by component, each without following */
	g_autofree char *copy = g_strdup(rel);
	char *save = NULL;
	int cur = dirfd == AT_FDCWD && rel[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : dup(dirfd);
	if (cur < 0)
		return -1;
	char *part = strtok_r(copy, "/", &save);
	while (part != NULL) {
		char *next = strtok_r(NULL, "/", &save);
		int fd = openat(cur, part, next != NULL ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC : flags | O_NOFOLLOW);
		int err = errno;
		close(cur);
		if (fd < 0) {
			errno = err;
			return -1;
		}
		cur = fd;
		part = next;
	}
	return cur;
}

int pix_path_open(const char *path, int flags)
{
	gsize len = strlen(path);
	if (len < PATH_MAX)
		return open_beneath(AT_FDCWD, path, flags);

	/* too long for one call: walk down in pieces cut at slashes */
	int dirfd = AT_FDCWD;
	const char *rest = path;
	while (strlen(rest) >= PATH_MAX) {
		const char *cut = rest + PATH_MAX - 1;
		while (cut > rest && *cut != '/')
			cut--;
		if (cut == rest) {
			errno = ENAMETOOLONG;   /* one component longer than PATH_MAX */
			break;
		}
		g_autofree char *piece = g_strndup(rest, (gsize)(cut - rest));
		int fd = open_beneath(dirfd, piece[0] != '\0' ? piece : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int err = errno;
		if (dirfd != AT_FDCWD)
			close(dirfd);
		if (fd < 0) {
			errno = err;
			return -1;
		}
		dirfd = fd;
		rest = cut + 1;
	}
	if (strlen(rest) >= PATH_MAX) {
		if (dirfd != AT_FDCWD)
			close(dirfd);
		return -1;
	}
	int fd = open_beneath(dirfd, rest, flags);
	int err = errno;
	if (dirfd != AT_FDCWD)
		close(dirfd);
	errno = err;
	return fd;
}

int pix_path_lstat(const char *path, struct stat *st)
{
	int fd = pix_path_open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	int err = errno;
	close(fd);
	errno = err;
	return rc;
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **pix_path_outermost(GPtrArray *paths)
{
	GPtrArray *out = g_ptr_array_new();
	/* shortest first, so a path's ancestors are kept before it; "/p",
	 * "/p-old", "/p/2021" sort in that order, so each is compared with
	 * every path kept, not only the last */
	g_ptr_array_sort(paths, compare_strings);
	for (guint i = 0; i < paths->len; i++) {
		const char *p = g_ptr_array_index(paths, i);
		gboolean is_covered = FALSE;
		for (guint j = 0; j < out->len && !is_covered; j++)
			is_covered = pix_path_is_under(p, g_ptr_array_index(out, j));
		if (!is_covered)
			g_ptr_array_add(out, g_strdup(p));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

gboolean pix_path_is_gone(const char *dir_path, const char *name)
{
	g_autofree char *path = pix_path_join(dir_path, name);
	struct stat st;
	if (pix_path_lstat(path, &st) != 0)
		return errno == ENOENT;
	return S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode);
}

guint64 pix_fsid_from(const struct statfs *sf)
{
	guint32 v[2];
	G_STATIC_ASSERT(sizeof v == sizeof sf->f_fsid);
	memcpy(v, &sf->f_fsid, sizeof v);
	return ((guint64)v[0] << 32) | v[1];
}

gboolean pix_fs_ino_unstable(const struct statfs *sf)
{
	switch ((unsigned long)sf->f_type) {
	case 0x4d44:            /* MSDOS_SUPER_MAGIC: vfat, msdos */
	case 0x2011bab0:        /* EXFAT_SUPER_MAGIC */
	case 0x65735546:        /* FUSE_SUPER_MAGIC: sshfs, fusefat, ... */
		return TRUE;
	default:
		return FALSE;
	}
}

gboolean pix_path_ancestor_on(const char *path, guint64 dev, guint64 fsid)
{
	g_autofree char *dir = g_path_get_dirname(path);
	for (int depth = 0; depth < 4096; depth++) {
		struct stat st;
		if (pix_path_lstat(dir, &st) == 0) {
			if (!S_ISDIR(st.st_mode) || (guint64)st.st_dev != dev)
				return FALSE;
			if (fsid == 0)
				return TRUE;
			int fd = pix_path_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			struct statfs sf;
			gboolean is_same = fd >= 0 && fstatfs(fd, &sf) == 0 && pix_fsid_from(&sf) == fsid;
			if (fd >= 0)
				close(fd);
			return is_same;
		}
		if (errno != ENOENT || strcmp(dir, "/") == 0)
			return FALSE;
		char *up = g_path_get_dirname(dir);
		g_free(dir);
		dir = up;
	}
	return FALSE;
}

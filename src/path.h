/*
 * path.h: paths as the pipeline uses them: absolute byte strings under a
 * canonical root (no symbolic link in any component), of any length.
 *
 * Opening and stat'ing such a path goes through openat2(2) with
 * RESOLVE_NO_SYMLINKS, so a directory swapped for a symbolic link during a
 * scan cannot lead a reader outside the scanned tree, and a path longer
 * than PATH_MAX is resolved in pieces, directory by directory.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef PIX_PATH_H
#define PIX_PATH_H

#include <glib.h>
#include <sys/stat.h>

/* "dir/name", without doubling the slash of the root "/" (transfer full). */
char *pix_path_join(const char *dir, const char *name);

/* Whether `path` is `root` or lies below it (component-wise: "/a/bc" is
 * not below "/a/b"). */
gboolean pix_path_is_under(const char *path, const char *root);

/*
 * The paths of `paths` (char*, sorted in place) that lie below none of the
 * others, duplicates once: the roots whose walks cover them all
 * (NULL-terminated, transfer full).
 */
char **pix_path_outermost(GPtrArray *paths);

/*
 * open(2) of absolute `path` with `flags` (O_NOFOLLOW is added: the last
 * component is not followed either).  A symbolic link anywhere on the way
 * fails with ELOOP.  Returns the fd or -1 with errno.
 */
int pix_path_open(const char *path, int flags);

/* lstat(2) of absolute `path`, symbolic links on the way refused (ELOOP).
 * Returns 0 or -1 with errno. */
int pix_path_lstat(const char *path, struct stat *st);

/*
 * Whether the file `name` of directory `dir_path` is gone: lstat says
 * ENOENT, or a directory or symbolic link stands there now.  Any other
 * failure (EACCES, EIO) is not taken as gone.
 */
gboolean pix_path_is_gone(const char *dir_path, const char *name);

/*
 * Whether the nearest directory above `path` that still exists is on
 * device `dev` and, when `fsid` is not 0, on the file system with that
 * statfs f_fsid.  A path gone because its disk is unmounted (or is another
 * disk now: removable disks reuse device numbers, which the file-system id
 * tells apart) has its nearest surviving ancestor elsewhere, so the file
 * was not deleted or moved away; it is just out of reach.
 */
gboolean pix_path_ancestor_on(const char *path, guint64 dev, guint64 fsid);

/* statfs's f_fsid as one number (0 when the file system gives none). */
struct statfs;
guint64 pix_fsid_from(const struct statfs *sf);
/* Whether the file system of `sf` makes its inode numbers up at each mount
 * (FAT, exFAT, FUSE), so that they identify no file across mounts. */
gboolean pix_fs_ino_unstable(const struct statfs *sf);

#endif

/*
 * uring.h: batches of opens, reads and closes through io_uring.
 *
 * A reader that has many small files to read submits the opens of all of
 * them at once, then all their reads, then all their closes: three system
 * calls for the batch instead of three per file, and for files that are
 * not in the page cache the kernel works on all of them at once.  Only
 * what the batch needs is here: anything unusual about a file (an error,
 * a short read, a file that changed) is left to the caller's ordinary
 * blocking path, so that io_uring changes how fast files are read, never
 * what is recorded about them.
 *
 * Where io_uring is refused (an old kernel, a seccomp filter, a container
 * that forbids it: io_uring_setup fails with ENOSYS or EPERM) or lacks an
 * operation, pix_uring_new() returns NULL and the caller reads with
 * blocking system calls, as it does when PIX_IO=threads is set in the
 * environment (how the tests run both).
 *
 * Thread-safety: a PixUring belongs to one thread.
 */
#ifndef PIX_URING_H
#define PIX_URING_H

#include <glib.h>

typedef struct PixUring PixUring;

/* Whether io_uring is to be used: not when PIX_IO=threads, nor where the
 * kernel refuses it (probed once per process). */
gboolean pix_uring_is_available(void);

/* A ring for batches of up to `depth` operations, or NULL (see above). */
PixUring *pix_uring_new(guint depth);
void pix_uring_free(PixUring *u);

/*
 * Opens paths[i] with openat2(2), `flags` and RESOLVE_NO_SYMLINKS, for
 * i < n: fds[i] gets the descriptor or -errno (-ENAMETOOLONG for a path
 * longer than PATH_MAX, which the caller opens in pieces; the others of
 * the batch are opened all the same).
 */
void pix_uring_open(PixUring *u, char *const *paths, int flags, int *fds, guint n);

/*
 * Reads lens[i] bytes from offset 0 of fds[i] into bufs[i], with
 * preadv2(2) flags `rw_flags`, for each i < n whose lens[i] > 0: res[i]
 * gets the bytes read or -errno (0 for the others).
 */
void pix_uring_read(PixUring *u, const int *fds, guint8 *const *bufs, const gsize *lens, int rw_flags,
                    gssize *res, guint n);

/* Closes fds[i] for each i < n with fds[i] >= 0. */
void pix_uring_close(PixUring *u, const int *fds, guint n);

#endif

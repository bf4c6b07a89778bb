/*
 * atomic.c: output files replaced in one step (see atomic.h).
 *
 * Writes a temporary file beside the target, then renames it.  Any thread,
 * one per file.
 *
 * Invariants:
 *  1. The target path only ever names a complete file: the old one, or
 *     the new one synced to disk before the rename (unless the caller
 *     asked for no sync: then complete while the system runs).
 *  2. A temporary file is removed on every path that does not commit.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "atomic.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

struct PixAtomicFile {
	char *path;      /* the target (owned) */
	char *temp;      /* the temporary file (owned) */
	int fd;
	FILE *stream;    /* on fd, or NULL until asked for */
};

static void set_errno_error(GError **error, int err, const char *what, const char *path)
{
	g_autofree char *q = pix_quote(path);
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s '%s': %s", what, q, g_strerror(err));
}

PixAtomicFile *pix_atomic_new(const char *path, int mode, GError **error)
{
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	PixAtomicFile *af = g_new0(PixAtomicFile, 1);

	af->path = g_strdup(path);
	af->temp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
	af->fd = g_mkstemp_full(af->temp, O_RDWR | O_CLOEXEC, mode);
	if (af->fd < 0) {
		set_errno_error(error, errno, "cannot create a file in", dir);
		g_free(af->temp);
		af->temp = NULL;
		pix_atomic_abort(af);
		return NULL;
	}
	return af;
}

FILE *pix_atomic_stream(PixAtomicFile *af)
{
	if (af->stream == NULL)
		af->stream = fdopen(af->fd, "w");
	return af->stream;
}

const char *pix_atomic_temp_path(PixAtomicFile *af)
{
	return af->temp;
}

static gboolean sync_dir(const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return FALSE;
	gboolean is_ok = fsync(fd) == 0 || errno == EINVAL;
	close(fd);
	return is_ok;
}

static gboolean commit(PixAtomicFile *af, gboolean is_synced, GError **error)
{
	int err = 0;

	if (af->stream != NULL && (fflush(af->stream) != 0 || ferror(af->stream)))
		err = errno != 0 ? errno : EIO;
	if (err == 0 && is_synced && fsync(af->fd) != 0)
		err = errno;
	if (af->stream != NULL) {
		if (fclose(af->stream) != 0 && err == 0)
			err = errno;
		af->stream = NULL;
	} else if (close(af->fd) != 0 && err == 0) {
		err = errno;
	}
	af->fd = -1;
	if (err != 0) {
		set_errno_error(error, err, "cannot write", af->path);
		pix_atomic_abort(af);
		return FALSE;
	}
	if (rename(af->temp, af->path) != 0) {
		set_errno_error(error, errno, "cannot replace", af->path);
		pix_atomic_abort(af);
		return FALSE;
	}
	g_clear_pointer(&af->temp, g_free);
	if (is_synced && !sync_dir(af->path)) {
		set_errno_error(error, errno, "cannot sync the directory of", af->path);
		pix_atomic_abort(af);
		return FALSE;
	}
	pix_atomic_abort(af);
	return TRUE;
}

gboolean pix_atomic_commit(PixAtomicFile *af, GError **error)
{
	return commit(af, TRUE, error);
}

gboolean pix_atomic_commit_unsynced(PixAtomicFile *af, GError **error)
{
	return commit(af, FALSE, error);
}

void pix_atomic_abort(PixAtomicFile *af)
{
	if (af == NULL)
		return;
	if (af->stream != NULL)
		fclose(af->stream);
	else if (af->fd >= 0)
		close(af->fd);
	if (af->temp != NULL)
		unlink(af->temp);
	g_free(af->temp);
	g_free(af->path);
	g_free(af);
}

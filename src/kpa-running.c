/*
 * kpa-running.c: a running KPhotoAlbum on a database (see kpa-running.h),
 * found in /proc: its name (comm), command line, working directory and
 * environment, and the kphotoalbumrc that environment points to.
 *
 * Reads /proc/PID/{comm,cmdline,cwd,environ} and kphotoalbumrc; writes
 * nothing.  Any thread.
 *
 * Invariants:
 *  1. A process is counted only when its comm is "kphotoalbum" and it
 *     still exists when read; everything it says is bounded (cmdline and
 *     environ read up to 1 MiB).
 *  2. When its database cannot be told, it counts as running on `dir`:
 *     refusing an export is undone by closing KPhotoAlbum, a cache written
 *     under it is not.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "kpa-running.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PROC_BYTES (1 << 20)

/* /proc/PID/NAME, NUL-separated strings, or NULL when unreadable. */
static GPtrArray *proc_strings(const char *pid, const char *name)
{
	g_autofree char *path = g_strdup_printf("/proc/%s/%s", pid, name);
	g_autofree char *bytes = NULL;
	gsize len = 0;
	if (!g_file_get_contents(path, &bytes, &len, NULL) || len > MAX_PROC_BYTES)
		return NULL;
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	for (gsize p = 0; p < len;) {
		gsize n = strnlen(bytes + p, len - p);
		g_ptr_array_add(out, g_strndup(bytes + p, n));
		p += n + 1;
	}
	return out;
}

/* `path` (absolute, or relative to process `pid`'s working directory, or a
 * file:// URL) as the directory of its database, canonical; NULL when it
 * cannot be resolved. */
static char *db_dir(const char *pid, const char *path)
{
	g_autofree char *file = NULL;
	if (g_str_has_prefix(path, "file://"))
		file = g_filename_from_uri(path, NULL, NULL);
	else if (g_path_is_absolute(path))
		file = g_strdup(path);
	else {
		g_autofree char *cwd_link = g_strdup_printf("/proc/%s/cwd", pid);
		g_autofree char *cwd = g_file_read_link(cwd_link, NULL);
		if (cwd != NULL)
			file = g_build_filename(cwd, path, NULL);
	}
	if (file == NULL)
		return NULL;
	g_autofree char *parent = g_path_get_dirname(file);
	char *real = realpath(parent, NULL);
	if (real == NULL)
		return NULL;
	char *out = g_strdup(real);
	free(real);
	return out;
}

/* The imageDBFile of the kphotoalbumrc process `pid`'s environment names;
 * NULL with *is_unknown when the environment cannot be read. */
static char *rc_database(const char *pid, gboolean *is_unknown)
{
	g_autoptr(GPtrArray) env = proc_strings(pid, "environ");
	*is_unknown = env == NULL;
	if (env == NULL)
		return NULL;
	const char *home = NULL, *config = NULL;
	for (guint i = 0; i < env->len; i++) {
		const char *e = env->pdata[i];
		if (g_str_has_prefix(e, "HOME="))
			home = e + 5;
		else if (g_str_has_prefix(e, "XDG_CONFIG_HOME="))
			config = e + 16;
	}
	g_autofree char *rc = config != NULL && g_path_is_absolute(config)
	                      ? g_build_filename(config, "kphotoalbumrc", NULL)
	                      : home != NULL ? g_build_filename(home, ".config", "kphotoalbumrc", NULL) : NULL;
	g_autoptr(GKeyFile) kf = g_key_file_new();
	if (rc == NULL || !g_key_file_load_from_file(kf, rc, G_KEY_FILE_NONE, NULL))
		return NULL;
	return g_key_file_get_string(kf, "General", "imageDBFile", NULL);
}

/* Whether KPhotoAlbum `pid` runs on `dir` (or may: *how says so). */
static gboolean runs_on(const char *pid, const char *dir, char **how)
{
	g_autoptr(GPtrArray) argv = proc_strings(pid, "cmdline");
	if (argv == NULL)
		return FALSE;       /* gone meanwhile */
	const char *db = NULL;
	for (guint i = 1; i < argv->len; i++) {
		const char *a = argv->pdata[i];
		if (strcmp(a, "--db") == 0 || strcmp(a, "-db") == 0)
			db = i + 1 < argv->len ? argv->pdata[i + 1] : NULL;
		else if (g_str_has_prefix(a, "--db="))
			db = a + 5;
	}
	if (db != NULL) {
		g_autofree char *d = db_dir(pid, db);
		*how = g_strdup_printf("KPhotoAlbum (pid %s) runs with --db '%s'", pid, db);
		return d != NULL && strcmp(d, dir) == 0;
	}
	gboolean is_unknown;
	g_autofree char *rc_db = rc_database(pid, &is_unknown);
	if (is_unknown) {
		*how = g_strdup_printf("KPhotoAlbum (pid %s) runs, and which database it has open cannot be told "
		                       "(its environment cannot be read)", pid);
		return TRUE;
	}
	g_autofree char *d = rc_db != NULL ? db_dir(pid, rc_db) : NULL;
	*how = g_strdup_printf("KPhotoAlbum (pid %s) runs on its last database, '%s'", pid,
	                       rc_db != NULL ? rc_db : "(none)");
	return d != NULL && strcmp(d, dir) == 0;
}

pid_t pix_kpa_running(const char *dir, char **how)
{
	*how = NULL;
	g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
	const char *name;
	while (proc != NULL && (name = g_dir_read_name(proc)) != NULL) {
		if (!isdigit((unsigned char)name[0]))
			continue;
		g_autofree char *comm_path = g_strdup_printf("/proc/%s/comm", name);
		g_autofree char *comm = NULL;
		if (!g_file_get_contents(comm_path, &comm, NULL, NULL) || strcmp(g_strchomp(comm), "kphotoalbum") != 0)
			continue;
		g_autofree char *why = NULL;
		if (runs_on(name, dir, &why)) {
			*how = g_steal_pointer(&why);
			return (pid_t)atol(name);
		}
	}
	return 0;
}

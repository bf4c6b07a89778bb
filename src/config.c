/*
 * config.c: the user's configuration file (see config.h).
 *
 * Reads the environment (XDG_CONFIG_HOME, HOME) and the file; writes
 * nothing.  Main thread only: the file is read at the first call and kept
 * for the life of the process.
 *
 * Invariants:
 *  1. The file is read at most once: after the first pix_config_load(),
 *     is_loaded holds and nothing changes again.
 *  2. Once loaded, either load_error is set and the values are all NULL,
 *     or load_error is NULL.
 *  3. catalog and every root are absolute paths; the lists are NULL or
 *     hold at least one item, none of them empty.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

static struct {
	gboolean is_loaded;
	char *path;         /* the file's path; owned, NULL before pix_config_path() */
	GError *load_error; /* why the file was refused; owned, or NULL */
	char *catalog;      /* owned, or NULL */
	char **roots;       /* owned, or NULL */
	char **excludes;    /* owned, or NULL */
	gboolean is_thumbnails; /* [scan] thumbnails */
} config;

static gboolean config_check(void)
{
	if (!config.is_loaded)
		return config.catalog == NULL && config.roots == NULL && config.excludes == NULL;
	if (config.load_error != NULL &&
	    (config.catalog != NULL || config.roots != NULL || config.excludes != NULL || config.is_thumbnails))
		return FALSE;
	if (config.catalog != NULL && !g_path_is_absolute(config.catalog))
		return FALSE;
	if (config.roots != NULL && config.roots[0] == NULL)
		return FALSE;
	for (char **r = config.roots; r != NULL && *r != NULL; r++)
		if (!g_path_is_absolute(*r))
			return FALSE;
	if (config.excludes != NULL && config.excludes[0] == NULL)
		return FALSE;
	for (char **e = config.excludes; e != NULL && *e != NULL; e++)
		if (**e == '\0')
			return FALSE;
	return TRUE;
}

char *pix_xdg_dir(const char *dir, const char *home_default)
{
	/* the XDG base directory spec: a relative one is invalid and must be
	 * ignored (GLib hands it back as it is) */
	if (g_path_is_absolute(dir))
		return g_strdup(dir);
	return g_build_filename(g_get_home_dir(), home_default, NULL);
}

const char *pix_config_path(void)
{
	if (config.path == NULL) {
		g_autofree char *dir = pix_xdg_dir(g_get_user_config_dir(), ".config");
		config.path = g_build_filename(dir, "photoidx", "config", NULL);
	}
	return config.path;
}

/* `value` of `group`'s `key` with a leading "~/" (or a lone "~") replaced
 * by the home directory; it must then be absolute. */
static char *expand_path(const char *group, const char *key, const char *value, GError **error)
{
	char *out;

	if (strcmp(value, "~") == 0)
		out = g_strdup(g_get_home_dir());
	else if (g_str_has_prefix(value, "~/"))
		out = g_build_filename(g_get_home_dir(), value + 2, NULL);
	else
		out = g_strdup(value);
	if (!g_path_is_absolute(out)) {
		g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
		            "[%s] %s: '%s' is not an absolute path (nor one starting with ~/)", group, key, value);
		g_free(out);
		return NULL;
	}
	return out;
}

/* Whether `error` only says that the group or key is absent. */
static gboolean is_absent(const GError *error)
{
	return g_error_matches(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND) ||
	       g_error_matches(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND);
}

/* `group`'s string list `key`, empty items dropped, paths expanded when
 * `is_paths`: *out is NULL when there is no item. */
static gboolean read_list(GKeyFile *kf, const char *group, const char *key, gboolean is_paths, char ***out,
                          GError **error)
{
	g_autoptr(GError) local = NULL;
	g_auto(GStrv) items = g_key_file_get_string_list(kf, group, key, NULL, &local);

	*out = NULL;
	if (items == NULL) {
		if (is_absent(local))
			return TRUE;
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func(g_free);
	for (char **i = items; *i != NULL; i++) {
		if (**i == '\0')
			continue;
		char *item = is_paths ? expand_path(group, key, *i, error) : g_strdup(*i);
		if (item == NULL)
			return FALSE;
		g_ptr_array_add(kept, item);
	}
	if (kept->len == 0)
		return TRUE;
	g_ptr_array_add(kept, NULL);
	*out = (char **)g_ptr_array_free(g_steal_pointer(&kept), FALSE);
	return TRUE;
}

static gboolean read_file(const char *path, GError **error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) local = NULL;
	g_autofree char *catalog = NULL;
	g_auto(GStrv) roots = NULL;
	g_auto(GStrv) excludes = NULL;

	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local)) {
		if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return TRUE;
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	g_autofree char *value = g_key_file_get_string(kf, "catalog", "path", &local);
	if (value == NULL && !is_absent(local)) {
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	if (value != NULL && value[0] != '\0' && (catalog = expand_path("catalog", "path", value, error)) == NULL)
		return FALSE;
	if (!read_list(kf, "scan", "roots", TRUE, &roots, error) ||
	    !read_list(kf, "scan", "excludes", FALSE, &excludes, error))
		return FALSE;
	g_clear_error(&local);
	gboolean is_thumbnails = g_key_file_get_boolean(kf, "scan", "thumbnails", &local);
	if (local != NULL && !is_absent(local)) {
		g_prefix_error(&local, "[scan] thumbnails: ");
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	g_clear_error(&local);
	config.is_thumbnails = is_thumbnails;
	config.catalog = g_steal_pointer(&catalog);
	config.roots = g_steal_pointer(&roots);
	config.excludes = g_steal_pointer(&excludes);
	return TRUE;
}

gboolean pix_config_load(GError **error)
{
	if (!config.is_loaded) {
		g_assert(config_check());
		if (!read_file(pix_config_path(), &config.load_error))
			g_assert(config.load_error != NULL);
		config.is_loaded = TRUE;
		g_assert(config_check());
	}
	if (config.load_error != NULL) {
		g_propagate_error(error, g_error_copy(config.load_error));
		return FALSE;
	}
	return TRUE;
}

const char *pix_config_catalog(void)
{
	pix_config_load(NULL);
	return config.catalog;
}

char **pix_config_roots(void)
{
	pix_config_load(NULL);
	return config.roots;
}

char **pix_config_excludes(void)
{
	pix_config_load(NULL);
	return config.excludes;
}

gboolean pix_config_thumbnails(void)
{
	pix_config_load(NULL);
	return config.is_thumbnails;
}

/*
 * config.h: the user's configuration file, read once per process.
 *
 * The file is $XDG_CONFIG_HOME/photoidx/config (~/.config/photoidx/config
 * when XDG_CONFIG_HOME is unset, empty or relative), a GKeyFile:
 *
 *   [catalog]
 *   path=~/photos.db
 *   [scan]
 *   roots=/home/me/Pictures;/media/me/CARD
 *   excludes=*.tmp;Thumbs.db
 *   thumbnails=true
 *
 * A missing file is an empty configuration.  Unknown groups and keys are
 * ignored (a newer photoidx may write them).  A leading "~/" in a path is
 * the home directory; a path must then be absolute.
 *
 * Thread-safety: main thread only.  The strings returned live until the
 * process exits and are never changed, so a pointer to them may be handed
 * to other threads.
 */
#ifndef PIX_CONFIG_H
#define PIX_CONFIG_H

#include <glib.h>

/* An XDG base directory as the specification means it: `dir` (from
 * g_get_user_config_dir() and the like) when absolute, else
 * ~/`home_default` (a relative XDG_*_HOME is ignored).  (transfer full) */
char *pix_xdg_dir(const char *dir, const char *home_default);

/*
 * Reads the configuration file, the first time only; later calls return
 * the first call's result.  FALSE with `error` set when the file exists
 * but cannot be read or parsed, or a key photoidx knows has a bad value
 * (a relative path, an invalid escape); the message does not name the
 * file (see pix_config_path()).  After a failure the getters below behave
 * as for a missing file.
 */
gboolean pix_config_load(GError **error);

/* The configuration file's path, whether or not it exists (transfer
 * none). */
const char *pix_config_path(void);

/* [catalog] path, "~/" expanded: absolute, or NULL when not set (or
 * empty).  Loads the file if need be (transfer none). */
const char *pix_config_catalog(void);

/* [scan] roots, each "~/" expanded and absolute, empty items dropped:
 * NULL-terminated, or NULL when none.  Loads the file if need be
 * (transfer none). */
char **pix_config_roots(void);

/* [scan] excludes, the walker's glob patterns as written, empty items
 * dropped: NULL-terminated, or NULL when none.  Loads the file if need be
 * (transfer none). */
char **pix_config_excludes(void);

/* [scan] thumbnails: whether a scan makes thumbnails as --thumbnails
 * does (FALSE when not set).  Loads the file if need be. */
gboolean pix_config_thumbnails(void);

#endif

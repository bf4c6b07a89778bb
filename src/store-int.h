/*
 * store-int.h: what the store*.c files share and nothing else sees: the
 * SQLite handle of a PixStore and the helpers every query needs.
 *
 * Thread-safety: as PixStore.
 */
#ifndef PIX_STORE_INT_H
#define PIX_STORE_INT_H

#include "store.h"

#include <sqlite3.h>

/* The connection (transfer none). */
sqlite3 *pix_store_sqlite(PixStore *s);

/* Sets `error` from SQLite's state after a call that failed with `rc`:
 * "catalog 'PATH': WHAT: MESSAGE", with the PixStoreError code that fits
 * (FULL, CORRUPT, OPEN, FAILED). */
void pix_store_sqlite_error(GError **error, PixStore *s, int rc, const char *what);

/* Appends " AND (...)" to `sql`: the file (directory column `dir_col`,
 * name column `name_col`) is one of `n_paths` paths or below one, with 7
 * parameters per path from ?first on; nothing when n_paths is 0.  Bind
 * them with pix_store_bind_under(). */
void pix_store_sql_under(GString *sql, const char *dir_col, const char *name_col, guint n_paths, int first);
/* Binds the parameters of pix_store_sql_under() for `paths` (absolute,
 * NULL-terminated; NULL: none). */
void pix_store_bind_under(sqlite3_stmt *st, int first, char **paths);

#endif

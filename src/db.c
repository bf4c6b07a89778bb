/*
 * db.c: the connection and statement objects of db.h, and the SQLite
 * side of the calls that are not inline.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "db.h"

#include <string.h>

PixDb *pix_db_wrap_sqlite(sqlite3 *lite)
{
	PixDb *db = g_new0(PixDb, 1);
	db->lite = lite;
	return db;
}

void pix_db_close(PixDb *db)
{
	if (db == NULL)
		return;
	if (db->lite != NULL)
		sqlite3_close_v2(db->lite);
	if (db->pg != NULL)
		pix_db_pg_close(db->pg);
	g_free(db);
}

gboolean pix_db_is_pg_uri(const char *path)
{
	return g_str_has_prefix(path, "postgresql://") || g_str_has_prefix(path, "postgres://");
}

int pix_db_prepare(PixDb *db, const char *sql, PixStmt **out)
{
	PixStmt *st = g_new0(PixStmt, 1);
	int rc = db->lite ? sqlite3_prepare_v2(db->lite, sql, -1, &st->lite, NULL) : pix_pg_prepare(db->pg, sql, &st->pg);
	if (rc != SQLITE_OK || (st->lite == NULL && st->pg == NULL)) {
		/* SQLite makes no statement of an empty text: neither does this */
		g_free(st);
		*out = NULL;
		return rc != SQLITE_OK ? rc : SQLITE_MISUSE;
	}
	*out = st;
	return SQLITE_OK;
}

int pix_db_finalize(PixStmt *st)
{
	int rc = SQLITE_OK;
	if (st == NULL)
		return rc;
	if (st->lite != NULL)
		rc = sqlite3_finalize(st->lite);
	if (st->pg != NULL)
		pix_pg_finalize(st->pg);
	g_free(st);
	return rc;
}

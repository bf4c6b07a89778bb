/*
 * db-nopg.c: db.h's PostgreSQL half in a photoidx built without libpq
 * (`make WITH_PG=0`, or where libpq's pkg-config file is missing): a
 * SQLite-only photoidx, for distributions and small machines.
 *
 * pix_db_open_pg() says why it cannot open a PostgreSQL catalog, and so
 * no PixDb ever has a PostgreSQL connection: db.h never calls the rest
 * of the pix_pg_* functions, which are here only to link, and abort if
 * that invariant is ever broken.  Built instead of db-pg.c (Makefile).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "db.h"

gboolean pix_db_has_pg(void)
{
	return FALSE;
}

PixDb *pix_db_open_pg(const char *conninfo, const char *const *settings, char **message)
{
	(void)conninfo;
	(void)settings;
	*message = g_strdup("this photoidx was built without PostgreSQL (libpq): it opens SQLite catalogs only"
	                    " (build it where libpq-dev is installed)");
	return NULL;
}

void pix_db_pg_close(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
}

int pix_pg_prepare(PixPgConn *c, const char *sql, PixPgStmt **out)
{
	(void)c; (void)sql; (void)out;
	g_assert_not_reached();
	return 0;
}

int pix_pg_prepare_many(PixPgConn *c, const char *const *sqls, int n, PixPgStmt **outs, int *failed)
{
	(void)c; (void)sqls; (void)n; (void)outs; (void)failed;
	g_assert_not_reached();
	return 0;
}

int pix_pg_exec(PixPgConn *c, const char *sql)
{
	(void)c; (void)sql;
	g_assert_not_reached();
	return 0;
}

const char *pix_pg_errmsg(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
	return NULL;
}

int pix_pg_errcode(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
	return 0;
}

const char *pix_pg_sqlstate(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
	return NULL;
}

gboolean pix_pg_is_lost(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
	return 0;
}

gint64 pix_pg_changes(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
	return 0;
}

const char *pix_pg_server_setting(PixPgConn *c, const char *name)
{
	(void)c;
	(void)name;
	g_assert_not_reached();
	return NULL;
}

int pix_pg_in_transaction(PixPgConn *c)
{
	(void)c;
	g_assert_not_reached();
	return 0;
}

gint64 pix_pg_reserve_id(PixPgConn *c, const char *table)
{
	(void)c; (void)table;
	g_assert_not_reached();
	return 0;
}

int pix_pg_bind_int64(PixPgStmt *st, int i, gint64 v)
{
	(void)st; (void)i; (void)v;
	g_assert_not_reached();
	return 0;
}

int pix_pg_bind_double(PixPgStmt *st, int i, double v)
{
	(void)st; (void)i; (void)v;
	g_assert_not_reached();
	return 0;
}

int pix_pg_bind_null(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return 0;
}

int pix_pg_bind_text(PixPgStmt *st, int i, const char *text, int n)
{
	(void)st; (void)i; (void)text; (void)n;
	g_assert_not_reached();
	return 0;
}

int pix_pg_bind_blob(PixPgStmt *st, int i, const void *blob, int n)
{
	(void)st; (void)i; (void)blob; (void)n;
	g_assert_not_reached();
	return 0;
}

int pix_pg_step(PixPgStmt *st)
{
	(void)st;
	g_assert_not_reached();
	return 0;
}

int pix_pg_run(PixPgStmt *st)
{
	(void)st;
	g_assert_not_reached();
	return 0;
}

int pix_pg_reset(PixPgStmt *st)
{
	(void)st;
	g_assert_not_reached();
	return 0;
}

int pix_pg_clear_bindings(PixPgStmt *st)
{
	(void)st;
	g_assert_not_reached();
	return 0;
}

void pix_pg_finalize(PixPgStmt *st)
{
	(void)st;
	g_assert_not_reached();
}

int pix_pg_column_count(PixPgStmt *st)
{
	(void)st;
	g_assert_not_reached();
	return 0;
}

int pix_pg_column_type(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return 0;
}

gint64 pix_pg_column_int64(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return 0;
}

double pix_pg_column_double(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return 0;
}

const unsigned char *pix_pg_column_text(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return NULL;
}

const void *pix_pg_column_blob(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return NULL;
}

int pix_pg_column_bytes(PixPgStmt *st, int i)
{
	(void)st; (void)i;
	g_assert_not_reached();
	return 0;
}

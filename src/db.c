/*
 * db.c: the connection and statement objects of db.h, and the SQLite
 * side of the calls that are not inline: kept rows and ids.
 *
 * Kept rows (SQLite).  A statement prepared from a plain INSERT (see
 * db.h) gets a PixKeep: binds write the current row's values into its
 * slots (text and blobs copied into `bytes`), a step completes the row.
 * The rows go to SQLite by the same INSERT written for r rows (VALUES
 * repeated, parameters renumbered; each r prepared when first needed),
 * all statements' rows at once, in first-use order: before any other
 * statement of the connection is stepped or executed (the flush sees
 * every row, and nothing reads around them), at a new row of a statement
 * that holds PIX_DB_KEEP_ROWS already, and outside a transaction at once.
 * A ROLLBACK drops them instead.
 *
 * Invariants (keep_check):
 *  1. A statement is in db->kept iff its PixKeep holds rows (n_rows > 0);
 *     db->kept lists them in the order of their first row since the last
 *     flush.
 *  2. 0 <= n_rows <= PIX_DB_KEEP_ROWS, and the slots of row n_rows (the
 *     one being bound) hold no value of an earlier row.
 *  3. Every TEXT or BLOB slot's bytes lie in `bytes`, which holds nothing
 *     else.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "db.h"
#include "sql.h"

#include <string.h>

/* IS [NOT] DISTINCT FROM, which the store writes for both backends (db.h) */
#if SQLITE_VERSION_NUMBER < 3039000
#error "photoidx needs SQLite 3.39 or later"
#endif

/* db.h's codes are SQLite's, passed through as they are */
G_STATIC_ASSERT(PIX_DB_OK == SQLITE_OK && PIX_DB_ERROR == SQLITE_ERROR && PIX_DB_BUSY == SQLITE_BUSY);
G_STATIC_ASSERT(PIX_DB_IOERR == SQLITE_IOERR && PIX_DB_CORRUPT == SQLITE_CORRUPT && PIX_DB_FULL == SQLITE_FULL);
G_STATIC_ASSERT(PIX_DB_CANTOPEN == SQLITE_CANTOPEN && PIX_DB_CONSTRAINT == SQLITE_CONSTRAINT);
G_STATIC_ASSERT(PIX_DB_MISUSE == SQLITE_MISUSE && PIX_DB_RANGE == SQLITE_RANGE && PIX_DB_NOTADB == SQLITE_NOTADB);
G_STATIC_ASSERT(PIX_DB_ROW == SQLITE_ROW && PIX_DB_DONE == SQLITE_DONE);
G_STATIC_ASSERT(PIX_DB_INTEGER == SQLITE_INTEGER && PIX_DB_FLOAT == SQLITE_FLOAT && PIX_DB_TEXT == SQLITE_TEXT);
G_STATIC_ASSERT(PIX_DB_BLOB == SQLITE_BLOB && PIX_DB_NULL == SQLITE_NULL);

/* One bound value of a kept row. */
typedef struct {
	int type;               /* SQLITE_NULL (0 in a fresh slot: see below),
	                           _INTEGER, _FLOAT, _TEXT, _BLOB */
	gint64 n;               /* INTEGER; TEXT and BLOB: offset in bytes */
	double d;               /* FLOAT */
	int len;                /* TEXT and BLOB: bytes */
} Slot;

/* a zeroed slot is NULL */
#define SLOT_NULL 0

struct PixKeep {
	PixSqlInsert insert;    /* the statement's table, columns, parameters */
	int n_params;           /* of one row */
	Slot *slots;            /* PIX_DB_KEEP_ROWS rows of n_params */
	GByteArray *bytes;      /* the TEXT and BLOB values (owned) */
	int n_rows;             /* complete rows kept */
	sqlite3_stmt *forms[PIX_DB_KEEP_ROWS + 1]; /* the INSERT for r rows, or NULL */
};

PixDb *pix_db_wrap_sqlite(sqlite3 *lite)
{
	PixDb *db = g_new0(PixDb, 1);
	db->lite = lite;
	db->kept = g_ptr_array_new();
	db->next_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
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
	if (db->kept != NULL)
		g_ptr_array_free(db->kept, TRUE);
	if (db->next_ids != NULL)
		g_hash_table_destroy(db->next_ids);
	g_free(db);
}

gboolean pix_db_is_pg_uri(const char *path)
{
	return g_str_has_prefix(path, "postgresql://") || g_str_has_prefix(path, "postgres://");
}

/* --- kept rows ------------------------------------------------------------ */

static gboolean keep_check(const PixDb *db)
{
	for (guint i = 0; i < db->kept->len; i++) {
		const PixStmt *st = g_ptr_array_index(db->kept, i);
		if (st->keep == NULL || st->keep->n_rows <= 0 || st->keep->n_rows > PIX_DB_KEEP_ROWS)
			return FALSE;
	}
	return TRUE;
}

/* The PixKeep of `sql` when it is a plain INSERT (sql.h), else NULL. */
static PixKeep *keep_plan(sqlite3_stmt *lite, const char *sql)
{
	PixSqlInsert ins;
	int n = sqlite3_bind_parameter_count(lite);
	if (n < 1 || !pix_sql_plain_insert(sql, &ins))
		return NULL;
	PixKeep *k = g_new0(PixKeep, 1);
	k->insert = ins;
	k->n_params = n;
	k->slots = g_new0(Slot, (gsize)n * PIX_DB_KEEP_ROWS);
	k->bytes = g_byte_array_new();
	return k;
}

static void keep_free(PixKeep *k)
{
	if (k == NULL)
		return;
	for (int r = 0; r <= PIX_DB_KEEP_ROWS; r++)
		sqlite3_finalize(k->forms[r]);
	pix_sql_insert_clear(&k->insert);
	g_free(k->slots);
	g_byte_array_free(k->bytes, TRUE);
	g_free(k);
}

/* The INSERT of `r` rows: row j's parameter ?N as ?(N + j * n_params). */
static int keep_form(PixDb *db, PixKeep *k, int r, sqlite3_stmt **out)
{
	if (k->forms[r] != NULL) {
		*out = k->forms[r];
		return SQLITE_OK;
	}
	g_autoptr(GString) sql = g_string_new(NULL);
	g_string_printf(sql, "INSERT INTO %s (%s) VALUES ", k->insert.table, k->insert.columns);
	for (int j = 0; j < r; j++) {
		g_string_append(sql, j > 0 ? ", (" : "(");
		for (int i = 0; i < k->insert.n_columns; i++)
			g_string_append_printf(sql, "%s?%d", i > 0 ? ", " : "", k->insert.params[i] + j * k->n_params);
		g_string_append_c(sql, ')');
	}
	int rc = sqlite3_prepare_v3(db->lite, sql->str, -1, SQLITE_PREPARE_PERSISTENT, &k->forms[r], NULL);
	*out = k->forms[r];
	return rc;
}

/* Empties a statement's rows (their slots NULL again). */
static void keep_drop(PixKeep *k)
{
	memset(k->slots, 0, sizeof(Slot) * (gsize)k->n_params * (gsize)(k->n_rows + 1 > PIX_DB_KEEP_ROWS
	                                                                  ? PIX_DB_KEEP_ROWS : k->n_rows + 1));
	g_byte_array_set_size(k->bytes, 0);
	k->n_rows = 0;
}

/* Writes one statement's rows. */
static int keep_write(PixDb *db, PixKeep *k)
{
	sqlite3_stmt *form;
	int rc = keep_form(db, k, k->n_rows, &form);
	if (rc != SQLITE_OK)
		return rc;
	for (int i = 0; i < k->n_rows * k->n_params && rc == SQLITE_OK; i++) {
		const Slot *s = &k->slots[i];
		const void *p = k->bytes->data + s->n;
		switch (s->type) {
		case SQLITE_INTEGER:
			rc = sqlite3_bind_int64(form, i + 1, s->n);
			break;
		case SQLITE_FLOAT:
			rc = sqlite3_bind_double(form, i + 1, s->d);
			break;
		case SQLITE_TEXT:
			rc = sqlite3_bind_text(form, i + 1, p, s->len, SQLITE_STATIC);
			break;
		case SQLITE_BLOB:
			rc = sqlite3_bind_blob(form, i + 1, p, s->len, SQLITE_STATIC);
			break;
		default:
			rc = sqlite3_bind_null(form, i + 1);
		}
	}
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(form);
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
	}
	/* the error stays the connection's until its next call: reset after
	 * reading nothing else (sqlite3_reset keeps errmsg for the caller) */
	sqlite3_reset(form);
	return rc;
}

int pix_db_flush(PixDb *db)
{
	int rc = SQLITE_OK;
	g_assert(keep_check(db));
	for (guint i = 0; i < db->kept->len; i++) {
		PixKeep *k = ((PixStmt *)g_ptr_array_index(db->kept, i))->keep;
		if (rc == SQLITE_OK)
			rc = keep_write(db, k);
		keep_drop(k);
	}
	g_ptr_array_set_size(db->kept, 0);
	return rc;
}

/* Drops the rows kept, unwritten (a ROLLBACK). */
static void keep_discard(PixDb *db)
{
	for (guint i = 0; i < db->kept->len; i++)
		keep_drop(((PixStmt *)g_ptr_array_index(db->kept, i))->keep);
	g_ptr_array_set_size(db->kept, 0);
}

int pix_db_keep_bind(PixStmt *st, int i, int type, gint64 n, double d, const void *bytes, int len)
{
	PixKeep *k = st->keep;
	if (i < 1 || i > k->n_params)
		return SQLITE_RANGE;
	g_assert(k->n_rows < PIX_DB_KEEP_ROWS);
	Slot *s = &k->slots[k->n_rows * k->n_params + i - 1];
	s->type = type;
	s->n = n;
	s->d = d;
	if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
		if (bytes == NULL && type == SQLITE_TEXT) {
			s->type = SLOT_NULL;    /* as sqlite3_bind_text of NULL */
			return SQLITE_OK;
		}
		if (len < 0)
			len = (int)strlen(bytes);
		s->n = k->bytes->len;
		s->len = len;
		g_byte_array_append(k->bytes, bytes != NULL ? bytes : (const void *)"", (guint)len);
	}
	return SQLITE_OK;
}

int pix_db_keep_step(PixStmt *st)
{
	PixDb *db = st->db;
	PixKeep *k = st->keep;
	if (k->n_rows == 0)
		g_ptr_array_add(db->kept, st);
	k->n_rows++;
	/* outside a transaction a row is written at once, as SQLite would */
	if (sqlite3_get_autocommit(db->lite)) {
		int rc = pix_db_flush(db);
		return rc == SQLITE_OK ? SQLITE_DONE : rc;
	}
	return SQLITE_DONE;
}

int pix_db_keep_reset(PixStmt *st)
{
	/* a new row: room for it, writing what is kept when there is none */
	if (st->keep->n_rows == PIX_DB_KEEP_ROWS)
		return pix_db_flush(st->db);
	return SQLITE_OK;
}

int pix_db_keep_clear(PixStmt *st)
{
	PixKeep *k = st->keep;
	if (k->n_rows < PIX_DB_KEEP_ROWS)
		memset(&k->slots[k->n_rows * k->n_params], 0, sizeof(Slot) * (gsize)k->n_params);
	return SQLITE_OK;
}

/* A transaction ends: ids are looked up again in the next. */
static void end_transaction(PixDb *db)
{
	g_hash_table_remove_all(db->next_ids);
}

int pix_db_lite_step(PixStmt *st)
{
	PixDb *db = st->db;
	if (st->is_rollback) {
		keep_discard(db);
		end_transaction(db);
	} else if (db->kept->len > 0) {
		int rc = pix_db_flush(db);
		if (rc != SQLITE_OK)
			return rc;
	}
	int rc = sqlite3_step(st->lite);
	if (sqlite3_get_autocommit(db->lite))
		end_transaction(db);
	return rc;
}

int pix_db_lite_exec(PixDb *db, const char *sql)
{
	if (g_ascii_strncasecmp(sql, "ROLLBACK", 8) == 0) {
		keep_discard(db);
	} else if (db->kept->len > 0) {
		int rc = pix_db_flush(db);
		if (rc != SQLITE_OK)
			return rc;
	}
	int rc = sqlite3_exec(db->lite, sql, NULL, NULL, NULL);
	if (sqlite3_get_autocommit(db->lite))
		end_transaction(db);
	return rc;
}

const char *pix_db_server_setting(PixDb *db, const char *name)
{
	return db->pg != NULL ? pix_pg_server_setting(db->pg, name) : NULL;
}

gint64 pix_db_reserve_id(PixDb *db, const char *table)
{
	if (db->pg != NULL)
		return pix_pg_reserve_id(db->pg, table);
	gint64 *next = g_hash_table_lookup(db->next_ids, table);
	if (next == NULL) {
		/* the rows kept hold ids from this count, none above the table's */
		g_autofree char *sql = g_strdup_printf("SELECT coalesce(max(id), 0) + 1 FROM %s", table);
		sqlite3_stmt *q = NULL;
		int rc = sqlite3_prepare_v2(db->lite, sql, -1, &q, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(q);
		if (rc != SQLITE_ROW) {
			sqlite3_finalize(q);
			return 0;
		}
		next = g_new(gint64, 1);
		*next = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
		/* outside a transaction there is nothing to count on from */
		if (sqlite3_get_autocommit(db->lite)) {
			gint64 id = *next;
			g_free(next);
			return id;
		}
		g_hash_table_insert(db->next_ids, g_strdup(table), next);
	}
	return (*next)++;
}

/* --- statements ----------------------------------------------------------- */

/* A PixStmt around SQLite's statement of `sql`. */
static PixStmt *wrap_lite(PixDb *db, sqlite3_stmt *lite, const char *sql)
{
	PixStmt *st = g_new0(PixStmt, 1);
	st->db = db;
	st->lite = lite;
	st->keep = keep_plan(lite, sql);
	st->is_rollback = g_ascii_strncasecmp(sql, "ROLLBACK", 8) == 0;
	return st;
}

static PixStmt *wrap_pg(PixDb *db, PixPgStmt *pg)
{
	PixStmt *st = g_new0(PixStmt, 1);
	st->db = db;
	st->pg = pg;
	return st;
}

int pix_db_prepare_v(PixDb *db, const char *sql, gboolean is_persistent, PixStmt **out)
{
	*out = NULL;
	if (db->pg != NULL) {
		PixPgStmt *pg = NULL;
		int rc = pix_pg_prepare(db->pg, sql, &pg);
		if (rc == SQLITE_OK)
			*out = wrap_pg(db, pg);
		return rc;
	}
	sqlite3_stmt *lite = NULL;
	int rc = sqlite3_prepare_v3(db->lite, sql, -1, is_persistent ? SQLITE_PREPARE_PERSISTENT : 0, &lite, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(lite);
		return rc;
	}
	if (lite == NULL)
		return SQLITE_MISUSE;   /* SQLite makes no statement of an empty text: neither does this */
	*out = wrap_lite(db, lite, sql);
	return SQLITE_OK;
}

int pix_db_prepare(PixDb *db, const char *sql, PixStmt **out)
{
	return pix_db_prepare_v(db, sql, FALSE, out);
}

int pix_db_prepare_many(PixDb *db, const char *const *sqls, int n, PixStmt **outs, int *failed)
{
	int rc = SQLITE_OK;
	*failed = -1;
	if (db->pg != NULL) {
		g_autofree PixPgStmt **pgs = g_new0(PixPgStmt *, n);
		rc = pix_pg_prepare_many(db->pg, sqls, n, pgs, failed);
		for (int i = 0; i < n; i++)
			outs[i] = rc == SQLITE_OK ? wrap_pg(db, pgs[i]) : NULL;
		return rc;
	}
	for (int i = 0; i < n; i++)
		outs[i] = NULL;
	for (int i = 0; i < n && rc == SQLITE_OK; i++)
		if ((rc = pix_db_prepare_v(db, sqls[i], TRUE, &outs[i])) != SQLITE_OK)
			*failed = i;
	if (rc != SQLITE_OK)
		for (int i = 0; i < n; i++)
			g_clear_pointer(&outs[i], pix_db_finalize);
	return rc;
}

int pix_db_finalize(PixStmt *st)
{
	int rc = SQLITE_OK;
	if (st == NULL)
		return rc;
	if (st->keep != NULL) {
		/* rows of an open transaction, which its end writes or drops */
		if (st->keep->n_rows > 0)
			g_ptr_array_remove(st->db->kept, st);
		keep_free(st->keep);
	}
	if (st->lite != NULL)
		rc = sqlite3_finalize(st->lite);
	if (st->pg != NULL)
		pix_pg_finalize(st->pg);
	g_free(st);
	return rc;
}

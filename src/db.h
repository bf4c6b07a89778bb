/*
 * db.h: one SQL connection of the catalog, SQLite or PostgreSQL, behind
 * the calls the store makes.  The calls keep the shape of SQLite's C
 * API (prepare, bind, step, column) with result codes of their own
 * (PIX_DB_ROW, PIX_DB_DONE, PIX_DB_FULL ...): on SQLite each is the
 * SQLite call itself (inline), on PostgreSQL db-pg.c does the same
 * through libpq.
 *
 * SQL is written once, in what SQLite (3.39 and later) and PostgreSQL
 * both accept, with numbered parameters (?1, ?2), which db-pg.c spells
 * $1, $2 (sql.h); nothing else of the text is changed.  What the two
 * really say differently (BEGIN IMMEDIATE, LIKE against ILIKE, bytea) is
 * written twice, in the store's statement table or where it is used.
 *
 * On PostgreSQL, inside a transaction, a statement that returns no rows
 * is sent without waiting for its result (libpq's pipeline mode): its
 * step says PIX_DB_DONE at once, and a failure shows at the next
 * statement that waits (one that returns rows, COMMIT, pix_db_changes()),
 * which fails with that error; the transaction is then aborted, as the
 * store's rollback expects.  Outside a transaction every statement waits.
 *
 * On both, a plain INSERT (INSERT INTO t (columns) VALUES (?N, ...), of
 * parameters only, nothing after the values) keeps its rows: a step
 * says PIX_DB_DONE at once and the rows are written later, together
 * (PostgreSQL: by COPY; SQLite: PIX_DB_KEEP_ROWS rows per statement
 * execution, whose per-execution cost, a cursor opened and closed on the
 * table and on each index, was a third of a row's), before any other
 * statement of the connection runs and at COMMIT, in the order the
 * statements were first used (a file's row before its metadata's); a
 * ROLLBACK drops them.  A failure shows at that later statement, as
 * above.  Its rows' ids cannot come from the insert, so a caller names
 * them (pix_db_reserve_id()); pix_db_changes() says nothing of them.
 *
 * Thread-safety: a PixDb and its statements are used by one thread at a
 * time.
 */
#ifndef PIX_DB_H
#define PIX_DB_H

#include <glib.h>
#include <sqlite3.h>

/*
 * The calls' result codes.  Their values are SQLite's, so that the SQLite
 * side passes its codes through (db.c asserts that they agree); an
 * extended SQLite code (SQLITE_IOERR_WRITE) keeps its primary code in the
 * low byte: test with pix_db_primary().  db-pg.c maps SQLSTATEs onto them.
 */
typedef enum {
	PIX_DB_OK = 0,
	PIX_DB_ERROR = 1,
	PIX_DB_BUSY = 5,
	PIX_DB_IOERR = 10,
	PIX_DB_CORRUPT = 11,
	PIX_DB_FULL = 13,
	PIX_DB_CANTOPEN = 14,
	PIX_DB_CONSTRAINT = 19,
	PIX_DB_MISUSE = 21,
	PIX_DB_RANGE = 25,
	PIX_DB_NOTADB = 26,
	PIX_DB_ROW = 100,       /* a step has a row */
	PIX_DB_DONE = 101,      /* a step is done */
} PixDbCode;

static inline int pix_db_primary(int rc)
{
	return rc & 0xff;
}

/* A column's or a kept value's type (SQLite's values). */
typedef enum {
	PIX_DB_INTEGER = 1,
	PIX_DB_FLOAT = 2,
	PIX_DB_TEXT = 3,
	PIX_DB_BLOB = 4,
	PIX_DB_NULL = 5,
} PixDbType;

/* How long a bound text or blob must live: until the next step
 * (borrowed: PIX_DB_STATIC) or not at all (copied: PIX_DB_TRANSIENT). */
typedef enum {
	PIX_DB_STATIC,
	PIX_DB_TRANSIENT,
} PixDbLife;

typedef struct PixPgConn PixPgConn;
typedef struct PixPgStmt PixPgStmt;

typedef struct PixKeep PixKeep;

/* Rows of a plain INSERT kept on SQLite, written this many at a time
 * (measured: 8 rows a statement 0.71x a row's cost, 16 0.62x, 32 and 64
 * no better). */
#define PIX_DB_KEEP_ROWS 16

typedef struct {
	sqlite3 *lite;          /* one of the two is set */
	PixPgConn *pg;
	GPtrArray *kept;        /* SQLite: the PixStmt with rows kept, in the
	                           order they were first used (db.c) */
	GHashTable *next_ids;   /* SQLite: table name -> the next id to give
	                           in the open transaction (gint64*), or NULL */
} PixDb;

typedef struct {
	sqlite3_stmt *lite;
	PixPgStmt *pg;
	PixDb *db;              /* its connection */
	PixKeep *keep;          /* SQLite, a plain INSERT: its kept rows (db.c);
	                           binds go there, not to `lite` */
	gboolean is_rollback;   /* SQLite: the statement is a ROLLBACK */
} PixStmt;

/* Wraps an open SQLite connection (transfer full: pix_db_close closes it). */
PixDb *pix_db_wrap_sqlite(sqlite3 *db);
/* Connects to PostgreSQL (a libpq URI or "key=value" string), with the
 * run-time settings `settings` (name, value, ..., NULL; after any the
 * string's options give) sent with the connection's start, not after it;
 * NULL and *message (transfer full) when it cannot. */
PixDb *pix_db_open_pg(const char *conninfo, const char *const *settings, char **message);
/* A setting the server reports with every connection (server_encoding,
 * server_version, ...: PostgreSQL's ParameterStatus), without asking; NULL
 * if it reports none of that name. */
const char *pix_pg_server_setting(PixPgConn *c, const char *name);
/* This photoidx was built with libpq (else db-nopg.c stands in for db-pg.c). */
gboolean pix_db_has_pg(void);
/* (db.c's pix_db_close() for a PostgreSQL connection) */
void pix_db_pg_close(PixPgConn *c);
void pix_db_close(PixDb *db);

static inline gboolean pix_db_is_pg(const PixDb *db)
{
	return db->pg != NULL;
}

/* Whether `path` names a PostgreSQL catalog (postgresql:// or postgres://). */
gboolean pix_db_is_pg_uri(const char *path);

int pix_pg_prepare(PixPgConn *c, const char *sql, PixPgStmt **out);
int pix_pg_prepare_many(PixPgConn *c, const char *const *sqls, int n, PixPgStmt **outs, int *failed);
int pix_pg_exec(PixPgConn *c, const char *sql);
const char *pix_pg_errmsg(PixPgConn *c);
int pix_pg_errcode(PixPgConn *c);
const char *pix_pg_sqlstate(PixPgConn *c);
gboolean pix_pg_is_lost(PixPgConn *c);
gint64 pix_pg_changes(PixPgConn *c);
int pix_pg_in_transaction(PixPgConn *c);
/* Ids for table's `id` column, taken from its sequence in blocks (one
 * round trip per block); 0 with the error set on failure. */
gint64 pix_pg_reserve_id(PixPgConn *c, const char *table);

int pix_pg_bind_int64(PixPgStmt *st, int i, gint64 v);
int pix_pg_bind_double(PixPgStmt *st, int i, double v);
int pix_pg_bind_null(PixPgStmt *st, int i);
int pix_pg_bind_text(PixPgStmt *st, int i, const char *text, int n);
int pix_pg_bind_blob(PixPgStmt *st, int i, const void *blob, int n);
int pix_pg_step(PixPgStmt *st);
int pix_pg_run(PixPgStmt *st);
int pix_pg_reset(PixPgStmt *st);
int pix_pg_clear_bindings(PixPgStmt *st);
void pix_pg_finalize(PixPgStmt *st);
int pix_pg_column_count(PixPgStmt *st);
int pix_pg_column_type(PixPgStmt *st, int i);
gint64 pix_pg_column_int64(PixPgStmt *st, int i);
double pix_pg_column_double(PixPgStmt *st, int i);
const unsigned char *pix_pg_column_text(PixPgStmt *st, int i);
const void *pix_pg_column_blob(PixPgStmt *st, int i);
int pix_pg_column_bytes(PixPgStmt *st, int i);

/* SQLite's side of kept rows (db.c) */
int pix_db_keep_bind(PixStmt *st, int i, int type, gint64 n, double d, const void *bytes, int len);
int pix_db_keep_step(PixStmt *st);
int pix_db_keep_reset(PixStmt *st);
int pix_db_keep_clear(PixStmt *st);
/* Writes the rows kept (SQLite), in first-use order; the first failure's
 * code (the rows are dropped then), else PIX_DB_OK. */
int pix_db_flush(PixDb *db);
int pix_db_lite_exec(PixDb *db, const char *sql);
int pix_db_lite_step(PixStmt *st);

/* --- the calls, as SQLite's --- */

/* `sql` as a statement of `db`; `is_persistent`: kept for the
 * connection's life (SQLITE_PREPARE_PERSISTENT). */
int pix_db_prepare_v(PixDb *db, const char *sql, gboolean is_persistent, PixStmt **out);
int pix_db_prepare(PixDb *db, const char *sql, PixStmt **out);
/* The `n` statements `sqls`, persistent, into outs[] (PostgreSQL: in one
 * round trip per 32).  On failure every outs[i] is NULL, *failed is the
 * index of the first that failed (or -1: the connection did) and the
 * connection's error says why. */
int pix_db_prepare_many(PixDb *db, const char *const *sqls, int n, PixStmt **outs, int *failed);
int pix_db_finalize(PixStmt *st);

/*
 * An id for a new row of `table` (its INTEGER PRIMARY KEY `id`), for an
 * insert that names it, as a kept insert must: PostgreSQL takes them from
 * the table's sequence in blocks; SQLite counts on from the table's
 * highest id, looked up once per transaction (the catalog has one writer).
 * 0 with the connection's error set on failure.
 */
gint64 pix_db_reserve_id(PixDb *db, const char *table);
/* pix_pg_server_setting() on PostgreSQL; NULL on SQLite */
const char *pix_db_server_setting(PixDb *db, const char *name);

static inline int pix_db_exec(PixDb *db, const char *sql)
{
	return db->lite ? pix_db_lite_exec(db, sql) : pix_pg_exec(db->pg, sql);
}
static inline const char *pix_db_errmsg(PixDb *db)
{
	return db->lite ? sqlite3_errmsg(db->lite) : pix_pg_errmsg(db->pg);
}
static inline int pix_db_errcode(PixDb *db)
{
	return db->lite ? sqlite3_errcode(db->lite) : pix_pg_errcode(db->pg);
}
/* Rows changed by the last INSERT, UPDATE or DELETE. */
/* PostgreSQL's SQLSTATE of the last error ("" on SQLite, or none) */
static inline const char *pix_db_sqlstate(PixDb *db)
{
	return db->pg != NULL ? pix_pg_sqlstate(db->pg) : "";
}

/* The connection to the server is gone (never on SQLite). */
static inline gboolean pix_db_is_lost(PixDb *db)
{
	return db->pg != NULL && pix_pg_is_lost(db->pg);
}

static inline gint64 pix_db_changes(PixDb *db)
{
	return db->lite ? sqlite3_changes(db->lite) : pix_pg_changes(db->pg);
}
static inline int pix_db_get_autocommit(PixDb *db)
{
	return db->lite ? sqlite3_get_autocommit(db->lite) : !pix_pg_in_transaction(db->pg);
}
static inline int pix_db_bind_int64(PixStmt *st, int i, gint64 v)
{
	if (st->keep != NULL)
		return pix_db_keep_bind(st, i, PIX_DB_INTEGER, v, 0, NULL, 0);
	return st->lite ? sqlite3_bind_int64(st->lite, i, v) : pix_pg_bind_int64(st->pg, i, v);
}
static inline int pix_db_bind_int(PixStmt *st, int i, int v)
{
	return pix_db_bind_int64(st, i, v);
}
static inline int pix_db_bind_double(PixStmt *st, int i, double v)
{
	if (st->keep != NULL)
		return pix_db_keep_bind(st, i, PIX_DB_FLOAT, 0, v, NULL, 0);
	return st->lite ? sqlite3_bind_double(st->lite, i, v) : pix_pg_bind_double(st->pg, i, v);
}
static inline int pix_db_bind_null(PixStmt *st, int i)
{
	if (st->keep != NULL)
		return pix_db_keep_bind(st, i, PIX_DB_NULL, 0, 0, NULL, 0);
	return st->lite ? sqlite3_bind_null(st->lite, i) : pix_pg_bind_null(st->pg, i);
}
/* Text and blobs are copied (PIX_DB_TRANSIENT) or borrowed until the
 * next step (PIX_DB_STATIC) on SQLite; PostgreSQL and kept rows copy
 * both. */
static inline int pix_db_bind_text(PixStmt *st, int i, const char *text, int n, PixDbLife how)
{
	if (st->keep != NULL)
		return pix_db_keep_bind(st, i, PIX_DB_TEXT, 0, 0, text, n);
	return st->lite ? sqlite3_bind_text(st->lite, i, text, n,
	                                                    how == PIX_DB_STATIC ? SQLITE_STATIC : SQLITE_TRANSIENT) : pix_pg_bind_text(st->pg, i, text, n);
}
static inline int pix_db_bind_blob(PixStmt *st, int i, const void *blob, int n, PixDbLife how)
{
	if (st->keep != NULL)
		return pix_db_keep_bind(st, i, PIX_DB_BLOB, 0, 0, blob, n);
	return st->lite ? sqlite3_bind_blob(st->lite, i, blob, n,
	                                                    how == PIX_DB_STATIC ? SQLITE_STATIC : SQLITE_TRANSIENT) : pix_pg_bind_blob(st->pg, i, blob, n);
}
static inline int pix_db_step(PixStmt *st)
{
	if (st->keep != NULL)
		return pix_db_keep_step(st);
	return st->lite ? pix_db_lite_step(st) : pix_pg_step(st->pg);
}
/* Runs `st` to its end, its rows (a lock's, a notification's) unread:
 * PIX_DB_DONE, or the error.  On PostgreSQL, inside a transaction, it is
 * sent without waiting, as a statement without rows is (its failure
 * shows at the next statement that waits). */
static inline int pix_db_run(PixStmt *st)
{
	if (st->pg != NULL)
		return pix_pg_run(st->pg);
	int rc;
	while ((rc = pix_db_step(st)) == PIX_DB_ROW)
		;
	return rc;
}
static inline int pix_db_reset(PixStmt *st)
{
	if (st->keep != NULL)
		return pix_db_keep_reset(st);
	return st->lite ? sqlite3_reset(st->lite) : pix_pg_reset(st->pg);
}
static inline int pix_db_clear_bindings(PixStmt *st)
{
	if (st->keep != NULL)
		return pix_db_keep_clear(st);
	return st->lite ? sqlite3_clear_bindings(st->lite) : pix_pg_clear_bindings(st->pg);
}
static inline int pix_db_column_count(PixStmt *st)
{
	return st->lite ? sqlite3_column_count(st->lite) : pix_pg_column_count(st->pg);
}
static inline int pix_db_column_type(PixStmt *st, int i)
{
	return st->lite ? sqlite3_column_type(st->lite, i) : pix_pg_column_type(st->pg, i);
}
static inline gint64 pix_db_column_int64(PixStmt *st, int i)
{
	return st->lite ? sqlite3_column_int64(st->lite, i) : pix_pg_column_int64(st->pg, i);
}
static inline int pix_db_column_int(PixStmt *st, int i)
{
	return (int)pix_db_column_int64(st, i);
}
static inline double pix_db_column_double(PixStmt *st, int i)
{
	return st->lite ? sqlite3_column_double(st->lite, i) : pix_pg_column_double(st->pg, i);
}
static inline const unsigned char *pix_db_column_text(PixStmt *st, int i)
{
	return st->lite ? sqlite3_column_text(st->lite, i) : pix_pg_column_text(st->pg, i);
}
static inline const void *pix_db_column_blob(PixStmt *st, int i)
{
	return st->lite ? sqlite3_column_blob(st->lite, i) : pix_pg_column_blob(st->pg, i);
}
static inline int pix_db_column_bytes(PixStmt *st, int i)
{
	return st->lite ? sqlite3_column_bytes(st->lite, i) : pix_pg_column_bytes(st->pg, i);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PixStmt, pix_db_finalize)

#endif

/*
 * db-pg.c: db.h's calls on PostgreSQL, through libpq.
 *
 * The connection stays in libpq's pipeline mode.  Each statement is
 * prepared (named "pN") and described once, in one round trip, so that
 * binds know each parameter's type (a path bound as text goes as bytea
 * where the column is bytea, an integer as 't'/'f' where it is boolean).
 * A step sends the statement; a statement that returns no rows, inside a
 * transaction, is left in the pipeline (at most PENDING_MAX of them), and
 * every other waits: one round trip (a Sync) collects the results of all
 * that were sent, in order.  A plain INSERT ... VALUES of parameters only,
 * inside a transaction, is not sent at all: its row is kept in COPY's text
 * format, and the rows kept are sent by COPY (one per statement, in the
 * order the statements were first used) before anything else is sent:
 * the server then runs one statement per table and batch, not per row (an
 * insert per row costs its executor start, its CHECKs prepared again, its
 * trigger queue).  Results come in text format; bytea values are decoded
 * as a column is read.
 *
 * Invariants:
 *  1. c->expect lists, in order, every command sent since the last Sync
 *     whose results are still to be read; it is empty after round_trip().
 *  2. A statement's result set (st->res) is whole: rows are read from
 *     memory, so other statements may run between two steps, as on
 *     SQLite.
 *  3. c->in_tx is the server's transaction state at the last Sync,
 *     updated for BEGIN, COMMIT and ROLLBACK sent since.
 *  4. c->copy_bytes > 0 exactly when rows are kept for COPY; nothing else
 *     is sent to the server then (flush_copies() first), so the server
 *     sees every statement in the order the store ran them, but for the
 *     kept inserts of different tables among themselves: those go in the
 *     order each statement was first used (c->copies), which is the order
 *     of the foreign keys (a file's row is written before its metadata's).
 *  5. Between calls, the connection is in pipeline mode (unless it is
 *     gone), c->expect holds exactly the c->n_deferred statements that did
 *     not wait (at most PENDING_MAX) and the two answers (Prepare,
 *     Describe) of c->unanswered, and rows are kept or statements
 *     deferred only inside a transaction.  conn_check() checks 1-6 at the
 *     entry of every call that sends.
 *  6. c->unanswered is NULL or the one statement whose Prepare and
 *     Describe were sent and not read: one without parameters, prepared
 *     alone (pix_pg_prepare()), so nothing needs its description before
 *     it runs.  Its first step sends it with them, one round trip for
 *     all three (a one-off statement costs one, not two); anything else
 *     that sends first reads them (settle()).
 *
 * The connection's states, and what moves it (every arrow that sends
 * anything first sends the kept rows, invariant 4, but COPY-able inserts):
 *
 *            BEGIN (deferred)
 *     IDLE ---------------------> IN_TX <-----------------------------+
 *      ^                            |  a statement without rows, or    |
 *      |                            |  whose rows are not read (run):  |
 *      |  COMMIT, ROLLBACK          |  deferred (a round trip at       |
 *      +----------------------------+  PENDING_MAX); an INSERT of      |
 *      |  (round trip; a failed     |  parameters: kept for COPY (sent |
 *      |   COMMIT ends it too)      |  at COPY_MAX); one with rows,    |
 *      |                            |  changes(), exec: round trip ----+
 *      |                            v
 *      |                         FAILED: a statement's error (its
 *      +---- ROLLBACK --------   SQLSTATE kept, c->errmsg); the server's
 *                                transaction is aborted until ROLLBACK
 *
 *     any state --(the socket fails, the server ends the session)--> LOST:
 *     PQstatus is CONNECTION_BAD or the SQLSTATE is of class 08 / 57P0x;
 *     every call fails; pix_pg_is_lost() says so, and the store makes a
 *     new connection (pix_store_reconnect()) and writes its batch again.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "db.h"
#include "sql.h"

#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the type oids of pg_type that results and parameters use */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_OID 26
#define OID_FLOAT4 700
#define OID_FLOAT8 701
#define OID_NUMERIC 1700

/* statements left in the pipeline before their results are read: their
 * results (about 20 bytes each) must fit the socket's buffer while the
 * client is still sending, or both ends wait on each other */
#define PENDING_MAX 256
/* ids taken from a sequence in one round trip: the first block, and the
 * largest (each block twice the last: a run that adds many rows waits for
 * few, one that adds a few wastes few) */
#define ID_BLOCK 1024
#define ID_BLOCK_MAX 65536
/* rows kept for COPY, in bytes, before they are sent anyway */
#define COPY_MAX (4 * 1024 * 1024)

typedef enum {
	WANT_PREPARE,
	WANT_DESCRIBE,
	WANT_RESULT,            /* a step waits for it */
	WANT_DEFERRED,          /* a step that did not wait */
	WANT_NOTHING,           /* DEALLOCATE: its failure is no one's */
} Want;

typedef struct {
	Want want;
	PixPgStmt *st;
} Expect;

typedef struct {
	gint64 *ids;
	guint n, next;
	guint size;             /* of the next block */
	guint take_size;        /* of take's */
	PixPgStmt *take;        /* the statement that takes a block */
} IdBlock;

struct PixPgConn {
	PGconn *conn;
	GArray *expect;         /* Expect (invariant 1) */
	GPtrArray *to_close;    /* names of statements finalized, to DEALLOCATE */
	char *errmsg;
	char sqlstate[6];
	gint64 changes;
	gboolean in_tx;
	guint next_name;
	guint n_deferred;
	GHashTable *blocks;     /* table name -> IdBlock */
	GPtrArray *copies;      /* PixPgStmt that can COPY, in the order they
	                           were first used (invariant 4) */
	gsize copy_bytes;
	PixPgStmt *unanswered;  /* prepared, its answer not read (invariant 6) */
};

struct PixPgStmt {
	PixPgConn *c;
	char name[16];
	char *sql;              /* in PostgreSQL's dialect */
	int tx_effect;          /* +1 BEGIN, -1 COMMIT/ROLLBACK, 0 other */
	gboolean is_described;
	int n_params;
	Oid *types;             /* n_params */
	int n_fields;
	GByteArray **values;    /* n_params; NULL: SQL NULL */
	int *formats;           /* 1: binary (bytea) */
	PGresult *res;
	int row;                /* current row of res */
	gboolean is_done;       /* executed since the last reset */
	gboolean has_failed;    /* its own result was an error */
	GByteArray **decoded;   /* per column of the current row: bytea decoded */
	char *copy_sql;         /* "COPY table (columns) FROM STDIN", or NULL:
	                           not a plain INSERT of parameters */
	int n_copy_cols;
	int *copy_param;        /* per column: its parameter (0-based) */
	GString *copy_rows;     /* rows kept (invariant 4) */
	gboolean is_copy_listed; /* in c->copies */
};

/* --- errors --- */

static void set_error(PixPgConn *c, const char *msg, const char *sqlstate)
{
	g_free(c->errmsg);
	/* one line: libpq's messages may hold several ("...\n\tThis probably means ...") */
	GString *m = g_string_new(NULL);
	for (const char *p = msg != NULL && *msg ? msg : "PostgreSQL failed"; *p != '\0'; p++) {
		if (g_ascii_isspace(*p)) {
			if (m->len > 0 && m->str[m->len - 1] != ' ')
				g_string_append_c(m, ' ');
		} else {
			g_string_append_c(m, *p);
		}
	}
	c->errmsg = g_strchomp(g_string_free(m, FALSE));
	g_strlcpy(c->sqlstate, sqlstate != NULL ? sqlstate : "", sizeof c->sqlstate);
}

static int code_of(const char *sqlstate)
{
	if (strcmp(sqlstate, "53100") == 0)
		return PIX_DB_FULL;
	if (g_str_has_prefix(sqlstate, "23"))
		return PIX_DB_CONSTRAINT;
	if (strcmp(sqlstate, "XX001") == 0 || strcmp(sqlstate, "XX002") == 0)
		return PIX_DB_CORRUPT;
	if (strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0 || strcmp(sqlstate, "55P03") == 0)
		return PIX_DB_BUSY;
	return PIX_DB_ERROR;
}

const char *pix_pg_errmsg(PixPgConn *c)
{
	return c->errmsg != NULL ? c->errmsg : "not an error";
}

int pix_pg_errcode(PixPgConn *c)
{
	return c->errmsg == NULL ? PIX_DB_OK : code_of(c->sqlstate);
}

const char *pix_pg_sqlstate(PixPgConn *c)
{
	return c->errmsg != NULL ? c->sqlstate : "";
}

gboolean pix_pg_is_lost(PixPgConn *c)
{
	const char *s = pix_pg_sqlstate(c);
	/* class 08: connection exceptions; 57P01-57P03: the server shuts
	 * down, crashed, or cannot take connections yet */
	return PQstatus(c->conn) == CONNECTION_BAD || g_str_has_prefix(s, "08") || strcmp(s, "57P01") == 0 ||
	       strcmp(s, "57P02") == 0 || strcmp(s, "57P03") == 0;
}

static int conn_failed(PixPgConn *c)
{
	set_error(c, PQerrorMessage(c->conn), "08006");
	return PIX_DB_ERROR;
}

/* --- the connection --- */

static void id_block_free(gpointer p)
{
	IdBlock *b = p;
	pix_pg_finalize(b->take);
	g_free(b->ids);
	g_free(b);
}

gboolean pix_db_has_pg(void)
{
	return TRUE;
}

/* `value` as one word of libpq's options (backslash before a space or a
 * backslash) */
static void append_option_word(GString *out, const char *value)
{
	for (const char *p = value; *p != '\0'; p++) {
		if (*p == ' ' || *p == '\\' || *p == '\t' || *p == '\n')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *p);
	}
}

/* "-c name=value" for each pair of `kv` (NULL-terminated) */
static void append_settings(GString *options, const char *const *kv)
{
	for (; kv != NULL && *kv != NULL; kv += 2) {
		g_string_append_printf(options, "%s-c %s=", options->len > 0 ? " " : "", kv[0]);
		append_option_word(options, kv[1]);
	}
}

PixDb *pix_db_open_pg(const char *conninfo, const char *const *settings, char **message)
{
	char *err = NULL;
	PQconninfoOption *given = PQconninfoParse(conninfo, &err);
	if (given == NULL) {
		*message = g_strchomp(g_strdup(err != NULL ? err : "out of memory"));
		PQfreemem(err);
		return NULL;
	}
	/* the settings go in the startup packet, after the caller's own
	 * options: no round trip for them (SET, set_config) once connected */
	g_autoptr(GString) options = g_string_new(NULL);
	g_autoptr(GPtrArray) keys = g_ptr_array_new(), values = g_ptr_array_new();
	for (PQconninfoOption *o = given; o->keyword != NULL; o++) {
		if (strcmp(o->keyword, "options") == 0) {
			if (o->val != NULL)
				g_string_append(options, o->val);
		} else if (o->val != NULL && strcmp(o->keyword, "client_encoding") != 0) {
			g_ptr_array_add(keys, o->keyword);
			g_ptr_array_add(values, o->val);
		}
	}
	/* quiet NOTICEs (IF NOT EXISTS ...); UTC for any date the server makes */
	static const char *const own[] = { "client_min_messages", "warning", "TimeZone", "UTC", NULL };
	append_settings(options, own);
	append_settings(options, settings);
	static const char *const fixed[][2] = {
		{ "client_encoding", "UTF8" },
		{ "fallback_application_name", "photoidx" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(fixed); i++) {
		g_ptr_array_add(keys, (char *)fixed[i][0]);
		g_ptr_array_add(values, (char *)fixed[i][1]);
	}
	g_ptr_array_add(keys, "options");
	g_ptr_array_add(values, options->str);
	g_ptr_array_add(keys, NULL);
	g_ptr_array_add(values, NULL);
	PGconn *conn = PQconnectdbParams((const char *const *)keys->pdata, (const char *const *)values->pdata, 0);
	PQconninfoFree(given);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK || PQenterPipelineMode(conn) != 1) {
		*message = g_strchomp(g_strdup(conn != NULL ? PQerrorMessage(conn) : "out of memory"));
		PQfinish(conn);
		return NULL;
	}
	PixPgConn *c = g_new0(PixPgConn, 1);
	c->conn = conn;
	c->expect = g_array_new(FALSE, FALSE, sizeof(Expect));
	c->to_close = g_ptr_array_new_with_free_func(g_free);
	c->blocks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, id_block_free);
	c->copies = g_ptr_array_new();
	PixDb *db = g_new0(PixDb, 1);
	db->pg = c;
	return db;
}

const char *pix_pg_server_setting(PixPgConn *c, const char *name)
{
	return PQparameterStatus(c->conn, name);
}

void pix_db_pg_close(PixPgConn *c)
{
	g_hash_table_destroy(c->blocks);     /* their statements, first */
	PQfinish(c->conn);
	g_array_free(c->expect, TRUE);
	g_ptr_array_free(c->to_close, TRUE);
	g_ptr_array_free(c->copies, TRUE);
	g_free(c->errmsg);
	g_free(c);
}

int pix_pg_in_transaction(PixPgConn *c)
{
	return c->in_tx;
}

/* Invariants 4 and 5 (pager.c's assert_pager_state() is the model). */
static gboolean conn_check(const PixPgConn *c)
{
	if (c == NULL || c->conn == NULL)
		return FALSE;
	if (PQstatus(c->conn) == CONNECTION_BAD)
		return TRUE;    /* LOST: whatever was pending is gone with it */
	gsize kept = 0;
	for (guint i = 0; i < c->copies->len; i++)
		kept += ((const PixPgStmt *)g_ptr_array_index(c->copies, i))->copy_rows->len;
	return PQpipelineStatus(c->conn) == PQ_PIPELINE_ON && kept == c->copy_bytes &&
	       c->expect->len == c->n_deferred + (c->unanswered != NULL ? 2 : 0) && c->n_deferred <= PENDING_MAX &&
	       (c->in_tx || (c->n_deferred == 0 && c->copy_bytes == 0));
}

static void expect(PixPgConn *c, Want want, PixPgStmt *st)
{
	Expect e = { want, st };
	g_array_append_val(c->expect, e);
}

static void take_result(PixPgConn *c, const Expect *e, PGresult *r, gboolean *has_error)
{
	ExecStatusType status = PQresultStatus(r);
	if (status == PGRES_FATAL_ERROR || status == PGRES_NONFATAL_ERROR || status == PGRES_BAD_RESPONSE) {
		if (e->want != WANT_NOTHING && !*has_error) {
			set_error(c, PQresultErrorMessage(r), PQresultErrorField(r, PG_DIAG_SQLSTATE));
			*has_error = TRUE;
		}
		if (e->st != NULL)
			e->st->has_failed = TRUE;
		PQclear(r);
		return;
	}
	if (status == PGRES_PIPELINE_ABORTED) {
		if (e->st != NULL)
			e->st->has_failed = TRUE;
		PQclear(r);
		return;
	}
	switch (e->want) {
	case WANT_DESCRIBE: {
		PixPgStmt *st = e->st;
		if (st == NULL)
			break;
		st->n_params = PQnparams(r);
		st->types = g_new0(Oid, st->n_params);
		st->values = g_new0(GByteArray *, st->n_params);
		st->formats = g_new0(int, st->n_params);
		for (int i = 0; i < st->n_params; i++) {
			st->types[i] = PQparamtype(r, i);
			st->formats[i] = st->types[i] == OID_BYTEA;
		}
		st->n_fields = PQnfields(r);
		st->is_described = TRUE;
		break;
	}
	case WANT_RESULT:
		c->changes = g_ascii_strtoll(PQcmdTuples(r), NULL, 10);
		if (e->st != NULL && e->st->res == NULL) {
			e->st->res = r;
			return;
		}
		break;
	case WANT_DEFERRED:
		c->changes = g_ascii_strtoll(PQcmdTuples(r), NULL, 10);
		break;
	default:
		break;
	}
	PQclear(r);
}

/* c->unanswered's answers are read (invariant 6) */
static void answered(PixPgConn *c)
{
	PixPgStmt *st = g_steal_pointer(&c->unanswered);
	if (st != NULL && st->is_described && st->decoded == NULL)
		st->decoded = g_new0(GByteArray *, st->n_fields);
}

/* Every result sent for is read, or lost with the connection */
static void forget_expected(PixPgConn *c)
{
	g_array_set_size(c->expect, 0);
	c->n_deferred = 0;
	answered(c);
}

/* Sends a Sync and reads every result up to it (invariant 1). */
static int round_trip(PixPgConn *c)
{
	gboolean has_error = FALSE;
	for (guint i = 0; i < c->to_close->len; i++) {
		g_autofree char *sql = g_strdup_printf("DEALLOCATE %s", (char *)g_ptr_array_index(c->to_close, i));
		if (PQsendQueryParams(c->conn, sql, 0, NULL, NULL, NULL, NULL, 0) != 1) {
			forget_expected(c);
			return conn_failed(c);
		}
		expect(c, WANT_NOTHING, NULL);
	}
	g_ptr_array_set_size(c->to_close, 0);
	if (PQpipelineSync(c->conn) != 1) {
		forget_expected(c);
		return conn_failed(c);
	}
	for (guint i = 0; i < c->expect->len; i++) {
		const Expect *e = &g_array_index(c->expect, Expect, i);
		PGresult *r;
		while ((r = PQgetResult(c->conn)) != NULL) {
			if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
				/* the connection lost results on the way */
				PQclear(r);
				forget_expected(c);
				return has_error ? code_of(c->sqlstate) : conn_failed(c);
			}
			take_result(c, e, r, &has_error);
		}
		if (PQstatus(c->conn) == CONNECTION_BAD) {
			forget_expected(c);
			return conn_failed(c);
		}
	}
	forget_expected(c);
	PGresult *r = PQgetResult(c->conn);
	gboolean is_synced = r != NULL && PQresultStatus(r) == PGRES_PIPELINE_SYNC;
	PQclear(r);
	if (!is_synced)
		return conn_failed(c);
	/* in pipeline mode libpq may still say ACTIVE here: then the
	 * statements' own effect (pix_pg_step) is what is known */
	PGTransactionStatusType ts = PQtransactionStatus(c->conn);
	if (ts == PQTRANS_IDLE || ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR)
		c->in_tx = ts != PQTRANS_IDLE;
	return has_error ? code_of(c->sqlstate) : PIX_DB_OK;
}

/* COPY one statement's kept rows (outside pipeline mode). */
static int copy_rows(PixPgConn *c, PixPgStmt *st)
{
	PGresult *r = PQexec(c->conn, st->copy_sql);
	gboolean is_in = PQresultStatus(r) == PGRES_COPY_IN;
	if (!is_in)
		set_error(c, PQresultErrorMessage(r), PQresultErrorField(r, PG_DIAG_SQLSTATE));
	PQclear(r);
	if (!is_in)
		return code_of(c->sqlstate);
	if (PQputCopyData(c->conn, st->copy_rows->str, (int)st->copy_rows->len) != 1 ||
	    PQputCopyEnd(c->conn, NULL) != 1)
		return conn_failed(c);
	int rc = PIX_DB_OK;
	while ((r = PQgetResult(c->conn)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK && rc == PIX_DB_OK) {
			set_error(c, PQresultErrorMessage(r), PQresultErrorField(r, PG_DIAG_SQLSTATE));
			rc = code_of(c->sqlstate);
		}
		PQclear(r);
	}
	return rc;
}

/* Sends the rows kept for COPY (invariant 4); the first failure fails
 * it, and the transaction is then aborted. */
static int flush_copies(PixPgConn *c)
{
	if (c->copy_bytes == 0)
		return PIX_DB_OK;
	c->copy_bytes = 0;
	int rc = c->expect->len > 0 || c->to_close->len > 0 ? round_trip(c) : PIX_DB_OK;
	if (rc == PIX_DB_OK && PQexitPipelineMode(c->conn) != 1)
		rc = conn_failed(c);
	for (guint i = 0; i < c->copies->len; i++) {
		PixPgStmt *st = g_ptr_array_index(c->copies, i);
		if (st->copy_rows->len == 0)
			continue;
		if (rc == PIX_DB_OK)
			rc = copy_rows(c, st);
		g_string_truncate(st->copy_rows, 0);
	}
	if (PQpipelineStatus(c->conn) == PQ_PIPELINE_OFF && PQenterPipelineMode(c->conn) != 1 && rc == PIX_DB_OK)
		rc = conn_failed(c);
	return rc;
}

gint64 pix_pg_changes(PixPgConn *c)
{
	if (c->n_deferred > 0 && round_trip(c) != PIX_DB_OK)
		return -1;
	return c->changes;
}

int pix_pg_exec(PixPgConn *c, const char *sql)
{
	g_assert(conn_check(c));
	int rc = flush_copies(c);
	if (rc == PIX_DB_OK && (c->expect->len > 0 || c->to_close->len > 0))
		rc = round_trip(c);
	if (rc != PIX_DB_OK)
		return rc;
	/* several statements in one text need the simple protocol */
	if (PQexitPipelineMode(c->conn) != 1)
		return conn_failed(c);
	PGresult *r = PQexec(c->conn, sql);
	ExecStatusType status = PQresultStatus(r);
	rc = PIX_DB_OK;
	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY) {
		set_error(c, PQresultErrorMessage(r), PQresultErrorField(r, PG_DIAG_SQLSTATE));
		rc = code_of(c->sqlstate);
		if (r == NULL)
			rc = conn_failed(c);
	} else {
		c->changes = g_ascii_strtoll(PQcmdTuples(r), NULL, 10);
	}
	PQclear(r);
	PGTransactionStatusType ts = PQtransactionStatus(c->conn);
	c->in_tx = ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR;
	if (PQenterPipelineMode(c->conn) != 1)
		return conn_failed(c);
	return rc;
}

/* --- SQL --- */

/* A plain INSERT (sql.h) can go by COPY: st->copy_sql and the parameter
 * of each column. */
static void plan_copy(PixPgStmt *st, const char *sql)
{
	PixSqlInsert ins;
	if (st->n_fields != 0 || !pix_sql_plain_insert(sql, &ins))
		return;
	for (int i = 0; i < ins.n_columns; i++)
		if (ins.params[i] > st->n_params) {
			pix_sql_insert_clear(&ins);
			return;
		}
	st->copy_param = g_new(int, ins.n_columns);
	for (int i = 0; i < ins.n_columns; i++)
		st->copy_param[i] = ins.params[i] - 1;
	st->n_copy_cols = ins.n_columns;
	st->copy_sql = g_strdup_printf("COPY %s (%s) FROM STDIN", ins.table, ins.columns);
	st->copy_rows = g_string_new(NULL);
	pix_sql_insert_clear(&ins);
}

/* Appends the bound row to st->copy_rows, in COPY's text format. */
static void keep_row(PixPgStmt *st)
{
	static const char hex[] = "0123456789abcdef";
	GString *out = st->copy_rows;
	for (int i = 0; i < st->n_copy_cols; i++) {
		int k = st->copy_param[i];
		GByteArray *v = st->values[k];
		if (i > 0)
			g_string_append_c(out, '\t');
		if (v == NULL) {
			g_string_append(out, "\\N");
		} else if (st->types[k] == OID_BYTEA) {
			g_string_append(out, "\\\\x");
			for (guint j = 0; j < v->len; j++) {
				g_string_append_c(out, hex[v->data[j] >> 4]);
				g_string_append_c(out, hex[v->data[j] & 15]);
			}
		} else {
			/* the other types' text, NUL-terminated by put_text/put_bytes */
			for (guint j = 0; j + 1 < v->len; j++) {
				char ch = (char)v->data[j];
				switch (ch) {
				case '\\': g_string_append(out, "\\\\"); break;
				case '\t': g_string_append(out, "\\t"); break;
				case '\n': g_string_append(out, "\\n"); break;
				case '\r': g_string_append(out, "\\r"); break;
				default: g_string_append_c(out, ch);
				}
			}
		}
	}
	g_string_append_c(out, '\n');
}

/* A new statement of `sql`, its Prepare and Describe sent (not waited
 * for); NULL when they cannot be sent (the connection's error set).
 * *n_types: the parameters it has. */
static PixPgStmt *prepare_send(PixPgConn *c, const char *sql, int *n_types_out)
{
	PixPgStmt *st = g_new0(PixPgStmt, 1);
	st->c = c;
	st->row = -1;
	guint64 used = 0;
	st->sql = pix_sql_dollar_params(sql, &used);
	g_snprintf(st->name, sizeof st->name, "p%u", ++c->next_name);
	const char *p = st->sql;
	while (g_ascii_isspace(*p))
		p++;
	if (g_ascii_strncasecmp(p, "BEGIN", 5) == 0)
		st->tx_effect = 1;
	else if (g_ascii_strncasecmp(p, "COMMIT", 6) == 0 || g_ascii_strncasecmp(p, "ROLLBACK", 8) == 0)
		st->tx_effect = -1;
	/* a number the text skips (SQLite allows it) must have a type here:
	 * text, bound to nothing */
	Oid types[PIX_SQL_USED_MAX + 1] = { 0 };
	int n_types = 0;
	for (int n = 1; n <= PIX_SQL_USED_MAX; n++)
		if (used >> n == 0)
			break;
		else if (!(used >> n & 1))
			types[n - 1] = 25, n_types = n;
	for (int n = n_types + 1; n <= PIX_SQL_USED_MAX && used >> n; n++)
		n_types = n;
	if (PQsendPrepare(c->conn, st->name, st->sql, n_types, n_types > 0 ? types : NULL) != 1 ||
	    PQsendDescribePrepared(c->conn, st->name) != 1) {
		conn_failed(c);
		pix_pg_finalize(st);
		return NULL;
	}
	expect(c, WANT_PREPARE, st);
	expect(c, WANT_DESCRIBE, st);
	*n_types_out = n_types;
	return st;
}

/* After the round trip that answered prepare_send(): the statement, or
 * NULL (finalized) when the server refused it. */
static PixPgStmt *prepare_done(PixPgStmt *st, const char *sql)
{
	if (!st->is_described || st->has_failed) {
		pix_pg_finalize(st);
		return NULL;
	}
	st->decoded = g_new0(GByteArray *, st->n_fields);
	plan_copy(st, sql);
	return st;
}

/* Reads c->unanswered's answers, if any (invariant 6). */
static int settle(PixPgConn *c)
{
	return c->unanswered != NULL ? round_trip(c) : PIX_DB_OK;
}

int pix_pg_prepare(PixPgConn *c, const char *sql, PixPgStmt **out)
{
	g_assert(conn_check(c));
	*out = NULL;
	int rc = settle(c);
	if (rc == PIX_DB_OK)
		rc = flush_copies(c);
	if (rc != PIX_DB_OK)
		return rc;
	int n_params;
	PixPgStmt *st = prepare_send(c, sql, &n_params);
	if (st == NULL)
		return PIX_DB_ERROR;
	if (n_params == 0) {
		/* its answers come with its first step's (invariant 6) */
		c->unanswered = st;
		*out = st;
		return PIX_DB_OK;
	}
	rc = round_trip(c);
	*out = prepare_done(st, sql);
	return rc == PIX_DB_OK && *out == NULL ? PIX_DB_ERROR : rc;
}

/* Statements whose Prepare and Describe share one round trip: their
 * answers (the parameters' and columns' descriptions, some hundred bytes
 * each) must fit the socket's buffer while the client sends (PENDING_MAX) */
#define PREPARE_AT_ONCE 32

int pix_pg_prepare_many(PixPgConn *c, const char *const *sqls, int n, PixPgStmt **outs, int *failed)
{
	g_assert(conn_check(c));
	memset(outs, 0, sizeof *outs * (gsize)n);
	*failed = -1;
	int rc = settle(c);
	if (rc == PIX_DB_OK)
		rc = flush_copies(c);
	for (int first = 0; rc == PIX_DB_OK && first < n; first += PREPARE_AT_ONCE) {
		int end = MIN(n, first + PREPARE_AT_ONCE);
		int n_params;
		for (int i = first; i < end && rc == PIX_DB_OK; i++)
			if ((outs[i] = prepare_send(c, sqls[i], &n_params)) == NULL)
				rc = PIX_DB_ERROR;
		/* always: it reads, or drops, what was sent (invariant 1) */
		int trip = round_trip(c);
		if (rc == PIX_DB_OK)
			rc = trip;
		for (int i = first; i < end; i++) {
			if (outs[i] != NULL)
				outs[i] = prepare_done(outs[i], sqls[i]);
			if (outs[i] == NULL && *failed < 0) {
				*failed = i;
				if (rc == PIX_DB_OK)
					rc = PIX_DB_ERROR;
			}
		}
	}
	if (rc != PIX_DB_OK)
		for (int i = 0; i < n; i++)
			g_clear_pointer(&outs[i], pix_pg_finalize);
	return rc;
}

static void clear_row(PixPgStmt *st)
{
	for (int i = 0; st->decoded != NULL && i < st->n_fields; i++)
		g_clear_pointer(&st->decoded[i], g_byte_array_unref);
}

int pix_pg_reset(PixPgStmt *st)
{
	clear_row(st);
	g_clear_pointer(&st->res, PQclear);
	st->row = -1;
	st->is_done = FALSE;
	st->has_failed = FALSE;
	return PIX_DB_OK;
}

void pix_pg_finalize(PixPgStmt *st)
{
	if (st == NULL)
		return;
	/* its kept rows go now (an error then shows at the next statement) */
	if (st->copy_rows != NULL && st->copy_rows->len > 0)
		flush_copies(st->c);
	if (st->is_copy_listed)
		g_ptr_array_remove(st->c->copies, st);
	if (st->c->unanswered == st)
		settle(st->c);
	pix_pg_reset(st);
	/* a result still expected names it: the round trip must not see it freed */
	for (guint i = 0; i < st->c->expect->len; i++) {
		Expect *e = &g_array_index(st->c->expect, Expect, i);
		if (e->st == st)
			e->st = NULL;
	}
	if (st->is_described)
		g_ptr_array_add(st->c->to_close, g_strdup(st->name));
	for (int i = 0; i < st->n_params; i++)
		if (st->values[i] != NULL)
			g_byte_array_unref(st->values[i]);
	g_free(st->values);
	g_free(st->types);
	g_free(st->formats);
	g_free(st->decoded);
	g_free(st->sql);
	g_free(st->copy_sql);
	g_free(st->copy_param);
	if (st->copy_rows != NULL)
		g_string_free(st->copy_rows, TRUE);
	g_free(st);
}

int pix_pg_clear_bindings(PixPgStmt *st)
{
	for (int i = 0; i < st->n_params; i++)
		g_clear_pointer(&st->values[i], g_byte_array_unref);
	return PIX_DB_OK;
}

static GByteArray *param(PixPgStmt *st, int i)
{
	if (i < 1 || i > st->n_params)
		return NULL;
	if (st->values[i - 1] == NULL)
		st->values[i - 1] = g_byte_array_new();
	g_byte_array_set_size(st->values[i - 1], 0);
	return st->values[i - 1];
}

static int put_text(PixPgStmt *st, int i, const char *text)
{
	GByteArray *v = param(st, i);
	if (v == NULL)
		return PIX_DB_RANGE;
	g_byte_array_append(v, (const guint8 *)text, strlen(text) + 1);
	return PIX_DB_OK;
}

int pix_pg_bind_int64(PixPgStmt *st, int i, gint64 n)
{
	if (i >= 1 && i <= st->n_params && st->types[i - 1] == OID_BOOL)
		return put_text(st, i, n != 0 ? "t" : "f");
	char buf[32];
	g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, n);
	return put_text(st, i, buf);
}

int pix_pg_bind_double(PixPgStmt *st, int i, double d)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	if (isnan(d))
		return put_text(st, i, "NaN");
	if (isinf(d))
		return put_text(st, i, d > 0 ? "Infinity" : "-Infinity");
	return put_text(st, i, g_ascii_dtostr(buf, sizeof buf, d));
}

int pix_pg_bind_null(PixPgStmt *st, int i)
{
	if (i < 1 || i > st->n_params)
		return PIX_DB_RANGE;
	g_clear_pointer(&st->values[i - 1], g_byte_array_unref);
	return PIX_DB_OK;
}

/* bytea parameters go as their bytes (binary format), any other as text */
static int put_bytes(PixPgStmt *st, int i, const void *bytes, int n)
{
	if (bytes == NULL)
		return pix_pg_bind_null(st, i);
	GByteArray *v = param(st, i);
	if (v == NULL)
		return PIX_DB_RANGE;
	g_byte_array_append(v, bytes, (guint)n);
	if (st->types[i - 1] != OID_BYTEA)
		g_byte_array_append(v, (const guint8 *)"", 1);
	return PIX_DB_OK;
}

int pix_pg_bind_text(PixPgStmt *st, int i, const char *text, int n)
{
	return put_bytes(st, i, text, text == NULL ? 0 : n < 0 ? (int)strlen(text) : n);
}

int pix_pg_bind_blob(PixPgStmt *st, int i, const void *blob, int n)
{
	return put_bytes(st, i, blob != NULL ? blob : "", n);
}

/* Steps `st`; is_unread: its rows are not read (pix_pg_run()). */
static int step(PixPgStmt *st, gboolean is_unread)
{
	PixPgConn *c = st->c;
	g_assert(conn_check(c));
	if (st->res != NULL) {
		clear_row(st);
		return ++st->row < PQntuples(st->res) ? PIX_DB_ROW : PIX_DB_DONE;
	}
	if (st->is_done)        /* as SQLite: a failed statement fails again until reset */
		return st->has_failed ? code_of(c->sqlstate) : PIX_DB_DONE;
	if (st->copy_sql != NULL && c->in_tx) {
		if (!st->is_copy_listed) {
			g_ptr_array_add(c->copies, st);
			st->is_copy_listed = TRUE;
		}
		gsize before = st->copy_rows->len;
		keep_row(st);
		c->copy_bytes += st->copy_rows->len - before;
		c->changes = 1;
		st->is_done = TRUE;
		int rc = c->copy_bytes >= COPY_MAX ? flush_copies(c) : PIX_DB_OK;
		return rc == PIX_DB_OK ? PIX_DB_DONE : rc;
	}
	int frc = flush_copies(c);
	if (frc == PIX_DB_OK && c->unanswered != st)
		frc = settle(c);
	if (frc != PIX_DB_OK)
		return frc;
	/* sent with its Prepare and Describe: it waits, whatever it returns */
	gboolean is_unanswered = c->unanswered == st;
	if (!st->is_described && !is_unanswered)     /* its Prepare failed */
		return code_of(c->sqlstate);
	const char *values[st->n_params > 0 ? st->n_params : 1];
	int lengths[st->n_params > 0 ? st->n_params : 1];
	for (int i = 0; i < st->n_params; i++) {
		values[i] = st->values[i] != NULL ? (const char *)st->values[i]->data : NULL;
		lengths[i] = st->values[i] != NULL ? (int)st->values[i]->len : 0;
		/* an empty bytea still needs a pointer */
		if (st->values[i] != NULL && values[i] == NULL)
			values[i] = "";
	}
	if (PQsendQueryPrepared(c->conn, st->name, st->n_params, values, lengths, st->formats, 0) != 1)
		return conn_failed(c);
	st->is_done = TRUE;
	/* a BEGIN opens the transaction with what follows it */
	gboolean is_begin = st->tx_effect > 0 && !c->in_tx;
	if (!is_unanswered && (is_begin || (c->in_tx && st->tx_effect == 0 && (st->n_fields == 0 || is_unread)))) {
		c->in_tx = TRUE;
		expect(c, WANT_DEFERRED, st);
		int rc = ++c->n_deferred >= PENDING_MAX ? round_trip(c) : PIX_DB_OK;
		return rc == PIX_DB_OK ? PIX_DB_DONE : rc;
	}
	expect(c, WANT_RESULT, st);
	int rc = round_trip(c);
	if (st->tx_effect != 0)     /* a failed COMMIT ends the transaction too */
		c->in_tx = st->tx_effect > 0 && rc == PIX_DB_OK;
	if (rc != PIX_DB_OK)
		return rc;
	if (st->has_failed)
		return code_of(c->sqlstate);
	if (st->res == NULL)
		return PIX_DB_DONE;
	st->row = 0;
	return PQntuples(st->res) > 0 ? PIX_DB_ROW : PIX_DB_DONE;
}

int pix_pg_step(PixPgStmt *st)
{
	return step(st, FALSE);
}

int pix_pg_run(PixPgStmt *st)
{
	int rc = step(st, TRUE);
	while (rc == PIX_DB_ROW)
		rc = step(st, TRUE);
	return rc;
}

/* --- columns --- */

static GByteArray *decoded(PixPgStmt *st, int i);

static gboolean has_value(PixPgStmt *st, int i)
{
	return st->res != NULL && st->row >= 0 && st->row < PQntuples(st->res) && i >= 0 && i < PQnfields(st->res) &&
	       !PQgetisnull(st->res, st->row, i);
}

int pix_pg_column_count(PixPgStmt *st)
{
	if (st->c->unanswered == st)
		settle(st->c);
	return st->n_fields;
}

int pix_pg_column_type(PixPgStmt *st, int i)
{
	if (!has_value(st, i))
		return PIX_DB_NULL;
	switch (PQftype(st->res, i)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return PIX_DB_INTEGER;
	case OID_FLOAT4:
	case OID_FLOAT8:
		return PIX_DB_FLOAT;
	case OID_NUMERIC:
		return strchr(PQgetvalue(st->res, st->row, i), '.') ? PIX_DB_FLOAT : PIX_DB_INTEGER;
	case OID_BYTEA: {
		/* paths and names are bytea here; on SQLite they are TEXT when
		 * valid UTF-8, else BLOB, and readers go by that */
		GByteArray *bytes = decoded(st, i);
		return g_utf8_validate((const char *)bytes->data, bytes->len, NULL) ? PIX_DB_TEXT : PIX_DB_BLOB;
	}
	default:
		return PIX_DB_TEXT;
	}
}

gint64 pix_pg_column_int64(PixPgStmt *st, int i)
{
	if (!has_value(st, i))
		return 0;
	const char *v = PQgetvalue(st->res, st->row, i);
	switch (PQftype(st->res, i)) {
	case OID_BOOL:
		return v[0] == 't';
	case OID_FLOAT4:
	case OID_FLOAT8:
		return (gint64)g_ascii_strtod(v, NULL);
	default:
		return g_ascii_strtoll(v, NULL, 10);
	}
}

double pix_pg_column_double(PixPgStmt *st, int i)
{
	if (!has_value(st, i))
		return 0.0;
	const char *v = PQgetvalue(st->res, st->row, i);
	return PQftype(st->res, i) == OID_BOOL ? v[0] == 't' : g_ascii_strtod(v, NULL);
}

static int hex_value(char ch)
{
	return g_ascii_xdigit_value(ch);
}

/* The bytes of bytea column i of this row ("\x" and hex digits in text
 * format), NUL-terminated as SQLite's text is. */
static GByteArray *decoded(PixPgStmt *st, int i)
{
	if (st->decoded[i] != NULL)
		return st->decoded[i];
	const char *v = PQgetvalue(st->res, st->row, i);
	int len = PQgetlength(st->res, st->row, i);
	GByteArray *out = g_byte_array_sized_new((guint)(len / 2 + 1));
	if (len >= 2 && v[0] == '\\' && v[1] == 'x') {
		for (int k = 2; k + 1 < len; k += 2) {
			guint8 byte = (guint8)(hex_value(v[k]) << 4 | hex_value(v[k + 1]));
			g_byte_array_append(out, &byte, 1);
		}
	} else {
		size_t n;
		unsigned char *raw = PQunescapeBytea((const unsigned char *)v, &n);
		if (raw != NULL)
			g_byte_array_append(out, raw, (guint)n);
		PQfreemem(raw);
	}
	g_byte_array_append(out, (const guint8 *)"", 1);
	g_byte_array_set_size(out, out->len - 1);
	out->data[out->len] = 0;    /* allocated above: the NUL stays past len */
	st->decoded[i] = out;
	return out;
}

const unsigned char *pix_pg_column_text(PixPgStmt *st, int i)
{
	if (!has_value(st, i))
		return NULL;
	if (PQftype(st->res, i) == OID_BYTEA)
		return decoded(st, i)->data;
	return (const unsigned char *)PQgetvalue(st->res, st->row, i);
}

const void *pix_pg_column_blob(PixPgStmt *st, int i)
{
	return pix_pg_column_text(st, i);
}

int pix_pg_column_bytes(PixPgStmt *st, int i)
{
	if (!has_value(st, i))
		return 0;
	if (PQftype(st->res, i) == OID_BYTEA)
		return (int)decoded(st, i)->len;
	return PQgetlength(st->res, st->row, i);
}

/* --- ids --- */

gint64 pix_pg_reserve_id(PixPgConn *c, const char *table)
{
	IdBlock *b = g_hash_table_lookup(c->blocks, table);
	if (b == NULL) {
		b = g_new0(IdBlock, 1);
		b->size = ID_BLOCK;
		g_hash_table_insert(c->blocks, g_strdup(table), b);
	}
	if (b->next < b->n)
		return b->ids[b->next++];
	/* the sequence looked up once per block, not per id (perf: a tenth of
	 * the server's time in an import); the size in the text, so that a
	 * block of a new size costs one round trip, as one of the last size
	 * does (invariant 6) */
	if (b->take == NULL || b->take_size != b->size) {
		g_clear_pointer(&b->take, pix_pg_finalize);
		g_autofree char *sql = g_strdup_printf("WITH s AS MATERIALIZED (SELECT pg_get_serial_sequence('%s', 'id')"
		                                       "::regclass AS seq) SELECT nextval(s.seq) FROM s,"
		                                       " generate_series(1, %u)", table, b->size);
		if (pix_pg_prepare(c, sql, &b->take) != PIX_DB_OK)
			return 0;
		b->take_size = b->size;
	}
	PixPgStmt *st = b->take;
	pix_pg_reset(st);
	g_free(b->ids);
	b->ids = g_new(gint64, b->size);
	b->n = b->next = 0;
	int rc;
	while ((rc = pix_pg_step(st)) == PIX_DB_ROW)
		if (b->n < b->size)
			b->ids[b->n++] = pix_pg_column_int64(st, 0);
	pix_pg_reset(st);
	b->size = MIN(b->size * 2, ID_BLOCK_MAX);
	if (rc != PIX_DB_DONE || b->n == 0)
		return 0;
	return b->ids[b->next++];
}

/*
 * sql.h: what the catalog's connections need to know of a statement's
 * text, read by one small lexer (sql.c), never by pattern rewriting: its
 * parameters, and whether it is a plain INSERT whose rows can be kept and
 * written together (db.h).
 *
 * The store writes its SQL once, in the part of the language SQLite
 * (3.39 and later) and PostgreSQL both accept, with numbered parameters
 * (?1, ?2, or a bare ? numbered on from the largest before it, as SQLite
 * does).  Only the parameters' spelling differs: PostgreSQL's is $1.
 *
 * The lexer knows string literals ('...', with '' inside; E'...' with
 * backslash escapes), quoted identifiers ("..."), comments (-- to the end
 * of the line, and block comments), and takes nothing in them for a
 * parameter.
 *
 * Thread-safety: pure functions.
 */
#ifndef PIX_SQL_H
#define PIX_SQL_H

#include <glib.h>

/* The largest parameter number PostgreSQL's parameter types are tracked
 * for (pix_sql_dollar_params()'s *used). */
#define PIX_SQL_USED_MAX 63

/*
 * `sql` with each parameter as $N (transfer full).  *used: bit n set for
 * every $n the text names, n <= PIX_SQL_USED_MAX.
 */
char *pix_sql_dollar_params(const char *sql, guint64 *used);

/* A plain INSERT: "INSERT INTO table (c1, c2, ...) VALUES (?i, ?j, ...)",
 * the values parameters only, one per column, nothing after them. */
typedef struct {
	char *table;            /* (owned) */
	char *columns;          /* "c1, c2, ..." (owned) */
	int n_columns;
	int *params;            /* per column, its parameter's number (1..)
	                           (owned) */
} PixSqlInsert;

/* Whether `sql` is a plain INSERT; if so, *out is filled (free it with
 * pix_sql_insert_clear()), else *out is left zeroed. */
gboolean pix_sql_plain_insert(const char *sql, PixSqlInsert *out);
void pix_sql_insert_clear(PixSqlInsert *ins);

#endif

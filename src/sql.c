/*
 * sql.c: the lexer of sql.h, and the two things read with it: the
 * parameters (renumbered as $N for PostgreSQL) and the plain INSERT (kept
 * rows on SQLite, COPY on PostgreSQL).
 *
 * Reads only the text it is given; called by db.c and db-pg.c when a
 * statement is prepared, from the thread that owns the connection.
 *
 * Invariants:
 *  1. A token never starts inside a literal, a quoted identifier or a
 *     comment: next_token() consumes each of them whole (an unterminated
 *     one runs to the end of the text, as the servers would refuse it).
 *  2. Text outside parameters is copied byte for byte.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sql.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
	TOK_END,
	TOK_WORD,               /* a keyword or a bare identifier */
	TOK_PARAM,              /* ?N or ? */
	TOK_OTHER,              /* a literal, a quoted identifier, an operator */
	TOK_SPACE,              /* white space or a comment */
} TokKind;

typedef struct {
	TokKind kind;
	const char *start;
	gsize len;
} Token;

static gboolean is_word_char(char ch)
{
	return g_ascii_isalnum(ch) || ch == '_';
}

/* The end of the quoted text that starts at p (at its quote). */
static const char *skip_quoted(const char *p, gboolean has_backslash_escapes)
{
	char quote = *p++;
	for (; *p != '\0'; p++) {
		if (has_backslash_escapes && *p == '\\' && p[1] != '\0')
			p++;
		else if (*p == quote && p[1] == quote)
			p++;            /* '' inside '...' */
		else if (*p == quote)
			return p + 1;
	}
	return p;
}

static Token next_token(const char *p)
{
	Token t = { TOK_OTHER, p, 1 };
	const char *end = p + 1;
	if (*p == '\0') {
		t.kind = TOK_END;
		t.len = 0;
		return t;
	}
	if (g_ascii_isspace(*p)) {
		t.kind = TOK_SPACE;
		while (g_ascii_isspace(*end))
			end++;
	} else if (p[0] == '-' && p[1] == '-') {
		t.kind = TOK_SPACE;
		end = p + strcspn(p, "\n");
	} else if (p[0] == '/' && p[1] == '*') {
		t.kind = TOK_SPACE;
		const char *close = strstr(p + 2, "*/");
		end = close != NULL ? close + 2 : p + strlen(p);
	} else if ((p[0] == 'E' || p[0] == 'e') && p[1] == '\'') {
		end = skip_quoted(p + 1, TRUE);
	} else if (*p == '\'' || *p == '"') {
		end = skip_quoted(p, FALSE);
	} else if (*p == '?') {
		t.kind = TOK_PARAM;
		while (g_ascii_isdigit(*end))
			end++;
	} else if (is_word_char(*p)) {
		t.kind = TOK_WORD;
		while (is_word_char(*end))
			end++;
	}
	t.len = (gsize)(end - p);
	return t;
}

/* The next token that is not space or a comment. */
static Token next_solid(const char **p)
{
	for (;;) {
		Token t = next_token(*p);
		*p = t.start + t.len;
		if (t.kind != TOK_SPACE)
			return t;
	}
}

/* A parameter's number; *n_max: the largest so far (a bare ? is the
 * next after it). */
static long param_number(const Token *t, long *n_max)
{
	long n = t->len > 1 ? strtol(t->start + 1, NULL, 10) : *n_max + 1;
	if (n > *n_max)
		*n_max = n;
	return n;
}

char *pix_sql_dollar_params(const char *sql, guint64 *used)
{
	GString *out = g_string_sized_new(strlen(sql) + 16);
	long n_max = 0;
	*used = 0;
	for (const char *p = sql;;) {
		Token t = next_token(p);
		if (t.kind == TOK_END)
			break;
		p = t.start + t.len;
		if (t.kind != TOK_PARAM) {
			g_string_append_len(out, t.start, (gssize)t.len);
			continue;
		}
		long n = param_number(&t, &n_max);
		g_string_append_printf(out, "$%ld", n);
		if (n > 0 && n <= PIX_SQL_USED_MAX)
			*used |= G_GUINT64_CONSTANT(1) << n;
	}
	return g_string_free(out, FALSE);
}

static gboolean is_word(const Token *t, const char *word)
{
	return t->kind == TOK_WORD && t->len == strlen(word) && g_ascii_strncasecmp(t->start, word, t->len) == 0;
}

static gboolean is_char(const Token *t, char ch)
{
	return t->kind == TOK_OTHER && t->len == 1 && t->start[0] == ch;
}

/*
 * A parenthesised list of tokens of `kind` ("(a, b)"), *p after its "(";
 * their texts or numbers appended to `words` / `numbers`.
 */
static gboolean read_list(const char **p, TokKind kind, GPtrArray *words, GArray *numbers)
{
	long n_max = 0;
	for (;;) {
		Token t = next_solid(p);
		if (t.kind != kind)
			return FALSE;
		if (words != NULL)
			g_ptr_array_add(words, g_strndup(t.start, t.len));
		if (numbers != NULL) {
			int n = (int)param_number(&t, &n_max);
			g_array_append_val(numbers, n);
		}
		Token sep = next_solid(p);
		if (is_char(&sep, ')'))
			return TRUE;
		if (!is_char(&sep, ','))
			return FALSE;
	}
}

gboolean pix_sql_plain_insert(const char *sql, PixSqlInsert *out)
{
	memset(out, 0, sizeof *out);
	const char *p = sql;
	Token t[3];
	for (guint i = 0; i < G_N_ELEMENTS(t); i++)
		t[i] = next_solid(&p);
	if (!is_word(&t[0], "INSERT") || !is_word(&t[1], "INTO") || t[2].kind != TOK_WORD)
		return FALSE;
	Token open = next_solid(&p);
	g_autoptr(GPtrArray) cols = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) params = g_array_new(FALSE, FALSE, sizeof(int));
	if (!is_char(&open, '(') || !read_list(&p, TOK_WORD, cols, NULL))
		return FALSE;
	Token values = next_solid(&p), open_values = next_solid(&p);
	if (!is_word(&values, "VALUES") || !is_char(&open_values, '(') || !read_list(&p, TOK_PARAM, NULL, params))
		return FALSE;
	if (next_solid(&p).kind != TOK_END || params->len != cols->len)
		return FALSE;
	for (guint i = 0; i < params->len; i++)
		if (g_array_index(params, int, i) < 1)
			return FALSE;
	out->table = g_strndup(t[2].start, t[2].len);
	g_ptr_array_add(cols, NULL);
	out->columns = g_strjoinv(", ", (char **)cols->pdata);
	out->n_columns = (int)params->len;
	out->params = (int *)g_array_free(g_steal_pointer(&params), FALSE);
	return TRUE;
}

void pix_sql_insert_clear(PixSqlInsert *ins)
{
	g_clear_pointer(&ins->table, g_free);
	g_clear_pointer(&ins->columns, g_free);
	g_clear_pointer(&ins->params, g_free);
	ins->n_columns = 0;
}

/*
 * test-sql.c: the statement lexer (sql.c): parameters renumbered as $N
 * outside literals, quoted names and comments, and the plain INSERT that
 * keeps its rows (SQLite) or goes by COPY (PostgreSQL).
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"
#include "sql.h"

static void check_params(const char *sql, const char *want, guint64 want_used)
{
	guint64 used = 0xdead;
	g_autofree char *got = pix_sql_dollar_params(sql, &used);
	g_assert_cmpstr(got, ==, want);
	g_assert_cmphex(used, ==, want_used);
}

#define BIT(n) (G_GUINT64_CONSTANT(1) << (n))

static void test_params(void)
{
	check_params("SELECT 1", "SELECT 1", 0);
	check_params("SELECT ?1, ?2 FROM t WHERE a = ?1", "SELECT $1, $2 FROM t WHERE a = $1", BIT(1) | BIT(2));
	/* a bare ? is one more than the largest number before it */
	check_params("VALUES (?3, ?, ?, ?1, ?)", "VALUES ($3, $4, $5, $1, $6)",
	             BIT(1) | BIT(3) | BIT(4) | BIT(5) | BIT(6));
	check_params("SELECT ?, ?", "SELECT $1, $2", BIT(1) | BIT(2));
	/* numbers the text skips are not used */
	check_params("SELECT ?2, ?5", "SELECT $2, $5", BIT(2) | BIT(5));
	/* beyond the tracked bits: renumbered, not marked */
	check_params("SELECT ?64, ?63", "SELECT $64, $63", BIT(63));
}

static void test_params_not_in_literals_or_comments(void)
{
	/* 'a ?' is a string; '' inside it does not end it */
	check_params("SELECT 'a ?', 'it''s ?1' || ?1", "SELECT 'a ?', 'it''s ?1' || $1", BIT(1));
	/* a quoted identifier */
	check_params("SELECT \"odd?name\" FROM t WHERE x = ?", "SELECT \"odd?name\" FROM t WHERE x = $1", BIT(1));
	/* E'' strings have backslash escapes: \' does not end them */
	check_params("SELECT E'a\\' ?', ?2", "SELECT E'a\\' ?', $2", BIT(2));
	/* comments, to the end of the line and in blocks, are copied as they are */
	check_params("SELECT ?1 -- is ?2 here?\n, ?3 /* or ?4 */ FROM t",
	             "SELECT $1 -- is ?2 here?\n, $3 /* or ?4 */ FROM t", BIT(1) | BIT(3));
	/* unterminated: the rest is the literal or the comment */
	check_params("SELECT '?1", "SELECT '?1", 0);
	check_params("SELECT ?1 /* ?2", "SELECT $1 /* ?2", BIT(1));
	/* a word that ends in E before a quote is not an E'' string */
	check_params("SELECT name='?' AND ?1", "SELECT name='?' AND $1", BIT(1));
	/* and nothing else is touched: SQL that both engines accept */
	const char *both = "UPDATE files SET md5 = CASE WHEN md5 IS NOT DISTINCT FROM $8 THEN 1 END";
	check_params("UPDATE files SET md5 = CASE WHEN md5 IS NOT DISTINCT FROM ?8 THEN 1 END", both, BIT(8));
}

static void test_plain_insert(void)
{
	PixSqlInsert ins;
	g_assert_true(pix_sql_plain_insert("INSERT INTO files (id, dir_id, name) VALUES (?3, ?1, ?2)", &ins));
	g_assert_cmpstr(ins.table, ==, "files");
	g_assert_cmpstr(ins.columns, ==, "id, dir_id, name");
	g_assert_cmpint(ins.n_columns, ==, 3);
	g_assert_cmpint(ins.params[0], ==, 3);
	g_assert_cmpint(ins.params[1], ==, 1);
	g_assert_cmpint(ins.params[2], ==, 2);
	pix_sql_insert_clear(&ins);
	g_assert_null(ins.table);

	/* a parameter used twice (changed_at = first_seen_at), spaces,
	 * newlines, comments and lower case */
	g_assert_true(pix_sql_plain_insert("  insert into meta\n(a,b, c) /* x */ values (?1,?2,\t?2) -- end", &ins));
	g_assert_cmpstr(ins.table, ==, "meta");
	g_assert_cmpstr(ins.columns, ==, "a, b, c");
	g_assert_cmpint(ins.params[2], ==, 2);
	pix_sql_insert_clear(&ins);

	/* bare ? are numbered as SQLite numbers them */
	g_assert_true(pix_sql_plain_insert("INSERT INTO t (a, b) VALUES (?, ?)", &ins));
	g_assert_cmpint(ins.params[0], ==, 1);
	g_assert_cmpint(ins.params[1], ==, 2);
	pix_sql_insert_clear(&ins);

	/* not plain: each of these must run as written */
	static const char *const not_plain[] = {
		"INSERT INTO t (a) VALUES (?1) ON CONFLICT DO NOTHING",
		"INSERT INTO t (a) VALUES (?1) RETURNING id",
		"INSERT INTO t (a, b) VALUES (?1, 2)",
		"INSERT INTO t (a, b) VALUES (?1, 'x')",
		"INSERT INTO t (a, b) VALUES (?1)",
		"INSERT INTO t (a) VALUES (?1, ?2)",
		"INSERT INTO t (a) VALUES (?1), (?2)",
		"INSERT INTO t (a) SELECT ?1",
		"INSERT INTO t VALUES (?1)",
		"INSERT INTO t (a) VALUES (coalesce(?1, 0))",
		"INSERT OR IGNORE INTO t (a) VALUES (?1)",
		"INSERT INTO t (\"a\") VALUES (?1)",
		"INSERT INTO t (a) VALUES (?0)",
		"INSERT INTO t (a) VALUES (?1); DELETE FROM t",
		"UPDATE t SET a = ?1",
		"INSERT INTO t (a) VALUES (?1",
		"",
	};
	for (guint i = 0; i < G_N_ELEMENTS(not_plain); i++) {
		g_assert_false(pix_sql_plain_insert(not_plain[i], &ins));
		g_assert_null(ins.table);
		g_assert_null(ins.params);
	}
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/sql/params", test_params);
	g_test_add_func("/sql/params-not-in-literals-or-comments", test_params_not_in_literals_or_comments);
	g_test_add_func("/sql/plain-insert", test_plain_insert);
	return g_test_run();
}

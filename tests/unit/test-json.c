/*
 * test-json.c: the JSON writer (json.c): strings, members with null, and
 * reals that read back as the same double.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"
#include "json.h"

#include <float.h>
#include <math.h>

static void test_reals_round_trip(void)
{
	/* values that 15 significant digits do not give back */
	const double hard[] = { 0.1 + 0.2, 1.0 / 3.0, 48.858370000000001, M_PI, DBL_MAX, DBL_MIN, 5e-324,
		                -123.45678901234567, 9007199254740993.0 };
	for (gsize i = 0; i < G_N_ELEMENTS(hard); i++) {
		g_autoptr(GString) s = g_string_new(NULL);
		pix_json_real(s, hard[i]);
		g_assert_true(g_ascii_strtod(s->str, NULL) == hard[i]);
		g_assert_null(strchr(s->str, ','));     /* C locale, whatever the user's */
	}
	/* and the short ones stay short */
	g_autoptr(GString) s = g_string_new(NULL);
	pix_json_real(s, 0.1);
	g_string_append_c(s, ' ');
	pix_json_real(s, 2.5);
	g_string_append_c(s, ' ');
	pix_json_real(s, 48.85837);
	g_assert_cmpstr(s->str, ==, "0.1 2.5 48.85837");
	/* 0.1 + 0.2 needs 17 */
	g_string_truncate(s, 0);
	pix_json_real(s, 0.1 + 0.2);
	g_assert_cmpstr(s->str, ==, "0.30000000000000004");
}

static void test_members(void)
{
	g_autoptr(GString) s = g_string_new("{");
	gboolean first = TRUE;
	pix_json_str(s, "a", "x\"y\n", &first);
	pix_json_str(s, "b", NULL, &first);
	pix_json_int_or_null(s, "c", 7, TRUE, &first);
	pix_json_int_or_null(s, "d", 7, FALSE, &first);
	pix_json_bool(s, "e", TRUE, &first);
	g_string_append_c(s, '}');
	g_assert_cmpstr(s->str, ==, "{\"a\":\"x\\\"y\\n\",\"b\":null,\"c\":7,\"d\":null,\"e\":true}");
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/json/reals-round-trip", test_reals_round_trip);
	g_test_add_func("/json/members", test_members);
	return g_test_run();
}

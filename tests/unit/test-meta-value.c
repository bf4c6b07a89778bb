/*
 * test-meta-value.c: the value helpers every metadata reader shares
 * (meta-value.c): dates that must be real dates of the calendar, numbers
 * in XMP's and EXIF's forms, camera clocks, and EXIF date ranks.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"
#include "meta-value.h"

#include <math.h>

static void test_dates(void)
{
	static const struct {
		const char *in, *date, *tz;   /* date NULL: refused */
	} cases[] = {
		{ "2004-08-27T13:52:55", "2004-08-27T13:52:55", NULL },
		{ "2004:08:27 13:52:55", "2004-08-27T13:52:55", NULL },
		{ "2004-08-27T13:52", "2004-08-27T13:52:00", NULL },
		{ "2021-07-04T13:45:56.000Z", "2021-07-04T13:45:56.000", "+00:00" },
		{ "2019-05-04T14:23:11.52+0200", "2019-05-04T14:23:11.52", "+02:00" },
		{ "2004-02-29T00:00:00", "2004-02-29T00:00:00", NULL },   /* a leap year */
		{ "2016-12-31T23:59:60", "2016-12-31T23:59:60", NULL },   /* a leap second */
		{ "2005-02-29T12:00:00", NULL, NULL },   /* not a leap year */
		{ "2005-02-30T12:00:00", NULL, NULL },
		{ "2005-04-31T12:00:00", NULL, NULL },
		{ "1900-02-29T12:00:00", NULL, NULL },   /* a century that is not a leap year */
		{ "2024-13-01T12:00:00", NULL, NULL },
		{ "2005-08-03T25:00:00", NULL, NULL },
		{ "2005-08-03T12:60:00", NULL, NULL },
		{ "2005-08-03", NULL, NULL },            /* a date without a time */
		{ "0000:00:00 00:00:00", NULL, NULL },
		{ "1799-12-31T12:00:00", NULL, NULL },
		{ "2005-08-03T12:00:00+15:00", NULL, NULL },
		{ "2005-08-03T12:00:00 junk", NULL, NULL },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *date = NULL, *tz = NULL;
		gboolean ok = pix_meta_parse_date(cases[i].in, &date, &tz);
		g_test_message("%s", cases[i].in);
		g_assert_cmpint(ok, ==, cases[i].date != NULL);
		if (ok) {
			g_assert_cmpstr(date, ==, cases[i].date);
			g_assert_cmpstr(tz, ==, cases[i].tz);
		}
	}
}

static void test_exif_dates(void)
{
	g_autoptr(PixMeta) m = pix_meta_new();
	/* an impossible day is garbage, so the next source is tried */
	g_assert_false(pix_meta_set_exif_date(m, "2005:02:30 10:00:00", NULL, NULL, "DateTimeOriginal"));
	g_assert_null(m->date_taken);
	g_assert_true(pix_meta_set_exif_date(m, "2005:02:28 10:00:00", "25", "+01:00", "CreateDate"));
	g_assert_cmpstr(m->date_taken, ==, "2005-02-28T10:00:00.25");
	g_assert_cmpstr(m->date_tz, ==, "+01:00");
	/* a better source replaces it, with its own offset (none) */
	g_assert_true(pix_meta_set_exif_date(m, "2005:02:27 09:00:00", NULL, NULL, "DateTimeOriginal"));
	g_assert_cmpstr(m->date_taken, ==, "2005-02-27T09:00:00");
	g_assert_null(m->date_tz);
	g_assert_cmpstr(m->date_source, ==, "DateTimeOriginal");
	/* a worse one does not */
	g_assert_true(pix_meta_set_exif_date(m, "2001:01:01 00:00:00", NULL, NULL, "ModifyDate"));
	g_assert_cmpstr(m->date_taken, ==, "2005-02-27T09:00:00");
}

static void test_clock_dates(void)
{
	g_autofree char *a = pix_meta_clock_date(1093614775);
	g_assert_cmpstr(a, ==, "2004-08-27T13:52:55");
	g_assert_null(pix_meta_clock_date(0));
	g_assert_null(pix_meta_clock_date(G_MAXINT64));
}

static void test_numbers(void)
{
	double v;
	gint64 n;
	g_assert_true(pix_meta_parse_rational("28/10", &v) && v == 2.8);
	g_assert_true(pix_meta_parse_rational("-3.25", &v) && v == -3.25);
	g_assert_false(pix_meta_parse_rational("1/0", &v));
	g_assert_false(pix_meta_parse_rational("1e5", &v));
	g_assert_false(pix_meta_parse_rational("inf", &v));
	g_assert_false(pix_meta_parse_rational("", &v));
	g_assert_true(pix_meta_parse_int("8", 1, 8, &n) && n == 8);
	g_assert_false(pix_meta_parse_int("9", 1, 8, &n));
	g_assert_false(pix_meta_parse_int("8x", 1, 8, &n));
	g_assert_cmpint(pix_meta_digits("0427", 4), ==, 427);
	g_assert_cmpint(pix_meta_digits("04a7", 4), ==, -1);
	const double dms[] = { 48, 51, 30 };
	g_assert_true(pix_meta_coordinate(dms, 3, "S", 'S', 90, &v) && fabs(v + 48.858333333) < 1e-6);
	g_assert_false(pix_meta_coordinate(dms, 0, "N", 'S', 90, &v));
	const double far[] = { 200 };
	g_assert_false(pix_meta_coordinate(far, 1, "E", 'W', 180, &v));
}

static void test_text(void)
{
	static const guint8 latin1[] = { 'C', 'a', 'f', 0xe9, ' ', ' ', 0, 'x' };
	g_autofree char *t = pix_meta_text(latin1, sizeof latin1);
	g_assert_cmpstr(t, ==, "Caf\xc3\xa9");
	g_assert_null(pix_meta_text((const guint8 *)"   \0", 4));
	g_autofree char *field = NULL;
	pix_meta_set_string(&field, g_strdup("first"));
	pix_meta_set_string(&field, g_strdup("second"));
	g_assert_cmpstr(field, ==, "first");
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/meta-value/dates", test_dates);
	g_test_add_func("/meta-value/exif-dates", test_exif_dates);
	g_test_add_func("/meta-value/clock-dates", test_clock_dates);
	g_test_add_func("/meta-value/numbers", test_numbers);
	g_test_add_func("/meta-value/text", test_text);
	return g_test_run();
}

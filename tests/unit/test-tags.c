/*
 * test-tags.c: unit tests of src/tags.c, the photographer's metadata of
 * one file as its readers add it and as it is settled: the keyword tree
 * (hierarchies from the best-ranked property, flat keywords merged into
 * it by name, any case), people (MWG over Microsoft, PersonInImage names
 * added), the rating (xmp:Rating, Windows' percentages), texts (first
 * wins, cleaned), and the bounds a hostile file meets (more keywords or
 * levels than kept, regions outside the image, control characters, long
 * texts).  Each expected value is worked out by hand.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tags.h"
#include "testlib.h"

#include <math.h>

static PixTags *finished(PixTags *t)
{
	pix_tags_finish(t);
	g_assert_true(pix_tags_check(t));
	return t;
}

/* The tree as "path*" lines (* marks an assigned level), in order. */
static char *tree(const PixTags *t)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < t->keywords->len; i++) {
		g_autofree char *path = pix_tags_keyword_path(t, i);
		g_string_append_printf(s, "%s%s%s", i > 0 ? "|" : "", path,
		                       g_array_index(t->keywords, PixKeyword, i).is_assigned ? "*" : "");
	}
	return g_string_free(s, FALSE);
}

static void test_lightroom_tree(void)
{
	/* Lightroom: every level in dc:subject, the paths in hierarchicalSubject */
	g_autoptr(PixTags) t = pix_tags_new();
	const char *flat[] = { "Places", "Denmark", "Copenhagen", "sunset", "denmark" };
	for (guint i = 0; i < G_N_ELEMENTS(flat); i++)
		pix_tags_add_flat(t, PIX_TAGS_XMP, flat[i]);
	pix_tags_add_path(t, 0, "Places|Denmark|Copenhagen", '|');
	pix_tags_add_path(t, 0, "places|DENMARK|Aarhus", '|');
	pix_tags_add_path(t, 0, "Places|Denmark|Copenhagen", '|');
	finished(t);
	g_autofree char *got = tree(t);
	g_assert_cmpstr(got, ==, "Places|Places/Denmark|Places/Denmark/Copenhagen*|Places/Denmark/Aarhus*|sunset*");
	g_assert_cmpint(g_array_index(t->keywords, PixKeyword, 2).parent, ==, 1);
	g_assert_cmpint(g_array_index(t->keywords, PixKeyword, 2).depth, ==, 3);
	g_autofree char *lines = pix_tags_keyword_lines(t);
	g_assert_cmpstr(lines, ==, "Places/Denmark/Copenhagen\nPlaces/Denmark/Aarhus\nsunset");
}

static void test_ranks(void)
{
	/* digiKam writes TagsList ('/') and lr:hierarchicalSubject ('|'):
	 * only the best-ranked is read, so a name with a '/' stays whole */
	g_autoptr(PixTags) t = pix_tags_new();
	pix_tags_add_path(t, 1, "Music/AC/DC", '/');
	pix_tags_add_path(t, 0, "Music|AC/DC", '|');
	pix_tags_add_path(t, 3, "Other/Thing", '/');
	finished(t);
	g_autofree char *got = tree(t);
	g_assert_cmpstr(got, ==, "Music|Music/AC/DC*");
	g_assert_cmpstr(g_array_index(t->keywords, PixKeyword, 1).name, ==, "AC/DC");

	/* empty levels and blanks dropped; a path of nothing is no keyword */
	g_autoptr(PixTags) u = pix_tags_new();
	pix_tags_add_path(u, 1, "/Places//  Paris  /", '/');
	pix_tags_add_path(u, 1, " / / ", '/');
	finished(u);
	g_autofree char *got_u = tree(u);
	g_assert_cmpstr(got_u, ==, "Places|Places/Paris*");
}

static void test_flat_sources(void)
{
	/* XMP's dc:subject wins over IPTC's keywords as a whole */
	g_autoptr(PixTags) a = pix_tags_new();
	pix_tags_add_flat(a, PIX_TAGS_IPTC, "from iptc");
	pix_tags_add_flat(a, PIX_TAGS_XMP, "from xmp");
	finished(a);
	g_autofree char *ga = tree(a);
	g_assert_cmpstr(ga, ==, "from xmp*");

	g_autoptr(PixTags) b = pix_tags_new();
	pix_tags_add_flat(b, PIX_TAGS_IPTC, "one");
	pix_tags_add_flat(b, PIX_TAGS_IPTC, "two");
	pix_tags_add_flat(b, PIX_TAGS_IPTC, "one");
	pix_tags_add_flat(b, PIX_TAGS_IPTC, "  ");
	finished(b);
	g_autofree char *gb = tree(b);
	g_assert_cmpstr(gb, ==, "one*|two*");

	/* a flat keyword naming a level of a hierarchy, in another case and
	 * with accents folded as Unicode does: that level, not a new one */
	g_autoptr(PixTags) c = pix_tags_new();
	pix_tags_add_path(c, 0, "Orte|Österreich|Wien", '|');
	pix_tags_add_flat(c, PIX_TAGS_XMP, "österreich");
	pix_tags_add_flat(c, PIX_TAGS_XMP, "WIEN");
	finished(c);
	g_autofree char *gc = tree(c);
	g_assert_cmpstr(gc, ==, "Orte|Orte/Österreich|Orte/Österreich/Wien*");
}

static void test_people(void)
{
	/* MWG regions first; Microsoft's only without them; names of
	 * PersonInImage that no region gives */
	g_autoptr(PixTags) t = pix_tags_new();
	PixPerson mp = { g_strdup("Carol"), NULL, TRUE, 0.1, 0.1, 0.2, 0.2 };
	pix_tags_add_person(t, 1, &mp);
	PixPerson bob = { g_strdup("Bob"), g_strdup("Face"), TRUE, 0.25, 0.5, 0.5, 0.25 };
	pix_tags_add_person(t, 0, &bob);
	PixPerson ada = { g_strdup("Ada"), NULL, FALSE, 0, 0, 0, 0 };
	pix_tags_add_person(t, 2, &ada);
	PixPerson bob2 = { g_strdup("BOB"), NULL, FALSE, 0, 0, 0, 0 };
	pix_tags_add_person(t, 2, &bob2);
	finished(t);
	g_assert_cmpuint(t->people->len, ==, 2);
	const PixPerson *p0 = &g_array_index(t->people, PixPerson, 0), *p1 = &g_array_index(t->people, PixPerson, 1);
	g_assert_cmpstr(p0->name, ==, "Bob");
	g_assert_cmpstr(p0->type, ==, "Face");
	g_assert_true(p0->has_area);
	g_assert_cmpfloat(p0->x, ==, 0.25);
	g_assert_cmpfloat(p0->h, ==, 0.25);
	g_assert_cmpstr(p1->name, ==, "Ada");
	g_assert_false(p1->has_area);
	g_autofree char *lines = pix_tags_people_lines(t);
	g_assert_cmpstr(lines, ==, "Bob\nAda");

	/* Microsoft's when MWG has none */
	g_autoptr(PixTags) u = pix_tags_new();
	PixPerson c2 = { g_strdup("Carol"), NULL, TRUE, 0.1, 0.1, 0.2, 0.2 };
	pix_tags_add_person(u, 1, &c2);
	finished(u);
	g_assert_cmpuint(u->people->len, ==, 1);
	g_assert_cmpstr(g_array_index(u->people, PixPerson, 0).name, ==, "Carol");
}

static void test_areas(void)
{
	g_autoptr(PixTags) t = pix_tags_new();
	/* a rounding's worth over the edges is clamped */
	PixPerson a = { g_strdup("Edge"), NULL, TRUE, -0.004, 0.9, 0.5, 0.105 };
	pix_tags_add_person(t, 0, &a);
	/* negative, huge, empty, not a number: the person kept, no region */
	PixPerson b = { g_strdup("Negative"), NULL, TRUE, -5, 0.1, 0.2, 0.2 };
	PixPerson c = { g_strdup("Huge"), NULL, TRUE, 0.1, 0.1, 1e300, 0.2 };
	PixPerson d = { g_strdup("Empty"), NULL, TRUE, 0.1, 0.1, 0, 0.2 };
	PixPerson e = { g_strdup("NaN"), NULL, TRUE, NAN, 0.1, 0.1, 0.2 };
	PixPerson f = { NULL, g_strdup("Face"), TRUE, 0.1, 0.1, 0.1, 0.1 };   /* no name: not a person */
	pix_tags_add_person(t, 0, &b);
	pix_tags_add_person(t, 0, &c);
	pix_tags_add_person(t, 0, &d);
	pix_tags_add_person(t, 0, &e);
	pix_tags_add_person(t, 0, &f);
	finished(t);
	g_assert_cmpuint(t->people->len, ==, 5);
	const PixPerson *edge = &g_array_index(t->people, PixPerson, 0);
	g_assert_true(edge->has_area);
	g_assert_cmpfloat(edge->x, ==, 0);
	g_assert_cmpfloat_with_epsilon(edge->h, 0.1, 1e-12);
	for (guint i = 1; i < 5; i++)
		g_assert_false(g_array_index(t->people, PixPerson, i).has_area);
	g_assert_nonnull(t->note);
	g_assert_nonnull(strstr(t->note, "'Negative'"));
	g_assert_nonnull(strstr(t->note, "'Huge'"));
}

static void test_rating(void)
{
	g_autoptr(PixTags) t = pix_tags_new();
	g_assert_true(pix_tags_set_rating(t, " 3.0 ", FALSE));
	g_assert_true(pix_tags_set_rating(t, "5", FALSE));    /* the first wins */
	g_assert_false(pix_tags_set_rating(t, "6", FALSE));
	g_assert_false(pix_tags_set_rating(t, "three", FALSE));
	g_assert_false(pix_tags_set_rating(t, "", FALSE));
	finished(t);
	g_assert_cmpint(t->rating, ==, 3);

	g_autoptr(PixTags) r = pix_tags_new();
	g_assert_true(pix_tags_set_rating(r, "-1", FALSE));
	finished(r);
	g_assert_cmpint(r->rating, ==, -1);

	/* Windows' percentages: 1, 25, 50, 75, 99 are one to five stars */
	static const struct { const char *pct; int stars; } w[] = {
		{ "0", 0 }, { "1", 1 }, { "12", 1 }, { "13", 2 }, { "25", 2 }, { "50", 3 }, { "75", 4 }, { "99", 5 },
		{ "100", 5 },
	};
	for (guint i = 0; i < G_N_ELEMENTS(w); i++) {
		g_autoptr(PixTags) p = pix_tags_new();
		g_assert_true(pix_tags_set_rating(p, w[i].pct, TRUE));
		finished(p);
		g_assert_cmpint(p->rating, ==, w[i].stars);
	}
	/* xmp:Rating, when there is one, is the rating */
	g_autoptr(PixTags) both = pix_tags_new();
	pix_tags_set_rating(both, "99", TRUE);
	pix_tags_set_rating(both, "2", FALSE);
	finished(both);
	g_assert_cmpint(both->rating, ==, 2);
	g_autoptr(PixTags) bad = pix_tags_new();
	g_assert_false(pix_tags_set_rating(bad, "101", TRUE));
	g_assert_false(pix_tags_finish(bad));
}

static void test_texts(void)
{
	g_autoptr(PixTags) t = pix_tags_new();
	pix_tags_set_text(&t->title, "  First  ");
	pix_tags_set_text(&t->title, "Second");
	pix_tags_set_text(&t->caption, "line one\r\nline\x01two\ttab\x7f");
	pix_tags_set_text(&t->city, "   ");
	pix_tags_add_creator(t, PIX_TAGS_IPTC, "Iptc Person");
	pix_tags_add_creator(t, PIX_TAGS_XMP, "Ann");
	pix_tags_add_creator(t, PIX_TAGS_XMP, "Ben\nBen");
	pix_tags_add_creator(t, PIX_TAGS_XMP, "Ann");
	finished(t);
	g_assert_cmpstr(t->title, ==, "First");
	g_assert_cmpstr(t->caption, ==, "line one \nline two\ttab");
	g_assert_null(t->city);
	g_assert_cmpstr(t->creator, ==, "Ann; Ben Ben");

	/* a long text is cut at a character, within the bound */
	GString *big = g_string_new(NULL);
	while (big->len < PIX_TAGS_MAX_TEXT + 10)
		g_string_append(big, "é");
	g_autoptr(PixTags) u = pix_tags_new();
	pix_tags_set_text(&u->caption, big->str);
	finished(u);
	g_assert_cmpuint(strlen(u->caption), <=, PIX_TAGS_MAX_TEXT);
	g_assert_true(g_utf8_validate(u->caption, -1, NULL));
	g_string_free(big, TRUE);

	/* nothing given: nothing to keep */
	g_autoptr(PixTags) none = pix_tags_new();
	g_assert_false(pix_tags_finish(none));
}

static void test_bounds(void)
{
	/* more keywords than kept: the first PIX_TAGS_MAX_KEYWORDS, a note */
	g_autoptr(PixTags) t = pix_tags_new();
	for (guint i = 0; i < PIX_TAGS_MAX_KEYWORDS + 50; i++) {
		g_autofree char *path = g_strdup_printf("Group %u|Keyword %u", i % 7, i);
		pix_tags_add_path(t, 0, path, '|');
	}
	finished(t);
	g_assert_cmpuint(t->keywords->len, ==, PIX_TAGS_MAX_KEYWORDS);
	g_assert_nonnull(t->note);

	/* a hierarchy deeper than kept: dropped whole */
	g_autoptr(PixTags) u = pix_tags_new();
	GString *deep = g_string_new("L0");
	for (guint i = 1; i <= PIX_TAGS_MAX_DEPTH; i++)
		g_string_append_printf(deep, "|L%u", i);
	pix_tags_add_path(u, 0, deep->str, '|');
	pix_tags_add_path(u, 0, "Shallow|One", '|');
	finished(u);
	g_autofree char *gu = tree(u);
	g_assert_cmpstr(gu, ==, "Shallow|Shallow/One*");
	g_assert_nonnull(u->note);
	g_string_free(deep, TRUE);

	/* the deepest kept is kept */
	g_autoptr(PixTags) v = pix_tags_new();
	GString *max = g_string_new("L1");
	for (guint i = 2; i <= PIX_TAGS_MAX_DEPTH; i++)
		g_string_append_printf(max, "|L%u", i);
	pix_tags_add_path(v, 0, max->str, '|');
	finished(v);
	g_assert_cmpuint(v->keywords->len, ==, PIX_TAGS_MAX_DEPTH);
	g_assert_cmpint(g_array_index(v->keywords, PixKeyword, PIX_TAGS_MAX_DEPTH - 1).depth, ==, PIX_TAGS_MAX_DEPTH);
	g_string_free(max, TRUE);

	/* more people than kept */
	g_autoptr(PixTags) w = pix_tags_new();
	for (guint i = 0; i < PIX_TAGS_MAX_PEOPLE + 5; i++) {
		PixPerson p = { g_strdup_printf("P%u", i), NULL, FALSE, 0, 0, 0, 0 };
		pix_tags_add_person(w, 0, &p);
	}
	finished(w);
	g_assert_cmpuint(w->people->len, ==, PIX_TAGS_MAX_PEOPLE);
}

static void test_fill(void)
{
	/* what a later place gives fills only what an earlier lacks */
	g_autoptr(PixTags) dst = pix_tags_new();
	g_autoptr(PixTags) src = pix_tags_new();
	pix_tags_set_text(&dst->title, "Main");
	pix_tags_add_flat(dst, PIX_TAGS_XMP, "main");
	pix_tags_set_text(&src->title, "Extended");
	pix_tags_set_text(&src->city, "Lyon");
	pix_tags_add_flat(src, PIX_TAGS_XMP, "extended");
	pix_tags_add_path(src, 0, "A|B", '|');
	pix_tags_set_rating(src, "4", FALSE);
	PixPerson p = { g_strdup("Zoe"), NULL, FALSE, 0, 0, 0, 0 };
	pix_tags_add_person(src, 0, &p);
	pix_tags_fill(dst, src);
	finished(dst);
	g_assert_cmpstr(dst->title, ==, "Main");
	g_assert_cmpstr(dst->city, ==, "Lyon");
	g_assert_cmpint(dst->rating, ==, 4);
	g_autofree char *got = tree(dst);
	g_assert_cmpstr(got, ==, "A|A/B*|main*");
	g_assert_cmpuint(dst->people->len, ==, 1);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/tags/lightroom-tree", test_lightroom_tree);
	g_test_add_func("/tags/ranks", test_ranks);
	g_test_add_func("/tags/flat-sources", test_flat_sources);
	g_test_add_func("/tags/people", test_people);
	g_test_add_func("/tags/areas", test_areas);
	g_test_add_func("/tags/rating", test_rating);
	g_test_add_func("/tags/texts", test_texts);
	g_test_add_func("/tags/bounds", test_bounds);
	g_test_add_func("/tags/fill", test_fill);
	return g_test_run();
}

/*
 * test-similar.c: unit tests of src/similar.h, groups of similar images
 * by the centre rule.
 *
 * The rule against chaining on a bridge; the multi-index against a
 * brute-force grouping (every pair compared) of the same rule on random
 * hashes with planted near ones, at every distance the command takes;
 * weak hashes apart; the best copy's order.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "similar.h"
#include "phash.h"
#include "testlib.h"

/* The members of group k, as "i,j,k". */
static char *members(const PixSimilarGroups *g, guint k)
{
	GString *s = g_string_new(NULL);
	for (guint32 x = g->starts[k]; x < g->starts[k + 1]; x++)
		g_string_append_printf(s, "%s%u", x > g->starts[k] ? "," : "", g->members[x]);
	return g_string_free(s, FALSE);
}

/* All groups, as "a,b;c,d". */
static char *all(const PixSimilarGroups *g)
{
	GString *s = g_string_new(NULL);
	for (guint k = 0; k < g->n_groups; k++) {
		g_autofree char *m = members(g, k);
		g_string_append_printf(s, "%s%s", k > 0 ? ";" : "", m);
	}
	return g_string_free(s, FALSE);
}

static void test_centre_not_chain(void)
{
	/* A and C are 12 bits apart; B, the bridge, 6 from each */
	const guint64 a = 0, b = 0x3f, c = 0xfff;
	g_assert_cmpuint(pix_phash_distance(a, b), ==, 6);
	g_assert_cmpuint(pix_phash_distance(b, c), ==, 6);

	/* A best: A takes B; C, 12 from A, stays alone (a chain A-B-C would
	 * have taken it) */
	const guint64 abc[] = { a, b, c };
	g_autoptr(PixSimilarGroups) g1 = pix_similar_group(abc, NULL, 3, 8);
	g_autofree char *s1 = all(g1);
	g_assert_cmpstr(s1, ==, "0,1");

	/* B best: both are within 8 of it */
	const guint64 bac[] = { b, a, c };
	g_autoptr(PixSimilarGroups) g2 = pix_similar_group(bac, NULL, 3, 8);
	g_autofree char *s2 = all(g2);
	g_assert_cmpstr(s2, ==, "0,1,2");

	/* a long chain, each 2 bits from the last: groups of the centre's
	 * radius only */
	guint64 chain[20];
	for (guint i = 0; i < 20; i++)
		chain[i] = i == 0 ? 0 : chain[i - 1] | ((guint64)3 << (2 * (i - 1)));
	g_autoptr(PixSimilarGroups) g3 = pix_similar_group(chain, NULL, 20, 4);
	g_autofree char *s3 = all(g3);
	g_assert_cmpstr(s3, ==, "0,1,2;3,4,5;6,7,8;9,10,11;12,13,14;15,16,17;18,19");
	g_assert_true(pix_similar_check(g3, chain, NULL, 20, 4));
	/* and the check sees a chained group */
	guint32 bad_members[] = { 0, 1, 2, 3 };
	guint32 bad_starts[] = { 0, 4 };
	PixSimilarGroups bad = { bad_members, bad_starts, 1 };
	g_assert_false(pix_similar_check(&bad, chain, NULL, 20, 4));
}

static void test_weak(void)
{
	/* 0, 2 and 4 are weak and the same rendition; 3 is weak, alone; 1 is
	 * strong with 0's very value; 5 strong, 1 bit from 1 */
	const guint64 h[] = { 0x1234, 0x1234, 0x1234, 0x9999, 0x1234, 0x1235 };
	const guint8 weak[] = { 1, 0, 1, 1, 1, 0 };
	g_autoptr(PixSimilarGroups) g = pix_similar_group(h, weak, 6, 10);
	g_autofree char *s = all(g);
	g_assert_cmpstr(s, ==, "0,2,4;1,5");
	/* at distance 0 the weak ones still group, being equal */
	g_autoptr(PixSimilarGroups) g0 = pix_similar_group(h, weak, 6, 0);
	g_autofree char *s0 = all(g0);
	g_assert_cmpstr(s0, ==, "0,2,4");
	g_autoptr(PixSimilarGroups) g2 = pix_similar_group_threads(h, weak, 6, 10, 2);
	g_autofree char *s2 = all(g2);
	g_assert_cmpstr(s2, ==, "0,2,4;1,5");
}

/* A hash of 32 ones, as the DCT hash's median makes them. */
static guint64 random32(GRand *r)
{
	guint64 h = 0;
	for (guint n = 0; n < 32;) {
		guint b = (guint)g_rand_int_range(r, 0, 64);
		if (!(h >> b & 1)) {
			h |= (guint64)1 << b;
			n++;
		}
	}
	return h;
}

/* h with k of its ones moved to k of its zeros (2k bits apart). */
static guint64 moved(GRand *r, guint64 h, guint k)
{
	for (guint i = 0; i < k; i++) {
		guint a, b;
		do
			a = (guint)g_rand_int_range(r, 0, 64);
		while (!(h >> a & 1));
		do
			b = (guint)g_rand_int_range(r, 0, 64);
		while (h >> b & 1);
		h ^= ((guint64)1 << a) | ((guint64)1 << b);
	}
	return h;
}

/* The centre rule by comparing every pair. */
static char *brute_force(const guint64 *h, guint n, guint d)
{
	g_autofree guint8 *taken = g_new0(guint8, n);
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < n; i++) {
		if (taken[i])
			continue;
		taken[i] = 1;
		GString *m = g_string_new(NULL);
		guint count = 1;
		g_string_append_printf(m, "%u", i);
		for (guint j = i + 1; j < n; j++)
			if (!taken[j] && pix_phash_distance(h[i], h[j]) <= d) {
				taken[j] = 1;
				count++;
				g_string_append_printf(m, ",%u", j);
			}
		if (count >= 2)
			g_string_append_printf(s, "%s%s", s->len > 0 ? ";" : "", m->str);
		g_string_free(m, TRUE);
	}
	return g_string_free(s, FALSE);
}

static void test_index_is_exact(void)
{
	GRand *r = g_rand_new_with_seed(270);
	enum { N = 6000 };
	g_autofree guint64 *h = g_new(guint64, N);
	for (guint i = 0; i < N; i++) {
		/* every 4th near an earlier one (a variant), some in clusters */
		if (i % 4 == 3)
			h[i] = moved(r, h[g_rand_int_range(r, 0, (gint32)i)], (guint)g_rand_int_range(r, 0, 9));
		else
			h[i] = random32(r);
	}
	for (guint d = 0; d <= PIX_PHASH_MAX_DISTANCE; d += d < 12 ? 1 : 2) {
		g_autofree char *want = brute_force(h, N, d);
		/* one thread, and as many as make windows of a few centres each */
		for (guint t = 1; t <= 3; t += 2) {
			g_autoptr(PixSimilarGroups) g = pix_similar_group_threads(h, NULL, N, d, t);
			g_autofree char *got = all(g);
			g_assert_cmpstr(got, ==, want);
			g_assert_cmpuint(g->n_groups, >, 0);
		}
	}
	g_rand_free(r);
}

static void test_best_order(void)
{
	PixSimilarKey big = { .pixels = 4000 * 3000, .format_rank = 1, .mtime_ns = 9, .id = 9 };
	PixSimilarKey jpeg = { .pixels = 1024 * 768, .format_rank = 0, .mtime_ns = 5, .id = 5 };
	PixSimilarKey png = { .pixels = 1024 * 768, .format_rank = 1, .mtime_ns = 1, .id = 1 };
	PixSimilarKey png_newer = { .pixels = 1024 * 768, .format_rank = 1, .mtime_ns = 2, .id = 0 };
	g_assert_cmpint(pix_similar_compare(&big, &jpeg), <, 0);      /* more pixels first */
	g_assert_cmpint(pix_similar_compare(&jpeg, &png), <, 0);      /* then a camera's format */
	g_assert_cmpint(pix_similar_compare(&png, &png_newer), <, 0); /* then the older */
	g_assert_cmpint(pix_similar_compare(&png_newer, &png), >, 0);
	g_assert_cmpint(pix_similar_compare(&png, &png), ==, 0);
	g_assert_cmpuint(pix_similar_format_rank("image/jpeg", "image"), ==, 0);
	g_assert_cmpuint(pix_similar_format_rank("image/x-canon-cr2", "raw"), ==, 0);
	g_assert_cmpuint(pix_similar_format_rank("image/heic", "image"), ==, 0);
	g_assert_cmpuint(pix_similar_format_rank("image/png", "image"), ==, 1);
	g_assert_cmpuint(pix_similar_format_rank(NULL, NULL), ==, 1);
}

static void test_empty(void)
{
	g_autoptr(PixSimilarGroups) g = pix_similar_group(NULL, NULL, 0, 10);
	g_assert_cmpuint(g->n_groups, ==, 0);
	const guint64 one[] = { 42 };
	g_autoptr(PixSimilarGroups) g1 = pix_similar_group(one, NULL, 1, 10);
	g_assert_cmpuint(g1->n_groups, ==, 0);
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/similar/centre-not-chain", test_centre_not_chain);
	g_test_add_func("/similar/weak", test_weak);
	g_test_add_func("/similar/index-is-exact", test_index_is_exact);
	g_test_add_func("/similar/best-order", test_best_order);
	g_test_add_func("/similar/empty", test_empty);
	return g_test_run();
}

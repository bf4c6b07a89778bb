/*
 * test-stream.c: unit tests of src/stream.h, the byte ranges handed to
 * container parsers out of a one-pass read.
 *
 * A file of known bytes (byte i is i * 7 + 3, mod 256) is fed in pieces
 * of many sizes; every range asked for must come back with exactly the
 * file's bytes, or short at the end, or empty when it went by unkept.
 * A chain of ranges each asked for by the previous callback must not
 * recurse (100,000 links run on the default stack), and the limits must
 * stop a parser that asks for too much.
 */
/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "stream.h"
#include "testlib.h"

static guint8 byte_at(guint64 i)
{
	return (guint8)(i * 7 + 3);
}

static guint8 *make_file(gsize len)
{
	guint8 *f = g_malloc(len + 1);
	for (gsize i = 0; i < len; i++)
		f[i] = byte_at(i);
	return f;
}

/* Feeds `len` bytes in pieces of `piece` bytes (0: random sizes). */
static void feed(PixStream *s, const guint8 *f, gsize len, gsize piece, GRand *r)
{
	for (gsize at = 0; at < len;) {
		gsize n = piece > 0 ? piece : (gsize)g_rand_int_range(r, 1, 5000);
		n = MIN(n, len - at);
		pix_stream_feed(s, f + at, n);
		at += n;
	}
	pix_stream_finish(s);
}

typedef struct {
	guint calls;
	guint64 off;
	gsize len;
	gboolean is_right;
	guint64 pos_at_call;
} Got;

static void on_got(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Got *g = (Got *)ctx + arg;
	g->calls++;
	g->off = off;
	g->len = len;
	g->pos_at_call = pix_stream_pos(s);
	g->is_right = TRUE;
	for (gsize i = 0; i < len; i++)
		if (data[i] != byte_at(off + i))
			g->is_right = FALSE;
}

static void test_ranges_whatever_the_pieces(void)
{
	const gsize len = 300000;
	g_autofree guint8 *f = make_file(len);
	static const gsize pieces[] = { 1, 7, 4096, 65536, 1 << 20, 0 };
	/* off, len: inside, across pieces, at the very end, past the end */
	static const guint64 ranges[][2] = {
		{ 0, 16 }, { 100, 5000 }, { 4090, 20 }, { 65530, 100000 }, { len - 10, 10 },
		{ len - 10, 50 }, { len, 10 }, { len + 100, 10 }, { 123456, 1 },
	};
	for (guint p = 0; p < G_N_ELEMENTS(pieces); p++) {
		g_autoptr(GRand) r = g_rand_new_with_seed(p);
		g_autoptr(PixStream) s = pix_stream_new(0, 0);
		Got got[G_N_ELEMENTS(ranges)] = { 0 };
		for (guint i = 0; i < G_N_ELEMENTS(ranges); i++)
			g_assert_true(pix_stream_want(s, ranges[i][0], ranges[i][1], on_got, got, i));
		feed(s, f, len, pieces[p], r);
		for (guint i = 0; i < G_N_ELEMENTS(ranges); i++) {
			guint64 end = MIN(ranges[i][0] + ranges[i][1], len);
			gsize expect = ranges[i][0] >= len ? 0 : (gsize)(end - ranges[i][0]);
			g_assert_cmpuint(got[i].calls, ==, 1);
			g_assert_cmpuint(got[i].len, ==, expect);
			g_assert_true(got[i].is_right);
		}
		g_assert_cmpuint(pix_stream_pos(s), ==, len);
		g_assert_null(pix_stream_problems(s));
	}
}

static void test_called_back_as_soon_as_complete(void)
{
	const gsize len = 10000;
	g_autofree guint8 *f = make_file(len);
	g_autoptr(PixStream) s = pix_stream_new(0, 0);
	Got got[1] = { 0 };
	g_assert_true(pix_stream_want(s, 1000, 100, on_got, got, 0));
	pix_stream_feed(s, f, 1050);
	g_assert_cmpuint(got[0].calls, ==, 0);
	pix_stream_feed(s, f + 1050, 1000);
	g_assert_cmpuint(got[0].calls, ==, 1);
	g_assert_true(got[0].is_right);
	pix_stream_feed(s, f + 2050, len - 2050);
	pix_stream_finish(s);
	g_assert_cmpuint(got[0].calls, ==, 1);
}

/* Ranges asked for after the read passed them: from the head or the
 * tail when kept there (the tail is never shorter than PIX_STREAM_BACK),
 * else empty. */
static void test_late_ranges(void)
{
	const gsize len = 200000;
	g_autofree guint8 *f = make_file(len);
	g_autoptr(PixStream) s = pix_stream_new(1000, 8000);
	Got got[4] = { 0 };
	pix_stream_feed(s, f, 150000);
	g_assert_true(pix_stream_want(s, 10, 500, on_got, got, 0));         /* in the head */
	g_assert_true(pix_stream_want(s, 5000, 10, on_got, got, 1));        /* gone */
	g_assert_true(pix_stream_want(s, 149000, 500, on_got, got, 2));     /* in the tail */
	g_assert_true(pix_stream_want(s, 149500, 1000, on_got, got, 3));    /* tail, then ahead */
	g_assert_cmpuint(got[0].calls, ==, 1);
	g_assert_cmpuint(got[0].len, ==, 500);
	g_assert_cmpuint(got[1].calls, ==, 1);
	g_assert_cmpuint(got[1].len, ==, 0);
	g_assert_cmpuint(got[2].calls, ==, 1);
	g_assert_cmpuint(got[2].len, ==, 500);
	g_assert_cmpuint(got[3].calls, ==, 0);
	pix_stream_feed(s, f + 150000, len - 150000);
	pix_stream_finish(s);
	for (guint i = 0; i < 4; i++)
		g_assert_true(got[i].is_right);
	g_assert_cmpuint(got[3].len, ==, 1000);
	g_assert_nonnull(pix_stream_peek(s, 0, 1000));
	g_assert_null(pix_stream_peek(s, 0, 1001));
	const guint8 *end = pix_stream_peek(s, len - 8000, 8000);
	g_assert_nonnull(end);
	g_assert_cmpuint(end[7999], ==, byte_at(len - 1));
	g_assert_null(pix_stream_peek(s, len - 8001, 2));
	/* a range over the head's end and the tail's start is not contiguous */
	g_assert_null(pix_stream_peek(s, 900, 200));
}

/* A payload asked for right after its header went by, in the previous
 * piece, is served even by a stream that keeps nothing. */
static void test_just_behind(void)
{
	g_autofree guint8 *f = make_file(20000);
	g_autoptr(PixStream) s = pix_stream_new(0, 0);
	Got got[2] = { 0 };
	pix_stream_feed(s, f, 64);
	pix_stream_feed(s, f + 64, 10000);
	g_assert_true(pix_stream_want(s, 10064 - PIX_STREAM_BACK, 100, on_got, got, 0));
	g_assert_true(pix_stream_want(s, 10064 - PIX_STREAM_BACK - 1, 100, on_got, got, 1));
	g_assert_cmpuint(got[0].len, ==, 100);
	g_assert_true(got[0].is_right);
	g_assert_cmpuint(got[1].calls, ==, 1);
	g_assert_cmpuint(got[1].len, ==, 0);
}

/* A chain: each callback asks for the next 8 bytes.  100,000 links must
 * neither recurse nor be refused before the limit. */
typedef struct {
	guint links;
	gboolean is_refused;
} Chain;

static void on_link(PixStream *s, void *ctx, guint64 arg, guint64 off, const guint8 *data, gsize len)
{
	Chain *c = ctx;
	(void)arg, (void)data;
	if (len < 8)
		return;
	c->links++;
	if (!pix_stream_want(s, off + 8, 8, on_link, c, 0))
		c->is_refused = TRUE;
}

static void test_chain_without_recursion(void)
{
	const gsize len = 8 * 200000;
	g_autofree guint8 *f = make_file(len);
	/* the whole file kept: every link is at hand as soon as asked for */
	g_autoptr(PixStream) s = pix_stream_new(len, 0);
	Chain c = { 0 };
	pix_stream_feed(s, f, len);
	g_assert_true(pix_stream_want(s, 0, 8, on_link, &c, 0));
	g_assert_true(c.is_refused);
	g_assert_cmpuint(c.links, ==, PIX_STREAM_MAX_WANTS);
	g_autofree char *p = pix_stream_problems(s);
	g_assert_nonnull(strstr(p, "more than"));
	g_assert_true(pix_stream_has_failed(s));
	g_assert_false(pix_stream_want(s, 0, 8, on_link, &c, 0));
}

static void test_limits(void)
{
	g_autoptr(PixStream) s = pix_stream_new(0, 0);
	Got got[1] = { 0 };
	guint accepted = 0;
	while (pix_stream_want(s, 1000000 + accepted, 10, on_got, got, 0))
		accepted++;
	g_assert_cmpuint(accepted, ==, PIX_STREAM_MAX_PENDING);
	pix_stream_finish(s);
	g_assert_cmpuint(got[0].calls, ==, 0);  /* none after the failure */

	/* ranges that claim more than they get hold no memory for it; what
	 * they do get counts against the limit */
	g_autoptr(PixStream) t = pix_stream_new(0, 0);
	const gsize len = 5 << 20;
	g_autofree guint8 *f = make_file(len);
	for (guint i = 0; i < 5; i++)
		g_assert_true(pix_stream_want(t, 0, PIX_STREAM_MAX_WANT, on_got, got, 0));
	pix_stream_feed(t, f, len);
	g_assert_false(pix_stream_has_failed(t));
	for (guint i = 0; i < 20; i++)
		pix_stream_want(t, 0, PIX_STREAM_MAX_WANT, on_got, got, 0);
	pix_stream_feed(t, f, len);
	pix_stream_feed(t, f, len);
	g_assert_true(pix_stream_has_failed(t));
	g_autofree char *p = pix_stream_problems(t);
	g_assert_nonnull(strstr(p, "MiB in all"));
}

/* With the file's size as listed, the tail keeps only PIX_STREAM_BACK
 * bytes until the read nears that size, then the whole tail: the end's
 * bytes are kept, whatever the pieces, and a range 6,000 bytes behind the
 * read mid-file is not (it is without the size).  A file that ended
 * early keeps at least PIX_STREAM_BACK; one that grew, its whole tail. */
static void test_tail_by_size(void)
{
	const gsize len = 200000, keep = 8000;
	g_autofree guint8 *f = make_file(len);
	static const gsize pieces[] = { 1, 1000, 4096, 7999, 8000, 8001, 65536, 1 << 20, 0 };
	for (guint p = 0; p < G_N_ELEMENTS(pieces); p++) {
		g_autoptr(GRand) r = g_rand_new_with_seed(p);
		g_autoptr(PixStream) s = pix_stream_new(0, keep);
		pix_stream_expect_size(s, len);
		feed(s, f, len, pieces[p], r);
		const guint8 *end = pix_stream_peek(s, len - keep, keep);
		g_assert_nonnull(end);
		for (gsize i = 0; i < keep; i++)
			g_assert_cmpuint(end[i], ==, byte_at(len - keep + i));
	}
	for (int is_sized = 0; is_sized <= 1; is_sized++) {
		g_autoptr(PixStream) s = pix_stream_new(0, keep);
		if (is_sized)
			pix_stream_expect_size(s, len);
		Got got[2] = { 0 };
		for (gsize at = 0; at < 100000; at += 1000)
			pix_stream_feed(s, f + at, 1000);
		g_assert_true(pix_stream_want(s, 100000 - 6000, 100, on_got, got, 0));
		g_assert_true(pix_stream_want(s, 100000 - PIX_STREAM_BACK, PIX_STREAM_BACK, on_got, got, 1));
		g_assert_cmpuint(got[0].calls, ==, 1);
		g_assert_cmpuint(got[0].len, ==, is_sized ? 0 : 100);
		g_assert_cmpuint(got[1].len, ==, PIX_STREAM_BACK);
		g_assert_true(got[1].is_right);
		/* it ends here, at half its listed size */
		pix_stream_finish(s);
		g_assert_nonnull(pix_stream_peek(s, 100000 - PIX_STREAM_BACK, PIX_STREAM_BACK));
		g_assert_true((pix_stream_peek(s, 100000 - keep, keep) == NULL) == is_sized);
	}
	g_autoptr(PixStream) grown = pix_stream_new(0, keep);
	pix_stream_expect_size(grown, len / 2);
	feed(grown, f, len, 1000, NULL);
	const guint8 *end = pix_stream_peek(grown, len - keep, keep);
	g_assert_nonnull(end);
	g_assert_cmpuint(end[0], ==, byte_at(len - keep));
}

static void test_problems_joined(void)
{
	g_autoptr(PixStream) s = pix_stream_new(0, 0);
	g_assert_null(pix_stream_problems(s));
	pix_stream_problem(s, "first %d", 1);
	pix_stream_problem(s, "second");
	g_assert_false(pix_stream_has_failed(s));
	pix_stream_fail(s, "third");
	pix_stream_fail(s, "not kept: already failed");
	g_autofree char *p = pix_stream_problems(s);
	g_assert_cmpstr(p, ==, "first 1; second; third");
}

int main(int argc, char **argv)
{
	pix_test_init(&argc, &argv);
	g_test_add_func("/stream/ranges", test_ranges_whatever_the_pieces);
	g_test_add_func("/stream/as-soon-as-complete", test_called_back_as_soon_as_complete);
	g_test_add_func("/stream/late-ranges", test_late_ranges);
	g_test_add_func("/stream/just-behind", test_just_behind);
	g_test_add_func("/stream/tail-by-size", test_tail_by_size);
	g_test_add_func("/stream/chain", test_chain_without_recursion);
	g_test_add_func("/stream/limits", test_limits);
	g_test_add_func("/stream/problems", test_problems_joined);
	return g_test_run();
}

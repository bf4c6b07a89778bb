/*
 * test-deflate-huff.c: deflate-huff.c's streams, inflated by zlib.
 *
 * Every stream must inflate to its input with zlib's own checks (the
 * codes complete, the Adler-32 right): random bytes, one byte repeated,
 * two, filtered photograph-like rows, sizes around the block, and
 * frequencies that make a Huffman code longer than deflate's 15 bits
 * (which must be cut down).
 */
#include "deflate-huff.h"
#include "testlib.h"

#include <string.h>
#include <zlib.h>

static void round_trip(const guint8 *in, gsize n)
{
	g_autoptr(GByteArray) z = g_byte_array_new();
	g_byte_array_append(z, (const guint8 *)"kept", 4);   /* appended after what is there */
	pix_deflate_huffman(in, n, z);
	g_assert_cmpmem(z->data, 4, "kept", 4);
	g_assert_cmpuint(z->data[4], ==, 0x78);
	g_assert_cmpuint((z->data[4] * 256u + z->data[5]) % 31, ==, 0);
	guint8 *back = g_malloc(n + 1);
	uLongf back_len = n + 1;
	int rc = uncompress(back, &back_len, z->data + 4, z->len - 4);
	g_assert_cmpint(rc, ==, Z_OK);
	g_assert_cmpuint(back_len, ==, n);
	g_assert_true(n == 0 || memcmp(back, in, n) == 0);
	/* the whole stream is used: no bytes after the check */
	z_stream s = { 0 };
	g_assert_cmpint(inflateInit(&s), ==, Z_OK);
	s.next_in = z->data + 4;
	s.avail_in = z->len - 4;
	s.next_out = back;
	s.avail_out = (uInt)n + 1;
	g_assert_cmpint(inflate(&s, Z_FINISH), ==, Z_STREAM_END);
	g_assert_cmpuint(s.avail_in, ==, 0);
	inflateEnd(&s);
	g_free(back);
}

static void test_sizes(void)
{
	static const gsize sizes[] = { 0, 1, 2, 3, 255, 65535, 65536, 65537, 131072, 200001 };
	GRand *r = g_rand_new_with_seed(7);
	for (guint k = 0; k < G_N_ELEMENTS(sizes); k++) {
		gsize n = sizes[k];
		guint8 *random = g_malloc(n + 1), *same = g_malloc(n + 1), *two = g_malloc(n + 1);
		for (gsize i = 0; i < n; i++) {
			random[i] = (guint8)g_rand_int(r);
			same[i] = 0;
			two[i] = (guint8)(i % 7 == 0 ? 255 : 0);
		}
		round_trip(random, n);
		round_trip(same, n);
		round_trip(two, n);
		g_free(random);
		g_free(same);
		g_free(two);
	}
	g_rand_free(r);
}

/* Fibonacci frequencies: an unlimited Huffman code of 25 symbols would
 * be 24 bits deep. */
static void test_long_codes_are_cut(void)
{
	GByteArray *in = g_byte_array_new();
	guint64 f0 = 1, f1 = 1;
	for (int sym = 0; sym < 25; sym++) {
		for (guint64 i = 0; i < f0; i++)
			g_byte_array_append(in, (const guint8[]){ (guint8)(sym * 7) }, 1);
		guint64 t = f0 + f1;
		f0 = f1;
		f1 = t;
	}
	g_assert_cmpuint(in->len, >, 100000);
	round_trip(in->data, in->len);
	/* shuffled, and cut at a block boundary's neighbourhood */
	GRand *r = g_rand_new_with_seed(11);
	for (guint i = in->len - 1; i > 0; i--) {
		guint j = (guint)g_rand_int_range(r, 0, (gint32)i + 1);
		guint8 t = in->data[i];
		in->data[i] = in->data[j];
		in->data[j] = t;
	}
	round_trip(in->data, in->len);
	round_trip(in->data, 65536 + 13);
	g_rand_free(r);
	g_byte_array_unref(in);
}

/* Rows as the export makes them: a filter byte, then each byte less its
 * left neighbour's, of a smooth picture; no larger than zlib's own
 * Huffman-only stream by more than a hundredth. */
static void test_filtered_rows(void)
{
	const guint w = 512, h = 384;
	gsize stride = w * 3 + 1;
	guint8 *rows = g_malloc(stride * h);
	GRand *r = g_rand_new_with_seed(3);
	for (guint y = 0; y < h; y++) {
		guint8 *o = rows + stride * y;
		o[0] = 1;
		for (guint x = 0; x < w * 3; x++)
			o[1 + x] = (guint8)(x < 3 ? (gint)(x * 40 + y) : g_rand_int_range(r, -3, 4));
	}
	round_trip(rows, stride * h);
	g_autoptr(GByteArray) ours = g_byte_array_new();
	pix_deflate_huffman(rows, stride * h, ours);
	z_stream s = { 0 };
	g_assert_cmpint(deflateInit2(&s, 1, Z_DEFLATED, 15, 8, Z_HUFFMAN_ONLY), ==, Z_OK);
	uLong bound = deflateBound(&s, stride * h);
	guint8 *zl = g_malloc(bound);
	s.next_in = rows;
	s.avail_in = (uInt)(stride * h);
	s.next_out = zl;
	s.avail_out = (uInt)bound;
	g_assert_cmpint(deflate(&s, Z_FINISH), ==, Z_STREAM_END);
	g_test_message("ours %u bytes, zlib's Huffman only %lu", ours->len, s.total_out);
	g_assert_cmpuint(ours->len, <=, s.total_out + s.total_out / 100);
	deflateEnd(&s);
	g_free(zl);
	g_free(rows);
	g_rand_free(r);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/deflate-huff/sizes-and-kinds", test_sizes);
	g_test_add_func("/deflate-huff/codes-over-15-bits-are-cut", test_long_codes_are_cut);
	g_test_add_func("/deflate-huff/filtered-rows-as-small-as-zlib", test_filtered_rows);
	return g_test_run();
}
